"""The one exception type ortpool raises, carrying where the problem is, and how its messages
quote what they name: :func:`shown` a value, :func:`safe` a name or a path; a command's
warnings printed as its errors are (:func:`warnings_as_lines`)."""

from __future__ import annotations

import re
import sys
import warnings
from typing import Any

#: C0 and C1 controls and DEL (an escape sequence in a node's name would set the terminal's
#: title or clear its screen), bidi overrides (they reorder what is shown) and lone surrogates
#: (how Python holds the bytes of a name or a path that is not UTF-8; they cannot be encoded)
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _SHORT.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def safe(text: object, controls: bool = True) -> str:
    """``text`` with every character a terminal or an encoder cannot take written as its escape
    (``\\x1b``, ``\\udcff``); ``controls=False``: the lone surrogates only (JSON escapes the
    controls itself). Bytes are read as UTF-8, each other byte kept as its escape."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    return (_UNSAFE if controls else _SURROGATE).sub(_escaped, str(text))


def warnings_as_lines(command: str) -> None:
    """From now on a warning prints as ``ortpool COMMAND: warning: ...``, safe, the way a
    command prints its errors (``ORTPOOL_KERNELS=bogus``), not as Python's file:line and a line
    of ortpool's source; ``warnings.catch_warnings()`` restores Python's own."""
    warnings.showwarning = lambda message, *_: print(
        f"ortpool {command}: warning: {safe(message)}", file=sys.stderr)


def shown(value: Any) -> str:
    """``value`` as a message quotes it: its repr, cut to 60 characters (an array, a model),
    :func:`safe`; a repr that fails (``10**5000``: past Python's int-to-str limit) names the
    type, so the refusal, not the quoting, reaches the caller."""
    try:
        text = safe(repr(value))
    except Exception:  # any type's repr may raise: the caller's own objects too
        text = f"<a {type(value).__name__} that cannot be shown>"
    return text if len(text) <= 60 else text[:57] + "..."


class OrtpoolError(ValueError):
    """A pooling node, attribute or input that ortpool cannot accept: ``str(err)`` reads ``node
    'pool1' (MaxPool-12): pads='1,x': ...``, the parts kept as attributes (``node``, ``op``,
    ``version``, ``detail``) so callers can report them without parsing the text; ``limit``: a
    limit of ortpool's own (bytes, reads, memory) refused it, not the spec."""

    def __init__(
        self, message: str, *, node: str | None = None, op: str | None = None,
        version: int | None = None, limit: bool = False,
    ) -> None:
        self.detail = message
        self.limit = limit
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
                            version=self.version if self.version is not None else version,
                            limit=self.limit)
