"""``ortpool bench MODEL [FIXED]``: the original, a second session of it (the control: how far
two identical sessions drift) and the fixed model timed in the same rounds, ratios taken round by
round; then each pooling node's kernel time read from a profiled session of each model (in the
fixed model, summed over every node ``ortpool fix`` wrote for it).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx

from ortpool import modelfile
from ortpool.bench.runner import Settings, compare, session_runtime
from ortpool.errors import OrtpoolError
from ortpool.model import InputSpec, ResolvedInputs, graph_inputs, resolve
from ortpool.model.fixmarks import MARK
from ortpool.model.inference import TypeTable, value_type
from ortpool.model.scopes import MAIN_GRAPH, graph_scopes, text
from ortpool.model.site import find_sites
from ortpool.model.timing import Ratio, Stats
from ortpool.ort import kernel_node, open_session, profile_dir, read_profile, stamp
from ortpool.ort.runtime_spec import run_arrays
from ortpool.ort.timed import FIXED, ORIGINAL, RunFailed, time_against
from ortpool.rewrite import rewrite
from ortpool.tolerances import MAX_LIKE

#: profiled runs per model (after one warm-up run, left out): enough for a median per node,
#: few enough that profiling, which slows every node, stays a small part of the command
PROFILED_RUNS = 10


@dataclasses.dataclass
class NodeTime:
    """One pooling node of the original model, its kernel time per run in each profile."""

    name: str
    op: str  # "MaxPool-12": the operator and the spec version its opset gives it
    original: float | None  # median seconds per run; None: no profile event names it
    fixed: float | None = None
    #: the nodes of the fixed model that stand for it (the pool node and those fix inserted)
    fixed_nodes: int = 0
    #: the providers that executed it in the original's profile
    providers: tuple[str, ...] = ()

    @property
    def ratio(self) -> float | None:
        if self.original and self.fixed is not None:
            return self.fixed / self.original
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "op": self.op, "original_s": self.original,
                "fixed_s": self.fixed, "fixed_nodes": self.fixed_nodes, "ratio": self.ratio,
                "providers": list(self.providers)}


@dataclasses.dataclass
class Profile:
    """What one model's profile says: each pooling node's time, the whole run's."""

    nodes: dict[str, float | None]  # pooling node name -> median seconds per run
    counts: dict[str, int]  # pooling node name -> nodes of this model standing for it
    providers: dict[str, tuple[str, ...]]
    run: float | None  # median seconds of a whole profiled run
    pooling: float | None  # median seconds per run of all pooling nodes together
    runs: int


@dataclasses.dataclass
class ModelBench:
    """The figures of ``ortpool bench MODEL [FIXED]``."""

    model: str
    fixed: str | None
    inputs: ResolvedInputs
    times: dict[str, Stats]
    ratios: dict[str, Ratio]  # CONTROL and FIXED, each over ORIGINAL, per round
    nodes: list[NodeTime]
    profiles: dict[str, Profile]
    notes: list[str] = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model, "fixed": self.fixed,
            "inputs": {"shapes": self.inputs.shapes, "source": self.inputs.source,
                       "open_dims": [d.to_dict() for d in self.inputs.dims]},
            "times": {name: stats.as_dict() for name, stats in self.times.items()},
            "ratios_to_original": {name: r.as_dict() for name, r in self.ratios.items()},
            "nodes": [n.to_dict() for n in self.nodes],
            "profiles": {name: {"runs": p.runs, "run_s": p.run, "pooling_s": p.pooling}
                         for name, p in self.profiles.items()},
            "notes": list(self.notes),
        }


def load(path: str | os.PathLike, notes: list[str]) -> onnx.ModelProto:
    """The model with its weights, its IR version lowered where onnxruntime needs it (noted)."""
    model = modelfile.read(path, load_external_data=True)
    if note := stamp(model):
        notes.append(f"{os.fspath(path)}: {note}")
    return model


def _signature(value: onnx.ValueInfoProto) -> str:
    kind = value_type(value)
    dims = "unknown rank" if kind.dims is None else "[" + ",".join(map(str, kind.dims)) + "]"
    return f"{kind.name or 'no element type'} {dims}"


def check_interface(model: onnx.ModelProto, fixed: onnx.ModelProto, model_label: str,
                    fixed_label: str) -> None:
    """An :class:`OrtpoolError` unless ``fixed`` takes the inputs ``model`` takes (names, order,
    element types, declared dims) and gives its outputs (names)."""
    ours = {v.name: _signature(v) for v in graph_inputs(model)}
    theirs = {v.name: _signature(v) for v in graph_inputs(fixed)}
    if list(ours) != list(theirs):
        raise OrtpoolError(
            f"FIXED {fixed_label} does not take the inputs of MODEL {model_label}: MODEL has "
            f"{', '.join(ours) or 'none'}, FIXED has {', '.join(theirs) or 'none'} (give the "
            "model 'ortpool fix' wrote from MODEL)")
    for name, signature in ours.items():
        if theirs[name] != signature:
            raise OrtpoolError(
                f"FIXED {fixed_label} does not take the inputs of MODEL {model_label}: input "
                f"{name!r} is {signature} in MODEL, {theirs[name]} in FIXED")
    outputs = [v.name for v in model.graph.output]
    fixed_outputs = [v.name for v in fixed.graph.output]
    if outputs != fixed_outputs:
        raise OrtpoolError(
            f"FIXED {fixed_label} does not give the outputs of MODEL {model_label}: MODEL gives "
            f"{', '.join(outputs) or 'none'}, FIXED gives {', '.join(fixed_outputs) or 'none'}")


