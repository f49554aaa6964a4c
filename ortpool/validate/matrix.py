"""The conformance matrix as text: per op and spec version, agree / differ / no kernel, causes."""

from __future__ import annotations

from collections.abc import Sequence

from ortpool.validate import causes, results
from ortpool.validate.conformance import FALLBACK, CaseResult, cause_totals, matrix
from ortpool.validate.terminal import table

COLUMNS = (
    "op-version",
    "cases",
    "agree",
    "differ",
    "RULINGS",
    "ORT rejects",
    "no kernel",
    "both reject",
    "fallback",
    "causes (cases)",
)


def render(found: Sequence[CaseResult], header: str) -> list[str]:
    rows = []
    for row in matrix(found):
        st = row.statuses
        cause_text = ", ".join(
            f"{code} {n}"
            for code, n in sorted(row.causes.items(), key=lambda kv: -kv[1])
            if code != causes.NO_KERNEL
        )
        rows.append(
            [
                row.key,
                str(row.cases),
                str(st[results.AGREE] + st[results.TIES]),
                str(st[results.DIFFER] + st[results.ORTPOOL_REJECTED]),
                str(st[results.RULINGS]),
                str(st[results.ORT_REJECTED]),
                str(st[results.NO_KERNEL]),
                str(st[results.BOTH_REJECTED]),
                str(st[FALLBACK]),
                cause_text or "-",
            ]
        )
    lines = [header, ""]
    lines += table(rows, COLUMNS, indent="")
    lines.append("")
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
                lines.append(f"  {code:<{width}}  {count:>5}  {causes.TITLES[code]}")
                lines.append(f"  {'':<{width}}         in {', '.join(where)}")
        lines.append("")
    ties = sum(r.node.count("ties") for r in found)
    lines.append(
        "agree counts cases whose only differences are Index ties (equal values); RULINGS counts "
        "cases differing only in cells the spec leaves open (NaN in a window, empty windows). "
        f"Index ties seen: {ties}. fallback counts cases the provider asked for did not "
        "execute (onnxruntime ran the node on another one): their values are not its."
    )
    return lines
