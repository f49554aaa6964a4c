"""Splitting a kernel's work across threads (numpy releases the GIL inside its loops)."""

from __future__ import annotations


def thread_count() -> int:
    """Threads the kernels may use."""
    return 1
