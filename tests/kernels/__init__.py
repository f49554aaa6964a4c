"""Tests of ortpool.kernels: the numpy and numba kernels, their limits, threads and compiles."""
