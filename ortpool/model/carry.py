"""bfloat16 carried as float32: onnxruntime's Python API feeds and fetches no bfloat16 array.

float32 holds every bfloat16 value exactly, so a bfloat16 input ``X`` becomes the float32 input
``X__float32`` and a first node ``Cast(X__float32) -> X``, a bfloat16 output ``Y`` a last node
``Cast(Y) -> Y__float32``: the model between the Casts computes bit for bit what it computes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import helper

from ortpool import dtypes

#: Element types onnxruntime's Python API cannot feed or fetch as numpy arrays.
CARRIED = ("bfloat16",)
_SUFFIX = "__float32"
_FLOAT = onnx.TensorProto.FLOAT


def carried_name(name: str) -> str:
    """The name of tensor ``name`` where it crosses the API as float32."""
    return name + _SUFFIX


def is_carried(elem: str) -> bool:
    """Whether tensors of element type ``elem`` (an onnx type name) cross as float32."""
    return elem in CARRIED


def feedable(array: np.ndarray) -> np.ndarray:
    """``array`` as onnxruntime's Python API takes it (bfloat16 as float32)."""
    return array.astype(np.float32) if dtypes.name_of(array.dtype) in CARRIED else array


def uncarried(array: np.ndarray, elem: str) -> np.ndarray:
    """A fetched float32 ``array`` of a carried tensor as its own type ``elem``."""
    return np.asarray(array).astype(dtypes.NUMPY[elem])


def _crosses_as_float32(value: onnx.ValueInfoProto) -> bool:
    return is_carried(dtypes.NAME_OF_CODE.get(value.type.tensor_type.elem_type, ""))


def _as_float32(value: onnx.ValueInfoProto) -> str:
    """``value`` renamed and typed as its float32 self; its own name returned."""
    inner = value.name
    value.name = carried_name(inner)
    value.type.tensor_type.elem_type = _FLOAT
    return inner


def carry(model: onnx.ModelProto, tensors: Sequence[str] = (),
          graph: bool = True) -> onnx.ModelProto:
    """A copy of ``model`` whose bfloat16 graph inputs and outputs (``graph``) cross as float32
    through Casts, and whose bfloat16 ``tensors`` are also outputs, as float32; a tensor already
    crossing as float32 is output as it crosses, not cast again."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    main = copy.graph
    crossing: set[str] = set()  # the tensors whose float32 self is in the graph already
    for value in main.input if graph else ():
        if _crosses_as_float32(value):
            code = value.type.tensor_type.elem_type
            inner = _as_float32(value)
            main.node.insert(0, helper.make_node("Cast", [value.name], [inner], to=code))
            crossing.add(inner)
    for value in main.output if graph else ():
        if _crosses_as_float32(value):
            inner = _as_float32(value)
            if inner not in crossing:
                main.node.append(helper.make_node("Cast", [inner], [value.name], to=_FLOAT))
                crossing.add(inner)
    outputs = {value.name for value in main.output}
    for name in tensors:
        if name not in crossing:
            main.node.append(helper.make_node("Cast", [name], [carried_name(name)], to=_FLOAT))
            crossing.add(name)
        if carried_name(name) not in outputs:
            main.output.append(onnx.ValueInfoProto(name=carried_name(name)))
            outputs.add(carried_name(name))
    return copy
