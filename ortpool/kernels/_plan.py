"""Execution plans: everything about a window pooling call that depends only on (shape, attributes).

A plan is built once per input shape, dtype and attributes (a session calls a node with the same
ones every time; :mod:`._calls` caches it) and holds what to compute: the separable passes of
:mod:`._passes` (every in-input tap, in one order), the divisor, the index offsets. Its loops come
from one of two back-ends, chosen here for every window kernel by the one dispatch
(:func:`ortpool.kernels._backend.loop`):

* numpy (:mod:`._numpy_plans`, :mod:`._numpy_loops`): in-place numpy calls per block of planes;
* compiled (:mod:`._numba_plans`, :mod:`._numba`): numba loops over the same taps in the same
  order, hence bit-identical results.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ortpool.geometry import PoolGeometry
from ortpool.kernels._backend import loop
from ortpool.kernels._calls import Runner
from ortpool.kernels._numba_plans import NumbaAveragePlan, NumbaMaxIndicesPlan, NumbaMaxValuesPlan
from ortpool.kernels._numpy_plans import AveragePlan, MaxIndicesPlan, MaxValuesPlan
from ortpool.kernels._passes import max_axis_order


def held_bytes(plan: Any) -> int:
    """Bytes of the arrays and tables a plan keeps (for the bound of :mod:`._calls`): its
    ndarrays, a plan inside it, and about 256 bytes per entry of a tuple, list or dict (a tap
    with its slices)."""
    total = 0
    for value in vars(plan).values():
        if isinstance(value, np.ndarray):
            total += value.nbytes
        elif isinstance(value, tuple | list | dict):
            total += 256 * len(value)
        elif isinstance(value, MaxValuesPlan | AveragePlan | MaxIndicesPlan):
            total += held_bytes(value)
    return total


def max_pool_runner(
    geom: PoolGeometry,
    shape: tuple[int, ...],
    dtype: np.dtype,
    wide: np.dtype | None,
    return_indices: bool,
    storage_order: int,
) -> tuple[Runner, int]:
    """(x -> Y, or x -> (Y, Indices); the bytes its plan holds); ``wide`` is the compute dtype
    of float16/bfloat16."""
    work_dtype = wide if wide is not None else dtype
    order = max_axis_order(geom)
    nbytes = math.prod(shape) * work_dtype.itemsize
    if return_indices:
        # The compiled window loop is written for ranks 1-3 (seen as rank 3).
        kernel = loop("max_indices", work_dtype, nbytes) if len(geom.axes) <= 3 else None
        if kernel is not None:
            plan: Any = NumbaMaxIndicesPlan(kernel, geom, shape, work_dtype, storage_order)
        else:
            plan = MaxIndicesPlan(geom, shape, work_dtype, storage_order, order)
        if wide is None:
            return plan.run, held_bytes(plan)

        def run_wide_indices(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            y, indices = plan.run(x.astype(wide))
            return y.astype(dtype), indices

        return run_wide_indices, held_bytes(plan)
    kernel = loop("max_planes", work_dtype, nbytes)
    if kernel is not None:
        values: Any = NumbaMaxValuesPlan(kernel, geom, shape, work_dtype, order)
    else:
        values = MaxValuesPlan(geom, shape, work_dtype, order)
    if wide is None:
        return values.values, held_bytes(values)
    return lambda x: values.values(x.astype(wide)).astype(dtype), held_bytes(values)


def average_pool_runner(
    geom: PoolGeometry, shape: tuple[int, ...], dtype: np.dtype, acc: np.dtype, divisor: np.ndarray
) -> tuple[Runner, int]:
    """(x -> Y; the bytes its plan holds)."""
    kernel = loop("average_planes", acc, math.prod(shape) * acc.itemsize)
    if kernel is not None:
        plan: Any = NumbaAveragePlan(kernel, geom, shape, acc, divisor)
    else:
        plan = AveragePlan(geom, shape, acc, divisor)
    if dtype == acc:
        return plan.average, held_bytes(plan)
    return lambda x: plan.average(x).astype(dtype), held_bytes(plan)
