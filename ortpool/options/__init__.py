"""The options of every command, one group per idea, for the shell and for Python alike.

Each group declares its flags once (``add_arguments(parser)``) and builds its typed value from
the parsed flags (``from_args(args)``) and from the API's keywords (``from_python(...)``), every
value checked once (:mod:`.values`) with messages naming the option as its caller spells it
(:func:`label`: ``--opt-level`` from the shell, ``opt_level`` from Python).
"""

from __future__ import annotations

from ortpool.model.inputs import CLI, PYTHON

__all__ = [
    "CLI", "PYTHON", "accuracy", "domain", "files", "inputs", "label", "reports", "runtime",
    "target", "timing", "values",
]  # fmt: skip

#: keyword -> its flag, where the flag is not the keyword with dashes
_FLAGS = {"shapes": "--shape", "agree_factor": "--accuracy-agree-factor",
          "limits": "--accuracy-limit", "json_report": "--json",
          "provider_options": "--provider-option", "runtime_options": "--runtime-option"}


def label(key: str, style: str) -> str:
    """How ``style``'s caller spells option ``key``: ``--opt-level`` (:data:`CLI`) or
    ``opt_level`` (:data:`PYTHON`)."""
    return key if style == PYTHON else _FLAGS.get(key, "--" + key.replace("_", "-"))

