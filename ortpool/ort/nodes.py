"""A model's nodes as the session layer reads them: its structure without its external data
(:func:`load_structure`), every node at any depth (:func:`iter_nodes`), the ortpool ones
(:func:`iter_ortpool_nodes`). onnx alone: :mod:`ortpool.ort.opening` asks whether a model needs
the wrapper before anything imports onnxruntime."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import onnx

from ortpool import optypes


def load_structure(model: str | os.PathLike | bytes | onnx.ModelProto) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, bytes):
        return onnx.load_from_string(model)
    return onnx.load(os.fspath(model), load_external_data=False)


def iter_nodes(model: onnx.ModelProto) -> Iterator[onnx.NodeProto]:
    """Every node: main graph, subgraphs at any depth, local functions."""

    def walk(nodes: Sequence[onnx.NodeProto]) -> Iterator[onnx.NodeProto]:
        for node in nodes:
            yield node
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    yield from walk(attr.g.node)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    for graph in attr.graphs:
                        yield from walk(graph.node)

    yield from walk(model.graph.node)
    for function in model.functions:
        yield from walk(function.node)


def iter_ortpool_nodes(model: onnx.ModelProto) -> Iterator[onnx.NodeProto]:
    """Every node of the ortpool domain: main graph, subgraphs at any depth, local functions."""
    return (node for node in iter_nodes(model) if node.domain == optypes.DOMAIN)
