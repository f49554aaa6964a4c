"""Per-thread buffers reused from call to call by the kernels, and the read-only view in which
the compiled loops take their inputs (one numba specialization per element type)."""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np


class _Workspace(threading.local):
    """Per-thread buffers reused from call to call.

    Fresh memory is expensive: a new multi-megabyte buffer comes from mmap and every page
    faults on first touch (measured: a 3.2 MB copy inside a session took 1.9 ms that way,
    0.2 ms into reused memory). Intermediates never leave a kernel, so they are always reused;
    outputs are reused only while :func:`reuse_outputs` is on, which the onnxruntime hook turns
    on around a kernel call because onnxruntime-extensions copies the result before the next
    call on that thread.
    """

    def __init__(self) -> None:
        self.buffers: dict[tuple, np.ndarray] = {}
        self.nbytes = 0
        self.reuse_outputs = False


_workspace = _Workspace()
#: Buffers kept per thread, and their bytes; beyond either the cache starts again (shapes
#: change, memory is freed). The bytes bound matters when shapes keep changing on large inputs:
#: 64 buffers of a 100 MB call would otherwise stay alive.
MAX_BUFFERS = 64
MAX_BUFFER_BYTES = 256 << 20


def read_only(a: np.ndarray) -> np.ndarray:
    """``a`` C-contiguous (copied only when it is not) and read-only, as every compiled loop takes
    its inputs. numba types a read-only array apart from a writable one and compiles its loops
    again for the other: a caller's read-only input (``np.frombuffer``, a memory map) paid a
    12-18 s compile on its first call that ``ortpool warmup`` had not done. One kind for every
    call keeps one specialization per element type. The caller's array keeps its flags."""
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
        # The old buffers go before the new one is allocated: both at once could be more than
        # the process can hold (the onnxruntime hook counts the held bytes as reusable).
        if len(ws.buffers) >= MAX_BUFFERS or ws.nbytes + nbytes > MAX_BUFFER_BYTES:
            ws.buffers.clear()
            ws.nbytes = 0
        buf = np.empty(shape, dtype)
        ws.buffers[key] = buf
        ws.nbytes += buf.nbytes
    return buf


def held_bytes() -> int:
    """Bytes of this thread's buffers: reused by its next call, or freed before that call
    allocates new ones beyond :data:`MAX_BUFFER_BYTES`."""
    return _workspace.nbytes


def output(shape: tuple[int, ...], dtype: np.dtype, slot: Any = 0) -> np.ndarray:
    """A result array: a reused buffer while :func:`reuse_outputs` is on, else a new one."""
    if _workspace.reuse_outputs:
        return scratch(shape, dtype, ("out", slot))
    return np.empty(shape, dtype)


def reuse_outputs(on: bool) -> bool:
    """Turn output reuse on or off for this thread; returns the previous setting."""
    previous = _workspace.reuse_outputs
    _workspace.reuse_outputs = on
    return previous
