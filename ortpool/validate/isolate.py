"""One pooling node, alone, through onnxruntime's built-in kernel and through ortpool.

The node is rebuilt as a single-node model (:mod:`ortpool.model.singlenode`) and fed exactly
the given arrays, so a difference belongs to this node and nothing upstream. The ortpool side runs
either through an ``ortpool.InferenceSession`` (what a rewritten model runs: registration, hook,
Casts) or, for grid sweeps, straight through the numpy kernels (the same code, without session
cost).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
import onnx

from ortpool import dtypes, kernels
from ortpool.attributes import PoolAttrs
from ortpool.check.compare import (
    CAT_RULING,
    TensorComparison,
    compare_indices,
    compare_values,
    family_ruling_cells,
    ruling_cells,
)
from ortpool.errors import OrtpoolError
from ortpool.geometry import pool_geometry
from ortpool.model.singlenode import NodeSpec, builtin_model, feed_dict
from ortpool.ort import ISOLATED_LEVEL, RuntimeSpec, open_session, ortrun
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule, node_tolerance, window_size
from ortpool.validate import causes as causes_mod
from ortpool.validate import results
from ortpool.versions import WINDOW_OPERATORS

OrtpoolRunner = Callable[[NodeSpec, Sequence[np.ndarray]], list[np.ndarray]]


def ortpool_model(spec: NodeSpec, feeds: Sequence[np.ndarray]) -> onnx.ModelProto:
    """The same node retargeted by the rewriter itself, so the isolated run exercises exactly what
    ``ortpool rewrite`` produces (ortpool op type, every attribute, Casts for half types)."""
    from ortpool.rewrite import rewrite

    return rewrite(builtin_model(spec, feeds))


def run_ortpool_session(spec: NodeSpec, feeds: Sequence[np.ndarray]) -> list[np.ndarray]:
    """ortpool through onnxruntime: the registered custom op in a one-node model (on the CPU
    provider: a Python op runs on no other)."""
    session = open_session(RuntimeSpec(level=ISOLATED_LEVEL), ortpool_model(spec, feeds))
    return [np.asarray(a) for a in session.run(None, feed_dict(feeds))]


def run_ortpool_numpy(spec: NodeSpec, feeds: Sequence[np.ndarray]) -> list[np.ndarray]:
    """ortpool's kernels directly, with the node's spec version and attributes."""
    return list(kernels.run_op(spec.op, spec.spec.version, feeds, spec.attributes, spec.n_outputs))


@dataclasses.dataclass
class Options:
    """How nodes are run and compared."""

    #: the runtime the built-in node runs on (default: the CPU provider, optimizations off)
    runtime: RuntimeSpec = dataclasses.field(
        default_factory=lambda: RuntimeSpec(level=ISOLATED_LEVEL)
    )
    atol: float | None = None
    rtol: float | None = None
    ortpool_runner: OrtpoolRunner = run_ortpool_session
    #: intra/inter-op threads of the built-in session (None: the runtime's)
    threads: int | None = None
    #: ruling 17's thresholds for averages and norms
    accuracy: AccuracyRule = DEFAULT_RULE


def _nan_empty_counts(
    comparisons: Sequence[TensorComparison], nan: np.ndarray, empty: np.ndarray
) -> tuple[int, int]:
    nan_cells = empty_cells = 0
    for comp in comparisons:
        cats = comp.categories
        if cats is None or cats.shape != nan.shape:
            continue
        ruling = cats == CAT_RULING
        nan_cells += int((ruling & nan).sum())
        empty_cells += int((ruling & empty & ~nan).sum())
    return nan_cells, empty_cells


def status_of(comparisons: Sequence[TensorComparison]) -> str:
    """Semantics first, then accuracy beyond the limit, RULINGS cells, accuracy notes, ties."""
    if any(c.shapes_differ or c.differing for c in comparisons):
        return results.DIFFER
    if any(c.inaccurate for c in comparisons):
        return results.INACCURATE
    if any(c.ruling_differing for c in comparisons):
        return results.RULINGS
    if any(c.noted for c in comparisons):
        return results.ACCURACY_NOTE
    if any(c.ties for c in comparisons):
        return results.TIES
    return results.AGREE


def run_node(
    name: str,
    spec: NodeSpec,
    feeds: Sequence[np.ndarray],
    options: Options,
    location: str = "main graph",
) -> results.NodeResult:
    """Run ``spec`` on ``feeds`` both ways and compare; never raises for a node-level problem."""
    x = feeds[0]
    result = results.NodeResult(
        name=name,
        op=spec.op,
        spec_version=spec.spec.version,
        opset=spec.opset,
        dtype=dtypes.name_of(x.dtype),
        attributes=dict(spec.attributes),
        input_shapes=[list(a.shape) for a in feeds],
        status=results.AGREE,
        location=location,
    )
    try:
        pool_attrs = spec.pool_attrs(x.ndim - 2)
    except OrtpoolError:
        pool_attrs = None
    builtin, ort_error = _run_builtin(spec, feeds, options, result)
    ours: list[np.ndarray] | None = None
    ours_error: Exception | None = None
    try:
        ours = options.ortpool_runner(spec, feeds)
    except (OrtpoolError, ValueError) as err:
        ours_error = err
    if ort_error is not None or ours_error is not None:
        _rejected(spec, feeds, pool_attrs, ort_error, ours_error, result)
    elif builtin is not None and ours is not None:  # both ran, by the check above
        _compare(spec, feeds, pool_attrs, builtin, ours, options, result)
    return result


def _run_builtin(
    spec: NodeSpec, feeds: Sequence[np.ndarray], options: Options, result: results.NodeResult
) -> tuple[list[np.ndarray] | None, ortrun.OrtFailure | None]:
    """onnxruntime's built-in node on ``feeds``: its outputs or its failure; where it ran in
    ``result``."""
    try:
        model = builtin_model(spec, feeds)
        builtin, placed = ortrun.run_placed(
            model, feed_dict(feeds), options.runtime, options.threads
        )
    except ortrun.OrtFailure as err:
        return None, err
    if placed:
        # The one node's provider: where onnxruntime fell back, the values are not the
        # asked provider's, and the report must say so.
        result.executed_by = placed.get(model.graph.node[0].name)
        result.asked_provider = options.runtime.first
    return builtin, None


def _rejected(
    spec: NodeSpec,
    feeds: Sequence[np.ndarray],
    pool_attrs: PoolAttrs | None,
    ort_error: ortrun.OrtFailure | None,
    ours_error: Exception | None,
    result: results.NodeResult,
) -> None:
    """The status, message and causes of a node one side (or both) did not compute."""
    if ort_error is not None and ort_error.kind == ortrun.NO_KERNEL:
        result.status = results.NO_KERNEL
        result.message = str(ort_error)
        result.causes = [
            causes_mod.no_kernel(
                spec.op, spec.spec.version, spec.opset, result.dtype, str(ort_error)
            )
        ]
        return
    if ort_error is not None and ours_error is not None:
        result.status = results.BOTH_REJECTED
        result.message = f"onnxruntime: {ort_error}; ortpool: {ours_error}"
        return
    if ort_error is not None:
        result.status = results.ORT_REJECTED
        result.message = f"onnxruntime: {ort_error}"
    else:
        result.status = results.ORTPOOL_REJECTED
        result.message = f"ortpool: {ours_error}"
    result.causes = causes_mod.recognise(
        spec.op,
        pool_attrs,
        list(feeds[0].shape[2:]),
        differs=True,
        output_shape_input=spec.op == "MaxUnpool" and len(feeds) > 2,
    )
    if ort_error is not None and any(c.code == causes_mod.PADS_GE_KERNEL for c in result.causes):
        # onnxruntime refuses the attributes themselves; nothing else was computed.
        keep = (causes_mod.PADS_GE_KERNEL, causes_mod.EMPTY_WINDOW)
        result.causes = [c for c in result.causes if c.code in keep]


def _ruling_cells(
    spec: NodeSpec, feeds: Sequence[np.ndarray], pool_attrs: PoolAttrs | None
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The output cells docs/rulings.md decides: (all-NaN windows, empty windows), or Nones."""
    if spec.op in WINDOW_OPERATORS and pool_attrs is not None:
        try:
            return ruling_cells(feeds[0], pool_geometry(list(feeds[0].shape[2:]), pool_attrs))
        except ValueError:
            return None, None
    if pool_attrs is not None:
        return family_ruling_cells(spec.op, list(feeds), pool_attrs) or (None, None)
    return None, None


