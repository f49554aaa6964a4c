"""LpPool, every spec version (ruling 12): AveragePool's sums with a divisor of 1, over ``|x|^p``
in float64 whatever X's type (no overflow, no digit lost), rounded to X's type once."""

from __future__ import annotations

from typing import Any

import numpy as np

from ortpool.kernels import _calls, _limits, _plan
from ortpool.kernels._calls import checked_window, located
from ortpool.kernels.globalpool import lp_root, lp_terms

_F64 = np.dtype(np.float64)
#: The divisor of a sum: AveragePool's division by it is exact.
_ONE = np.ones((), np.float64)
_ONE.setflags(write=False)


def lp_pool(x: np.ndarray, *, version: int = 22, **attributes: Any) -> np.ndarray:
    """LpPool of spec version ``version`` on ``x`` (N, C, D1, ...): ``(sum of |x|^p)^(1/p)`` per
    window, 0 for an empty one; ``p`` is a float at version 1, an int from version 2."""
    return _calls.run(("LpPool", version), x, attributes, _planned, version)


def _planned(x: np.ndarray, attributes: dict[str, Any], version: int) -> tuple:
    attrs, geom = checked_window("LpPool", version, x, attributes)
    with located("LpPool", version):
        # the terms |x|^p are a float64 copy of X; the sums run in float64
        _limits.check_array("the terms |x|^p", x.shape, _F64)
        _limits.check_pool(geom, x.shape, x.dtype, _F64, range(len(geom.axes)))
    sums, held = _plan.average_pool_runner(geom, tuple(x.shape), _F64, _F64, _ONE)
    p, dtype = attrs.p, x.dtype

    def run(x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", over="ignore"):
            return lp_root(sums(lp_terms(x, p)), p).astype(dtype)

    return run, held
