"""The numpy loops of the plans (:mod:`._plan`): the passes per block of planes
(:mod:`._numpy_loops`); MaxPool's Indices marked tap by tap or searched (:mod:`._first_match`)."""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any  # the plans' type (:mod:`._plan` imports this module, not the reverse)

import numpy as np

from ortpool.geometry import PoolGeometry
from ortpool.kernels import _first_match, _parallel
from ortpool.kernels._buffers import scratch
from ortpool.kernels._numpy_loops import blocks, run_passes
from ortpool.kernels._passes import axis_pass, inside_taps, separable_passes, tap_slices


class Passes:
    """The loop of a separable plan: its passes as tap slices, run block by block."""

    def __init__(self, plan: Any, geom: PoolGeometry, order: list[int]):
        self.passes = separable_passes(geom, order)
        self.ranges = blocks(plan.planes, plan.in_plane * plan.dtype.itemsize)

    def reduce(self, plan: Any, block: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``out`` = the plan's reduction of ``block`` (planes, *spatial), cast to its dtype."""
        if plan.cast:
            block = block.astype(plan.dtype)
        if plan.divisor is None:
            run_passes(block, self.passes, plan.ufunc, plan.ident, plan.dtype, out)
            return block
        # inf + -inf and 0/0 are NaN, as they should be (errstate is per thread: set here).
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            run_passes(block, self.passes, plan.ufunc, plan.ident, plan.dtype, out)
            np.divide(out, plan.divisor, out=out)
        return block

    # No closure in run: see _numba_plans.Passes.run.
    def run(self, plan: Any, x: np.ndarray, y: np.ndarray) -> None:
        src = x.reshape((plan.planes, *x.shape[2:]))
        dst = y.reshape((plan.planes, *plan.out_shape[2:]))
        if len(self.ranges) == 1:  # one block never splits
            self.reduce(plan, src, dst)
        else:
            work = functools.partial(self._range, plan, src, dst)
            _parallel.split(plan.planes, self.ranges, work, plan.nbytes)

    def _range(self, plan: Any, src: np.ndarray, dst: np.ndarray, lo: int, hi: int) -> None:
        self.reduce(plan, src[lo:hi], dst[lo:hi])


class Indices(Passes):
    """The loop of :class:`._plan.MaxIndices`: Y from the separable max, then each output's winner:
    tap ``t`` of ``K`` marks its matches ``K - t``, combined by max; 0 leaves -1. Past
    :data:`WINDOW_LOOP_MAX` tap combinations the winner is searched (:mod:`._first_match`)."""

    def __init__(self, plan: Any, geom: PoolGeometry, order: list[int]):
        super().__init__(plan, geom, order)
        self.geom = geom
        self.search = _first_match.combinations(geom) > WINDOW_LOOP_MAX
        if self.search:
            self.empty = _first_match.empty_windows(geom)
            return
        rank, mult = len(geom.axes), plan.mult
        # The spatial offset of each output's window origin.
        base = np.zeros(geom.output_spatial, np.int64)
        for a, g in enumerate(geom.axes):
            coords = (np.arange(g.out, dtype=np.int64) * g.s - g.pb) * mult[a]
            base = base + coords.reshape((-1,) + (1,) * (rank - 1 - a))
        self.base = base
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
            taps.append((code, (slice(None), *(s[0] for s in slices)),
                         (slice(None), *(s[1] for s in slices))))
        self.taps = tuple(taps)
        self.lut = lut
        self.has_empty = any(g.empty_windows() for g in geom.axes)

    def run(  # type: ignore[override]
        self, plan: Any, x: np.ndarray, y: np.ndarray, indices: np.ndarray
    ) -> None:
        src = x.reshape((plan.planes, *x.shape[2:]))
        ydst = y.reshape((plan.planes, *plan.out_shape[2:]))
        idst = indices.reshape(ydst.shape)
        finish = self._search if self.search else self._mark

        def work(lo: int, hi: int) -> None:
            block = self.reduce(plan, src[lo:hi], ydst[lo:hi])
            finish(plan, block, ydst[lo:hi], idst[lo:hi], lo)

        _parallel.split(plan.planes, self.ranges, work, plan.nbytes * 3)

    def _mark(self, plan: Any, block: np.ndarray, yb: np.ndarray, ib: np.ndarray, lo: int) -> None:
        code_dtype = self.code_dtype
        best = scratch(yb.shape, code_dtype, "best")
        best.fill(0)
        marks = scratch(yb.shape, code_dtype, "marks")
        nan_scratch = None
        if yb.dtype.kind == "f" and bool(np.isnan(yb).any()):
            nan_scratch = scratch(yb.shape, code_dtype, "nan")
        for code, out_idx, in_idx in self.taps:
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
        np.take(self.lut, best, out=ib, mode="clip")
        ib += self.base
        planes_off = np.arange(lo, lo + len(yb), dtype=np.int64) * plan.in_plane
        ib += planes_off.reshape((-1,) + (1,) * (yb.ndim - 1))
        if self.has_empty:
            np.copyto(ib, -1, where=best == 0)

    def _search(
        self, plan: Any, block: np.ndarray, yb: np.ndarray, ib: np.ndarray, lo: int
    ) -> None:
        geom = self.geom

        def one_pass(src: np.ndarray, axis: int, out: np.ndarray) -> None:
            p = axis_pass(geom.axes[axis], axis, tuple(src.shape[1:]))
            run_passes(src, (p,), np.maximum, plan.ident, plan.dtype, out)

        levels = _first_match.partial_maxima(block, geom, one_pass)
        ib[...] = _first_match.first_match(levels, yb, geom, plan.mult, lo, plan.in_plane,
                                           self.empty)


#: Tap combinations up to which :class:`Indices` marks each one; beyond, the winner is searched.
WINDOW_LOOP_MAX = 4096