def _compare(
    spec: NodeSpec,
    feeds: Sequence[np.ndarray],
    pool_attrs: PoolAttrs | None,
    builtin: list[np.ndarray],
    ours: list[np.ndarray],
    options: Options,
    result: results.NodeResult,
) -> None:
    """Both sides' outputs compared, the status and the recognised causes in ``result``."""
    x, dtype = feeds[0], result.dtype
    nan, empty = _ruling_cells(spec, feeds, pool_attrs)
    ruling = (nan | empty) if nan is not None else None
    tol = node_tolerance(spec.op, spec.spec.version, dtype, x, ours[0], spec.attributes,
                         options.atol, options.rtol, options.accuracy)
    comps = [compare_values("Y", dtype, builtin[0], ours[0], tol, ruling)]
    if spec.n_outputs > 1 and len(builtin) > 1 and len(ours) > 1:
        comps.append(compare_indices(builtin[1], ours[1], x, ruling))
    result.comparisons = comps
    result.ortpool_outputs = ours
    result.nan_cells = nan
    result.tolerance = tol
    result.status = status_of(comps)
    nan_cells, empty_cells = _nan_empty_counts(comps, nan, empty) if nan is not None else (0, 0)
    result.causes = causes_mod.recognise(
        spec.op,
        pool_attrs,
        list(x.shape[2:]),
        differs=result.status in (results.DIFFER, results.INACCURATE, results.RULINGS),
        nan_cells=nan_cells,
        empty_cells=empty_cells,
        output_shape_input=spec.op == "MaxUnpool" and len(feeds) > 2,
        # named only where rounding is the whole story: next to a wrong window or divisor, a
        # cell close to the spec's is no evidence of the runtime's summation
        accumulation_cells=(
            sum(c.inaccurate for c in comps) if result.status == results.INACCURATE else 0
        ),
        window=window_size(spec.op, tuple(x.shape), spec.attributes),
    )
