"""A slow, obviously-correct pooling reference written straight from docs/rulings.md.

Every output element of every (n, c) plane is computed by a plain Python loop over the taps of its
window. Nothing here comes from ortpool: the output sizes and pads are derived again below from
the rulings' text (with exact fractions), so a wrong formula in ortpool.geometry cannot hide.

Errors (an index outside the output) raise
:class:`ReferenceError_`; the property tests then expect ortpool to raise too.
"""

from __future__ import annotations

import decimal
import itertools
import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np


class ReferenceError_(Exception):
    """The rulings make this call an error."""


def _axis(n: int, k: int, s: int, d: int, pb: int, pe: int, auto_pad: str, ceil_mode: int):
    """(out, pb, pe) of one spatial axis, from ruling 1-3."""
    ek = (k - 1) * d + 1
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        # Ruling 2: out = ceil(n / s); total pad clamped at 0; SAME_UPPER: odd pad at the end.
        out = math.ceil(Fraction(n, s))
        total = max(0, (out - 1) * s + ek - n)
        if auto_pad == "SAME_UPPER":
            return out, total // 2, total - total // 2
        return out, total - total // 2, total // 2
    if auto_pad == "VALID":
        # Ruling 3: out = ceil((n - ek + 1) / s) whatever ceil_mode says; ruling 19: 0 or below
        # (an input shorter than the kernel) is an empty axis.
        return max(0, math.ceil(Fraction(n - ek + 1, s))), 0, 0
    # Ruling 1, also when the kernel is longer than the padded input (ruling 19): the ratio is
    # then negative, and 0 windows or fewer is an empty axis.
    ratio = Fraction(n + pb + pe - ek, s)
    if not ceil_mode:
        return max(0, math.floor(ratio) + 1), pb, pe
    out = math.ceil(ratio) + 1
    if out >= 1 and (out - 1) * s >= n + pb:
        out -= 1
    return max(0, out), pb, pe


def resolve(spatial: Sequence[int], attrs: dict) -> list[tuple[int, int, int, int, int, int]]:
    """Per axis (n, k, s, d, pb, pe, out) with defaults filled from the spec."""
    rank = len(spatial)
    kernel = list(attrs["kernel_shape"])
    strides = list(attrs.get("strides") or [1] * rank)
    dilations = list(attrs.get("dilations") or [1] * rank)
    pads = list(attrs.get("pads") or [0] * (2 * rank))
    auto_pad = attrs.get("auto_pad", "NOTSET")
    ceil_mode = attrs.get("ceil_mode", 0)
    axes = []
    for i, n in enumerate(spatial):
        out, pb, pe = _axis(
            n, kernel[i], strides[i], dilations[i], pads[i], pads[i + rank], auto_pad, ceil_mode
        )
        axes.append((n, kernel[i], strides[i], dilations[i], pb, pe, out))
    return axes


def _axis_taps(j: int, axis) -> list[int]:
    """The input coordinates of output ``j``'s taps along one axis, in tap order (padding
    included): ``j * s - pb + t * d`` for t = 0 .. k-1."""
    _, k, s, d, pb, _, _ = axis
    return [j * s - pb + t * d for t in range(k)]


def _positions(axes):
    """Every output position, in row-major order."""
    return itertools.product(*(range(a[6]) for a in axes))


def _inside_windows(axes, spatial):
    """(output position, [(tap coordinate, its row-major offset in a plane)] of the taps inside
    the input, in the taps' order): the same for every plane, so made once per call.

    A tap is inside when each of its coordinates is inside its axis, so a window's taps inside
    are the product of each axis's taps inside, in the same (row-major) order as filtering the
    product of all taps (a kernel of 10^9 taps over a short axis costs its k per axis here)."""
    inside = [[[c for c in _axis_taps(j, a) if 0 <= c < a[0]] for j in range(a[6])] for a in axes]
    return [
        (pos, [(coord, _offset(coord, spatial, 0)) for coord in
               itertools.product(*(inside[i][j] for i, j in enumerate(pos)))])
        for pos in _positions(axes)
    ]


def _flat(x: np.ndarray, b: int, c: int) -> list:
    """Plane (b, c) in row-major order as Python numbers (each value exactly: float16/float32
    as the double of the same value, integers as int)."""
    return x[b, c].reshape(-1).tolist()


