"""The cache of planned calls: one runner per (operator, shape, dtype, attributes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Runner = Callable[[np.ndarray], Any]

#: (tag, shape, dtype, attribute items) -> (runner, bytes its plan holds), for calls whose
#: attributes are hashable (a session's are: strings and ints). Bounded in entries and in bytes
#: (a plan holds O(rank) and at most an output plane), the oldest going first: a new shape at
#: every call (audio of varying length) keeps memory bounded.
_CALLS: dict[tuple, tuple[Runner, int]] = {}
_MAX_CALLS = 1024
MAX_HELD_BYTES = 64 << 20
#: What a cached entry costs besides its tables (plan object, key, closures), measured with
#: tracemalloc over 1000 new-shape calls: about 2 KB.
ENTRY_BYTES = 2048
_held = 0


def run(
    tag: tuple, x: Any, attributes: dict[str, Any], plan: Callable[..., tuple], *args: Any
) -> Any:
    """``x`` through the runner of the call's signature: the cached one, else the (runner, held
    bytes) ``plan(x, attributes, *args)`` builds, cached: validation and planning happen once per
    signature."""
    key, runner = lookup(tag, x, attributes)
    if runner is None:
        runner = remember(key, *plan(x, attributes, *args))
    return runner(x)


def lookup(tag: tuple, x: Any, attributes: dict[str, Any]) -> tuple[tuple | None, Runner | None]:
    """(key, cached runner or None) of a call; key None when the call cannot be cached."""
    if type(x) is not np.ndarray:
        return None, None
    # The value types are part of the key: 1, 1.0 and True are equal as keys, yet only the
    # first is a valid int attribute, and a cache hit must never skip an error.
    key = (tag, x.shape, x.dtype, tuple(attributes.items()), tuple(map(type, attributes.values())))
    try:
        return key, (_CALLS.get(key) or (None,))[0]
    except TypeError:  # list attributes (the numpy API): key them as tuples, with their types
        pass
    try:
        items = tuple(
            (k, tuple(v), tuple(map(type, v))) if isinstance(v, list) else (k, v, type(v))
            for k, v in attributes.items()
        )
        key = (tag, x.shape, x.dtype, items)
        return key, (_CALLS.get(key) or (None,))[0]
    except TypeError:
        return None, None


def remember(key: tuple | None, runner: Runner, held: int = 0) -> Runner:
    """Cache ``runner`` under ``key`` (None: not cacheable); ``held`` is the bytes of arrays its
    plan keeps. The oldest entries make room; an entry larger than the bound is kept alone (its
    divisor is one output plane: no more than each call allocates anyway)."""
    global _held
    if key is None:
        return runner
    cost = held + ENTRY_BYTES
    while _CALLS and (len(_CALLS) >= _MAX_CALLS or _held + cost > MAX_HELD_BYTES):
        _held -= _CALLS.pop(next(iter(_CALLS)))[1]
    _CALLS[key] = (runner, cost)
    _held += cost
    return runner


def held_bytes() -> int:
    """Bytes the cached plans hold, as :func:`remember` counts them."""
    return _held


def forget() -> None:
    """Drop every cached runner (plans are rebuilt on the next call)."""
    global _held
    _CALLS.clear()
    _held = 0
