"""What every kernel call does before computing (checks, the attributes and geometry cached), and
the cache of planned calls, one runner per (operator, shape, dtype, attributes)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ortpool import versions
from ortpool.attributes import PoolAttrs, normalize
from ortpool.dtypes import NUMPY_SPELLING
from ortpool.errors import OrtpoolError
from ortpool.geometry import PoolGeometry, pool_geometry
from ortpool.versions import OpVersion


def dtype_name(dtype: np.dtype) -> str:
    """ONNX's name for a numpy dtype: float32 -> "float", float64 -> "double"."""
    return NUMPY_SPELLING.get(dtype.name, dtype.name)


def check_input(opv: OpVersion, x: np.ndarray) -> None:
    """X must be (N, C, D1, ...) of a type the version's schema lists."""
    if not isinstance(x, np.ndarray):
        raise OrtpoolError(f"input X must be a numpy array, got {type(x).__name__}")
    if dtype_name(x.dtype) not in opv.types:
        raise OrtpoolError(f"input X has element type {dtype_name(x.dtype)}; this version takes "
                           f"{', '.join(opv.types)}")
    if x.ndim < 3:
        raise OrtpoolError(f"input X has shape {list(x.shape)}; pooling needs (N, C, D1, ...) "
                           "with at least one spatial axis")


def _key(attributes: Mapping[str, Any]) -> tuple:
    """The attributes as a hashable key (TypeError when they are not), with their value types:
    1, 1.0 and True are equal keys, yet only the first is a valid int."""
    return tuple(
        (k, tuple(v), tuple(map(type, v))) if isinstance(v, list | tuple | np.ndarray)
        else (k, v, type(v)) for k, v in attributes.items()
    )


def attrs_for(op: str, version: int, attributes: Mapping[str, Any], rank: int) -> PoolAttrs:
    """Normalised attributes, cached: a session calls the same node with the same strings."""
    try:
        return _normalize_cached(op, version, _key(attributes), rank)
    except TypeError:  # unhashable attributes
        return normalize(versions.get(op, version), attributes, rank)


@functools.lru_cache(maxsize=512)
def _normalize_cached(op: str, version: int, key: tuple, rank: int) -> Any:
    return normalize(versions.get(op, version), {k: v for k, v, _ in key}, rank)


@functools.lru_cache(maxsize=512)
def geometry_for(spatial: tuple[int, ...], attrs: PoolAttrs) -> PoolGeometry:
    return pool_geometry(spatial, attrs)


@contextlib.contextmanager
def located(op: str, version: int) -> Iterator[None]:
    """An :class:`OrtpoolError` raised inside names ``op``-``version``."""
    try:
        yield
    except OrtpoolError as err:
        raise err.located(op=op, version=version) from None


def checked(op: str, version: int, x: np.ndarray, attributes: Mapping[str, Any]) -> Any:
    """The normalised attributes, X's type and rank checked; errors name the op version."""
    with located(op, version):
        check_input(versions.get(op, version), x)
        return attrs_for(op, version, attributes, x.ndim - 2)


def checked_window(
    op: str, version: int, x: np.ndarray, attributes: Mapping[str, Any]
) -> tuple[PoolAttrs, PoolGeometry]:
    """:func:`checked`, and the window geometry on X's spatial shape (window operators)."""
    with located(op, version):
        attrs = checked(op, version, x, attributes)
        return attrs, geometry_for(tuple(x.shape[2:]), attrs)


def lowest(dtype: np.dtype) -> Any:
    """The identity of max: -inf, or the integer type's minimum (ruling 5)."""
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


Runner = Callable[[np.ndarray], Any]

#: (tag, shape, dtype, attribute key) -> (runner, bytes its plan holds), bounded in entries and
#: bytes, the oldest going first (a new shape at every call keeps memory bounded).
_CALLS: dict[tuple, tuple[Runner, int]] = {}
_MAX_CALLS = 1024
MAX_HELD_BYTES = 64 << 20
#: What a cached entry costs besides its tables (plan object, key, closures), measured.
ENTRY_BYTES = 2048
_held = 0


def run(
    tag: tuple, x: Any, attributes: dict[str, Any], plan: Callable[..., tuple], *args: Any
) -> Any:
    """``x`` through its signature's runner: cached, else ``plan(x, attributes, *args)``'s."""
    key, runner = lookup(tag, x, attributes)
    if runner is None:
        runner = remember(key, *plan(x, attributes, *args))
    return runner(x)


def lookup(tag: tuple, x: Any, attributes: dict[str, Any]) -> tuple[tuple | None, Runner | None]:
    """(key, cached runner or None) of a call; key None when the call cannot be cached."""
    if type(x) is not np.ndarray:
        return None, None
    # A session's string attributes key the call as they are (the value types too: see _key).
    key = (tag, x.shape, x.dtype, tuple(attributes.items()), tuple(map(type, attributes.values())))
    try:
        return key, (_CALLS.get(key) or (None,))[0]
    except TypeError:  # list attributes (the numpy API)
        pass
    try:
        key = (tag, x.shape, x.dtype, _key(attributes))
        return key, (_CALLS.get(key) or (None,))[0]
    except TypeError:
        return None, None


def remember(key: tuple | None, runner: Runner, held: int = 0) -> Runner:
    """Cache ``runner`` under ``key`` (None: not cacheable); the oldest entries make room."""
    global _held
    if key is None:
        return runner
    cost = held + ENTRY_BYTES
    while _CALLS and (len(_CALLS) >= _MAX_CALLS or _held + cost > MAX_HELD_BYTES):
        _held -= _CALLS.pop(next(iter(_CALLS)))[1]
    _CALLS[key] = (runner, cost)
    _held += cost
    return runner


def forget() -> None:
    """Drop every cached runner (plans are rebuilt on the next call)."""
    global _held
    _CALLS.clear()
    _held = 0