#: FIXED's float outputs agree with MODEL's within this fraction of the output's largest
#: magnitude: sums computed in another order (a form, another layout downstream) differ in their
#: last bits, a float16 cast on the way (2**-11) or another computation by far more
RELATIVE_TOLERANCE = 1e-4


def check_equivalent(pair: Pair, spec: InputSpec | None, settings: Settings) -> None:
    """An :class:`OrtpoolError` unless FIXED computes what MODEL means (its pools run by
    ortpool's ops) on the inputs ``spec`` resolves: exactly where a max-like pool writes the
    output, else within :data:`RELATIVE_TOLERANCE`. Inputs it cannot size are refused here
    too, FIXED or not: before ``ortpool bench`` prints a line."""
    resolved = resolve(pair.model, spec, seed=settings.seed)
    if pair.fixed is None:
        return
    runtime = dataclasses.replace(settings.runtime, shared_pool=False)
    sites, _ = find_sites(pair.model, skip_invalid=True, table=TypeTable())
    exact = {o for site in sites if site.op in MAX_LIKE for o in site.node.output}
    exact_spec = rewrite(pair.model, skip_invalid=True)
    found = []
    for model, label in ((exact_spec, pair.label), (pair.fixed, pair.fixed_label)):
        try:
            found.append(run_arrays(open_session(runtime, model), None, resolved.feeds))
        except Exception as err:  # onnxruntime's own exception types differ between releases
            raise resolved.cannot_run(label or "", str(err)) from None
    for value, expected, got in zip(pair.model.graph.output, *found, strict=True):
        exactly = value.name in exact
        # a sequence output (SplitToSequence's tensors may differ in shape): tensor by tensor
        want, have = ([np.asarray(a) for a in v] if isinstance(v, list) else [np.asarray(v)]
                      for v in (expected, got))
        why, agrees, _ = (compare(want, have, exactly, RELATIVE_TOLERANCE)
                          if len(want) == len(have)
                          else (f"holds {len(have)} tensors, not {len(want)}", False, 0.0))
        how = "exactly: a max is one of its inputs" if exactly else (
            f"within {RELATIVE_TOLERANCE:g} of its magnitude")
        if not agrees:
            raise OrtpoolError(
                f"FIXED {pair.fixed_label} does not compute what MODEL {pair.label} means (its "
                f"pooling nodes as the ONNX spec defines them): output {value.name!r} {why} "
                f"(compared {how}); bench times a model against its fixed form only (give the "
                "model 'ortpool fix' wrote from MODEL)")


def _profile_keys(node: onnx.NodeProto) -> tuple[str, ...]:
    """The names a node's profile events can carry: its own, or ``<first output>_nchwc`` where
    onnxruntime's NCHWc layout pass replaced it."""
    keys = [text(node.name)] if node.name else []
    if node.output and node.output[0]:
        keys.append(f"{text(node.output[0])}_nchwc")
    return tuple(keys)


