"""The cache of planned calls: one runner per (operator, shape, dtype, attributes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Runner = Callable[[np.ndarray], Any]

#: (tag, shape, dtype, attribute items) -> runner, for calls whose attributes are hashable (a
#: session's are: strings and ints); validation and planning happen once per key.
_CALLS: dict[tuple, Runner] = {}
_MAX_CALLS = 1024


def lookup(tag: tuple, x: Any, attributes: dict[str, Any]) -> tuple[tuple | None, Runner | None]:
    """(key, cached runner or None) of a call; key None when the call cannot be cached."""
    if type(x) is not np.ndarray:
        return None, None
    # The value types are part of the key: 1, 1.0 and True are equal as keys, yet only the
    # first is a valid int attribute, and a cache hit must never skip an error.
    key = (tag, x.shape, x.dtype, tuple(attributes.items()), tuple(map(type, attributes.values())))
    try:
        return key, _CALLS.get(key)
    except TypeError:  # list attributes (the numpy API): key them as tuples, with their types
        pass
    try:
        items = tuple(
            (k, tuple(v), tuple(map(type, v))) if isinstance(v, list) else (k, v, type(v))
            for k, v in attributes.items()
        )
        key = (tag, x.shape, x.dtype, items)
        return key, _CALLS.get(key)
    except TypeError:
        return None, None


def remember(key: tuple | None, runner: Runner) -> Runner:
    if key is not None:
        if len(_CALLS) >= _MAX_CALLS:
            _CALLS.clear()
        _CALLS[key] = runner
    return runner


def forget() -> None:
    """Drop every cached runner (plans are rebuilt on the next call)."""
    _CALLS.clear()
