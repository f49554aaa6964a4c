"""How a command reports: ``--json FILE``, ``--html FILE``, ``-v/--verbose`` (``-q/--quiet``
where a command can say nothing), ``--no-progress`` and ``--markdown``, declared here once."""

from __future__ import annotations

import argparse


def report_file(text: str) -> str:
    """A report's path as given; ``''`` is refused (it was taken for no report at all)."""
    if not text:
        raise argparse.ArgumentTypeError("'' names no file; leave the option out for no report")
    return text


def add_json(parser: argparse.ArgumentParser, what: str) -> None:
    """``--json FILE``; ``what`` is its help (what the command writes there)."""
    parser.add_argument("--json", metavar="FILE", type=report_file, help=what)


def add_html(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--html", metavar="FILE", type=report_file, help=what)


def add_verbose(parser: argparse.ArgumentParser, what: str, quiet: bool = False) -> None:
    """``-v/--verbose`` (``what``: what it adds), with ``-q/--quiet`` beside it when ``quiet``."""
    loud = parser.add_mutually_exclusive_group() if quiet else parser
    if quiet:
        loud.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    loud.add_argument("-v", "--verbose", action="store_true", help=what)


def add_no_progress(parser: argparse.ArgumentParser) -> None:
    """``--no-progress``: the progress bar on stderr left out."""
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def add_markdown(parser: argparse.ArgumentParser, what: str) -> None:
    """``--markdown``: the command's table printed as Markdown; ``what`` is its help."""
    parser.add_argument("--markdown", action="store_true", help=what)
