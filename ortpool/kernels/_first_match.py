"""MaxPool Indices of windows with many tap combinations, found in ``sum(k)`` numpy steps rather
than ``prod(k)``: the winner (ruling 6) is the first ``t0`` along axis 0 whose value in ``P[1]``
(the input max-pooled over the axes after 0) matches Y, then with ``t0`` fixed the first ``t1``
whose ``P[2]`` value matches, and so on. A window with no input element keeps -1."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ortpool.geometry import PoolGeometry


def partial_maxima(block: np.ndarray, geom: PoolGeometry, passes: Any) -> list[np.ndarray]:
    """``[P[1], ..., P[r]]``: ``P[r]`` is ``block``, ``P[a]`` ``P[a + 1]`` max-pooled over ``a``."""
    levels = [block]
    for a in range(len(geom.axes) - 1, 0, -1):
        src = levels[0]
        shape = (*src.shape[: 1 + a], geom.axes[a].out, *src.shape[2 + a :])
        out = np.empty(shape, src.dtype)
        passes(src, a, out)
        levels.insert(0, out)
    return levels


def first_match(
    levels: list[np.ndarray], y: np.ndarray, geom: PoolGeometry, mult: tuple[int, ...],
    first_plane: int, plane_size: int, empty: np.ndarray | None,
) -> np.ndarray:
    """Indices of each window's first matching tap; ``empty`` marks the windows with none (-1)."""
    rank = len(geom.axes)
    planes = y.shape[0]
    # The chosen input coordinate along each axis of every output, found axis by axis.
    coords: list[np.ndarray] = []
    with np.errstate(invalid="ignore"):
        for a, g in enumerate(geom.axes):
            level = levels[a]
            # Flat position in ``level`` of (plane, chosen coords before a, 0 on a, outputs
            # after a); each tap adds its coordinate times the axis stride.
            strides = [s // level.itemsize for s in level.strides]
            base = np.arange(planes, dtype=np.int64).reshape((-1,) + (1,) * rank) * strides[0]
            for b in range(rank):
                if b < a:
                    base = base + coords[b] * strides[1 + b]
                elif b > a:
                    j = np.arange(y.shape[1 + b], dtype=np.int64)
                    base = base + (j * strides[1 + b]).reshape((-1,) + (1,) * (rank - 1 - b))
            base = np.broadcast_to(base, y.shape)
            flat = level.reshape(-1)
            chosen = np.full(y.shape, -1, np.int64)
            for lo_t, hi_t in g.tap_runs():
                for t in range(lo_t, hi_t):
                    lo, hi = g.tap_range(t)
                    if lo >= hi:
                        continue
                    at = (slice(None),) * (1 + a) + (slice(lo, hi),)
                    c = (np.arange(lo, hi, dtype=np.int64) * g.s - g.pb + t * g.d).reshape(
                        (-1,) + (1,) * (rank - 1 - a)
                    )
                    values = flat[base[at] + c * strides[1 + a]]
                    target = y[at]
                    match = (values == target) | (values != values)
                    slot = chosen[at]
                    np.copyto(slot, np.broadcast_to(c, slot.shape), where=match & (slot < 0))
            # An empty window found nothing: 0 keeps the later gathers in range (-1 at the end).
            coords.append(np.maximum(chosen, 0))
    index = np.arange(first_plane, first_plane + planes, dtype=np.int64).reshape(
        (-1,) + (1,) * rank
    ) * plane_size
    for a in range(rank):
        index = index + coords[a] * mult[a]
    if empty is not None:
        index = np.where(empty, -1, index)
    return np.ascontiguousarray(np.broadcast_to(index, y.shape))


def combinations(geom: PoolGeometry) -> int:
    """Tap combinations a window loop over the taps of the :meth:`tap_span` would visit."""
    return math.prod(hi - lo for lo, hi in (g.tap_span() for g in geom.axes))


def empty_windows(geom: PoolGeometry) -> np.ndarray | None:
    """Where a window holds no input element, broadcastable to the output; None if nowhere."""
    if not any(g.empty_windows() for g in geom.axes):
        return None
    rank = len(geom.axes)
    empty = np.zeros((1,) * (1 + rank), bool)
    for a, g in enumerate(geom.axes):
        zero = g.counts(False) == 0
        empty = empty | zero.reshape((1,) + (-1,) + (1,) * (rank - 1 - a))
    return empty
