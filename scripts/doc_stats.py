#!/usr/bin/env python
"""Count the documentation's lines and the paragraphs that hold one run's figures or history.

A paragraph is a run of non-blank lines (a fenced code block, blank lines included, is one
paragraph; so is a table). It is counted as *measured or historical* when it holds any of:

* a duration: a number followed by ``ns``, ``µs``, ``us``, ``ms``, ``s``, ``min`` or
  ``core-seconds`` (``2.7 s``, ``10-20 s``), the number not glued to a word (``3x3 s=2`` is not);
* a speed ratio: ``1.04x``, ``x1.98``;
* a round of work or a session: ``this round``, ``first round``, ``round 3``, ``session 2``;
* a commit id: 7 to 40 hex digits holding both a digit and a letter;
* "before this rule" / "before this change";
* a percentage (``+5-16%``);
* "measured with", "measured on", "measured under", "found on the way".

Generated results pages (``docs/results/``) are one run's figures by design and are left out of
the paragraph count; their lines are counted apart. Usage::

    python scripts/doc_stats.py [ROOT]      # ROOT defaults to the repository
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PATTERNS = {
    "duration": re.compile(
        r"(?<![\w.])\d+(?:\.\d+)?(?:\s?[-–]\s?\d+(?:\.\d+)?)?\s?"
        r"(?:ns|µs|us|ms|s|min|core-seconds)\b(?!=)"
    ),
    "ratio": re.compile(r"(?<![\w.])(?:\d+\.\d+x|x\d+\.\d+)\b"),
    "round": re.compile(
        r"\b(?:(?:this|last|first|second|third|fourth|fifth|previous|next|each) round"
        r"|round \d|session \d)\b",
        re.IGNORECASE,
    ),
    "commit": re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"),
    "before": re.compile(r"\bbefore this (?:rule|change)\b", re.IGNORECASE),
    "percent": re.compile(r"(?<![\w.])[+-]?\d+(?:\.\d+)?(?:[-–]\d+(?:\.\d+)?)?%"),
    "measured": re.compile(r"\b(?:measured (?:with|on|under)|found on the way)\b", re.I),
}


def paragraphs(text: str) -> list[str]:
    """The paragraphs of a Markdown text, as the module docstring defines them."""
    result: list[str] = []
    current: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            current.append(line)
            fenced = not fenced
            continue
        if not fenced and not line.strip():
            if current:
                result.append("\n".join(current))
            current = []
            continue
        current.append(line)
    if current:
        result.append("\n".join(current))
    return result


def measured(paragraph: str) -> list[str]:
    """The names of the patterns ``paragraph`` matches."""
    return [name for name, pattern in PATTERNS.items() if pattern.search(paragraph)]


def files(root: Path) -> list[Path]:
    """README.md and every Markdown file under docs/, in a fixed order."""
    found = [root / "README.md"] if (root / "README.md").exists() else []
    return found + sorted((root / "docs").rglob("*.md"))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else ROOT
    totals = {"lines": 0, "paragraphs": 0, "measured": 0, "results lines": 0}
    for path in files(root):
        text = path.read_text(encoding="utf-8")
        relative = path.relative_to(root).as_posix()
        lines = len(text.splitlines())
        if relative.startswith("docs/results/"):
            totals["results lines"] += lines
            print(f"{relative:40} {lines:5} lines (generated results, not counted)")
            continue
        found = [p for p in paragraphs(text) if measured(p)]
        count = len(paragraphs(text))
        totals["lines"] += lines
        totals["paragraphs"] += count
        totals["measured"] += len(found)
        print(f"{relative:40} {lines:5} lines {count:4} paragraphs {len(found):4} measured")
    print(
        f"total: {totals['lines']} lines, {totals['paragraphs']} paragraphs, "
        f"{totals['measured']} holding one run's figures or history; "
        f"{totals['results lines']} lines of generated results"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
