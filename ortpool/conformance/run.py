"""``run_conformance``: the grid of :mod:`ortpool.check.grid` through a runtime's built-ins and
ortpool, each case one node judged by the engine (:func:`ortpool.check.judge.judge`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ortpool import dtypes, versions
from ortpool.check import grid
from ortpool.errors import OrtpoolError
from ortpool.options import PYTHON, label
from ortpool.options.target import DEFAULT_CASE_TIMEOUT
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.report import record as results
from ortpool.report.matrix import CaseResult
from ortpool.report.progress import Progress
from ortpool.runtimes import Runtime, Worker
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule


def select_cases(ops: Sequence[str] | None = None, spec_versions: Sequence[int] | None = None,
                 element_types: Sequence[str] | None = None, ranks: Sequence[int] = (1, 2, 3),
                 nonfinite: bool = False, style: str = PYTHON) -> list[grid.Case]:
    """The grid's cases the filters select (None: every one): operators, spec versions, element
    types (ONNX names, ``float`` is float32; numpy's spellings read too), spatial ranks, and the
    input domain (ruling 20: the cases holding NaN with ``nonfinite`` only); an
    :class:`OrtpoolError` for a filter naming nothing that exists or selecting no case (named
    as ``style`` spells it)."""
    for op in ops or []:
        try:
            versions.versions_of(op)
        except ValueError as err:
            raise OrtpoolError(f"{label('ops', style)}: {err}") from None
    if not ranks or any(r not in grid.RANK_AXES for r in ranks):
        raise OrtpoolError(f"{label('ranks', style)} {list(ranks)} must name ranks among 1, 2, 3")
    names = [dtypes.canonical(t) for t in element_types] if element_types else None
    cases = grid.cases(ops, spec_versions or None, names, ranks)
    if not nonfinite:
        cases = [case for case in cases if case.data != "nan"]
    if not cases:
        raise OrtpoolError("the filters select no case")
    return cases


def run_conformance(cases: Sequence[grid.Case], seed: int = 0,
                    runtime: RuntimeSpec | Runtime | Worker | None = None,
                    rule: AccuracyRule = DEFAULT_RULE, progress: Progress | None = None,
                    domain: str = "finite", case_timeout: float = DEFAULT_CASE_TIMEOUT
                    ) -> list[CaseResult]:
    """Each case judged on ``runtime``: onnxruntime with a :class:`RuntimeSpec` (default: the
    CPU provider, optimizations off), or a :class:`Runtime` of :mod:`ortpool.runtimes`, run in
    a worker process (``case_timeout`` seconds a case) that a crash or a hang of it does not
    take down: that case is crashed or timed out, the next one runs in a new worker."""
    if isinstance(runtime, Runtime):
        with Worker(runtime, case_timeout) as worker:
            return run_conformance(cases, seed, worker, rule, progress, domain)
    runtime = runtime or RuntimeSpec(level="disable")
    found = []
    for i, case in enumerate(cases):
        if progress and i % 25 == 0:
            progress(i, len(cases), f"{case.op}-{case.version} {case.dtype}")
        site, judgement = grid.judge_case(case, seed, runtime, rule)
        node = results.node_record(site, judgement, domain)
        node.judgement = None
        for comp in node.comparisons:
            comp.categories = comp.aligned = None  # not kept: thousands of cases
        found.append(CaseResult(case, node))
    if progress:
        progress(len(cases), len(cases), "")
    return found
