"""``--nonfinite``: the input domain (ruling 20) of every command that judges a node: finite by
default, NaN, +inf and -inf at every tap position too with ``--nonfinite``."""

from __future__ import annotations

import argparse
from typing import Any

from ortpool import values
from ortpool.check.domain import FINITE, NONFINITE


def add_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """The group on ``parser``; ``what`` says what the domain decides ("verdicts", "proofs")."""
    group = parser.add_argument_group(
        "input domain (ruling 20)",
        f"the {what} cover every finite input by default ({FINITE} domain); --nonfinite adds "
        "NaN, +inf and -inf at every tap position of every window")
    choice = group.add_mutually_exclusive_group()
    choice.add_argument(
        "--nonfinite", "--nan", dest="nonfinite", action="store_true",
        help=f"judge on the {NONFINITE} domain too: NaN, +inf, -inf (fix then guards the max "
        "of nodes onnxruntime gets wrong there, at a cost the report shows)")
    choice.add_argument(
        "--finite", "--assume-finite", dest="nonfinite", action="store_false",
        help="finite inputs only (the default; --assume-finite is the earlier spelling)")
    parser.set_defaults(nonfinite=False)


def from_args(args: argparse.Namespace) -> bool:
    """True for the non-finite domain."""
    return bool(args.nonfinite)


def from_python(nonfinite: Any) -> bool:
    """``nonfinite=`` checked: True or False (``'false'`` is a true value to Python)."""
    return values.flag("nonfinite", nonfinite)
