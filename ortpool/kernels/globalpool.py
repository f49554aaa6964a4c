"""GlobalMaxPool, GlobalAveragePool and GlobalLpPool, every spec version (ruling 13). Sums are
taken in float64 (compensated for double) in one fixed order both kernel paths follow: a plane of
``S`` elements is ``S // L`` rows of ``L`` lanes (the largest power of two <= min(S, 256), 1024
when compensated) and a tail; each lane sums its column in row order, the tail continuing lanes
``0 .. t-1``; then lane ``j`` += lane ``j + w/2`` while the width ``w`` halves. Compensated sums
keep a Neumaier correction per lane (the tree steps' errors too) and give ``sum + correction``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ortpool.kernels import _backend, _buffers, _calls, _parallel
from ortpool.kernels._calls import checked, lowest

#: Lanes of a plain (float64) and of a compensated sum.
LANES, COMPENSATED_LANES = 256, 1024
#: What is summed per element: the value, its absolute value, its square (in float64).
VALUES, ABS, SQUARE = 0, 1, 2


def lane_count(size: int, cap: int) -> int:
    if size <= 1:
        return 1
    return 1 << (min(size, cap).bit_length() - 1)


def _transform(v: np.ndarray, mode: int) -> np.ndarray:
    """``v`` (a float64 copy of the caller's own) transformed in place."""
    if mode == ABS:
        return np.abs(v, out=v)
    if mode == SQUARE:
        return np.multiply(v, v, out=v)
    return v


def plane_sums(x2: np.ndarray, mode: int = VALUES, compensated: bool = False) -> np.ndarray:
    """Per row of ``x2`` (planes x S), the float64 sum of its ``mode``-transformed elements."""
    planes, size = x2.shape
    cap = COMPENSATED_LANES if compensated else LANES
    lanes = lane_count(size, cap)
    rows = size // lanes
    body = x2[:, : rows * lanes].reshape(planes, rows, lanes)
    tail = x2[:, rows * lanes :]
    if mode != VALUES:
        body = _transform(body.astype(np.float64), mode)
        tail = _transform(tail.astype(np.float64), mode)
    if not compensated:
        with np.errstate(invalid="ignore"):  # inf - inf is NaN, as it should be
            # A reduction over the middle axis adds row after row into each lane: the lane order.
            acc = np.add.reduce(body, axis=1, dtype=np.float64)
            if tail.shape[1]:
                acc[:, : tail.shape[1]] += tail
            width = lanes
            while width > 1:
                half = width // 2
                acc[:, :half] += acc[:, half:width]
                width = half
        return acc[:, 0].copy()
    total, fix = np.zeros((planes, lanes), np.float64), np.zeros((planes, lanes), np.float64)
    if rows:
        total[...] = body[:, 0]
    with np.errstate(invalid="ignore", over="ignore"):
        for i in range(1, rows):
            _neumaier(total, fix, body[:, i].astype(np.float64, copy=False))
        if tail.shape[1]:
            t = tail.shape[1]
            _neumaier(total[:, :t], fix[:, :t], tail.astype(np.float64, copy=False))
        width = lanes
        while width > 1:
            half = width // 2
            low, high = total[:, :half], total[:, half:width]
            s = low + high
            err = np.where(np.abs(low) >= np.abs(high), (low - s) + high, (high - s) + low)
            fix[:, :half] = (fix[:, :half] + fix[:, half:width]) + err
            low[...] = s
            width = half
        result = total[:, 0] + fix[:, 0]
    return np.where(np.isfinite(total[:, 0]), result, total[:, 0])


def _neumaier(total: np.ndarray, fix: np.ndarray, v: np.ndarray) -> None:
    s = total + v
    fix += np.where(np.abs(total) >= np.abs(v), (total - s) + v, (v - s) + total)
    total[...] = s


def _plane_sums_into(x2: np.ndarray, out: np.ndarray, mode: int, compensated: bool) -> None:
    out[...] = plane_sums(x2, mode, compensated)


def _sums(x2: np.ndarray, mode: int, compensated: bool) -> np.ndarray:
    """:func:`plane_sums` by the back-end's loop, split across threads by planes."""
    planes = x2.shape[0]
    out = np.empty(planes, np.float64)
    sums = _backend.loop("plane_sums", x2.dtype, x2.nbytes) or _plane_sums_into
    src = _buffers.read_only(x2)  # as every compiled loop's input (numpy only reads it too)
    _parallel.split(planes, [(0, planes)],
                    lambda lo, hi: sums(src[lo:hi], out[lo:hi], mode, compensated), x2.nbytes)
    return out


def _planes(x: np.ndarray) -> np.ndarray:
    """``x`` as (planes, spatial size), in a type the loops take: half types as float32 (exact)."""
    x = np.ascontiguousarray(x)
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float32)
    return x.reshape(x.shape[0] * x.shape[1], math.prod(x.shape[2:]))


