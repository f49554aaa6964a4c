"""The numpy back-end: the passes of :mod:`._passes` as in-place numpy calls, each tap one call over
every output it reaches, on blocks of planes of about :data:`BLOCK_BYTES`; a partial tap with
short runs is one flat call (:func:`apply_flat`), a wide kernel's pass goes by output."""

from __future__ import annotations

from typing import Any

import numpy as np

from ortpool.geometry import AxisGeometry
from ortpool.kernels._buffers import scratch
from ortpool.kernels._passes import AxisPass, FlatTap, at_axis, tap_slices

#: Input bytes per block of planes: its intermediates stay in cache (measured against 256, 512 KB).
BLOCK_BYTES = 1 << 20
#: Blocks of fewer rows than this keep the plain strided call (the seams cost more there).
FLAT_MIN_ROWS = 16


def apply_flat(
    ufunc: np.ufunc, target: np.ndarray, source: np.ndarray, ft: FlatTap, slot: Any
) -> None:
    """``ufunc(target[tap outputs], source[tap inputs])`` in place, as one flat call."""
    rows, inner = target.shape[0] * ft.outer, ft.inner
    t3 = target.reshape(rows, ft.out, inner)
    # The row seams the flat range also covers are saved and restored.
    head, tail = t3[:, : ft.lo], t3[:, ft.hi :]
    saved_head = scratch(head.shape, target.dtype, (slot, "head"))
    saved_tail = scratch(tail.shape, target.dtype, (slot, "tail"))
    np.copyto(saved_head, head)
    np.copyto(saved_tail, tail)
    begin, end = ft.lo * inner, ((rows - 1) * ft.out + ft.hi) * inner
    flat_target = target.reshape(-1)[begin:end]
    last = ft.first + (end - begin - 1) * ft.step
    ufunc(flat_target, source.reshape(-1)[ft.first : last + 1 : ft.step], out=flat_target)
    np.copyto(head, saved_head)
    np.copyto(tail, saved_tail)


def run_passes(
    block: np.ndarray, passes: tuple[AxisPass, ...], ufunc: np.ufunc, fill: Any, dtype: np.dtype,
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
    """The pass over ``axis`` of a wide kernel, in a listed pass's tap order: the interior outputs
    together, each border output alone (whatever ``k`` and pads)."""
    first = g.full_tap()
    if first >= 0:
        np.copyto(dst, src[at_axis(axis, tap_slices(g, first)[1])])
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
    ufunc: np.ufunc, dst: np.ndarray, src: np.ndarray, axis: int, g: AxisGeometry, ja: int,
    jb: int, t0: int, t1: int, slot: Any,
) -> None:
    """Combine taps ``[t0, t1)``, in order, into outputs ``[ja, jb)`` (all inside): tap by tap, or
    for many small taps ``ufunc.accumulate`` over a stack whose row 0 is the current value."""
    m = t1 - t0
    if m <= 0:
        return
    ax = 1 + axis
    o = dst[at_axis(axis, slice(ja, jb))]
    chunk = BLOCK_BYTES // max(1, o.nbytes)
    c0 = g.coordinate(ja, t0)
    if m < 4 or o.nbytes >= ACCUMULATE_BELOW:
        for t in range(m):
            c = c0 + t * g.d
            ufunc(o, src[at_axis(axis, slice(c, c + (jb - ja - 1) * g.s + 1, g.s))], out=o)
        return
    base = src[at_axis(axis, slice(c0, None))]
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
