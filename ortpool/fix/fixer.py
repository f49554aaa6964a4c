"""``fix_model``: choose, write and prove a realization for every pooling node of a model.

The model's run captures its nodes' real inputs (:mod:`ortpool.fix.capture`); per node the
cheapest realization proven exact alone (:mod:`ortpool.forms.choose`); then rounds of writing
them all and proving the written model (:mod:`ortpool.fix.capture`), a node not exact there (an
optimization across nodes undid it) moved on; last the opset lift (:mod:`ortpool.forms.lift`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping, Sequence

import numpy as np
import onnx

from ortpool import optypes
from ortpool.check.cases import CAPTURED, FeedSet, expect, full_shape, proof_sets, sampled_shapes
from ortpool.check.judge import Judgement, judge
from ortpool.fix import capture
from ortpool.forms import lift
from ortpool.forms.apply import apply
from ortpool.forms.choose import Attempt, Choice, choose
from ortpool.forms.plan import UNCHANGED, Plan
from ortpool.forms.prove import recorded_regions
from ortpool.model import fixmarks
from ortpool.model import inputs as model_inputs
from ortpool.model.scopes import model_scopes, text
from ortpool.model.selection import Selection
from ortpool.model.singlenode import region_model
from ortpool.model.site import Site, find_sites, node_name
from ortpool.ort.runtime import stamp
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.report import fixes as report_mod
from ortpool.report.outcomes import Outcome
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule

#: Rounds of write-and-prove; each round can only move nodes to a later candidate.
MAX_ROUNDS = 8


@dataclasses.dataclass(frozen=True)
class Options:
    """What ``ortpool fix`` does (see :func:`ortpool.fix.fix`)."""

    selection: Selection = dataclasses.field(default_factory=Selection)
    skip_invalid: bool = False
    runtime: RuntimeSpec = dataclasses.field(default_factory=RuntimeSpec)
    nonfinite: bool = False
    seed: int = 0
    lift_opset: bool = True
    #: the model's inputs to capture and prove on (name -> array dicts); None: resolved from
    #: ``model_inputs`` for each of :data:`ortpool.fix.capture.MODEL_SEEDS`
    inputs: Sequence[Mapping[str, np.ndarray]] | None = None
    model_inputs: model_inputs.InputSpec = dataclasses.field(default_factory=model_inputs.InputSpec)
    accuracy: AccuracyRule = DEFAULT_RULE


def fix_model(model: onnx.ModelProto, options: Options,
              source_dir: str | os.PathLike | None = None
              ) -> tuple[onnx.ModelProto, report_mod.FixReport]:
    """The fixed copy of ``model`` and the report (``model`` is not changed), lifted where
    that leaves fewer nodes unproven or needing ortpool's op (:mod:`ortpool.forms.lift`)."""
    source = None if source_dir is None else os.fspath(source_dir)
    fixed, report = _fix_once(model, options, source, None)
    return lift.lift_and_fix(model, fixed, report,
                             lambda lifted, pinned: _fix_once(lifted, options, source, pinned),
                             options.lift_opset)


@dataclasses.dataclass
class _Choices:
    """What the write-and-prove rounds work on: the nodes, their proof sets and choices; the
    sites of the forms an earlier fix wrote, kept as they stand."""

    model: onnx.ModelProto
    sites: list[Site]
    sets: dict[int, list[FeedSet]] = dataclasses.field(default_factory=dict)
    choices: dict[int, Choice] = dataclasses.field(default_factory=dict)
    kept: set[int] = dataclasses.field(default_factory=set)


