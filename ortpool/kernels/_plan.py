"""Execution plans: everything about a pooling call that depends only on (shape, attributes).

A plan is built once per input shape, dtype and attributes (a session calls a node with the same
ones every time) and holds the index tuples of every tap that lands inside the input (for a
kernel of at most :data:`TAP_LIST_MAX` candidate taps per axis; wider ones are walked at run time
by :func:`wide_pass`, so a plan never grows with the kernel), the divisor, the index offsets.
Running it is then a short sequence of in-place numpy calls per block of channels:

* the ``N*C`` planes are processed in blocks of about :data:`BLOCK_BYTES`, so the intermediate
  of a separable reduction stays in cache between its passes;
* the last pass of a block writes straight into the output (no copy at the end);
* above :data:`ortpool.kernels._parallel.MIN_PARALLEL_BYTES` the blocks are shared between the
  calling thread and one worker (numpy releases the GIL in its loops).

Each output combines its window's in-input taps one axis at a time, in tap order; the tests
compare the results bit for bit with a loop over every window (tests/reference_loops.py).

When numba is importable, the runners built here call the compiled loops of
:mod:`ortpool.kernels._numba` instead (same taps, same order: bit-identical results);
which calls take them is :func:`ortpool.kernels._backend.compiled`'s choice.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ortpool.geometry import AxisGeometry, PoolGeometry, index_multipliers
from ortpool.kernels import _first_match, _parallel
from ortpool.kernels._backend import compiled
from ortpool.kernels._buffers import output, scratch
from ortpool.kernels._calls import Runner
from ortpool.kernels._common import lowest
from ortpool.kernels._numba_plans import NumbaAveragePlan, NumbaMaxIndicesPlan, NumbaMaxValuesPlan

#: Input bytes per block of planes on one thread: the block and its first intermediate stay
#: in cache between passes (measured: 1 MB slightly ahead of 256 and 512 KB, and of none).
BLOCK_BYTES = 1 << 20


Index = tuple[slice, ...]


def _tap_slices(g: AxisGeometry, t: int) -> tuple[slice, slice] | None:
    """(output slice, input slice) of the outputs whose tap ``t`` lands inside the input."""
    lo, hi = g.tap_range(t)
    if lo >= hi:
        return None
    start = g.coordinate(lo, t)
    return slice(lo, hi), slice(start, start + (hi - lo - 1) * g.s + 1, g.s)


def _at(axis: int, sl: slice) -> Index:
    """Index applying ``sl`` to ``axis`` of a (planes, *spatial) block."""
    return (slice(None),) * (1 + axis) + (sl,)


@dataclasses.dataclass(frozen=True)
class FlatTap:
    """A partial tap done as one flat strided call over the whole contiguous block.

    Along an axis, the outputs ``[lo, hi)`` of a tap form short runs, one per row of the outer
    axes; numpy loops over those rows one by one (Inception's edge tap along W: 5376 rows of 27,
    138 µs where a whole-array add takes 19 µs). When the source row is exactly ``step`` times
    the target row (a stride-1 axis that keeps its size, or the innermost axis with
    ``n == s * out``), the target element ``k`` of the flat block reads the source element
    ``first + step * k``: one call covers every row. The outputs outside ``[lo, hi)`` that the
    flat range also touches (the row seams) are saved before and restored after, so every output
    gets exactly the taps it had, in the same order: bit-identical results.
    """

    lo: int
    hi: int
    #: The target axis length, the product of the axes inside it, and of those outside it.
    out: int
    inner: int
    outer: int
    #: First source element (flat) and the source step per target element.
    first: int
    step: int


def flat_tap(g: AxisGeometry, axis: int, spatial: tuple[int, ...], t: int) -> FlatTap | None:
    """The flat form of tap ``t`` along ``axis`` of a block of ``spatial``, when it exists and
    pays (a partial tap whose runs are short)."""
    sl = _tap_slices(g, t)
    if sl is None:
        return None
    lo, hi = sl[0].start, sl[0].stop
    inner = math.prod(spatial[axis + 1 :])
    if (lo, hi) == (0, g.out) or (hi - lo) * inner > FLAT_MAX_RUN:
        return None
    if inner > 1:
        if g.s != 1 or g.n != g.out:
            return None
        step = 1
    elif g.n == g.s * g.out:
        step = g.s
    else:
        return None
    start = g.coordinate(lo, t)
    return FlatTap(lo, hi, g.out, inner, math.prod(spatial[:axis]), start * inner, step)


#: Runs longer than this many elements are left to numpy's own row loop (its per-row cost is
#: then small against the row's work).
FLAT_MAX_RUN = 512
#: Blocks of fewer rows than this keep the plain strided call (the seams cost more there).
FLAT_MIN_ROWS = 16


def apply_flat(
    ufunc: np.ufunc, target: np.ndarray, source: np.ndarray, ft: FlatTap, slot: Any
) -> None:
    """``ufunc(target[tap outputs], source[tap inputs])`` in place, as one flat call."""
    rows = target.shape[0] * ft.outer
    inner = ft.inner
    t3 = target.reshape(rows, ft.out, inner)
    head = t3[:, : ft.lo]
    tail = t3[:, ft.hi :]
    saved_head = scratch(head.shape, target.dtype, (slot, "head"))
    saved_tail = scratch(tail.shape, target.dtype, (slot, "tail"))
    np.copyto(saved_head, head)
    np.copyto(saved_tail, tail)
    begin = ft.lo * inner
    end = ((rows - 1) * ft.out + ft.hi) * inner
    flat_target = target.reshape(-1)[begin:end]
    last = ft.first + (end - begin - 1) * ft.step
    flat_source = source.reshape(-1)[ft.first : last + 1 : ft.step]
    ufunc(flat_target, flat_source, out=flat_target)
    np.copyto(head, saved_head)
    np.copyto(tail, saved_tail)


@dataclasses.dataclass(frozen=True)
class AxisPass:
    """One separable pass: reduce spatial ``axis`` of a (planes, *spatial) block."""

    axis: int
    out_spatial: tuple[int, ...]
    #: Index of the tap covering every output (copied first), or None: fill with the identity.
    first: Index | None
    #: (output index, input index, flat form or None) of each further tap, in tap order.
    rest: tuple[tuple[Index, Index, FlatTap | None], ...]
    #: The first further tap covers every output too: one binary call starts the pass (the
    #: same sum as copy-then-add, one numpy call fewer).
    pair: bool = False
    #: A pass over more than :data:`TAP_LIST_MAX` candidate taps: nothing listed, the taps are
    #: found at run time by :func:`wide_pass` (the geometry of the axis).
    wide: AxisGeometry | None = None


#: Candidate taps (:meth:`~ortpool.geometry.AxisGeometry.tap_span`) up to which a pass lists
#: its taps, one numpy call each; beyond, :func:`wide_pass` (a plan never grows with the kernel).
TAP_LIST_MAX = 64


def axis_pass(g: AxisGeometry, axis: int, spatial: tuple[int, ...]) -> AxisPass:
    """The pass over ``axis``: the taps that land inside the input, in tap order; the first tap
    that covers every output starts it (the others cover a sub-range of outputs)."""
    out_spatial = (*spatial[:axis], g.out, *spatial[axis + 1 :])
    ta, tb = g.tap_span()
    if tb - ta > TAP_LIST_MAX:
        return AxisPass(axis, out_spatial, None, (), wide=g)
    taps = {t: _tap_slices(g, t) for t in range(ta, tb)}
    full = slice(0, g.out)
    first: int | None = g.full_tap()
    first = None if first < 0 else first
    others = [t for t, sl in taps.items() if sl is not None and t != first]
    rest = tuple(
        (_at(axis, taps[t][0]), _at(axis, taps[t][1]), flat_tap(g, axis, spatial, t))
        for t in others
    )
    if first is None:
        return AxisPass(axis, out_spatial, None, rest)
    pair = bool(others) and taps[others[0]][0] == full
    return AxisPass(axis, out_spatial, _at(axis, taps[first][1]), rest, pair)


def separable_passes(geom: PoolGeometry, order: list[int]) -> tuple[AxisPass, ...]:
    spatial = tuple(g.n for g in geom.axes)
    passes = []
    for axis in order:
        g = geom.axes[axis]
        if g.is_identity:
            continue
        p = axis_pass(g, axis, spatial)
        passes.append(p)
        spatial = p.out_spatial
    return tuple(passes)


def run_passes(
    block: np.ndarray,
    passes: tuple[AxisPass, ...],
    ufunc: np.ufunc,
    fill: Any,
    dtype: np.dtype,
    out: np.ndarray,
) -> None:
    """Reduce ``block`` (planes, *spatial) pass by pass; the last pass writes into ``out``."""
    current = block
    last = len(passes) - 1
    for i, p in enumerate(passes):
        target = out if i == last else scratch((block.shape[0], *p.out_spatial), dtype, i)
        if p.wide is not None:
            wide_pass(ufunc, fill, current, target, p.axis, p.wide, i)
            current = target
            continue
        rest = p.rest
        if p.first is None:
            target.fill(fill)
        elif p.pair:
            ufunc(current[p.first], current[rest[0][1]], out=target)
            rest = rest[1:]
        else:
            np.copyto(target, current[p.first])
        flat_ok = current.flags.c_contiguous and target.flags.c_contiguous
        for o, src, ft in rest:
            if ft is not None and flat_ok and block.shape[0] * ft.outer >= FLAT_MIN_ROWS:
                apply_flat(ufunc, target, current, ft, i)
                continue
            view = target[o]
            ufunc(view, current[src], out=view)
        current = target
    if not passes:
        np.copyto(out, block)


def wide_pass(
    ufunc: np.ufunc, fill: Any, src: np.ndarray, dst: np.ndarray, axis: int, g: AxisGeometry,
    slot: Any,
) -> None:
    """The pass over ``axis`` of a wide kernel: every output gets the same taps in the same
    order as a listed pass gives it (the tap covering every output, then the others ascending),
    but grouped by output instead of by tap, with closed-form ranges: the interior outputs
    (every tap inside) together, each border output on its own. Cost: one call per border
    output and per chunk of taps, whatever ``k`` and the pads (windows of 10**5 taps over a
    long pad are 10**5 border outputs of one tap each)."""
    first = g.full_tap()
    if first >= 0:
        np.copyto(dst, src[_at(axis, _tap_slices(g, first)[1])])
    else:
        dst.fill(fill)
    jl, jh = g.interior()
    if jl < jh:
        for t0, t1 in _without(0, g.k, first):
            _add_taps(ufunc, dst, src, axis, g, jl, jh, t0, t1, slot)
    for js, tlo, thi in g.border_taps(1 << 16):
        for j, a, b in zip(js.tolist(), tlo.tolist(), thi.tolist(), strict=True):
            for t0, t1 in _without(a, b, first):
                _add_taps(ufunc, dst, src, axis, g, j, j + 1, t0, t1, slot)


#: Output bytes per tap below which :func:`_add_taps` accumulates chunks of taps.
ACCUMULATE_BELOW = 4096


def _without(lo: int, hi: int, first: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` without tap ``first`` (already in every output), as ascending runs."""
    if lo <= first < hi:
        return [(lo, first), (first + 1, hi)]
    return [(lo, hi)]


