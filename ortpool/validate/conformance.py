"""``run_conformance``: the grid of :mod:`.grid` through onnxruntime's built-ins and ortpool.

Each case is one node judged by the engine (:func:`ortpool.check.judge.judge`) on the case's
input, the spec's answer from ortpool's kernels. Results are grouped per op and spec version
into agree / differ / no kernel, with the causes named.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ortpool import dtypes, versions
from ortpool.check.cases import FeedSet
from ortpool.check.judge import Judgement, judge
from ortpool.errors import OrtpoolError
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule
from ortpool.validate import grid, results

Progress = Callable[[int, int, str], None]


@dataclasses.dataclass
class CaseResult:
    case: grid.Case
    node: results.NodeResult

    def to_dict(self) -> dict[str, Any]:
        node = self.node.to_dict()
        out = self.case.describe()
        out.update(
            {
                "status": node["status"],
                "causes": node["causes"],
                "builtin_shapes": node["builtin_shapes"],
                "ortpool_shapes": node["ortpool_shapes"],
                "differing": node["differing"],
                "ruling_differing": node["ruling_differing"],
                "index_ties": node["index_ties"],
                "max_abs_error": node["max_abs_error"],
                "message": node["message"],
                "executed_by": node["executed_by"],
            }
        )
        return out


@dataclasses.dataclass
class Row:
    """Counts for one (op, spec version)."""

    op: str
    version: int
    statuses: Counter = dataclasses.field(default_factory=Counter)
    causes: Counter = dataclasses.field(default_factory=Counter)
    no_kernel_types: set[str] = dataclasses.field(default_factory=set)
    #: cases another provider than the first asked for executed, per provider, and their
    #: statuses: those verdicts are that provider's, so they are in neither ``statuses`` nor
    #: ``causes`` (which are the asked provider's)
    fell_back: Counter = dataclasses.field(default_factory=Counter)
    fell_back_statuses: Counter = dataclasses.field(default_factory=Counter)

    @property
    def key(self) -> str:
        return f"{self.op}-{self.version}"

    @property
    def cases(self) -> int:
        return sum(self.statuses.values()) + sum(self.fell_back.values())


def select_cases(
    ops: Sequence[str] | None = None,
    spec_versions: Sequence[int] | None = None,
    element_types: Sequence[str] | None = None,
    ranks: Sequence[int] = (1, 2, 3),
    nonfinite: bool = False,
) -> list[grid.Case]:
    """The grid's cases the filters select (None: every one): operators, spec versions, element
    types (ONNX names, ``float`` is float32; numpy's spellings read too), spatial ranks, and the
    input domain (ruling 20: the cases holding NaN with ``nonfinite`` only); an
    :class:`OrtpoolError` for a filter naming nothing that exists or selecting no case."""
    for op in ops or []:
        try:
            versions.versions_of(op)
        except ValueError as err:
            raise OrtpoolError(f"ops: {err}") from None
    if not ranks or any(r not in grid.RANK_AXES for r in ranks):
        raise OrtpoolError(f"ranks {list(ranks)} must name ranks among 1, 2, 3")
    names = [dtypes.canonical(t) for t in element_types] if element_types else None
    cases = grid.cases(ops, spec_versions or None, names, ranks)
    if not nonfinite:
        cases = [case for case in cases if case.data != "nan"]
    if not cases:
        raise OrtpoolError("the filters select no case")
    return cases


#: the label of a case's input in a judgement (the case's own input: judged as observed)
CASE_INPUT = "the case's input"


def judge_case(
    case: grid.Case, seed: int, runtime: RuntimeSpec, rule: AccuracyRule = DEFAULT_RULE
) -> Judgement:
    """One case judged by the engine on its own input."""
    feeds = grid.case_inputs(case, seed)
    return judge(case.site(feeds), [FeedSet(CASE_INPUT, feeds, observed=True)], runtime, rule)


def run_conformance(
    cases: Sequence[grid.Case],
    seed: int = 0,
    runtime: RuntimeSpec | None = None,
    rule: AccuracyRule = DEFAULT_RULE,
    progress: Progress | None = None,
    domain: str = "finite",
) -> list[CaseResult]:
    runtime = runtime or RuntimeSpec(level="disable")
    found = []
    for i, case in enumerate(cases):
        if progress and i % 25 == 0:
            progress(i, len(cases), f"{case.op}-{case.version} {case.dtype}")
        feeds = grid.case_inputs(case, seed)
        site = case.site(feeds)
        judgement = judge(site, [FeedSet(CASE_INPUT, feeds, observed=True)], runtime, rule)
        node = results.node_record(site, judgement, domain)
        node.judgement = None
        for comp in node.comparisons:
            comp.categories = comp.aligned = None  # not kept: thousands of cases
        found.append(CaseResult(case, node))
    if progress:
        progress(len(cases), len(cases), "")
    return found


def matrix(found: Sequence[CaseResult]) -> list[Row]:
    rows: dict[tuple[str, int], Row] = {}
    for r in found:
        key = (r.case.op, r.case.version)
        row = rows.setdefault(key, Row(*key))
        if r.node.fell_back_to is not None:
            row.fell_back[r.node.fell_back_to] += 1
            row.fell_back_statuses[r.node.status] += 1
            continue
        row.statuses[r.node.status] += 1
        for cause in r.node.causes:
            row.causes[cause.code] += 1
        if r.node.status == results.NO_KERNEL:
            row.no_kernel_types.add(r.case.dtype)
    return list(rows.values())


def cause_totals(found: Sequence[CaseResult]) -> dict[str, tuple[int, list[str]]]:
    """cause code -> (number of cases, op-versions where it occurs)."""
    counts: Counter = Counter()
    where: dict[str, list[str]] = {}
    for r in found:
        if r.node.fell_back_to is not None:
            continue  # another provider's verdict (see Row.fell_back)
        for cause in r.node.causes:
            counts[cause.code] += 1
            key = f"{r.case.op}-{r.case.version}"
            if key not in where.setdefault(cause.code, []):
                where[cause.code].append(key)
    return {code: (counts[code], where[code]) for code in counts}
