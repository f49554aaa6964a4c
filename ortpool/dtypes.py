"""Element types: ONNX type codes, onnx names ("float") and numpy dtypes, in one place."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import TensorProto

from ortpool.errors import OrtpoolError

#: onnx type name -> numpy dtype (bfloat16 through ml_dtypes, as onnxruntime's Python API takes it)
NUMPY: dict[str, np.dtype] = {
    "float": np.dtype(np.float32), "double": np.dtype(np.float64),
    "float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "int8": np.dtype(np.int8), "uint8": np.dtype(np.uint8), "int16": np.dtype(np.int16),
    "uint16": np.dtype(np.uint16), "int32": np.dtype(np.int32), "uint32": np.dtype(np.uint32),
    "int64": np.dtype(np.int64), "uint64": np.dtype(np.uint64), "bool": np.dtype(np.bool_),
}

CODE: dict[str, int] = {name: getattr(TensorProto, name.upper()) for name in NUMPY}
NAME_OF_CODE: dict[int, str] = {code: name for name, code in CODE.items()}

_NAME_OF: dict[np.dtype, str] = {dtype: name for name, dtype in NUMPY.items()}
FLOATS = ("float", "double", "float16", "bfloat16")

#: numpy's spelling -> the onnx name, where they differ (``float`` is float32, as in ONNX)
NUMPY_SPELLING: dict[str, str] = {"float32": "float", "float64": "double", "bool_": "bool"}


def canonical(name: str) -> str:
    """The onnx name of an element type given by its onnx name (``float``) or numpy's spelling
    (``float32``); an OrtpoolError names the accepted names otherwise."""
    text = name.strip()
    found = NUMPY_SPELLING.get(text.lower(), text.lower())
    if found not in NUMPY:
        spellings = ", ".join(f"{k}={v}" for k, v in NUMPY_SPELLING.items())
        raise OrtpoolError(f"element type {name!r} is not one of {', '.join(NUMPY)} (ONNX names; "
                           f"numpy's spellings are read too: {spellings})")
    return found


def name_of(dtype: np.dtype) -> str:
    """onnx's name of a numpy dtype: float32 -> "float"."""
    dtype = np.dtype(dtype)
    if dtype not in _NAME_OF:
        raise ValueError(f"element type {dtype} has no onnx equivalent handled by ortpool validate")
    return _NAME_OF[dtype]
