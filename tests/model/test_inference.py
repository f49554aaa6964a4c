"""ortpool.model.inference: the type table of the rewrite and the fix (call sites merged, static
dims), and the spec's pool sizes cut into onnx inference."""

from __future__ import annotations

from onnx import TensorProto, helper

from ortpool.model import inference
from ortpool.model.scopes import model_scopes


def _io(name: str, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


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
