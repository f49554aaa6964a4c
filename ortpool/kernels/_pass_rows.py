"""The columns of a pass row: the int64 row per separable pass that
:func:`ortpool.kernels._numba_plans.numba_passes` writes and the compiled loops of
:mod:`ortpool.kernels._numba` read. Apart from both so that neither imports the other for it."""

from __future__ import annotations

#: n, out, outer, inner, stride, dilation, begin pad, first tap, k, interior begin, interior end.
N, OUT, OUTER, INNER, S, D, PB, FIRST, K, JL, JH = range(11)