def max_pool(x: np.ndarray, attrs: dict) -> tuple[np.ndarray, np.ndarray]:
    """(Y, Indices) by ruling 5-7: max over in-input taps, NaN wins (first NaN), first max
    wins ties, empty window -> lowest value and index -1; indices flat over N x C x D."""
    n_batch, channels = x.shape[:2]
    spatial = x.shape[2:]
    axes = resolve(spatial, attrs)
    out_spatial = tuple(a[6] for a in axes)
    order = attrs.get("storage_order", 0)
    plane = math.prod(spatial)
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    y = np.zeros((n_batch, channels, *out_spatial), x.dtype)
    ind = np.zeros((n_batch, channels, *out_spatial), np.int64)
    windows = _inside_windows(axes, spatial)
    for b in range(n_batch):
        for c in range(channels):
            plane_values = _flat(x, b, c)
            for pos, taps in windows:
                best, best_at = None, None
                for coord, at in taps:
                    v = plane_values[at]
                    if best is None:
                        best, best_at = v, coord
                    elif _isnan(best):
                        continue
                    elif _isnan(v) or v > best:
                        best, best_at = v, coord
                if best is None:
                    y[(b, c, *pos)] = lowest
                    ind[(b, c, *pos)] = -1
                else:
                    y[(b, c, *pos)] = best
                    offset = _offset(best_at, spatial, order)
                    ind[(b, c, *pos)] = (b * channels + c) * plane + offset
    return y, ind


def _isnan(v) -> bool:
    # NaN is the one value unequal to itself (a Python or numpy float; an integer never is):
    # exact, and 20x cheaper than np.isnan on a Python number, which the max loops call per tap.
    return bool(v != v)


def _offset(coord, spatial, storage_order: int) -> int:
    """Row-major offset, or column-major (first axis fastest) with storage_order=1."""
    dims = list(zip(coord, spatial, strict=True))
    if storage_order:
        dims = dims[::-1]
    offset = 0
    for c, n in dims:
        offset = offset * n + c
    return offset


def average_pool(x: np.ndarray, attrs: dict) -> np.ndarray:
    """Y in float64, by rulings 5 and 8: sum of in-input taps over the number of taps inside
    the input, or (count_include_pad) inside [-pb, n + pe) on every axis."""
    n_batch, channels = x.shape[:2]
    spatial = x.shape[2:]
    axes = resolve(spatial, attrs)
    include_pad = attrs.get("count_include_pad", 0)
    y = np.zeros((n_batch, channels, *(a[6] for a in axes)), np.float64)
    windows = []  # (position, offsets of the in-input taps, the taps counted): once per call
    for pos, taps in _inside_windows(axes, spatial):
        count = len(taps)
        if include_pad:
            # every tap inside [-pb, n + pe) on each axis: the product of the axes' counts
            count = math.prod(
                sum(1 for c in _axis_taps(j, a) if -a[4] <= c < a[0] + a[5])
                for j, a in zip(pos, axes, strict=True)
            )
        windows.append((pos, [at for _, at in taps], count))
    for b in range(n_batch):
        for c in range(channels):
            plane_values = _flat(x, b, c)
            for pos, inside, count in windows:
                total = 0.0
                for at in inside:
                    total += float(plane_values[at])
                y[(b, c, *pos)] = total / count if count else math.nan
    return y


def unpool_shape(x_shape: Sequence[int], attrs: dict) -> list[int]:
    """MaxUnpool's default output shape: (n - 1) * s - pb - pe + k per spatial axis."""
    rank = len(x_shape) - 2
    strides = list(attrs.get("strides") or [1] * rank)
    pads = list(attrs.get("pads") or [0] * (2 * rank))
    kernel = list(attrs["kernel_shape"])
    shape = [*x_shape[:2]] + [
        (x_shape[2 + i] - 1) * strides[i] - pads[i] - pads[i + rank] + kernel[i]
        for i in range(rank)
    ]
    if any(v < 0 for v in shape):
        raise ReferenceError_(f"negative output size {shape}")
    return shape


