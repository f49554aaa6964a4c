"""MaxPool, AveragePool and LpPool, every spec version, and their plans, built once per (shape,
dtype, attributes): one per kernel product, whose loop is numpy's (:mod:`._numpy_plans`) or
compiled (:mod:`._numba_plans`) as :func:`._backend.loop` chose: the same taps in the same order.
LpPool (ruling 12) is AveragePool's sums with a divisor of 1, over ``|x|^p`` in float64 whatever
X's type (no overflow, no digit lost), rounded to X's type once."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ortpool import versions
from ortpool.errors import OrtpoolError
from ortpool.geometry import PoolGeometry, index_multipliers
from ortpool.kernels import _calls, _limits, _numba_plans, _numpy_plans
from ortpool.kernels._backend import loop
from ortpool.kernels._buffers import output, read_only
from ortpool.kernels._calls import Runner
from ortpool.kernels._passes import max_axis_order
from ortpool.kernels.globalpool import lp_root, lp_terms
from ortpool.versions import CAST_TYPES


class Separable:
    """A separable reduction: every output combines its window's in-input taps axis by axis (the
    axes in ``order``) with :attr:`ufunc`, then is divided by :attr:`divisor` (None: none)."""

    ufunc: np.ufunc
    divisor: np.ndarray | None = None
    #: Whether the loop casts X to ``dtype`` (AveragePool's half types; MaxPool's runner casts).
    cast = False
    #: What the compiled loop takes after the passes.
    operands: tuple

    def __init__(
        self, geom: PoolGeometry, shape: tuple[int, ...], dtype: np.dtype, ident: Any,
        order: list[int], kernel: Callable | None,
    ):
        self.planes = shape[0] * shape[1]
        self.in_plane = math.prod(shape[2:])
        self.out_plane = math.prod(geom.output_spatial)
        self.out_shape = (shape[0], shape[1], *geom.output_spatial)
        self.dtype = dtype
        self.nbytes = math.prod(shape) * dtype.itemsize
        #: An empty window's value, in ``dtype`` (int8/uint8 run as float32 keep their own).
        self.ident = dtype.type(ident)
        self.loop = self._loop(geom, order, kernel)

    def _loop(self, geom: PoolGeometry, order: list[int], kernel: Callable | None) -> Any:
        return (_numpy_plans.Passes(self, geom, order) if kernel is None
                else _numba_plans.Passes(kernel, self, geom, order))

    def run(self, x: np.ndarray) -> np.ndarray:
        """Y for ``x`` of the planned shape and dtype."""
        y = output(self.out_shape, self.dtype)
        if y.size:
            self.loop.run(self, x, y)
        return y


class MaxValues(Separable):
    """Y of MaxPool: the axes reduced in :func:`max_axis_order`."""

    ufunc = np.maximum

    def __init__(
        self, geom: PoolGeometry, shape: tuple[int, ...], dtype: np.dtype, ident: Any,
        kernel: Callable | None = None,
    ):
        super().__init__(geom, shape, dtype, ident, max_axis_order(geom), kernel)
        self.operands = (self.ident,)


class Average(Separable):
    """Y of AveragePool: separable sums over the axes in order, then one division per output."""

    ufunc = np.add

    def __init__(
        self, geom: PoolGeometry, shape: tuple[int, ...], dtype: np.dtype, acc: np.dtype,
        divisor: np.ndarray, kernel: Callable | None = None,
    ):
        super().__init__(geom, shape, acc, 0, list(range(len(geom.axes))), kernel)
        self.cast = dtype != acc
        # Read-only as every input of a compiled loop (else the float64 loops compile twice).
        self.divisor = read_only(np.broadcast_to(divisor, geom.output_spatial).astype(acc))
        self.operands = (self.divisor.reshape(-1), self.ident)


class MaxIndices(MaxValues):
    """Y and Indices of MaxPool: each output's winner is the first tap in row-major order whose
    value equals Y or is NaN (rulings 6, 7); -1 for a window that holds no input."""

    def __init__(
        self, geom: PoolGeometry, shape: tuple[int, ...], dtype: np.dtype, ident: Any,
        storage_order: int, kernel: Callable | None = None,
    ):
        self.mult = index_multipliers(tuple(shape[2:]), storage_order)
        super().__init__(geom, shape, dtype, ident, kernel)

    def _loop(self, geom: PoolGeometry, order: list[int], kernel: Callable | None) -> Any:
        return (_numpy_plans.Indices(self, geom, order) if kernel is None
                else _numba_plans.Windows(kernel, self, geom))

    def run(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[override]
        y = output(self.out_shape, self.dtype, 0)
        indices = output(self.out_shape, np.dtype(np.int64), 1)
        if y.size:
            self.loop.run(self, x, y, indices)
        return y, indices


def held_bytes(obj: Any) -> int:
    """Bytes a plan and its loop keep: their ndarrays, about 256 per tuple, list or dict entry."""
    total = 0
    for value in vars(obj).values():
        if isinstance(value, np.ndarray):
            total += value.nbytes
        elif isinstance(value, tuple | list | dict):
            total += 256 * len(value)
    loop = getattr(obj, "loop", None)
    return total + (held_bytes(loop) if loop is not None else 0)


#: int8 and uint8 take the float32 compiled loops (exact: the same max, ties and Indices), so numba
#: compiles the max loops for two element types, not four.
_COMPILED_AS = {np.dtype(np.int8): np.dtype(np.float32), np.dtype(np.uint8): np.dtype(np.float32)}


def max_pool(
    x: np.ndarray, *, version: int = 22, return_indices: bool = False, **attributes: Any
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """MaxPool of spec version ``version`` on ``x`` (N, C, D1, ...); ``attributes`` are the
    spec's, as lists or in the ortpool string encoding (``"3,3"``); an attribute the version lacks
    is an error. With ``return_indices`` the result is ``(Y, Indices)`` (Indices as in ruling 7).
    """
    tag = ("MaxPool", version, return_indices)
    return _calls.run(tag, x, attributes, _max_pool_runner, version, return_indices)


def _max_pool_runner(
    x: np.ndarray, attributes: dict[str, Any], version: int, indices: bool
) -> tuple[Runner, int]:
    """(x -> Y, or x -> (Y, Indices); the bytes its plan holds), X and the attributes checked."""
    opv, dtype = versions.get("MaxPool", version), x.dtype
    with _calls.located("MaxPool", version):
        _calls.check_input(opv, x)
        if indices and opv.max_outputs < 2:
            raise OrtpoolError("this version has no Indices output")
        attrs = _calls.attrs_for("MaxPool", version, attributes, x.ndim - 2)
        geom = _calls.geometry_for(tuple(x.shape[2:]), attrs)
        # float16/bfloat16 are computed in float32 and rounded once (rulings 8, 10).
        work_dtype = np.dtype(np.float32) if _calls.dtype_name(dtype) in CAST_TYPES else dtype
        _limits.check_pool(geom, x.shape, dtype, work_dtype, max_axis_order(geom), indices)
    compiled_as = _COMPILED_AS.get(work_dtype, work_dtype)
    nbytes = math.prod(x.shape) * work_dtype.itemsize
    if not indices:
        kernel = loop("max_planes", compiled_as, nbytes)
    else:  # the compiled window loop is written for ranks 1-3 (seen as rank 3)
        kernel = loop("max_indices", compiled_as, nbytes) if len(geom.axes) <= 3 else None
    args = (geom, tuple(x.shape), compiled_as if kernel else work_dtype, _calls.lowest(work_dtype))
    plan = MaxIndices(*args, attrs.storage_order, kernel) if indices else MaxValues(*args, kernel)
    if plan.dtype == dtype:
        return plan.run, held_bytes(plan)

    def run_converted(x: np.ndarray) -> Any:
        out = plan.run(x.astype(plan.dtype))
        return (out[0].astype(dtype), out[1]) if indices else out.astype(dtype)

    return run_converted, held_bytes(plan)


def window_max(x: np.ndarray, geom: PoolGeometry) -> np.ndarray:
    """MaxPool's Y on ``x`` for a resolved :class:`~ortpool.geometry.PoolGeometry`."""
    if x.ndim != 2 + len(geom.axes) or tuple(x.shape[2:]) != tuple(g.n for g in geom.axes):
        raise OrtpoolError(f"input X has shape {list(x.shape)}; the geometry is for spatial shape "
                           f"{[g.n for g in geom.axes]}")
    plan = MaxValues(geom, tuple(x.shape), x.dtype, _calls.lowest(x.dtype))
    return plan.run(np.ascontiguousarray(x))


