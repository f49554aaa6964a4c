"""The engine: one pooling node judged on a runtime, in one domain of inputs: a :class:`Judgement`.

A model of the node (the node alone, or a form ``fix`` wrote: ``build``) runs at the runtime's
level on every set of :mod:`ortpool.check.cases`, each output compared by
:mod:`ortpool.check.compare`: on a captured set the rulings' cells and Index ties are counted
apart, on a *built* set (ruling 18) any difference is one. A set that differs is run again with
optimizations off, so that an optimizer folding a form back (PadFusion) is caught (``folded``).
"""

from __future__ import annotations

import collections
import dataclasses
import shutil
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx

from ortpool import dtypes, versions
from ortpool.check import status as st
from ortpool.check.cases import FeedSet, expect
from ortpool.check.compare import (
    CAT_RULING,
    TensorComparison,
    compare_indices,
    compare_values,
    ruling_masks,
)
from ortpool.model.singlenode import alone_model
from ortpool.model.site import Site
from ortpool.ort import runtime_spec
from ortpool.ort.opening import open_session, optimized
from ortpool.ort.ortrun import NO_KERNEL, classify, known_version
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.runtimes.base import CRASHED, TIMED_OUT, RuntimeFailure, Worker
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule, node_tolerance

#: A model of the node for inputs shaped as the given example arrays.
Build = Callable[[Sequence[np.ndarray]], onnx.ModelProto]


@dataclasses.dataclass
class Judgement:
    """How a model of a node fared on its input sets: the status, on what, by how much."""

    status: str = st.AGREE
    where: str = "isolation"  # "isolation" (the node alone) or "model" (in the fixed model)
    sets: int = 0  # the input sets whose outputs were the spec's
    runs: int = 0  # in a fixed model: its own runs whose node outputs were the spec's
    shapes: list[list[int]] = dataclasses.field(default_factory=list)
    tolerance: str = "exact"
    max_abs: float | None = None
    max_rel: float | None = None
    differing: int = 0
    failure: str = ""  # the first set that differs, in words ("" when exact)
    folded: bool = False  # exact with graph optimizations off: the optimizer undid the form
    #: op type -> the provider that executed it, where another than the CPU one was asked for
    #: (from the session's profile; a compiled subgraph: ``OpenVINO-EP-subgraph_1``)
    executed_by: dict[str, str] = dataclasses.field(default_factory=dict)
    asked: str = ""  # the provider asked for first: ops another one executed fell back
    runtime: str = "onnxruntime"  # the runtime judged (:mod:`ortpool.runtimes`' name)
    #: a sum's worst rounding beyond the agree band, in u*mean|x| (and ulp): a note (ruling 17)
    noted_units: float | None = None
    noted_ulp: float | None = None
    #: the set a report shows (the first that differs, else the first) and its comparisons
    shown: str = ""
    shown_status: str = ""
    shown_observed: bool = False  # the shown set is the model's own input
    shown_shapes: list[list[int]] = dataclasses.field(default_factory=list)
    comparisons: list[TensorComparison] = dataclasses.field(default_factory=list, repr=False)
    #: not serialised: the first observed set; the shown set and the runtime's outputs on it
    #: (what :mod:`ortpool.check.causes` checks a reading against)
    captured: FeedSet | None = dataclasses.field(default=None, repr=False)
    shown_feed: FeedSet | None = dataclasses.field(default=None, repr=False)
    shown_outputs: list[np.ndarray] | None = dataclasses.field(default=None, repr=False)

    @property
    def exact(self) -> bool:
        """The runtime computes the spec's result on every set (ruling 17's limit and a captured
        set's Index ties included); in a fixed model, nothing there contradicts the proof."""
        counted = self.sets > 0 or self.runs > 0 or self.where == "model"
        return counted and self.status in (st.AGREE, st.TIES, st.ACCURACY_NOTE)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name not in ("comparisons", "captured", "shown_feed", "shown_outputs")}
        out["exact"] = self.exact
        out["outputs"] = [c.to_dict() for c in self.comparisons]
        return out

    def passed(self, feed: FeedSet) -> None:
        """Count ``feed`` as one more set the model gives the spec's outputs on."""
        self.sets += 1
        if list(feed.shape) not in self.shapes:
            self.shapes.append(list(feed.shape))

    def fail(self, status: str, failure: str) -> None:
        self.status, self.failure = status, failure

    def describe(self) -> str:
        if not self.exact:
            return self.failure
        err = "" if self.max_abs in (None, 0.0) else f", max abs error {self.max_abs:.3g}"
        if self.noted_units is not None:
            err += (f"; accuracy note: up to {self.noted_ulp:.3g} ulp = "
                    f"{self.noted_units:.3g} u*mean|x|, within the accuracy limit")
        sets = f"{self.sets} input set" + ("" if self.sets == 1 else "s")
        if self.where == "model":
            runs = f"its {self.runs} run" + ("" if self.runs == 1 else "s")
            sets = f"{sets} through its form as written and on {runs}" if self.sets else runs
            return f"exact in the fixed model on {sets} ({self.tolerance}{err})"
        return f"exact on {sets} ({self.tolerance}{err}){self.placement()}"

    def placement(self) -> str:
        """`` on OpenVINOExecutionProvider``, or where some ops ran on another provider than
        the one asked first, ``; MaxPool fell back to CPUExecutionProvider``."""
        if not self.executed_by:
            return ""
        fell = {op: ep for op, ep in self.executed_by.items() if ep != self.asked}
        if not fell:
            return f" on {self.asked}"
        by_provider: dict[str, list[str]] = {}
        for op, ep in fell.items():
            by_provider.setdefault(ep, []).append(op)
        return "; " + "; ".join(f"{', '.join(ops)} fell back to {ep}"
                                for ep, ops in by_provider.items())