def max_unpool(
    x: np.ndarray, indices: np.ndarray, attrs: dict, output_shape: Sequence[int] | None = None
) -> np.ndarray:
    """ruling 9: Y.flat[I[j]] = X.flat[j] in order (last write wins), zeros elsewhere; the
    output is output_shape, or (n - 1) * s - pb - pe + k per axis."""
    if output_shape is None:
        output_shape = unpool_shape(x.shape, attrs)
    elif any(v < 0 for v in output_shape):
        raise ReferenceError_(f"negative output size {list(output_shape)}")
    y = np.zeros(tuple(output_shape), x.dtype)
    size = math.prod(output_shape)
    flat_x = list(x.reshape(-1))
    flat_i = [int(v) for v in indices.reshape(-1)]
    for value, index in zip(flat_x, flat_i, strict=True):
        if not 0 <= index < size:
            raise ReferenceError_(f"index {index} outside [0, {size})")
        coord = np.unravel_index(index, y.shape)
        y[coord] = value
    return y


# ------------------------------------------------------------ the rest of the family


_DIGITS = decimal.Context(prec=60)


def _lp_terms_sum(values, p) -> decimal.Decimal | float:
    """sum of |v|^p in 60-digit decimals (each term and each partial sum rounded to 60 digits,
    not to the 28 of the thread's default context): exact for an integer p over values of like
    magnitude (a double's cube has at most 48 digits); for another p each term is Python's float
    pow. inf stays inf."""
    values = [abs(float(v)) for v in values]
    if any(math.isinf(v) for v in values):
        return math.inf
    if float(p).is_integer():
        terms = (_DIGITS.power(decimal.Decimal(v), int(p)) for v in values)
    else:
        terms = (decimal.Decimal(v**p) for v in values)
    total = decimal.Decimal(0)
    for term in terms:
        total = _DIGITS.add(total, term)
    return total


def _lp_root(total, p) -> float:
    """total^(1/p) to 60 digits, then rounded to a double."""
    if isinstance(total, float):
        return total
    if total == 0:
        return 0.0
    if float(p).is_integer() and 1 <= p <= 64:
        return float(_nth_root(total, int(p)))
    return float(_DIGITS.power(total, _DIGITS.divide(decimal.Decimal(1), decimal.Decimal(p))))


def _nth_root(total: decimal.Decimal, n: int) -> decimal.Decimal:
    """total^(1/n) for a positive total, to 60 digits: Newton's iteration y <- ((n-1) y +
    total / y^(n-1)) / n from a double's estimate, each step about 30 more correct digits.
    Decimal's power with the exponent 1/n gives the same doubles (checked on 20,000 totals of
    every magnitude, exact powers among them) at ten times the cost: it was a third of the
    backend cases' time. n is at most 64, so a double's estimate is close enough for the
    iteration to converge at once."""
    if n == 1:
        return total
    if n == 2:
        return _DIGITS.sqrt(total)  # correctly rounded, as power(total, 0.5) is
    # log10(total) = log10(mantissa) + exponent, the mantissa in [1, 10)
    exponent = total.adjusted()
    q = (math.log10(float(_DIGITS.scaleb(total, -exponent))) + exponent) / n
    whole = math.floor(q)
    y = _DIGITS.scaleb(decimal.Decimal(10 ** (q - whole)), whole)
    for _ in range(30):  # converges in 3-4 steps; at 60 digits it may settle on two values
        step = _DIGITS.divide(total, _DIGITS.power(y, n - 1))
        following = _DIGITS.divide(_DIGITS.add(_DIGITS.multiply(n - 1, y), step), n)
        if following == y:
            break
        y = following
    return y


def _has_nan(values) -> bool:
    return any(math.isnan(float(v)) for v in values)


def lp_pool(x: np.ndarray, attrs: dict) -> np.ndarray:
    """Y in float64 by ruling 12: (sum over in-input taps of |x|^p)^(1/p); padding adds
    nothing, so an empty window is 0; NaN anywhere in the window gives NaN."""
    if "kernel_shape" not in attrs:
        raise ReferenceError_("LpPool without kernel_shape")
    p = attrs.get("p", 2)
    if not p > 0:
        raise ReferenceError_(f"p={p} must be > 0")
    n_batch, channels = x.shape[:2]
    spatial = x.shape[2:]
    axes = resolve(spatial, attrs)
    y = np.zeros((n_batch, channels, *(a[6] for a in axes)), np.float64)
    windows = _inside_windows(axes, spatial)
    for b in range(n_batch):
        for c in range(channels):
            plane_values = _flat(x, b, c)
            for pos, taps in windows:
                values = [plane_values[at] for _, at in taps]
                if _has_nan(values):
                    y[(b, c, *pos)] = math.nan
                    continue
                y[(b, c, *pos)] = _lp_root(_lp_terms_sum(values, p), p)
    return y


