"""AveragePool, every spec version: validation and plan lookup; :mod:`._plan` computes
(separable sums over a separable divisor)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ortpool.geometry import PoolGeometry
from ortpool.kernels import _calls, _plan
from ortpool.kernels._common import checked_window


def average_pool(x: np.ndarray, *, version: int = 22, **attributes: Any) -> np.ndarray:
    """AveragePool of spec version ``version`` on ``x`` (N, C, D1, ...).

    The divisor follows RULINGS.md 8: taps inside the input, or with ``count_include_pad`` taps
    inside the padded input; a window with no input element is NaN (0/0) or 0 respectively.
    """
    # A call seen before (same shape, dtype, attributes) skips validation and planning.
    key, runner = _calls.lookup(("AveragePool", version), x, attributes)
    if runner is not None:
        return runner(x)
    attrs, geom = checked_window("AveragePool", version, x, attributes)
    # float16/bfloat16 accumulate in float32 and are rounded once (RULINGS.md 8).
    acc = np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)
    div = divisor(geom, bool(attrs.count_include_pad), acc)
    runner = _plan.average_pool_runner(geom, tuple(x.shape), x.dtype, acc, div)
    return _calls.remember(key, runner)(x)


@functools.lru_cache(maxsize=256)
def divisor(geom: PoolGeometry, include_pad: bool, dtype: np.dtype) -> np.ndarray:
    """The per-output divisor, an outer product of per-axis counts (validity is per axis)."""
    div = np.ones((), dtype)
    for a, g in enumerate(geom.axes):
        counts = np.asarray(g.counts(include_pad), dtype)
        div = div * counts.reshape((-1,) + (1,) * (len(geom.axes) - 1 - a))
    div.setflags(write=False)
    return div
