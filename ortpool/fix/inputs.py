"""The inputs a realization is proven on, and the spec's answer for each (ortpool's kernels).

Per node: the inputs captured from a run of the model (when it runs), plus seeded sets made to
find differences: quarter steps (ties everywhere, exact sums), every element the type's lowest
value (padding and input tie), for global averages and norms a plane of uniform [0, 1) values,
and for a float type the cases RULINGS.md 18 names, *built* (:func:`constructed_sets`), not
sprinkled: NaN at every tap position of every window, +inf likewise, windows of -inf only, of
NaN only, of one value (ties), for the sums +inf and -inf in one window. MaxUnpool gets Indices a
MaxPool of the same geometry really produces (duplicates included) and distinct random ones;
MaxRoiPool a RoI over the whole map per batch entry and five inside and across it.

The seed changes only the fill (the values around the built cases), never which cases are
built: a verdict on these sets does not depend on ``--seed``.

The expected outputs come from ortpool's kernels with the node's own spec version and attributes
(:func:`ortpool.validate.isolate.run_ortpool_numpy`), computed once per input set.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from ortpool import dtypes, kernels
from ortpool.attributes import PoolAttrs
from ortpool.errors import OrtpoolError
from ortpool.fix.forms import FLOATS, MAX_LIKE, NodeFacts, lowest
from ortpool.fix.sites import Site
from ortpool.geometry import effective_kernel
from ortpool.model.inputs import random_tensor
from ortpool.model.singlenode import NodeSpec
from ortpool.tolerances import GLOBAL_SUMS
from ortpool.validate import isolate

#: the label of an input set captured from a run of the model
CAPTURED = "captured from the model's run"

#: N and C of generated inputs where the model leaves them symbolic (Indices count N*C planes)
BATCH, CHANNELS = 2, 3


@dataclasses.dataclass
class FeedSet:
    """One input set: its label (for the report), the arrays, the spec's outputs; for a built
    set, the case each (n, c) plane of X holds (the others hold the fill)."""

    label: str
    arrays: list[np.ndarray]
    expected: list[np.ndarray] | None = None
    cases: dict[tuple[int, int], str] = dataclasses.field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.arrays[0].shape)

    def case_at(self, at: Sequence[int] | None) -> str:
        """The built case of the plane holding output cell ``at`` (N, C first), or ""."""
        if not at or len(at) < 2:
            return ""
        return self.cases.get((int(at[0]), int(at[1])), "")


def full_shape(facts: NodeFacts, dims: Sequence[int | None] | None) -> tuple[int, ...] | None:
    """X's shape with symbolic N/C sized as :data:`BATCH`/:data:`CHANNELS`; None when a spatial
    size is symbolic."""
    if facts.spatial is None:
        return None
    n = dims[0] if dims and isinstance(dims[0], int) else BATCH
    c = dims[1] if dims and len(dims) > 1 and isinstance(dims[1], int) else CHANNELS
    return (n, c, *facts.spatial)


def sampled_shapes(facts: NodeFacts) -> list[tuple[int, ...]]:
    """Input shapes for a node whose spatial sizes are symbolic: per axis every size from the
    smallest the geometry admits through two strides more (every remainder mod the stride, so
    SAME's pads and ceil mode's overhang take all their values), plus one larger size; for a
    global pool or MaxRoiPool sizes 1 to 5 and 12 (an empty plane only where the model has one).

    Example: k=3, s=2, no pads: sizes 3, 4, 5, 6, 7 and 12 on every axis (the axes together).
    """
    attrs = facts.attrs
    rank = facts.spatial_rank
    if rank is None:
        return []
    if not isinstance(attrs, PoolAttrs):
        smallest, steps = [1] * rank, 5
    else:
        if facts.op == "MaxUnpool":
            smallest = [1] * rank
        else:
            smallest = []
            for i in range(rank):
                ek = effective_kernel(attrs.kernel_shape[i], attrs.dilations[i])
                pads = 0 if attrs.auto_pad != "NOTSET" else attrs.pads[i] + attrs.pads[i + rank]
                smallest.append(max(1, ek - pads))
        steps = 2 * max(attrs.strides) + 1
    shapes = [tuple(m + t for m in smallest) for t in range(steps)]
    shapes.append(tuple(m + steps + 4 for m in smallest))
    return [(BATCH, CHANNELS, *s) for s in shapes]


def _fill(rng: np.random.Generator, shape: Sequence[int], elem: str, op: str) -> np.ndarray:
    """Finite values of ``elem`` around the built cases (the only thing the seed changes)."""
    np_dtype = dtypes.NUMPY[elem]
    if elem not in FLOATS:
        info = np.iinfo(np_dtype)
        return rng.integers(info.min, int(info.max) + 1, size=tuple(shape)).astype(np_dtype)
    if op in ("AveragePool", "GlobalAveragePool"):
        # Multiples of 4 up to about +-100: every sum is exact, so only the division rounds
        # and the average tolerance means what it says (as in the validator).
        return (random_tensor(rng, shape, "double") * 16).astype(np_dtype)
    return rng.normal(0.0, 100.0, size=tuple(shape)).astype(np_dtype)


def _values(rng: np.random.Generator, shape: Sequence[int], elem: str, kind: str,
            op: str) -> np.ndarray:
    np_dtype = dtypes.NUMPY[elem]
    if kind == "ties":
        return random_tensor(rng, shape, elem)
    if kind == "lowest":
        return np.full(tuple(shape), lowest(elem), dtype=np_dtype)
    if kind == "uniform":  # a plane of [0, 1): where a running sum in the type loses digits
        return rng.random(tuple(shape)).astype(np_dtype)
    return _fill(rng, shape, elem, op)  # "extremes": the integer type's whole range


#: Tap positions given their own case, at most (per case kind); beyond, per axis the first,
#: second, middle, second-to-last and last position of the window (first, inner, last kept).
MAX_OFFSETS = 64
#: The built sets of one node hold at most about this many elements; beyond, fewer positions.
MAX_ELEMENTS = 1 << 23
#: Case kinds that hold NaN or -inf: left out for a max-like op with ``nonfinite`` off.
_NONFINITE_BASES = ("-inf", "NaN")


@dataclasses.dataclass(frozen=True)
class Case:
    """One built plane: ``base`` everywhere ("fill", "one value", or "NaN"/"+inf"/"-inf"), then
    ``marks``: per lattice offset a value ("fill": the fill's own value there)."""

    label: str
    base: str
    marks: tuple[tuple[tuple[int, ...], str], ...] = ()

    @property
    def nonfinite(self) -> bool:
        return self.base in _NONFINITE_BASES or any(v in _NONFINITE_BASES for _, v in self.marks)


def spans(facts: NodeFacts, spatial: Sequence[int]) -> tuple[int, ...]:
    """Per axis the lattice spacing of the built cases: positions ``span`` apart on an axis are
    never taps of one window, so one case per lattice offset puts one mark in every window, at
    each of its tap positions over the offsets. A windowed pool's span is its dilated kernel
    span ``ek`` (two taps of a window are at most ``ek - 1`` apart); a global pool's or
    MaxRoiPool's is the plane (a window or bin can be all of it).

    Example: MaxPool k=[2, 3], n=[7, 8]: spans (2, 3), six offsets; the offset (0, 1) marks
    rows 0, 2, 4, 6 x columns 1, 4, 7: every window holds exactly one of them, at its
    tap (0, 1) for windows starting on even rows and columns 0, 3, 6.
    """
    attrs = facts.attrs
    if facts.op in ("MaxPool", "AveragePool", "LpPool") and isinstance(attrs, PoolAttrs):
        return tuple(
            min(n, effective_kernel(k, d))
            for n, k, d in zip(spatial, attrs.kernel_shape, attrs.dilations, strict=True)
        )
    return tuple(spatial)


def _offsets(span: Sequence[int], keep: int) -> list[tuple[int, ...]]:
    """Every lattice offset, or per axis ``keep`` of first, last, middle, second, second-last."""
    if math.prod(span) <= MAX_OFFSETS and keep >= 5:
        return list(itertools.product(*(range(s) for s in span)))
    picks = []
    for s in span:
        chosen = [0, s - 1, s // 2, 1, s - 2][:keep]
        picks.append(sorted({p for p in chosen if 0 <= p < s}))
    return list(itertools.product(*picks))


def _partner(facts: NodeFacts, offset: tuple[int, ...], span: Sequence[int]) -> tuple | None:
    """An offset one dilation step from ``offset`` on the last axis whose window spans it: the
    two lattices then meet in windows (a sum's +inf and -inf in one window)."""
    attrs = facts.attrs
    dilations = attrs.dilations if isinstance(attrs, PoolAttrs) else (1,) * len(span)
    for axis in reversed(range(len(span))):
        step = dilations[axis] if axis < len(dilations) else 1
        if span[axis] > step:
            moved = list(offset)
            moved[axis] = (moved[axis] + step) % span[axis]
            return tuple(moved)
    return None


def cases(facts: NodeFacts, span: Sequence[int], nonfinite: bool, keep: int = 5) -> list[Case]:
    """The cases RULINGS.md 18 names for ``facts`` (a float type), in a fixed order.

    Max-like ops: per offset NaN at that tap over the fill, +inf likewise, NaN among -inf, one
    value among -inf (the max is then that tap: its index); planes of -inf only, NaN only (the
    first NaN's index), +inf only, one value (ties: the first tap's index). With ``nonfinite``
    off, the cases holding NaN or -inf are left out. Averages and norms: per offset NaN, and
    +inf with -inf at the partner offset (NaN where a window holds both); planes of +inf, -inf.
    Partly padded and empty windows are the geometry's own: every case reaches every window.
    """
    found: list[Case] = []
    offsets = _offsets(span, keep)
    if facts.op in MAX_LIKE:
        found += [Case(f"NaN at tap {o}", "fill", ((o, "NaN"),)) for o in offsets]
        found += [Case(f"+inf at tap {o}", "fill", ((o, "+inf"),)) for o in offsets]
        found += [Case(f"NaN at tap {o} among -inf", "-inf", ((o, "NaN"),)) for o in offsets]
        found += [Case(f"one value at tap {o} among -inf", "-inf", ((o, "fill"),))
                  for o in offsets]
        found += [Case("-inf only", "-inf"), Case("NaN only", "NaN"), Case("+inf only", "+inf"),
                  Case("one value (ties)", "one value")]
        if not nonfinite:
            found = [c for c in found if not c.nonfinite]
        return found
    found += [Case(f"NaN at tap {o}", "fill", ((o, "NaN"),)) for o in offsets]
    for o in offsets:
        partner = _partner(facts, o, span)
        marks = ((o, "+inf"),) + (((partner, "-inf"),) if partner is not None else ())
        pair = f", -inf at {partner}" if partner is not None else " (a window of one tap)"
        found.append(Case(f"+inf at tap {o}{pair}", "fill", marks))
    found += [Case("+inf only", "+inf"), Case("-inf only", "-inf")]
    return found


_CONSTANTS = {"NaN": np.nan, "+inf": np.inf, "-inf": -np.inf}


def _plane(case: Case, fill: np.ndarray, span: Sequence[int]) -> np.ndarray:
    if case.base == "fill":
        plane = fill.copy()
    elif case.base == "one value":
        plane = np.full_like(fill, fill.reshape(-1)[0])
    else:
        plane = np.full_like(fill, _CONSTANTS[case.base])
    for offset, value in case.marks:
        mask = np.ones(fill.shape, bool)
        for axis, (o, s) in enumerate(zip(offset, span, strict=True)):
            along = np.arange(fill.shape[axis]) % s == o
            mask &= along.reshape((-1,) + (1,) * (fill.ndim - 1 - axis))
        plane[mask] = fill[mask] if value == "fill" else _CONSTANTS[value]
    return plane


def constructed_sets(
    facts: NodeFacts, shape: Sequence[int], rng: np.random.Generator, nonfinite: bool = True,
    extra: Sequence[np.ndarray] = (),
) -> list[FeedSet]:
    """X tensors of ``shape`` holding the built :func:`cases` of a float ``facts``, one case per
    (n, c) plane, as many tensors as the cases need; planes left over and the values around
    the marks are the seeded fill. ``extra``: the node's other inputs, the same for each set.
    Which plane holds which case never depends on ``rng``.
    """
    if facts.elem not in FLOATS or len(shape) < 3 or 0 in shape:
        return []
    span = spans(facts, shape[2:])
    planes = shape[0] * shape[1]
    for keep in (5, 3, 2, 1):
        built = cases(facts, span, nonfinite, keep)
        if math.ceil(len(built) / planes) * math.prod(shape) <= MAX_ELEMENTS:
            break
    else:
        # Even one position per axis is over the budget (a huge plane, few planes): as many
        # tensors as fit, at least one, the cases in their order (NaN first, then +inf).
        tensors = max(1, MAX_ELEMENTS // math.prod(shape))
        built = built[: tensors * planes]
    sets = []
    count = math.ceil(len(built) / planes)
    for number in range(count):
        chunk = built[number * planes:(number + 1) * planes]
        x = _fill(rng, shape, facts.elem, facts.op)
        held = {}
        for index, case in enumerate(chunk):
            n, c = divmod(index, shape[1])
            x[n, c] = _plane(case, x[n, c], span)
            held[(n, c)] = case.label
        held_text = chunk[0].label if len(chunk) == 1 else f"{chunk[0].label} ... {chunk[-1].label}"
        label = f"built cases {number + 1}/{count} ({held_text})"
        sets.append(FeedSet(label, [x, *extra], cases=held))
    return sets


def _unpool_sets(
    facts: NodeFacts,
    rng: np.random.Generator,
    shape: tuple[int, ...],
    output_shape: np.ndarray | None,
) -> list[FeedSet]:
    """X values with Indices a MaxPool of the same geometry gives, and distinct random ones."""
    attrs = facts.attrs
    default = [
        (n - 1) * s - attrs.pads[i] - attrs.pads[i + attrs.rank] + k
        for i, (n, k, s) in enumerate(zip(shape[2:], attrs.kernel_shape, attrs.strides,
                                          strict=True))
    ]
    target = [*shape[:2], *default] if output_shape is None else [int(v) for v in output_shape]
    size = math.prod(target)
    extra = [np.asarray(target, np.int64)] if facts.n_inputs > 2 else []
    sets = []
    x = random_tensor(rng, shape, facts.elem)
    if all(p < k for p, k in zip(attrs.pads, attrs.kernel_shape * 2, strict=True)) and all(
        d >= 1 for d in default
    ):
        source = random_tensor(rng, [*shape[:2], *default], "float")
        _, indices = kernels.max_pool(
            source,
            version=12,
            return_indices=True,
            kernel_shape=list(attrs.kernel_shape),
            strides=list(attrs.strides),
            pads=list(attrs.pads),
        )
        if indices.shape == x.shape and (indices >= 0).all() and (indices < size).all():
            sets.append(FeedSet("MaxPool's Indices", [x, indices.astype(np.int64), *extra]))
    if size >= x.size:
        unique = rng.permutation(size)[: x.size].reshape(x.shape).astype(np.int64)
        sets.append(FeedSet("distinct random Indices", [x, unique, *extra]))
    if sets and facts.elem in FLOATS and x.size:
        # NaN, +inf and -inf are moved as they are (bit for bit), at fixed places
        odd = x.copy().reshape(-1)
        for place, value in zip((0, odd.size // 2, odd.size - 1), (np.nan, np.inf, -np.inf),
                                strict=True):
            odd[place] = value
        sets.append(FeedSet("NaN, +inf, -inf values", [odd.reshape(x.shape), *sets[0].arrays[1:]]))
    return sets


def _rois(rng: np.random.Generator, shape: Sequence[int], elem: str, scale: float) -> np.ndarray:
    """RoIs for X of ``shape`` (MaxRoiPool): one over the whole map per batch entry (its bins
    hold every position, so every built case reaches a bin), then five with corners inside the
    map and across its borders (in RoI coordinates: the map divided by ``spatial_scale``), on
    quarter steps so rounding has halves to decide; one with x2 < x1 (a 1x1 RoI)."""
    height, width = shape[2] / (scale or 1.0), shape[3] / (scale or 1.0)
    whole = [[n, 0.0, 0.0, width - 1 / (scale or 1.0), height - 1 / (scale or 1.0)]
             for n in range(shape[0])]
    low = rng.integers(-4, 4 * np.array([width, height]).astype(int) + 4, (5, 2)) / 4
    size = rng.integers(0, 4 * np.array([width, height]).astype(int) // 2 + 1, (5, 2)) / 4
    corners = np.concatenate([low, low + size], axis=1)
    corners[0, 2:] = corners[0, :2] - 1
    batch = rng.integers(0, shape[0], (5, 1))
    drawn = np.concatenate([batch, corners], axis=1)
    return np.concatenate([np.asarray(whole).reshape(-1, 5), drawn]).astype(dtypes.NUMPY[elem])


def proof_sets(
    facts: NodeFacts,
    shapes: Sequence[tuple[int, ...]],
    captured: Sequence[Sequence[np.ndarray]] = (),
    seed: int = 0,
    nonfinite: bool = True,
    output_shape: np.ndarray | None = None,
) -> list[FeedSet]:
    """Every input set for ``facts`` on ``shapes`` (X shapes), the captured ones first.

    A float type gets the built cases (:func:`constructed_sets`), NaN and -inf included for
    every operator unless ``nonfinite`` is off: then a max-like op (MaxPool, GlobalMaxPool,
    MaxRoiPool) is proven without them (and without the all-lowest set), the user's assumption
    of finite inputs (the report says so). Averages and norms always get them, and a global one
    also a plane of uniform [0, 1) values, where a running float32 sum loses digits
    (RULINGS.md 13). MaxRoiPool's generated RoIs do not depend on ``seed``.
    """
    sets = [FeedSet(CAPTURED, list(a)) for a in captured]
    strict = nonfinite or facts.op not in MAX_LIKE or facts.elem not in FLOATS
    kinds = ["ties"] + ["extremes"] * (facts.elem not in FLOATS) + ["lowest"] * strict
    if facts.op in GLOBAL_SUMS and facts.elem in FLOATS:
        kinds.append("uniform")
    for number, shape in enumerate(shapes):
        rng = np.random.default_rng([seed, number])
        if facts.op == "MaxUnpool":
            sets += _unpool_sets(facts, rng, tuple(shape), output_shape)
            continue
        extra = []
        if facts.op == "MaxRoiPool":
            # fixed, not seeded: which bins the built cases reach must not depend on the seed
            extra = [_rois(np.random.default_rng([0, number]), shape, facts.elem,
                           getattr(facts.attrs, "spatial_scale", 1.0))]
        for kind in kinds:
            # The uniform plane decides a sum's accuracy, a verdict: not seeded either.
            source = np.random.default_rng([0, number]) if kind == "uniform" else rng
            x = _values(source, shape, facts.elem, kind, facts.op)
            sets.append(FeedSet(kind, [x, *extra]))
        sets += constructed_sets(facts, shape, rng, nonfinite=strict, extra=extra)
    return sets


def node_spec(facts: NodeFacts) -> NodeSpec:
    """The node as the validator's isolation describes it: its attributes, at the opset that
    introduced its spec version (which resolves to that version, pinned or not)."""
    return NodeSpec(facts.op, facts.version, dict(facts.attributes), facts.n_inputs,
                    facts.n_outputs)


def expect(
    spec: NodeSpec, sets: Sequence[FeedSet], refusals: list[str] | None = None
) -> list[FeedSet]:
    """Fill in the spec's outputs; a set the spec itself refuses (a size the geometry cannot
    pool, an output over the kernels' limits) is dropped, and why is appended to ``refusals``."""
    kept = []
    for feed in sets:
        if feed.expected is None:
            try:
                feed.expected = isolate.run_ortpool_numpy(spec, feed.arrays)
            except (OrtpoolError, ValueError) as err:
                if refusals is not None:
                    detail = err.detail if isinstance(err, OrtpoolError) else str(err)
                    refusals.append(f"X {list(feed.shape)}: {detail}")
                continue
        kept.append(feed)
    return kept


def site_sets(
    site: Site,
    captured: Sequence[Mapping[str, np.ndarray]],
    seed: int = 0,
    nonfinite: bool = True,
) -> tuple[list[FeedSet], list[str]]:
    """A node's input sets with the spec's outputs, the model's ``captured`` runs first, and
    why the kernels refused the others: its static shape, or sampled shapes when its sizes are
    symbolic (:func:`proof_sets`)."""
    facts = site.facts
    if facts is None:
        raise ValueError(f"site {site.name!r} has no facts: {site.reason}")
    mine = []
    for run in captured:
        arrays = [run.get(name) for name in site.node.input if name]
        if all(a is not None for a in arrays):
            mine.append(arrays)
    shape = full_shape(facts, site.x_dims)
    shapes = [shape] if shape is not None else sampled_shapes(facts)
    if shape is not None:
        # The forms of static spatial sizes hold at those sizes, for any batch and channels: the
        # model's own run is kept at whatever N and C the user's inputs give.
        mine = [a for a in mine if tuple(a[0].shape[2:]) == shape[2:]]
    sets = proof_sets(
        facts,
        shapes,
        captured=mine,
        seed=seed,
        nonfinite=nonfinite,
        output_shape=site.output_shape,
    )
    refusals: list[str] = []
    return expect(node_spec(facts), sets, refusals), refusals
