"""``fix_model``: choose, write and prove a realization for every pooling node of a model.

1. Find the pooling nodes with their facts (:mod:`ortpool.fix.sites`).
2. Run the model (onnxruntime, optimizations off; ortpool's ops if onnxruntime cannot run it) on
   its inputs as :func:`ortpool.model.inputs.resolve` gives them (the user's sizes and arrays,
   else generated at the default sizes), capturing the real inputs of its main-graph pooling
   nodes, as the validator does: proofs run at those sizes, beside the node's own small ones.
3. Per node, the cheapest realization proven exact alone on the runtime
   (:mod:`ortpool.fix.choose`), on the captured inputs and seeded input sets of the node's
   static shape (sampled shapes when its sizes are symbolic).
4. Write them all (:mod:`ortpool.fix.apply`) and prove the written model: run it at the
   runtime's optimization level with every main-graph node's input and output captured, and
   compare each output with ortpool's kernels on the captured input. A node that is exact alone
   but not in the model (an optimization across nodes undid its form) gets its next candidate,
   and the model is written and proven again.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx

from ortpool import dtypes
from ortpool.fix import inputs as feeds_mod
from ortpool.fix import lift
from ortpool.fix import report as report_mod
from ortpool.fix.apply import apply
from ortpool.fix.choose import NOT_IN_MODEL, Attempt, Choice, choose
from ortpool.fix.forms import Plan
from ortpool.fix.prove import Proof, compare, prove_in_region, sets_for, short_error
from ortpool.fix.sites import Site, find_sites
from ortpool.model import capture as capture_mod
from ortpool.model import inputs as model_inputs
from ortpool.model.scopes import ai_onnx_opset
from ortpool.ort import runtime_spec
from ortpool.ort.opening import open_session
from ortpool.ort.runtime import stamp
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.rewrite.selection import Selection
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule

#: Seeds of the generated model inputs the written model is proven on.
MODEL_SEEDS = (0, 1)
#: Rounds of write-and-prove; each round can only move nodes to a later candidate.
MAX_ROUNDS = 8
NOT_RUNNING = "the written model could not be run"
#: onnxruntime's Python API cannot fetch these: captured through a Cast to float32 (exact).
_UNFETCHABLE = ("bfloat16",)
_CARRIED = "__ortpool_fix_float32"


@dataclasses.dataclass(frozen=True)
class Options:
    """What ``ortpool fix`` does (see :func:`ortpool.fix.fix`)."""

    selection: Selection = dataclasses.field(default_factory=Selection)
    skip_invalid: bool = False
    runtime: RuntimeSpec = dataclasses.field(default_factory=RuntimeSpec)
    #: prove max-like ops on NaN and -inf too (off: the user's inputs are assumed finite)
    nonfinite: bool = True
    seed: int = 0
    #: whether a model below opset 11 may be lifted (:mod:`ortpool.fix.lift`)
    lift_opset: bool = True
    #: the model's inputs to capture and prove on (each a name -> array dict); None: resolved
    #: from ``model_inputs`` (:func:`ortpool.model.inputs.resolve`) for each of
    #: :data:`MODEL_SEEDS`
    inputs: Sequence[Mapping[str, np.ndarray]] | None = None
    #: the user's sizes and arrays for the model's inputs (``--shape``, ``--inputs``)
    model_inputs: model_inputs.InputSpec = dataclasses.field(
        default_factory=model_inputs.InputSpec
    )
    #: RULINGS.md 17's thresholds: a sum within an accuracy note is proven as it is
    accuracy: AccuracyRule = DEFAULT_RULE


def _model_runs(
    model: onnx.ModelProto, options: Options
) -> tuple[list[dict[str, np.ndarray]], model_inputs.ResolvedInputs | None]:
    """The model inputs of the capture and model-proof runs: given, or resolved from the user's
    sizes and arrays (seeded; one run when the user gives every array); and the first
    resolution (its open dims for the report). Inputs that cannot be resolved raise."""
    if options.inputs is not None:
        return [dict(feeds) for feeds in options.inputs], None
    spec = options.model_inputs
    # Not --seed: what the model's run captures is proof input, and a verdict must not depend
    # on the seed (RULINGS.md 18); the seed varies only the built proof sets' fill.
    resolved = [model_inputs.resolve(model, spec, MODEL_SEEDS[0])]
    if len(spec.arrays) < len(model_inputs.graph_inputs(model)):
        resolved += [model_inputs.resolve(model, spec, s) for s in MODEL_SEEDS[1:]]
    return [r.feeds for r in resolved], resolved[0]


def _captured_names(sites: Sequence[Site], outputs: bool) -> tuple[list[str], set[str]]:
    """The main-graph nodes' inputs (and outputs) to capture; those of an unfetchable type."""
    names: list[str] = []
    carried: set[str] = set()
    for site in sites:
        if not site.in_main_graph or site.facts is None:
            continue
        wanted = [n for n in site.node.input if n]
        if outputs:
            wanted += [n for n in site.node.output[: 2 if site.facts.indices_used else 1] if n]
        names += [n for n in wanted if n not in names]
        if site.facts.elem in _UNFETCHABLE:
            carried.update(wanted[:1])
            if outputs:
                carried.add(site.node.output[0])
    return names, carried


