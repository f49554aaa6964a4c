"""Shape and pad arithmetic of pooling, as pure functions of integers.

Notation per spatial axis (docs/rulings.md): input size ``n``, kernel ``k``, stride ``s``, dilation
``d``, effective kernel ``ek = (k - 1) * d + 1``, begin pad ``pb``, end pad ``pe``. Output position
``j`` reads the input coordinates ``j * s - pb + t * d`` for taps ``t = 0 .. k - 1``; a coordinate
outside ``[0, n)`` is padding.

Everything per axis is closed form or vectorised over the outputs: a kernel of 10**9 taps costs
what a kernel of 3 does. An axis whose padded extent or kernel span leaves int64 is refused.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence

import numpy as np

from ortpool.attributes import INT64_MAX, PoolAttrs
from ortpool.errors import OrtpoolError

#: Outputs looked at per numpy call (bounded temporaries).
_CHUNK = 1 << 20


def check_int64(what: str, value: int) -> int:
    """``value`` if it fits int64, else an error naming ``what``. Every coordinate a kernel
    computes lies in ``[-pb, n + pe)``, so once these fit the kernels' int64 cannot overflow."""
    if value > INT64_MAX:
        raise OrtpoolError(f"{what} = {value} does not fit in int64 (at most {INT64_MAX})")
    return value


def effective_kernel(k: int, d: int) -> int:
    """Span of a dilated kernel: ``(k - 1) * d + 1``."""
    return (k - 1) * d + 1


def _span(k: int, d: int) -> int:
    return check_int64(f"the kernel span ({k} - 1) * {d} + 1", effective_kernel(k, d))


