"""The model layer's shared concepts: the one builder of small models (model/singlenode.py),
node splicing (model/splice.py) and the type table of inference (model/inference.py)."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from ortpool.model import inference, splice
from ortpool.model.scopes import model_scopes
from ortpool.model.singlenode import IR_VERSION, node_model


def _io(name: str, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def test_node_model_stamps_the_ir_every_supported_runtime_reads():
    relu = helper.make_node("Relu", ["x"], ["y"])
    old = node_model([relu], "g", [_io("x", [1])], [_io("y", [1])], [helper.make_opsetid("", 6)])
    assert (old.ir_version, old.graph.name) == (3, "g")
    new = node_model(
        [relu],
        "g",
        [_io("x", [1])],
        [_io("y", [1])],
        [helper.make_opsetid("ai.onnx", 13)],
        producer_name="p",
    )
    assert (new.ir_version, new.producer_name) == (IR_VERSION, "p")
    custom = node_model(
        [relu], "g", [_io("x", [1])], [_io("y", [1])], [helper.make_opsetid("ortpool", 1)]
    )
    assert custom.ir_version == IR_VERSION
    probe = node_model(
        [relu], "g", [_io("x", [1])], [_io("y", [1])], [helper.make_opsetid("", 13)], ir_version=12
    )
    assert probe.ir_version == 12
    onnx.checker.check_model(new)


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


def test_type_table_merges_call_sites_and_projects_static_dims():
    table = inference.TypeTable()
    key = ("function", 0)
    table.record(key, "x", inference.ValueType(1, 4, ("N", 3, 8, 8)), merge=True)
    table.record(key, "x", inference.ValueType(1, 4, ("N", 3, 8, 9)), merge=True)
    merged = table._types[key]["x"]
    assert merged == inference.ValueType(1, 4, ("N", 3, 8, None))
    assert merged.static_dims == (None, 3, 8, None)
    table.record(key, "x", inference.ValueType(1, 3, (1, 3, 8)), merge=True)
    assert table._types[key]["x"] == inference.ValueType(1, None)
    table.record(key, "x", inference.ValueType(10), merge=True)
    assert table._types[key]["x"] is inference.MIXED
    assert inference.MIXED.name is None and inference.MIXED.static_dims is None


def test_learn_shapes_cuts_the_spec_size_in_where_onnx_infers_another():
    # VALID with ceil_mode: onnx (like onnxruntime) infers 8x8, the spec gives 7x7; the Relu
    # after the pool is sized as the fixed model will size it.
    pool = helper.make_node(
        "AveragePool",
        ["x"],
        ["p"],
        kernel_shape=[3, 3],
        strides=[2, 2],
        auto_pad="VALID",
        ceil_mode=1,
    )
    relu = helper.make_node("Relu", ["p"], ["y"])
    graph = helper.make_graph([pool, relu], "g", [_io("x", [1, 8, 16, 16])], [_io("y", None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    scope = model_scopes(model)[0]
    assert inference.learn_types(model).lookup(scope, "y").static_dims == (1, 8, 8, 8)
    shapes = inference.learn_shapes(model)
    assert shapes.lookup(scope, "y").static_dims == (1, 8, 7, 7)
    assert shapes.lookup(scope, "x").name == "float"


def test_reference_worker_times_refuses_and_answers_in_one_process():
    import numpy as np

    from ortpool.model.reference import ReferenceWorker
    from ortpool.model.singlenode import NodeSpec, builtin_model, feed_dict

    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    spec = NodeSpec("MaxPool", 12, {"kernel_shape": [2, 2], "strides": [2, 2]}, 1, 1)
    pool = builtin_model(spec, [x])
    rois = np.array([[0, 0, 0, 3, 3]], dtype=np.float32)
    roi = builtin_model(NodeSpec("MaxRoiPool", 22, {"pooled_shape": [1, 1]}, 2, 1), [x, rois])
    with ReferenceWorker(timeout=60) as worker:
        times, outputs = worker.time(pool.SerializeToString(), feed_dict([x]))
        assert 1 <= len(times) <= 5
        assert outputs[0].reshape(-1).tolist() == [5.0, 7.0, 13.0, 15.0]
        refused = worker.time(roi.SerializeToString(), feed_dict([x, rois]))
        assert refused is not None and refused[0] == []
        assert "No registered implementation for operator 'MaxRoiPool'" in refused[1]
        assert "\n" not in refused[1]  # the first line only, for the benchmark's table
        status, payload, _ = worker.run(roi.SerializeToString(), feed_dict([x, rois]))
        assert status == "error"  # validate keeps the whole text (its defects are matched in it)
        assert payload.startswith("RuntimeImplementationError: No registered") and "\n" in payload
        status, payload, _ = worker.run(pool.SerializeToString(), feed_dict([x]))  # same worker
        assert status == "ok" and payload[0].shape == (1, 1, 2, 2)
