"""Proving the written model, where an optimization across nodes can undo a form proven alone:
each main-graph node's output in the model's run against the kernels (:func:`prove_in_model`),
and its built cases, which the run never reaches, through its region (:func:`prove_regions`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx

from ortpool.check import status as st
from ortpool.check.cases import FeedSet, expect
from ortpool.check.judge import (
    Judgement,
    compare_set,
    run_group,
    session_run,
    shape_groups,
    short_error,
)
from ortpool.fix.capture import Capturing, captured_names
from ortpool.forms.plan import Plan
from ortpool.forms.prove import sets_for
from ortpool.model.singlenode import region_model
from ortpool.model.site import Site
from ortpool.ort.opening import open_session
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule

NOT_RUNNING = "the written model could not be run"


def prove_in_region(model: onnx.ModelProto, site: Site, sets: Sequence[FeedSet],
                    runtime: RuntimeSpec, proof: Judgement, external_dir: str | None = None,
                    rule: AccuracyRule = DEFAULT_RULE) -> None:
    """``sets`` through the realization as written in ``model`` (its region:
    :func:`region_model`) at the runtime's level: ``proof`` fails with the first that differs,
    and counts them otherwise."""
    inputs = list(site.inputs)
    outputs = list(site.outputs[: 2 if site.indices_read else 1])
    for group in shape_groups(sets):
        if proof.failure:
            return
        try:
            region = region_model(model, inputs, outputs, group[0].arrays)
            session = open_session(runtime, region, level=None, threads=1,
                                   external_dir=external_dir)
        except Exception as err:  # onnxruntime refuses it: the realization is not proven
            proof.fail(st.ORT_REJECTED, "the realization as written cannot be run alone on its "
                       f"proof sets: {short_error(err)}")
            return
        run_group(session_run(session), site, group, proof, rule)


def prove_in_model(fixed: onnx.ModelProto, sites: Sequence[Site],
                   model_runs: Sequence[Mapping[str, np.ndarray]], runtime: RuntimeSpec,
                   source_dir: str | None, rule: AccuracyRule = DEFAULT_RULE
                   ) -> tuple[dict[int, Judgement], str]:
    """Per site number, each main-graph node's output in the written model against the kernels
    on its captured input; and why the model could not run (it must, captured nodes or not)."""
    names = captured_names(sites, outputs=True)
    proofs: dict[int, Judgement] = {}
    capturing = Capturing(fixed, names, runtime, None, source_dir)
    for number, feeds in enumerate(model_runs):
        try:
            run = capturing(feeds)
        except Exception as err:
            return {}, f"{NOT_RUNNING}: {short_error(err)}"
        for site in sites:
            if not site.judgeable or not site.in_main_graph:
                continue
            arrays = [run[name] for name in site.inputs]
            got = [run[name] for name in site.outputs[: 2 if site.indices_read else 1]]
            feed = FeedSet(f"the model's run {number + 1}", arrays)
            if not expect(site, [feed]):
                continue
            proof = proofs.setdefault(site.number, Judgement(where="model"))
            if proof.failure:
                continue
            status, _, failure = compare_set(site.at(arrays[0].shape), feed, got, rule)
            if failure:
                proof.fail(status, failure)
            else:
                proof.runs += 1
    return proofs, ""


def prove_regions(fixed: onnx.ModelProto, sites: Sequence[Site], plans: Mapping[int, Plan],
                  sets: Mapping[int, Sequence[FeedSet]], in_model: dict[int, Judgement],
                  runtime: RuntimeSpec, source_dir: str | None,
                  rule: AccuracyRule = DEFAULT_RULE) -> None:
    """Every main-graph node's proof sets through its realization as written in ``fixed``
    (:func:`prove_in_region`), added to (or starting) its in-model proof."""
    for site in sites:
        if not site.judgeable or not site.in_main_graph or site.number not in plans:
            continue
        proof = in_model.setdefault(site.number, Judgement(where="model"))
        # the very sets it was proven on alone, through the form as written: the two proofs
        # count the same sets (the model's own runs besides)
        chosen = sets_for(plans[site.number], sets.get(site.number) or [])
        if not proof.failure and chosen:
            prove_in_region(fixed, site, chosen, runtime, proof, source_dir, rule)
