"""The options of every command, one group per idea: ``add_arguments(parser)`` declares the
flags once, ``from_args(args)`` and ``from_python(...)`` build the typed value, every value
checked once (:mod:`ortpool.values`) and named as its caller spells it (:func:`label`).
"""

from __future__ import annotations

from ortpool.model.inputs import CLI, PYTHON

__all__ = [
    "CLI", "PYTHON", "accuracy", "domain", "files", "inputs", "label", "reports", "runtime",
    "target", "timing",
]  # fmt: skip

#: keyword -> its flag, where the flag is not the keyword with dashes
_FLAGS = {"shapes": "--shape", "agree_factor": "--accuracy-agree-factor",
          "limits": "--accuracy-limit", "json_report": "--json",
          "provider_options": "--provider-option", "runtime_options": "--runtime-option"}


def label(key: str, style: str) -> str:
    """How ``style``'s caller spells option ``key``: ``--opt-level`` or ``opt_level``."""
    return key if style == PYTHON else _FLAGS.get(key, "--" + key.replace("_", "-"))

