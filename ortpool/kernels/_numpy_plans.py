"""The numpy back-end's plans: what a separable reduction (MaxPool's Y, AveragePool's sums) and
MaxPool's Indices need for one (shape, dtype, attributes), built once and run as numpy calls
(:mod:`._numpy_loops`) per block of planes, above
:data:`ortpool.kernels._parallel.MIN_PARALLEL_BYTES` shared between the calling thread and one
worker (numpy releases the GIL in its loops)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from ortpool.geometry import PoolGeometry, index_multipliers
from ortpool.kernels import _first_match, _parallel
from ortpool.kernels._buffers import output, scratch
from ortpool.kernels._common import lowest
from ortpool.kernels._numpy_loops import blocks, run_passes
from ortpool.kernels._passes import (
    PlaneShape,
    axis_pass,
    inside_taps,
    separable_passes,
    tap_slices,
)


def for_blocks(
    ranges: list[tuple[int, int]], work: Callable[[int, int], None], nbytes: int
) -> None:
    """Run ``work(lo, hi)`` over the planes of ``ranges``: block by block on this thread, or one
    share per thread when the call is big enough."""
    _parallel.split(ranges[-1][1] if ranges else 0, ranges, work, nbytes)


class _SeparablePlan(PlaneShape):
    """What a separable reduction of ``shape`` needs: its passes, blocks and output shape."""

    def __init__(
        self, geom: PoolGeometry, shape: tuple[int, ...], dtype: np.dtype, order: list[int]
    ):
        super().__init__(geom, shape, dtype)
        self.passes = separable_passes(geom, order)
        self.ranges = blocks(self.planes, math.prod(shape[2:]) * dtype.itemsize)


class MaxValuesPlan(_SeparablePlan):
    """Y of MaxPool."""

    def __init__(
        self, geom: PoolGeometry, shape: tuple[int, ...], dtype: np.dtype, order: list[int]
    ):
        super().__init__(geom, shape, dtype, order)
        self.fill = lowest(dtype)

    def values(self, x: np.ndarray) -> np.ndarray:
        """Y for ``x`` of the planned shape and dtype."""
        src = x.reshape((self.planes, *x.shape[2:]))
        y = output(self.out_shape, self.dtype)
        dst = y.reshape((self.planes, *self.out_shape[2:]))
        passes, fill, dtype = self.passes, self.fill, self.dtype
        if len(self.ranges) == 1:
            run_passes(src, passes, np.maximum, fill, dtype, dst)
            return y

        def work(lo: int, hi: int) -> None:
            run_passes(src[lo:hi], passes, np.maximum, fill, dtype, dst[lo:hi])

        for_blocks(self.ranges, work, self.nbytes)
        return y


class AveragePlan(_SeparablePlan):
    """Y of AveragePool: separable sums (axes in order), then one in-place division."""

    def __init__(
        self, geom: PoolGeometry, shape: tuple[int, ...], acc: np.dtype, divisor: np.ndarray
    ):
        super().__init__(geom, shape, acc, list(range(len(geom.axes))))
        self.divisor = divisor

    def average(self, x: np.ndarray) -> np.ndarray:
        src = x.reshape((self.planes, *x.shape[2:]))
        y = output(self.out_shape, self.dtype)
        dst = y.reshape((self.planes, *self.out_shape[2:]))
        passes, acc, divisor = self.passes, self.dtype, self.divisor

        def work(lo: int, hi: int) -> None:
            block = src[lo:hi]
            if block.dtype != acc:
                block = block.astype(acc)
            out = dst[lo:hi]
            # inf + -inf is NaN and 0/0 is NaN, as they should be: no warnings. (errstate is
            # per thread, so it is set here, in the thread doing the work.)
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                run_passes(block, passes, np.add, 0, acc, out)
                np.divide(out, divisor, out=out)

        for_blocks(self.ranges, work, self.nbytes)
        return y


class MaxIndicesPlan:
    """Y and Indices of MaxPool.

    Y comes from the separable max. Each output's winner is the earliest tap (row-major) whose
    value equals Y, or is NaN (then Y is NaN and the ruling names the first NaN): every tap
    ``t`` of ``K`` marks its matches with the code ``K - t`` and the codes are combined by max,
    so the earliest match has the largest code; 0 means no tap (a window in the padding only).
    That is a few SIMD byte operations per tap, where a masked copy per tap is 6x slower.
    The flat index is ``plane * prod(D) + base(output position) + offset(tap)``
    (rulings 6, 7); an output whose window holds no input keeps index -1.
    """

    def __init__(
        self,
        geom: PoolGeometry,
        shape: tuple[int, ...],
        dtype: np.dtype,
        storage_order: int,
        order: list[int],
    ):
        self.values_plan = MaxValuesPlan(geom, shape, dtype, order)
        spatial = tuple(shape[2:])
        rank = len(spatial)
        mult = index_multipliers(spatial, storage_order)
        self.plane_size = math.prod(spatial)
        self.geom, self.mult = geom, mult
        # Windows of many tap combinations: searched axis by axis (_first_match), no codes.
        self.search = _first_match.combinations(geom) > WINDOW_LOOP_MAX
        if self.search:
            self.empty = _first_match.empty_windows(geom)
            return
        base = np.zeros(geom.output_spatial, np.int64)
        for a, g in enumerate(geom.axes):
            coords = (np.arange(g.out, dtype=np.int64) * g.s - g.pb) * mult[a]
            base = base + coords.reshape((-1,) + (1,) * (rank - 1 - a))
        self.base = base
        # Only the taps inside the input for some output take part, so only their combinations
        # get a code, in row-major order (a kernel of 10**9 taps over 4 inputs has 4).
        useful = [inside_taps(g) for g in geom.axes]
        n_taps = math.prod(len(u) for u in useful)
        self.code_dtype = np.dtype(np.uint8 if n_taps < 1 << 8 else np.uint16)
        # lut[code] = spatial offset of the tap with that code; code 0 (no tap) maps to 0.
        lut = np.zeros(n_taps + 1, np.int64)
        taps = []
        for tap_id, tap in enumerate(itertools.product(*useful)):
            code = n_taps - tap_id
            lut[code] = sum(t * g.d * m for t, g, m in zip(tap, geom.axes, mult, strict=True))
            slices = [tap_slices(g, t) for g, t in zip(geom.axes, tap, strict=True)]
            out_idx = (slice(None), *(sl[0] for sl in slices))
            in_idx = (slice(None), *(sl[1] for sl in slices))
            taps.append((code, out_idx, in_idx))
        self.taps = tuple(taps)
        self.lut = lut
        # Some window holds no input iff along some axis some output has no in-input tap.
        self.has_empty = any(g.empty_windows() for g in geom.axes)

    def run(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        vp = self.values_plan
        planes = vp.planes
        src = x.reshape((planes, *x.shape[2:]))
        y = output(vp.out_shape, vp.dtype, 0)
        indices = output(vp.out_shape, np.dtype(np.int64), 1)
        ydst = y.reshape((planes, *vp.out_shape[2:]))
        idst = indices.reshape((planes, *vp.out_shape[2:]))
        passes, fill, dtype = vp.passes, vp.fill, vp.dtype
        finish = self._search if self.search else self._mark

        def work(lo: int, hi: int) -> None:
            block, yb, ib = src[lo:hi], ydst[lo:hi], idst[lo:hi]
            run_passes(block, passes, np.maximum, fill, dtype, yb)
            finish(block, yb, ib, lo)

        for_blocks(vp.ranges, work, vp.nbytes * 3)
        return y, indices

    def _mark(self, block: np.ndarray, yb: np.ndarray, ib: np.ndarray, lo: int) -> None:
        """Indices of a block by the codes of the tap combinations (the class docstring)."""
        code_dtype, taps, lut = self.code_dtype, self.taps, self.lut
        best = scratch(yb.shape, code_dtype, "best")
        best.fill(0)
        marks = scratch(yb.shape, code_dtype, "marks")
        nan_scratch = None
        if yb.dtype.kind == "f" and bool(np.isnan(yb).any()):
            nan_scratch = scratch(yb.shape, code_dtype, "nan")
        for code, out_idx, in_idx in taps:
            cand = block[in_idx]
            m = marks[out_idx]
            np.equal(cand, yb[out_idx], out=m, casting="unsafe")
            if nan_scratch is not None:
                n = nan_scratch[out_idx]
                np.not_equal(cand, cand, out=n, casting="unsafe")
                np.bitwise_or(m, n, out=m)
            np.multiply(m, code, out=m, casting="unsafe")
            view = best[out_idx]
            np.maximum(view, m, out=view)
        # Codes are in range by construction: "clip" skips the bounds check (10x faster).
        np.take(lut, best, out=ib, mode="clip")
        ib += self.base
        planes_off = np.arange(lo, lo + len(yb), dtype=np.int64) * self.plane_size
        ib += planes_off.reshape((-1,) + (1,) * (yb.ndim - 1))
        if self.has_empty:
            np.copyto(ib, -1, where=best == 0)

    def _search(self, block: np.ndarray, yb: np.ndarray, ib: np.ndarray, first: int) -> None:
        geom, vp = self.geom, self.values_plan

        def one_pass(src: np.ndarray, axis: int, out: np.ndarray) -> None:
            p = axis_pass(geom.axes[axis], axis, tuple(src.shape[1:]))
            run_passes(src, (p,), np.maximum, vp.fill, vp.dtype, out)

        levels = _first_match.partial_maxima(block, geom, one_pass)
        ib[...] = _first_match.first_match(
            levels, yb, geom, self.mult, first, self.plane_size, self.empty
        )


#: Tap combinations up to which MaxIndicesPlan marks each combination (a few SIMD byte
#: operations each); beyond, the winner is searched axis by axis (:mod:`._first_match`).
WINDOW_LOOP_MAX = 4096
