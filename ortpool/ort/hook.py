"""The invocation hook onnxruntime-extensions calls for every Python op, ours and others'.

It replaces the stock hook for two reasons. Speed: the stock one converts every result with
``.flatten().tolist()`` (about 80 ms for 3 MB); handing back a C-contiguous ndarray of the declared
dtype costs under 0.5 ms. Survival: an exception that escapes the hook calls std::terminate, so
every failure is trapped here, recorded (:mod:`ortpool.ort.failures`), and answered with a
placeholder of the shape the node would have produced, filled with NaN (or -1 in integer types);
:class:`ortpool.InferenceSession` raises the recorded error after the run.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from onnxruntime_extensions import PyCustomOpDef, _ocos

from ortpool.kernels import _buffers
from ortpool.ort import failures
from ortpool.ort.failures import OpFailure

log = logging.getLogger("ortpool")

#: numpy dtype of each onnxruntime-extensions type code that a placeholder may need.
DT_NUMPY: dict[int, np.dtype] = {
    PyCustomOpDef.dt_float: np.dtype(np.float32),
    PyCustomOpDef.dt_double: np.dtype(np.float64),
    PyCustomOpDef.dt_int8: np.dtype(np.int8),
    PyCustomOpDef.dt_uint8: np.dtype(np.uint8),
    PyCustomOpDef.dt_int16: np.dtype(np.int16),
    PyCustomOpDef.dt_uint16: np.dtype(np.uint16),
    PyCustomOpDef.dt_int32: np.dtype(np.int32),
    PyCustomOpDef.dt_uint32: np.dtype(np.uint32),
    PyCustomOpDef.dt_int64: np.dtype(np.int64),
    PyCustomOpDef.dt_uint64: np.dtype(np.uint64),
    PyCustomOpDef.dt_bool: np.dtype(np.bool_),
}


Body = Callable[[Sequence[np.ndarray], dict[str, Any]], tuple[np.ndarray, ...]]
#: (inputs, attributes) -> the shape of the outputs; raises when there is none.
Shape = Callable[[Sequence[np.ndarray], dict[str, Any]], tuple[int, ...]]
#: kernel id -> (op type name, kernel body, declared output dtypes, output shape) for ortpool's
#: own ops. Kept on the onnxruntime-extensions module, like the registrations it mirrors, so that
#: a reload of ortpool does not orphan kernels registered before it.
OURS: dict[int, tuple[str, Body, tuple[np.dtype, ...], Shape]] = _ocos.__dict__.setdefault(
    "_ortpool_kernels", {}
)
#: A placeholder larger than this is left empty: its shape came from a call that failed, maybe
#: for its size.
MAX_PLACEHOLDER_BYTES = 1 << 30

_local = threading.local()


def take_failures() -> list[OpFailure]:
    """The failures recorded on this thread and not yet claimed, oldest first; clears them."""
    return failures.take_thread()


def _record(name: str, attributes: dict[str, Any], feed: Sequence[Any], err: BaseException):
    shapes = [tuple(getattr(x, "shape", ())) for x in feed]
    failures.record(name, attributes, shapes, err)
    return shapes


def poisoned(shape: tuple[int, ...] | None, dtype: np.dtype, rank: int) -> np.ndarray:
    """A failed op's output: NaN (floats) or -1 (integers; 255 in uint8) in the shape the node
    would have produced, so it fits an output onnxruntime allocated ahead and shows downstream;
    empty when that shape is unknown."""
    if shape is None or np.prod(shape, dtype=np.float64) * dtype.itemsize > MAX_PLACEHOLDER_BYTES:
        return np.zeros((0,) * max(rank, 1), dtype)
    fill = np.nan if dtype.kind in "fc" else -1
    return np.full(shape, np.array(fill).astype(dtype), dtype)


def _as_result(k_id: int, arrays: Sequence[Any]) -> tuple:
    res: list[Any] = [k_id]
    for array in arrays:
        res.append(array.shape)
        res.append(array)
    return tuple(res)


def set_prepared_outputs(outputs: Sequence[np.ndarray] | None) -> None:
    """Benchmark only: ortpool ops called on this thread return ``outputs`` and run no kernel,
    until called with None. ``ortpool bench`` times its marshalling floor this way: the same
    session, op and hook, without the kernel (onnxruntime runs a single-node model's op on the
    thread that calls ``run``)."""
    _local.prepared = None if outputs is None else tuple(outputs)


def _invoke_ours(k_id: int, feed: Sequence[np.ndarray], attributes: dict[str, Any]) -> tuple:
    name, body, out_dtypes, out_shape = OURS[k_id]
    prepared = getattr(_local, "prepared", None)
    if prepared is not None:
        return _as_result(k_id, prepared)
    # onnxruntime-extensions copies each result before this thread runs another op, so the
    # kernels may hand back buffers they reuse on the next call (no fresh pages to fault in).
    previous = _buffers.reuse_outputs(True)
    try:
        try:
            outputs = body(feed, attributes)
        finally:
            _buffers.reuse_outputs(previous)
        checked = []
        for array, dtype in zip(outputs, out_dtypes, strict=True):
            checked.append(np.ascontiguousarray(array, dtype=dtype))
        return _as_result(k_id, checked)
    except BaseException as err:
        shapes = _record(name, attributes, feed, err)
        try:
            shape: tuple[int, ...] | None = out_shape(feed, attributes)
        except BaseException:
            shape = None
        rank = len(shapes[0]) if shapes else 1
        return _as_result(k_id, [poisoned(shape, dt, rank) for dt in out_dtypes])


def _invoke_foreign(k_id: int, feed: Sequence[Any], attributes: dict[str, Any]) -> tuple:
    """Other packages' Python ops: the stock behaviour, minus the .tolist() on numeric results."""
    opdef = _ocos.Opdef._odlist[k_id]
    try:
        result = opdef.body(*feed, **opdef.cast_attributes(attributes))
        outputs = result if isinstance(result, tuple) else (result,)
        res: list[Any] = [k_id]
        for out in outputs:
            array = np.asarray(out)
            res.append(array.shape)
            if array.dtype.kind in "OUS":
                res.append(array.flatten().tolist())
            else:
                res.append(np.ascontiguousarray(array))
        return tuple(res)
    except BaseException as err:
        _record(opdef.op_type, attributes, feed, err)
        types = list(opdef._nativedef.output_types)
        placeholders = []
        for code in types:
            if code == PyCustomOpDef.dt_string:
                placeholders.append(np.zeros((0,), object))
            else:
                placeholders.append(poisoned(None, DT_NUMPY.get(code, np.dtype(np.float32)), 1))
        res = [k_id]
        for p in placeholders:
            res.append(p.shape)
            res.append(p.tolist() if p.dtype == object else p)
        return tuple(res)


def invoke(k_id: int, feed: Sequence[Any], attributes: dict[str, Any]) -> tuple:
    """The hook itself; must never raise."""
    try:
        if k_id in OURS:
            return _invoke_ours(k_id, feed, attributes)
        return _invoke_foreign(k_id, feed, attributes)
    except BaseException as err:
        log.critical("ortpool hook failed for kernel %s: %s", k_id, err)
        return (k_id, (0,), np.zeros((0,), np.float32))


def install() -> None:
    PyCustomOpDef.install_hooker(invoke)
