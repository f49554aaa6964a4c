"""Proving the written model: every main-graph node's realization as ``ortpool fix`` wrote it.

A node proven exact alone (:mod:`ortpool.fix.prove`) may not be exact in the model: an
optimization across nodes can undo its form. So the written model is run at the runtime's
optimization level on the model's own inputs with every main-graph node's input and output
captured (:mod:`ortpool.fix.capture`), and each output is compared with ortpool's kernels on
the captured input (:func:`prove_in_model`). The model's run reaches a node only with the
values its upstream makes, which hold no NaN: the node's built cases (ruling 18) are run
through its realization as written, its *region* of the model (:func:`region_model`,
:func:`prove_in_region`, :func:`prove_regions`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx
from onnx import helper

from ortpool import dtypes
from ortpool.check.cases import FeedSet, expect
from ortpool.check.judge import (
    Proof,
    compare,
    run_group,
    shape_groups,
    short_error,
    value_info,
)
from ortpool.check.node import NodeFacts, node_spec
from ortpool.fix.capture import Capturing, captured_names
from ortpool.fix.forms import Plan
from ortpool.fix.prove import sets_for
from ortpool.fix.sites import Site
from ortpool.model import carry
from ortpool.ort.opening import open_session
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule

NOT_RUNNING = "the written model could not be run"


def region_model(
    model: onnx.ModelProto,
    inputs: Sequence[str],
    outputs: Sequence[str],
    example: Sequence[np.ndarray],
) -> onnx.ModelProto:
    """The nodes of ``model``'s main graph that compute ``outputs`` from ``inputs`` (a written
    realization: the pool and every node the fix put around it), as they are written, with the
    initializers they read; ``inputs`` shaped as ``example``. A bfloat16 input or output is
    carried as float32 through a Cast (onnxruntime's Python API has no bfloat16 array)."""
    graph = model.graph
    producer = {name: node for node in graph.node for name in node.output if name}
    initializers = {t.name: t for t in graph.initializer}
    wanted, seen, order = list(outputs), set(inputs), []
    while wanted:
        name = wanted.pop()
        if name in seen or name in initializers or name not in producer:
            seen.add(name)
            continue
        seen.add(name)
        node = producer[name]
        if node not in order:
            order.append(node)
            wanted += [n for n in node.input if n]
            for attr in node.attribute:  # a subgraph's outer-scope reads
                for sub in [attr.g, *attr.graphs]:
                    wanted += [n for inner in sub.node for n in inner.input if n]
    nodes = sorted(order, key=lambda n: list(graph.node).index(n))
    used = {n for node in nodes for n in node.input}
    values = [value_info(name, a, True) for name, a in zip(inputs, example, strict=True)]
    # Y has X's type (every pooling op), declared where it is carried; Indices are int64
    elem = dtypes.name_of(example[0].dtype)
    outs = [onnx.ValueInfoProto(name=name) for name in outputs]
    if carry.is_carried(elem):
        outs[0] = helper.make_tensor_value_info(outputs[0], dtypes.CODE[elem], None)
    region = helper.make_graph(
        nodes,
        "ortpool_fix_region",
        values,
        outs,
        [initializers[n] for n in initializers if n in used and n not in inputs],
    )
    out = helper.make_model(
        region, opset_imports=list(model.opset_import), functions=list(model.functions)
    )
    out.ir_version = model.ir_version
    return carry.carry(out)


def prove_in_region(
    model: onnx.ModelProto,
    facts: NodeFacts,
    node: onnx.NodeProto,
    sets: Sequence[FeedSet],
    runtime: RuntimeSpec,
    proof: Proof,
    external_dir: str | None = None,
    rule: AccuracyRule = DEFAULT_RULE,
) -> None:
    """The node's proof sets, the built cases among them (ruling 18), through the
    realization as written in ``model`` (its region: :func:`region_model`), at the runtime's
    level, sums judged by ruling 17 under ``rule``; ``proof`` (the in-model proof) is
    made not exact with the failure when one differs, and counts the sets otherwise."""
    inputs = [n for n in node.input if n]
    outputs = list(node.output[: 2 if facts.indices_used else 1])
    for group in shape_groups(sets):
        if not proof.exact:
            return
        try:
            region = region_model(model, inputs, outputs, group[0].arrays)
            session = open_session(
                runtime, region, level=None, threads=1, external_dir=external_dir
            )
        except Exception as err:  # onnxruntime refuses it: the realization is not proven
            proof.exact, proof.failure = (
                False,
                (
                    f"the realization as written cannot be run alone on its proof sets: "
                    f"{short_error(err)}"
                ),
            )
            return
        failure = run_group(session, facts, group, proof, rule)
        if failure:
            proof.exact, proof.failure = False, failure
            return


def prove_in_model(
    fixed: onnx.ModelProto,
    sites: Sequence[Site],
    model_runs: Sequence[Mapping[str, np.ndarray]],
    runtime: RuntimeSpec,
    source_dir: str | None,
    rule: AccuracyRule = DEFAULT_RULE,
) -> tuple[dict[int, Proof], str]:
    """Each main-graph node's output in the written model against the kernels on its captured
    input; per site number, the proof; and a note when the model could not be run (the model is
    run even when no node can be captured: it must load and run)."""
    names = captured_names(sites, outputs=True)
    proofs: dict[int, Proof] = {}
    capturing = Capturing(fixed, names, runtime, None, source_dir)
    for number, feeds in enumerate(model_runs):
        try:
            run = capturing(feeds)
        except Exception as err:
            return {}, f"{NOT_RUNNING}: {short_error(err)}"
        for site in sites:
            facts = site.facts
            if facts is None or not site.selected or not site.in_main_graph:
                continue
            arrays = [run[name] for name in site.node.input if name]
            got = [run[name] for name in site.node.output[: 2 if facts.indices_used else 1]]
            feed = FeedSet(f"the model's run {number + 1}", arrays)
            if not expect(node_spec(facts), [feed]):
                continue
            proof = proofs.setdefault(site.number, Proof(exact=True, where="model"))
            if not proof.exact:
                continue
            failure = compare(facts, feed, got, proof, rule)
            if failure:
                proof.exact, proof.failure = False, failure
            else:
                proof.passed(feed)
    return proofs, ""


def prove_regions(
    fixed: onnx.ModelProto,
    sites: Sequence[Site],
    plans: Mapping[int, Plan],
    sets: Mapping[int, Sequence[FeedSet]],
    in_model: dict[int, Proof],
    runtime: RuntimeSpec,
    source_dir: str | None,
    rule: AccuracyRule = DEFAULT_RULE,
) -> None:
    """Every main-graph node's proof sets, the built NaN/inf cases among them (ruling 18),
    through its realization as written in ``fixed``: the model's own run reaches a node only
    with the values its upstream makes, which hold no NaN (:func:`prove_in_region`). Adds to
    (or starts) each node's in-model proof."""
    for site in sites:
        if site.facts is None or not site.in_main_graph or site.number not in plans:
            continue
        proof = in_model.setdefault(site.number, Proof(exact=True, where="model"))
        mine = sets.get(site.number) or []
        # the built cases (what the model's run cannot reach); all sets where none are built
        chosen = sets_for(plans[site.number], [feed for feed in mine if feed.cases] or mine)
        if proof.exact and chosen:
            prove_in_region(fixed, site.facts, site.node, chosen, runtime, proof, source_dir, rule)
