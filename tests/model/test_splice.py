"""ortpool.model.splice: a node replaced where it stood, removed, and its owner's opset import."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

from ortpool.model import splice
from ortpool.model.scopes import model_scopes


def _io(name: str, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def test_splice_replaces_a_node_where_it_stood_and_manages_imports():
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"n{i}") for i in range(3)]
    graph = helper.make_graph(nodes, "g", [_io("v0", [1])], [_io("v3", [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    scope = model_scopes(model)[0]
    middle = scope.nodes[1]
    made = [
        helper.make_node("Neg", ["v1"], ["t"], name="a"),
        helper.make_node("Neg", ["t"], ["v2"], name="b"),
    ]
    splice.replace(scope.nodes, middle, made)
    assert [n.name for n in model.graph.node] == ["n0", "a", "b", "n2"]
    splice.remove(scope.nodes, scope.nodes[1])
    assert [n.name for n in model.graph.node] == ["n0", "b", "n2"]
    with pytest.raises(LookupError, match="node 'n1' is not in its scope"):
        splice.position_of(scope.nodes, middle)  # an equal proto elsewhere is not this one
    splice.add_import(model.opset_import, "ortpool", 1)
    splice.add_import(model.opset_import, "ortpool", 2)  # imported already: kept as is
    assert [(e.domain, e.version) for e in model.opset_import] == [("", 13), ("ortpool", 1)]
    assert [key for key, _ in splice.owners(model)] == [("graph",)]
    splice.drop_import(model.opset_import, "ortpool")
    assert [(e.domain, e.version) for e in model.opset_import] == [("", 13)]