def _agreeing(name: str, dtype: str, array: np.ndarray, tolerance: str) -> TensorComparison:
    """The comparison of an output equal to the spec's, bit for bit (no cell to paint)."""
    shape = tuple(array.shape)
    return TensorComparison(name, dtype, shape, shape, tolerance, compared=int(array.size),
                            max_abs=0.0, max_rel=0.0 if array.dtype.kind == "f" else None)


def _status(comparisons: Sequence[TensorComparison],
            order: Sequence[tuple[str, tuple[str, ...]]]) -> str:
    """The first status of ``order`` one of whose counts a comparison has; AGREE for none."""
    return next((status for status, counts in order
                 if any(getattr(c, k) for c in comparisons for k in counts)), st.AGREE)


def lenient_status(comparisons: Sequence[TensorComparison]) -> str:
    """A captured set's status: semantics first, then accuracy beyond the limit, ruling
    cells, accuracy notes, ties."""
    return _status(comparisons, ((st.DIFFER, ("shapes_differ", "differing")),
                                 (st.INACCURATE, ("inaccurate",)),
                                 (st.RULINGS, ("ruling_differing",)),
                                 (st.ACCURACY_NOTE, ("noted",)), (st.TIES, ("ties",))))


def strict_status(comparisons: Sequence[TensorComparison]) -> str:
    """A built set's status: any cell off is a difference (a tie too: another Index is another
    result for a MaxUnpool downstream); only a sum's rounding is accuracy."""
    return _status(comparisons, (
        (st.DIFFER, ("shapes_differ", "differing", "ruling_differing", "ties")),
        (st.INACCURATE, ("inaccurate",)), (st.ACCURACY_NOTE, ("noted",))))