def average_pool(x: np.ndarray, *, version: int = 22, **attributes: Any) -> np.ndarray:
    """AveragePool of spec version ``version`` on ``x`` (N, C, D1, ...); the divisor follows
    ruling 8: taps inside the input, or with ``count_include_pad`` taps inside the padded input;
    a window with no input element is NaN (0/0) or 0 respectively."""
    return _calls.run(("AveragePool", version), x, attributes, _average_planned, version)


def _average_planned(x: np.ndarray, attributes: dict[str, Any], version: int) -> tuple:
    attrs, geom = _calls.checked_window("AveragePool", version, x, attributes)
    # float16/bfloat16 accumulate in float32 and are rounded once (ruling 8).
    acc = np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)
    with _calls.located("AveragePool", version):
        _limits.check_pool(geom, x.shape, x.dtype, acc, range(len(geom.axes)))
    div = divisor(geom, bool(attrs.count_include_pad), acc)
    return average_pool_runner(geom, tuple(x.shape), x.dtype, acc, div)


def average_pool_runner(
    geom: PoolGeometry, shape: tuple[int, ...], dtype: np.dtype, acc: np.dtype, divisor: np.ndarray
) -> tuple[Runner, int]:
    """(x -> Y; the bytes its plan holds)."""
    kernel = loop("average_planes", acc, math.prod(shape) * acc.itemsize)
    plan = Average(geom, shape, dtype, acc, divisor, kernel)
    if dtype == acc:
        return plan.run, held_bytes(plan)
    return lambda x: plan.run(x).astype(dtype), held_bytes(plan)


