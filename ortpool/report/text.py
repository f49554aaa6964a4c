"""What every report's text shares: names made safe to print, plurals, numbers, and lines fitted
to the terminal's width (``COLUMNS``, else the terminal's, else :data:`DEFAULT_WIDTH`)."""

from __future__ import annotations

import html
import json
import math
import shutil
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

# defined with the errors: their messages make a model's names safe the same way
from ortpool.errors import safe

#: the width when the output is no terminal (a pipe, a file) and COLUMNS is not set
DEFAULT_WIDTH = 100
#: below this a report would be a column of fragments: a narrower terminal wraps it instead
MIN_WIDTH = 60
#: the lines one text may take (a cause, a note, a message)
MAX_LINES = 6
#: a notebook's own style sets its outputs' ``<pre>`` in the text font, centred or justified:
#: columns of figures then no longer line up
PRE = "<pre style='font-family:monospace;text-align:left;white-space:pre'>"


def preformatted(text: str) -> str:
    """``text`` as a notebook shows a report's lines: escaped, in columns, line by line (each
    line :func:`safe` alone: the line breaks are kept, not escaped as controls)."""
    lines = "\n".join(safe(line) for line in str(text).split("\n"))
    return f"{PRE}{html.escape(lines)}</pre>"


def plural(n: int, word: str) -> str:
    """``1 node``, ``2 nodes``, ``0 input sets``."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def tally(counts: Mapping[str, int], sep: str = " ") -> str:
    """``spec text 2, ruling 7 1``: counts by name, in their order."""
    return ", ".join(f"{k}{sep}{n}" for k, n in counts.items())


def num(value: float | None) -> str:
    """A figure in 3 significant digits; ``-`` for none."""
    return "-" if value is None else f"{value:.3g}"


def shape(dims: Sequence[int]) -> str:
    """``[1,2,9,9]``."""
    return "[" + ",".join(map(str, dims)) + "]"


def width() -> int:
    """The columns a report fits (the module docstring), at least :data:`MIN_WIDTH`."""
    return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def first_line(text: object) -> str:
    """A message's first line, made safe (onnxruntime's errors carry a C++ stack after it)."""
    text = str(text).strip()
    return safe(text.splitlines()[0].rstrip()) if text else ""


def _wrap(text: str, indent: str, more: str, columns: int) -> list[str]:
    # long words broken: a path may be wider than the report
    return textwrap.wrap(text, columns, initial_indent=indent, subsequent_indent=indent + more,
                         break_long_words=True, break_on_hyphens=False)


def fit(text: object, indent: str = "", more: str = "    ") -> list[str]:
    """``text``'s first line, made safe, wrapped in the report's width from ``indent``, the next
    lines ``more`` further in; at most :data:`MAX_LINES`."""
    columns = width()
    lines = _wrap(first_line(text), indent, more, columns) or [indent.rstrip()]
    if len(lines) <= MAX_LINES:
        return lines
    cut = " ... (cut: --json has the whole text)"
    return [*lines[: MAX_LINES - 1], lines[MAX_LINES - 1][: columns - len(cut)].rstrip() + cut]


def wrapped(lines: Sequence[str], more: int = 6) -> list[str]:
    """A report's lines, made safe, in the report's width: a long line wrapped, its continuation
    ``more`` columns deeper than its own indent."""
    columns, out = width(), []
    for line in map(safe, lines):
        text = line.lstrip(" ")
        if len(line) <= columns or not text:
            out.append(line)
        else:
            out += _wrap(text, line[: len(line) - len(text)], " " * more, columns)
    return out


def grid_lines(rows: Sequence[Sequence[str]], width: int | None = None,
               numbers_right: bool = False) -> list[str]:
    """``rows`` (the header first) as padded columns, a rule under the header, counts
    right-aligned with ``numbers_right``; with ``width``, the widest column cut until they fit."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    while width is not None and sum(widths) + 2 * (len(widths) - 1) > width and max(widths) > 8:
        widths[widths.index(max(widths))] -= 1

    def cell(text: str, w: int) -> str:
        text = safe(text)
        text = text if len(text) <= w else text[: w - 1] + "…"
        return text.rjust(w) if numbers_right and text.isdigit() else text.ljust(w)

    lines = ["  ".join(map(cell, row, widths)).rstrip() for row in rows]
    return [lines[0], "  ".join("-" * w for w in widths), *lines[1:]]


def markdown(rows: Sequence[Sequence[str]]) -> list[str]:
    """``rows`` (the header first) as a Markdown table."""
    return ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0]),
            *("| " + " | ".join(row) + " |" for row in rows[1:])]


def clean(value: Any) -> Any:
    """``value`` as standard JSON holds it: NaN and inf as strings, text made valid UTF-8."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str | bytes):
        return safe(value, controls=False)
    if isinstance(value, dict):
        return {clean(k) if isinstance(k, str | bytes) else k: clean(v)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    return value


def dumps(document: Any) -> str:
    """A report's JSON text (``--json``): :func:`clean`, indented; other types as their text."""
    return json.dumps(clean(document), indent=2, default=str) + "\n"


class Printed:
    """A report's text and JSON, from its ``summary_lines()`` and ``to_dict()``."""

    def to_json(self) -> str:
        """The report as the command's ``--json`` writes it."""
        return dumps(self.to_dict())

    def __str__(self) -> str:
        return "\n".join(map(safe, self.summary_lines()))
