"""Compile the numba kernels ahead of time (``ortpool warmup``): :func:`warm_up` makes each
kernel's first call on a tiny input, which fills numba's on-disk cache."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import numpy as np

from ortpool import dtypes as element_types
from ortpool.errors import OrtpoolError
from ortpool.kernels import _backend, _compile_note
from ortpool.kernels._plan import average_pool, lp_pool, max_pool
from ortpool.kernels.globalpool import global_average_pool, global_lp_pool
from ortpool.kernels.maxunpool import max_unpool
from ortpool.kernels.roipool import max_roi_pool
from ortpool.versions import CARRIED_TYPES

#: The element types ortpool's ops take from onnxruntime.
DTYPES = CARRIED_TYPES
#: The compiled kernels as the warm-up names them, in its order: AveragePool first, as float32's
#: LpPool runs the float64 AveragePool loops (parallel warm-ups then compile them once).
KERNELS = ("AveragePool", "MaxPool", "MaxPool with Indices", "MaxUnpool", "LpPool",
           "GlobalAveragePool/GlobalLpPool", "MaxRoiPool")
_ATTRS = {"kernel_shape": [2, 2], "strides": [2, 2]}


def _calls(dtype: np.dtype) -> dict[str, Callable[[], object]]:
    """Each kernel's warm-up call for ``dtype``, compiling no other kernel on the way."""
    x = (np.arange(16) % 7).astype(dtype).reshape(1, 1, 4, 4)
    calls: dict[str, Callable[[], object]] = {
        "MaxPool": lambda: max_pool(x, version=12, **_ATTRS),
        "MaxPool with Indices": lambda: max_pool(x, version=12, return_indices=True, **_ATTRS),
    }
    if dtype.kind != "f":
        return calls
    # MaxPool's Y and Indices of ``x`` written out: computing them would compile that kernel.
    y = np.array([5, 6, 6, 4], dtype).reshape(1, 1, 2, 2)
    indices = np.array([5, 6, 13, 11], np.int64).reshape(1, 1, 2, 2)
    rois = np.array([[0, 0, 0, 3, 3]], dtype)
    calls.update({
        "AveragePool": lambda: average_pool(x, version=11, **_ATTRS),
        "MaxUnpool": lambda: max_unpool(y, indices, version=11, **_ATTRS),
        # LpPool's window sums are AveragePool's float64 passes, whatever X's type.
        "LpPool": lambda: lp_pool(x, version=18, **_ATTRS),
        # One loop serves GlobalAveragePool and GlobalLpPool (GlobalMaxPool needs none).
        "GlobalAveragePool/GlobalLpPool": lambda: (global_average_pool(x), global_lp_pool(x)),
        "MaxRoiPool": lambda: max_roi_pool(x, rois, pooled_shape=[2, 2]),
    })
    return calls


def planned(dtypes: Iterable[str], kernels: Iterable[str]) -> list[tuple[str, str]]:
    """The (kernel, ONNX type name) pairs :func:`warm_up` compiles, in its order."""
    names = []
    for name in _listed(dtypes):
        onnx_name = element_types.canonical(name)
        if element_types.NUMPY[onnx_name] not in _backend.NUMBA_DTYPES:
            raise OrtpoolError(f"element type {name!r}: the compiled kernels take "
                               f"{', '.join(DTYPES)}")
        names.append(onnx_name)
    wanted = set(_listed(kernels))
    unknown = sorted(wanted - set(KERNELS))
    if unknown:
        raise OrtpoolError(f"kernel {unknown[0]!r} is not one of the compiled kernels: "
                           f"{', '.join(KERNELS)}")
    if not names or not wanted:
        raise OrtpoolError("name at least one element type and one kernel to compile")
    return [(kernel, name) for name in names for kernel in KERNELS
            if kernel in wanted and kernel in _calls(element_types.NUMPY[name])]


def _listed(names: Iterable[str]) -> list[str]:
    """One name given as a string is that name, not its letters."""
    return [names] if isinstance(names, str) else list(names)


def warm_up(
    dtypes: Iterable[str] = DTYPES, kernels: Iterable[str] = KERNELS,
    on_done: Callable[[str, str, float], None] | None = None,
) -> list[tuple[str, str, float]]:
    """Compile (or load from the cache) ``kernels`` for ``dtypes``; (kernel, ONNX type name,
    seconds) per call, each also given to ``on_done``; [] when the numpy kernels are in use."""
    todo = planned(dtypes, kernels)
    if _backend.backend() != "numba":
        return []
    # The calls are tiny, which the default mode would leave to numpy: compile them anyway.
    mode = _backend.mode()
    _backend.set_backend("numba")
    done = []
    try:
        # the compile note would tell the user to run the warm-up while it runs
        with _compile_note.warming_up():
            for kernel, name in todo:
                start = time.perf_counter()
                _calls(element_types.NUMPY[name])[kernel]()
                done.append((kernel, name, time.perf_counter() - start))
                if on_done is not None:
                    on_done(*done[-1])
    finally:
        _backend.set_backend(mode)
    return done