def compare_set(site: Site, feed: FeedSet, got: Sequence[np.ndarray],
                rule: AccuracyRule = DEFAULT_RULE) -> tuple[str, list[TensorComparison], str]:
    """One set's outputs ``got`` against the spec's: (status, comparisons, the failure in words:
    "" when exact)."""
    want = feed.expected or []
    x = feed.arrays[0]
    tol = node_tolerance(site.op, site.version, site.elem or "float", x, want[0],
                         site.attributes, rule.atol, rule.rtol, rule)
    where = f"on {feed.label}, X {list(feed.shape)}"
    # bfloat16 (not numpy's kind "f") compared as float32, which holds each of its values
    y, expected_y = (a.astype(np.float32) if a.dtype == dtypes.NUMPY["bfloat16"] else a
                     for a in (np.asarray(got[0]), want[0]))
    if y.dtype != expected_y.dtype:
        return st.DIFFER, [], f"Y is {y.dtype}, the spec's is {expected_y.dtype} (on {feed.label})"
    read = site.indices_read and len(want) > 1
    if read and len(got) < 2:
        return st.DIFFER, [], "the realization gives no Indices"
    indices = np.asarray(got[1]) if read else None
    if (y.shape == expected_y.shape
            and np.array_equal(y, expected_y, equal_nan=y.dtype.kind == "f")
            and (indices is None or (indices.shape == want[1].shape
                                     and np.array_equal(indices, want[1])))):
        # the same bits: nothing to measure (most sets; the categories are what a judgement
        # spends most of its time on otherwise)
        comps = [_agreeing("Y", site.elem or "?", y, tol.describe())]
        if indices is not None:
            comps.append(_agreeing("Indices", "int64", indices, "exact"))
        return st.AGREE, comps, ""
    nan, empty = ruling_masks(site, feed.arrays)
    ruling = (nan | empty) if nan is not None and empty is not None else None
    comps = [compare_values("Y", site.elem or "?", y, expected_y, tol, ruling)]
    if indices is not None:
        column_major = getattr(site.attrs, "storage_order", 0) == 1
        comps.append(compare_indices(indices, want[1], x, ruling, column_major))
    if nan is not None and empty is not None:
        for comp in comps:  # which rulings' cells the differences sit in: what names a cause
            cats = comp.categories
            if cats is not None and cats.shape == nan.shape:
                off = cats == CAT_RULING
                comp.in_nan_windows = int((off & nan).sum())
                comp.in_empty_windows = int((off & empty & ~nan).sum())
    status = lenient_status(comps) if feed.observed else strict_status(comps)
    return status, comps, _failure_text(feed, comps, where) if status not in (
        st.AGREE, st.ACCURACY_NOTE, st.TIES, st.RULINGS) else ""


def _failure_text(feed: FeedSet, comps: Sequence[TensorComparison], where: str) -> str:
    """The first output that differs, in words, with an example cell and its built case."""
    for comp in comps:
        if comp.shapes_differ:
            return (f"{comp.name} has shape {list(comp.builtin_shape)}, the spec's is "
                    f"{list(comp.ortpool_shape)} ({where})")
        wrong = comp.differing + comp.inaccurate + comp.ruling_differing + comp.ties
        if not wrong:
            continue
        example = comp.examples[0] if comp.examples else {}
        case = feed.case_at(example.get("at"))
        at = (f"; e.g. at {example.get('at')}{f' ({case})' if case else ''}: "
              f"{example.get('onnxruntime')} instead of {example.get('ortpool')}"
              if example else "")
        accuracy = ""
        if comp.inaccurate and comp.accuracy:
            accuracy = (f"; {comp.inaccurate} beyond the accuracy limit, up to "
                        f"{comp.accuracy['max_error_units']:.3g} u*mean|x|")
        if comp.name == "Y":
            return f"Y differs in {wrong} of {comp.compared} cells ({where}{at}{accuracy})"
        return f"{comp.name} differ in {wrong} cells ({where}{at})"
    return f"the outputs differ ({where})"


def shape_groups(sets: Sequence[FeedSet]) -> list[list[FeedSet]]:
    """Input sets grouped by their shapes (one session per group, inputs declared static)."""
    groups: dict[tuple, list[FeedSet]] = {}
    for feed in sets:
        groups.setdefault(tuple(a.shape for a in feed.arrays), []).append(feed)
    return list(groups.values())


