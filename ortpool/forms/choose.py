"""The realization of one node: the cheapest candidate (:func:`ortpool.forms.plan.candidates`)
proven exact on the runtime, its isolated model judged as the node itself is, by
:func:`ortpool.check.judge.judge` (the same inputs, run and comparison as ``validate``'s verdict).
Every candidate tried is kept with its outcome, so the report can say why the node is not left
alone and why a cheaper form was passed over (a Pad folded back by PadFusion).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import onnx
from onnx import helper

from ortpool import optypes
from ortpool.check.cases import FeedSet
from ortpool.check.judge import Judgement, judge
from ortpool.forms import emit
from ortpool.forms import plan as forms
from ortpool.model import carry
from ortpool.model.singlenode import frame, node_model
from ortpool.model.site import INPUT_NAMES, Site
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.report.outcomes import Attempt, NotApplicable, Outcome
from ortpool.rewrite import retarget
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule


@dataclasses.dataclass
class Choice:
    """The chosen plan (None: nothing could be proven) with its proof and every attempt."""

    plan: forms.Plan | None
    proof: Judgement | None
    attempts: list[Attempt]
    reason: str = ""  # why no candidate was tried (plan None and no attempts)


def choose(site: Site, sets: Sequence[FeedSet], runtime: RuntimeSpec,
           earlier: Sequence[Attempt] = (), rule: AccuracyRule = DEFAULT_RULE) -> Choice:
    """The first candidate of ``site`` proven exact (sums by ruling 17's ``rule``); ``earlier``:
    a previous choice's attempts (its winner refused in the model), not tried again."""
    if not site.judgeable:
        raise ValueError(f"site {site.name!r} cannot be judged: {site.reason}")
    attempts = list(earlier)
    tried = {a.form for a in earlier}
    for name, plan in forms.candidates(site):
        if name in tried:
            continue
        if isinstance(plan, NotApplicable):
            attempts.append(Attempt(name, Outcome.NOT_APPLICABLE, plan.reason))
            continue
        if site.spatial is None and not plan.shape_free:
            attempts.append(Attempt(name, Outcome.NOT_APPLICABLE,
                                    "its numbers depend on the input size"))
            continue
        try:
            proof = prove_plan(plan, site, sets, runtime, rule)
        except emit.Unwritable as err:
            attempts.append(Attempt(name, Outcome.NOT_WRITABLE, str(err)))
            continue
        if proof.exact:
            attempts.append(Attempt(name, Outcome.PROVEN, proof.describe()))
            return Choice(plan, proof, attempts)
        outcome = Outcome.FOLDED if proof.folded else Outcome.NOT_EXACT
        attempts.append(Attempt(name, outcome, proof.failure))
    return Choice(None, None, attempts)


def isolated_model(plan: forms.Plan, site: Site, example: Sequence[np.ndarray]
                   ) -> onnx.ModelProto:
    """The realization alone at the node's opset: X (I, output_shape) shaped as ``example``, Y
    (and Indices where the plan keeps the spec's)."""
    node = site.node
    inputs, outputs = frame(site, example, len(site.outputs) > 1 and plan.keeps_indices)
    io = emit.Io(tuple(v.name for v in inputs), tuple(v.name for v in outputs))
    carried = [carry.carried_name(n) for n in (*INPUT_NAMES, "Y")]
    namer = retarget.Namer([*INPUT_NAMES, "Y", "Indices", *carried])
    nodes = emit.emit(plan, site, node, io, namer)
    imports = [helper.make_opsetid(node.domain or "", site.opset)]
    if plan.ortpool:
        imports.append(helper.make_opsetid(optypes.DOMAIN, optypes.DOMAIN_VERSION))
    model = node_model(nodes, "ortpool_fix_proof", inputs, outputs, imports)
    # onnxruntime's Python API takes and gives no bfloat16 array: such inputs arrive as float32
    # and are cast (exactly), Y leaves as float32 (exactly); the realization between is as is.
    return carry.carry(model)


def sets_for(plan: forms.Plan, sets: Sequence[FeedSet]) -> list[FeedSet]:
    """The sets ``plan`` is proven on: all, but one built set per shape for ortpool's op (its
    values are the kernels' own: what is proven is that it runs and its outputs come back)."""
    if not plan.ortpool:
        return list(sets)
    kept, shapes = [], set()
    for feed in sets:
        if feed.cases:
            if feed.shape in shapes:
                continue
            shapes.add(feed.shape)
        kept.append(feed)
    return kept


def prove_plan(plan: forms.Plan, site: Site, sets: Sequence[FeedSet], runtime: RuntimeSpec,
               rule: AccuracyRule = DEFAULT_RULE) -> Judgement:
    """``plan`` alone on every set (:func:`sets_for`) at the runtime's level, judged as the
    node itself is (sums by ruling 17 under ``rule``)."""
    if not plan.changes_node:
        return judge(site, sets, runtime, rule)
    return judge(site, sets_for(plan, sets), runtime, rule,
                 build=lambda example: isolated_model(plan, site, example))
