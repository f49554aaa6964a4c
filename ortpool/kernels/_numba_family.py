"""Compiled (numba) loops of the global sums and MaxRoiPool, mirroring the numpy paths of
:mod:`.globalpool` and :mod:`.roipool` operation for operation: bit-identical results."""

from __future__ import annotations

import numpy as np
from numba import njit

from ortpool.kernels._numba import _OPTS
from ortpool.kernels.globalpool import ABS, COMPENSATED_LANES, LANES, SQUARE, VALUES


@njit(inline="always", **_OPTS)
def _term(v, mode):
    w = np.float64(v)
    if mode == ABS:
        return abs(w)
    if mode == SQUARE:
        return w * w
    return w


@njit(inline="always", **_OPTS)
def _lanes(size, cap):
    """:func:`ortpool.kernels.globalpool.lane_count` (int.bit_length is not in numba)."""
    lanes = 1
    while lanes * 2 <= min(size, cap):
        lanes *= 2
    return lanes


@njit(inline="always", **_OPTS)
def _start(lane, row, rows, mode):
    """Each lane starts at its element of the first row, or at 0 (no row), as numpy's reduce."""
    if rows:
        first = row[: lane.shape[0]]
        for j in range(lane.shape[0]):
            lane[j] = _term(first[j], mode)
    else:
        lane[:] = 0.0


@njit(inline="always", **_OPTS)
def _plain_sum(row, mode, acc):
    """The lane order of :func:`ortpool.kernels.globalpool.plane_sums`, without compensation;
    rows taken as slices (with plain indexing the lane loop stayed scalar, 5x slower)."""
    size = row.shape[0]
    lanes = _lanes(size, LANES)
    rows = size // lanes
    lane = acc[:lanes]
    _start(lane, row, rows, mode)
    for i in range(1, rows):
        r = row[i * lanes : (i + 1) * lanes]
        for j in range(lanes):
            lane[j] += _term(r[j], mode)
    tail = row[rows * lanes :]
    for j in range(tail.shape[0]):
        lane[j] += _term(tail[j], mode)
    width = lanes
    while width > 1:
        half = width // 2
        low = acc[:half]
        high = acc[half:width]
        for j in range(half):
            low[j] += high[j]
        width = half
    return acc[0]


@njit(inline="always", **_OPTS)
def _step(total, fix, v):
    """One compensated step per lane (Neumaier), branch-free as numpy's ``where`` is."""
    for j in range(v.shape[0]):
        t = total[j]
        w = v[j]
        s = t + w
        big = (t - s) + w
        small = (w - s) + t
        fix[j] += big if abs(t) >= abs(w) else small
        total[j] = s


@njit(inline="always", **_OPTS)
def _terms(r, mode, buf):
    for j in range(r.shape[0]):
        buf[j] = _term(r[j], mode)
    return buf[: r.shape[0]]


@njit(**_OPTS)
def _compensated_sum(row, mode, total, fix, buf):
    """The compensated lane order (Neumaier per lane, the tree's errors carried)."""
    size = row.shape[0]
    lanes = _lanes(size, COMPENSATED_LANES)
    rows = size // lanes
    lane, lane_fix = total[:lanes], fix[:lanes]
    lane_fix[:] = 0.0
    _start(lane, row, rows, mode)
    for i in range(1, rows):
        _step(lane, lane_fix, _terms(row[i * lanes : (i + 1) * lanes], mode, buf))
    tail = row[rows * lanes :]
    t = tail.shape[0]
    _step(lane[:t], lane_fix[:t], _terms(tail, mode, buf))
    width = lanes
    while width > 1:
        half = width // 2
        for j in range(half):
            low = total[j]
            high = total[half + j]
            s = low + high
            err = (low - s) + high if abs(low) >= abs(high) else (high - s) + low
            fix[j] = (fix[j] + fix[half + j]) + err
            total[j] = s
        width = half
    if np.isfinite(total[0]):
        return total[0] + fix[0]
    return total[0]


@njit(**_OPTS)
def plane_sums(x2, out, mode, compensated):
    """``out[p]`` = the float64 sum of row ``p`` of ``x2`` (transformed by ``mode``)."""
    total = np.empty(COMPENSATED_LANES, np.float64)
    fix = np.empty(COMPENSATED_LANES, np.float64)
    buf = np.empty(COMPENSATED_LANES, np.float64)
    for p in range(x2.shape[0]):
        if compensated:
            out[p] = _compensated_sum(x2[p], mode, total, fix, buf)
        # Each mode a literal: the inlined loop folds its transform in and vectorises (a
        # run-time mode kept it scalar, 7x slower).
        elif mode == ABS:
            out[p] = _plain_sum(x2[p], ABS, total)
        elif mode == SQUARE:
            out[p] = _plain_sum(x2[p], SQUARE, total)
        else:
            out[p] = _plain_sum(x2[p], VALUES, total)


@njit(**_OPTS)
def roi_max(x, y, batch, h_start, h_end, w_start, w_end):
    """``y[r, c, i, j]`` = the max of ``x[batch[r], c]`` over bin (i, j) of RoI ``r``."""
    for r in range(y.shape[0]):
        plane = x[batch[r]]
        for c in range(y.shape[1]):
            channel = plane[c]
            for i in range(y.shape[2]):
                h0 = h_start[r, i]
                h1 = h_end[r, i]
                for j in range(y.shape[3]):
                    w0 = w_start[r, j]
                    w1 = w_end[r, j]
                    if h0 >= h1 or w0 >= w1:
                        y[r, c, i, j] = 0
                        continue
                    best = channel[h0, w0]
                    if best == best:
                        for h in range(h0, h1):
                            done = False
                            for w in range(w0, w1):
                                v = channel[h, w]
                                if v != v:
                                    best = v
                                    done = True
                                    break
                                if v > best:
                                    best = v
                            if done:
                                break
                    y[r, c, i, j] = best