def _record(judgement: Judgement, feed: FeedSet, status: str,
            comps: list[TensorComparison], got: Sequence[np.ndarray] | None = None) -> None:
    """Fold one set's comparison into ``judgement``: its figures, and the set shown (the first
    that is not plainly agreeing; else the first)."""
    for comp in comps:
        if comp.name != "Y":
            continue
        for field in ("max_abs", "max_rel"):
            value = getattr(comp, field)
            if value is not None:
                old = getattr(judgement, field)
                setattr(judgement, field, value if old is None else max(old, value))
        if comp.noted and comp.accuracy:
            units, ulps = comp.accuracy["max_error_units"], comp.accuracy["max_error_ulp"]
            judgement.noted_units = max(judgement.noted_units or 0.0, units or 0.0)
            judgement.noted_ulp = max(judgement.noted_ulp or 0.0, ulps or 0.0)
    if not judgement.shown or (judgement.shown_status == st.AGREE and status != st.AGREE):
        judgement.shown, judgement.shown_status, judgement.comparisons = feed.label, status, comps
        judgement.shown_observed = feed.observed
        judgement.shown_shapes = [list(a.shape) for a in feed.arrays]
        judgement.shown_feed = feed
        judgement.shown_outputs = None if got is None else [np.asarray(g) for g in got]
        judgement.differing = sum(c.differing + c.inaccurate + c.ruling_differing + c.ties
                                  + c.only_in_one for c in comps)
    judgement.status = st.worst([judgement.status, status])


#: Runs one input set's arrays through a model already loaded: its outputs.
Run = Callable[[Sequence[np.ndarray]], Sequence[np.ndarray]]


def session_run(session: Any) -> Run:
    """An onnxruntime session as a :data:`Run` (bfloat16 through OrtValues: run_arrays)."""
    names = [o.name for o in session.get_outputs()]
    inputs = [i.name for i in session.get_inputs()]

    def run(arrays: Sequence[np.ndarray]) -> Sequence[np.ndarray]:
        return runtime_spec.run_arrays(session, names, dict(zip(inputs, arrays, strict=True)))

    return run


def run_group(run: Run, site: Site, group: Sequence[FeedSet], judgement: Judgement,
              rule: AccuracyRule = DEFAULT_RULE) -> str:
    """``run`` on each set of ``group``, compared, into ``judgement``; the first failure (a
    difference, or the runtime's: :func:`refusal`), or ""."""
    for feed in group:
        try:
            got = run(feed.arrays)
        except Exception as err:  # each runtime raises its own types: sorted by refusal()
            judgement.fail(*refusal(err, f"the run fails on {feed.label}"))
            return judgement.failure
        status, comps, failure = compare_set(site, feed, got, rule)
        judgement.tolerance = comps[0].tolerance if comps else judgement.tolerance
        _record(judgement, feed, status, comps, got)
        if failure:
            judgement.failure = failure
            return failure
        judgement.passed(feed)
    return ""


#: A failure of another runtime than onnxruntime, by kind: the node's status.
_STATUS_OF = {NO_KERNEL: st.NO_KERNEL, CRASHED: st.CRASHED, TIMED_OUT: st.TIMED_OUT}


def refusal(err: Exception, doing: str) -> tuple[str, str]:
    """(status, text) of a runtime's failure ``doing`` something (loading the model, running a
    set): no kernel, crashed, timed out, else refused."""
    if isinstance(err, RuntimeFailure):
        return _STATUS_OF.get(err.kind, st.ORT_REJECTED), f"{doing}: {err}"
    failure = classify(err, "load" if doing == LOADING else "run")
    status = st.NO_KERNEL if failure.kind == NO_KERNEL and doing == LOADING else st.ORT_REJECTED
    return status, f"{doing}: {failure}"


LOADING = "onnxruntime refuses it"