def _add_taps(
    ufunc: np.ufunc, dst: np.ndarray, src: np.ndarray, axis: int, g: AxisGeometry,
    ja: int, jb: int, t0: int, t1: int, slot: Any,
) -> None:
    """Combine taps ``[t0, t1)``, in order, into outputs ``[ja, jb)`` (every one of those taps
    inside for every one of those outputs).

    Tap by tap when there are few taps or each tap's call has work enough (from
    :data:`ACCUMULATE_BELOW` bytes of outputs the call's own cost is small beside it: a 1-D
    k=400 s=160 pass over 10**6 inputs ran in 21 ms tap by tap, 61 ms accumulated); otherwise
    chunks of taps go through ``ufunc.accumulate`` over a (taps + 1, ...) stack whose row 0 is
    the current value: accumulate combines strictly in order (row by row), so each output gets
    the very same sequence of binary operations as tap by tap, bit for bit, in one call per
    chunk (a window of 10**6 taps over one output: 4 calls instead of 10**6)."""
    m = t1 - t0
    if m <= 0:
        return
    ax = 1 + axis
    o = dst[_at(axis, slice(ja, jb))]
    chunk = BLOCK_BYTES // max(1, o.nbytes)
    c0 = g.coordinate(ja, t0)
    if m < 4 or o.nbytes >= ACCUMULATE_BELOW:
        for t in range(m):
            c = c0 + t * g.d
            ufunc(o, src[_at(axis, slice(c, c + (jb - ja - 1) * g.s + 1, g.s))], out=o)
        return
    base = src[_at(axis, slice(c0, None))]
    strides = (g.d * src.strides[ax], *src.strides[:ax], g.s * src.strides[ax],
               *src.strides[ax + 1 :])
    taps = np.lib.stride_tricks.as_strided(base, (m, *o.shape), strides, writeable=False)
    for a in range(0, m, chunk):
        b = min(m, a + chunk)
        stack = scratch((b - a + 1, *o.shape), dst.dtype, (slot, "wide"))
        np.copyto(stack[0], o)
        np.copyto(stack[1:], taps[a:b])
        ufunc.accumulate(stack, axis=0, out=stack)
        np.copyto(o, stack[-1])


