"""The one exception type ortpool raises, carrying where the problem is."""

from __future__ import annotations


class OrtpoolError(ValueError):
    """A pooling node, attribute or input that ortpool cannot accept.

    ``str(err)`` reads ``node 'pool1' (MaxPool-12): pads='1,x': ...``; the parts are kept as
    attributes so callers (the validator, the CLI) can report them without parsing the text.
    """

    def __init__(
        self, message: str, *, node: str | None = None, op: str | None = None,
        version: int | None = None,
    ) -> None:
        self.detail = message
        self.node = node
        self.op = op
        self.version = version
        super().__init__(self._compose())

    def _compose(self) -> str:
        where = [f"node {self.node!r}"] if self.node is not None else []
        if self.op is not None:
            version = f"-{self.version}" if self.version is not None else ""
            where.append(f"({self.op}{version})")
        prefix = " ".join(where)
        return f"{prefix}: {self.detail}" if prefix else self.detail

    def located(
        self, *, node: str | None = None, op: str | None = None, version: int | None = None
    ) -> OrtpoolError:
        """A copy with the missing parts of the location filled in."""
        return OrtpoolError(self.detail, node=self.node if self.node is not None else node,
                            op=self.op if self.op is not None else op,
                            version=self.version if self.version is not None else version)