def _run_sets(build: Build, site: Site, sets: Sequence[FeedSet], runtime: RuntimeSpec | Worker,
              level: str | None, rule: AccuracyRule) -> Judgement:
    """The model ``build`` makes for each shape of ``sets``, run on every set at ``level`` (None:
    the runtime's; another runtime in its worker process) and compared with the spec's."""
    judgement = Judgement()
    # Where onnxruntime may run the model on another provider than the first asked (it falls
    # back silently), the judgement says which executed each op.
    placed = isinstance(runtime, RuntimeSpec) and runtime.provider_names != [runtime_spec.CPU]
    for group in shape_groups(sets):
        model = build(group[0].arrays)
        if isinstance(runtime, Worker):
            if run_group(_worker_run(runtime, model), site, group, judgement, rule):
                return judgement
            continue
        folder = runtime_spec.profile_dir() if placed else None
        try:
            try:
                session = (open_session(runtime, model, level=level, threads=1,
                                        profile_dir=folder) if placed
                           else _reused_session(runtime, model, level))
            except Exception as err:  # onnxruntime raises its own types; each is a refusal
                status, text = refusal(err, LOADING)
                if status == st.ORT_REJECTED and _newer_than_ort(site):
                    status = st.NO_KERNEL
                judgement.fail(status, text)
                return judgement
            stop = run_group(session_run(session), site, group, judgement, rule)
            if folder is not None:  # read on a set that differs too: that is the one shown
                judgement.asked = runtime.first
                for _, op_type, provider in runtime_spec.profile_events(session):
                    if op_type != "Cast":  # a form's Casts to float32 and back: not the pool
                        judgement.executed_by[op_type] = provider
            if stop:
                return judgement
        finally:
            # read or not (a refusal, a failing set), the profile goes: a process ended by
            # os._exit (validate's children) never runs the atexit cleanup of its folders
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
    if not judgement.sets:
        judgement.fail(st.NOT_COMPARED, "no input set could be run")
    return judgement


#: The last sessions :func:`_run_sets` opened, by (model, runtime, level): a node's finite and
#: non-finite judgements build the same model, and a session costs more than the sets it runs.
_SESSIONS: collections.OrderedDict[tuple[bytes, str, str | None], Any] = collections.OrderedDict()
_KEPT_SESSIONS = 4
_sessions_lock = threading.Lock()


def _reused_session(runtime: RuntimeSpec, model: onnx.ModelProto, level: str | None) -> Any:
    """A one-thread session of ``model``, the one opened last for the same model if kept."""
    key = (model.SerializeToString(), repr(runtime), level)
    with _sessions_lock:
        session = _SESSIONS.pop(key, None)
    if session is None:  # opened outside the lock: a refusal raises, nothing is kept
        session = open_session(runtime, model, level=level, threads=1)
    with _sessions_lock:
        _SESSIONS[key] = session
        while len(_SESSIONS) > _KEPT_SESSIONS:
            _SESSIONS.popitem(last=False)
    return session


def _newer_than_ort(site: Site) -> bool:
    """Whether ``site`` is a spec version newer than onnxruntime's schemas know and writes an
    attribute the version they know lacks: onnxruntime then has no kernel for it."""
    known = known_version(site.op)
    if site.version <= known:
        return False
    old = versions.resolve(site.op, known).attrs if known else {}
    return any(name not in old for name in site.attributes)


def judge(site: Site, sets: Sequence[FeedSet], runtime: RuntimeSpec | Worker,
          rule: AccuracyRule = DEFAULT_RULE, *, build: Build | None = None) -> Judgement:
    """``build``'s model of ``site`` (default: the node as it is) judged on ``sets`` at the
    runtime's level. Sets the spec refuses are left out; where every one is, the status says
    whether the runtime runs what the spec refuses."""
    # so is a set of the model's own the spec refuses (a NaN in its RoIs) that the runtime runs:
    # ORTPOOL_REJECTED, not left out for the built cases to agree in its place
    refusals: list[str] = []
    kept = expect(site, sets, refusals, verdict=True)
    held = {id(feed) for feed in kept}
    refused = [feed for feed in sets if feed.observed and id(feed) not in held]
    build = build or (lambda example: alone_model(site, example))
    judgement = _spec_refuses(site, refused, refusals, build, runtime) if kept and refused \
        else None
    if judgement is not None and judgement.status == st.ORTPOOL_REJECTED:
        kept = []
    elif not kept:
        judgement = _spec_refuses(site, sets, refusals, build, runtime)
    else:
        judgement = _run_sets(build, site, kept, runtime, None, rule)
    # a refusal is tried too: PadFusion folds a Pad into a pool as pads >= kernel, which the
    # optimized session then refuses
    if (kept and not judgement.exact and judgement.status != st.NO_KERNEL
            and isinstance(runtime, RuntimeSpec) and runtime.level != "disable"
            and _run_sets(build, site, kept, runtime, "disable", rule).exact):
        judgement.folded = True
        judgement.failure = (f"{judgement.failure} -- exact with graph optimizations off: "
                             f"{optimizer_change(build(kept[0].arrays), runtime)}")
    judgement.runtime = _name(runtime)
    # whether or not the runtime ran it (no kernel): the reference evaluator is asked on it too
    judgement.captured = next((feed for feed in kept if feed.observed), None)
    return judgement


