"""Proving a realization exact: its isolated model judged as the node itself is, by
:func:`ortpool.check.judge.judge` (the same inputs, run and comparison; the node as it is by the
very call ``validate``'s verdict makes).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import helper

from ortpool import optypes
from ortpool.check.cases import FeedSet
from ortpool.check.judge import Judgement, judge
from ortpool.forms import emit
from ortpool.forms.plan import Plan
from ortpool.model.singlenode import frame, node_model
from ortpool.model.site import INPUT_NAMES, Site
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.rewrite import retarget
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule


def isolated_model(plan: Plan, site: Site, example: Sequence[np.ndarray]) -> onnx.ModelProto:
    """The realization alone at the node's opset: X (I, output_shape) shaped as ``example``, Y
    (and Indices where the plan keeps the spec's)."""
    node = site.node
    inputs, outputs = frame(site, example, len(site.outputs) > 1 and plan.keeps_indices)
    namer = retarget.Namer([*INPUT_NAMES, "Y", "Indices"])
    nodes = emit.emit(plan, site, node, [v.name for v in inputs], [v.name for v in outputs],
                      namer)
    imports = [helper.make_opsetid(node.domain or "", site.opset)]
    if plan.ortpool:
        imports.append(helper.make_opsetid(optypes.DOMAIN, optypes.DOMAIN_VERSION))
    return node_model(nodes, "ortpool_fix_proof", inputs, outputs, imports)


def sets_for(plan: Plan, sets: Sequence[FeedSet]) -> list[FeedSet]:
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


def prove_plan(plan: Plan, site: Site, sets: Sequence[FeedSet], runtime: RuntimeSpec,
               rule: AccuracyRule = DEFAULT_RULE) -> Judgement:
    """``plan`` alone on every set (:func:`sets_for`) at the runtime's level, judged as the
    node itself is (sums by ruling 17 under ``rule``)."""
    if not plan.changes_node:
        return judge(site, sets, runtime, rule)
    return judge(site, sets_for(plan, sets), runtime, rule,
                 build=lambda example: isolated_model(plan, site, example))
