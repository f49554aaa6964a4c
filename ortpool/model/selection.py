"""Which pooling nodes a run touches: ``--ops``, ``--nodes`` and ``--exclude`` (built and checked by
:func:`ortpool.options.files.selection`)."""

from __future__ import annotations

import dataclasses

from ortpool.errors import OrtpoolError


@dataclasses.dataclass(frozen=True)
class Selection:
    """``ops``: operator names, ``nodes``: node names (None: all); ``exclude``: node names."""

    ops: frozenset[str] | None = None
    nodes: frozenset[str] | None = None
    exclude: frozenset[str] = frozenset()
    style: str = dataclasses.field(default="cli", compare=False)

    def _name(self, key: str) -> str:
        return key if self.style == "python" else f"--{key}"

    def why_not(self, op: str, name: str) -> str | None:
        """None when the node is selected, else the reason it is not."""
        if self.ops is not None and op not in self.ops:
            return f"not selected: {self._name('ops')} {','.join(sorted(self.ops))}"
        if self.nodes is not None and name not in self.nodes:
            return f"not selected: not named by {self._name('nodes')}"
        if name in self.exclude:
            return f"not selected: named by {self._name('exclude')}"
        return None

    def check_names(self, known: set[str], what: str) -> None:
        """Every name given to --nodes/--exclude must name a ``what`` node of the run."""
        for flag, names in ((self._name("nodes"), self.nodes or ()),
                            (self._name("exclude"), self.exclude)):
            missing = sorted(set(names) - known)
            if missing:
                raise OrtpoolError(f"{flag}: no {what} node is named {missing[0]!r}")
