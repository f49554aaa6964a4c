"""Tests of ortpool.bench."""