def divisor(geom: PoolGeometry, include_pad: bool, dtype: np.dtype) -> np.ndarray:
    """The per-output divisor: the outer product of the per-axis counts (validity is per axis)."""
    rank, div = len(geom.axes), np.ones((), dtype)
    for a, g in enumerate(geom.axes):
        div = div * g.counts(include_pad, dtype).reshape((-1,) + (1,) * (rank - 1 - a))
    div.setflags(write=False)
    return div


_F64 = np.dtype(np.float64)
#: The divisor of a sum: AveragePool's division by it is exact.
_ONE = np.ones((), np.float64)
_ONE.setflags(write=False)


def lp_pool(x: np.ndarray, *, version: int = 22, **attributes: Any) -> np.ndarray:
    """LpPool of spec version ``version`` on ``x`` (N, C, D1, ...): ``(sum of |x|^p)^(1/p)`` per
    window, 0 for an empty one; ``p`` is a float at version 1, an int from version 2."""
    return _calls.run(("LpPool", version), x, attributes, _lp_planned, version)


def _lp_planned(x: np.ndarray, attributes: dict[str, Any], version: int) -> tuple:
    attrs, geom = _calls.checked_window("LpPool", version, x, attributes)
    with _calls.located("LpPool", version):
        # the terms |x|^p are a float64 copy of X; the sums run in float64
        _limits.check_array("the terms |x|^p", x.shape, _F64)
        _limits.check_pool(geom, x.shape, x.dtype, _F64, range(len(geom.axes)))
    sums, held = average_pool_runner(geom, tuple(x.shape), _F64, _F64, _ONE)
    p, dtype = attrs.p, x.dtype

    def run(x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", over="ignore"):
            return lp_root(sums(lp_terms(x, p)), p).astype(dtype)

    return run, held