def explicit_output_size(n: int, k: int, s: int, d: int, pb: int, pe: int, ceil_mode: bool) -> int:
    """Output size with explicit pads (rulings 1, 19): ``floor((n + pb + pe - ek) / s) + 1``; ceil
    mode takes the ceiling but drops a last window starting in the end pad; 0 or below is empty."""
    ek = _span(k, d)
    check_int64(f"the padded input {n} + {pb} + {pe}", n + pb + pe)
    span = n + pb + pe - ek
    if not ceil_mode:
        return max(0, span // s + 1)
    out = -(-span // s) + 1
    if out > 0 and (out - 1) * s >= n + pb:
        out -= 1
    return max(0, out)


def same_pads(n: int, k: int, s: int, d: int, upper: bool) -> tuple[int, int, int]:
    """``(out, pb, pe)`` for SAME_UPPER (``upper``) or SAME_LOWER (ruling 2): ``out = ceil(n /
    s)``, the total pad ``(out - 1) * s + ek - n`` clamped at 0 (never a crop), its odd pixel at
    the end (UPPER) or the beginning (LOWER)."""
    out = -(-n // s)
    ek = _span(k, d)
    total = max(0, (out - 1) * s + ek - n)
    check_int64(f"the padded input {n} + {total} (SAME pads)", n + total)
    small = total // 2
    pb, pe = (small, total - small) if upper else (total - small, small)
    return out, pb, pe


def valid_output_size(n: int, k: int, s: int, d: int) -> int:
    """Output size with auto_pad=VALID: ``floor((n - ek) / s) + 1`` (the spec's ``ceil((n - ek +
    1) / s)``, ruling 3) whatever ceil_mode says; 0 or below is an empty axis (ruling 19)."""
    return max(0, (n - _span(k, d)) // s + 1)


@dataclasses.dataclass(frozen=True)
class AxisGeometry:
    """Everything a kernel needs about one spatial axis."""

    n: int
    k: int
    s: int
    d: int
    pb: int
    pe: int
    out: int

    @property
    def is_identity(self) -> bool:
        """A window of one element at every position: pooling along this axis copies it."""
        return self.k == 1 and self.s == 1 and self.pb == 0 and self.pe == 0

    def coordinate(self, j: int, t: int) -> int:
        """Input coordinate read by output ``j`` at tap ``t`` (may be in the padding)."""
        return j * self.s - self.pb + t * self.d

    def tap_range(self, t: int) -> tuple[int, int]:
        """``[lo, hi)`` of outputs whose tap ``t`` reads inside the input ``[0, n)``."""
        shift = self.pb - t * self.d
        lo = max(0, -(-shift // self.s))
        hi = min(self.out, (self.n - 1 + shift) // self.s + 1) if self.n > 0 else 0
        return lo, max(lo, hi)

    def window_taps(self, j: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
        """Per output ``j`` (an int or an int64 array), ``[lo, hi)`` of its taps inside the input
        (one range: coordinates grow with the tap); ``(0, 0)`` for an empty window."""
        c = np.asarray(j, np.int64) * self.s - self.pb
        lo = np.maximum(0, -(c // self.d))
        hi = np.minimum(self.k, -((c - self.n) // self.d))
        empty = hi <= lo
        return np.where(empty, 0, lo), np.where(empty, 0, hi)

    def interior(self) -> tuple[int, int]:
        """``[jl, jh)``: the outputs whose every tap is inside the input; ``(out, out)`` if none."""
        jl = min(self.out, -(-self.pb // self.s))
        last = self.n + self.pb - effective_kernel(self.k, self.d)
        jh = min(self.out, last // self.s + 1) if last >= 0 else 0
        return (jl, jh) if jl < jh else (self.out, self.out)

    def reading(self) -> tuple[int, int]:
        """``[j0, j1)``: the outputs whose window's span meets the input, ``(0, 0)`` if none (a
        dilated window may still skip the input between its taps: :meth:`window_taps`)."""
        if self.n == 0:
            return 0, 0
        j0 = max(0, (self.pb - effective_kernel(self.k, self.d)) // self.s + 1)
        j1 = min(self.out, -(-(self.n + self.pb) // self.s))
        return (j0, j1) if j0 < j1 else (0, 0)

    def full_tap(self) -> int:
        """The first tap inside the input for every output (``ceil(pb / d)`` or none), or -1."""
        if self.out == 0 or self.n == 0:
            return -1
        t = -(-self.pb // self.d)
        if t < self.k and (self.out - 1) * self.s - self.pb + t * self.d <= self.n - 1:
            return t
        return -1

    def counts(self, include_pad: bool, dtype: np.dtype | type = np.int64) -> np.ndarray:
        """Per output, the taps inside the input (or, ``include_pad``, inside ``[-pb, n + pe)``),
        as ``dtype``; taps beyond the end pad (the ceil overhang) never count (ruling 8)."""
        if include_pad:
            result = np.full(self.out, self.k, dtype)
            # Every window starts inside the padded input: only its end, past output jf, can fall
            # short (negative for a kernel longer than the padded input, ruling 19).
            jf = (self.n + self.pb + self.pe - effective_kernel(self.k, self.d)) // self.s
            first = max(0, jf + 1)
            c = np.arange(first, self.out, dtype=np.int64) * self.s - self.pb
            result[first:] = np.clip(-((c - self.n - self.pe) // self.d), 0, self.k)
            return result
        result = np.zeros(self.out, dtype)
        jl, jh = self.interior()
        result[jl:jh] = self.k
        for j, lo, hi in self.border_taps():
            result[j] = hi - lo
        return result

    def border_taps(self, chunk: int = _CHUNK) -> Iterator[tuple[np.ndarray, ...]]:
        """``(j, lo, hi)``: the outputs :meth:`reading` but outside :meth:`interior`, by chunks."""
        jl, jh = self.interior()
        j0, j1 = self.reading()
        for lo, hi in ((j0, min(j1, jl)), (max(j0, jh), j1)):
            for first in range(lo, hi, chunk):
                j = np.arange(first, min(hi, first + chunk), dtype=np.int64)
                yield (j, *self.window_taps(j))

    def taps_inside(self) -> int:
        """The (output, tap) pairs reading inside the input: what one row of this axis reads."""
        jl, jh = self.interior()
        return (jh - jl) * self.k + sum(int((hi - lo).sum()) for _, lo, hi in self.border_taps())

    def empty_windows(self) -> int:
        """How many outputs' windows hold no input element (ruling 5)."""
        j0, j1 = self.reading()
        skipping = sum(int((hi == lo).sum()) for _, lo, hi in self.border_taps())
        return self.out - (j1 - j0) + skipping

    def tap_span(self) -> tuple[int, int]:
        """``[ta, tb)``: every tap inside the input for some output lies here (not all in it do)."""
        if self.out == 0 or self.n == 0:
            return 0, 0
        ta = max(0, -(((self.out - 1) * self.s - self.pb) // self.d))
        tb = min(self.k, (self.pb + self.n - 1) // self.d + 1)
        return ta, max(ta, tb)

    def tap_runs(self) -> list[tuple[int, int]]:
        """The union of every output's :meth:`window_taps`, as ascending disjoint ``[lo, hi)`` runs
        (walked from the last output to the first, whose taps climb)."""
        j0, j1 = self.reading()
        runs: list[tuple[int, int]] = []
        for last in range(j1 - 1, j0 - 1, -_CHUNK):
            lo, hi = self.window_taps(
                np.arange(last, max(j0, last - _CHUNK + 1) - 1, -1, dtype=np.int64)
            )
            keep = hi > lo
            lo, hi = lo[keep], hi[keep]
            if not lo.size:
                continue
            starts = np.flatnonzero(lo[1:] > hi[:-1]) + 1
            firsts = np.concatenate(([0], starts))
            ends = np.concatenate((starts - 1, [lo.size - 1]))
            for a, b in zip(lo[firsts].tolist(), hi[ends].tolist(), strict=True):
                if runs and a <= runs[-1][1]:
                    runs[-1] = (runs[-1][0], max(runs[-1][1], b))
                else:
                    runs.append((a, b))
        return runs


@dataclasses.dataclass(frozen=True)
class PoolGeometry:
    """Per-axis geometry of one pooling call."""

    axes: tuple[AxisGeometry, ...]

    @property
    def output_spatial(self) -> tuple[int, ...]:
        return tuple(a.out for a in self.axes)

    @property
    def pads(self) -> tuple[int, ...]:
        """Effective pads in ONNX order (begins, then ends)."""
        return tuple(a.pb for a in self.axes) + tuple(a.pe for a in self.axes)


def _check_rank(spatial: Sequence[int], attrs: PoolAttrs) -> None:
    if len(spatial) != attrs.rank:
        raise OrtpoolError(f"the input has {len(spatial)} spatial axes but kernel_shape has "
                           f"{attrs.rank}")


def pool_geometry(spatial: Sequence[int], attrs: PoolAttrs) -> PoolGeometry:
    """The output size and effective pads of every axis of the input's spatial shape."""
    _check_rank(spatial, attrs)
    axes = []
    for i, n in enumerate(spatial):
        k, s, d = attrs.kernel_shape[i], attrs.strides[i], attrs.dilations[i]
        try:
            if attrs.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
                out, pb, pe = same_pads(n, k, s, d, upper=attrs.auto_pad == "SAME_UPPER")
            elif attrs.auto_pad == "VALID":
                out, pb, pe = valid_output_size(n, k, s, d), 0, 0
            else:
                pb, pe = attrs.pads[i], attrs.pads[i + attrs.rank]
                out = explicit_output_size(n, k, s, d, pb, pe, bool(attrs.ceil_mode))
        except OrtpoolError as err:
            raise OrtpoolError(f"spatial axis {i}: {err.detail}") from None
        axes.append(AxisGeometry(n=n, k=k, s=s, d=d, pb=pb, pe=pe, out=out))
    return PoolGeometry(tuple(axes))


def index_multipliers(spatial: Sequence[int], storage_order: int) -> tuple[int, ...]:
    """Per spatial axis, the weight of a coordinate in an Index's offset (ruling 7)."""
    if storage_order == 0:
        return tuple(math.prod(spatial[a + 1 :]) for a in range(len(spatial)))
    return tuple(math.prod(spatial[:a]) for a in range(len(spatial)))


def unpool_output_spatial(spatial: Sequence[int], attrs: PoolAttrs) -> tuple[int, ...]:
    """Default MaxUnpool output size per axis: ``(n - 1) * s - pb - pe + k`` (ruling 9)."""
    _check_rank(spatial, attrs)
    out = []
    for i, n in enumerate(spatial):
        s, k = attrs.strides[i], attrs.kernel_shape[i]
        pb, pe = attrs.pads[i], attrs.pads[i + attrs.rank]
        what = f"spatial axis {i}: the default output size"
        size = check_int64(f"{what} ({n} - 1) * {s} - {pb} - {pe} + {k}", (n - 1) * s - pb - pe + k)
        if size < 0:
            raise OrtpoolError(f"{what} (n-1)*s - pads + k = {size} is negative")
        out.append(size)
    return tuple(out)
