"""``--json FILE``, ``--no-progress`` and ``--markdown``: how a command reports (``validate``,
``conformance``, ``bench``, ``ops``), declared here once. The commands that write a model take
``--json REPORT`` with the other options of :mod:`ortpool.cliargs.files`."""

from __future__ import annotations

import argparse


def add_json(parser: argparse.ArgumentParser, what: str) -> None:
    """``--json FILE``; ``what`` is its help (what the command writes there)."""
    parser.add_argument("--json", metavar="FILE", help=what)


def add_no_progress(parser: argparse.ArgumentParser) -> None:
    """``--no-progress``: the progress bar on stderr left out."""
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def add_markdown(parser: argparse.ArgumentParser, what: str) -> None:
    """``--markdown``: the command's table printed as Markdown; ``what`` is its help."""
    parser.add_argument("--markdown", action="store_true", help=what)
