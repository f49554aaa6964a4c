"""The model's own runs in ``ortpool fix``: its inputs (the user's, else the defaults) and its
main-graph nodes' inputs (and outputs, to prove the written model) captured as extra outputs;
the source model runs with optimizations off, rewritten where onnxruntime cannot run it. The
written model is proven there too, where an optimization across nodes can undo a form proven
alone: each node's output in the model's run (:func:`prove_in_model`), and its built cases,
which the run never reaches, through its region (:func:`prove_regions`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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
from ortpool.forms.plan import Plan
from ortpool.forms.prove import sets_for
from ortpool.model import capture as capture_mod
from ortpool.model import inputs as model_inputs
from ortpool.model.singlenode import region_model
from ortpool.model.site import Site
from ortpool.ort import runtime_spec
from ortpool.ort.opening import open_session
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule

#: Seeds of the generated model inputs the written model is proven on.
MODEL_SEEDS = (0, 1)


def model_runs(model: onnx.ModelProto, inputs: Sequence[Mapping[str, np.ndarray]] | None,
               spec: model_inputs.InputSpec
               ) -> tuple[list[dict[str, np.ndarray]], model_inputs.ResolvedInputs | None]:
    """The inputs of the capture and model-proof runs (``inputs``, or resolved from ``spec``: one
    run when the user gives every array), and the first resolution (for the report)."""
    if inputs is not None:
        return [dict(feeds) for feeds in inputs], None
    # Not --seed: what the model's run captures is proof input, and a verdict must not depend
    # on the seed (ruling 18); the seed varies only the built proof sets' fill.
    resolved = [model_inputs.resolve(model, spec, MODEL_SEEDS[0])]
    if len(spec.arrays) < len(model_inputs.graph_inputs(model)):
        resolved += [model_inputs.resolve(model, spec, s) for s in MODEL_SEEDS[1:]]
    return [r.feeds for r in resolved], resolved[0]


def captured_names(sites: Sequence[Site], outputs: bool) -> list[str]:
    """The main-graph nodes' inputs (and outputs) to capture."""
    names: list[str] = []
    for site in sites:
        if not site.in_main_graph or not site.judgeable:
            continue
        wanted = [n for n in site.node.input if n]
        if outputs:
            wanted += list(site.compared_outputs)
        names += [n for n in wanted if n not in names]
    return names


class Capturing:
    """Runs of ``model`` with ``names`` as extra outputs (name -> array, initializers read); the
    widened model and its session built once per set of fed names (a failure kept, raised)."""

    def __init__(self, model: onnx.ModelProto, names: list[str], runtime: RuntimeSpec,
                 level: str | None, source_dir: str | None) -> None:
        self.model, self.names = model, names
        self.runtime, self.level, self.source_dir = runtime, level, source_dir
        self._built: dict[frozenset[str], Any] = {}

    def built(self, feeds: Mapping[str, np.ndarray]) -> Any:
        """(its session, the names fetched) for these fed names, or why they could not be built
        (the same for every run)."""
        fed = frozenset(feeds)
        if fed not in self._built:
            initializers = {t.name for t in self.model.graph.initializer}
            fetched = [n for n in self.names if n not in fed and n not in initializers]
            try:
                wide = capture_mod.capture_model(self.model, fetched)
                session = open_session(self.runtime, wide, level=self.level,
                                       external_dir=self.source_dir)
                self._built[fed] = (session, fetched)
            except Exception as err:  # onnxruntime refuses the model
                self._built[fed] = err
        return self._built[fed]

    def __call__(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        built = self.built(feeds)
        if isinstance(built, Exception):
            raise built
        session, fetched = built
        # bfloat16 fed and fetched as OrtValues (run_arrays); with nothing to capture, the
        # model's outputs are fetched: it must still load and run
        arrays = runtime_spec.run_arrays(session, fetched or None, feeds)
        found = dict(zip(fetched, map(np.asarray, arrays), strict=True)) if fetched else {}
        found.update({k: np.asarray(v) for k, v in feeds.items() if k in self.names})
        for tensor in self.model.graph.initializer:
            if tensor.name in self.names and tensor.data_location != onnx.TensorProto.EXTERNAL:
                found[tensor.name] = onnx.numpy_helper.to_array(tensor)
        return found


def capture_inputs(model: onnx.ModelProto, sites: Sequence[Site],
                   runs: Sequence[Mapping[str, np.ndarray]], runtime: RuntimeSpec,
                   source_dir: str | None, notes: list[str],
                   resolved: model_inputs.ResolvedInputs | None = None
                   ) -> list[dict[str, np.ndarray]]:
    """The real inputs of the main-graph nodes, from runs of the source model. Where it runs
    neither plain nor rewritten with dims left open, the error names them (most often why)."""
    names = captured_names(sites, outputs=False)
    if not names:
        return []
    captured: list[dict[str, np.ndarray]] = []
    source = Capturing(model, names, runtime, "disable", source_dir)
    rewritten: Capturing | None = None
    for number, feeds in enumerate(runs):
        try:
            captured.append(source(feeds))
            continue
        except Exception as err:  # onnxruntime cannot run the source model (a refused node)
            first = short_error(err)
        try:
            if rewritten is None:
                from ortpool.rewrite import rewrite

                rewritten = Capturing(rewrite(model), names, runtime, "disable", source_dir)
            captured.append(rewritten(feeds))
            if number == 0:
                notes.append(f"onnxruntime could not run the model ({first}); node inputs were "
                             "captured from its ortpool-rewritten run")
        except Exception as err:
            loaded = not isinstance(source.built(feeds), Exception)
            if loaded and resolved is not None and resolved.dims:
                # It loads but does not run: most often the sizes chosen (docs/validate.md)
                raise resolved.cannot_run("", first) from None
            notes.append(f"no node input could be captured: {short_error(err)}")
            return []
    return captured


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
            return {}, f"the written model could not be run: {short_error(err)}"
        for site in sites:
            if not site.judgeable or not site.in_main_graph:
                continue
            arrays = [run[name] for name in site.inputs]
            got = [run[name] for name in site.compared_outputs]
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
    """Every main-graph node's proof sets through its realization as written in ``fixed`` (its
    region: :func:`region_model`) at the runtime's level, into its in-model proof (started where
    there is none): it fails with the first set that differs, and counts them otherwise."""
    for site in sites:
        if not site.judgeable or not site.in_main_graph or site.number not in plans:
            continue
        proof = in_model.setdefault(site.number, Judgement(where="model"))
        # the very sets it was proven on alone, through the form as written: the two proofs
        # count the same sets (the model's own runs besides)
        chosen = sets_for(plans[site.number], sets.get(site.number) or [])
        outputs = list(site.compared_outputs)
        for group in shape_groups(chosen):
            if proof.failure:
                break
            try:
                region = region_model(fixed, list(site.inputs), outputs, group[0].arrays)
                session = open_session(runtime, region, level=None, threads=1,
                                       external_dir=source_dir)
            except Exception as err:  # onnxruntime refuses it: the realization is not proven
                proof.fail(st.ORT_REJECTED, "the realization as written cannot be run alone on "
                           f"its proof sets: {short_error(err)}")
                break
            run_group(session_run(session), site, group, proof, rule)
