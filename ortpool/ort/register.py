"""Register every ortpool op type into onnxruntime-extensions, once per process: registration is
process-global and permanent, and a (name, types) pair registered twice makes every later session
fail ("Conflicting with a registered kernel"), so the registered set is kept on the
onnxruntime-extensions module itself, which a reload of ortpool does not reset.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ortpool import kernels, optypes
from ortpool.kernels.shapes import output_shape
from ortpool.optypes import OUTPUT_SHAPE, OpType
from ortpool.ort import hook
from ortpool.ort._extensions import PyCustomOpDef, _ocos, onnx_op

DT_CODE = {name: getattr(PyCustomOpDef, f"dt_{name}") for name in (
    "float", "double", "int8", "uint8", "int64")}
#: Floats travel as repr() strings: onnxruntime-extensions would print them with 6 digits.
_ATTR_CODE = {"ints": PyCustomOpDef.dt_string, "string": PyCustomOpDef.dt_string,
              "float": PyCustomOpDef.dt_string, "int": PyCustomOpDef.dt_int64}
_lock = threading.Lock()


def _body(op_type: OpType) -> hook.Body:
    """The kernel call of one op type: (inputs, attributes) -> outputs."""
    spec, n_outputs = op_type.spec, op_type.n_outputs
    return lambda feed, attrs: kernels.run_op(spec.op, spec.version, feed, attrs, n_outputs)


#: Output shapes computed, per (op type, input shapes, attributes, output_shape values): the hook
#: asks for every call, and one costs 36 µs.
_SHAPES: dict[tuple, tuple[int, ...]] = {}
_MAX_SHAPES = 1024


def _shape(op_type: OpType) -> hook.Shape:
    """The output shape of a call of ``op_type`` (the memory check's, and the placeholder's)."""
    spec = op_type.spec
    with_shape = op_type.variant == OUTPUT_SHAPE

    def shape(feed: Sequence[np.ndarray], attrs: dict[str, Any]) -> tuple[int, ...]:
        given = feed[2] if with_shape else None
        # the attribute names are in the key: a direct caller may pass them in another order
        key: tuple | None = (op_type.name, *[x.shape for x in feed], *attrs.items())
        if given is not None:
            values = np.asarray(given).reshape(-1)
            # an output_shape of more than 64 values is refused anyway
            key = (*key, values.dtype.str, *values.tolist()) if values.size <= 64 else None
        try:
            return _SHAPES[key]
        except (KeyError, TypeError):  # TypeError: unhashable attributes
            pass
        rois = feed[1].shape if spec.op == "MaxRoiPool" else None
        result = output_shape(spec.op, spec.version, feed[0].shape, attrs, given, rois)
        if len(_SHAPES) >= _MAX_SHAPES:
            _SHAPES.clear()
        if key is not None:
            with contextlib.suppress(TypeError):
                _SHAPES[key] = result
        return result

    return shape


def kernel_types(op_type: OpType, dtype: str) -> tuple[list[int], list[int]]:
    """Declared (input types, output types) of ``op_type`` for element type ``dtype``."""
    x = DT_CODE[dtype]
    i64 = PyCustomOpDef.dt_int64
    # Inputs of X's type (MaxRoiPool's rois) share its code; the others are int64 (MaxUnpool's
    # I and output_shape). Outputs: Y, then MaxPool's Indices.
    inputs = [x if typed else i64 for typed in op_type.spec.typed_inputs[: op_type.n_inputs]]
    return inputs, [x, i64][: op_type.n_outputs]


def register() -> int:
    """Register every op type and element type not yet registered (any number of times, from
    any thread); how many are now."""
    with _lock:
        registry: dict[tuple[str, str], int] = _ocos.__dict__.setdefault("_ortpool_registered", {})
        for op_type in optypes.all_op_types():
            body = _body(op_type)
            attrs = {name: _ATTR_CODE[spec.kind] for name, spec in op_type.spec.attrs.items()}
            for dtype in op_type.dtypes:
                key = (op_type.name, dtype)
                if key in registry:
                    continue
                inputs, outputs = kernel_types(op_type, dtype)
                opdef = onnx_op(op_type=f"{optypes.DOMAIN}::{op_type.name}", inputs=inputs,
                                outputs=outputs, attrs=attrs)(_unreachable)
                out_dtypes = tuple(hook.DT_NUMPY[code] for code in outputs)
                registry[key] = opdef._id
                hook.OURS[opdef._id] = (op_type.name, body, out_dtypes, _shape(op_type))
        PyCustomOpDef.install_hooker(hook.invoke)
        return len(registry)


def _unreachable(*args: Any, **kwargs: Any) -> None:
    raise RuntimeError("ortpool ops run through ortpool's hook")
