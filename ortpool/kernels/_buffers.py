"""Per-thread buffers reused from call to call by the kernels, and the read-only view in which
the compiled loops take their inputs (one numba specialization per element type)."""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np


class _Workspace(threading.local):
    """Per-thread buffers reused from call to call: a fresh multi-megabyte buffer faults in every
    page (a 3.2 MB copy: 1.9 ms, 0.2 ms into reused memory). Outputs are reused only while
    :func:`reuse_outputs` is on (the onnxruntime hook, which copies the result at once)."""

    def __init__(self) -> None:
        self.buffers: dict[tuple, np.ndarray] = {}
        self.nbytes = 0
        self.reuse_outputs = False


_workspace = _Workspace()
#: Buffers kept per thread, and their bytes; beyond either the cache starts again.
MAX_BUFFERS = 64
MAX_BUFFER_BYTES = 256 << 20


def read_only(a: np.ndarray) -> np.ndarray:
    """``a`` C-contiguous (copied only when it is not) and read-only, as every compiled loop takes
    its inputs: numba compiles a loop again for a read-only array (docs/kernels.md)."""
    view = np.ascontiguousarray(a).view()
    view.setflags(write=False)
    return view


def scratch(shape: tuple[int, ...], dtype: np.dtype, slot: Any) -> np.ndarray:
    """An uninitialised buffer of this thread, the same one for the same (slot, shape, dtype)."""
    ws = _workspace
    key = (slot, shape, dtype)
    buf = ws.buffers.get(key)
    if buf is None:
        nbytes = math.prod(shape) * np.dtype(dtype).itemsize
        # The old buffers go first: the onnxruntime hook counts the held bytes as reusable.
        if len(ws.buffers) >= MAX_BUFFERS or ws.nbytes + nbytes > MAX_BUFFER_BYTES:
            ws.buffers, ws.nbytes = {}, 0
        buf = ws.buffers[key] = np.empty(shape, dtype)
        ws.nbytes += buf.nbytes
    return buf


def held_bytes() -> int:
    """Bytes of this thread's buffers: reused by its next call, or freed before it takes more."""
    return _workspace.nbytes


def output(shape: tuple[int, ...], dtype: np.dtype, slot: Any = 0) -> np.ndarray:
    """A result array: a reused buffer while :func:`reuse_outputs` is on, else a new one."""
    if _workspace.reuse_outputs:
        return scratch(shape, dtype, ("out", slot))
    return np.empty(shape, dtype)


def reuse_outputs(on: bool) -> bool:
    """Turn output reuse on or off for this thread; returns the previous setting."""
    previous, _workspace.reuse_outputs = _workspace.reuse_outputs, on
    return previous
