"""``validate_model``: one model, per pooling node in isolation and end to end.

1. Inputs: resolved by :func:`ortpool.model.inputs.resolve` (``--shape``, ``--inputs``, seeded
   generation; every open dim named with its size).
2. The model runs once in onnxruntime's built-in kernels with every pooling node's inputs as
   extra outputs: those are the node's real inputs. (If onnxruntime cannot run the model, e.g. it
   has no kernel for one node, the inputs are captured from the ortpool-rewritten run instead.)
3. Each node runs alone in both implementations on exactly its captured inputs
   (:func:`ortpool.validate.isolate.run_node`), optionally also in the onnx reference evaluator.
4. End to end: the ortpool-rewritten model runs on the same inputs at the same optimisation
   level and every graph output is compared with the built-in run's (:mod:`.endtoend`).

A model ``ortpool fix`` wrote is read as such: each node it realized by a standard-op form is
reported once, ``fixed`` with its form (fix proved it exact), and the form's own pooling nodes
are not validated as nodes of the model (:mod:`ortpool.model.fixmarks`). A node of the ortpool
domain (``ortpool rewrite``, or fix keeping ortpool's op) runs ortpool's kernel: reported as an
ortpool op, and the "built-in" run is the model as it stands with ortpool's ops registered, so
its other nodes are onnxruntime's and compared end to end as usual.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx

from ortpool import dtypes, modelfile, optypes
from ortpool.attributes import (
    attribute_values,
    empty_auto_pad_note,
    normalize,
    standard_attributes,
)
from ortpool.check import domain
from ortpool.check.cases import expect, full_shape, proof_sets, sampled_shapes
from ortpool.check.judge import judge_node
from ortpool.check.node import FLOATS, NodeFacts, from_dims, from_spec, node_spec
from ortpool.errors import OrtpoolError
from ortpool.model import capture, fixmarks
from ortpool.model import inputs as model_inputs
from ortpool.model.inference import TypeTable, learn_shapes
from ortpool.model.reference import DEFAULT_TIMEOUT as REFERENCE_TIMEOUT
from ortpool.model.reference import ReferenceWorker
from ortpool.model.scopes import Scope, model_scopes
from ortpool.model.singlenode import NodeSpec, attribute_dict, builtin_model, feed_dict
from ortpool.ort import DEFAULT_LEVEL, ISOLATED_LEVEL, RuntimeSpec, open_session, ortrun
from ortpool.ort.nodes import iter_ortpool_nodes
from ortpool.validate import causes as causes_mod
from ortpool.validate import endtoend, isolate, results
from ortpool.validate import reference as reference_mod
from ortpool.validate.causes import BUILT_CASE, Cause

Progress = Callable[[int, int, str], None]
GuardPrice = Callable[
    [onnx.ModelProto, Sequence[str], Mapping[str, np.ndarray], RuntimeSpec],
    tuple[str, dict],
]

#: A node's X as shape inference knows it: element type and dims (None: not static; the dims
#: None: the rank unknown too).
_Site = tuple[str, tuple[int | None, ...] | None]

#: The name onnx's inliner gives a function body's node in its k-th call.
_INLINED = re.compile(r"(.+)__\d+")


@dataclasses.dataclass
class ValidateOptions(isolate.Options):
    seed: int = 0
    shapes: Mapping[str, Sequence[int]] = dataclasses.field(default_factory=dict)
    inputs_path: str | None = None
    #: the shapes and arrays as one spec (the command line's); None: made of the two above
    inputs: model_inputs.InputSpec | None = None
    reference: bool = False
    reference_timeout: float = REFERENCE_TIMEOUT
    #: the input domain (ruling 20): False, finite inputs (the default); True, NaN and +-inf too
    nonfinite: bool = False
    #: in the finite domain, what guarding the nodes that differ on non-finite inputs costs:
    #: ``(model, nodes, feeds, runtime) -> (text, figures)``, given by a layer that can fix
    #: (the command line gives :func:`ortpool.fix.cost.priced`); None: not measured
    guard_cost: GuardPrice | None = None


def load_model(path: str | Path) -> onnx.ModelProto:
    """Load an ONNX model with its weights; anything unreadable is an OrtpoolError (exit 2) with
    the reason."""
    return modelfile.read(path, load_external_data=True)


def _rewrite(model: onnx.ModelProto) -> tuple[onnx.ModelProto | None, str]:
    try:
        from ortpool.rewrite import rewrite
    except ImportError as err:
        return None, f"the ortpool rewriter is not available ({err})"
    try:
        return rewrite(model), ""
    except (OrtpoolError, ValueError) as err:
        return None, f"ortpool could not rewrite the model: {err}"


def _ortpool_runner(runtime: RuntimeSpec):
    """The rewritten model's run, on the built-in run's runtime and optimisation level:
    otherwise only one side's convolutions are fused and blocked (NCHWc), and that alone moves a
    deep network's outputs by float noise that no pooling node caused."""

    def run(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        session = open_session(runtime, model)
        return [np.asarray(a) for a in session.run(None, dict(feeds))]

    return run


@dataclasses.dataclass
class _Runs:
    """The model's two whole runs on the same inputs: each one's outputs, or why it has none,
    and every pooling node's inputs captured from one of them."""

    captured: dict[str, np.ndarray] | None = None
    capture_source: str = ""
    builtin_outputs: list[np.ndarray] | None = None
    builtin_error: str = ""
    builtin_failure: ortrun.OrtFailure | None = None
    ortpool_outputs: list[np.ndarray] | None = None
    ortpool_error: str = ""
    #: node name -> the provider that executed it in the built-in run
    placed: dict[str, str] = dataclasses.field(default_factory=dict)


def validate_model(
    source: str | Path | onnx.ModelProto,
    options: ValidateOptions | None = None,
    progress: Progress | None = None,
    strict_shapes: bool = True,
    label: str | None = None,
) -> results.ModelResult:
    """Validate one model; node-level problems are results, only an unusable model raises."""
    options = options or ValidateOptions()
    if isinstance(source, onnx.ModelProto):
        model, label = source, label or source.graph.name or "<model>"
    else:
        model, label = load_model(source), label or str(source)
    result = results.ModelResult(path=label)
    try:
        result.opset = capture.governing_opset(model)
    except ValueError as err:
        raise OrtpoolError(f"{label}: {err}") from None
    resolved = _resolve_inputs(model, options, strict_shapes, label, result)
    inlined = capture.inline_functions(model)
    fixed, fix_notes = fixmarks.read(model)
    result.notes.extend(fix_notes)
    ours = list(iter_ortpool_nodes(model))
    nodes = _pooling_nodes(model, inlined, result, fixed, bool(ours))
    runs = _run_whole(model, inlined, resolved.feeds, nodes, options, result, bool(ours))
    if runs.captured is None:
        _cannot_capture(runs, nodes, resolved, label)
    elif nodes:
        result.notes.append(f"node inputs captured from the {runs.capture_source}")
    _isolate(nodes, runs.captured or {}, options, progress, result, _StaticSizes(inlined))
    result.nodes += _written_nodes(model, fixed, result.opset)
    for node in result.nodes:
        # Where the node ran in the whole model's built-in run (its inputs were captured there).
        if runs.placed:
            node.executed_in_model = runs.placed.get(node.name)
            node.asked_provider = options.runtime.first
    _end_to_end(model, inlined, resolved.feeds, runs, options, result)
    guarded = [n.name for n in result.nodes if n.nonfinite]
    if guarded and options.guard_cost is not None and not options.nonfinite:
        result.guard_text, result.guard_cost = options.guard_cost(
            model, guarded, resolved.feeds, options.runtime
        )
    return result


def _resolve_inputs(
    model: onnx.ModelProto,
    options: ValidateOptions,
    strict_shapes: bool,
    label: str,
    result: results.ModelResult,
) -> model_inputs.ResolvedInputs:
    """The model's inputs for the runs, named in ``result``."""
    spec = options.inputs or model_inputs.InputSpec.make(options.shapes, options.inputs_path)
    if not strict_shapes:  # several models: each --shape/--inputs name applies where it exists
        spec = spec.only(v.name for v in model_inputs.graph_inputs(model))
    try:
        resolved = model_inputs.resolve(model, spec, options.seed)
    except OrtpoolError as err:
        raise OrtpoolError(f"{label}: {err}") from None
    result.input_source = resolved.source
    result.inputs = resolved.shapes
    result.open_dims = resolved.dims
    result.shape_hint = resolved.shape_hint()
    return resolved


def _pooling_nodes(
    model: onnx.ModelProto,
    inlined: onnx.ModelProto,
    result: results.ModelResult,
    fixed: Mapping[str, fixmarks.FixedNode],
    has_ortpool_ops: bool,
) -> list[capture.PoolingNode]:
    """The pooling nodes of the inlined model but those of fix's forms (``fixed``), those of
    local functions said so; the notes on them (none at all, an empty auto_pad) in ``result``."""
    main_names = {n.name for n in model.graph.node}
    in_forms = {name for f in fixed.values() for name in (f.name, *f.nodes)}

    def in_form(name: str) -> bool:
        # a function body's nodes are inlined as NAME__<k>, one copy per call
        inlined_from = _INLINED.fullmatch(name)
        return name in in_forms or (inlined_from is not None and inlined_from[1] in in_forms
                                    and name not in main_names)

    nodes = [p for p in capture.pooling_nodes(inlined) if not in_form(p.node.name)]
    for i, pooling in enumerate(nodes):
        if (
            pooling.location == "main graph"
            and pooling.node.name not in main_names
            and model.functions
        ):
            nodes[i] = dataclasses.replace(pooling, location="local function (inlined)")
    if not nodes and not fixed and not has_ortpool_ops:
        result.notes.append("the model has no standard pooling node")
    for pooling in nodes:
        note = empty_auto_pad_note(pooling.node, pooling.name)
        if note is not None:
            result.notes.append(note)
    return nodes


def _run_whole(
    model: onnx.ModelProto,
    inlined: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    nodes: list[capture.PoolingNode],
    options: ValidateOptions,
    result: results.ModelResult,
    has_ortpool_ops: bool = False,
) -> _Runs:
    """The built-in run with the nodes' inputs captured, then the rewritten run (capturing them
    there when the built-in run failed). A model holding ortpool ops runs them through ortpool in
    the built-in run too: onnxruntime has no kernel of its own for them."""
    runs = _Runs()

    def builtin_run(m: onnx.ModelProto, f: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        outputs, where = ortrun.run_placed(m, f, options.runtime)
        runs.placed.update(where)
        return outputs

    try:
        if has_ortpool_ops:
            try:
                runs.captured, runs.builtin_outputs = capture.capture(
                    inlined, feeds, nodes, _ortpool_runner(options.runtime)
                )
            except Exception as err:  # the session's errors, sorted as a built-in run's are
                raise ortrun.classify(err, "run") from None
            runs.capture_source = "onnxruntime built-in run (its ortpool ops run by ortpool)"
        else:
            runs.captured, runs.builtin_outputs = capture.capture(
                inlined, feeds, nodes, builtin_run
            )
            runs.capture_source = "onnxruntime built-in run"
    except ortrun.OrtFailure as err:
        runs.builtin_failure = err
        runs.builtin_error = f"onnxruntime could not run the model: {err}"
        result.notes.append(runs.builtin_error)

    rewritten, runs.ortpool_error = _rewrite(model)
    if rewritten is not None:
        run_ours = _ortpool_runner(options.runtime)
        try:
            if runs.captured is None:
                runs.captured, runs.ortpool_outputs = capture.capture(
                    capture.inline_functions(rewritten), feeds, nodes, run_ours
                )
                runs.capture_source = "ortpool-rewritten run (onnxruntime could not run the model)"
            else:
                runs.ortpool_outputs = run_ours(rewritten, feeds)
        except Exception as err:
            runs.ortpool_error = f"the ortpool-rewritten model failed: {err}"
    return runs


def _cannot_capture(
    runs: _Runs,
    nodes: list[capture.PoolingNode],
    resolved: model_inputs.ResolvedInputs,
    label: str,
) -> None:
    """Neither run gave the nodes' inputs: an error when the model has pooling nodes."""
    reason = runs.builtin_error or "onnxruntime could not run the model"
    if runs.ortpool_error:
        reason += f"; {runs.ortpool_error}"
    failure = runs.builtin_failure
    if nodes and failure is not None and failure.kind == ortrun.RUN_FAILED:
        # A model that loads but fails to run is most often failing at the sizes chosen (a
        # Resize, a Concat of two branches that need others): which sizes, how to set them.
        raise resolved.cannot_run(label, str(failure))
    if nodes:
        raise OrtpoolError(f"{label}: {reason}")


def _isolate(
    nodes: list[capture.PoolingNode],
    captured: Mapping[str, np.ndarray],
    options: ValidateOptions,
    progress: Progress | None,
    result: results.ModelResult,
    sizes: _StaticSizes | None = None,
) -> None:
    """Each node alone on its captured inputs (a node inside a subgraph on the built cases at
    its static size, ``sizes``), into ``result.nodes``."""
    worker = ReferenceWorker(options.reference_timeout) if options.reference else None
    try:
        for i, pooling in enumerate(nodes):
            if progress:
                progress(i, len(nodes), pooling.name)
            result.nodes.append(_node(pooling, result.opset, captured, options, worker, sizes))
        if progress:
            progress(len(nodes), len(nodes), "")
    finally:
        if worker is not None:
            worker.close()


def _end_to_end(
    model: onnx.ModelProto,
    inlined: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    runs: _Runs,
    options: ValidateOptions,
    result: results.ModelResult,
) -> None:
    """The graph outputs of the two runs compared, or why they were not."""
    if runs.builtin_outputs is not None and runs.ortpool_outputs is not None:
        other_level = ISOLATED_LEVEL if options.runtime.level != ISOLATED_LEVEL else DEFAULT_LEVEL
        result.end_to_end = "compared"
        result.outputs = endtoend.compare_outputs(
            [o.name for o in model.graph.output],
            runs.builtin_outputs,
            runs.ortpool_outputs,
            options.atol,
            options.rtol,
            endtoend.note_allowance(result.nodes),
            endtoend.half_roundings(inlined),
            options.accuracy.half_ulps,
        )
        endtoend.measure_noise(
            result.outputs,
            runs.builtin_outputs,
            lambda: ortrun.run_builtin(inlined, feeds, options.runtime.with_level(other_level)),
        )
        if any(o.failing for o in result.outputs) and not any(
            n.failing or n.status in (results.RULINGS, results.NOT_ISOLATED) for n in result.nodes
        ):
            result.notes.append(
                "graph outputs differ although every isolated pooling node agrees: the difference "
                "arises outside the pooling nodes' own results (e.g. onnxruntime's float16 "
                "fallback computes a node in float32 and removes the Cast round trip after it, "
                "skipping the rounding the graph asks for)"
            )
    elif (
        runs.builtin_failure is not None
        and runs.builtin_failure.kind != ortrun.NO_KERNEL
        and runs.ortpool_outputs is not None
    ):
        # The rewritten model differs from the original in its pooling nodes only: if it runs
        # where onnxruntime fails (a missing kernel aside, reported per node), the pools are why.
        result.run_differs = True
        result.end_to_end = f"only the ortpool-rewritten model runs; {runs.builtin_error}"
    else:
        result.end_to_end = "not compared: " + "; ".join(
            r for r in (runs.builtin_error, runs.ortpool_error) if r
        )


def _node(
    pooling: capture.PoolingNode,
    opset: int,
    captured: Mapping[str, np.ndarray],
    options: ValidateOptions,
    worker: ReferenceWorker | None,
    sizes: _StaticSizes | None = None,
) -> results.NodeResult:
    node = pooling.node
    attrs = attribute_dict(node.attribute)
    spec = NodeSpec(
        node.op_type, opset, attrs, len(pooling.inputs), len([o for o in node.output if o])
    )
    try:
        spec_version = spec.spec.version
    except ValueError as err:
        return _unrunnable(pooling, opset, attrs, results.BOTH_REJECTED, str(err))
    if not pooling.isolatable:
        found = sizes.site(pooling) if sizes is not None else None
        judged = _judged_alone(pooling, spec, found, options) if found is not None else None
        if judged is not None:  # as fix judges it: the built cases at its static size
            return judged
        return _unrunnable(
            pooling,
            opset,
            attrs,
            results.NOT_ISOLATED,
            f"inside a {pooling.location}: its input changes per iteration/branch and its size "
            "is not static; covered by the end-to-end comparison only",
            spec_version,
        )
    missing = [name for name in pooling.inputs if name not in captured]
    if missing:
        return _unrunnable(
            pooling,
            opset,
            attrs,
            results.NOT_ISOLATED,
            f"input {missing[0]!r} could not be captured",
            spec_version,
        )
    feeds = [captured[name] for name in pooling.inputs]
    result = isolate.run_node(pooling.name, spec, feeds, options, pooling.location)
    _judge(pooling, spec, feeds, options, result)
    if sizes is not None:
        _judge_at_spec_size(pooling, spec, feeds, sizes, options, result)
    if worker is not None and result.ortpool_outputs is not None:
        result.reference = _reference(worker, spec, feeds, result, bool(attrs.get("ceil_mode")))
    return result


#: statuses the engine's judgement decides: a node the model's own run found agreeing (or only
#: noted) is a difference when a built case of the domain shows one
_JUDGED = (results.AGREE, results.TIES, results.ACCURACY_NOTE)


def _judge(
    pooling: capture.PoolingNode,
    spec: NodeSpec,
    feeds: list[np.ndarray],
    options: ValidateOptions,
    result: results.NodeResult,
) -> None:
    """The node judged by the engine ``fix`` decides with (:func:`ortpool.check.judge.
    judge_node`) on its captured inputs and the built cases of the domain at the captured size:
    where the model's own run found it agreeing but a built case differs, it differs (what
    ``fix`` would rewrite). In the finite domain the non-finite cases are run as well, and what
    they show is kept as information (``result.nonfinite``)."""
    result.domain = domain.name(options.nonfinite)
    if result.status not in _JUDGED or not feeds or feeds[0].dtype.kind not in "fiu":
        return
    try:
        facts = from_spec(spec, feeds, indices_used=_indices_used(pooling))
    except (OrtpoolError, ValueError):
        return
    extra = feeds[2] if spec.op == "MaxUnpool" and len(feeds) > 2 else None
    _record(result, *_verdict(pooling, facts, [feeds], [feeds[0].shape], options, extra))


def _verdict(
    pooling: capture.PoolingNode,
    facts: NodeFacts,
    captured: list[list[np.ndarray]],
    shapes: Sequence[Sequence[int]],
    options: ValidateOptions,
    extra: np.ndarray | None = None,
    information: bool = True,
) -> tuple[str | None, str | None]:
    """The engine's judgement of ``facts`` (:func:`ortpool.check.judge.judge_node`) on
    ``captured`` (the node's real inputs; none for a node inside a subgraph) and the domain's
    built cases at ``shapes`` (X's; ``extra``: MaxUnpool's output_shape): "" where exact, where
    it is not, or None when the spec refuses every set (a size the geometry cannot pool). With
    ``information``, in the finite domain and where exact, also what the non-finite domain
    shows: "" or where it differs (None: not run)."""
    runtime, rule = options.runtime, options.accuracy
    sets = expect(node_spec(facts), proof_sets(
        facts, shapes, captured=captured, seed=options.seed,
        nonfinite=options.nonfinite, output_shape=extra,
    ))
    if not sets:
        return None, None
    proof = judge_node(facts, pooling.node, sets, runtime, rule)
    if not proof.exact:
        return proof.failure, None
    if not information or options.nonfinite or facts.elem not in FLOATS:
        return "", None
    # the finite cases passed above, so what the non-finite domain's sets show is theirs
    wider = expect(node_spec(facts), proof_sets(
        facts, shapes, seed=options.seed, nonfinite=True, output_shape=extra,
    ))
    info = judge_node(facts, pooling.node, wider, runtime, rule)
    return "", "" if info.exact else info.failure


def _record(result: results.NodeResult, failure: str | None, information: str | None) -> None:
    """A :func:`_verdict` in ``result``: a built case that differs makes the node differ."""
    if failure is None:
        return
    result.judged, result.nonfinite = failure, information
    if failure:
        result.status = results.DIFFER
        result.causes.append(Cause(BUILT_CASE, failure))


def _attribute_causes(spec: NodeSpec, facts: NodeFacts, shape: Sequence[int]) -> list[Cause]:
    """What a window op's attributes show at ``shape`` (SAME with dilation, VALID with
    ceil_mode...), for a node judged on built cases only."""
    if not facts.windowed:
        return []
    named = causes_mod.recognise(spec.op, facts.attrs, list(shape[2:]), differs=True)
    return [c for c in named if c.code != causes_mod.UNRECOGNISED]


def _judge_at_spec_size(
    pooling: capture.PoolingNode,
    spec: NodeSpec,
    feeds: list[np.ndarray],
    sizes: _StaticSizes,
    options: ValidateOptions,
    result: results.NodeResult,
) -> None:
    """Where an upstream node onnxruntime gets wrong gives this node another size than the spec
    does (its captured input is onnxruntime's), the node is judged at the spec's size too: the
    size it sees once the model is fixed, the one ``fix`` proves it at."""
    if result.status not in _JUDGED:
        return
    found = sizes.site(pooling)
    if found is None or found[1] is None:
        return
    spatial = found[1][2:]
    if None in spatial or tuple(spatial) == tuple(feeds[0].shape[2:]):
        return
    shape = (*feeds[0].shape[:2], *spatial)
    try:
        facts = from_dims(spec, dtypes.name_of(feeds[0].dtype), shape, _indices_used(pooling))
    except (OrtpoolError, ValueError):
        return
    failure, _ = _verdict(pooling, facts, [], [shape], options, information=False)
    if failure:
        result.status = results.DIFFER
        result.judged = failure
        result.causes += _attribute_causes(spec, facts, shape)
        result.causes.append(Cause(
            BUILT_CASE,
            f"at X {list(shape)}, the size the spec's upstream nodes give it (onnxruntime's run "
            f"gives {list(feeds[0].shape)}; fix proves it there): {failure}",
        ))


def _judged_alone(
    pooling: capture.PoolingNode, spec: NodeSpec, found: _Site, options: ValidateOptions
) -> results.NodeResult | None:
    """A node inside a subgraph (its input changes per branch or iteration, so the model's run
    gives none to capture) judged as ``fix`` judges it (:func:`ortpool.fix.inputs.site_sets`),
    by :func:`ortpool.check.judge.judge_node`: on the built cases of the domain at its static
    size, or at the sizes :func:`ortpool.check.cases.sampled_shapes` gives where its size is
    symbolic. None: not judged (the spec's attributes refused, no size to build at)."""
    elem, dims = found
    try:
        facts = from_dims(spec, elem, dims, _indices_used(pooling))
    except (OrtpoolError, ValueError):
        return None
    shape = full_shape(facts, dims)
    shapes = [shape] if shape is not None else sampled_shapes(facts)
    if not shapes:
        return None
    sizes = "its static size" if shape is not None else "sampled sizes (its size is symbolic)"
    result = results.NodeResult(
        name=pooling.name,
        op=spec.op,
        spec_version=spec.spec.version,
        opset=spec.opset,
        dtype=elem,
        attributes=dict(spec.attributes),
        input_shapes=[list(shapes[0])],
        status=results.AGREE,
        location=pooling.location,
        message=f"inside a {pooling.location}: judged on the built cases at {sizes} "
        f"{', '.join(str(list(x)) for x in shapes[:3])}{' ...' if len(shapes) > 3 else ''} (its "
        "input changes per iteration/branch: none is captured)",
    )
    result.domain = domain.name(options.nonfinite)
    _record(result, *_verdict(pooling, facts, [], shapes, options))
    if result.status == results.DIFFER and shape is not None:
        result.causes[:0] = _attribute_causes(spec, facts, shape)
    return result


class _StaticSizes:
    """The element type and static input dims of pooling nodes, as onnx shape inference with
    the spec's pool sizes gives them (:func:`ortpool.model.inference.learn_shapes`, the sizes
    ``fix`` proves nodes at), learned on first use."""

    def __init__(self, model: onnx.ModelProto):
        self.model = model
        self._table: TypeTable | None = None
        #: a node's scope by its first output (one writer per value name)
        self._scopes: dict[str, Scope] = {}

    def site(self, pooling: capture.PoolingNode) -> _Site | None:
        """X's element type and dims (None for a size that is not static, or not 1 or more: an
        empty map is no size to build cases at; dims None where the rank is unknown), or None:
        a node of more than one input (rois and indices are data) or of unknown type."""
        node = pooling.node
        if len(pooling.inputs) != 1 or not node.output:
            return None
        if self._table is None:
            self._table = learn_shapes(self.model)
            self._scopes = {n.output[0]: scope for scope in model_scopes(self.model)
                            for n in scope.nodes if n.output}
        scope = self._scopes.get(node.output[0])
        found = self._table.lookup(scope, node.input[0]) if scope is not None else None
        elem = dtypes.NAME_OF_CODE.get(found.elem_type) if found is not None else None
        if elem is None or elem not in dtypes.NUMPY:
            return None
        dims = found.static_dims
        if dims is None or len(dims) < 3:
            return elem, None
        spatial = (d if isinstance(d, int) and d >= 1 else None for d in dims[2:])
        return elem, (*dims[:2], *spatial)


def _indices_used(pooling: capture.PoolingNode) -> bool:
    """Whether the node writes its Indices output (validate compares what the node gives)."""
    return len([o for o in pooling.node.output if o]) > 1


def _reference(
    worker: ReferenceWorker,
    spec: NodeSpec,
    feeds: list[np.ndarray],
    result: results.NodeResult,
    ceil_mode: bool,
) -> results.ReferenceResult:
    """The onnx reference evaluator's answer for the node, judged against ortpool's."""
    status, payload, seconds = worker.run(
        builtin_model(spec, feeds).SerializeToString(), feed_dict(feeds)
    )
    if status == "ok":
        reference = reference_mod.judge(
            spec.op,
            feeds,
            payload,
            result.ortpool_outputs,
            result.nan_cells,
            result.tolerance,
            ceil_mode=ceil_mode,
        )
    else:
        reference = results.ReferenceResult(
            status,
            str(payload),
            defects=reference_mod.error_defects(spec.op, len(feeds), str(payload)),
        )
    reference.seconds = round(seconds, 3)
    return reference


def _written_nodes(
    model: onnx.ModelProto, fixed: Mapping[str, fixmarks.FixedNode], opset: int
) -> list[results.NodeResult]:
    """In the model's order, one result per node fix wrote as a standard-op form (``fixed``,
    with the form) and per node of the ortpool domain (:func:`_ortpool_node`)."""
    found = []
    for scope in model_scopes(model):
        for node in scope.nodes:
            entry = fixed.get(node.name)
            if node.domain == optypes.DOMAIN:
                found.append(_ortpool_node(node, opset, scope.location))
            if entry is None or node.domain == optypes.DOMAIN:
                continue
            op, _, version = entry.op.rpartition("-")
            found.append(results.NodeResult(
                name=node.name,
                op=op or entry.op,
                spec_version=int(version) if version.isdigit() else 0,
                opset=opset,
                dtype="?",
                attributes=attribute_dict(node.attribute) if node.op_type == op else {},
                input_shapes=[],
                status=results.FIXED,
                location=scope.location,
                message=f"fixed: form {entry.form} ('ortpool fix' proved it exact and wrote it "
                f"as {len(entry.nodes) + 1} node(s); the form's own pools are not nodes to "
                "validate)",
            ))
    return found


def _ortpool_node(node: onnx.NodeProto, opset: int, location: str) -> results.NodeResult:
    """A node of the ortpool domain: it runs ortpool's kernel, the spec's result; onnxruntime
    has no kernel of its own to compare with, which is no difference."""
    op, version, attributes = node.op_type, 0, {}
    try:
        op_type = optypes.parse(node.op_type)
        op, version = op_type.spec.op, op_type.spec.version
        attributes = standard_attributes(
            op_type.spec, normalize(op_type.spec, attribute_values(node.attribute))
        )
    except (ValueError, OrtpoolError):  # not one ortpool registers: the session says so
        pass
    return results.NodeResult(
        name=node.name or node.op_type,
        op=op,
        spec_version=version,
        opset=opset,
        dtype="?",
        attributes=attributes,
        input_shapes=[],
        status=results.ORTPOOL_OP,
        location=location,
        message=f"ortpool op {node.op_type}: runs ortpool's kernel (nothing built-in to compare "
        "it with)",
    )


def _unrunnable(
    pooling: capture.PoolingNode,
    opset: int,
    attrs: dict,
    status: str,
    message: str,
    spec_version: int = 0,
) -> results.NodeResult:
    return results.NodeResult(
        name=pooling.name,
        op=pooling.node.op_type,
        spec_version=spec_version,
        opset=opset,
        dtype="?",
        attributes=attrs,
        input_shapes=[],
        status=status,
        location=pooling.location,
        message=message,
    )


def bundled_models_dir() -> Path:
    """ortpool/models/: the models shipped as package data, wherever the package is installed.

    In the repository they are the top-level models/, mapped to the package ``ortpool.models``
    (pyproject.toml), so the editable installation finds them there and a wheel in ortpool/.
    """
    try:
        folder = importlib.resources.files("ortpool.models")
    except ModuleNotFoundError:  # an installation made without them, or an editable one made
        # before pyproject.toml mapped models/ (its finder knows only the packages of its day)
        raise OrtpoolError(
            "no bundled models: the package ortpool.models is not installed (in a checkout of "
            "the repository, rerun `pip install -e .`), or name the models to validate"
        ) from None
    if not isinstance(folder, Path):  # a zipped installation: onnxruntime needs real files
        raise OrtpoolError(
            f"the bundled models are not files on disk ({folder}): name the models to validate"
        )
    return folder


def bundled_models() -> list[Path]:
    folder = bundled_models_dir()
    found = sorted(folder.glob("*.onnx")) if folder.is_dir() else []
    if not found:
        raise OrtpoolError(
            f"no bundled models: {folder} holds no .onnx file (run scripts/make_models.py in a "
            "checkout of the repository, or name the models to validate)"
        )
    return found
