"""Compile the numba kernels ahead of time, so that no ``session.run`` pays for it.

The first call of each compiled kernel and element type compiles it (about 8-10 s each on a
2-core machine) and stores the machine code in numba's on-disk cache; every later process loads
it in milliseconds. :func:`warm_up` makes those first calls on tiny inputs, e.g. in a container
build step (``ortpool warmup``), so that a fresh installation serves its first request at speed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import numpy as np

from ortpool.errors import OrtpoolError
from ortpool.kernels import _backend
from ortpool.kernels.avgpool import average_pool
from ortpool.kernels.globalpool import global_average_pool, global_lp_pool
from ortpool.kernels.lppool import lp_pool
from ortpool.kernels.maxpool import max_pool
from ortpool.kernels.maxunpool import max_unpool
from ortpool.kernels.roipool import max_roi_pool

#: The element types ortpool's ops take from onnxruntime (float16/bfloat16 arrive as float32).
DTYPES = ("float32", "float64", "int8", "uint8")
_ATTRS = {"kernel_shape": [2, 2], "strides": [2, 2]}


def _calls(dtype: np.dtype) -> list[tuple[str, Callable[[], object]]]:
    x = (np.arange(16) % 7).astype(dtype).reshape(1, 1, 4, 4)
    calls: list[tuple[str, Callable[[], object]]] = []
    if dtype.kind == "f":
        # AveragePool first: float32's LpPool runs the float64 AveragePool loops, so processes
        # warming float32 and float64 side by side (the test suite's two) compile them once
        # when the float64 one has them cached before the float32 one reaches LpPool (14 s of
        # CPU when the two met at the same moment).
        calls.append(("AveragePool", lambda: average_pool(x, version=11, **_ATTRS)))
    calls += [
        ("MaxPool", lambda: max_pool(x, version=12, **_ATTRS)),
        ("MaxPool with Indices", lambda: max_pool(x, version=12, return_indices=True, **_ATTRS)),
    ]
    if dtype.kind == "f":
        rois = np.array([[0, 0, 0, 3, 3]], dtype)
        calls += [
            ("MaxUnpool", lambda: max_unpool(*max_pool(x, version=12, return_indices=True,
                                                       **_ATTRS), version=11, **_ATTRS)),
            # LpPool's window sums are AveragePool's float64 passes, whatever X's type.
            ("LpPool", lambda: lp_pool(x, version=18, **_ATTRS)),
            # One loop serves GlobalAveragePool and GlobalLpPool (GlobalMaxPool needs none).
            ("GlobalAveragePool/GlobalLpPool", lambda: (global_average_pool(x),
                                                        global_lp_pool(x))),
            ("MaxRoiPool", lambda: max_roi_pool(x, rois, pooled_shape=[2, 2])),
        ]
    return calls


def warm_up(dtypes: Iterable[str] = DTYPES) -> list[tuple[str, str, float]]:
    """Compile (or load from the cache) every kernel for ``dtypes``; returns (kernel, dtype,
    seconds) per call. Nothing to do, and an empty list, when the numpy kernels are in use."""
    if _backend.backend() != "numba":
        return []
    chosen = []
    for name in dtypes:
        try:
            dtype = np.dtype(name)
        except TypeError:
            raise OrtpoolError(f"dtype {name!r} is not a numpy element type") from None
        if dtype not in _backend.NUMBA_DTYPES:
            raise OrtpoolError(f"dtype {name!r}: the compiled kernels take {', '.join(DTYPES)}")
        chosen.append(dtype)
    # The calls are tiny, which the default mode would leave to numpy: compile them anyway.
    mode = _backend.mode()
    _backend.set_backend("numba")
    done = []
    try:
        for dtype in chosen:
            for kernel, call in _calls(dtype):
                start = time.perf_counter()
                call()
                done.append((kernel, dtype.name, time.perf_counter() - start))
    finally:
        _backend.set_backend(mode)
    return done
