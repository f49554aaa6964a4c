"""The fixed order of the global pools' sums (:mod:`ortpool.kernels.globalpool`'s docstring):
lanes and what is summed per element, shared by the numpy calls and the compiled loops
(:mod:`ortpool.kernels._numba_family`) so that neither imports the other for it."""

from __future__ import annotations

#: Lanes of a plain (float64) and of a compensated sum.
LANES = 256
COMPENSATED_LANES = 1024

#: What is summed per element: the value, its absolute value, its square (in float64).
VALUES, ABS, SQUARE = 0, 1, 2