def blocks(planes: int, plane_bytes: int) -> list[tuple[int, int]]:
    """[lo, hi) ranges of planes of about BLOCK_BYTES each (at least one plane)."""
    per = max(1, BLOCK_BYTES // max(1, plane_bytes))
    return [(lo, min(lo + per, planes)) for lo in range(0, planes, per)]


def for_blocks(
    ranges: list[tuple[int, int]], work: Callable[[int, int], None], nbytes: int
) -> None:
    """Run ``work(lo, hi)`` over the planes of ``ranges``: block by block on this thread, or one
    share per thread when the call is big enough."""
    _parallel.split(ranges[-1][1] if ranges else 0, ranges, work, nbytes)


class _SeparablePlan:
    """What a separable reduction of ``shape`` needs: its passes, blocks and output shape."""

    def __init__(
        self, geom: PoolGeometry, shape: tuple[int, ...], dtype: np.dtype, order: list[int]
    ):
        self.planes = shape[0] * shape[1]
        self.out_shape = (shape[0], shape[1], *geom.output_spatial)
        self.dtype = dtype
        self.passes = separable_passes(geom, order)
        self.ranges = blocks(self.planes, math.prod(shape[2:]) * dtype.itemsize)
        self.nbytes = math.prod(shape) * dtype.itemsize


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
    (RULINGS.md 6, 7); an output whose window holds no input keeps index -1.
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
            slices = [_tap_slices(g, t) for g, t in zip(geom.axes, tap, strict=True)]
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


def inside_taps(g: AxisGeometry) -> list[int]:
    """The taps inside the input for some output, ascending: from the :meth:`tap_span` when it
    is short, else from the :meth:`tap_runs` (never a loop over all ``k``)."""
    ta, tb = g.tap_span()
    if tb - ta <= TAP_LIST_MAX:
        return [t for t in range(ta, tb) if _tap_slices(g, t) is not None]
    return [t for lo, hi in g.tap_runs() for t in range(lo, hi)]


def max_axis_order(geom: PoolGeometry) -> list[int]:
    """Reduce the axis that shrinks the data most first; on a tie the outer axis, whose taps are
    whole contiguous rows (faster than the strided inner axis on the larger data)."""
    return sorted(
        range(len(geom.axes)), key=lambda i: (geom.axes[i].out / max(1, geom.axes[i].n), i)
    )


def held_bytes(plan: Any) -> int:
    """Bytes of the arrays and tables a plan keeps (for the bound of :mod:`._calls`): its
    ndarrays, a plan inside it, and about 256 bytes per entry of a tuple, list or dict (a tap
    with its slices)."""
    total = 0
    for value in vars(plan).values():
        if isinstance(value, np.ndarray):
            total += value.nbytes
        elif isinstance(value, tuple | list | dict):
            total += 256 * len(value)
        elif isinstance(value, _SeparablePlan | MaxIndicesPlan):
            total += held_bytes(value)
    return total


def max_pool_runner(
    geom: PoolGeometry,
    shape: tuple[int, ...],
    dtype: np.dtype,
    wide: np.dtype | None,
    return_indices: bool,
    storage_order: int,
) -> tuple[Runner, int]:
    """(x -> Y, or x -> (Y, Indices); the bytes its plan holds); ``wide`` is the compute dtype
    of float16/bfloat16."""
    work_dtype = wide if wide is not None else dtype
    order = max_axis_order(geom)
    nbytes = math.prod(shape) * work_dtype.itemsize
    if return_indices:
        if len(geom.axes) <= 3 and compiled("max_indices", work_dtype, nbytes):
            plan: Any = NumbaMaxIndicesPlan(geom, shape, work_dtype, storage_order)
        else:
            plan = MaxIndicesPlan(geom, shape, work_dtype, storage_order, order)
        if wide is None:
            return plan.run, held_bytes(plan)

        def run_wide_indices(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            y, indices = plan.run(x.astype(wide))
            return y.astype(dtype), indices

        return run_wide_indices, held_bytes(plan)
    numba = compiled("max_planes", work_dtype, nbytes)
    values: Any = (NumbaMaxValuesPlan if numba else MaxValuesPlan)(geom, shape, work_dtype, order)
    if wide is None:
        return values.values, held_bytes(values)
    return lambda x: values.values(x.astype(wide)).astype(dtype), held_bytes(values)


def average_pool_runner(
    geom: PoolGeometry, shape: tuple[int, ...], dtype: np.dtype, acc: np.dtype, divisor: np.ndarray
) -> tuple[Runner, int]:
    """(x -> Y; the bytes its plan holds)."""
    numba = compiled("average_planes", acc, math.prod(shape) * acc.itemsize)
    plan: Any = (NumbaAveragePlan if numba else AveragePlan)(geom, shape, acc, divisor)
    if dtype == acc:
        return plan.average, held_bytes(plan)
    return lambda x: plan.average(x).astype(dtype), held_bytes(plan)
