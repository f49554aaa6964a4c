"""The conformance matrix: per op and spec version, the cases by status and basis, and their
causes, as text and as the JSON document."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ortpool.check import causes, grid
from ortpool.report import record as results
from ortpool.report.terminal import status_text
from ortpool.report.text import fit, grid_lines, tally

COLUMNS = ("op-version", "cases", "agree", "spec text", "ruling", "RULINGS", "refused",
           "no kernel", "crashed", "timed out", "both refuse", "causes (cases)")
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
    #: statuses: that provider's verdicts, so in neither ``statuses`` nor ``causes``
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
            row.bases[r.node.basis_label] += 1
        row.causes.update(cause.code for cause in r.node.causes)
        if r.node.status == results.NO_KERNEL:
            row.no_kernel_types.add(r.case.dtype)
    return list(rows.values())


def cause_totals(found: Sequence[CaseResult]) -> dict[str, tuple[int, list[str]]]:
    """cause code -> (number of cases, op-versions where it occurs)."""
    return {code: (n, where) for code, (n, where, _) in _totals(found).items()}


def _totals(found: Sequence[CaseResult]) -> dict[str, tuple[int, list[str], dict[str, int]]]:
    """cause code -> its cases, where it occurs, and its cases by basis (which can differ
    between versions)."""
    by: dict[str, Counter] = {}
    where: dict[str, dict[str, None]] = {}  # each op-version once, in the order first seen
    for r in found:
        if r.node.fell_back_to is not None:
            continue  # another provider's verdict (see Row.fell_back)
        for cause in r.node.causes:
            by.setdefault(cause.code, Counter())[
                cause.basis.label if cause.basis else results.UNNAMED] += 1
            where.setdefault(cause.code, {})[f"{r.case.op}-{r.case.version}"] = None
    return {code: (sum(n.values()), list(where[code]), dict(n)) for code, n in by.items()}


def basis_totals(rows: Sequence[Row]) -> dict[str, int]:
    """The differing cases (:data:`DIFFERING`) by basis, over the whole grid."""
    return results.ordered_bases(sum((row.bases for row in rows), Counter()))


def document(found: Sequence[CaseResult], env: dict[str, str],
             settings: dict[str, Any]) -> dict[str, Any]:
    """The JSON document of ``ortpool conformance``."""
    rows = matrix(found)
    return {
        "tool": "ortpool conformance", "environment": env, "settings": settings,
        "matrix": [{"op": r.op, "version": r.version, "cases": r.cases,
                    "statuses": dict(r.statuses), "causes": dict(r.causes), "bases": dict(r.bases),
                    "no_kernel_types": sorted(r.no_kernel_types), "fell_back": dict(r.fell_back),
                    "fell_back_statuses": dict(r.fell_back_statuses)} for r in rows],
        "bases": basis_totals(rows),
        "causes": {code: {"cases": n, "where": where, "bases": by}
                   for code, (n, where, by) in _totals(found).items()},
        "cases": [r.to_dict() for r in found],
    }


def render(found: Sequence[CaseResult], header: str, runtime: str = "onnxruntime") -> list[str]:
    """The matrix, the missing kernels, the causes and what the columns count."""
    placed = any(r.node.asked_provider for r in found)
    rows = matrix(found)
    columns = (*COLUMNS[:-1], "fell back", COLUMNS[-1]) if placed else COLUMNS
    lines = [header, "", *grid_lines([columns, *(_row(row, placed) for row in rows)],
                                     numbers_right=True), ""]
    if by := basis_totals(rows):
        lines += [*fit(f"differing cases by basis: {tally(by)}", "  "), ""]
    kernels = [(row.key, sorted(row.no_kernel_types)) for row in rows if row.no_kernel_types]
    if kernels:
        lines += [f"{runtime} has no kernel for:",
                  *(f"  {key}: {', '.join(types)}" for key, types in kernels), ""]
    if totals := _totals(found):
        lines.append("causes (cases; a case can have several), each with its basis:")
        width = max(len(code) for code in totals)
        for code in [c for c in causes.TITLES if c in totals]:
            count, where, based = totals[code]
            lines += fit(f"{code:<{width}}  {count:>5}  {causes.TITLES[code]}", "  ")
            based = tally(results.ordered_bases(based))
            lines += fit(f"basis: {based}; in {', '.join(where)}", " " * (width + 9))
        lines.append("")
    ties = sum(r.node.count("ties") for r in found)
    lines += fit(
        "agree counts cases whose only differences are Index ties (equal values) or accuracy "
        f"notes (ruling 17); Index ties seen: {ties}. The cases that differ (sums beyond the "
        "accuracy limit too) are counted by their basis: spec text, where the runtime breaks "
        "the spec's written words (a formula or a sentence of that version); ruling, where the "
        "spec is silent or ambiguous and docs/rulings.md reads it.",
        more="")
    lines += fit(
        "RULINGS counts cases differing only in cells the spec gives no value (NaN in a window, "
        "empty windows); refused, cases the runtime refuses that the spec defines; both "
        "refuse, cases the spec refuses too; crashed and timed out, cases the runtime's "
        "process died on or did not answer in time.",
        more="")
    if placed:
        lines += fit(
            "fell back counts cases the first provider asked for did not execute (onnxruntime "
            "ran them on the next one, read from the session's profile), with their verdicts: "
            "those are that provider's, so they are counted in no other column and no cause.",
            more="")
    return lines


def _row(row: Row, placed: bool) -> list[str]:
    """One (op, version) line of the table; ``placed``: with the fell-back column."""
    st = row.statuses
    cause_text = tally({code: n for code, n in sorted(row.causes.items(), key=lambda kv: -kv[1])
                        if code != causes.NO_KERNEL})
    spec_text = row.bases[causes.SPEC_TEXT]
    counts = [row.cases, st[results.AGREE] + st[results.TIES] + st[results.ACCURACY_NOTE],
              spec_text, sum(row.bases.values()) - spec_text,
              *(st[s] for s in (results.RULINGS, results.ORT_REJECTED, results.NO_KERNEL,
                                results.CRASHED, results.TIMED_OUT, results.BOTH_REJECTED))]
    cells = [row.key, *map(str, counts), cause_text or "-"]
    if placed:  # the cases another provider ran: their verdicts are that provider's
        fell = ", ".join(f"{n} to {ep.removesuffix('ExecutionProvider')}"
                         for ep, n in row.fell_back.items())
        if fell:
            fell += " (" + ", ".join(f"{n} {status_text(status)}" for status, n
                                     in sorted(row.fell_back_statuses.items())) + ")"
        cells.insert(-1, fell or "0")
    return cells
