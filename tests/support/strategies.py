"""``hypothesis.strategies`` with every strategy built once per distinct arguments.

The property tests' composite strategies build their parts on every draw (``st.lists(pool,
min_size=size, max_size=size)`` for each example): hypothesis then looks each one up in its own
cache and validates it again, about a third of the time it spends making an example. This proxy
returns the same strategy object for the same constructor and arguments, so a draw makes the
same choices and the examples are the very same (checked by hashing 300 examples each way), in
less time. Arguments that cannot be hashed are built afresh as before.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, TypeVar

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
T = TypeVar("T")


class Picks:
    """Small choices (integers, booleans, one of a few options) read in turn from one drawn byte
    string: see :func:`picks`."""

    def __init__(self, raw: bytes) -> None:
        self._raw = raw
        self._at = 0

    def _byte(self) -> int:
        if self._at >= len(self._raw):
            raise ValueError(f"picks: all {len(self._raw)} bytes are used: draw picks(more)")
        self._at += 1
        return self._raw[self._at - 1]

    def integer(self, low: int, high: int) -> int:
        """An integer in [low, high] (at most 256 of them): the byte scaled to the range, so a
        smaller byte never gives a larger integer (the byte 0 gives ``low``)."""
        span = high - low + 1
        if not 1 <= span <= 256:
            raise ValueError(f"picks: [{low}, {high}] is not 1 to 256 integers")
        return low + self._byte() * span // 256

    def integers(self, count: int, low: int, high: int) -> list[int]:
        return [self.integer(low, high) for _ in range(count)]

    def boolean(self) -> bool:
        return self.integer(0, 1) == 1

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``; the byte 0 gives the first."""
        return options[self.integer(0, len(options) - 1)]


@functools.cache
def picks(size: int = 96) -> _strategies.SearchStrategy[Picks]:
    """A :class:`Picks` of ``size`` bytes: an example's small choices from one hypothesis choice.

    Drawn one by one (``st.integers``, ``st.booleans``, ``st.lists`` of them), the thirty-odd
    choices of a pooling example were two thirds of a property test's time: each is a
    hypothesis draw with its own span and bookkeeping, where the check itself (reference and
    both kernel paths) took under a third. Each choice here is one byte scaled to its range
    (near-uniform for the small ranges drawn), so the same choices are made from one draw.
    Shrinking still works choice by choice: the mapping is monotonic, so as a byte shrinks
    towards 0 its choice passes through every smaller one, down to the lowest integer, False,
    the first option (a byte taken modulo the range stalls the shrinker on a large byte that
    gives a small-looking choice). Unused bytes are ignored.
    """
    return st.binary(min_size=size, max_size=size).map(Picks)


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
