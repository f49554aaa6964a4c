"""What every kernel does before computing: version, type and shape checks, cached geometry."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ortpool import versions
from ortpool.attributes import PoolAttrs, normalize
from ortpool.dtypes import NUMPY_SPELLING
from ortpool.errors import OrtpoolError
from ortpool.geometry import PoolGeometry, pool_geometry
from ortpool.versions import CAST_TYPES, OpVersion


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


@functools.lru_cache(maxsize=512)
def _normalize_cached(
    op: str, version: int, items: tuple[tuple[str, Any], ...], rank: int, types: tuple = ()
):
    # ``types`` only keys the cache: 2, 2.0 and True are equal keys but not equally valid.
    return normalize(versions.get(op, version), dict(items), rank)


def _types(value: Any) -> Any:
    if isinstance(value, list | tuple | np.ndarray):
        return (type(value), *map(type, value))
    return type(value)


def _hashable(value: Any) -> Any:
    if isinstance(value, list | tuple | np.ndarray):
        return tuple(int(v) if isinstance(v, int | np.integer) else v for v in value)
    return value


def attrs_for(op: str, version: int, attributes: Mapping[str, Any], rank: int) -> PoolAttrs:
    """Normalised attributes, cached: a session calls the same node with the same strings."""
    try:
        items = tuple(sorted((k, _hashable(v)) for k, v in attributes.items()))
        hash(items)
    except TypeError:
        return normalize(versions.get(op, version), attributes, rank)
    types = tuple(sorted((k, _types(v)) for k, v in attributes.items()))
    return _normalize_cached(op, version, items, rank, types)


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
    """The first call of a signature: X's type and rank and the attributes checked against
    ``op``-``version``; the normalised attributes. Errors name the op version."""
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


def compute_dtype(dtype: np.dtype) -> np.dtype | None:
    """float16/bfloat16 are computed in float32 and rounded once (rulings 8, 10)."""
    return np.dtype(np.float32) if dtype_name(dtype) in CAST_TYPES else None


def lowest(dtype: np.dtype) -> Any:
    """The identity of max: -inf, or the integer type's minimum (ruling 5)."""
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min