def _fix_once(model: onnx.ModelProto, options: Options, source: str | None,
              pinned: Mapping[str, int] | None) -> tuple[onnx.ModelProto, report_mod.FixReport]:
    """One fix of ``model`` at its own opsets (``pinned`` nodes at their given versions)."""
    report = report_mod.FixReport(
        runtime=options.runtime.describe(), nonfinite=options.nonfinite,
        style=options.model_inputs.style, accuracy=options.accuracy.to_dict())
    # stamped first: the source's capture runs and every proof run what will be written
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    model = copy
    if note := stamp(model):
        report.notes.append(note)
    sites, notes = find_sites(model, options.selection, options.skip_invalid, pinned)
    report.notes.extend(notes)
    # a model fix wrote: each form is judged as it stands (as validate judges it), not read
    # from the record, and a pooling node of it (the guard's AveragePool) is no node of its own
    before, notes = fixmarks.read(model)
    report.notes.extend(notes)
    regions = [(entry, dataclasses.replace(region, number=len(sites) + k)) for k, (entry, region)
               in enumerate(recorded_regions(model, before, report.notes, options.nonfinite,
                                             options.seed, options.accuracy))]
    runs, resolved = capture.model_runs(model, options.inputs, options.model_inputs)
    if resolved is not None:
        report.inputs = {"shapes": resolved.shapes, "source": resolved.source,
                         "open_dims": resolved.dims, "shape_hint": resolved.shape_hint()}
    captured = capture.capture_inputs(model, [*sites, *(r for _, r in regions)], runs,
                                      options.runtime, source, report.notes, resolved)
    state = _Choices(model, sites)
    _keep_fixed(state, regions, before, captured, options, report.notes)
    _choose_all(state, captured, options)
    fixed, in_model, problem, apply_notes = _write_and_prove(state, runs, options, source)
    if problem:
        report.notes.append(f"no proof in the written model: {problem}")
    report.notes.extend(apply_notes)
    report.nodes += _entries(state, fixed, in_model, problem)
    forms = {(f.scope, f.name): f.form for f in before.values()}
    for entry in report.nodes:  # a form kept as it stands is reported as the form it is
        form = forms.get((entry.location, entry.name))
        if form and entry.realization == report_mod.UNCHANGED:
            entry.realization, entry.form = report_mod.FORM, form
            report.notes.append(f"node {entry.name!r} ({entry.location}): form {form}, as an "
                                "earlier fix wrote it, is exact as it stands: kept")
    # ortpool's ops the model holds already (rewritten, or fixed before) stay: it needs ortpool
    report.nodes += [_held(node, scope.location) for scope in model_scopes(model)
                     for node in scope.nodes if node.domain == optypes.DOMAIN]
    return fixed, report


def _held(node: onnx.NodeProto, location: str) -> report_mod.NodeFix:
    try:
        spec = optypes.parse(node.op_type).spec
        op, version = spec.op, spec.version
    except ValueError:  # not one ortpool registers: the session will say so
        op, version = node.op_type, None
    return report_mod.NodeFix(name=node_name(node), location=location, op=op, version=version,
                              elem=None, realization=report_mod.ORTPOOL)


def _keep_fixed(state: _Choices, regions: Sequence[tuple[fixmarks.FixedNode, Site]],
                before: dict[str, fixmarks.FixedNode],
                captured: Sequence[Mapping[str, np.ndarray]], options: Options,
                notes: list[str]) -> None:
    """Each form an earlier fix wrote (``regions``, of the records ``before``) judged as it
    stands on its proof sets: an exact one stays as written, one site in place of its nodes';
    another's record is dropped (from ``before`` and the model) with a note, its nodes fixed as
    they stand."""
    for entry, region in regions:
        if (why_not := options.selection.why_not(region.op, entry.name)) is not None:
            region = dataclasses.replace(region, selected=False, reason=why_not)
        else:
            sets = site_sets(region, captured, options.seed, options.nonfinite)[0] \
                if region.judgeable else []
            written = functools.partial(region_model, state.model, region.inputs,
                                        region.compared_outputs, holder=region.scope.holder)
            proof = judge(region, sets, options.runtime, options.accuracy,
                          build=written) if sets else None
            if proof is None or not proof.exact:
                why = proof.failure if proof else "its type or sizes are not known"
                notes.append(f"fix's record of node {entry.key!r} (form {entry.form}): its nodes "
                             f"as written are not exact ({why}): each is fixed as it stands")
                del before[entry.key]
                continue
            state.sets[region.number] = sets
            state.choices[region.number] = Choice(
                Plan(UNCHANGED, why=f"form {entry.form} as an earlier fix wrote it"), proof,
                [Attempt(UNCHANGED, Outcome.PROVEN, proof.describe())])
            state.kept.add(region.number)
        nodes = {(entry.scope, name) for name in (entry.name, *entry.nodes)}
        mine = [s for s in state.sites if (s.location, text(s.node.name)) in nodes]
        at = state.sites.index(mine[0]) if mine else len(state.sites)
        state.sites[at:at] = [region]
        state.sites = [s for s in state.sites if s not in mine]
    fixmarks.record(state.model, before.values(), earlier=False)


