"""The inputs a node is judged on, the same for every command, and the spec's answer for each
(docs/fix.md, "The proof", lists them): the captured ones, then sets of the node's shape, for a
float type the cases ruling 18 names *built* (:func:`cases`) in the domain of ruling 20. The
seed changes only the fill around the built cases, never which are built, nor a verdict.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence

import ml_dtypes
import numpy as np

from ortpool import dtypes, kernels
from ortpool.attributes import PoolAttrs
from ortpool.check.domain import NONFINITE_VALUES
from ortpool.dtypes import FLOATS
from ortpool.errors import OrtpoolError
from ortpool.geometry import effective_kernel
from ortpool.kernels import check_array
from ortpool.model.inputs import random_tensor
from ortpool.model.site import MAX_LIKE, Site
from ortpool.tolerances import GLOBAL_SUMS

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
    #: the model's own input (or a conformance case's), not one built to reach a case: a cell
    #: the spec leaves to a ruling and an Index tie are counted apart there, not as differences
    observed: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.arrays[0].shape)

    def case_at(self, at: Sequence[int] | None) -> str:
        """The built case of the plane holding output cell ``at`` (N, C first), or ""."""
        if not at or len(at) < 2:
            return ""
        return self.cases.get((int(at[0]), int(at[1])), "")


def lowest(elem: str) -> float | int:
    """The value that never wins a max and is the empty window's result (rulings 5, 6)."""
    if elem in FLOATS:
        return -math.inf
    return int(np.iinfo(np.dtype(elem)).min)


def full_shape(site: Site) -> tuple[int, ...] | None:
    """X's shape with symbolic N/C sized as :data:`BATCH`/:data:`CHANNELS`; None when a spatial
    size is symbolic."""
    if site.spatial is None:
        return None
    dims = site.x_dims
    n = dims[0] if dims and isinstance(dims[0], int) else BATCH
    c = dims[1] if dims and len(dims) > 1 and isinstance(dims[1], int) else CHANNELS
    return (n, c, *site.spatial)


def sampled_shapes(site: Site) -> list[tuple[int, ...]]:
    """Input shapes for symbolic spatial sizes: per axis the smallest the geometry admits through
    two strides more (every remainder mod the stride), plus one larger; else sizes 1-5 and 12."""
    attrs = site.attrs
    rank = site.rank
    if rank is None:
        return []
    smallest, steps = [1] * rank, 5
    if isinstance(attrs, PoolAttrs):
        steps = 2 * max(attrs.strides) + 1
        if site.op != "MaxUnpool":
            smallest = [max(1, effective_kernel(attrs.kernel_shape[i], attrs.dilations[i])
                            - (attrs.pads[i] + attrs.pads[i + rank]
                               if attrs.auto_pad == "NOTSET" else 0)) for i in range(rank)]
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


@dataclasses.dataclass(frozen=True)
class Case:
    """One built plane: ``base`` everywhere ("fill", "one value", or "NaN"/"+inf"/"-inf"), then
    ``marks``: per lattice offset a value ("fill": the fill's own value there)."""

    label: str
    base: str
    marks: tuple[tuple[tuple[int, ...], str], ...] = ()

    @property
    def nonfinite(self) -> bool:
        """Whether the case holds NaN, +inf or -inf: outside the finite domain (ruling 20)."""
        return self.base in NONFINITE_VALUES or any(v in NONFINITE_VALUES for _, v in self.marks)


def spans(site: Site, spatial: Sequence[int]) -> tuple[int, ...]:
    """Per axis the built cases' lattice spacing (a windowed pool's dilated kernel span, else the
    plane): positions that far apart are never taps of one window, so one case per offset puts
    one mark in every window, at each of its taps over the offsets."""
    attrs = site.attrs
    if site.op in ("MaxPool", "AveragePool", "LpPool") and isinstance(attrs, PoolAttrs):
        return tuple(min(n, effective_kernel(k, d))
                     for n, k, d in zip(spatial, attrs.kernel_shape, attrs.dilations, strict=True))
    return tuple(spatial)


