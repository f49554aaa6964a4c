"""MaxPool, every spec version: values by separable reduction, Indices by a pass over the taps."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ortpool import versions
from ortpool.errors import OrtpoolError
from ortpool.geometry import AxisGeometry, PoolGeometry
from ortpool.kernels import _plan
from ortpool.kernels._common import (
    attrs_for,
    axis_slice,
    check_input,
    compute_dtype,
    geometry_for,
    lowest,
)


def max_pool(
    x: np.ndarray, *, version: int = 22, return_indices: bool = False, **attributes: Any
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """MaxPool of spec version ``version`` on ``x`` (N, C, D1, ...).

    ``attributes`` are the spec's, as lists or in the ortpool string encoding (``"3,3"``); an
    attribute the version lacks is an error. With ``return_indices`` the result is ``(Y, Indices)``
    with Indices laid out as RULINGS.md 7 says.
    """
    # A call seen before (same shape, dtype, attributes) skips validation and planning.
    key, runner = _plan.lookup(("MaxPool", version, return_indices), x, attributes)
    if runner is not None:
        return runner(x)
    opv = versions.get("MaxPool", version)
    try:
        check_input(opv, x)
        if return_indices and opv.max_outputs < 2:
            raise OrtpoolError("this version has no Indices output")
        attrs = attrs_for("MaxPool", version, attributes, x.ndim - 2)
        geom = geometry_for(tuple(x.shape[2:]), attrs)
    except OrtpoolError as err:
        raise err.located(op="MaxPool", version=version) from None
    runner = _plan.max_pool_runner(
        geom, tuple(x.shape), x.dtype, compute_dtype(x.dtype), return_indices, attrs.storage_order
    )
    return _plan.remember(key, runner)(x)


def _axis_order(geom: PoolGeometry) -> list[int]:
    """Reduce the axis that shrinks the data most first, so later passes touch less."""
    return sorted(range(len(geom.axes)), key=lambda i: (geom.axes[i].out / max(1, geom.axes[i].n), -i))


def _is_identity(g: AxisGeometry) -> bool:
    return g.k == 1 and g.s == 1 and g.pb == 0 and g.pe == 0


def _tap_slices(g: AxisGeometry, t: int) -> tuple[slice, slice] | None:
    """(output slice, input slice) of the outputs whose tap ``t`` lands inside the input."""
    lo, hi = g.tap_range(t)
    if lo >= hi:
        return None
    start = g.input_start(t, lo)
    return slice(lo, hi), slice(start, start + (hi - lo - 1) * g.s + 1, g.s)


def reduce_axis(
    x: np.ndarray, axis: int, g: AxisGeometry, fill: Any, ufunc: np.ufunc, dtype: np.dtype
) -> np.ndarray:
    """Reduce one axis with ``ufunc`` over each window's in-input taps; no padded copy is made.

    Outputs whose window holds no input element keep ``fill`` (the identity of ``ufunc``).
    """
    shape = list(x.shape)
    shape[axis] = g.out
    out = np.empty(shape, dtype)
    taps = [_tap_slices(g, t) for t in range(g.k)]
    first = next(
        (t for t, sl in enumerate(taps) if sl is not None and sl[0] == slice(0, g.out)), None
    )
    if first is None:
        out.fill(fill)
    else:
        out[...] = x[axis_slice(x.ndim, axis, taps[first][1])]
    for t, sl in enumerate(taps):
        if sl is None or t == first:
            continue
        target = out[axis_slice(x.ndim, axis, sl[0])]
        ufunc(target, x[axis_slice(x.ndim, axis, sl[1])], out=target)
    return out


def max_values(x: np.ndarray, geom: PoolGeometry) -> np.ndarray:
    """Y alone. Max is separable, and NaN propagates through ``np.maximum`` (RULINGS.md 6)."""
    fill = lowest(x.dtype)
    y = x
    for i in _axis_order(geom):
        g = geom.axes[i]
        if not _is_identity(g):
            y = reduce_axis(y, 2 + i, g, fill, np.maximum, x.dtype)
    return np.array(y, copy=True) if y is x else y


def _spatial_multipliers(spatial: tuple[int, ...], storage_order: int) -> list[int]:
    """Per-axis weight of a coordinate in the flat spatial offset (RULINGS.md 7)."""
    if storage_order == 0:
        return [math.prod(spatial[a + 1 :]) for a in range(len(spatial))]
    return [math.prod(spatial[:a]) for a in range(len(spatial))]


def max_with_indices(
    x: np.ndarray, geom: PoolGeometry, storage_order: int
) -> tuple[np.ndarray, np.ndarray]:
    """Y and Indices: taps in row-major order, a later tap wins only if strictly greater, or NaN
    over a non-NaN; an output with no in-input tap keeps the identity and index -1."""
    n, c = x.shape[:2]
    spatial = tuple(x.shape[2:])
    rank = len(spatial)
    out_shape = (n, c, *geom.output_spatial)
    values = np.full(out_shape, lowest(x.dtype), x.dtype)
    winner = np.full(out_shape, -1, np.int64)
    check_nan = x.dtype.kind == "f" and x.size > 0 and bool(np.isnan(x).any())
    mult = _spatial_multipliers(spatial, storage_order)
    for taps in itertools.product(*(range(g.k) for g in geom.axes)):
        slices = [_tap_slices(g, t) for g, t in zip(geom.axes, taps, strict=True)]
        if any(sl is None for sl in slices):
            continue
        out_idx = (slice(None), slice(None), *(sl[0] for sl in slices))
        in_idx = (slice(None), slice(None), *(sl[1] for sl in slices))
        cand = x[in_idx]
        cur = values[out_idx]
        cur_pos = winner[out_idx]
        better = cur_pos < 0
        better |= cand > cur
        if check_nan:
            better |= np.isnan(cand) & ~np.isnan(cur)
        np.copyto(cur, cand, where=better)
        offset = np.zeros((), np.int64)
        for a, (g, t, sl) in enumerate(zip(geom.axes, taps, slices, strict=True)):
            coords = np.arange(sl[0].start, sl[0].stop, dtype=np.int64) * g.s - g.pb + t * g.d
            offset = offset + (coords * mult[a]).reshape((-1,) + (1,) * (rank - 1 - a))
        np.copyto(cur_pos, offset, where=better)
    plane = np.arange(n * c, dtype=np.int64).reshape((n, c) + (1,) * rank) * math.prod(spatial)
    indices = np.where(winner >= 0, winner + plane, np.int64(-1))
    return values, indices
