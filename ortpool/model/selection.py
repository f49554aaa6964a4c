"""Which pooling nodes a run touches: ``--ops``, ``--nodes`` and ``--exclude``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from ortpool.errors import OrtpoolError
from ortpool.versions import OPERATORS


@dataclasses.dataclass(frozen=True)
class Selection:
    """``ops``: operator names (None: all three); ``nodes``: only these node names (None: all);
    ``exclude``: never these node names."""

    ops: frozenset[str] | None = None
    nodes: frozenset[str] | None = None
    exclude: frozenset[str] = frozenset()

    @classmethod
    def make(
        cls,
        ops: Iterable[str] | str | None = None,
        nodes: Iterable[str] | str | None = None,
        exclude: Iterable[str] | str | None = None,
    ) -> Selection:
        """Build and check a selection; a string is one name (``ops`` also splits on commas)."""
        op_set = None
        if ops is not None:
            items = [ops] if isinstance(ops, str) else list(ops)
            op_set = frozenset(p.strip() for item in items for p in item.split(",") if p.strip())
            unknown = sorted(op_set - set(OPERATORS))
            if unknown or not op_set:
                problem = f"{unknown[0]!r} is not a pooling operator" if unknown else "no operator"
                raise OrtpoolError(f"--ops: {problem}; choose from {','.join(OPERATORS)}")
        return cls(
            ops=op_set,
            nodes=None
            if nodes is None
            else frozenset([nodes] if isinstance(nodes, str) else nodes),
            exclude=frozenset([exclude] if isinstance(exclude, str) else exclude or ()),
        )

    def why_not(self, op: str, name: str) -> str | None:
        """None when the node is selected, else the reason it is not."""
        if self.ops is not None and op not in self.ops:
            return f"not selected: --ops {','.join(sorted(self.ops))}"
        if self.nodes is not None and name not in self.nodes:
            return "not selected: not named by --nodes"
        if name in self.exclude:
            return "not selected: named by --exclude"
        return None

    def check_names(self, known: set[str], what: str) -> None:
        """Every name given to --nodes/--exclude must name a node the run considers."""
        for flag, names in (("--nodes", self.nodes or ()), ("--exclude", self.exclude)):
            missing = sorted(set(names) - known)
            if missing:
                raise OrtpoolError(f"{flag}: no {what} node is named {missing[0]!r}")