def _offsets(span: Sequence[int], keep: int) -> list[tuple[int, ...]]:
    """Every lattice offset, or per axis ``keep`` of first, last, middle, second, second-last."""
    if math.prod(span) <= MAX_OFFSETS and keep >= 5:
        return list(itertools.product(*(range(s) for s in span)))
    return list(itertools.product(*(sorted({p for p in [0, s - 1, s // 2, 1, s - 2][:keep]
                                            if 0 <= p < s}) for s in span)))


def _partner(site: Site, offset: tuple[int, ...], span: Sequence[int]) -> tuple | None:
    """An offset one dilation step from ``offset`` on the last axis whose window spans it: the
    two lattices then meet in windows (a sum's +inf and -inf in one window)."""
    attrs = site.attrs
    dilations = attrs.dilations if isinstance(attrs, PoolAttrs) else (1,) * len(span)
    for axis in reversed(range(len(span))):
        step = dilations[axis] if axis < len(dilations) else 1
        if span[axis] > step:
            moved = list(offset)
            moved[axis] = (moved[axis] + step) % span[axis]
            return tuple(moved)
    return None


def cases(site: Site, span: Sequence[int], nonfinite: bool, keep: int = 5) -> list[Case]:
    """The cases rulings 18 and 20 name for ``site`` (a float type), in a fixed order (docs/fix.md,
    "The proof"); the non-finite ones only with ``nonfinite``."""
    found: list[Case] = []
    offsets = _offsets(span, keep)
    if site.op in MAX_LIKE:
        found += [Case(label.format(o), base, ((o, value),)) for label, base, value in (
            ("NaN at tap {}", "fill", "NaN"), ("+inf at tap {}", "fill", "+inf"),
            ("NaN at tap {} among -inf", "-inf", "NaN"),
            ("one value at tap {} among -inf", "-inf", "fill")) for o in offsets]
        found += [Case("-inf only", "-inf"), Case("NaN only", "NaN"), Case("+inf only", "+inf")]
        found += [Case(f"the largest at tap {o} among the lowest finite", "lowest finite",
                       ((o, "fill"),)) for o in offsets]
        found += [Case("the lowest finite only", "lowest finite"),
                  Case("the highest finite only", "highest finite"),
                  Case("one value (ties)", "one value")]
    else:
        found += [Case(f"NaN at tap {o}", "fill", ((o, "NaN"),)) for o in offsets]
        for o in offsets:
            partner = _partner(site, o, span)
            marks = ((o, "+inf"),) + (((partner, "-inf"),) if partner is not None else ())
            pair = f", -inf at {partner}" if partner is not None else " (a window of one tap)"
            found.append(Case(f"+inf at tap {o}{pair}", "fill", marks))
        found += [Case("+inf only", "+inf"), Case("-inf only", "-inf")]
    if not nonfinite:
        found = [c for c in found if not c.nonfinite]
    return found


_CONSTANTS = {"NaN": np.nan, "+inf": np.inf, "-inf": -np.inf}


def _plane(case: Case, fill: np.ndarray, span: Sequence[int]) -> np.ndarray:
    if case.base == "fill":
        plane = fill.copy()
    elif case.base == "one value":
        plane = np.full_like(fill, fill.reshape(-1)[0])
    else:
        info = ml_dtypes.finfo(fill.dtype)  # knows bfloat16 as well as numpy's float types
        finite = {"lowest finite": float(info.min), "highest finite": float(info.max)}
        plane = np.full_like(fill, {**finite, **_CONSTANTS}[case.base])
    for offset, value in case.marks:
        if not all(0 <= o < s for o, s in zip(offset, span, strict=True)):
            continue  # no position is that far into its lattice cell
        # the lattice of ``offset``: every position p with p % span == offset, per axis
        lattice = tuple(slice(o, None, s) for o, s in zip(offset, span, strict=True))
        plane[lattice] = fill[lattice] if value == "fill" else _CONSTANTS[value]
    return plane


def constructed_sets(site: Site, shape: Sequence[int], rng: np.random.Generator,
                     nonfinite: bool = False, extra: Sequence[np.ndarray] = ()) -> list[FeedSet]:
    """X tensors of ``shape`` holding the built :func:`cases` of a float ``site``, one case per
    (n, c) plane, the rest the seeded fill; ``extra``: the node's other inputs, for each set."""
    if site.elem not in FLOATS or len(shape) < 3 or 0 in shape:
        return []
    span = spans(site, shape[2:])
    planes = shape[0] * shape[1]
    for keep in (5, 3, 2, 1):
        built = cases(site, span, nonfinite, keep)
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
        x = _fill(rng, shape, site.elem, site.op)
        held = {}
        for index, case in enumerate(chunk):
            n, c = divmod(index, shape[1])
            x[n, c] = _plane(case, x[n, c], span)
            held[(n, c)] = case.label
        held_text = chunk[0].label if len(chunk) == 1 else f"{chunk[0].label} ... {chunk[-1].label}"
        label = f"built cases {number + 1}/{count} ({held_text})"
        sets.append(FeedSet(label, [x, *extra], cases=held))
    return sets


def _unpool_sets(site: Site, rng: np.random.Generator, shape: tuple[int, ...],
                 output_shape: np.ndarray | None, nonfinite: bool = False) -> list[FeedSet]:
    """X values with Indices a MaxPool of the same geometry gives, and distinct random ones
    (``nonfinite``: also NaN, +inf and -inf moved)."""
    attrs = site.attrs
    default = [(n - 1) * s - attrs.pads[i] - attrs.pads[i + attrs.rank] + k for i, (n, k, s)
               in enumerate(zip(shape[2:], attrs.kernel_shape, attrs.strides, strict=True))]
    target = [*shape[:2], *default] if output_shape is None else [int(v) for v in output_shape]
    size = math.prod(target)
    extra = [np.asarray(target, np.int64)] if site.n_inputs > 2 else []
    sets = []
    x = random_tensor(rng, shape, site.elem)
    if all(p < k for p, k in zip(attrs.pads, attrs.kernel_shape * 2, strict=True)) and all(
            d >= 1 for d in default):
        source = random_tensor(rng, [*shape[:2], *default], "float")
        _, indices = kernels.max_pool(source, version=12, return_indices=True,
                                      kernel_shape=list(attrs.kernel_shape),
                                      strides=list(attrs.strides), pads=list(attrs.pads))
        if indices.shape == x.shape and (indices >= 0).all() and (indices < size).all():
            sets.append(FeedSet("MaxPool's Indices", [x, indices.astype(np.int64), *extra]))
    # an output no array may hold (the kernels refuse it) gets no permutation of its size
    if x.size <= size and size * np.dtype(np.int64).itemsize <= kernels.output_limit():
        unique = rng.permutation(size)[: x.size].reshape(x.shape).astype(np.int64)
        sets.append(FeedSet("distinct random Indices", [x, unique, *extra]))
    if nonfinite and sets and site.elem in FLOATS and x.size:
        # NaN, +inf and -inf are moved as they are (bit for bit), at fixed places
        odd = x.copy().reshape(-1)
        for place, value in zip((0, odd.size // 2, odd.size - 1), (np.nan, np.inf, -np.inf),
                                strict=True):
            odd[place] = value
        sets.append(FeedSet("NaN, +inf, -inf values", [odd.reshape(x.shape), *sets[0].arrays[1:]]))
    return sets


def _rois(rng: np.random.Generator, shape: Sequence[int], elem: str, scale: float) -> np.ndarray:
    """RoIs for X of ``shape``: one over the whole map per batch entry (every built case reaches
    a bin), then five on quarter steps inside and across the map, one with x2 < x1. A negative
    ``scale`` gets the same boxes on the map, their corners negated."""
    step, sign = abs(scale) or 1.0, -1.0 if scale < 0 else 1.0
    height, width = shape[2] / step, shape[3] / step
    whole = [[n, 0.0, 0.0, sign * (width - 1 / step), sign * (height - 1 / step)]
             for n in range(shape[0])]
    low = rng.integers(-4, 4 * np.array([width, height]).astype(int) + 4, (5, 2)) / 4
    size = rng.integers(0, 4 * np.array([width, height]).astype(int) // 2 + 1, (5, 2)) / 4
    corners = np.concatenate([low, low + size], axis=1)
    corners[0, 2:] = corners[0, :2] - 1
    corners *= sign
    batch = rng.integers(0, shape[0], (5, 1))
    drawn = np.concatenate([batch, corners], axis=1)
    return np.concatenate([np.asarray(whole).reshape(-1, 5), drawn]).astype(dtypes.NUMPY[elem])


def proof_sets(site: Site, shapes: Sequence[tuple[int, ...]],
               captured: Sequence[Sequence[np.ndarray]] = (), seed: int = 0,
               nonfinite: bool = False, output_shape: np.ndarray | None = None) -> list[FeedSet]:
    """Every input set for ``site`` on ``shapes`` (X shapes), the captured ones first, the
    built cases of the domain (``nonfinite``: ruling 20) for a float type."""
    sets = [FeedSet(CAPTURED, list(a), observed=True) for a in captured]
    # an integer type's lowest is a finite value; a float type's is -inf
    with_lowest = nonfinite or site.elem not in FLOATS
    kinds = ["ties"] + ["extremes"] * (site.elem not in FLOATS) + ["lowest"] * with_lowest
    if site.op in GLOBAL_SUMS and site.elem in FLOATS:
        kinds.append("uniform")
    for number, shape in enumerate(shapes):
        try:  # a size a subgraph declares may be any: no array of it is drawn past the limit
            check_array("X of the built cases", shape, dtypes.NUMPY.get(site.elem, np.float64))
        except OrtpoolError as err:
            raise err.located(node=site.name, op=site.op, version=site.version) from None
        rng = np.random.default_rng([seed, number])
        if site.op == "MaxUnpool":
            given = site.output_shape if output_shape is None else output_shape
            sets += _unpool_sets(site, rng, tuple(shape), given, nonfinite)
            continue
        extra = []
        if site.op == "MaxRoiPool":
            # fixed, not seeded: which bins the built cases reach must not depend on the seed
            extra = [_rois(np.random.default_rng([0, number]), shape, site.elem,
                           getattr(site.attrs, "spatial_scale", 1.0))]
        for kind in kinds:
            # The uniform plane decides a sum's accuracy, a verdict: not seeded either.
            source = np.random.default_rng([0, number]) if kind == "uniform" else rng
            x = _values(source, shape, site.elem, kind, site.op)
            sets.append(FeedSet(kind, [x, *extra]))
        sets += constructed_sets(site, shape, rng, nonfinite=nonfinite, extra=extra)
    return sets


def spec_outputs(site: Site, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The spec's outputs for ``arrays``: ortpool's kernels at the node's version."""
    return list(kernels.run_op(site.op, site.version, arrays, site.attributes, site.n_outputs))


def expect(site: Site, sets: Sequence[FeedSet], refusals: list[str] | None = None, *,
           verdict: bool = False) -> list[FeedSet]:
    """Fill in the spec's outputs; a set the spec itself refuses (a size the geometry cannot
    pool, an output over the kernels' limits) is dropped, and why is appended to ``refusals``.
    For a ``verdict``, a limit of ortpool's own is raised: it is no answer to judge a runtime by."""
    kept = []
    for feed in sets:
        if feed.expected is None:
            try:
                feed.expected = spec_outputs(site, feed.arrays)
            except (OrtpoolError, ValueError) as err:
                if verdict and isinstance(err, OrtpoolError) and err.limit:
                    raise err.located(node=site.name, op=site.op, version=site.version) from None
                if refusals is not None:
                    detail = err.detail if isinstance(err, OrtpoolError) else str(err)
                    refusals.append(f"X {list(feed.shape)}: {detail}")
                continue
        kept.append(feed)
    return kept


