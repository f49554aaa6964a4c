"""Proving a realization exact: its isolated model judged as the node itself is, by
:func:`ortpool.check.judge.judge` (the same inputs, run and comparison; the node as it is by the
very call ``validate``'s verdict makes); a form fix wrote read back as the site of the spec it
claims (:func:`recorded_regions`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import onnx
from onnx import helper

from ortpool import dtypes, optypes
from ortpool.check.cases import FeedSet, full_shape, proof_sets, sampled_shapes
from ortpool.check.judge import Judgement, judge
from ortpool.errors import OrtpoolError
from ortpool.forms import emit
from ortpool.forms.plan import Plan
from ortpool.model import fixmarks
from ortpool.model.inference import learn_shapes
from ortpool.model.scopes import model_scopes, text
from ortpool.model.singlenode import frame, node_model, region_model, rewired
from ortpool.model.site import INPUT_NAMES, Site, read_values
from ortpool.ort.runtime_spec import ISOLATED_LEVEL, RuntimeSpec
from ortpool.rewrite import retarget, rewrite
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


def recorded_regions(model: onnx.ModelProto, fixed: dict[str, fixmarks.FixedNode],
                     notes: list[str], nonfinite: bool, seed: int = 0,
                     rule: AccuracyRule = DEFAULT_RULE) -> list[tuple[fixmarks.FixedNode, Site]]:
    """Each form fix wrote (``fixed``: :func:`ortpool.model.fixmarks.read`) as the site of the
    spec it claims, reading the node's own inputs where the form stands (``validate`` and a
    second ``fix`` judge it as it stands, never take it from the record); a record naming no
    spec ortpool knows, or a spec its nodes do not compute under the spec (:func:`_unlike`, in
    the domain ``nonfinite``), is dropped from ``fixed`` with a note: its nodes are judged as
    they stand. A node with its attributes rewritten (no node inserted) is no region: it is
    judged as the node it is."""
    scopes = {(scope.location, text(n.name)): (scope, n.op_type) for scope in model_scopes(model)
              for n in scope.nodes if n.name}
    read = read_values(model)
    table = learn_shapes(model) if fixed else None
    regions = []
    for key, entry in list(fixed.items()):
        name = entry.name
        scope, op_type = scopes.get((entry.scope, name), (None, None))
        op, _, version = entry.op.rpartition("-")
        x_type = table.lookup(scope, entry.inputs[0]) if table and scope else None
        elem = dtypes.NAME_OF_CODE.get(x_type.elem_type) if x_type is not None else None
        try:
            site = Site.alone(op, int(version), entry.attributes, elem or "float",
                              x_type.static_dims if x_type is not None else None,
                              len(entry.inputs), len(entry.outputs), name=name)
        except (OrtpoolError, ValueError, KeyError) as err:
            notes.append(f"fix's record of node {key!r} names no spec ortpool knows "
                         f"({entry.op}: {err}): its nodes are judged as they stand")
            del fixed[key]
            continue
        node = rewired(site.node, entry.inputs, site.node.output)
        region = dataclasses.replace(
            site, node=node, inputs=tuple(entry.inputs), outputs=tuple(entry.outputs),
            scope=scope, location=scope.location if scope else "?",
            opset=scope.opset if scope and scope.opset else site.opset,
            elem=elem, indices_read=len(entry.outputs) > 1 and entry.outputs[1] in read)
        unlike = _unlike(model, region, nonfinite, seed, rule)
        if unlike:
            notes.append(f"fix's record of node {key!r} (form {entry.form}) claims {entry.op} "
                         f"with attributes {entry.attributes}, which its nodes do not compute "
                         f"under the spec ({unlike}): its nodes are judged as they stand")
            del fixed[key]
            continue
        if not entry.nodes and op_type == op:
            continue  # the node with its attributes rewritten: judged as it is
        regions.append((entry, region))  # (a ReduceMax of the node's name too: one node)
    return regions


def _unlike(model: onnx.ModelProto, site: Site, nonfinite: bool, seed: int,
            rule: AccuracyRule) -> str:
    """How the form's nodes, each pool in them computed by ortpool's kernels (the spec), differ
    from the spec of the node the record claims on the built cases; "" where they agree (or
    their type and size are not known: such a form is never judged fixed)."""
    shape = full_shape(site) if site.elem else None
    shapes = [shape] if shape is not None else sampled_shapes(site) if site.elem else []
    if not shapes:
        return ""
    holder = site.scope.holder if site.scope is not None else None

    def build(example: Sequence[np.ndarray]) -> onnx.ModelProto:
        region = region_model(model, list(site.inputs), list(site.compared_outputs), example,
                              holder)
        try:
            return rewrite(region)
        except (OrtpoolError, ValueError):
            return region

    sized = site.at(shape) if shape is not None else site
    sets = proof_sets(sized, shapes, seed=seed, nonfinite=nonfinite)
    spec = judge(sized, sets, RuntimeSpec(level=ISOLATED_LEVEL), rule, build=build)
    return "" if spec.exact else spec.failure or spec.status
