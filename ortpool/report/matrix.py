"""The conformance matrix as text: per op and spec version, agree / differ by basis (the spec's
text, a ruling) / refused / no kernel / crashed / timed out, and the causes with their bases."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ortpool.check import causes, grid
from ortpool.report import record as results
from ortpool.report.terminal import STATUS_TEXT, fit, table

COLUMNS = (
    "op-version",
    "cases",
    "agree",
    "spec text",
    "ruling",
    "RULINGS",
    "refused",
    "no kernel",
    "crashed",
    "timed out",
    "both refuse",
    "causes (cases)",
)
#: the statuses the two "differ" columns count, split by the difference's basis
DIFFERING = (results.DIFFER, results.INACCURATE, results.ORTPOOL_REJECTED)


@dataclasses.dataclass
class CaseResult:
    case: grid.Case
    node: results.NodeResult

    def to_dict(self) -> dict[str, Any]:
        node = self.node.to_dict()
        keys = ("status", "causes", "builtin_shapes", "ortpool_shapes", "compared", "only_in_one",
                "differing", "ruling_differing", "index_ties", "max_abs_error", "message",
                "executed_by")
        return {**self.case.describe(), **{k: node[k] for k in keys}}


@dataclasses.dataclass
class Row:
    """Counts for one (op, spec version)."""

    op: str
    version: int
    statuses: Counter = dataclasses.field(default_factory=Counter)
    causes: Counter = dataclasses.field(default_factory=Counter)
    #: the differing cases (:data:`DIFFERING`) by basis: ``spec text``, ``ruling 7``...
    bases: Counter = dataclasses.field(default_factory=Counter)
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
        if r.node.status in DIFFERING:
            basis = r.node.basis
            row.bases[basis.label if basis else results.UNNAMED] += 1
        for cause in r.node.causes:
            row.causes[cause.code] += 1
        if r.node.status == results.NO_KERNEL:
            row.no_kernel_types.add(r.case.dtype)
    return list(rows.values())


def cause_totals(found: Sequence[CaseResult]) -> dict[str, tuple[int, list[str]]]:
    """cause code -> (number of cases, op-versions where it occurs)."""
    return {code: (n, where) for code, (n, where, _) in _totals(found).items()}


def cause_bases(found: Sequence[CaseResult]) -> dict[str, dict[str, int]]:
    """cause code -> its cases by basis (``{"spec text": 120, "ruling 1": 339}``: a cause's
    basis can differ between versions, where one version's text holds the words)."""
    return {code: dict(by) for code, (_, _, by) in _totals(found).items()}


def _totals(found: Sequence[CaseResult]) -> dict[str, tuple[int, list[str], Counter]]:
    counts: Counter = Counter()
    where: dict[str, list[str]] = {}
    by: dict[str, Counter] = {}
    for r in found:
        if r.node.fell_back_to is not None:
            continue  # another provider's verdict (see Row.fell_back)
        for cause in r.node.causes:
            counts[cause.code] += 1
            by.setdefault(cause.code, Counter())[
                cause.basis.label if cause.basis else results.UNNAMED] += 1
            key = f"{r.case.op}-{r.case.version}"
            if key not in where.setdefault(cause.code, []):
                where[cause.code].append(key)
    return {code: (counts[code], where[code], by[code]) for code in counts}


def basis_totals(found: Sequence[CaseResult]) -> dict[str, int]:
    """The differing cases (:data:`DIFFERING`) by basis, over the whole grid."""
    total: Counter = Counter()
    for row in matrix(found):
        total.update(row.bases)
    return results.ordered_bases(total)


def render(found: Sequence[CaseResult], header: str, runtime: str = "onnxruntime") -> list[str]:
    """The matrix, the missing kernels, the causes and what the columns count; ``runtime``
    names the runtime judged."""
    placed = any(r.node.asked_provider for r in found)
    rows = [_row(row, placed) for row in matrix(found)]
    lines = [header, ""]
    columns = (*COLUMNS[:-1], "fell back", COLUMNS[-1]) if placed else COLUMNS
    lines += table(rows, columns, indent="")
    lines.append("")
    by = basis_totals(found)
    if by:
        lines += fit("differing cases by basis: " + ", ".join(f"{k} {n}" for k, n in by.items()),
                     "  ")
        lines.append("")
    lines += _kernels_and_causes(found, runtime)
    ties = sum(r.node.count("ties") for r in found)
    lines += fit(
        "agree counts cases whose only differences are Index ties (equal values) or accuracy "
        f"notes (ruling 17); Index ties seen: {ties}. The cases that differ (sums beyond the "
        "accuracy limit too) are counted by their basis: spec text, where the runtime breaks "
        "the spec's written words (a formula or a sentence of that version); ruling, where the "
        "spec is silent or ambiguous and docs/rulings.md reads it.",
        more="",
    )
    lines += fit(
        "RULINGS counts cases differing only in cells the spec gives no value (NaN in a window, "
        "empty windows); refused, cases the runtime refuses that the spec defines; both "
        "refuse, cases the spec refuses too; crashed and timed out, cases the runtime's "
        "process died on or did not answer in time.",
        more="",
    )
    if placed:
        lines += fit(
            "fell back counts cases the first provider asked for did not execute (onnxruntime "
            "ran them on the next one, read from the session's profile), with their verdicts: "
            "those are that provider's, so they are counted in no other column and no cause.",
            more="",
        )
    return lines


def _row(row: Row, placed: bool) -> list[str]:
    """One (op, version) line of the table; ``placed``: with the fell-back column."""
    st = row.statuses
    cause_text = ", ".join(
        f"{code} {n}"
        for code, n in sorted(row.causes.items(), key=lambda kv: -kv[1])
        if code != causes.NO_KERNEL
    )
    cells = [
        row.key,
        str(row.cases),
        str(st[results.AGREE] + st[results.TIES] + st[results.ACCURACY_NOTE]),
        str(row.bases[causes.SPEC_TEXT]),
        str(sum(n for k, n in row.bases.items() if k != causes.SPEC_TEXT)),
        str(st[results.RULINGS]),
        str(st[results.ORT_REJECTED]),
        str(st[results.NO_KERNEL]),
        str(st[results.CRASHED]),
        str(st[results.TIMED_OUT]),
        str(st[results.BOTH_REJECTED]),
        cause_text or "-",
    ]
    if placed:
        # Cases onnxruntime ran on another provider than the first asked: their verdicts
        # are that provider's (counted in the columns before), said here.
        fell = ", ".join(
            f"{n} to {ep.removesuffix('ExecutionProvider')}" for ep, n in row.fell_back.items()
        )
        if fell:
            fell += " (" + ", ".join(
                f"{n} {STATUS_TEXT.get(status, status)}"
                for status, n in sorted(row.fell_back_statuses.items())
            ) + ")"
        cells.insert(-1, fell or "0")
    return cells


def _kernels_and_causes(found: Sequence[CaseResult], runtime: str) -> list[str]:
    """The blocks under the table: the missing kernels, the causes with their bases and where
    they show."""
    lines = []
    kernels = [
        (row.key, sorted(row.no_kernel_types)) for row in matrix(found) if row.no_kernel_types
    ]
    if kernels:
        lines.append(f"{runtime} has no kernel for:")
        for key, types in kernels:
            lines.append(f"  {key}: {', '.join(types)}")
        lines.append("")
    totals = _totals(found)
    if totals:
        lines.append("causes (cases; a case can have several), each with its basis:")
        width = max(len(code) for code in totals)
        for code in causes.TITLES:
            if code in totals:
                count, where, by = totals[code]
                lines += fit(f"{code:<{width}}  {count:>5}  {causes.TITLES[code]}", "  ")
                based = ", ".join(f"{k} {n}" for k, n in results.ordered_bases(by).items())
                lines += fit(f"basis: {based}; in {', '.join(where)}", " " * (width + 9))
        lines.append("")
    return lines
