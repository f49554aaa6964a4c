"""One benchmark case measured end to end: sessions built, outputs compared, variants timed."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ortpool import kernels, versions
from ortpool.bench import models
from ortpool.bench.cases import Case
from ortpool.model.timing import Stats, interleaved
from ortpool.ort import RuntimeSpec, open_session, ortrun, runtime_spec
from ortpool.report.bench import FLOOR, NUMPY, ORTPOOL, builtin_name
from ortpool.runtimes.reference_runtime import time_reference
from ortpool.tolerances import GLOBAL_SUMS, WINDOW_SUMS


@dataclasses.dataclass
class Settings:
    repeat: int = 30
    min_sample: float = 0.005
    reference_limit: float = 10.0  # seconds; 0 disables the reference evaluator
    seed: int = 0
    #: every session on onnxruntime's global intra-op pool (``runtime.intra_op_threads`` its size)
    shared_pool: bool = False
    #: providers, optimization level, threads of every session
    runtime: RuntimeSpec = dataclasses.field(default_factory=RuntimeSpec)


@dataclasses.dataclass
class CaseResult:
    case: Case
    ortpool_opset: int
    times: dict[str, Stats]
    agreement: str
    agrees: bool
    max_abs_diff: float
    reference: list[float] | None = None
    reference_status: str = "not run"
    #: seconds to validate and plan a call of a new shape (:func:`plan_time`)
    plan: float | None = None
    #: the provider that executed the built-in node (its times are that provider's) when
    #: another than the CPU provider alone was asked for
    executed_by: str | None = None

    @property
    def fastest_opset(self) -> int:
        return min(self.case.opsets, key=lambda o: self.times[builtin_name(o)].median)

    @property
    def builtin(self) -> Stats:
        return self.times[builtin_name(self.fastest_opset)]

    @property
    def ratio(self) -> float:
        """ortpool's session.run over the fastest built-in's."""
        return self.times[ORTPOOL].median / self.builtin.median

    @property
    def floor_ratio(self) -> float | None:
        """The do-nothing Python op's session.run over the fastest built-in's (the boundary)."""
        floor = self.times.get(FLOOR)
        return None if floor is None else floor.median / self.builtin.median

    @property
    def reference_median(self) -> float | None:
        return float(np.median(self.reference)) if self.reference else None

    @property
    def reference_speedup(self) -> float | None:
        ref = self.reference_median
        return None if ref is None else ref / self.times[ORTPOOL].median


def session_runtime(settings: Settings) -> RuntimeSpec:
    """The runtime of every session of a case: the shared pool, or pools of the given size."""
    return dataclasses.replace(settings.runtime, shared_pool=settings.shared_pool)


def _numpy_call(case: Case, opset: int, feed: dict[str, np.ndarray]) -> Callable[[], object]:
    version = versions.resolve(case.op, opset).version  # the spec version a model at opset runs
    attrs = case.attributes
    arrays = list(feed.values())  # X, then I (MaxUnpool) or rois (MaxRoiPool), as the node reads
    n_outputs = 2 if case.op == "MaxPool" and case.indices else 1
    return lambda: kernels.run_op(case.op, version, arrays, attrs, n_outputs)


def _floor_call(session: Any, feed: dict[str, np.ndarray],
                outputs: list[np.ndarray]) -> Callable[[], object]:
    """``session.run`` with the kernel replaced by handing back ``outputs``: the marshalling
    floor (onnxruntime-extensions' copies in and out, the hook) of this very op."""
    from ortpool.ort import hook

    prepared = [np.ascontiguousarray(o) for o in outputs]

    def call() -> object:
        hook.set_prepared_outputs(prepared)
        try:
            return session.run(None, feed)
        finally:
            hook.set_prepared_outputs(None)

    return call


def compare(expected: list[np.ndarray], got: list[np.ndarray], exact: bool,
            tolerance: float = 1e-6) -> tuple[str, bool, float]:
    """(text, agrees, max |difference|) of ``got`` against ``expected``: the same types, shapes
    and NaN, values exactly or within ``tolerance`` of the output's magnitude (at least 1)."""
    worst = 0.0
    for e, g in zip(expected, got, strict=True):
        if e.dtype != g.dtype:
            return f"is {g.dtype}, not {e.dtype}", False, float("inf")
        if e.shape != g.shape:
            return f"shape {list(g.shape)} != {list(e.shape)}", False, float("inf")
        if e.dtype.kind == "f":
            nan_e, nan_g = np.isnan(e), np.isnan(g)  # NaN on one side only differs by inf
            with np.errstate(invalid="ignore"):  # inf - inf: NaN, the equal infinities' 0 below
                diff = np.abs(e.astype(np.float64) - g.astype(np.float64))
            diff = np.where(nan_e | nan_g, np.where(nan_e & nan_g, 0.0, np.inf),
                            np.where(e == g, 0.0, diff))
            worst = max(worst, float(diff.max()) if diff.size else 0.0)
            finite = np.abs(e[np.isfinite(e)])
            scale = max(1.0, float(finite.max()) if finite.size else 1.0)
            if worst > (0.0 if exact else tolerance * scale):
                return f"differs (max |d| {worst:.2g})", False, worst
        elif not np.array_equal(e, g):
            return f"{int((e != g).sum())} values differ", False, float("inf")
    return ("exact" if worst == 0 else f"max |d| {worst:.1g}"), True, worst


def run_case(case: Case, settings: Settings) -> CaseResult:
    feed = case.inputs(settings.seed)
    spec = session_runtime(settings)
    builtin = {opset: open_session(spec, models.builtin_model(case, opset))
               for opset in case.opsets}
    ortpool_opset = case.opsets[0]
    ours = open_session(spec, models.ortpool_model(case, ortpool_opset))
    executed_by = None
    if spec.provider_names != [runtime_spec.CPU]:
        # which provider runs the built-in node, from a profiled session of its own (profiling
        # would slow the timed ones); the models hold the one pooling node
        _, placed = ortrun.run_placed(models.builtin_model(case, ortpool_opset), feed, spec)
        executed_by = next(iter(placed.values()), None)
    expected = builtin[ortpool_opset].run(None, feed)
    got = ours.run(None, feed)
    text, agrees, worst = compare(expected, got, exact=case.op not in WINDOW_SUMS + GLOBAL_SUMS)

    result_reference, status = None, "not run"
    if settings.reference_limit > 0:
        measured = time_reference(models.builtin_model(case, ortpool_opset), feed,
                                  settings.reference_limit)
        if measured is None:
            status = f"over {settings.reference_limit:g} s"
        elif not measured[0]:
            status = "refused" if "No registered implementation" not in measured[1] else "no impl."
        else:
            result_reference, status = measured[0], "ok"

    variants: dict[str, Callable[[], object]] = {
        **{builtin_name(o): (lambda x: lambda: x.run(None, feed))(s) for o, s in builtin.items()},
        ORTPOOL: lambda: ours.run(None, feed), FLOOR: _floor_call(ours, feed, got),
        NUMPY: _numpy_call(case, ortpool_opset, feed)}
    times = interleaved(variants, settings.repeat, settings.min_sample)
    plan = plan_time(variants[NUMPY])
    return CaseResult(case, ortpool_opset, times, text, agrees, worst, result_reference, status,
                      plan, executed_by)


def plan_time(call: Callable[[], object], trials: int = 3) -> float:
    """Seconds a call of a new shape spends validating and planning: the fastest first call
    (plans forgotten) minus the fastest call right after it, at least 0."""
    from ortpool.kernels import forget_plans

    firsts, planned = [], []
    for _ in range(trials):
        forget_plans()
        for times in (firsts, planned):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
    return max(0.0, min(firsts) - min(planned))