def _owners(model: onnx.ModelProto, pools: Mapping[str, str], fixed: bool) -> dict[str, str]:
    """Profile key -> the pooling node (``pools``: name -> label) the event's time belongs to:
    the node of that name and, in a fixed model, every node ``ortpool fix`` inserted for it."""
    owners: dict[str, str] = {}
    for scope in graph_scopes(model.graph, ("graph",), MAIN_GRAPH, model.opset_import, None):
        for node in scope.nodes:
            owner = pools.get(text(node.name)) if node.name else None
            if owner is None and fixed and node.doc_string.startswith(MARK):
                owner = next((label for name, label in pools.items()
                              if f"for node {name!r}" in text(node.doc_string)), None)
            if owner is not None:
                for key in _profile_keys(node):
                    owners.setdefault(key, owner)
    return owners


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def profile(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], pools: Mapping[str, str],
            settings: Settings, fixed: bool = False, runs: int = PROFILED_RUNS) -> Profile:
    """Each pooling node's kernel time per run, from ``runs`` profiled runs after a warm-up."""
    spec = session_runtime(settings)
    folder = profile_dir()
    try:
        session = open_session(spec, model, profile_dir=folder)
        for _ in range(runs + 1):
            run_arrays(session, None, feeds)
        events = read_profile(session)
    finally:  # read or not (a failing run), the profile goes now
        shutil.rmtree(folder, ignore_errors=True)
    # A run's node events fall inside its model_run event; the first run is the warm-up.
    spans = sorted((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))) for e in events
                   if e.get("cat") == "Session" and e.get("name") == "model_run")[1:]
    owners = _owners(model, pools, fixed)
    names = list(pools.values())
    per_run: dict[str, list[float]] = {n: [0.0] * len(spans) for n in names}
    seen: dict[str, set[str]] = {n: set() for n in names}
    providers: dict[str, set[str]] = {n: set() for n in names}
    for event in events:
        node = kernel_node(event)
        owner = owners.get(node or "")
        if owner is None:
            continue
        ts = float(event.get("ts", 0))
        run = next((i for i, (lo, hi) in enumerate(spans) if lo <= ts <= hi), None)
        if run is None:
            continue
        per_run[owner][run] += float(event.get("dur", 0)) * 1e-6
        seen[owner].add(node or "")
        if provider := (event.get("args") or {}).get("provider"):
            providers[owner].add(str(provider))
    times = {n: (_median(per_run[n]) if seen[n] else None) for n in names}
    totals = [sum(per_run[n][i] for n in names if seen[n]) for i in range(len(spans))]
    return Profile(
        nodes=times, counts={n: len(seen[n]) for n in names},
        providers={n: tuple(sorted(p)) for n, p in providers.items()},
        run=_median([(hi - lo) * 1e-6 for lo, hi in spans]),
        pooling=_median(totals) if any(seen.values()) else None, runs=len(spans))


@dataclasses.dataclass
class Pair:
    """MODEL and FIXED as read (IR versions lowered where needed), their labels and notes."""

    model: onnx.ModelProto
    fixed: onnx.ModelProto | None
    label: str
    fixed_label: str | None
    notes: list[str]


def load_pair(model_path: str | os.PathLike, fixed_path: str | os.PathLike | None) -> Pair:
    """Read MODEL and FIXED and check that FIXED takes MODEL's inputs and gives its outputs;
    before the thread pool is shared (lowering an IR version opens probe sessions)."""
    notes: list[str] = []
    model = load(model_path, notes)
    fixed = load(fixed_path, notes) if fixed_path is not None else None
    label = os.fspath(model_path)
    fixed_label = os.fspath(fixed_path) if fixed_path is not None else None
    if fixed is not None and fixed_label is not None:
        check_interface(model, fixed, label, fixed_label)
    return Pair(model, fixed, label, fixed_label, notes)


def bench_models(pair: Pair, spec: InputSpec | None, settings: Settings) -> ModelBench:
    """Time ``pair.model`` against itself (the control) and against ``pair.fixed`` when given,
    interleaved, on the inputs ``spec`` resolves; then profile each for its pooling nodes."""
    model, fixed, label = pair.model, pair.fixed, pair.label
    fixed_label = pair.fixed_label or ""
    notes = list(pair.notes)
    resolved = resolve(model, spec, seed=settings.seed)
    feeds = dict(resolved.feeds)
    try:
        times, ratios = time_against(model, fixed, feeds, session_runtime(settings),
                                     settings.repeat, settings.min_sample)
    except RunFailed as err:  # onnxruntime's own errors: the sizes chosen, then its reason
        which = fixed_label if err.variant == FIXED else label
        raise resolved.cannot_run(which, err.reason) from None
    # no types needed: the sites' names and versions (an empty table spares onnx inference)
    pools, _ = find_sites(model, skip_invalid=True, table=TypeTable())
    # unnamed nodes cannot be told apart in a profile (onnxruntime names events by node name)
    named = {text(p.node.name): p.name for p in pools if p.node.name}
    profiles = {ORIGINAL: profile(model, feeds, named, settings)}
    if fixed is not None:
        profiles[FIXED] = profile(fixed, feeds, named, settings, fixed=True)
    original, theirs = profiles[ORIGINAL], profiles.get(FIXED)
    nodes = [NodeTime(p.name, p.key if p.version else p.op, original.nodes.get(p.name),
                      theirs.nodes.get(p.name) if theirs else None,
                      theirs.counts.get(p.name, 0) if theirs else 0,
                      original.providers.get(p.name, ())) for p in pools]
    if not pools:
        notes.append(f"{label} holds no standard pooling node: no per-node times")
    # only a pool the profile found can tell: an unnamed one or one in a function has no event
    profiled = [n for n in nodes if n.original is not None]
    if fixed is not None and profiled and not any(n.fixed_nodes for n in profiled):
        notes.append(
            f"no node of FIXED {fixed_label} stands for a pooling node of MODEL (none has its "
            "name or was written for it by 'ortpool fix'): is FIXED MODEL's fixed form?")
    if missing := [n.name for n in nodes if n.original is None]:
        notes.append(
            "no profile event names " + ", ".join(missing) + " (an unnamed node, a node inside "
            "a function, or one onnxruntime's optimizer fused into another)")
    return ModelBench(label, pair.fixed_label, resolved, times, ratios, nodes, profiles, notes)
