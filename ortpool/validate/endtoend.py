"""The end-to-end verdict: each graph output of the ortpool-rewritten model against the built-in
run's, within a tolerance scaled to the output's magnitude (the rule and its reasons:
docs/validate.md, "The end-to-end verdict"). A half-typed output is also allowed ``half_ulps``
ulp of its type per node between a pool and it that rounds to that type
(:func:`half_roundings`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import onnx

from ortpool import dtypes, optypes
from ortpool.check.compare import compare_values
from ortpool.model.inference import learn_types
from ortpool.model.scopes import is_pool, model_scopes, subgraphs
from ortpool.report import record as results
from ortpool.tolerances import HALF, Tolerance, tolerance_for, ulp


def magnitude(a: np.ndarray, b: np.ndarray) -> float:
    """The smaller of the two sides' largest finite ``|value|``: a side gone wrong by growing
    large does not widen the tolerance it is judged by."""
    return min(_largest(np.abs(side.astype(np.float64))) for side in (a, b))


def _largest(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(finite.max()) if finite.size else 0.0


def note_allowance(nodes: Sequence[results.NodeResult]) -> float:
    """The largest error, relative to mean|x|, of the pools that agree with an accuracy note."""
    return max((n.accuracy["max_error_units"] * n.accuracy["u"] for n in nodes
                if n.status == results.ACCURACY_NOTE and n.accuracy
                and n.accuracy["max_error_units"]), default=0.0)


#: Ops each of whose output values is one of their inputs' values (moved, selected or
#: compared): a half-typed result of theirs is no new rounding.
SELECTING = frozenset({
    "MaxPool", "GlobalMaxPool", "MaxUnpool", "MaxRoiPool", "Relu", "Max", "Min", "Abs", "Neg",
    "Identity", "Dropout", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat",
    "Split", "Slice", "Gather", "GatherElements", "GatherND", "Pad", "Expand", "Tile", "Where",
    "DepthToSpace", "SpaceToDepth", "ReduceMax", "ReduceMin",
})


def _holds_pool(node: onnx.NodeProto) -> bool:
    """A pooling node, an ortpool op, or a node whose subgraphs hold one."""
    if is_pool(node) or node.domain == optypes.DOMAIN:
        return True
    return any(_holds_pool(inner) for _, _, graph in subgraphs(node) for inner in graph.node)


def half_roundings(model: onnx.ModelProto) -> dict[str, dict[str, int]]:
    """Per graph output of ``model`` (functions inlined), the nodes between the pooling nodes
    and it that round to a half type, counted per type: ``{"out": {"float16": 1}}``."""
    graph = model.graph
    types = learn_types(model)
    scope = model_scopes(model)[0]
    producer: dict[str, int] = {}
    below_pool: set[int] = set()
    reached: set[str] = set()
    for index, node in enumerate(graph.node):  # ONNX keeps a graph's nodes in topological order
        producer.update((name, index) for name in node.output if name)
        if _holds_pool(node) or reached.intersection(node.input):
            below_pool.add(index)
            reached.update(name for name in node.output if name)
    found: dict[str, dict[str, int]] = {}
    for output in graph.output:
        counts: dict[str, int] = {}
        seen: set[int] = set()
        pending = [output.name]
        while pending:
            index = producer.get(pending.pop())
            if index is None or index in seen:
                continue
            seen.add(index)
            node = graph.node[index]
            pending.extend(name for name in node.input if name)
            if index not in below_pool or node.op_type in SELECTING:
                continue
            elems = {t.name for t in (types.lookup(scope, o) for o in node.output if o) if t}
            for elem in sorted(elems & set(HALF)):
                counts[elem] = counts.get(elem, 0) + 1
        found[output.name] = counts
    return found


def output_tolerance(dtype: str, a: np.ndarray, b: np.ndarray, atol: float | None,
                     rtol: float | None, note_rtol: float = 0.0,
                     roundings: Mapping[str, int] | None = None,
                     half_ulps: float = 1.0) -> Tolerance:
    """The per-type tolerance (a half type's is float32's) relative to the output's magnitude,
    plus the accuracy notes' ``note_rtol`` and ``half_ulps`` ulp of the half type per rounding
    to it after a pool (``roundings``); integer outputs (Indices) exact."""
    tol = tolerance_for("AveragePool", "float" if dtype in HALF else dtype, atol, rtol)
    if tol.exact:
        return tol
    size = magnitude(a, b)
    added, parts = 0.0, []
    for elem, count in sorted((roundings or {}).items()):
        step = half_ulps * float(ulp(np.asarray(size), elem))
        added += count * step
        parts.append(f"atol {tol.atol:g} + {count} x {half_ulps:g} ulp of {elem} at the magnitude "
                     f"({step:.3g}), one per rounding to {elem} after a pool (ruling 17)")
    if note_rtol:
        parts.append(f"rtol {tol.rtol:g} + {note_rtol:.3g} for the accuracy notes (ruling 17)")
    return Tolerance(tol.atol + added, tol.rtol + note_rtol, magnitude=size,
                     formula="; ".join(parts))


def compare_outputs(names: Sequence[str], builtin: Sequence[np.ndarray],
                    ours: Sequence[np.ndarray], atol: float | None = None,
                    rtol: float | None = None, note_rtol: float = 0.0,
                    roundings: Mapping[str, Mapping[str, int]] | None = None,
                    half_ulps: float = 1.0) -> list[results.OutputResult]:
    """Compare each graph output, built-in run against ortpool-rewritten run (``note_rtol``:
    :func:`note_allowance` of the model's nodes; ``roundings``: :func:`half_roundings`)."""
    found = []
    for name, a, b in zip(names, builtin, ours, strict=True):
        dtype = dtypes.name_of(a.dtype)
        tol = output_tolerance(dtype, a, b, atol, rtol, note_rtol, (roundings or {}).get(name),
                               half_ulps)
        found.append(results.OutputResult(compare_values(name, dtype, a, b, tol), tol))
    return found


def measure_noise(outputs: Sequence[results.OutputResult], builtin: Sequence[np.ndarray],
                  run_other_level: Callable[[], Sequence[np.ndarray]]) -> None:
    """Set each float output's ``noise``: how far the built-in run moves at the other graph
    optimisation level, when some output is not bit-identical."""
    if all(o.comparison.max_abs in (0, None) for o in outputs):
        return
    try:
        other = run_other_level()
    except Exception:  # information only: a model that runs at one level only has none
        return
    for out, a, b in zip(outputs, builtin, other, strict=True):
        if not out.tolerance.exact and a.shape == b.shape:
            with np.errstate(invalid="ignore"):
                out.noise = _largest(np.abs(a.astype(np.float64) - b.astype(np.float64)))
