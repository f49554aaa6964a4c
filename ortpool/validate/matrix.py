"""The conformance matrix as text: per op and spec version, agree / differ / no kernel, causes."""

from __future__ import annotations

from collections.abc import Sequence

from ortpool.check import causes
from ortpool.validate import results
from ortpool.validate.conformance import CaseResult, Row, cause_totals, matrix
from ortpool.validate.terminal import STATUS_TEXT, fit, table

COLUMNS = (
    "op-version",
    "cases",
    "agree",
    "differ",
    "RULINGS",
    "ORT rejects",
    "no kernel",
    "both reject",
    "causes (cases)",
)


def render(found: Sequence[CaseResult], header: str) -> list[str]:
    placed = any(r.node.asked_provider for r in found)
    rows = [_row(row, placed) for row in matrix(found)]
    lines = [header, ""]
    columns = (*COLUMNS[:-1], "fell back", COLUMNS[-1]) if placed else COLUMNS
    lines += table(rows, columns, indent="")
    lines.append("")
    lines += _kernels_and_causes(found)
    ties = sum(r.node.count("ties") for r in found)
    lines += fit(
        "agree counts cases whose only differences are Index ties (equal values) or accuracy "
        "notes (ruling 17); differ counts sums beyond the accuracy limit too; RULINGS counts "
        "cases differing only in cells the spec leaves open (NaN in a window, empty windows). "
        f"Index ties seen: {ties}.",
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
        str(st[results.DIFFER] + st[results.INACCURATE] + st[results.ORTPOOL_REJECTED]),
        str(st[results.RULINGS]),
        str(st[results.ORT_REJECTED]),
        str(st[results.NO_KERNEL]),
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


def _kernels_and_causes(found: Sequence[CaseResult]) -> list[str]:
    """The blocks under the table: the missing kernels, the causes with where they show."""
    lines = []
    kernels = [
        (row.key, sorted(row.no_kernel_types)) for row in matrix(found) if row.no_kernel_types
    ]
    if kernels:
        lines.append("onnxruntime has no kernel for:")
        for key, types in kernels:
            lines.append(f"  {key}: {', '.join(types)}")
        lines.append("")
    totals = cause_totals(found)
    if totals:
        lines.append("causes (cases; a case can have several):")
        width = max(len(code) for code in totals)
        for code in causes.TITLES:
            if code in totals:
                count, where = totals[code]
                lines += fit(f"{code:<{width}}  {count:>5}  {causes.TITLES[code]}", "  ")
                lines += fit(f"in {', '.join(where)}", " " * (width + 11))
        lines.append("")
    return lines
