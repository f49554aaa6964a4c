"""A model's structure without its external data (:func:`load_structure`) and its ortpool nodes:
onnx alone, so :mod:`ortpool.ort.opening` asks whether a model needs the wrapper before anything
imports onnxruntime."""

from __future__ import annotations

import os
from collections.abc import Iterator

import onnx

from ortpool import optypes
from ortpool.model.scopes import all_nodes as iter_nodes


def load_structure(model: str | os.PathLike | bytes | onnx.ModelProto) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, bytes):
        return onnx.load_from_string(model)
    return onnx.load(os.fspath(model), load_external_data=False)


def iter_ortpool_nodes(model: onnx.ModelProto) -> Iterator[onnx.NodeProto]:
    """Every node of the ortpool domain: main graph, subgraphs at any depth, local functions."""
    return (node for node in iter_nodes(model) if node.domain == optypes.DOMAIN)