def _spec_refuses(site: Site, sets: Sequence[FeedSet], refusals: Sequence[str], build: Build,
                  runtime: RuntimeSpec | Worker) -> Judgement:
    """No set has a spec answer: the spec refuses them. Whether the runtime runs the first
    decides ORTPOOL_REJECTED (it computes what the spec refuses) or BOTH_REJECTED."""
    why = refusals[0] if refusals else "no input set"
    judgement = Judgement(status=st.NOT_COMPARED,
                          failure=f"the spec refuses every input set: {why}")
    if not sets:
        return judgement
    try:
        model = build(sets[0].arrays)
        run = (_worker_run(runtime, model) if isinstance(runtime, Worker)
               else session_run(open_session(runtime, model, threads=1)))
        run(sets[0].arrays)
    except Exception as err:  # the runtime refuses too
        judgement.fail(st.BOTH_REJECTED, f"{_name(runtime)}: {short_error(err)}; ortpool: {why}")
        return judgement
    judgement.fail(st.ORTPOOL_REJECTED, f"ortpool: {why}")
    return judgement


def _name(runtime: RuntimeSpec | Worker) -> str:
    return runtime.runtime.name if isinstance(runtime, Worker) else "onnxruntime"


def _worker_run(worker: Worker, model: onnx.ModelProto) -> Run:
    """``model`` run in another runtime's worker process, as a :data:`Run`."""
    data, names = model.SerializeToString(), [i.name for i in model.graph.input]
    return lambda arrays: worker.run(data, dict(zip(names, arrays, strict=True)))


def optimizer_change(model: onnx.ModelProto, runtime: RuntimeSpec) -> str:
    """What onnxruntime's optimizer at the runtime's level made of ``model``, in words."""
    try:
        after = optimized(runtime, model)
    except Exception as err:  # the optimized graph could not be written: say so, guess nothing
        return (f"onnxruntime's optimizer (level {runtime.level}) changes it (its graph could "
                f"not be read back: {short_error(err)})")
    head = f"onnxruntime's optimizer (level {runtime.level})"
    ops_before = [n.op_type for n in model.graph.node]
    ops_after = [n.op_type for n in after.graph.node]
    layouts = sorted({f"{n.domain} {n.op_type}" for n in after.graph.node
                      if n.domain.endswith("nchwc") and not n.op_type.startswith("Reorder")})
    if "Pad" in ops_before and ops_after.count("Pad") < ops_before.count("Pad"):
        return f"{head} folds the Pad into the pool after it (PadFusion)"
    if layouts:
        return (f"{head} runs it as {', '.join(layouts)} (its NCHWc layout kernels), which "
                "computes it otherwise")
    return f"{head} rewrites {'+'.join(ops_before)} as {'+'.join(ops_after) or 'nothing'}"


def short_error(err: Exception) -> str:
    """A runtime's error as one line (onnxruntime's without its source location and status
    prefix)."""
    if isinstance(err, RuntimeFailure):
        return err.message
    return str(classify(err, "load"))[:400]  # onnxruntime 1.21 repeats its C++ signature
