"""What ``ortpool fix`` says of each candidate (:class:`Outcome`) and each node
(:class:`Realization`): enums that are the text the report writes."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any


class _Text(str, enum.Enum):
    """A member that is its text wherever it is written (``str``, f-strings, JSON)."""

    def __str__(self) -> str:  # Enum's __format__ then writes it too
        return str(self.value)


class Outcome(_Text):
    """What became of one candidate tried for a node."""

    NOT_APPLICABLE = "not applicable"
    NOT_WRITABLE = "not writable at this opset"
    NOT_EXACT = "not exact"
    FOLDED = "changed by the optimizer"
    NOT_IN_MODEL = "not exact in the model"
    PROVEN = "proven"


class Realization(_Text):
    """What a pooling node became in the fixed model."""

    UNCHANGED = "unchanged"
    FORM = "standard form"
    ORTPOOL = "ortpool op"
    UNPROVEN = "unproven"
    NOT_SELECTED = "not selected"


@dataclasses.dataclass(frozen=True)
class NotApplicable:
    """A form that does not apply to a node, and why (the report's detail)."""

    reason: str


@dataclasses.dataclass
class Attempt:
    """One candidate tried for a node and what became of it (``detail``: the proof, or why not)."""

    form: str
    outcome: Outcome
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"form": self.form, "outcome": self.outcome.value, "detail": self.detail}
