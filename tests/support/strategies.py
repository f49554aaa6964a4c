"""``hypothesis.strategies`` with every strategy built once per distinct arguments.

The property tests' composite strategies build their parts on every draw (``st.lists(pool,
min_size=size, max_size=size)`` for each example): hypothesis then looks each one up in its own
cache and validates it again, about a third of the time it spends making an example. This proxy
returns the same strategy object for the same constructor and arguments, so a draw makes the
same choices and the examples are the very same (checked by hashing 300 examples each way), in
less time. Arguments that cannot be hashed are built afresh as before.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as _strategies

#: Not constructors of a strategy from values: passed through.
_AS_IS = frozenset({"composite", "data", "SearchStrategy", "DataObject", "DrawFn"})


def _key(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


class _BuiltOnce:
    def __init__(self) -> None:
        self._built: dict[tuple, Any] = {}

    def __getattr__(self, name: str) -> Any:
        make = getattr(_strategies, name)
        if name in _AS_IS or not callable(make):
            return make

        def built_once(*args: Any, **kwargs: Any) -> Any:
            key = (name, tuple(map(_key, args)), tuple((k, _key(v)) for k, v in kwargs.items()))
            try:
                return self._built[key]
            except KeyError:
                strategy = self._built[key] = make(*args, **kwargs)
                return strategy
            except TypeError:  # an argument that cannot be hashed
                return make(*args, **kwargs)

        return built_once


st = _BuiltOnce()
