"""The one exception type ortpool raises, carrying where the problem is."""

from __future__ import annotations

from typing import Any


def shown(value: Any) -> str:
    """``value`` as a message quotes it: its repr, cut to 60 characters (an array, a model)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class OrtpoolError(ValueError):
    """A pooling node, attribute or input that ortpool cannot accept: ``str(err)`` reads ``node
    'pool1' (MaxPool-12): pads='1,x': ...``, the parts kept as attributes (``node``, ``op``,
    ``version``, ``detail``) so callers can report them without parsing the text."""

    def __init__(
        self, message: str, *, node: str | None = None, op: str | None = None,
        version: int | None = None,
    ) -> None:
        self.detail = message
        self.node = node
        self.op = op
        self.version = version
        where = [f"node {node!r}"] if node is not None else []
        if op is not None:
            where.append(f"({op}-{version})" if version is not None else f"({op})")
        prefix = " ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)

    def located(
        self, *, node: str | None = None, op: str | None = None, version: int | None = None
    ) -> OrtpoolError:
        """A copy with the missing parts of the location filled in."""
        return OrtpoolError(self.detail, node=self.node if self.node is not None else node,
                            op=self.op if self.op is not None else op,
                            version=self.version if self.version is not None else version)
