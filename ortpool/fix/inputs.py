"""The inputs a realization is proven on, and the spec's answer for each (ortpool's kernels).

Per node: the inputs captured from a run of the model (when it runs), plus seeded sets made to
find differences: quarter steps (ties everywhere, exact sums), large values with +-inf, every
element the type's lowest value (padding and input tie), NaN, and for global averages and norms
a plane of uniform [0, 1) values. For the max-like ops of a float type NaN and -inf only when
asked (``nonfinite``; see :func:`proof_sets`). MaxUnpool gets Indices a MaxPool of the same
geometry really produces (duplicates included) and distinct random ones; MaxRoiPool RoIs inside
and across the map.

The expected outputs come from ortpool's kernels with the node's own spec version and attributes
(:func:`ortpool.validate.isolate.run_ortpool_numpy`), computed once per input set.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import ml_dtypes
import numpy as np

from ortpool import kernels
from ortpool.attributes import PoolAttrs
from ortpool.errors import OrtpoolError
from ortpool.fix.forms import FLOATS, MAX_LIKE, NodeFacts, lowest
from ortpool.geometry import effective_kernel
from ortpool.model.inputs import random_tensor
from ortpool.validate import dtypes, isolate
from ortpool.validate.singlenode import NodeSpec
from ortpool.validate.tolerances import GLOBAL_SUMS

#: the label of an input set captured from a run of the model
CAPTURED = "captured from the model's run"

#: N and C of generated inputs where the model leaves them symbolic (Indices count N*C planes)
BATCH, CHANNELS = 2, 3


@dataclasses.dataclass
class FeedSet:
    """One input set: its label (for the report), the arrays, the spec's outputs."""

    label: str
    arrays: list[np.ndarray]
    expected: list[np.ndarray] | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.arrays[0].shape)


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


def _values(
    rng: np.random.Generator, shape: Sequence[int], elem: str, kind: str, neg_inf: bool, op: str
) -> np.ndarray:
    np_dtype = dtypes.NUMPY[elem]
    if kind == "ties":
        return random_tensor(rng, shape, elem)
    if kind == "lowest":
        return np.full(tuple(shape), lowest(elem), dtype=np_dtype)
    if kind == "uniform":  # a plane of [0, 1): where a running sum in the type loses digits
        return rng.random(tuple(shape)).astype(np_dtype)
    if elem in FLOATS:
        if op in ("AveragePool", "GlobalAveragePool"):
            # Multiples of 4 up to about +-100: every sum is exact, so only the division
            # rounds and the average tolerance means what it says (as in the validator).
            x = random_tensor(rng, shape, "double") * 16
        else:
            x = rng.normal(0.0, 100.0, size=tuple(shape))
        flat = x.reshape(-1)
        if not flat.size:  # an empty plane: nothing to sprinkle
            return x.astype(np_dtype)
        count = max(1, flat.size // 16)
        if kind == "extremes":
            flat[rng.choice(flat.size, size=count, replace=False)] = np.inf
            low = -np.inf if neg_inf else ml_dtypes.finfo(np_dtype).min
            flat[rng.choice(flat.size, size=count, replace=False)] = low
        elif kind == "nan":
            flat[rng.choice(flat.size, size=count, replace=False)] = np.nan
        return x.astype(np_dtype)
    info = np.iinfo(np_dtype)
    return rng.integers(info.min, int(info.max) + 1, size=tuple(shape)).astype(np_dtype)


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
    return sets


def _rois(rng: np.random.Generator, shape: Sequence[int], elem: str, scale: float) -> np.ndarray:
    """Five RoIs for X of ``shape`` (MaxRoiPool): batch indices in [0, N), corners inside the
    map and across its borders (in RoI coordinates: the map divided by ``spatial_scale``), on
    quarter steps so rounding has halves to decide; one with x2 < x1 (a 1x1 RoI)."""
    height, width = shape[2] / (scale or 1.0), shape[3] / (scale or 1.0)
    low = rng.integers(-4, 4 * np.array([width, height]).astype(int) + 4, (5, 2)) / 4
    size = rng.integers(0, 4 * np.array([width, height]).astype(int) // 2 + 1, (5, 2)) / 4
    corners = np.concatenate([low, low + size], axis=1)
    corners[0, 2:] = corners[0, :2] - 1
    batch = rng.integers(0, shape[0], (5, 1))
    return np.concatenate([batch, corners], axis=1).astype(dtypes.NUMPY[elem])


def proof_sets(
    facts: NodeFacts,
    shapes: Sequence[tuple[int, ...]],
    captured: Sequence[Sequence[np.ndarray]] = (),
    seed: int = 0,
    nonfinite: bool = False,
    output_shape: np.ndarray | None = None,
) -> list[FeedSet]:
    """Every input set for ``facts`` on ``shapes`` (X shapes), the captured ones first.

    A max-like op (MaxPool, GlobalMaxPool, MaxRoiPool) of a float type is proven on NaN and on
    -inf (sprinkled, and every element) only when ``nonfinite`` asks for it: onnxruntime skips
    NaN and gives -3.4e38 for windows of -inf only, so without the guard no padded MaxPool would
    be exact there. Averages and norms always are, and a global one also on a plane of uniform
    [0, 1) values, where a running float32 sum loses digits (RULINGS.md 13).
    """
    sets = [FeedSet(CAPTURED, list(a)) for a in captured]
    strict = nonfinite or facts.op not in MAX_LIKE or facts.elem not in FLOATS
    kinds = ["ties", "extremes"] + ["lowest"] * strict
    if facts.elem in FLOATS and strict:
        kinds.append("nan")
    if facts.op in GLOBAL_SUMS and facts.elem in FLOATS:
        kinds.append("uniform")
    for number, shape in enumerate(shapes):
        rng = np.random.default_rng([seed, number])
        if facts.op == "MaxUnpool":
            sets += _unpool_sets(facts, rng, tuple(shape), output_shape)
            continue
        extra = []
        if facts.op == "MaxRoiPool":
            extra = [_rois(rng, shape, facts.elem, getattr(facts.attrs, "spatial_scale", 1.0))]
        for kind in kinds:
            x = _values(rng, shape, facts.elem, kind, strict, facts.op)
            sets.append(FeedSet(kind, [x, *extra]))
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
