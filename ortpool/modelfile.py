"""Reading a model file, refusing anything that is not an ONNX model.

Protobuf parses an empty file, and many byte strings, as a valid but empty ``ModelProto``;
rewriting or validating one would report success on nothing (and write an empty "model"). So a
parsed model must also have what every ONNX model has: an IR version and a graph with nodes or
outputs. Only ``onnx`` is imported (``ortpool rewrite`` must not import onnxruntime).
"""

from __future__ import annotations

import os
from pathlib import Path

import onnx

from ortpool.errors import OrtpoolError


def problem(model: onnx.ModelProto) -> str | None:
    """Why ``model`` is not an ONNX model, or None."""
    if not model.HasField("graph"):
        return "it has no graph"
    if model.ir_version <= 0:
        return f"its ir_version is {model.ir_version} (unset)"
    if not model.graph.node and not model.graph.output:
        return "its graph is empty (no nodes, no outputs)"
    return None


def check(model: onnx.ModelProto, label: str) -> onnx.ModelProto:
    """``model``, or an :class:`OrtpoolError` saying why ``label`` is not an ONNX model."""
    reason = problem(model)
    if reason is not None:
        raise OrtpoolError(f"{label} is not an ONNX model: {reason}")
    return model


def read(path: str | os.PathLike, *, load_external_data: bool) -> onnx.ModelProto:
    """The model at ``path``, checked; with its external data only if asked (rewriting never
    loads weights)."""
    path = Path(path)
    if path.is_dir():
        raise OrtpoolError(f"{path} is a directory, not a model file")
    if not path.is_file():
        raise OrtpoolError(f"{path}: no such model file")
    if path.stat().st_size == 0:
        raise OrtpoolError(f"{path} is not an ONNX model: the file is empty (0 bytes)")
    try:
        model = onnx.load(os.fspath(path), load_external_data=load_external_data)
    except Exception as err:  # protobuf's DecodeError, onnx's checks of external data, OSError
        raise OrtpoolError(
            f"{path} is not a readable ONNX model ({type(err).__name__}: {err})"
        ) from None
    return check(model, str(path))
