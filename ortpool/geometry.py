"""Shape and pad arithmetic of pooling, as pure functions of integers.

Notation per spatial axis (RULINGS.md): input size ``n``, kernel ``k``, stride ``s``, dilation
``d``, effective kernel ``ek = (k - 1) * d + 1``, begin pad ``pb``, end pad ``pe``. Output position
``j`` reads the input coordinates ``j * s - pb + t * d`` for taps ``t = 0 .. k - 1``; a coordinate
outside ``[0, n)`` is padding.

Nothing here touches arrays: the kernels, the rewriter and the validator all ask these functions,
so one answer holds everywhere.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from ortpool.attributes import PoolAttrs
from ortpool.errors import OrtpoolError


def effective_kernel(k: int, d: int) -> int:
    """Span of a dilated kernel: ``(k - 1) * d + 1``. Example: k=3, d=2 covers 5 inputs."""
    return (k - 1) * d + 1


def explicit_output_size(n: int, k: int, s: int, d: int, pb: int, pe: int, ceil_mode: bool) -> int:
    """Output size with explicit pads (RULINGS.md 1).

    The padded axis has ``n + pb + pe`` positions and a window spans ``ek``, so windows start at
    ``0, s, 2s, ...`` while ``start + ek <= n + pb + pe``: ``floor((n + pb + pe - ek) / s) + 1``.
    ceil mode lets one more window hang over the end, ``ceil(...) + 1``, but drops it when it
    would start at or beyond ``n + pb`` (in the end pad), i.e. when ``(out - 1) * s >= n + pb``.

    Example: n=5, k=2, s=2, no pads: floor(3/2)+1 = 2, ceil mode ceil(3/2)+1 = 3 (the last window
    starts at 4 < 5 and holds one input). n=4, k=2, s=2, pe=1, ceil: ceil(3/2)+1 = 3, but the third
    window starts at 4 >= 4, so 2.
    """
    ek = effective_kernel(k, d)
    span = n + pb + pe - ek
    if span < 0:
        raise OrtpoolError(
            f"the padded input ({n} + {pb} + {pe}) is smaller than the kernel span {ek}"
        )
    if not ceil_mode:
        return span // s + 1
    out = -(-span // s) + 1
    if (out - 1) * s >= n + pb:
        out -= 1
    return out


def same_pads(n: int, k: int, s: int, d: int, upper: bool) -> tuple[int, int, int]:
    """``(out, pb, pe)`` for SAME_UPPER (``upper``) or SAME_LOWER (RULINGS.md 2).

    ``out = ceil(n / s)``; the windows then need ``(out - 1) * s + ek`` positions, so the total pad
    is that minus ``n``, clamped at 0 (a negative total would be a crop). The dilated span is used.
    SAME_UPPER puts the odd pixel at the end, SAME_LOWER at the beginning.

    Example: n=5, k=3, s=1, d=2: out=5, total = 4 + 5 - 5 = 4, pads (2, 2). n=4, k=3, s=2, d=1:
    out=2, total = 2 + 3 - 4 = 1: UPPER (0, 1), LOWER (1, 0). n=5, k=1, s=3: out=2, total
    = 3 + 1 - 5 = -1, clamped to 0.
    """
    out = -(-n // s)
    total = max(0, (out - 1) * s + effective_kernel(k, d) - n)
    small = total // 2
    pb, pe = (small, total - small) if upper else (total - small, small)
    return out, pb, pe


def valid_output_size(n: int, k: int, s: int, d: int) -> int:
    """Output size with auto_pad=VALID: ``floor((n - ek) / s) + 1``, whatever ceil_mode says.

    That equals the spec's ``ceil((n - ek + 1) / s)`` (RULINGS.md 3). Example: n=5, k=2, s=2:
    floor(3/2)+1 = 2 = ceil(4/2).
    """
    ek = effective_kernel(k, d)
    if n < ek:
        raise OrtpoolError(f"the input size {n} is smaller than the VALID kernel span {ek}")
    return (n - ek) // s + 1


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

    def counts(self, include_pad: bool) -> list[int]:
        """Per output, the taps inside the input (or, ``include_pad``, inside ``[-pb, n + pe)``).

        Taps beyond the end pad (the ceil overhang) never count (RULINGS.md 8).
        """
        lo_bound, hi_bound = (-self.pb, self.n + self.pe) if include_pad else (0, self.n)
        result = []
        for j in range(self.out):
            start = j * self.s - self.pb
            result.append(
                sum(1 for t in range(self.k) if lo_bound <= start + t * self.d < hi_bound)
            )
        return result


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
    """Per spatial axis, the weight of a coordinate in an Index's offset (RULINGS.md 7).

    Row-major (``storage_order=0``) weighs axis ``a`` by the product of the later sizes,
    column-major by the product of the earlier ones. Example: spatial (H, W) = (3, 4): row-major
    (4, 1), so (h, w) -> 4h + w; column-major (1, 3), so h + 3w.
    """
    if storage_order == 0:
        return tuple(math.prod(spatial[a + 1 :]) for a in range(len(spatial)))
    return tuple(math.prod(spatial[:a]) for a in range(len(spatial)))


def unpool_output_spatial(spatial: Sequence[int], attrs: PoolAttrs) -> tuple[int, ...]:
    """Default MaxUnpool output size per axis: ``(n - 1) * s - pb - pe + k`` (RULINGS.md 9).

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
        if size < 0:
            raise OrtpoolError(
                f"spatial axis {i}: the default output size (n-1)*s - pads + k = {size} is negative"
            )
        out.append(size)
    return tuple(out)