def _choose_all(state: _Choices, captured: Sequence[Mapping[str, np.ndarray]],
                options: Options) -> None:
    """Each selected node's proof sets and its cheapest realization proven exact alone."""
    for site in state.sites:
        if not site.judgeable or site.number in state.choices:
            continue
        sets, refusals = site_sets(site, captured, options.seed, options.nonfinite)
        state.sets[site.number] = sets
        if sets:
            state.choices[site.number] = choose(site, sets, options.runtime,
                                                rule=options.accuracy)
        else:  # nothing can prove any form: the spec itself gives no output to compare with
            why = f": {refusals[0]}" if refusals else ""
            state.choices[site.number] = Choice(
                None, None, [], f"no input it could be proven on: ortpool's kernels refuse{why}")


def site_sets(site: Site, captured: Sequence[Mapping[str, np.ndarray]], seed: int = 0,
              nonfinite: bool = False) -> tuple[list[FeedSet], list[str]]:
    """A node's input sets at its static or sampled shapes with the spec's outputs, the
    model's ``captured`` runs first, and why the kernels refused the others."""
    if not site.judgeable:
        raise ValueError(f"site {site.name!r} cannot be judged: {site.reason}")
    mine = []
    for run in captured:
        arrays = [run.get(name) for name in site.node.input if name]
        if all(a is not None for a in arrays):
            mine.append(arrays)
    shape = full_shape(site)
    shapes = [shape] if shape is not None else sampled_shapes(site)
    if shape is not None:
        # The forms of static spatial sizes hold at those sizes, for any batch and channels: the
        # model's own run is kept at whatever N and C the user's inputs give.
        mine = [a for a in mine if tuple(a[0].shape[2:]) == shape[2:]]
    sets = proof_sets(site, shapes, captured=mine, seed=seed, nonfinite=nonfinite,
                      output_shape=site.output_shape)
    refusals: list[str] = []
    kept = expect(site, sets, refusals)
    if sum(feed.observed for feed in kept) < len(mine):
        # the model's own input is one the spec refuses (a NaN in its RoIs): no proof on the
        # built cases stands in for it (validate calls the node ORTPOOL_REJECTED)
        return [], [f"the model's own {refusals[0]}"]
    return kept, refusals


def _write_and_prove(state: _Choices, runs: Sequence[Mapping[str, np.ndarray]], options: Options,
                     source: str | None
                     ) -> tuple[onnx.ModelProto, dict[int, Judgement], str, list[str]]:
    """Rounds of writing every plan and proving the written model, a node not exact there moved
    to its next candidate: the model, its proofs, why it could not run (or ""), the notes."""
    in_model: dict[int, Judgement] = {}
    fixed, problem, apply_notes = state.model, "", []
    for _ in range(MAX_ROUNDS):
        plans = {n: c.plan for n, c in state.choices.items() if c.plan is not None}
        fixed, apply_notes = apply(state.model, state.sites, plans)
        in_model, problem = capture.prove_in_model(fixed, state.sites, runs, options.runtime,
                                                   source, options.accuracy)
        capture.prove_regions(fixed, state.sites, plans, state.sets, in_model, options.runtime,
                              source, options.accuracy)
        failed = [n for n, p in in_model.items() if not p.exact and n in plans]
        if not failed:
            break
        for number in failed:
            choice = state.choices[number]
            plan = plans[number]
            earlier = [a for a in choice.attempts if a.form != plan.name]
            earlier.append(Attempt(plan.name, Outcome.NOT_IN_MODEL, in_model[number].failure))
            if number in state.kept:  # an earlier fix's form: no other can take its nodes' place
                state.choices[number] = Choice(None, None, earlier, "as an earlier fix wrote it, "
                                               f"not exact in the model: {earlier[-1].detail}")
                continue
            site = next(s for s in state.sites if s.number == number)
            state.choices[number] = choose(site, state.sets[number], options.runtime, earlier,
                                           options.accuracy)
    return fixed, in_model, problem, apply_notes


