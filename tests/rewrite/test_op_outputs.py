"""The declarations a rewrite writes for ortpool op outputs (ortpool/rewrite/op_outputs.py).

Element type, rank and dims of every ortpool output nothing declares: sizes only where certain
(main graph, input sizes known), the input's names for N and C, fresh names elsewhere; rank only
in subgraphs and function bodies; nothing where the model already declares the value. A restore
removes exactly what the rewrite added. The runs are on the CPU provider;
tests/project/test_openvino.py runs rewritten models on the OpenVINO provider, which is what the
declarations are for.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import ortpool
from ortpool.rewrite import op_outputs
from tests.support.cnn_builders import subgraph_pool_model
from tests.support.rewrite import one_node_model, vi


def _declared(graph) -> dict[str, tuple[int, list]]:
    return {
        v.name: (
            v.type.tensor_type.elem_type,
            [
                d.dim_value if d.HasField("dim_value") else d.dim_param
                for d in v.type.tensor_type.shape.dim
            ],
        )
        for v in graph.value_info
        if v.doc_string == op_outputs.MARK
    }


def _round_trip(model: onnx.ModelProto) -> onnx.ModelProto:
    rewritten = ortpool.rewrite(model)
    assert ortpool.restore(rewritten) == model
    return rewritten


@pytest.mark.parametrize(
    ("attrs", "shape", "dims"),
    [
        # SAME_UPPER with dilation 2 keeps 9x9 (the spec; onnxruntime's own MaxPool gives 7x7)
        (
            dict(kernel_shape=[3, 3], dilations=[2, 2], auto_pad="SAME_UPPER"),
            ["n", 2, 9, 9],
            ["n", 2, 9, 9],
        ),
        (dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1), [1, "c", 8, 8], [1, "c", 4, 4]),
        # unknown spatial sizes, a -1 from an exporter: fresh names, N kept
        (dict(kernel_shape=[2, 2]), [4, 3, "h", -1], [4, 3, "y:2", "y:3"]),
        # kernel 5 over 3: ruling 19's formula gives no window, an empty axis
        (dict(kernel_shape=[5, 5]), [1, 3, 3, 3], [1, 3, 0, 0]),
    ],
)
def test_main_graph_outputs_get_sizes_where_certain(attrs, shape, dims):
    node = h.make_node("MaxPool", ["x"], ["y"], name="p", **attrs)
    model = one_node_model(node, shape=[None if d == -1 else d for d in shape])
    if -1 in shape:
        model.graph.input[0].type.tensor_type.shape.dim[3].dim_value = -1
    rewritten = _round_trip(model)
    # y is a graph output, declared there: nothing more is written for it
    assert _declared(rewritten.graph) == {}
    model.graph.output[0].name = "y_out"
    model.graph.node.append(h.make_node("Relu", ["y"], ["y_out"]))
    rewritten = _round_trip(model)
    assert _declared(rewritten.graph) == {"y": (T.FLOAT, dims)}


def test_indices_global_roi_and_unpool_outputs():
    nodes = [
        h.make_node("MaxPool", ["x"], ["m", "i"], name="m", kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node(
            "MaxUnpool", ["m", "i", "shape"], ["u"], name="u", kernel_shape=[2, 2], strides=[2, 2]
        ),
        h.make_node(
            "MaxUnpool", ["m", "i", "dyn"], ["v"], name="v", kernel_shape=[2, 2], strides=[2, 2]
        ),
        h.make_node("GlobalLpPool", ["x"], ["g"], name="g"),
        h.make_node("MaxRoiPool", ["x", "rois"], ["r"], name="r", pooled_shape=[2, 3]),
        h.make_node("Concat", ["u", "v"], ["uv"], axis=1),
        h.make_node("Relu", ["g"], ["g2"]),
        h.make_node("Relu", ["r"], ["r2"]),
    ]
    graph = h.make_graph(
        nodes,
        "g",
        [vi("x", T.FLOAT, ["n", 3, 8, 8]), vi("dyn", T.INT64, [4])],
        [vi("uv", T.FLOAT, None), vi("g2", T.FLOAT, None), vi("r2", T.FLOAT, None)],
        [
            numpy_helper.from_array(np.array([2, 3, 8, 8], np.int64), "shape"),
            numpy_helper.from_array(np.zeros((5, 5), np.float32), "rois"),
        ],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 22)])
    model.ir_version = 10
    rewritten = _round_trip(model)
    assert _declared(rewritten.graph) == {
        "m": (T.FLOAT, ["n", 3, 4, 4]),
        "i": (T.INT64, ["n", 3, 4, 4]),
        "u": (T.FLOAT, [2, 3, 8, 8]),  # output_shape is a constant
        "v": (T.FLOAT, ["v:0", "v:1", "v:2", "v:3"]),  # given at run time
        "g": (T.FLOAT, ["n", 3, 1, 1]),
        "r": (T.FLOAT, [5, 3, 2, 3]),
    }
    x = np.random.default_rng(0).normal(size=(2, 3, 8, 8)).astype(np.float32)
    session = ortpool.InferenceSession(rewritten)
    uv, g2, r2 = session.run(None, {"x": x, "dyn": np.array([2, 3, 8, 8], np.int64)})
    assert (uv.shape, g2.shape, r2.shape) == ((2, 6, 8, 8), (2, 3, 1, 1), (5, 3, 2, 3))


def test_a_declaration_the_model_has_is_kept_and_partial_restore_removes_its_own():
    nodes = [
        h.make_node("MaxPool", ["x"], ["a"], name="pa", kernel_shape=[2, 2]),
        h.make_node("AveragePool", ["a"], ["b"], name="pb", kernel_shape=[2, 2]),
        h.make_node("Relu", ["b"], ["y"]),
    ]
    graph = h.make_graph(
        nodes,
        "g",
        [vi("x", T.FLOAT, [1, 3, 8, 8])],
        [vi("y", T.FLOAT, None)],
        value_info=[vi("a", T.FLOAT, ["the", "user's", 7, 7])],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 12)])
    model.ir_version = 8
    rewritten = _round_trip(model)
    # a: the model's own declaration stays as it is; b: from the spec's 7x7 for a, not onnx's
    assert _declared(rewritten.graph) == {"b": (T.FLOAT, [1, 3, 6, 6])}
    assert rewritten.graph.value_info[0] == model.graph.value_info[0]
    partly = ortpool.restore(rewritten, nodes=["pb"])
    assert _declared(partly.graph) == {}
    assert ortpool.rewrite(partly) == rewritten


def test_float16_path_declares_the_float32_value_only():
    nodes = [
        h.make_node("MaxPool", ["x"], ["p"], name="p", kernel_shape=[3, 3], pads=[1] * 4),
        h.make_node("Relu", ["p"], ["y"]),
    ]
    graph = h.make_graph(
        nodes, "g", [vi("x", T.FLOAT16, ["n", 2, 5, 5])], [vi("y", T.FLOAT16, None)]
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 12)])
    model.ir_version = 8
    rewritten = _round_trip(model)
    assert _declared(rewritten.graph) == {"p__ortpool_f32": (T.FLOAT, ["n", 2, 5, 5])}


@pytest.mark.parametrize("container", ["If", "Loop"])
def test_subgraph_outputs_get_the_rank_only(container):
    model = subgraph_pool_model(container)
    body = next(
        a.g
        for a in model.graph.node[0].attribute
        if a.type == onnx.AttributeProto.GRAPH and a.g.node[0].op_type == "MaxPool"
    )
    # the pool's output read by a Relu inside the body, so it is not the body's output
    relu_out = body.output[-1].name
    body.node[0].output[0] = "inner"
    body.node.insert(1, h.make_node("Relu", ["inner"], [relu_out]))
    rewritten = _round_trip(model)
    inner = next(
        a.g
        for a in rewritten.graph.node[0].attribute
        if a.type == onnx.AttributeProto.GRAPH and a.g.node[0].domain == "ortpool"
    )
    # x is [1,2,9,9] outside, but a body may run on other sizes: no sizes written there
    assert _declared(inner) == {"inner": (T.FLOAT, ["inner:0", "inner:1", "inner:2", "inner:3"])}
    feeds = {"x": np.random.default_rng(0).normal(size=(1, 2, 9, 9)).astype(np.float32)}
    (y,) = ortpool.InferenceSession(rewritten).run(None, feeds)
    assert y.shape[-2:] == (9, 9)


def _with_function(nodes, inputs, outputs, body, ir: int) -> onnx.ModelProto:
    """A model whose graph calls the local function ``local.block`` (fx -> fy) made of ``body``."""
    function = h.make_function("local", "block", ["fx"], ["fy"], body, [h.make_opsetid("", 12)])
    model = h.make_model(
        h.make_graph(nodes, "g", inputs, outputs),
        opset_imports=[h.make_opsetid("", 12), h.make_opsetid("local", 1)],
        functions=[function],
    )
    model.ir_version = ir
    return model


@pytest.mark.parametrize("ir", [8, 10])
def test_function_bodies_get_the_rank_only_from_ir_10(ir):
    body = [
        h.make_node("MaxPool", ["fx"], ["t"], kernel_shape=[2, 2]),
        h.make_node("Relu", ["t"], ["fy"]),
    ]
    model = _with_function(
        [h.make_node("block", ["x"], ["y"], domain="local")],
        [vi("x", T.FLOAT, [1, 3, 8, 8])],
        [vi("y", T.FLOAT, None)],
        body,
        ir,
    )
    rewritten = _round_trip(model)
    declared = _declared(rewritten.functions[0])
    assert declared == ({"t": (T.FLOAT, ["t:0", "t:1", "t:2", "t:3"])} if ir >= 10 else {})
    feeds = {"x": np.ones((1, 3, 8, 8), np.float32)}
    (y,) = ortpool.InferenceSession(rewritten).run(None, feeds)
    assert y.shape == (1, 3, 7, 7)


@pytest.mark.parametrize(
    ("attrs", "shape", "dims"),
    [
        # sizes beyond any real tensor are still exact: 8 + 2 * 2**40 - 2
        (dict(kernel_shape=[3, 3], pads=[2**40] * 4), [1, 3, 8, 8], [1, 3, 2**41 + 6, 2**41 + 6]),
        # past the int64 bounds the geometry refuses: names, nothing guessed
        (dict(kernel_shape=[3, 3], pads=[2**62] * 4), [1, 3, 8, 8], [1, 3, "y:2", "y:3"]),
        # N = 0 passes through; a zero spatial axis has no window (ruling 19): empty
        (dict(kernel_shape=[3, 3]), [0, 3, 0, 8], [0, 3, 0, 6]),
        (dict(kernel_shape=[2, 2]), [0, 3, 4, 4], [0, 3, 3, 3]),
    ],
)
def test_hostile_sizes_give_exact_sizes_or_names(attrs, shape, dims):
    model = one_node_model(h.make_node("MaxPool", ["x"], ["y"], name="p", **attrs), shape=shape)
    model.graph.output[0].name = "z"
    model.graph.node.append(h.make_node("Relu", ["y"], ["z"]))
    assert _declared(_round_trip(model).graph) == {"y": (T.FLOAT, dims)}


@pytest.mark.parametrize("ir", [8, 10])
def test_a_call_of_a_function_holding_ortpool_ops_is_declared_where_it_is_called(ir):
    # onnxruntime types a call from the body before inlining it, and an ortpool op types
    # nothing: without a declaration of y, the Relu reading it makes the model refused
    # ("Op (block) output arg (y) type inference failed").
    body = [
        h.make_node("Relu", ["fx"], ["t"]),
        h.make_node("MaxPool", ["t"], ["fy"], kernel_shape=[2, 2]),
    ]
    nodes = [h.make_node("block", ["x"], ["y"], domain="local"), h.make_node("Relu", ["y"], ["z"])]
    model = _with_function(
        nodes, [vi("x", T.FLOAT, ["n", 3, 8, 8])], [vi("z", T.FLOAT, None)], body, ir
    )
    rewritten = _round_trip(model)
    assert _declared(rewritten.graph) == {"y": (T.FLOAT, ["y:0", "y:1", "y:2", "y:3"])}
    (z,) = ortpool.InferenceSession(rewritten).run(None, {"x": np.ones((2, 3, 8, 8), np.float32)})
    assert z.shape == (2, 3, 7, 7)