class _Capturing:
    """Runs of ``model`` with ``names`` as extra outputs, one call per set of feeds; name ->
    array (initializers read). The widened model and its session are built once per set of fed
    names (a failure to build is kept and raised again), not once per run."""

    def __init__(
        self,
        model: onnx.ModelProto,
        names: tuple[list[str], set[str]],
        runtime: RuntimeSpec,
        level: str | None,
        source_dir: str | None,
    ) -> None:
        self.model, self.names = model, names
        self.runtime, self.level, self.source_dir = runtime, level, source_dir
        self._built: dict[frozenset[str], Any] = {}

    def _build(self, fed: frozenset[str]) -> tuple[onnx.ModelProto, Any, list[str], list[str]]:
        wanted, carried = self.names
        initializers = {t.name for t in self.model.graph.initializer}
        fetched = [n for n in wanted if n not in fed and n not in initializers]
        plain = [n for n in fetched if n not in carried]
        wide = capture_mod.capture_model(self.model, plain)
        for name in fetched:
            if name in carried:  # fetched as float32 through a Cast, then made bfloat16 again
                cast = onnx.helper.make_node(
                    "Cast", [name], [name + _CARRIED], to=onnx.TensorProto.FLOAT
                )
                wide.graph.node.append(cast)
                wide.graph.output.append(onnx.ValueInfoProto(name=name + _CARRIED))
        session = open_session(
            self.runtime, wide, level=self.level, external_dir=self.source_dir
        )
        return wide, session, fetched, plain

    def built(self, feeds: Mapping[str, np.ndarray]) -> Any:
        """The widened model and session for these fed names, or why they could not be built
        (onnxruntime refuses the model: the same for every run)."""
        fed = frozenset(feeds)
        if fed not in self._built:
            try:
                self._built[fed] = self._build(fed)
            except Exception as err:
                self._built[fed] = err
        return self._built[fed]

    def __call__(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        built = self.built(feeds)
        if isinstance(built, Exception):
            raise built
        wide, session, fetched, plain = built
        wanted, carried = self.names
        # bfloat16 feeds as OrtValues (onnxruntime takes no numpy array of that type)
        values = runtime_spec.with_values(feeds)
        requested = [n for n in plain if n not in feeds]
        requested += [n + _CARRIED for n in fetched if n in carried]
        if not requested:
            # Nothing to capture, but the model must still load and run: its outputs are
            # fetched (through session.run, which raises an ortpool op's failure), bfloat16
            # ones as OrtValues.
            bf16 = onnx.TensorProto.BFLOAT16
            requested = [o.name for o in wide.graph.output
                         if o.type.tensor_type.elem_type != bf16]
            if not requested:
                runtime_spec.run_values(session, [o.name for o in wide.graph.output], values)
        arrays = session.run(requested, values) if requested else []
        found = dict(zip(requested, (np.asarray(a) for a in arrays), strict=True))
        for name in fetched:
            if name in carried:
                found[name] = found.pop(name + _CARRIED).astype(dtypes.NUMPY["bfloat16"])
        found.update({k: np.asarray(v) for k, v in feeds.items() if k in wanted})
        for tensor in self.model.graph.initializer:
            if tensor.name in wanted and tensor.data_location != onnx.TensorProto.EXTERNAL:
                found[tensor.name] = onnx.numpy_helper.to_array(tensor)
        return found


def _capture_inputs(
    model: onnx.ModelProto,
    sites: Sequence[Site],
    model_runs: Sequence[Mapping[str, np.ndarray]],
    options: Options,
    source_dir: str | None,
    notes: list[str],
    resolved: model_inputs.ResolvedInputs | None = None,
) -> list[dict[str, np.ndarray]]:
    """The real inputs of the main-graph nodes, from runs of the source model at the sizes the
    inputs have (the user's, or the defaults). When the model runs neither plain nor rewritten
    and some of its dims were left open, the sizes chosen are why most often: that error says
    which and how to set them."""
    names = _captured_names(sites, outputs=False)
    if not names[0]:
        return []
    runs: list[dict[str, np.ndarray]] = []
    source = _Capturing(model, names, options.runtime, "disable", source_dir)
    rewritten: _Capturing | None = None
    for number, feeds in enumerate(model_runs):
        try:
            runs.append(source(feeds))
            continue
        except Exception as err:  # onnxruntime cannot run the source model (a refused node)
            first = short_error(err)
        try:
            if rewritten is None:
                from ortpool.rewrite import rewrite

                rewritten = _Capturing(rewrite(model), names, options.runtime, "disable",
                                       source_dir)
            runs.append(rewritten(feeds))
            if number == 0:
                notes.append(
                    f"onnxruntime could not run the model ({first}); node inputs were captured "
                    "from its ortpool-rewritten run"
                )
        except Exception as err:
            loaded = not isinstance(source.built(feeds), Exception)
            if loaded and resolved is not None and resolved.dims:
                # It loads but does not run: most often the sizes chosen (docs/validate.md)
                raise resolved.cannot_run("", first) from None
            notes.append(f"no node input could be captured: {short_error(err)}")
            return []
    return runs


def _proof_sets(
    site: Site, captured: Sequence[Mapping[str, np.ndarray]], options: Options
) -> tuple[list[feeds_mod.FeedSet], list[str]]:
    """The node's input sets with the spec's outputs, and why the kernels refused the others."""
    facts = site.facts
    assert facts is not None
    mine = []
    for run in captured:
        arrays = [run.get(name) for name in site.node.input if name]
        if all(a is not None for a in arrays):
            mine.append(arrays)
    shape = feeds_mod.full_shape(facts, site.x_dims)
    shapes = [shape] if shape is not None else feeds_mod.sampled_shapes(facts)
    if shape is not None:
        # The forms of static spatial sizes hold at those sizes, for any batch and channels: the
        # model's own run is kept at whatever N and C the user's inputs give.
        mine = [a for a in mine if tuple(a[0].shape[2:]) == shape[2:]]
    sets = feeds_mod.proof_sets(
        facts,
        shapes,
        captured=mine,
        seed=options.seed,
        nonfinite=options.nonfinite,
        output_shape=site.output_shape,
    )
    spec = feeds_mod.node_spec(facts)
    refusals: list[str] = []
    return feeds_mod.expect(spec, sets, refusals), refusals


def _prove_in_model(
    fixed: onnx.ModelProto,
    sites: Sequence[Site],
    model_runs: Sequence[Mapping[str, np.ndarray]],
    options: Options,
    source_dir: str | None,
) -> tuple[dict[int, Proof], str]:
    """Each main-graph node's output in the written model against the kernels on its captured
    input; per site number, the proof; and a note when the model could not be run (the model is
    run even when no node can be captured: it must load and run)."""
    names = _captured_names(sites, outputs=True)
    proofs: dict[int, Proof] = {}
    capturing = _Capturing(fixed, names, options.runtime, None, source_dir)
    for number, feeds in enumerate(model_runs):
        try:
            run = capturing(feeds)
        except Exception as err:
            return {}, f"{NOT_RUNNING}: {short_error(err)}"
        for site in sites:
            facts = site.facts
            if facts is None or not site.selected:
                continue
            if not site.in_main_graph:
                continue
            arrays = [run[name] for name in site.node.input if name]
            got = [run[name] for name in site.node.output[: 2 if facts.indices_used else 1]]
            spec = feeds_mod.node_spec(facts)
            feed = feeds_mod.FeedSet(f"the model's run {number + 1}", arrays)
            if not feeds_mod.expect(spec, [feed]):
                continue
            proof = proofs.setdefault(site.number, Proof(exact=True, where="model"))
            if not proof.exact:
                continue
            failure = compare(facts, feed, got, proof, options.accuracy)
            if failure:
                proof.exact, proof.failure = False, failure
            else:
                proof.sets += 1
                if list(feed.shape) not in proof.shapes:
                    proof.shapes.append(list(feed.shape))
    return proofs, ""


def _prove_regions(
    fixed: onnx.ModelProto,
    sites: Sequence[Site],
    plans: Mapping[int, Plan],
    sets: Mapping[int, Sequence[feeds_mod.FeedSet]],
    in_model: dict[int, Proof],
    options: Options,
    source_dir: str | None,
) -> None:
    """Every main-graph node's proof sets, the built NaN/inf cases among them (RULINGS.md 18),
    through its realization as written in ``fixed``: the model's own run reaches a node only
    with the values its upstream makes, which hold no NaN (:func:`ortpool.fix.prove.
    prove_in_region`). Adds to (or starts) each node's in-model proof."""
    for site in sites:
        if site.facts is None or not site.in_main_graph or site.number not in plans:
            continue
        proof = in_model.setdefault(site.number, Proof(exact=True, where="model"))
        mine = sets.get(site.number) or []
        # the built cases (what the model's run cannot reach); all sets where none are built
        chosen = sets_for(plans[site.number], [feed for feed in mine if feed.cases] or mine)
        if proof.exact and chosen:
            prove_in_region(fixed, site.facts, site.node, chosen, options.runtime, proof,
                            source_dir, options.accuracy)


def _score(report: report_mod.FixReport) -> tuple[int, int]:
    return len(report.unproven), len(report.needs_ortpool)


def fix_model(
    model: onnx.ModelProto, options: Options, source_dir: str | os.PathLike | None = None
) -> tuple[onnx.ModelProto, report_mod.FixReport]:
    """The fixed copy of ``model`` and the report (``model`` is not changed).

    When nodes stay unproven or need ortpool's op and the model imports an ai.onnx opset below
    :data:`ortpool.fix.lift.TARGETS`' last, the model lifted to each opset it can be lifted to
    without changing what it means (:mod:`ortpool.fix.lift`) is fixed too, and the first with
    fewer such nodes is taken.
    """
    source = None if source_dir is None else os.fspath(source_dir)
    fixed, report = _fix_once(model, options, source)
    opset = ai_onnx_opset(model.opset_import)
    if _score(report) == (0, 0) or opset is None or opset >= lift.TARGETS[-1]:
        return fixed, report
    if not options.lift_opset:
        report.notes.append(
            f"the ai.onnx opset {opset} was kept (--no-opset-lift): a lift may realize more nodes"
        )
        return fixed, report
    elems = {n.name: n.elem for n in report.nodes if n.elem}
    reasons = []
    for target in lift.TARGETS:
        if target <= opset:
            continue
        pinned: dict[str, int] = {}
        why = lift.blocked(model, target, elems, pinned)
        if why:
            reasons.append(f"{target}: {why}")
            continue
        copy, reemitted = lift.lifted(model, target, pinned)
        lifted_fixed, lifted_report = _fix_once(copy, options, source, pinned)
        if _score(lifted_report) < _score(report):
            _mark_lifted(report, lifted_report, target)
            note = (
                f"ai.onnx opset lifted from {opset} to {target}, where every node keeps its "
                "meaning (onnxruntime runs there what it cannot at opset "
                f"{opset})" + (f"; {', '.join(reemitted)}" if reemitted else "")
            )
            lifted_report.notes.insert(0, note)
            fixed, report = lifted_fixed, lifted_report
            if _score(report) == (0, 0):
                break
    if reasons and ai_onnx_opset(fixed.opset_import) == opset:
        report.notes.append(f"the opset could not be lifted to {reasons[0]}")
    return fixed, report


def _mark_lifted(
    plain: report_mod.FixReport, lifted_report: report_mod.FixReport, target: int
) -> None:
    """Each node of the lifted model's report as the user wrote it (its own version), its
    realization including the lift: a node left as it is is now written at another opset."""
    for before, node in zip(plain.nodes, lifted_report.nodes, strict=True):
        if node.version != before.version:
            node.why = f"{node.why}; {node.op}-{before.version} written as {node.key}".lstrip("; ")
            node.version = before.version
        if node.realization == report_mod.UNCHANGED:
            node.realization, node.form = report_mod.FORM, lift.OPSET_LIFT
            node.why = f"the node at ai.onnx opset {target}; {node.why}".rstrip("; ")
        elif node.realization == report_mod.FORM:
            node.form = f"{node.form}+{lift.OPSET_LIFT}"


def _fix_once(
    model: onnx.ModelProto,
    options: Options,
    source: str | None,
    pinned: Mapping[str, int] | None = None,
) -> tuple[onnx.ModelProto, report_mod.FixReport]:
    """One fix of ``model`` at its own opsets (``pinned`` nodes at their given versions)."""
    report = report_mod.FixReport(
        runtime=options.runtime.describe(),
        nonfinite=options.nonfinite,
        accuracy=options.accuracy.to_dict(),
    )
    # Stamped first: the source's capture runs and every proof run what will be written.
    model = _copy(model)
    note = stamp(model)
    if note:
        report.notes.append(note)
    sites, notes = find_sites(model, options.selection, options.skip_invalid, pinned)
    report.notes.extend(notes)
    model_runs, resolved = _model_runs(model, options)
    if resolved is not None:
        report.inputs = {"shapes": resolved.shapes, "source": resolved.source,
                         "open_dims": resolved.dims, "shape_hint": resolved.shape_hint()}
    captured = _capture_inputs(model, sites, model_runs, options, source, report.notes, resolved)
    sets: dict[int, list[feeds_mod.FeedSet]] = {}
    choices: dict[int, Choice] = {}
    for site in sites:
        if site.facts is None or not site.selected:
            continue
        sets[site.number], refusals = _proof_sets(site, captured, options)
        if sets[site.number]:
            choices[site.number] = choose(
                site, sets[site.number], options.runtime, rule=options.accuracy
            )
        else:  # nothing can prove any form: the spec itself gives no output to compare with
            why = f": {refusals[0]}" if refusals else ""
            choices[site.number] = Choice(
                None, None, [], f"no input it could be proven on: ortpool's kernels refuse{why}"
            )
    in_model: dict[int, Proof] = {}
    fixed, problem, apply_notes = model, "", []
    for _ in range(MAX_ROUNDS):
        plans = {n: c.plan for n, c in choices.items() if c.plan is not None}
        fixed, apply_notes = apply(model, sites, plans)
        in_model, problem = _prove_in_model(fixed, sites, model_runs, options, source)
        _prove_regions(fixed, sites, plans, sets, in_model, options, source)
        failed = [n for n, p in in_model.items() if not p.exact and n in plans]
        if not failed:
            break
        for number in failed:
            choice = choices[number]
            assert choice.plan is not None
            earlier = [a for a in choice.attempts if a.form != choice.plan.name]
            earlier.append(Attempt(choice.plan.name, NOT_IN_MODEL, in_model[number].failure))
            choices[number] = choose(
                _site(sites, number), sets[number], options.runtime, earlier, options.accuracy
            )
    if problem:
        report.notes.append(f"no proof in the written model: {problem}")
    report.notes.extend(apply_notes)
    for site in sites:
        entry = _node_fix(site, choices.get(site.number), in_model.get(site.number))
        mine = sets.get(site.number, [])
        real = sorted({tuple(f.shape) for f in mine if f.label == feeds_mod.CAPTURED})
        if real and entry.shapes:  # the sizes the user's inputs give, beside the small ones
            entry.shapes += "; and on the model's run at X " + ", ".join(map(_dims, real))
        if problem and entry.realization not in (report_mod.UNPROVEN, report_mod.NOT_SELECTED):
            # Proven alone, but the model as written was not run (it does not run, or it had no
            # inputs to run on): not a proven fix (exit 2, written only with --allow-unproven).
            entry.realization, entry.reason = report_mod.UNPROVEN, f"proven alone, but {problem}"
        report.nodes.append(entry)
    return fixed, report


def _dims(shape: Sequence[int]) -> str:
    return "[" + ",".join(map(str, shape)) + "]"


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return copy


def _site(sites: Sequence[Site], number: int) -> Site:
    return next(s for s in sites if s.number == number)


def _node_fix(site: Site, choice: Choice | None, in_model: Proof | None) -> report_mod.NodeFix:
    facts = site.facts
    entry = report_mod.NodeFix(
        name=site.name,
        location=site.location,
        op=site.node.op_type,
        version=facts.version if facts else None,
        elem=facts.elem if facts else None,
        realization=report_mod.NOT_SELECTED if not site.selected else report_mod.UNPROVEN,
        reason=site.reason,
    )
    if facts is None or choice is None:
        if site.selected and not entry.reason:
            entry.reason = "no facts could be learned"
        return entry
    entry.attempts = choice.attempts
    if facts.spatial is not None:
        entry.shapes = f"static spatial sizes {list(facts.spatial)}"
    else:
        entry.shapes = (
            "symbolic spatial sizes: only forms right for every size were considered, proven "
            "on sampled sizes"
        )
    plan: Plan | None = choice.plan
    if plan is None or choice.proof is None:
        last = choice.attempts[-1].detail if choice.attempts else ""
        entry.reason = choice.reason or (
            f"no candidate could be proven (ortpool's op included; its proof: {last})"
        )
        return entry
    entry.form, entry.why = plan.name, plan.why
    entry.proof = choice.proof.to_dict()
    if in_model is not None:
        entry.in_model = in_model.to_dict()
    if not site.in_main_graph:
        entry.shapes += (
            f"; in {site.location}: proven alone (its input is not one tensor of the model's "
            "run)"
        )
    if plan.ortpool:
        entry.realization = report_mod.ORTPOOL
    elif plan.changes_node:
        entry.realization = report_mod.FORM
    else:
        entry.realization = report_mod.UNCHANGED
    return entry
