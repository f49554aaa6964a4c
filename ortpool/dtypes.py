"""Element types: ONNX type codes, onnx names ("float") and numpy dtypes, in one place."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import TensorProto

from ortpool.errors import OrtpoolError

#: onnx type name -> numpy dtype (bfloat16 through ml_dtypes, as onnxruntime's Python API takes it)
NUMPY: dict[str, np.dtype] = {
    "float": np.dtype(np.float32),
    "double": np.dtype(np.float64),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "int8": np.dtype(np.int8),
    "uint8": np.dtype(np.uint8),
    "int16": np.dtype(np.int16),
    "uint16": np.dtype(np.uint16),
    "int32": np.dtype(np.int32),
    "uint32": np.dtype(np.uint32),
    "int64": np.dtype(np.int64),
    "uint64": np.dtype(np.uint64),
    "bool": np.dtype(np.bool_),
}

CODE: dict[str, int] = {
    "float": TensorProto.FLOAT,
    "double": TensorProto.DOUBLE,
    "float16": TensorProto.FLOAT16,
    "bfloat16": TensorProto.BFLOAT16,
    "int8": TensorProto.INT8,
    "uint8": TensorProto.UINT8,
    "int16": TensorProto.INT16,
    "uint16": TensorProto.UINT16,
    "int32": TensorProto.INT32,
    "uint32": TensorProto.UINT32,
    "int64": TensorProto.INT64,
    "uint64": TensorProto.UINT64,
    "bool": TensorProto.BOOL,
}
NAME_OF_CODE: dict[int, str] = {code: name for name, code in CODE.items()}

FLOATS = ("float", "double", "float16", "bfloat16")

#: numpy's spelling -> the onnx name, for the names that differ (every other onnx name is also
#: numpy's): ``float`` is float32 here, as in ONNX, never Python's float (float64)
NUMPY_SPELLING: dict[str, str] = {"float32": "float", "float64": "double", "bool_": "bool"}


def canonical(name: str) -> str:
    """The onnx name of an element type given by its onnx name (``float``, ``double``,
    ``float16``...) or numpy's spelling (``float32``, ``float64``...); an OrtpoolError names the
    accepted names otherwise.

    >>> canonical("float32"), canonical("float"), canonical("float64")
    ('float', 'float', 'double')
    """
    text = name.strip()
    found = NUMPY_SPELLING.get(text.lower(), text.lower())
    if found not in NUMPY:
        spellings = ", ".join(f"{k}={v}" for k, v in NUMPY_SPELLING.items())
        raise OrtpoolError(
            f"element type {name!r} is not one of {', '.join(NUMPY)} (ONNX names; numpy's "
            f"spellings are read too: {spellings})"
        )
    return found


def canonical_list(text: str | None) -> list[str] | None:
    """A comma-separated list of element types as onnx names (None for none given)."""
    if text is None:
        return None
    return [canonical(t) for t in text.split(",") if t.strip()]


def name_of(dtype: np.dtype) -> str:
    """onnx's name of a numpy dtype: float32 -> "float"."""
    dtype = np.dtype(dtype)
    for name, candidate in NUMPY.items():
        if candidate == dtype:
            return name
    raise ValueError(f"element type {dtype} has no onnx equivalent handled by ortpool validate")


def name_of_code(code: int) -> str:
    """onnx's name of a TensorProto element type code; a ValueError for types not handled."""
    if code not in NAME_OF_CODE:
        raise ValueError(
            f"element type {TensorProto.DataType.Name(code)} is not handled by ortpool validate"
        )
    return NAME_OF_CODE[code]
