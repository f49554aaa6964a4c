"""``validate_model``: one model, per pooling node in isolation and end to end.

The model runs once on the runtime judged with every pooling node's inputs as extra outputs; each
node is judged by the engine on those inputs and the domain's built cases (:func:`judge_site`);
the rewritten model's graph outputs are compared with the built-in run's (:mod:`.endtoend`). A
model ``ortpool fix`` wrote is judged as its forms stand (:mod:`ortpool.model.fixmarks`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.resources
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx

from ortpool import dtypes, modelfile, optypes, runtimes
from ortpool.attributes import (
    attribute_values,
    empty_auto_pad_note,
    normalize,
    standard_attributes,
)
from ortpool.check import causes as causes_mod
from ortpool.check import domain
from ortpool.check import status as st
from ortpool.check.cases import CAPTURED, FeedSet, full_shape, proof_sets, sampled_shapes
from ortpool.check.causes import Cause
from ortpool.check.judge import Judgement, judge
from ortpool.dtypes import FLOATS
from ortpool.errors import OrtpoolError
from ortpool.forms.price import guard_price
from ortpool.forms.prove import recorded_regions
from ortpool.model import capture, fixmarks
from ortpool.model import inputs as model_inputs
from ortpool.model.scopes import function_label, model_scopes, shadowing_function, text, walk
from ortpool.model.singlenode import region_model
from ortpool.model.site import Site, find_sites
from ortpool.options.target import DEFAULT_CASE_TIMEOUT
from ortpool.options.timing import NODE_REFERENCE_TIMEOUT
from ortpool.ort import DEFAULT_LEVEL, ISOLATED_LEVEL, RuntimeSpec, open_session, ortrun
from ortpool.ort.nodes import iter_ortpool_nodes
from ortpool.ort.runtime_spec import run_arrays
from ortpool.report import record as results
from ortpool.report.progress import Progress
from ortpool.runtimes.base import TIMED_OUT, Runtime, RuntimeFailure, Worker
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule
from ortpool.validate import endtoend

#: The name onnx's inliner gives a function body's node in its k-th call (a suffix added where
#: the model's graphs bear that name already).
_INLINED = re.compile(r"(.+)__\d+(?:_\d+)*")
#: Where such a copy is reported.
_INLINED_LOCATION = "local function (inlined)"


@dataclasses.dataclass
class ValidateOptions:
    """How ``validate`` runs and judges a model."""

    #: onnxruntime's session options (default: the CPU provider, optimizations off)
    runtime: RuntimeSpec = dataclasses.field(
        default_factory=lambda: RuntimeSpec(level=ISOLATED_LEVEL))
    #: ruling 17's thresholds for averages and norms, with the graph outputs' atol and rtol
    accuracy: AccuracyRule = DEFAULT_RULE
    seed: int = 0
    #: the model's inputs: sizes and arrays (``--shape``, ``--inputs``)
    inputs: model_inputs.InputSpec = dataclasses.field(default_factory=model_inputs.InputSpec)
    reference: bool = False
    reference_timeout: float = NODE_REFERENCE_TIMEOUT
    #: the input domain (ruling 20): False, finite inputs (the default); True, NaN and +-inf too
    nonfinite: bool = False
    #: in the finite domain, measure what guarding the nodes that differ on non-finite inputs
    #: only costs (:func:`ortpool.forms.price.guard_price`; onnxruntime only)
    guard_cost: bool = True
    #: the runtime judged when not onnxruntime: the model runs and each node is judged on it, in
    #: a worker process, ``case_timeout`` seconds a run; onnxruntime runs ortpool's ops end to end
    target: Runtime | None = None
    case_timeout: float = DEFAULT_CASE_TIMEOUT


def load_model(path: str | Path) -> onnx.ModelProto:
    """An ONNX model with its weights; anything unreadable is an OrtpoolError with the reason."""
    return modelfile.read(path, load_external_data=True)


def _rewrite(model: onnx.ModelProto) -> tuple[onnx.ModelProto | None, str]:
    from ortpool.rewrite import rewrite

    try:
        return rewrite(model), ""
    except (OrtpoolError, ValueError) as err:
        return None, f"ortpool could not rewrite the model: {err}"


def _ortpool_runner(runtime: RuntimeSpec):
    """The rewritten model's run, at the built-in run's level: otherwise only one side's
    convolutions are fused, which alone moves a deep network's outputs by float noise."""

    def run(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        session = open_session(runtime, model)
        return ortrun.as_arrays(run_arrays(session, None, feeds))

    return run


@dataclasses.dataclass
class _Runs:
    """The model's two runs: each one's outputs or why none, and the nodes' captured inputs."""

    captured: dict[str, np.ndarray] | None = None
    capture_source: str = ""
    builtin_outputs: list[np.ndarray] | None = None
    builtin_error: str = ""
    builtin_failure: ortrun.OrtFailure | None = None
    ortpool_outputs: list[np.ndarray] | None = None
    ortpool_error: str = ""
    #: whether ortpool could rewrite the model (it refuses no node's attributes)
    rewritten: bool = False
    #: node name -> the provider that executed it in the built-in run
    placed: dict[str, str] = dataclasses.field(default_factory=dict)


def validate_model(source: str | Path | onnx.ModelProto, options: ValidateOptions | None = None,
                   progress: Progress | None = None, strict_shapes: bool = True,
                   label: str | None = None) -> results.ModelResult:
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
    if (shadowing := shadowing_function(model)) is not None:
        # the node inputs are captured from the inlined model: it would run another model
        raise OrtpoolError(
            f"{label}: the model's local function {function_label(shadowing)!r} is named like "
            f"the standard operator {shadowing.name} of ai.onnx: onnx's inliner runs the "
            "function for its nodes, onnxruntime the operator; rename the function or give it "
            "a domain of its own")
    inlined = capture.inline_functions(model)
    fixed, fix_notes = fixmarks.read(model)
    result.notes.extend(fix_notes)
    ours = list(iter_ortpool_nodes(model))
    regions = recorded_regions(model, fixed, result.notes, options.nonfinite, options.seed,
                               options.accuracy)
    sites = _sites(model, inlined, result, fixed, bool(ours))
    main = [r for _, r in regions if r.in_main_graph]
    with (Worker(options.target, options.case_timeout) if options.target
          else contextlib.nullcontext()) as worker:
        judged_on = worker or options.runtime
        runs = _run_whole(model, inlined, resolved.feeds, [*sites, *main], options, result,
                          bool(ours), worker)
        result.runtime = worker.runtime.title() if worker else options.runtime.title()
        if runs.captured is None:
            # an ortpool op or a form fix wrote is judged as a pooling node is: neither run
            # means nothing of it was (a model with no pooling node at all has nothing to judge)
            _cannot_capture(runs, bool(sites or regions or ours), resolved, label)
        elif sites or regions:
            result.notes.append(f"node inputs captured from the {runs.capture_source}")
        captured = runs.captured or {}
        _judge_all(sites, captured, options, progress, result, judged_on)
        _fixed_alone(model, result.nodes, fixed)
        result.nodes += [_judge_region(model, entry, r, captured, options, judged_on)
                         for entry, r in regions]
    result.nodes += [_ortpool_node(node, result.opset, scope.location)
                     for scope in model_scopes(model) for node in scope.nodes
                     if node.domain == optypes.DOMAIN]
    if runs.placed:  # where each node ran in the whole model's run (its inputs came from there)
        for node in result.nodes:
            node.executed_in_model = runs.placed.get(node.name)
            node.asked_provider = options.runtime.first
    _end_to_end(model, inlined, resolved.feeds, runs, options, result)
    guarded = [n for n in result.nodes if n.nonfinite and n.site is not None
               and n.site.in_main_graph]
    if guarded and options.guard_cost and not options.nonfinite and options.target is None:
        proven = {n.name: n.nonfinite_sets for n in guarded if n.nonfinite_sets}
        price = guard_price(inlined, [n.site for n in guarded], resolved.feeds, options.runtime,
                            proven=proven)
        result.guard_text, result.guard_cost = price.text(), dataclasses.asdict(price)
        result.guard_detail = price.text(verbose=True)
    for node in result.nodes:  # the price has had them: a report must not hold every set's arrays
        node.nonfinite_sets = None
    return result


def _resolve_inputs(model: onnx.ModelProto, options: ValidateOptions, strict_shapes: bool,
                    label: str, result: results.ModelResult) -> model_inputs.ResolvedInputs:
    """The model's inputs for the runs, named in ``result``."""
    spec = options.inputs
    if not strict_shapes:  # several models: each --shape/--inputs name applies where it exists
        spec = spec.only(v.name for v in model_inputs.graph_inputs(model))
    try:
        resolved = model_inputs.resolve(model, spec, options.seed)
    except OrtpoolError as err:
        raise OrtpoolError(f"{label}: {err}") from None
    result.input_source, result.inputs = resolved.source, resolved.shapes
    result.open_dims, result.shape_hint = resolved.dims, resolved.shape_hint()
    return resolved


def _sites(model: onnx.ModelProto, inlined: onnx.ModelProto, result: results.ModelResult,
           fixed: Mapping[str, fixmarks.FixedNode], has_ortpool_ops: bool) -> list[Site]:
    """The pooling sites of the inlined model but the nodes of fix's forms (judged as regions);
    the notes on them (none at all, an empty auto_pad) in ``result``."""
    # a name the graphs bear, a subgraph's included, is never an inlined copy's
    graph_names = {text(n.name) for n in walk(model.graph.node)}
    # the nodes of a form of several nodes are judged together, as a region: a node of the
    # form's own scope, never another's of the same name
    in_forms = {(f.scope, name) for f in fixed.values() if f.nodes for name in (f.name, *f.nodes)}
    in_functions = {name for f in fixed.values() if f.nodes and f.in_function
                    for name in (f.name, *f.nodes)}

    def in_form(site: Site) -> bool:
        # a function body's nodes are inlined as NAME__<k>, one copy per call
        name = text(site.node.name)
        inlined_from = _INLINED.fullmatch(name)
        return (site.location, name) in in_forms or (
            inlined_from is not None and inlined_from[1] in in_functions
            and name not in graph_names)

    found, notes = find_sites(inlined, skip_invalid=True)
    result.notes.extend(notes)
    sites = []
    for site in found:
        if in_form(site):
            continue
        if site.in_main_graph and text(site.node.name) not in graph_names and model.functions:
            site = dataclasses.replace(site, location=_INLINED_LOCATION)
        sites.append(site)
        if (note := empty_auto_pad_note(site.node, site.name)) is not None:
            result.notes.append(note)
    if not sites and not fixed and not has_ortpool_ops:
        result.notes.append("the model has no standard pooling node")
    return sites


def _fixed_alone(model: onnx.ModelProto, nodes: list[results.NodeResult],
                 fixed: Mapping[str, fixmarks.FixedNode]) -> None:
    """A form fix wrote without inserting a node (explicit pads) is the node itself: where it
    agrees, it is reported as fixed (under the function's node name in an inlined copy, in the
    main graph or a subgraph: a name no graph of ``model`` bears)."""
    graph_names = {text(n.name) for n in walk(model.graph.node)}
    alone = {(f.scope, f.name): f for f in fixed.values() if not f.nodes}
    in_functions = {f.name: f for f in alone.values() if f.in_function}
    for node in nodes:
        inlined_from = _INLINED.fullmatch(node.name)
        entry = alone.get((node.location, node.name)) or (
            in_functions.get(inlined_from[1])
            if inlined_from and node.name not in graph_names else None)
        if entry is None or node.status not in results.AGREEING:
            continue
        node.name, node.status = entry.name, results.FIXED
        proof = node.judgement.describe() if node.judgement is not None else "exact"
        node.message = (f"fixed: form {entry.form} (the node with its attributes rewritten), "
                        f"judged as it stands: {proof}")


def _judge_region(model: onnx.ModelProto, entry: fixmarks.FixedNode, site: Site,
                  captured: Mapping[str, np.ndarray], options: ValidateOptions,
                  on: RuntimeSpec | Worker) -> results.NodeResult:
    """A form fix wrote, judged as it stands against the spec it claims; FIXED where exact."""
    holder = site.scope.holder if site.scope is not None else None
    outputs = list(site.compared_outputs)

    def build(example: Sequence[np.ndarray]) -> onnx.ModelProto:
        return region_model(model, list(site.inputs), outputs, example, holder)

    feeds = [captured.get(name) for name in site.inputs]
    if site.in_main_graph and all(f is not None for f in feeds):
        x = feeds[0]
        sized = site.at(x.shape, elem=dtypes.name_of(x.dtype))
        sets = _built_sets(sized, [x.shape], options, feeds)
    else:
        # inside a subgraph (its input changes per branch or iteration), or not captured (a
        # bfloat16 tensor): the built cases at its static size, or at sampled sizes
        shape = full_shape(site) if site.elem else None
        shapes = [shape] if shape is not None else sampled_shapes(site) if site.elem else []
        if not shapes:
            return _record(site, Judgement(status=results.NOT_COMPARED, failure=(
                f"fixed: form {entry.form} in the {site.location}: its input's type and size "
                "are not known; covered by the end-to-end comparison only")), options)
        sized = site.at(shape) if shape is not None else site
        sets = _built_sets(sized, shapes, options)
    judgement = judge(sized, sets, on, options.accuracy, build=build)
    node = _record(sized, judgement, options)
    if judgement.exact:
        node.status = results.FIXED
        node.message = (f"fixed: form {entry.form} ({len(entry.nodes) + 1} node(s)), judged as "
                        f"it stands: {judgement.describe()}")
    return node


def _run_whole(model: onnx.ModelProto, inlined: onnx.ModelProto, feeds: Mapping[str, np.ndarray],
               sites: Sequence[Site], options: ValidateOptions, result: results.ModelResult,
               has_ortpool_ops: bool = False, worker: Worker | None = None) -> _Runs:
    """The built-in run with the nodes' inputs captured, then the rewritten run (capturing them
    there when the built-in run failed); a model's own ortpool ops run through ortpool."""
    runs = _Runs()
    name = worker.runtime.name if worker is not None else "onnxruntime"

    def builtin_run(m: onnx.ModelProto, f: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        if worker is not None:
            try:
                return worker.run(m.SerializeToString(), dict(f))
            except RuntimeFailure as err:  # sorted as onnxruntime's failures are, a time-out
                # kept apart (the run outlasted --case-timeout: no sign of any difference)
                kind = err.kind if err.kind in (ortrun.NO_KERNEL, TIMED_OUT) else ortrun.RUN_FAILED
                raise ortrun.OrtFailure(kind, str(err)) from None
        outputs, where = ortrun.run_placed(m, f, options.runtime)
        runs.placed.update(where)
        return outputs

    try:
        if has_ortpool_ops:
            try:
                runs.captured, runs.builtin_outputs = capture.capture(
                    inlined, feeds, sites, _ortpool_runner(options.runtime))
            except Exception as err:  # the session's errors, sorted as a built-in run's are
                raise ortrun.classify(err, "run") from None
            runs.capture_source = "onnxruntime built-in run (its ortpool ops run by ortpool)"
        else:
            runs.captured, runs.builtin_outputs = capture.capture(inlined, feeds, sites,
                                                                  builtin_run)
            runs.capture_source = f"{name} built-in run"
    except ortrun.OrtFailure as err:
        runs.builtin_failure = err
        runs.builtin_error = f"{name} could not run the model: {err}"
        result.notes.append(runs.builtin_error)

    rewritten, runs.ortpool_error = _rewrite(model)
    runs.rewritten = rewritten is not None
    if rewritten is not None:
        run_ours = _ortpool_runner(options.runtime)
        try:
            if runs.captured is None:
                runs.captured, runs.ortpool_outputs = capture.capture(
                    capture.inline_functions(rewritten), feeds, sites, run_ours)
                runs.capture_source = f"ortpool-rewritten run ({name} could not run the model)"
            else:
                runs.ortpool_outputs = run_ours(rewritten, feeds)
        except Exception as err:
            runs.ortpool_error = f"the ortpool-rewritten model failed: {err}"
    return runs


def _cannot_capture(runs: _Runs, has_nodes: bool, resolved: model_inputs.ResolvedInputs,
                    label: str) -> None:
    """Neither run gave the nodes' inputs: an error when the model has pooling nodes."""
    if not has_nodes:
        return
    failure = runs.builtin_failure
    if failure is not None and failure.kind == ortrun.RUN_FAILED and runs.rewritten:
        # a model that loads but fails to run most often fails at the sizes chosen: say them
        # (not where ortpool refuses a node's attributes, which a runtime may crash on: k=0)
        raise resolved.cannot_run(label, str(failure))
    reason = runs.builtin_error or "onnxruntime could not run the model"
    if runs.ortpool_error:
        reason += f"; {runs.ortpool_error}"
    raise OrtpoolError(f"{label}: {reason}")


def _end_to_end(model: onnx.ModelProto, inlined: onnx.ModelProto,
                feeds: Mapping[str, np.ndarray], runs: _Runs, options: ValidateOptions,
                result: results.ModelResult) -> None:
    """The graph outputs of the two runs compared, or why they were not."""
    if runs.builtin_outputs is not None and runs.ortpool_outputs is not None:
        other_level = ISOLATED_LEVEL if options.runtime.level != ISOLATED_LEVEL else DEFAULT_LEVEL
        # a label (a string tensor) or ZipMap's maps has no element type to compare values of
        pairs = zip(runs.builtin_outputs, runs.ortpool_outputs, strict=True)
        numeric = [i for i, pair in enumerate(pairs)
                   if all(np.asarray(a).dtype in dtypes.NUMPY.values() for a in pair)]
        if len(numeric) < len(model.graph.output):
            names = [repr(o.name) for i, o in enumerate(model.graph.output) if i not in numeric]
            result.notes.append(f"graph output{'s' * (len(names) > 1)} {', '.join(names)} not "
                                "compared end to end: only numeric tensors are")
        result.end_to_end = "compared" if numeric else "not compared: no output is a numeric tensor"

        def pick(arrays: Sequence) -> list:
            return [arrays[i] for i in numeric]

        result.outputs = endtoend.compare_outputs(
            pick([o.name for o in model.graph.output]), pick(runs.builtin_outputs),
            pick(runs.ortpool_outputs), options.accuracy.atol, options.accuracy.rtol,
            endtoend.note_allowance(result.nodes), endtoend.half_roundings(inlined),
            options.accuracy.half_ulps)
        if options.target is None:  # onnxruntime's own noise, at its other level
            endtoend.measure_noise(result.outputs, pick(runs.builtin_outputs), lambda: pick(
                ortrun.run_builtin(inlined, feeds, options.runtime.with_level(other_level))))
        if any(o.failing for o in result.outputs) and not any(
            n.failing or n.status in (results.RULINGS, results.NOT_COMPARED) for n in result.nodes
        ):
            result.notes.append(
                "graph outputs differ although every isolated pooling node agrees: the difference "
                "arises outside the pooling nodes' own results (e.g. onnxruntime's float16 "
                "fallback computes a node in float32 and removes the Cast round trip after it, "
                "skipping the rounding the graph asks for)")
    elif (options.target is None and runs.builtin_failure is not None
          and runs.builtin_failure.kind != ortrun.NO_KERNEL and runs.ortpool_outputs is not None):
        # the two models differ in their pools only: if the rewritten one runs where onnxruntime
        # fails (a missing kernel aside, reported per node), the pools are why. Not so for
        # another runtime (the rewritten model runs on onnxruntime): its crash, refusal or
        # time-out may be any op's, and a pooling node it fails on is reported on its own
        result.run_differs = True
        result.end_to_end = f"only the ortpool-rewritten model runs; {runs.builtin_error}"
    else:
        result.end_to_end = "not compared: " + "; ".join(
            r for r in (runs.builtin_error, runs.ortpool_error) if r)


def _judge_all(sites: Sequence[Site], captured: Mapping[str, np.ndarray],
               options: ValidateOptions, progress: Progress | None, result: results.ModelResult,
               on: RuntimeSpec | Worker) -> None:
    """Each site judged (:func:`judge_site`), the reference evaluator's opinion where asked."""
    with (Worker(runtimes.get("reference"), options.reference_timeout) if options.reference
          else contextlib.nullcontext()) as worker:
        for i, site in enumerate(sites):
            if progress:
                progress(i, len(sites), site.name)
            node = judge_site(site, captured, options, on)
            if worker is not None and node.judgement is not None and node.site is not None:
                observed = node.judgement.captured
                node.reference = reference(worker, node.site, observed) if (
                    observed is not None) else results.ReferenceResult(
                        "skipped", "no captured input with the spec's outputs")
            result.nodes.append(node)
        if progress:
            progress(len(sites), len(sites), "")


def reference(worker: Worker, site: Site, feed: object) -> results.ReferenceResult:
    """The onnx reference evaluator's answer on ``feed`` (the node's captured set, observed),
    judged by the engine against the spec's in a worker with a time limit (it loops in Python),
    with its causes, as ``--runtime reference`` names them (its known readings: NaN dropped,
    LpPool's border windows rescaled, MaxUnpool's ``output_shape`` zero-extended, ceil_mode with
    auto_pad refused, no implementation)."""
    started = time.perf_counter()
    judgement = judge(site, [feed], worker)  # type: ignore[list-item]
    seconds = round(time.perf_counter() - started, 3)
    if judgement.exact:
        return results.ReferenceResult("agree", seconds=seconds)
    if judgement.status == st.TIMED_OUT:
        return results.ReferenceResult("timeout", judgement.failure, seconds=seconds)
    found = causes_mod.of(site, judgement)
    if judgement.status not in (st.DIFFER, st.INACCURATE, st.RULINGS):
        return results.ReferenceResult("error", judgement.failure, causes=found, seconds=seconds)
    differing = sum(c.differing + c.inaccurate + c.ruling_differing + c.only_in_one
                    for c in judgement.comparisons)
    return results.ReferenceResult("differ", judgement.failure, differing=differing,
                                   causes=found, seconds=seconds)


def _built_sets(site: Site, shapes: Sequence[Sequence[int]], options: ValidateOptions,
                captured: Sequence[np.ndarray] | None = None,
                nonfinite: bool | None = None) -> list[FeedSet]:
    """The domain's built cases at ``shapes`` (ruling 18), the captured inputs first; only those
    where the type has no built case (bfloat16)."""
    if captured is not None and captured[0].dtype.kind not in "fiu":
        return [FeedSet(CAPTURED, list(captured), observed=True)]
    extra = captured[2] if captured is not None and site.op == "MaxUnpool" and len(
        captured) > 2 else None
    feeds = [list(captured)] if captured is not None else []
    return proof_sets(site, [tuple(s) for s in shapes], captured=feeds, seed=options.seed,
                      nonfinite=options.nonfinite if nonfinite is None else nonfinite,
                      output_shape=extra)


def judge_site(site: Site, captured: Mapping[str, np.ndarray], options: ValidateOptions,
               on: RuntimeSpec | Worker) -> results.NodeResult:
    """One pooling node judged by the engine on ``on``: on its captured inputs and the domain's
    built cases at their size; where that agrees, also at the spec's size (:func:`_at_spec_size`)
    and, in the finite domain, on the non-finite cases as information."""
    if not site.version:
        return _record(site, Judgement(status=results.BOTH_REJECTED, failure=site.reason),
                       options)
    if not site.in_main_graph:
        return _judge_alone(site, options, on)
    if missing := [name for name in site.inputs if name not in captured]:
        return _judge_alone(site, options, on, f"its input {missing[0]!r} could not be captured")
    feeds = [captured[name] for name in site.inputs]
    x = feeds[0]
    elem = dtypes.name_of(x.dtype)
    try:
        sized = site.at(x.shape, elem=elem)
    except (OrtpoolError, ValueError):  # the spec refuses the attributes at this rank
        sized = dataclasses.replace(site, x_dims=tuple(x.shape), elem=elem, attrs=None)
    sets = _built_sets(sized, [x.shape], options, feeds) if sized.attrs is not None else [
        FeedSet(CAPTURED, feeds, observed=True)]
    judgement = judge(sized, sets, on, options.accuracy)
    node = _record(sized, judgement, options)
    node.site = sized
    if judgement.exact:
        _at_spec_size(site, x, options, node, on)
    if judgement.exact and not options.nonfinite and elem in FLOATS and sized.attrs is not None:
        # the finite cases passed: what the non-finite domain's cases show is theirs
        node.nonfinite_sets = _built_sets(sized, [x.shape], options, nonfinite=True)
        wider = judge(sized, node.nonfinite_sets, on, options.accuracy)
        node.nonfinite = "" if wider.exact else wider.failure
    return node


def _at_spec_size(site: Site, x: np.ndarray, options: ValidateOptions,
                  node: results.NodeResult, on: RuntimeSpec | Worker) -> None:
    """Where an upstream node the runtime gets wrong gives ``site`` another size than the spec
    does, the node is judged at the spec's size too (the size ``fix`` proves it at)."""
    spatial = site.spatial
    if spatial is None or tuple(spatial) == tuple(x.shape[2:]) or not site.judgeable:
        return
    shape = (*x.shape[:2], *spatial)
    try:
        sized = site.at(shape, elem=dtypes.name_of(x.dtype))
    except (OrtpoolError, ValueError):
        return
    judgement = judge(sized, _built_sets(sized, [shape], options), on, options.accuracy)
    if judgement.exact or judgement.status == results.NOT_COMPARED:
        return
    node.status, node.judged = results.DIFFER, judgement.failure
    node.comparisons, node.input_shapes = judgement.comparisons, judgement.shown_shapes
    node.causes = [c for c in causes_mod.of(sized, judgement) if c.code != causes_mod.BUILT_CASE]
    node.causes.append(Cause(
        causes_mod.BUILT_CASE,
        f"at X {list(shape)}, the size the spec's upstream nodes give it (onnxruntime's run "
        f"gives {list(x.shape)}; fix proves it there): {judgement.failure}"))


def _judge_alone(site: Site, options: ValidateOptions, on: RuntimeSpec | Worker,
                 why: str = "") -> results.NodeResult:
    """A node whose input is not captured (inside a subgraph; or ``why``), judged on the built
    cases at its static size, or at sampled sizes where it is symbolic."""
    why = why or "its input changes per iteration/branch: none is captured"
    where = f"in the {site.location}"
    if not site.judgeable or site.elem not in dtypes.NUMPY or len(site.inputs) != 1:
        return _record(site, Judgement(status=results.NOT_COMPARED, failure=(
            f"{where}: {why}, and its size is not static; covered by the end-to-end comparison "
            "only")), options)
    shape = full_shape(site)
    shapes = [shape] if shape is not None else sampled_shapes(site)
    sized = site.at(shape) if shape is not None else site
    judgement = judge(sized, _built_sets(sized, shapes, options), on, options.accuracy)
    node = _record(sized, judgement, options)
    sizes = "its static size" if shape is not None else "sampled sizes (its size is symbolic)"
    node.message = (f"{where}: judged on the built cases at {sizes} "
                    f"{', '.join(str(list(x)) for x in shapes[:3])}"
                    f"{' ...' if len(shapes) > 3 else ''} ({why})")
    return node


def _record(site: Site, judgement: Judgement, options: ValidateOptions) -> results.NodeResult:
    return results.node_record(site, judgement, domain.name(options.nonfinite))


def _ortpool_node(node: onnx.NodeProto, opset: int, location: str) -> results.NodeResult:
    """A node of the ortpool domain: it runs ortpool's kernel, the spec's result."""
    op, version, attributes = node.op_type, 0, {}
    try:
        spec = optypes.parse(node.op_type).spec
        op, version = spec.op, spec.version
        attributes = standard_attributes(spec, normalize(spec, attribute_values(node.attribute)))
    except (ValueError, OrtpoolError):  # not one ortpool registers: the session says so
        pass
    return results.NodeResult(
        name=text(node.name) or node.op_type, op=op, spec_version=version, opset=opset,
        dtype="?", attributes=attributes, input_shapes=[], status=results.ORTPOOL_OP,
        location=location, message=f"ortpool op {node.op_type}: runs ortpool's kernel (nothing "
        "built-in to compare it with)")


def bundled_models_dir() -> Path:
    """The bundled models' folder (the repository's models/, the package ``ortpool.models``)."""
    try:
        folder = importlib.resources.files("ortpool.models")
    except ModuleNotFoundError:  # installed without them, or editable from before the mapping
        raise OrtpoolError(
            "no bundled models: the package ortpool.models is not installed (in a checkout of "
            "the repository, rerun `pip install -e .`), or name the models to validate"
        ) from None
    if not isinstance(folder, Path):  # a zipped installation: onnxruntime needs real files
        raise OrtpoolError(
            f"the bundled models are not files on disk ({folder}): name the models to validate")
    return folder


def bundled_models() -> list[Path]:
    folder = bundled_models_dir()
    found = sorted(folder.glob("*.onnx")) if folder.is_dir() else []
    if not found:
        raise OrtpoolError(
            f"no bundled models: {folder} holds no .onnx file (run scripts/make_models.py in a "
            "checkout of the repository, or name the models to validate)")
    return found
