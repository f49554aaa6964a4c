"""What a rewrite or restore did to each pooling node it considered, and the model's notes."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from ortpool import values
from ortpool.report.text import Printed, tally

RETARGETED = "retargeted"
RESTORED = "restored"
LEFT_ALONE = "left alone"


@dataclasses.dataclass
class NodeReport:
    """One pooling node: ``op`` the standard operator, ``version`` the spec version governing
    it (None when unresolved), ``op_type`` the op type written (None when left alone), ``cast``
    the element type carried through Cast to float32 (``float16``/``bfloat16``) or None."""

    name: str
    location: str
    op: str
    version: int | None
    status: str
    op_type: str | None = None
    reason: str = ""
    cast: str | None = None
    invalid: bool = False

    @property
    def key(self) -> str:
        return f"{self.op}-{self.version}" if self.version is not None else self.op

    def describe(self) -> str:
        where = f"node {self.name!r} ({self.key}) in {self.location}"
        if self.status == LEFT_ALONE:
            return f"{where}: left alone: {self.reason}"
        cast = f" with Cast {self.cast}<->float" if self.cast else ""
        return f"{where}: {self.status} as {self.op_type}{cast}"


@dataclasses.dataclass
class RewriteReport(Printed):
    """Every node a rewrite (or restore) considered, in model order, and model-wide notes."""

    action: str  # "rewrite" or "restore"
    nodes: list[NodeReport] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def changed(self) -> list[NodeReport]:
        return [n for n in self.nodes if n.status != LEFT_ALONE]

    @property
    def left_alone(self) -> list[NodeReport]:
        return [n for n in self.nodes if n.status == LEFT_ALONE]

    def counts(self) -> dict[str, int]:
        """Nodes changed per op and spec version, e.g. ``{"MaxPool-12": 3}``, sorted by key."""
        return dict(sorted(Counter(n.key for n in self.changed).items()))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form: summary counts, every node, notes."""
        return {
            "action": self.action,
            "summary": {"considered": len(self.nodes), "changed": len(self.changed),
                        "left_alone": len(self.left_alone), "per_op_version": self.counts()},
            "nodes": [dataclasses.asdict(n) for n in self.nodes],
            "notes": list(self.notes),
        }

    def summary_lines(self, verbose: bool = False) -> list[str]:
        """The human summary the CLI prints: counts per op version, then every node left alone."""
        verbose = values.flag("verbose", verbose)
        verb = "retargeted" if self.action == "rewrite" else "restored"
        detail = tally(self.counts(), ": ")
        lines = [f"{verb} {len(self.changed)} of {len(self.nodes)} pooling nodes"
                 + (f" ({detail})" if detail else "")]
        if verbose:
            lines += [f"  {n.describe()}" for n in self.changed]
        if left := self.left_alone:
            lines.append(f"left alone {len(left)}:")
            lines += [f"  {n.describe()}" for n in left]
        lines += [f"note: {note}" for note in self.notes]
        return lines