def _planes(x: np.ndarray):
    """Yield ((n, c), the plane's values as Python floats) for every plane of x."""
    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            yield (b, c), [float(v) for v in x[b, c].reshape(-1)]


def global_pool(x: np.ndarray, op: str, p=2) -> np.ndarray:
    """Y in float64 (N, C, 1, ..., 1) by ruling 13: the whole plane is the window.

    GlobalMaxPool: NaN anywhere gives NaN, an empty plane -inf; GlobalAveragePool: the correctly
    rounded sum (math.fsum) over the count, an empty plane NaN; GlobalLpPool: ruling 12 over
    the plane, an empty plane 0.
    """
    if op == "GlobalLpPool" and not p > 0:
        raise ReferenceError_(f"p={p} must be > 0")
    y = np.zeros((*x.shape[:2], *(1,) * (x.ndim - 2)), np.float64)
    for (b, c), values in _planes(x):
        at = (b, c, *(0,) * (x.ndim - 2))
        if _has_nan(values):
            y[at] = math.nan
        elif op == "GlobalMaxPool":
            y[at] = max(values, default=-math.inf)
        elif op == "GlobalAveragePool":
            if any(math.isinf(v) for v in values):
                y[at] = sum(values)  # inf, or NaN for inf - inf
            else:
                y[at] = math.fsum(values) / len(values) if values else math.nan
        else:
            y[at] = _lp_root(_lp_terms_sum(values, p), p)
    return y


def _round_half_away(q: Fraction) -> int:
    """C's round: halves away from zero, on an exact rational."""
    n = math.floor(abs(q) + Fraction(1, 2))
    return n if q >= 0 else -n


def max_roi_pool(x: np.ndarray, rois: np.ndarray, attrs: dict) -> np.ndarray:
    """Y (num_rois, C, ph, pw) by ruling 14, in Python integers and exact fractions; a NaN in a
    bin gives NaN, an empty bin 0."""
    pooled_h, pooled_w = attrs["pooled_shape"]
    scale = attrs.get("spatial_scale", 1.0)
    n_batch, channels, height, width = x.shape
    y = np.zeros((rois.shape[0], channels, pooled_h, pooled_w), x.dtype)
    for r, roi in enumerate(rois.astype(np.float64).tolist()):
        if not all(math.isfinite(v) for v in roi):
            raise ReferenceError_("non-finite RoI")
        batch = roi[0]
        if batch != int(batch) or not 0 <= batch < n_batch:
            raise ReferenceError_(f"batch index {batch}")
        # The product as the kernel forms it (a float64 product), then rounded exactly.
        x1, y1, x2, y2 = (_round_half_away(Fraction(v * scale)) for v in roi[1:])
        roi_w, roi_h = max(x2 - x1 + 1, 1), max(y2 - y1 + 1, 1)
        for i in range(pooled_h):
            h0 = min(max(math.floor(Fraction(i * roi_h, pooled_h)) + y1, 0), height)
            h1 = min(max(math.ceil(Fraction((i + 1) * roi_h, pooled_h)) + y1, 0), height)
            for j in range(pooled_w):
                w0 = min(max(math.floor(Fraction(j * roi_w, pooled_w)) + x1, 0), width)
                w1 = min(max(math.ceil(Fraction((j + 1) * roi_w, pooled_w)) + x1, 0), width)
                for c in range(channels):
                    values = [float(x[int(batch), c, h, w]) for h in range(h0, h1)
                              for w in range(w0, w1)]
                    if not values:
                        y[r, c, i, j] = 0
                    elif _has_nan(values):
                        y[r, c, i, j] = math.nan
                    else:
                        y[r, c, i, j] = max(values)
    return y
