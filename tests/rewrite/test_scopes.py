"""Where nodes live (subgraphs at any depth, model-local functions with their own opsets), what is
learned about types, what is selected, and that nothing else changes."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import ortpool
from ortpool import OrtpoolError
from tests.support.rewrite import assert_same_up_to_defaults, one_node_model, vi

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime


def nested_model() -> onnx.ModelProto:
    """Pools in the main graph, both If branches, a Loop body holding an If (depth 2), a Scan
    body, and a local function governed by its own opset 10 (MaxPool-10 there, 12 outside)."""
    inner_if = h.make_node(
        "If",
        ["c"],
        ["deep"],
        name="inner_if",
        then_branch=h.make_graph(
            [h.make_node("MaxPool", ["v"], ["d1"], name="deep_then", kernel_shape=[1, 1])],
            "t2",
            [],
            [vi("d1")],
        ),
        else_branch=h.make_graph(
            [h.make_node("AveragePool", ["v"], ["d2"], name="deep_else", kernel_shape=[1, 1])],
            "e2",
            [],
            [vi("d2")],
        ),
    )
    body = h.make_graph(
        [
            h.make_node(
                "MaxPool", ["v"], ["pv"], name="loop_pool", kernel_shape=[3, 3], pads=[1, 1, 1, 1]
            ),
            inner_if,
            h.make_node("Add", ["pv", "deep"], ["vo"], name="loop_add"),
            h.make_node("Identity", ["c"], ["co"], name="loop_cond"),
        ],
        "body",
        [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("v")],
        [vi("co", T.BOOL, []), vi("vo")],
    )
    scan_body = h.make_graph(
        [
            h.make_node(
                "AveragePool",
                ["s_in"],
                ["s_out"],
                name="scan_pool",
                kernel_shape=[2, 2],
                pads=[0, 0, 1, 1],
            )
        ],
        "scan",
        [vi("s_in", T.FLOAT, [1, 3, 8, 8])],
        [vi("s_out", T.FLOAT, [1, 3, 8, 8])],
    )
    function = h.make_function(
        "local",
        "block",
        ["a"],
        ["b", "bi"],
        [
            h.make_node("Relu", ["a"], ["r"]),
            h.make_node(
                "MaxPool",
                ["r"],
                ["b", "bi"],
                name="fn_pool",
                kernel_shape=[2, 2],
                strides=[2, 2],
                ceil_mode=1,
            ),
        ],
        [h.make_opsetid("", 10)],
    )
    nodes = [
        h.make_node(
            "MaxPool", ["x"], ["m"], name="main_pool", kernel_shape=[2, 2], doc_string="keep me"
        ),
        h.make_node(
            "If",
            ["cond"],
            ["y"],
            name="branch",
            then_branch=h.make_graph(
                [h.make_node("MaxPool", ["x"], ["t"], name="then_pool", kernel_shape=[2, 2])],
                "then",
                [],
                [vi("t")],
            ),
            else_branch=h.make_graph(
                [h.make_node("AveragePool", ["x"], ["e"], name="else_pool", kernel_shape=[2, 2])],
                "else",
                [],
                [vi("e")],
            ),
        ),
        h.make_node("Loop", ["n", "", "x"], ["z"], name="loop", body=body),
        h.make_node("Scan", ["xs"], ["s"], name="scan", body=scan_body, num_scan_inputs=1),
        h.make_node("block", ["x"], ["f", "fi"], domain="local", name="call"),
    ]
    graph = h.make_graph(
        nodes,
        "nested",
        [
            vi("x", T.FLOAT, [1, 3, 8, 8]),
            vi("cond", T.BOOL, []),
            vi("n", T.INT64, []),
            vi("xs", T.FLOAT, [2, 1, 3, 8, 8]),
        ],
        [vi("m"), vi("y"), vi("z"), vi("s"), vi("f"), vi("fi", T.INT64)],
        value_info=[vi("m", T.FLOAT, [1, 3, 7, 7])],
        doc_string="graph doc",
    )
    model = h.make_model(
        graph,
        opset_imports=[h.make_opsetid("", 13), h.make_opsetid("local", 1)],
        functions=[function],
        doc_string="model doc",
    )
    model.ir_version = 8
    onnx.helper.set_model_props(model, {"author": "test"})
    return model


def test_every_scope_is_retargeted_at_its_governing_version() -> None:
    model = nested_model()
    rewritten, report = ortpool.rewrite.rewrite_with_report(model)
    found = {(n.name, n.location, n.version, n.op_type) for n in report.nodes}
    assert found == {
        ("main_pool", "main graph", 12, "MaxPool_12"),
        ("then_pool", "main graph > If 'branch'.then_branch", 12, "MaxPool_12"),
        ("else_pool", "main graph > If 'branch'.else_branch", 11, "AveragePool_11"),
        ("loop_pool", "main graph > Loop 'loop'.body", 12, "MaxPool_12"),
        (
            "deep_then",
            "main graph > Loop 'loop'.body > If 'inner_if'.then_branch",
            12,
            "MaxPool_12",
        ),
        (
            "deep_else",
            "main graph > Loop 'loop'.body > If 'inner_if'.else_branch",
            11,
            "AveragePool_11",
        ),
        ("scan_pool", "main graph > Scan 'scan'.body", 11, "AveragePool_11"),
        ("fn_pool", "function local.block", 10, "MaxPool_10_Indices"),
    }
    assert report.counts() == {"AveragePool-11": 3, "MaxPool-10": 1, "MaxPool-12": 4}
    assert [(e.domain, e.version) for e in rewritten.opset_import] == [
        ("", 13),
        ("local", 1),
        ("ortpool", 1),
    ]
    assert [(e.domain, e.version) for e in rewritten.functions[0].opset_import] == [
        ("", 10),
        ("ortpool", 1),
    ]
    # nothing else changed
    assert rewritten.graph.node[0].doc_string == "keep me"
    assert [n.name for n in rewritten.graph.node] == [n.name for n in model.graph.node]
    for field in ("input", "output", "value_info", "initializer", "doc_string", "name"):
        assert getattr(rewritten.graph, field) == getattr(model.graph, field)
    for field in ("metadata_props", "doc_string", "ir_version", "producer_name"):
        assert getattr(rewritten, field) == getattr(model, field)


@pytest.mark.parametrize("cond", [True, False])
def test_nested_model_runs_like_builtin(cond: bool) -> None:
    model = nested_model()
    feed = {
        "x": np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32),
        "cond": np.array(cond),
        "n": np.array(2, dtype=np.int64),
        "xs": np.random.default_rng(2).standard_normal((2, 1, 3, 8, 8)).astype(np.float32),
    }
    expected = ort.InferenceSession(model.SerializeToString()).run(None, feed)
    got = ortpool.InferenceSession(ortpool.rewrite(model)).run(None, feed)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_array_equal(g, e)


def test_nested_round_trip() -> None:
    model = nested_model()
    back = ortpool.restore(ortpool.rewrite(model))
    assert back == model
    assert_same_up_to_defaults(model, back)


def half_function_model(call_types: list[int]) -> onnx.ModelProto:
    function = h.make_function(
        "local",
        "halfpool",
        ["a"],
        ["b"],
        [h.make_node("AveragePool", ["a"], ["b"], name="fn_avg", kernel_shape=[2, 2])],
        [h.make_opsetid("", 13)],
    )
    nodes, inputs, outputs = [], [], []
    for i, elem in enumerate(call_types):
        inputs.append(vi(f"x{i}", elem, [1, 2, 4, 4]))
        outputs.append(vi(f"y{i}", elem))
        nodes.append(h.make_node("halfpool", [f"x{i}"], [f"y{i}"], domain="local", name=f"call{i}"))
    graph = h.make_graph(nodes, "g", inputs, outputs)
    model = h.make_model(
        graph,
        opset_imports=[h.make_opsetid("", 13), h.make_opsetid("local", 1)],
        functions=[function],
    )
    model.ir_version = 8
    return model


def test_float16_in_a_function_gets_cast_pair() -> None:
    model = half_function_model([T.FLOAT16])
    rewritten, report = ortpool.rewrite.rewrite_with_report(model)
    (entry,) = report.nodes
    assert (entry.status, entry.cast, entry.op_type) == ("retargeted", "float16", "AveragePool_11")
    body = rewritten.functions[0].node
    assert [(n.op_type, n.domain) for n in body] == [
        ("Cast", ""),
        ("AveragePool_11", "ortpool"),
        ("Cast", ""),
    ]
    assert [onnx.helper.get_attribute_value(n.attribute[0]) for n in (body[0], body[2])] == [
        T.FLOAT,
        T.FLOAT16,
    ]
    assert all(n.doc_string.startswith(ortpool.rewrite.CAST_MARK) for n in (body[0], body[2]))
    assert not any(e.domain == "ortpool" for e in rewritten.opset_import)  # only where used
    x = np.random.default_rng(2).standard_normal((1, 2, 4, 4)).astype(np.float16)
    (got,) = ortpool.InferenceSession(rewritten).run(None, {"x0": x})
    expected = x.astype(np.float32).reshape(1, 2, 4, 4)
    expected = (
        np.lib.stride_tricks.sliding_window_view(expected, (2, 2), axis=(2, 3))
        .mean(axis=(-2, -1))
        .astype(np.float16)
    )
    np.testing.assert_array_equal(got, expected)
    assert ortpool.restore(rewritten) == model


def test_function_called_with_two_types_is_left_alone() -> None:
    _, report = ortpool.rewrite.rewrite_with_report(half_function_model([T.FLOAT, T.FLOAT16]))
    (entry,) = report.nodes
    assert entry.status == "left alone"
    assert entry.reason == (
        "input 'a' has different element types at different calls of the function"
    )


def test_function_called_with_one_carried_type_twice() -> None:
    _, report = ortpool.rewrite.rewrite_with_report(half_function_model([T.FLOAT, T.FLOAT]))
    assert [(n.status, n.cast) for n in report.nodes] == [("retargeted", None)]


def test_function_never_called_is_left_alone() -> None:
    _, report = ortpool.rewrite.rewrite_with_report(half_function_model([]))
    assert report.nodes[0].reason == "function local.halfpool is called nowhere: it never runs"


def test_attribute_reference_in_function_is_left_alone() -> None:
    model = half_function_model([T.FLOAT])
    node = model.functions[0].node[0]
    del node.attribute[:]
    ref = onnx.AttributeProto(name="kernel_shape", ref_attr_name="k", type=onnx.AttributeProto.INTS)
    node.attribute.append(ref)
    model.functions[0].attribute.append("k")
    model.graph.node[0].attribute.append(h.make_attribute("k", [2, 2]))
    _, report = ortpool.rewrite.rewrite_with_report(model)
    assert report.nodes[0].reason == (
        "attribute 'kernel_shape' refers to the function's attribute 'k', whose value is only "
        "known per call"
    )


def test_unknown_type_is_left_alone() -> None:
    nodes = [
        h.make_node("Mystery", ["x"], ["u"], domain="vendor", name="mystery"),
        h.make_node("MaxPool", ["u"], ["y"], name="p", kernel_shape=[2, 2]),
    ]
    graph = h.make_graph(nodes, "g", [vi("x", T.FLOAT, [1, 1, 4, 4])], [vi("y")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13), h.make_opsetid("vendor", 1)])
    out, report = ortpool.rewrite.rewrite_with_report(model)
    assert report.nodes[0].reason == "the element type of input 'u' could not be learned"
    assert out == model
    assert "left alone 1:" in str(report)


def test_type_the_version_does_not_accept_is_left_alone() -> None:
    node = h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2])
    _, report = ortpool.rewrite.rewrite_with_report(one_node_model(node, 11, T.INT8))
    assert report.nodes[0].reason == (
        "element type int8 is not one MaxPool-11 accepts (float16, float, double)"
    )
    _, report = ortpool.rewrite.rewrite_with_report(one_node_model(node, 12, T.INT8))
    assert report.nodes[0].op_type == "MaxPool_12"


def test_bfloat16_at_22_gets_cast_pair() -> None:
    node = h.make_node("MaxPool", ["x"], ["y", "i"], name="p", kernel_shape=[2, 2])
    model = one_node_model(node, 22, T.BFLOAT16)
    model.graph.output[1].type.tensor_type.elem_type = T.INT64
    out, report = ortpool.rewrite.rewrite_with_report(model)
    assert report.nodes[0].cast == "bfloat16"
    assert [(n.op_type, list(n.input), list(n.output)) for n in out.graph.node] == [
        ("Cast", ["x"], ["x__ortpool_f32"]),
        ("MaxPool_22_Indices", ["x__ortpool_f32"], ["y__ortpool_f32", "i"]),
        ("Cast", ["y__ortpool_f32"], ["y"]),
    ]


def test_selection_by_op_name_and_exclude() -> None:
    model = nested_model()
    _, report = ortpool.rewrite.rewrite_with_report(model, ops="AveragePool", exclude=["scan_pool"])
    assert sorted(n.name for n in report.changed) == ["deep_else", "else_pool"]
    reasons = {n.name: n.reason for n in report.left_alone}
    assert reasons["main_pool"] == "not selected: ops AveragePool"
    assert reasons["scan_pool"] == "not selected: named by exclude"  # as the caller spells it
    _, report = ortpool.rewrite.rewrite_with_report(model, nodes=["fn_pool", "main_pool"])
    assert sorted(n.name for n in report.changed) == ["fn_pool", "main_pool"]
    assert {n.reason for n in report.left_alone} == {"not selected: not named by nodes"}


def test_selection_errors() -> None:
    with pytest.raises(
        OrtpoolError, match=r"^nodes: no pooling node is named 'nope'$"
    ):
        ortpool.rewrite(nested_model(), nodes=["nope"])
    with pytest.raises(
        OrtpoolError,
        match=r"^ops: 'Conv' is not a pooling operator; choose from "
        r"MaxPool,AveragePool,MaxUnpool,LpPool,GlobalMaxPool,GlobalAveragePool,GlobalLpPool,"
        r"MaxRoiPool$",
    ):
        ortpool.rewrite(nested_model(), ops="MaxPool,Conv")


def test_restore_refuses_another_version() -> None:
    node = h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2])
    rewritten = ortpool.rewrite(one_node_model(node, 10))
    rewritten.opset_import[0].version = 12
    with pytest.raises(OrtpoolError) as caught:
        ortpool.restore(rewritten)
    assert str(caught.value) == (
        "node 'p' (MaxPool-10): ai.onnx opset 12 gives MaxPool version 12; restoring MaxPool_10 "
        "there would change what the node computes"
    )
    out, report = ortpool.rewrite.restore_with_report(rewritten, skip_invalid=True)
    assert out == rewritten and report.nodes[0].invalid


def test_restore_drops_defaults_and_keeps_the_rest() -> None:
    node = h.make_node(
        "AveragePool",
        ["x"],
        ["y"],
        name="p",
        kernel_shape=[3, 3],
        strides=[1, 1],
        pads=[0, 0, 0, 0],
        count_include_pad=1,
        ceil_mode=0,
    )
    model = one_node_model(node, 19)
    back = ortpool.restore(ortpool.rewrite(model))
    (restored,) = back.graph.node
    assert {a.name: onnx.helper.get_attribute_value(a) for a in restored.attribute} == {
        "count_include_pad": 1,
        "kernel_shape": [3, 3],
    }
    assert_same_up_to_defaults(model, back)


def test_callable_package_and_lazy_names() -> None:
    import importlib

    import ortpool.rewrite as package

    assert ortpool.rewrite is package and callable(ortpool.rewrite)
    assert ortpool.restore is importlib.import_module("ortpool.rewrite").restore
    node = h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2])
    assert ortpool.rewrite(one_node_model(node)).graph.node[0].op_type == "MaxPool_12"


def test_input_model_is_not_changed() -> None:
    model = nested_model()
    before = model.SerializeToString()
    ortpool.rewrite(model)
    assert model.SerializeToString() == before


def _nested_functions(read: str) -> onnx.ModelProto:
    """F calls G, whose MaxPool is retargeted; F's Relu reads the call's output ("read"), or
    a Relu in an If branch of F does ("branch"), or F passes it on ("passed-on")."""
    imports = [h.make_opsetid("", 17), h.make_opsetid("local", 1)]
    inner = h.make_function("local", "G", ["gx"], ["gy"], [
        h.make_node("MaxPool", ["gx"], ["gy"], name="gpool", kernel_shape=[2, 2])], imports)
    nodes = [h.make_node("G", ["fx"], ["fy" if read == "passed-on" else "ft"], domain="local",
                         name="gcall")]
    if read == "read":
        nodes.append(h.make_node("Relu", ["ft"], ["fy"], name="frelu"))
    if read == "branch":
        branch = h.make_graph([h.make_node("Relu", ["ft"], ["bo"], name="brelu")], "b", [],
                              [vi("bo")])
        nodes += [h.make_node("Constant", [], ["c"], value=h.make_tensor("c", T.BOOL, [], [1])),
                  h.make_node("If", ["c"], ["fy"], name="fif", then_branch=branch,
                              else_branch=branch)]
    outer = h.make_function("local", "F", ["fx"], ["fy"], nodes, imports)
    graph = h.make_graph([h.make_node("F", ["x"], ["t"], domain="local", name="fcall"),
                          h.make_node("Relu", ["t"], ["y"], name="relu")], "g",
                         [vi("x", T.FLOAT, [1, 1, 4, 4])], [vi("y", T.FLOAT, [1, 1, 3, 3])])
    model = h.make_model(graph, opset_imports=imports, functions=[inner, outer])
    model.ir_version = 10
    return model


@pytest.mark.parametrize("read", ["read", "branch", "passed-on"])
def test_a_pool_in_a_function_whose_call_a_function_body_reads(read: str) -> None:
    """onnxruntime types a call inside a function's body from the called body, and no type
    passes an ortpool op (a value_info in the body does not help): the rewrite of G's MaxPool,
    whose call F's Relu reads, wrote a model no session loads ("Node (fcall) Op (F) ...
    (op_type:Relu, node name: frelu): Input 0 expected to have type but instead is null").
    Such a node is left alone; a call whose output F passes on is declared in the graph."""
    model = _nested_functions(read)
    out, report = ortpool.rewrite.rewrite_with_report(model)
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    (y,) = ortpool.InferenceSession(out).run(None, {"x": x})
    np.testing.assert_array_equal(y, [[[[5, 6, 7], [9, 10, 11], [13, 14, 15]]]])
    (entry,) = report.nodes
    if read == "passed-on":
        assert entry.status == "retargeted"
        return
    assert (entry.status, entry.reason) == ("left alone", (
        "function local.G is called in the body of function local.F, which reads the call's "
        "output: onnxruntime types such a call from the called body, and no type passes an "
        "ortpool op"))
