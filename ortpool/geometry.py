"""Shape and pad arithmetic of pooling, as pure functions of integers.

Notation per spatial axis (docs/rulings.md): input size ``n``, kernel ``k``, stride ``s``, dilation
``d``, effective kernel ``ek = (k - 1) * d + 1``, begin pad ``pb``, end pad ``pe``. Output position
``j`` reads the input coordinates ``j * s - pb + t * d`` for taps ``t = 0 .. k - 1``; a coordinate
outside ``[0, n)`` is padding.

The kernels, the rewriter and the validator all ask these functions, so one answer holds
everywhere. Everything per axis is closed form, O(1) in the kernel size and the pads; the only
per-output forms (:meth:`AxisGeometry.window_taps`, :meth:`AxisGeometry.counts`) are vectorised
numpy over the outputs, so no plan ever loops over taps (a kernel of 10**9 taps costs what a
kernel of 3 does).

Every value is kept inside ONNX's int64: attributes are int64 in the format, and the kernels do
their coordinate arithmetic in int64, so an axis whose padded extent or kernel span leaves int64
is refused here (:func:`check_int64`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence

import numpy as np

from ortpool.attributes import INT64_MAX, PoolAttrs
from ortpool.errors import OrtpoolError


def check_int64(what: str, value: int) -> int:
    """``value`` if it fits int64, else an error naming ``what``.

    Every coordinate a kernel computes, ``j * s - pb + t * d``, lies in ``[-pb, n + pe)`` and
    every stride product ``(out - 1) * s`` is at most ``n + pb + pe - ek``: so once the padded
    extent ``n + pb + pe`` and the span ``ek`` fit int64, no int64 arithmetic of the kernels
    can overflow. Example: n=4, pads (2**63 - 1, 0): 4 + 9223372036854775807 + 0 is refused.
    """
    if value > INT64_MAX:
        raise OrtpoolError(f"{what} = {value} does not fit in int64 (at most {INT64_MAX})")
    return value


def effective_kernel(k: int, d: int) -> int:
    """Span of a dilated kernel: ``(k - 1) * d + 1``. Example: k=3, d=2 covers 5 inputs."""
    return (k - 1) * d + 1


def explicit_output_size(n: int, k: int, s: int, d: int, pb: int, pe: int, ceil_mode: bool) -> int:
    """Output size with explicit pads (rulings 1, 19).

    The padded axis has ``n + pb + pe`` positions and a window spans ``ek``, so windows start at
    ``0, s, 2s, ...`` while ``start + ek <= n + pb + pe``: ``floor((n + pb + pe - ek) / s) + 1``.
    ceil mode lets one more window hang over the end, ``ceil(...) + 1``, but drops it when it
    would start at or beyond ``n + pb`` (in the end pad), i.e. when ``(out - 1) * s >= n + pb``.

    A kernel longer than the padded input (``ek > n + pb + pe``) takes the same formulas
    (ruling 19): floor and ceil are of a negative number, and a result of 0 or below is an
    empty axis. In ceil mode an overhang shorter than a stride leaves one window, starting at
    ``-pb``; its taps past the end pad are ceil overhang, which never count.

    Example: n=5, k=2, s=2, no pads: floor(3/2)+1 = 2, ceil mode ceil(3/2)+1 = 3 (the last window
    starts at 4 < 5 and holds one input). n=4, k=2, s=2, pe=1, ceil: ceil(3/2)+1 = 3, but the third
    window starts at 4 >= 4, so 2. n=1, k=2, s=2 (a 1x1 map into ResNet-D's shortcut pool):
    floor(-1/2)+1 = 0 (empty), ceil(-1/2)+1 = 1 (one window holding the input). n=1, k=5, s=2,
    ceil: ceil(-4/2)+1 = -1, so 0. n=0, k=1, s=2, ceil: ceil(-1/2)+1 = 1, but window 0 starts at
    0 >= 0 + 0, so 0.
    """
    ek = check_int64(f"the kernel span ({k} - 1) * {d} + 1", effective_kernel(k, d))
    check_int64(f"the padded input {n} + {pb} + {pe}", n + pb + pe)
    span = n + pb + pe - ek
    if not ceil_mode:
        return max(0, span // s + 1)
    out = -(-span // s) + 1
    if out > 0 and (out - 1) * s >= n + pb:
        out -= 1
    return max(0, out)


def same_pads(n: int, k: int, s: int, d: int, upper: bool) -> tuple[int, int, int]:
    """``(out, pb, pe)`` for SAME_UPPER (``upper``) or SAME_LOWER (ruling 2).

    ``out = ceil(n / s)``; the windows then need ``(out - 1) * s + ek`` positions, so the total pad
    is that minus ``n``, clamped at 0 (a negative total would be a crop). The dilated span is used.
    SAME_UPPER puts the odd pixel at the end, SAME_LOWER at the beginning.

    Example: n=5, k=3, s=1, d=2: out=5, total = 4 + 5 - 5 = 4, pads (2, 2). n=4, k=3, s=2, d=1:
    out=2, total = 2 + 3 - 4 = 1: UPPER (0, 1), LOWER (1, 0). n=5, k=1, s=3: out=2, total
    = 3 + 1 - 5 = -1, clamped to 0.
    """
    out = -(-n // s)
    ek = check_int64(f"the kernel span ({k} - 1) * {d} + 1", effective_kernel(k, d))
    total = max(0, (out - 1) * s + ek - n)
    check_int64(f"the padded input {n} + {total} (SAME pads)", n + total)
    small = total // 2
    pb, pe = (small, total - small) if upper else (total - small, small)
    return out, pb, pe


def valid_output_size(n: int, k: int, s: int, d: int) -> int:
    """Output size with auto_pad=VALID: ``floor((n - ek) / s) + 1``, whatever ceil_mode says.

    That equals the spec's ``ceil((n - ek + 1) / s)`` (ruling 3). An input shorter than the
    span gives 0 or below: an empty axis (ruling 19). Example: n=5, k=2, s=2: floor(3/2)+1 =
    2 = ceil(4/2). n=1, k=2, s=2: floor(-1/2)+1 = 0 = ceil(0/2).
    """
    ek = check_int64(f"the kernel span ({k} - 1) * {d} + 1", effective_kernel(k, d))
    return max(0, (n - ek) // s + 1)


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
        """``[lo, hi)`` of outputs whose tap ``t`` reads inside the input ``[0, n)``.

        From ``0 <= j * s - pb + t * d < n``: ``j >= ceil((pb - t*d) / s)`` and
        ``j <= floor((n - 1 + pb - t*d) / s)``, clipped to ``[0, out)``. Example: n=4, k=3, s=2,
        pb=1, out=2: tap 0 reads -1 and 1, so outputs [1, 2).
        """
        shift = self.pb - t * self.d
        lo = max(0, -(-shift // self.s))
        hi = min(self.out, (self.n - 1 + shift) // self.s + 1) if self.n > 0 else 0
        return lo, max(lo, hi)

    def input_start(self, t: int, lo: int) -> int:
        """Input coordinate of output ``lo`` at tap ``t``."""
        return self.coordinate(lo, t)

    def window_taps(self, j: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
        """Per output ``j`` (an int or an int64 array), ``[lo, hi)`` of its taps inside the input.

        Output ``j`` reads ``c + t * d`` with ``c = j * s - pb``; ``0 <= c + t * d < n`` gives
        ``t >= ceil(-c / d)`` and ``t < ceil((n - c) / d)``, clipped to ``[0, k)``. The taps inside
        form one range because coordinates grow with the tap. An empty window gives ``(0, 0)``.
        Example: n=4, k=3, s=2, pb=1: output 0 has c=-1, taps [1, 3) (reading 0 and 1); output 1
        has c=1, taps [0, 3) (reading 1, 2, 3).
        """
        c = np.asarray(j, np.int64) * self.s - self.pb
        lo = np.maximum(0, -(c // self.d))
        hi = np.minimum(self.k, -((c - self.n) // self.d))
        empty = hi <= lo
        return np.where(empty, 0, lo), np.where(empty, 0, hi)

    def interior(self) -> tuple[int, int]:
        """``[jl, jh)``: the outputs whose every tap is inside the input; ``(out, out)`` if none.

        Tap 0 inside needs ``j * s >= pb``, so ``jl = ceil(pb / s)``; the last tap inside needs
        ``j * s - pb + ek - 1 <= n - 1``, so ``jh = floor((n + pb - ek) / s) + 1``. Example: n=4,
        k=3, s=2, pb=1, out=2: jl = 1, jh = floor(2 / 2) + 1 = 2: output 1 only.
        """
        jl = min(self.out, -(-self.pb // self.s))
        last = self.n + self.pb - effective_kernel(self.k, self.d)
        jh = min(self.out, last // self.s + 1) if last >= 0 else 0
        return (jl, jh) if jl < jh else (self.out, self.out)

    def reading(self) -> tuple[int, int]:
        """``[j0, j1)``: the outputs whose window holds at least one input element.

        The window of ``j`` spans ``[j * s - pb, j * s - pb + ek)``; it meets ``[0, n)`` when
        ``j * s > pb - ek`` and ``j * s < n + pb``, so ``j0 = floor((pb - ek) / s) + 1`` (at least
        0) and ``j1 = ceil((n + pb) / s)`` (at most out), and ``j0 = j1`` when none. Windows of
        dilated kernels may still skip the input between their taps: :meth:`window_taps` says.
        Example: n=1, k=2, s=1, pads (3, 3), out=7: j0 = 2, j1 = 4 (windows at -1 and 0).
        """
        if self.n == 0:
            return 0, 0
        j0 = max(0, (self.pb - effective_kernel(self.k, self.d)) // self.s + 1)
        j1 = min(self.out, -(-(self.n + self.pb) // self.s))
        return (j0, j1) if j0 < j1 else (0, 0)

    def full_tap(self) -> int:
        """The first tap that is inside the input for every output, or -1 if none.

        Tap ``t`` is inside for output 0 when ``t * d >= pb`` and for the last output when
        ``(out - 1) * s - pb + t * d <= n - 1``; in between it is then inside too. So the first
        is ``t = ceil(pb / d)`` if that is below ``k`` and meets the second bound. Example: n=4,
        k=3, s=2, pb=1, out=2: t = 1, and 2 - 1 + 1 = 2 <= 3: tap 1.
        """
        if self.out == 0 or self.n == 0:
            return -1
        t = -(-self.pb // self.d)
        if t < self.k and (self.out - 1) * self.s - self.pb + t * self.d <= self.n - 1:
            return t
        return -1

    def counts(self, include_pad: bool, dtype: np.dtype | type = np.int64) -> np.ndarray:
        """Per output, the taps inside the input (or, ``include_pad``, inside ``[-pb, n + pe)``),
        as ``dtype`` (int64, or the float type a divisor is wanted in).

        Taps beyond the end pad (the ceil overhang) never count (ruling 8). Without
        ``include_pad``: ``k`` for the :meth:`interior`, 0 outside :meth:`reading`, the
        :meth:`border_taps` in between. With it, every window starts inside ``[-pb, ...)``
        (``j * s - pb >= -pb``), so only its end can fall short: all ``k`` taps count while
        ``j * s - pb + ek <= n + pe``, i.e. up to ``jf = floor((n + pb + pe - ek) / s)``, and
        the ceil overhang beyond counts ``ceil((n + pe - c) / d)`` (clipped to ``[0, k]``).
        Only the outputs that differ are computed one by one, the rest is one fill (16.7M
        outputs: 0.1 s). Example: n=3, k=3, s=1, pads (1, 1), out=3: [2, 3, 2]; with
        ``include_pad`` [3, 3, 3]. n=1, k=2, s=2, ceil mode, out=1 (ruling 19): [1] either
        way, the second tap being overhang.
        """
        if include_pad:
            result = np.full(self.out, self.k, dtype)
            # A kernel longer than the padded input (ruling 19) makes jf negative: then no
            # window is whole and every one (the ceil window at most) is overhang.
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

    def border_taps(self, chunk: int = 1 << 20) -> Iterator[tuple[np.ndarray, ...]]:
        """``(j, lo, hi)`` arrays of at most ``chunk`` outputs each: the outputs whose window
        meets the input (:meth:`reading`) but not wholly (outside :meth:`interior`), ascending,
        with their :meth:`window_taps`. The others need no look: interior windows hold all
        ``k`` taps, the windows outside ``[j0, j1)`` none."""
        jl, jh = self.interior()
        j0, j1 = self.reading()
        for lo, hi in ((j0, min(j1, jl)), (max(j0, jh), j1)):
            for first in range(lo, hi, chunk):
                j = np.arange(first, min(hi, first + chunk), dtype=np.int64)
                yield (j, *self.window_taps(j))

    def taps_inside(self) -> int:
        """The number of (output, tap) pairs reading inside the input: the reads one row of this
        axis costs: ``k`` per interior output, plus the :meth:`border_taps`. Example: n=3, k=3,
        s=1, pads (1, 1): 2 + 3 + 2 = 7."""
        jl, jh = self.interior()
        return (jh - jl) * self.k + sum(int((hi - lo).sum()) for _, lo, hi in self.border_taps())

    def empty_windows(self) -> int:
        """How many outputs' windows hold no input element (ruling 5): those outside
        :meth:`reading`, and border windows whose dilated taps step over the input; counted
        without a per-output array (pads of 10**9 leave 2 * 10**9 of them).
        Example: n=1, k=2, d=2, pads (1, 1), out=1: taps read -1 and 1, skipping 0: 1."""
        j0, j1 = self.reading()
        skipping = sum(int((hi == lo).sum()) for _, lo, hi in self.border_taps())
        return self.out - (j1 - j0) + skipping

    def tap_span(self) -> tuple[int, int]:
        """``[ta, tb)``: the taps inside the input for some output all lie here (with strides
        some in between may be inside for none). Tap ``t`` reaches the input from the last
        output when ``(out - 1) * s - pb + t * d >= 0`` and from the first while
        ``t * d - pb <= n - 1``. Example: n=4, k=10**9, pads (0, 10**9), out=5: [0, 4)."""
        if self.out == 0 or self.n == 0:
            return 0, 0
        ta = max(0, -(((self.out - 1) * self.s - self.pb) // self.d))
        tb = min(self.k, (self.pb + self.n - 1) // self.d + 1)
        return ta, max(ta, tb)

    def tap_runs(self) -> list[tuple[int, int]]:
        """The taps inside the input for some output, as ascending disjoint ``[lo, hi)`` runs:
        the union of every output's :meth:`window_taps`.

        Both ends of an output's range fall as ``j`` grows, so taken from the last output to the
        first the ranges climb, and a new run starts where a range begins above the end of the
        one before; only the outputs that read the input (:meth:`reading`) are looked at.
        Example: n=1, k=4, s=2, pads (3, 3), out=2: output 0 reads tap 3, output 1 tap 1: runs
        [1, 2) and [3, 4).
        """
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


#: Outputs looked at per numpy call by :meth:`AxisGeometry.tap_runs` (bounded temporaries).
_CHUNK = 1 << 20


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


def pool_geometry(spatial: Sequence[int], attrs: PoolAttrs) -> PoolGeometry:
    """Resolve the output size and effective pads of every spatial axis.

    ``spatial`` is the input's spatial shape; its length must match the kernel's.
    """
    if len(spatial) != attrs.rank:
        raise OrtpoolError(
            f"the input has {len(spatial)} spatial axes but kernel_shape has {attrs.rank}"
        )
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
    """Per spatial axis, the weight of a coordinate in an Index's offset (ruling 7).

    Row-major (``storage_order=0``) weighs axis ``a`` by the product of the later sizes,
    column-major by the product of the earlier ones. Example: spatial (H, W) = (3, 4): row-major
    (4, 1), so (h, w) -> 4h + w; column-major (1, 3), so h + 3w.
    """
    if storage_order == 0:
        return tuple(math.prod(spatial[a + 1 :]) for a in range(len(spatial)))
    return tuple(math.prod(spatial[:a]) for a in range(len(spatial)))


def unpool_output_spatial(spatial: Sequence[int], attrs: PoolAttrs) -> tuple[int, ...]:
    """Default MaxUnpool output size per axis: ``(n - 1) * s - pb - pe + k`` (ruling 9).

    It inverts MaxPool's floor formula. Example: n=2, k=2, s=2, no pads: 1*2 + 2 = 4.
    """
    if len(spatial) != attrs.rank:
        raise OrtpoolError(
            f"the input has {len(spatial)} spatial axes but kernel_shape has {attrs.rank}"
        )
    out = []
    for i, n in enumerate(spatial):
        size = (n - 1) * attrs.strides[i] - attrs.pads[i] - attrs.pads[i + attrs.rank]
        size += attrs.kernel_shape[i]
        check_int64(
            f"spatial axis {i}: the default output size ({n} - 1) * {attrs.strides[i]} - "
            f"{attrs.pads[i]} - {attrs.pads[i + attrs.rank]} + {attrs.kernel_shape[i]}",
            size,
        )
        if size < 0:
            raise OrtpoolError(
                f"spatial axis {i}: the default output size (n-1)*s - pads + k = {size} is negative"
            )
        out.append(size)
    return tuple(out)
