"""MaxPool, every spec version: validation and plan lookup; :mod:`._plan` computes (values by
separable reduction, Indices by a pass over the taps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ortpool import versions
from ortpool.errors import OrtpoolError
from ortpool.geometry import PoolGeometry
from ortpool.kernels import _calls, _common, _limits, _plan
from ortpool.kernels._passes import max_axis_order


def max_pool(
    x: np.ndarray, *, version: int = 22, return_indices: bool = False, **attributes: Any
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """MaxPool of spec version ``version`` on ``x`` (N, C, D1, ...).

    ``attributes`` are the spec's, as lists or in the ortpool string encoding (``"3,3"``); an
    attribute the version lacks is an error. With ``return_indices`` the result is ``(Y, Indices)``
    with Indices laid out as ruling 7 says.
    """
    tag = ("MaxPool", version, return_indices)
    return _calls.run(tag, x, attributes, _planned, version, return_indices)


def _planned(x: np.ndarray, attributes: dict[str, Any], version: int, indices: bool) -> tuple:
    opv = versions.get("MaxPool", version)
    with _common.located("MaxPool", version):
        _common.check_input(opv, x)
        if indices and opv.max_outputs < 2:
            raise OrtpoolError("this version has no Indices output")
        attrs = _common.attrs_for("MaxPool", version, attributes, x.ndim - 2)
        geom = _common.geometry_for(tuple(x.shape[2:]), attrs)
        wide = _common.compute_dtype(x.dtype)
        _limits.check_pool(geom, x.shape, x.dtype, wide or x.dtype, max_axis_order(geom), indices)
    return _plan.max_pool_runner(geom, tuple(x.shape), x.dtype, wide, indices, attrs.storage_order)


def window_max(x: np.ndarray, geom: PoolGeometry) -> np.ndarray:
    """The max over each pooling window of ``x`` for an already resolved geometry (no attribute
    validation): MaxPool's Y, with an empty window holding the lowest value of the dtype.

    For callers that hold a :class:`~ortpool.geometry.PoolGeometry` rather than attributes,
    e.g. the validator marking the windows that contain a NaN.
    """
    if x.ndim != 2 + len(geom.axes) or tuple(x.shape[2:]) != tuple(g.n for g in geom.axes):
        raise OrtpoolError(
            f"input X has shape {list(x.shape)}; the geometry is for spatial shape "
            f"{[g.n for g in geom.axes]}"
        )
    plan = _plan.MaxValues(geom, tuple(x.shape), x.dtype, _common.lowest(x.dtype))
    return plan.run(np.ascontiguousarray(x))