def _entries(state: _Choices, fixed: onnx.ModelProto, in_model: Mapping[int, Judgement],
             problem: str) -> list[report_mod.NodeFix]:
    """The report's entry per node, in model order (:func:`node_fix`), with the sizes of the
    model's run; a node proven alone but not in a model that does not run is unproven."""
    entries = []
    # an unnamed node given a form is named in ``fixed`` (validate's name for it): the report's
    named = {(f.scope, f.outputs): f.name for f in fixmarks.read(fixed)[0].values()}
    for site in state.sites:
        entry = node_fix(site, state.choices.get(site.number), in_model.get(site.number))
        entry.name = named.get((site.location, site.outputs), entry.name)
        mine = state.sets.get(site.number, [])
        real = sorted({tuple(f.shape) for f in mine if f.label == CAPTURED})
        if real and entry.shapes:  # the sizes the user's inputs give, beside the small ones
            entry.shapes += "; and on the model's run at X " + ", ".join(
                "[" + ",".join(map(str, shape)) + "]" for shape in real)
        if problem and entry.realization not in (report_mod.UNPROVEN, report_mod.NOT_SELECTED):
            # Proven alone, but the model as written was not run (it does not run, or it had no
            # inputs to run on): not a proven fix (exit 2, written only with --allow-unproven).
            entry.realization = report_mod.UNPROVEN
            entry.reason = f"proven alone, but {problem}"
        entries.append(entry)
    return entries


def node_fix(site: Site, choice: Choice | None, in_model: Judgement | None) -> report_mod.NodeFix:
    """The report's entry for ``site``: its ``choice`` (None: not selected or no facts) with
    its proof alone and, where run, ``in_model``."""
    entry = report_mod.NodeFix(
        name=site.name, location=site.location, op=site.node.op_type,
        version=site.version if site.judgeable else None,
        elem=site.elem if site.judgeable else None, reason=site.reason,
        realization=report_mod.NOT_SELECTED if not site.selected else report_mod.UNPROVEN)
    if not site.judgeable or choice is None:
        if site.selected and not entry.reason:
            entry.reason = "its type or attributes could not be learned"
        return entry
    entry.attempts = choice.attempts
    entry.shapes = (f"static spatial sizes {list(site.spatial)}" if site.spatial is not None
                    else "symbolic spatial sizes: only forms right for every size were "
                    "considered, proven on sampled sizes")
    plan = choice.plan
    if plan is None or choice.proof is None:
        last = choice.attempts[-1].detail if choice.attempts else ""
        entry.reason = choice.reason or (
            f"no candidate could be proven (ortpool's op included; its proof: {last})")
        return entry
    entry.form, entry.why = plan.name, plan.why
    entry.proof = choice.proof.to_dict()
    if in_model is not None:
        entry.in_model = in_model.to_dict()
    if not site.in_main_graph:
        entry.shapes += (f"; in {site.location}: proven alone (its input is not one tensor of "
                         "the model's run)")
    entry.realization = (report_mod.ORTPOOL if plan.ortpool else report_mod.FORM
                         if plan.changes_node else report_mod.UNCHANGED)
    return entry
