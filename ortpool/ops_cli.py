"""``ortpool ops``: the table of ortpool op types, versions, element types and attributes."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence

from ortpool import optypes
from ortpool.options import reports
from ortpool.report.text import markdown

#: the columns the terminal table fits (``--markdown`` prints every cell on its row)
WIDTH = 100

HELP = "list every ortpool op type with its inputs, outputs, element types and attributes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    reports.add_markdown(parser, "print a Markdown table")


def rows() -> list[tuple[str, str, str, str, str, str]]:
    out = []
    for t in optypes.all_op_types():
        attrs = ", ".join(f"{name}:{'string' if a.kind != 'int' else 'int'}"
                          for name, a in t.spec.attrs.items())
        out.append((t.name, f"{t.spec.op}-{t.spec.version}", ", ".join(t.input_names),
                    ", ".join(["Y", "Indices"][: t.n_outputs]), ", ".join(t.dtypes), attrs))
    return out


def run(args: argparse.Namespace) -> int:
    header = ("op type", "spec", "inputs", "outputs", "X types", "attributes (ortpool encoding)")
    table = rows()
    lines = markdown([header, *((f"`{row[0]}`", *row[1:]) for row in table)]) if (
        args.markdown) else terminal_lines(header, table)
    print("\n".join(lines))
    return 0


def terminal_lines(header: Sequence[str], table: Sequence[Sequence[str]]) -> list[str]:
    """The table in :data:`WIDTH` columns, each op type's attributes wrapped under its line."""
    columns = len(header) - 1
    # lists without the blank after each comma: the markdown table's cells wrap, these do not
    table = [[c.replace(", ", ",") for c in row[:columns]] + [row[-1]] for row in table]
    widths = [max(len(r[i]) for r in [header, *table]) for i in range(columns)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=False)).rstrip()

    out = [line(header[:columns]), f"  {header[-1]}: strings unless marked :int"]
    for row in table:
        out.append(line(row[:columns]))
        attrs = row[-1].replace(":string", "")
        if attrs:
            out += textwrap.wrap(attrs, WIDTH, initial_indent="    ", subsequent_indent="      ")
    return out
