"""AveragePool, every spec version: validation and plan lookup; :mod:`._plan` computes
(separable sums over a separable divisor)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ortpool.geometry import PoolGeometry
from ortpool.kernels import _calls, _limits, _plan
from ortpool.kernels._common import checked_window, located


def average_pool(x: np.ndarray, *, version: int = 22, **attributes: Any) -> np.ndarray:
    """AveragePool of spec version ``version`` on ``x`` (N, C, D1, ...).

    The divisor follows ruling 8: taps inside the input, or with ``count_include_pad`` taps
    inside the padded input; a window with no input element is NaN (0/0) or 0 respectively.
    """
    return _calls.run(("AveragePool", version), x, attributes, _planned, version)


def _planned(x: np.ndarray, attributes: dict[str, Any], version: int) -> tuple:
    attrs, geom = checked_window("AveragePool", version, x, attributes)
    # float16/bfloat16 accumulate in float32 and are rounded once (ruling 8).
    acc = np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)
    with located("AveragePool", version):
        _limits.check_pool(geom, x.shape, x.dtype, acc, range(len(geom.axes)))
    div = divisor(geom, bool(attrs.count_include_pad), acc)
    return _plan.average_pool_runner(geom, tuple(x.shape), x.dtype, acc, div)


def divisor(geom: PoolGeometry, include_pad: bool, dtype: np.dtype) -> np.ndarray:
    """The per-output divisor, an outer product of per-axis counts (validity is per axis); not
    cached apart: the plan that divides by it is."""
    rank = len(geom.axes)
    # The first axis's counts start the product (1 * c is c exactly); the others multiply in.
    div = geom.axes[0].counts(include_pad, dtype).reshape((-1,) + (1,) * (rank - 1))
    for a in range(1, rank):
        div = div * geom.axes[a].counts(include_pad, dtype).reshape((-1,) + (1,) * (rank - 1 - a))
    div.setflags(write=False)
    return div
