"""``hypothesis.strategies`` with every strategy built once per distinct arguments.

The property tests' composite strategies build their parts on every draw (``st.lists(pool,
min_size=size, max_size=size)`` for each example): hypothesis then looks each one up in its own
cache and validates it again, about a third of the time it spends making an example. This proxy
returns the same strategy object for the same constructor and arguments, so a draw makes the
same choices and the examples are the very same (checked by hashing 300 examples each way), in
less time. Arguments that cannot be hashed are built afresh as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
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


@_strategies.composite
def cells(
    draw: Any, size: int, choices: Sequence[float], *, mixed: Sequence[float] | str | None = None
) -> np.ndarray:
    """``size`` values (float64 if any choice is a float, else int64), each one of ``choices``;
    with ``mixed``, about half of them are drawn from ``mixed`` instead: other values, or
    ``"float16"`` for any float16 in [-100, 100] (-0.0, subnormals and every exponent among them).

    All come from one byte string, which hypothesis makes as one choice instead of one per cell
    (``st.lists(st.sampled_from(choices), min_size=size, max_size=size)`` spent about two thirds
    of a property test's time drawing its input): a byte picks a choice, its top bit picks
    ``mixed``. Shrinking still works cell by cell: bytes shrink towards 0, i.e. ``choices[0]``.
    """
    if not choices:
        raise ValueError("cells: no choices to draw from")
    width = 3 if mixed == "float16" else 1
    raw = draw(_strategies.binary(min_size=width * size, max_size=width * size))
    kind = np.float64 if any(isinstance(c, float) for c in choices) else np.int64
    picks = np.frombuffer(raw[:size], np.uint8).astype(np.int64)
    if mixed is None:
        return np.asarray(choices, kind)[picks % len(choices)]
    low = picks % 128  # the low seven bits choose a value, the top bit where from
    values = np.asarray(choices, kind)[low % len(choices)]
    if mixed == "float16":
        other = np.frombuffer(raw[size:], np.float16).astype(np.float64)
        # Every bit pattern is a float16; fold those outside [-100, 100] (and inf, NaN) into it.
        finite = np.isfinite(other)
        other = np.where(finite, np.fmod(np.where(finite, other, 0.0), 100.0), -0.0)
        values = values.astype(np.float64)
    elif isinstance(mixed, str):
        raise ValueError(f"cells: mixed={mixed!r} is neither values nor 'float16'")
    else:
        other = np.asarray(mixed, values.dtype)[low % len(mixed)]
    return np.where(picks >= 128, other, values)
