"""``ortpool ops``: the table of ortpool op types, versions, element types and attributes."""

from __future__ import annotations

import argparse

from ortpool import optypes
from ortpool.cliargs import reports

HELP = "list every ortpool op type with its inputs, outputs, element types and attributes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    reports.add_markdown(parser, "print a Markdown table")


def rows() -> list[tuple[str, str, str, str, str, str]]:
    out = []
    for t in optypes.all_op_types():
        ins = t.input_names
        outs = ["Y", "Indices"][: t.n_outputs]
        attrs = ", ".join(
            f"{name}:{'string' if a.kind != 'int' else 'int'}" for name, a in t.spec.attrs.items()
        )
        out.append(
            (
                t.name,
                f"{t.spec.op}-{t.spec.version}",
                ", ".join(ins),
                ", ".join(outs),
                ", ".join(t.dtypes),
                attrs,
            )
        )
    return out


def run(args: argparse.Namespace) -> int:
    header = ("op type", "spec", "inputs", "outputs", "X types", "attributes (ortpool encoding)")
    table = rows()
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in table:
            print("| " + " | ".join((f"`{row[0]}`", *row[1:])) + " |")
        return 0
    widths = [max(len(r[i]) for r in [header, *table]) for i in range(len(header))]
    for row in [header, *table]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return 0
