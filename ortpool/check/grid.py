"""The conformance grid: every op x spec version x dtype x padding x ceil mode x dilation x
count_include_pad x storage_order x rank 1-3, with small seeded inputs; beside them NaN cases,
p = 1 and 3, empty and 1024x1024 planes, RoIs.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ortpool import kernels, versions
from ortpool.check.cases import FeedSet
from ortpool.check.judge import Judgement, judge
from ortpool.dtypes import FLOATS
from ortpool.model import random_tensor
from ortpool.model.site import Site
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.runtimes import Worker
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule
from ortpool.versions import GLOBAL_OPERATORS

#: (n, k, s, pads for "pads", pads for "big-pads") per axis kind: A, floor and ceil differ; B,
#: SAME's total pad negative; "pads" puts ceil mode's last window in the end pad
AXES: dict[str, tuple[int, int, int, tuple[int, int], tuple[int, int]]] = {
    "A": (6, 3, 2, (0, 2), (3, 3)),
    "B": (7, 2, 3, (1, 1), (2, 2)),
    "C": (5, 2, 1, (1, 0), (2, 2)),
}
RANK_AXES: dict[int, str] = {1: "B", 2: "AB", 3: "ACB"}
PADDINGS = ("none", "pads", "big-pads", "SAME_UPPER", "SAME_LOWER", "VALID")
BATCH, CHANNELS = 1, 2


@dataclasses.dataclass(frozen=True)
class Case:
    """One grid cell: a node (spec) and how its input is made."""

    id: int
    op: str
    version: int
    dtype: str
    rank: int
    padding: str = "none"
    ceil_mode: int = 0
    dilation: int = 1
    count_include_pad: int = 0
    storage_order: int = 0
    indices: bool = False
    #: "random", "nan"; MaxUnpool: "default", "pads", "output_shape", "output_shape+1"
    data: str = "random"
    attributes: dict[str, Any] = dataclasses.field(default_factory=dict)

    def site(self, feeds: Sequence[np.ndarray] | None = None) -> Site:
        """The case's node as a site (at the size of ``feeds`` when given)."""
        n_inputs = versions.get(self.op, self.version).min_inputs
        if self.op == "MaxUnpool":
            n_inputs = 3 if self.data.startswith("output_shape") else 2
        dims = tuple(feeds[0].shape) if feeds is not None else None
        return Site.alone(self.op, self.version, self.attributes, self.dtype, dims, n_inputs,
                          2 if self.indices else 1, name=f"case{self.id}", strict=False)

    def describe(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _pool_attributes(rank: int, padding: str, ceil: int, dilation: int) -> dict[str, Any]:
    kinds = RANK_AXES[rank]
    attrs: dict[str, Any] = {
        "kernel_shape": [AXES[a][1] for a in kinds],
        "strides": [AXES[a][2] for a in kinds],
    }
    if padding in ("pads", "big-pads"):
        pick = 3 if padding == "pads" else 4
        pairs = [AXES[a][pick] for a in kinds]
        attrs["pads"] = [p[0] for p in pairs] + [p[1] for p in pairs]
    elif padding != "none":
        attrs["auto_pad"] = padding
    if ceil:
        attrs["ceil_mode"] = 1
    if dilation > 1:
        attrs["dilations"] = [dilation] * rank
    return attrs


def input_shape(rank: int) -> tuple[int, ...]:
    return (BATCH, CHANNELS, *(AXES[a][0] for a in RANK_AXES[rank]))


#: MaxUnpool's source sizes: (m-1)*s + k, so the default output size restores the source exactly
UNPOOL_N: dict[str, int] = {"A": 7, "B": 8, "C": 5}


def cases(ops: Sequence[str] | None = None, versions_wanted: Sequence[int] | None = None,
          dtypes_wanted: Sequence[str] | None = None,
          ranks: Sequence[int] = (1, 2, 3)) -> list[Case]:
    """Every grid case, in a fixed order (ids are stable for a given onnx version)."""
    found: list[Case] = []
    for opv in versions.all_versions():
        if (ops and opv.op not in ops) or (versions_wanted and opv.version not in versions_wanted):
            continue
        dtypes = [t for t in opv.types if not dtypes_wanted or t in dtypes_wanted]
        for dtype, rank in itertools.product(dtypes, ranks):
            for fields in _variations(opv, dtype, rank):
                found.append(Case(len(found), opv.op, opv.version, dtype, rank, **fields))
    return found


#: p values besides the default 2 tried for LpPool and GlobalLpPool.
P_VALUES = (1, 3)
#: MaxRoiPool's map (rank 2 only) and bins.
ROI_MAP = (6, 7)


def _family_variations(opv: versions.OpVersion, dtype: str, rank: int) -> Iterator[dict]:
    floating = dtype in FLOATS
    p_kind = opv.attrs["p"].kind if "p" in opv.attrs else None

    def p_attrs(p: int) -> dict[str, Any]:
        return {"p": float(p) if p_kind == "float" else p}

    if opv.op in GLOBAL_OPERATORS:
        yield dict(data="random")
        if floating:
            yield dict(data="nan")
        yield dict(data="zero-size")
        if rank == 2:
            yield dict(data="large")
        if p_kind:
            for p in P_VALUES:
                yield dict(attributes=p_attrs(p))
        return
    if opv.op == "MaxRoiPool":
        if rank != 2:
            return
        yield dict(data="rois", attributes={"pooled_shape": [2, 2]})
        yield dict(data="rois-across", attributes={"pooled_shape": [2, 2], "spatial_scale": 0.5})
        yield dict(data="rois", attributes={"pooled_shape": [3, 2]})
        if floating:
            yield dict(data="nan", attributes={"pooled_shape": [2, 2]})
        return
    # LpPool: p = 1 and 3 with explicit pads, beside the grid of the window ops.
    for p in P_VALUES:
        attrs = {**_pool_attributes(rank, "pads", 0, 1), **p_attrs(p)}
        yield dict(padding="pads", attributes=attrs)


def _variations(opv: versions.OpVersion, dtype: str, rank: int) -> Iterator[dict[str, Any]]:
    family = (*GLOBAL_OPERATORS, "MaxRoiPool")
    if opv.op in (*family, "LpPool"):
        yield from _family_variations(opv, dtype, rank)
    if opv.op == "MaxUnpool":
        yield from _unpool_variations(rank)
    elif opv.op not in family:
        yield from _window_variations(opv, dtype, rank)


def _unpool_variations(rank: int) -> Iterator[dict[str, Any]]:
    """MaxUnpool: the default output, pads, an output_shape and one larger than the default."""
    for data in ("default", "pads", "output_shape", "output_shape+1"):
        attrs = _pool_attributes(rank, "none", 0, 1)
        if data == "pads":
            attrs["pads"] = [0] * rank + [1] * rank
        yield dict(data=data, attributes=attrs)


def _window_variations(opv: versions.OpVersion, dtype: str, rank: int
                       ) -> Iterator[dict[str, Any]]:
    """MaxPool, AveragePool, LpPool: every padding x ceil x dilation x count_include_pad x
    outputs the version has, then NaN windows for the floating types."""
    has = opv.attrs
    ceils = (0, 1) if "ceil_mode" in has else (0,)
    dilations = (1, 2) if "dilations" in has else (1,)
    cips = (0, 1) if "count_include_pad" in has else (0,)
    outputs: list[tuple[bool, int]] = [(False, 0)]
    if opv.op == "MaxPool" and opv.max_outputs > 1:
        outputs += [(True, 0), (True, 1)] if "storage_order" in has else [(True, 0)]
    for padding, ceil, dilation, cip, (indices, order) in itertools.product(
            PADDINGS, ceils, dilations, cips, outputs):
        attrs = _pool_attributes(rank, padding, ceil, dilation)
        if cip:
            attrs["count_include_pad"] = 1
        if order:
            attrs["storage_order"] = 1
        yield dict(padding=padding, ceil_mode=ceil, dilation=dilation, count_include_pad=cip,
                   storage_order=order, indices=indices, attributes=attrs)
    if dtype in FLOATS:  # NaN handling: explicit pads, Indices when the version has them
        yield dict(data="nan", padding="pads", attributes=_pool_attributes(rank, "pads", 0, 1),
                   indices=opv.op == "MaxPool" and opv.max_outputs > 1)


def case_inputs(case: Case, seed: int) -> list[np.ndarray]:
    """The arrays a case runs on, seeded by ``seed`` and the case id."""
    rng = np.random.default_rng([seed, case.id])
    shape = input_shape(case.rank)
    if case.op in GLOBAL_OPERATORS and case.data in ("zero-size", "large"):
        if case.data == "zero-size":
            return [random_tensor(rng, (BATCH, CHANNELS, 0, *shape[3:]), case.dtype)]
        x = rng.random((1, 1, 1024, 1024))
        return [x.astype(random_tensor(rng, (1,), case.dtype).dtype)]
    if case.op == "MaxRoiPool":
        return _roi_inputs(case, rng)
    if case.op != "MaxUnpool":
        x = random_tensor(rng, shape, case.dtype)
        if case.data == "nan":
            flat = x.reshape(-1)
            flat[rng.choice(flat.size, size=max(1, flat.size // 12), replace=False)] = np.nan
        return [x]
    # Indices that MaxPool really produces, and its values, from a float source.
    # With end pads of 1 the default output is (m-1)*s - 1 + k, which is the plain axis size.
    if case.data != "pads":
        shape = (BATCH, CHANNELS, *(UNPOOL_N[a] for a in RANK_AXES[case.rank]))
    source = random_tensor(rng, shape, "float")
    values, indices = kernels.max_pool(source, version=12, return_indices=True, **case.attributes)
    x = values.astype(random_tensor(rng, (1,), case.dtype).dtype)
    feeds = [x, indices]
    if case.data.startswith("output_shape"):
        extra = 1 if case.data.endswith("+1") else 0
        feeds.append(np.array([*shape[:2], *(n + extra for n in shape[2:])], np.int64))
    return feeds


def _roi_inputs(case: Case, rng: np.random.Generator) -> list[np.ndarray]:
    """X of 2 planes on the 6x7 map and 5 RoIs: inside it (quarter steps, some halves to round),
    or with the scale 0.5 across and beyond its borders, one of them degenerate (x2 < x1)."""
    x = random_tensor(rng, (2, CHANNELS, *ROI_MAP), case.dtype)
    if case.data == "nan":
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, size=flat.size // 12, replace=False)] = np.nan
    height, width = ROI_MAP
    if case.data == "rois-across":
        corners = rng.integers(-6, 2 * max(ROI_MAP) + 4, (5, 4)) / 2
        corners[0] = [9, 9, 2, 2]  # x2 < x1: a 1x1 RoI at the rounded corner
    else:
        low = rng.integers(0, 4 * np.array([width, height]) // 2, (5, 2)) / 4
        size = rng.integers(0, 4 * np.array([width, height]) // 2, (5, 2)) / 4
        corners = np.concatenate([low, low + size], axis=1)
    batch = rng.integers(0, 2, (5, 1))
    rois = np.concatenate([batch, corners], axis=1)
    return [x, rois.astype(x.dtype)]


#: the label of a case's input in a judgement (the case's own input: judged as observed)
CASE_INPUT = "the case's input"


def judge_case(case: Case, seed: int, runtime: RuntimeSpec | Worker,
               rule: AccuracyRule = DEFAULT_RULE) -> tuple[Site, Judgement]:
    """One case judged by the engine on its own input (observed: the rulings' cells and Index
    ties counted apart, as on a model's own input): its site, sized, and the judgement."""
    feeds = case_inputs(case, seed)
    site = case.site(feeds)
    return site, judge(site, [FeedSet(CASE_INPUT, feeds, observed=True)], runtime, rule)
