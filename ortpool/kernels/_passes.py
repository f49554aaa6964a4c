"""The separable passes of a pooling call, from the geometry alone: each output combines its
window's in-input taps one axis at a time, first the tap that covers every output (else the
identity), then the others ascending. The one order in two forms: :class:`AxisPass` (numpy, each
tap's slices listed up to :data:`TAP_LIST_MAX` candidate taps) and :func:`pass_rows` (compiled,
one int64 row per pass, border taps in closed form): a plan never grows with the kernel."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator

import numpy as np

from ortpool.geometry import AxisGeometry, PoolGeometry

Index = tuple[slice, ...]


def tap_slices(g: AxisGeometry, t: int) -> tuple[slice, slice] | None:
    """(output slice, input slice) of the outputs whose tap ``t`` lands inside the input."""
    lo, hi = g.tap_range(t)
    if lo >= hi:
        return None
    start = g.coordinate(lo, t)
    return slice(lo, hi), slice(start, start + (hi - lo - 1) * g.s + 1, g.s)


def at_axis(axis: int, sl: slice) -> Index:
    """Index applying ``sl`` to ``axis`` of a (planes, *spatial) block."""
    return (slice(None),) * (1 + axis) + (sl,)


@dataclasses.dataclass(frozen=True)
class FlatTap:
    """A partial tap as one flat strided call over the contiguous block (numpy's loop over its
    short runs is 7x slower): target ``k`` reads source ``first + step * k``; the seams restored."""

    lo: int
    hi: int
    #: The target axis length, the product of the axes inside it, and of those outside it.
    out: int
    inner: int
    outer: int
    first: int
    step: int


def flat_tap(g: AxisGeometry, axis: int, spatial: tuple[int, ...], t: int) -> FlatTap | None:
    """The flat form of tap ``t`` along ``axis`` of a ``spatial`` block, when it pays."""
    sl = tap_slices(g, t)
    if sl is None:
        return None
    lo, hi = sl[0].start, sl[0].stop
    inner = math.prod(spatial[axis + 1 :])
    if (lo, hi) == (0, g.out) or (hi - lo) * inner > FLAT_MAX_RUN:
        return None
    if inner > 1 and g.s == 1 and g.n == g.out:
        step = 1
    elif inner <= 1 and g.n == g.s * g.out:
        step = g.s
    else:
        return None
    start = g.coordinate(lo, t)
    return FlatTap(lo, hi, g.out, inner, math.prod(spatial[:axis]), start * inner, step)


#: Runs longer than this are left to numpy's row loop (its per-row cost then small).
FLAT_MAX_RUN = 512


@dataclasses.dataclass(frozen=True)
class AxisPass:
    """One separable pass: reduce spatial ``axis`` of a (planes, *spatial) block."""

    axis: int
    out_spatial: tuple[int, ...]
    #: Index of the tap covering every output (copied first), or None: fill with the identity.
    first: Index | None
    #: (output index, input index, flat form or None) of each further tap, in tap order.
    rest: tuple[tuple[Index, Index, FlatTap | None], ...]
    #: The first further tap covers every output too: one binary call starts the pass.
    pair: bool = False
    #: Past :data:`TAP_LIST_MAX` candidate taps, nothing listed: the axis for ``wide_pass``.
    wide: AxisGeometry | None = None


#: Candidate taps (``tap_span``) up to which a pass lists its taps, one numpy call each.
TAP_LIST_MAX = 64


def axis_pass(g: AxisGeometry, axis: int, spatial: tuple[int, ...]) -> AxisPass:
    """The pass over ``axis``: its in-input taps in order, the one covering every output first."""
    out_spatial = (*spatial[:axis], g.out, *spatial[axis + 1 :])
    ta, tb = g.tap_span()
    if tb - ta > TAP_LIST_MAX:
        return AxisPass(axis, out_spatial, None, (), wide=g)
    taps = {t: tap_slices(g, t) for t in range(ta, tb)}
    first = g.full_tap()  # -1: none
    others = [t for t, sl in taps.items() if sl is not None and t != first]
    rest = tuple(
        (at_axis(axis, taps[t][0]), at_axis(axis, taps[t][1]), flat_tap(g, axis, spatial, t))
        for t in others
    )
    if first < 0:
        return AxisPass(axis, out_spatial, None, rest)
    pair = bool(others) and taps[others[0]][0] == slice(0, g.out)
    return AxisPass(axis, out_spatial, at_axis(axis, taps[first][1]), rest, pair)


def _active(geom: PoolGeometry, order: list[int]) -> Iterator[tuple[int, AxisGeometry, tuple]]:
    """(axis, geometry, spatial shape before its pass) of every non-identity axis of ``order``."""
    spatial = [g.n for g in geom.axes]
    for axis in order:
        g = geom.axes[axis]
        if not g.is_identity:
            yield axis, g, tuple(spatial)
            spatial[axis] = g.out


def separable_passes(geom: PoolGeometry, order: list[int]) -> tuple[AxisPass, ...]:
    return tuple(axis_pass(g, axis, spatial) for axis, g, spatial in _active(geom, order))


def inside_taps(g: AxisGeometry) -> list[int]:
    """The taps inside the input for some output, ascending, never a loop over all ``k``."""
    ta, tb = g.tap_span()
    if tb - ta <= TAP_LIST_MAX:
        return [t for t in range(ta, tb) if tap_slices(g, t) is not None]
    return [t for lo, hi in g.tap_runs() for t in range(lo, hi)]


def max_axis_order(geom: PoolGeometry) -> list[int]:
    """The axis that shrinks the data most first; on a tie the outer one (whole contiguous rows)."""
    return sorted(range(len(geom.axes)),
                  key=lambda i: (geom.axes[i].out / max(1, geom.axes[i].n), i))


# The columns of a pass row of :func:`pass_rows`, read by the compiled loops (:mod:`._numba`):
# n, out, outer, inner, stride, dilation, begin pad, first tap, k, interior begin, interior end.
N, OUT, OUTER, INNER, S, D, PB, FIRST, K, JL, JH = range(11)


def pass_rows(geom: PoolGeometry, order: list[int]) -> np.ndarray:
    """The separable passes for the compiled loops: one int64 row per pass (the columns
    :data:`N` ... :data:`JH`) over a plane viewed as (outer, n, inner); first tap -1 if none."""
    rows = [
        [g.n, g.out, math.prod(spatial[:axis]), math.prod(spatial[axis + 1 :]), g.s, g.d, g.pb,
         g.full_tap(), g.k, *g.interior()]
        for axis, g, spatial in _active(geom, order)
    ]
    return np.array(rows, np.int64).reshape(len(rows), 11)