def _result(x: np.ndarray, per_plane: np.ndarray) -> np.ndarray:
    y = _buffers.output((*x.shape[:2], *(1,) * (x.ndim - 2)), x.dtype)
    with np.errstate(over="ignore"):  # beyond the type's range: infinity, as it should be
        y.reshape(-1)[...] = per_plane.astype(x.dtype)
    return y


def _planned(x: np.ndarray, attributes: dict[str, Any], op: str, version: int) -> tuple:
    attrs = checked(op, version, x, attributes)
    if op == "GlobalLpPool":
        return (lambda x: _lp_runner(x, attrs.p)), 0
    return (_max_runner if op == "GlobalMaxPool" else _average_runner), 0


def global_max_pool(x: np.ndarray, *, version: int = 22, **attributes: Any) -> np.ndarray:
    """GlobalMaxPool: the max of each plane; a NaN anywhere in it gives NaN (ruling 13);
    an empty plane (a spatial size 0) gives -inf (ruling 5)."""
    return _calls.run(("GlobalMaxPool", version), x, attributes, _planned, "GlobalMaxPool", version)


def _max_runner(x: np.ndarray) -> np.ndarray:
    x2 = _planes(x)
    planes = x2.shape[0]
    out = np.empty(planes, x2.dtype)
    ident = lowest(x2.dtype)

    # Both kernel paths: numpy's SIMD max propagates NaN and is exact; a numba loop that keeps
    # NaN measured 4x slower.
    def work(lo: int, hi: int) -> None:
        np.maximum.reduce(x2[lo:hi], axis=1, initial=ident, out=out[lo:hi])

    _parallel.split(planes, [(0, planes)], work, x2.nbytes)
    return _result(x, out)


def global_average_pool(x: np.ndarray, *, version: int = 22, **attributes: Any) -> np.ndarray:
    """GlobalAveragePool: the mean of each plane, within 2 ulp of the exact mean rounded to X's
    type (ruling 13); an empty plane gives NaN (0/0, ruling 5)."""
    op = "GlobalAveragePool"
    return _calls.run((op, version), x, attributes, _planned, op, version)


def _average_runner(x: np.ndarray) -> np.ndarray:
    x2 = _planes(x)
    sums = _sums(x2, VALUES, x2.dtype == np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _result(x, sums / x2.shape[1])


def global_lp_pool(x: np.ndarray, *, version: int = 22, **attributes: Any) -> np.ndarray:
    """GlobalLpPool: ``(sum of |x|^p)^(1/p)`` per plane (rulings 12, 13); an empty plane gives 0."""
    return _calls.run(("GlobalLpPool", version), x, attributes, _planned, "GlobalLpPool", version)


def _lp_runner(x: np.ndarray, p: int | float) -> np.ndarray:
    x2 = _planes(x)
    mode = ABS if p == 1 else SQUARE if p == 2 else VALUES
    terms = lp_terms(x2, p) if mode == VALUES else x2
    return _result(x, lp_root(_sums(terms, mode, x2.dtype == np.float64), p))


def lp_terms(x: np.ndarray, p: int | float) -> np.ndarray:
    """``|x|^p`` in float64 (exact for p = 1 and for p = 2 from float32 and narrower)."""
    a = np.abs(x.astype(np.float64))
    if p == 1:
        return a
    if p == 2:
        return np.multiply(a, a, out=a)
    with np.errstate(over="ignore"):
        return np.power(a, float(p), out=a)


def lp_root(sums: np.ndarray, p: int | float) -> np.ndarray:
    """``sums^(1/p)`` in float64: beyond p = 1 and 2, ``pow`` then for p > 1 one Newton step on
    ``r^p = s`` (``pow`` takes ``1/p`` rounded: 98 ulp off at s = 1e260 for p = 3; the step brings
    it within 1 ulp). For p < 1 the step would multiply its own rounding by 1/p."""
    if p == 1:
        return sums
    if p == 2:
        return np.sqrt(sums)
    with np.errstate(all="ignore"):
        r = np.power(sums, 1.0 / float(p))
        if p < 1:
            return r
        step = r - (r - sums / np.power(r, float(p) - 1.0)) / float(p)
    return np.where(np.isfinite(step) & (r > 0), step, r)
