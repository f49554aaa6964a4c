"""The invocation hook onnxruntime-extensions calls for every Python op, ours and others'.

It replaces the stock one for speed (``.flatten().tolist()`` of every result: 80 ms for 3 MB) and
survival: an exception escaping the hook, a result onnxruntime-extensions cannot read and an
output onnxruntime cannot allocate all call std::terminate. So an ortpool kernel's outputs are
checked against the memory left, twice over (onnxruntime copies each), and every failure is
recorded (:mod:`ortpool.ort.failures`) and answered with placeholders (:func:`placeholders`),
raised after the run by :class:`ortpool.InferenceSession`. The failure path cannot raise.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import operator
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ortpool.kernels import (
    MEMORY_CHECK_BYTES,
    check_memory,
    held_output_bytes,
    output_limit,
    reuse_outputs,
)
from ortpool.ort import failures
from ortpool.ort._extensions import PyCustomOpDef, _ocos

log = logging.getLogger("ortpool")

#: numpy dtype of each onnxruntime-extensions type code (a placeholder's element size must be the
#: declared one, or onnxruntime-extensions throws).
DT_NUMPY: dict[int, np.dtype] = {
    getattr(PyCustomOpDef, f"dt_{name}"): np.dtype({"float": "float32", "double": "float64"}.get(
        name, name))
    for name in ("float", "double", "float16", "int8", "uint8", "int16", "uint16", "int32",
                 "uint32", "int64", "uint64", "bool", "complex64", "complex128")}
#: One empty array per dtype, made at import: the last answer of a failure needs no allocation.
_EMPTY: dict[np.dtype, np.ndarray] = {dt: np.zeros((0,), dt) for dt in DT_NUMPY.values()}
_EMPTY_STRINGS: list[str] = []


Body = Callable[[Sequence[np.ndarray], dict[str, Any]], tuple[np.ndarray, ...]]
#: (inputs, attributes) -> the shape of the outputs; raises when there is none.
Shape = Callable[[Sequence[np.ndarray], dict[str, Any]], tuple[int, ...]]
#: kernel id -> (op type name, body, output dtypes, output shape) of ortpool's ops, kept on the
#: onnxruntime-extensions module like its registrations: a reload of ortpool orphans none.
OURS: dict[int, tuple[str, Body, tuple[np.dtype, ...], Shape]] = _ocos.__dict__.setdefault(
    "_ortpool_kernels", {}
)
#: A placeholder larger than this is left empty (the call may have failed for its size).
MAX_PLACEHOLDER_BYTES = 1 << 30
#: Address space onnxruntime takes beside the arena region when it copies an output: measured
#: under a 2 GiB RLIMIT_AS, a 676 MB copy (a 1 GiB region) aborted with 14 MB more left, a 655 MB
#: copy went through with 35 MB more.
ARENA_SLACK = 64 << 20


def _arena_bytes(nbytes: int) -> int:
    """Address space onnxruntime may reserve to copy an output of ``nbytes`` (BFCArena::Extend:
    the next power of two, or its region size falling back by steps of 0.9), plus
    :data:`ARENA_SLACK`; pages it does not write cost no memory."""
    return max(-(-nbytes * 10 // 9), 1 << max(nbytes - 1, 0).bit_length()) + ARENA_SLACK


_local = threading.local()


def poisoned(shape: Sequence[int] | None, dtype: np.dtype, rank: int) -> np.ndarray:
    """A failed op's output: NaN (floats) or -1 (integers) in the shape the node would have
    produced (it fits an output allocated ahead, and shows downstream); empty, of rank ``rank``,
    when that shape is unknown, invalid or too large. Never raises."""
    dims = _placeable(shape, dtype)
    if dims is not None:
        with contextlib.suppress(Exception):  # MemoryError; numpy refusing the shape
            return np.full(dims, np.array(np.nan if dtype.kind in "fc" else -1).astype(dtype))
    return empty(dtype, rank)


def _placeable(shape: Sequence[int] | None, dtype: np.dtype) -> tuple[int, ...] | None:
    """``shape`` as ints when numpy can make it within MAX_PLACEHOLDER_BYTES (counted with every
    dim at least 1: numpy refuses [0, 1, 2000000003, 2000000003] as too big)."""
    try:
        dims = tuple(int(d) for d in shape) if shape is not None else None
        if dims is None or not 0 < len(dims) <= 32 or min(dims) < 0:
            return None
        if math.prod(max(d, 1) for d in dims) * dtype.itemsize > MAX_PLACEHOLDER_BYTES:
            return None
        return dims
    except Exception:  # not a sequence of integers
        return None


def empty(dtype: np.dtype, rank: int = 1) -> np.ndarray:
    """An empty array of ``dtype`` and rank ``rank`` (1 to 32); never raises."""
    try:
        return np.zeros((0,) * min(max(int(rank), 1), 32), dtype)
    except Exception:
        return _EMPTY.get(dtype, _EMPTY[np.dtype(np.float32)])


def placeholders(shape: Sequence[int] | None, dtypes: Sequence[np.dtype],
                 rank: int) -> list[np.ndarray]:
    """One placeholder per output (:func:`poisoned`); all empty when they would not fit the
    memory twice over (onnxruntime aborts when it cannot allocate its copy). Never raises."""
    dims = [_placeable(shape, dt) for dt in dtypes]
    try:
        pairs = zip(dims, dtypes, strict=True)
        nbytes = sum(math.prod(d) * dt.itemsize for d, dt in pairs if d is not None)
        check_memory("the placeholders", 2 * nbytes, nbytes + _arena_bytes(nbytes))
    except Exception:
        return [empty(dt, rank) for dt in dtypes]
    return [poisoned(d, dt, rank) for d, dt in zip(dims, dtypes, strict=True)]


def _as_result(k_id: int, arrays: Sequence[Any]) -> tuple:
    return (k_id, *itertools.chain.from_iterable((array.shape, array) for array in arrays))


def set_prepared_outputs(outputs: Sequence[np.ndarray] | None) -> None:
    """Benchmark only: ortpool ops called on this thread return ``outputs`` and run no kernel
    until called with None (``ortpool bench`` times the marshalling floor so)."""
    _local.prepared = None if outputs is None else tuple(outputs)


def _invoke_ours(k_id: int, feed: Sequence[np.ndarray], attributes: dict[str, Any]) -> tuple:
    name, body, out_dtypes, out_shape = OURS[k_id]
    prepared = getattr(_local, "prepared", None)
    if prepared is not None:
        return _as_result(k_id, prepared)
    shape = _output_shape(out_shape, feed, attributes)
    try:
        # unknown shapes are checked after the kernel ran, known ones of 32 MB or more twice
        large = shape is None or _check_memory(shape, out_dtypes)
        # onnxruntime-extensions copies each result before this thread runs another op: the
        # kernels may hand back buffers they reuse on the next call
        previous = reuse_outputs(True)
        try:
            outputs = body(feed, attributes)
        finally:
            reuse_outputs(previous)
        pairs = zip(outputs, out_dtypes, strict=True)
        checked = [np.ascontiguousarray(a, dtype=t) for a, t in pairs]
        if large:
            _check_copy(checked)
        return _as_result(k_id, checked)
    except BaseException as err:
        _record_safely(name, attributes, feed, err)
        try:
            return _as_result(k_id, placeholders(shape, out_dtypes, _rank(feed)))
        except BaseException:
            return _fallback(k_id)


def _output_shape(out_shape: Shape, feed: Sequence[Any],
                  attributes: dict[str, Any]) -> tuple[int, ...] | None:
    """The shape the call will produce, None without one (the kernel says why)."""
    try:
        shape = tuple(map(operator.index, out_shape(feed, attributes)))  # ints, or TypeError
        if not shape or min(shape) >= 0:
            return shape
    except BaseException:
        pass
    return None


def _check_memory(shape: tuple[int, ...], dtypes: Sequence[np.dtype]) -> bool:
    """Before the kernel: its outputs and onnxruntime's copies must fit what the process can
    allocate (plus this thread's buffers, reused or freed first); whether they are large enough
    to be checked again after it."""
    nbytes = math.prod(shape) * sum([dt.itemsize for dt in dtypes])
    if 2 * nbytes < MEMORY_CHECK_BYTES:
        return False  # the common case: no message to build
    held = held_output_bytes()
    if math.prod(shape) * max(dt.itemsize for dt in dtypes) > output_limit():
        return True  # the kernel refuses it with the byte limit, the more telling figure
    if len(dtypes) == 1:
        what = f"the output Y of shape {list(shape)} ({dtypes[0].name}, {nbytes} bytes) and "
        what += "onnxruntime's copy of it in its arena"
    else:
        kinds = " and ".join(dt.name for dt in dtypes)
        what = f"the outputs Y and Indices of shape {list(shape)} ({kinds}, {nbytes} bytes) "
        what += "and onnxruntime's copies of them in its arena"
    check_memory(what, 2 * nbytes, nbytes + _arena_bytes(nbytes), held)
    return True


def _check_copy(outputs: Sequence[np.ndarray]) -> None:
    """After the kernel (its intermediates held now): onnxruntime's copy must still fit."""
    nbytes = sum([a.nbytes for a in outputs])
    if nbytes < MEMORY_CHECK_BYTES:
        return
    shapes = " and ".join(f"{list(a.shape)} ({a.dtype.name})" for a in outputs)
    what = f"onnxruntime's copy of the outputs {shapes}"
    check_memory(what, nbytes, _arena_bytes(nbytes))


def _rank(feed: Sequence[Any]) -> int:
    """The first input's rank (every ortpool op's outputs have it), 1 when unknown."""
    try:
        return len(feed[0].shape)
    except Exception:
        return 1


def _record_safely(name: str, attributes: Any, feed: Sequence[Any], err: BaseException) -> None:
    """Record ``err``; if that fails, log both at CRITICAL (the run will not raise it)."""
    try:
        failures.record(name, attributes, [tuple(getattr(x, "shape", ())) for x in feed], err)
    except BaseException as lost:
        with contextlib.suppress(BaseException):
            log.critical("ortpool could not record %s's failure (%s): %s", name, lost, err)


def _invoke_foreign(k_id: int, feed: Sequence[Any], attributes: dict[str, Any]) -> tuple:
    """Other packages' Python ops: the stock behaviour, minus the .tolist() on numeric results."""
    opdef = _ocos.Opdef._odlist[k_id]
    try:
        result = opdef.body(*feed, **opdef.cast_attributes(attributes))
        outputs = result if isinstance(result, tuple) else (result,)
        res: list[Any] = [k_id]
        for array in map(np.asarray, outputs):
            strings = array.dtype.kind in "OUS"
            res += [array.shape,
                    array.flatten().tolist() if strings else np.ascontiguousarray(array)]
        return tuple(res)
    except BaseException as err:
        _record_safely(opdef.op_type, attributes, feed, err)
        return _fallback(k_id)


def _fallback(k_id: int) -> tuple:
    """One empty output per declared output of kernel ``k_id``, of its type (a single float32
    one when the declaration cannot be read). Never raises."""
    try:
        ours = OURS.get(k_id)
        if ours is not None:
            return _as_result(k_id, [empty(dt) for dt in ours[2]])
        res: list[Any] = [k_id]
        for code in _ocos.Opdef._odlist[k_id]._nativedef.output_types:
            if code == PyCustomOpDef.dt_string:
                res.extend([(0,), _EMPTY_STRINGS])
            else:
                res.extend([(0,), _EMPTY.get(DT_NUMPY.get(code), _EMPTY[np.dtype(np.float32)])])
        return tuple(res)
    except BaseException:
        return (k_id, (0,), _EMPTY[np.dtype(np.float32)])


def invoke(k_id: int, feed: Sequence[Any], attributes: dict[str, Any]) -> tuple:
    """The hook itself; never raises. What reaches the handler here failed before a call was
    made (an unknown kernel id): recorded, so that the run raises it."""
    try:
        if k_id in OURS:
            return _invoke_ours(k_id, feed, attributes)
        return _invoke_foreign(k_id, feed, attributes)
    except BaseException as err:
        _record_safely(f"kernel {k_id}", attributes, feed, err)
        return _fallback(k_id)
