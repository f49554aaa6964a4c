"""``ortpool rewrite`` / ``restore`` on LpPool, the global pools and MaxRoiPool: the op type of
the governing version, every attribute written (floats as repr strings), Cast pairs for
float16/bfloat16 (MaxRoiPool's rois too), subgraphs and functions, the round trip, the refusals."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import ortpool
from ortpool import kernels
from ortpool import versions as ortpool_versions
from ortpool.errors import OrtpoolError
from ortpool.rewrite import CAST_MARK
from ortpool.validate.validator import bundled_models_dir
from tests import support
from tests.support.rewrite import assert_same_up_to_defaults, vi

X_SHAPE = [2, 3, 9, 10]


def _model(nodes, opset, elem=T.FLOAT, extra_inputs=(), outputs=None, ir=8):
    inputs = [vi("x", elem, X_SHAPE), *extra_inputs]
    names = outputs or [n.output[0] for n in nodes]
    graph = h.make_graph(nodes, "g", inputs, [vi(o, elem, None) for o in names])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = ir
    return model


ROIS = np.array([[0, 0.5, 1, 7.5, 8], [1, 2, 2, 4, 9], [0, -3, -3, 20, 20]], np.float32)


def _family_nodes(opset: int, p_float: bool):
    p = 3.0 if p_float else 3
    return [
        h.make_node("LpPool", ["x"], ["lp"], name="lp", kernel_shape=[3, 3], strides=[2, 2],
                    pads=[1, 1, 1, 1], p=p),
        h.make_node("GlobalMaxPool", ["x"], ["gmax"], name="gmax"),
        h.make_node("GlobalAveragePool", ["x"], ["gavg"], name="gavg"),
        h.make_node("GlobalLpPool", ["x"], ["glp"], name="glp", p=p),
        h.make_node("MaxRoiPool", ["x", "rois"], ["roi"], name="roi", pooled_shape=[2, 3],
                    spatial_scale=0.5),
    ]


@pytest.mark.parametrize(
    ("opset", "ir", "expected"),
    [
        (1, 3, ["LpPool_1", "GlobalMaxPool_1", "GlobalAveragePool_1", "GlobalLpPool_1",
                "MaxRoiPool_1"]),
        (10, 8, ["LpPool_2", "GlobalMaxPool_1", "GlobalAveragePool_1", "GlobalLpPool_2",
                 "MaxRoiPool_1"]),
        (18, 8, ["LpPool_18", "GlobalMaxPool_1", "GlobalAveragePool_1", "GlobalLpPool_2",
                 "MaxRoiPool_1"]),
        (22, 10, ["LpPool_22", "GlobalMaxPool_22", "GlobalAveragePool_22", "GlobalLpPool_22",
                  "MaxRoiPool_22"]),
    ],
)
def test_every_new_op_retargeted_run_and_restored(opset, ir, expected):
    nodes = _family_nodes(opset, p_float=opset == 1)
    model = _model(nodes, opset, extra_inputs=[vi("rois", T.FLOAT, [3, 5])], ir=ir)
    rewritten, report = ortpool.rewrite.rewrite_with_report(model)
    assert [n.op_type for n in rewritten.graph.node] == expected
    assert all(n.domain == "ortpool" for n in rewritten.graph.node)
    assert report.counts() == {f"{op}-{t.split('_')[1]}": 1 for op, t in zip(
        ["LpPool", "GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool", "MaxRoiPool"],
        expected, strict=True)}
    attrs = {n.name: {a.name: h.get_attribute_value(a) for a in n.attribute}
             for n in rewritten.graph.node}
    assert attrs["roi"] == {"pooled_shape": b"2,3", "spatial_scale": b"0.5"}
    assert attrs["glp"] == {"p": b"3.0" if opset == 1 else 3}
    assert attrs["gmax"] == {}

    x = np.random.default_rng(opset).standard_normal(X_SHAPE).astype(np.float32)
    got = ortpool.InferenceSession(rewritten).run(None, {"x": x, "rois": ROIS})
    versions = [int(t.split("_")[1]) for t in expected]
    p = 3.0 if opset == 1 else 3
    want = [
        kernels.lp_pool(x, version=versions[0], kernel_shape=[3, 3], strides=[2, 2],
                        pads=[1, 1, 1, 1], p=p),
        kernels.global_max_pool(x, version=versions[1]),
        kernels.global_average_pool(x, version=versions[2]),
        kernels.global_lp_pool(x, version=versions[3], p=p),
        kernels.max_roi_pool(x, ROIS, version=versions[4], pooled_shape=[2, 3], spatial_scale=0.5),
    ]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)

    back = ortpool.restore(rewritten)
    assert back == model  # no default was stated: the very same proto


@pytest.mark.parametrize("elem", [T.FLOAT16, T.BFLOAT16])
def test_half_types_get_cast_pairs_rois_included(elem):
    nodes = _family_nodes(22, p_float=False)
    model = _model(nodes, 22, elem=elem, extra_inputs=[vi("rois", elem, [3, 5])], ir=10)
    rewritten, report = ortpool.rewrite.rewrite_with_report(model)
    kinds = [(n.op_type, list(n.input)) for n in rewritten.graph.node]
    roi_at = next(i for i, (t, _) in enumerate(kinds) if t == "MaxRoiPool_22")
    # X and rois each cast to float32 right before MaxRoiPool, Y cast back right after.
    assert kinds[roi_at - 2] == ("Cast", ["x"]) and kinds[roi_at - 1] == ("Cast", ["rois"])
    assert kinds[roi_at][1] == ["x__ortpool_f32_5", "rois__ortpool_f32"]
    assert rewritten.graph.node[roi_at + 1].op_type == "Cast"
    assert all(n.doc_string.startswith(CAST_MARK) for n in rewritten.graph.node
               if n.op_type == "Cast")
    assert sum(n.op_type == "Cast" for n in rewritten.graph.node) == 5 * 2 + 1
    assert {e.cast for e in report.nodes} == {onnx.TensorProto.DataType.Name(elem).lower()}
    assert ortpool.restore(rewritten) == model
    if elem == T.BFLOAT16:
        return  # onnxruntime 1.31's Python API takes no bfloat16 array as a feed

    from ortpool import dtypes

    np_type = dtypes.NUMPY[onnx.TensorProto.DataType.Name(elem).lower()]
    x = np.random.default_rng(1).standard_normal(X_SHAPE).astype(np_type)
    got = ortpool.InferenceSession(rewritten).run(None, {"x": x, "rois": ROIS.astype(np_type)})
    x32 = x.astype(np.float32)
    np.testing.assert_array_equal(
        got[4], kernels.max_roi_pool(x32, ROIS.astype(np_type).astype(np.float32),
                                     pooled_shape=[2, 3], spatial_scale=0.5).astype(np_type))
    np.testing.assert_array_equal(got[2], kernels.global_average_pool(x32).astype(np_type))


def test_new_ops_in_subgraphs_and_functions():
    """A GlobalAveragePool in both If branches and an LpPool-11 in a function importing opset 11
    (the model imports 22)."""
    branch = h.make_graph([h.make_node("GlobalAveragePool", ["x"], ["b"], name="inner")],
                          "branch", [], [vi("b", T.FLOAT, None)])
    fn = h.make_function(
        "local", "block", ["a"], ["z"],
        [h.make_node("LpPool", ["a"], ["z"], name="fn_lp", kernel_shape=[2, 2], p=1)],
        opset_imports=[h.make_opsetid("", 11)],
    )
    nodes = [
        h.make_node("If", ["cond"], ["y"], name="if", then_branch=branch, else_branch=branch),
        h.make_node("block", ["x"], ["z"], domain="local", name="call"),
    ]
    graph = h.make_graph(nodes, "g", [vi("cond", T.BOOL, []), vi("x", T.FLOAT, X_SHAPE)],
                         [vi("y", T.FLOAT, None), vi("z", T.FLOAT, None)])
    model = h.make_model(graph, functions=[fn], opset_imports=[h.make_opsetid("", 22),
                                                                h.make_opsetid("local", 1)])
    model.ir_version = 10
    rewritten, report = ortpool.rewrite.rewrite_with_report(model)
    assert report.counts() == {"GlobalAveragePool-22": 2, "LpPool-11": 1}
    assert rewritten.functions[0].node[0].op_type == "LpPool_11"
    x = np.random.default_rng(2).standard_normal(X_SHAPE).astype(np.float32)
    y, z = ortpool.InferenceSession(rewritten).run(None, {"cond": np.array(True), "x": x})
    np.testing.assert_array_equal(y, kernels.global_average_pool(x))
    np.testing.assert_array_equal(z, kernels.lp_pool(x, version=11, kernel_shape=[2, 2], p=1))
    assert_same_up_to_defaults(model, ortpool.restore(rewritten))


def test_restore_omits_defaults_of_the_new_attributes():
    model = _model([
        h.make_node("LpPool", ["x"], ["a"], name="a", kernel_shape=[2, 2], p=2.0),
        h.make_node("GlobalLpPool", ["x"], ["b"], name="b", p=2.0),
        h.make_node("MaxRoiPool", ["x", "rois"], ["c"], name="c", pooled_shape=[1, 1],
                    spatial_scale=1.0),
    ], 1, extra_inputs=[vi("rois", T.FLOAT, [1, 5])], ir=3)
    back = ortpool.restore(ortpool.rewrite(model))
    assert [[a.name for a in n.attribute] for n in back.graph.node] == [
        ["kernel_shape"], [], ["pooled_shape"]
    ]
    assert_same_up_to_defaults(model, back)


@pytest.mark.parametrize(
    ("node", "opset", "message"),
    [
        (h.make_node("LpPool", ["x"], ["y"], name="p", p=2.0), 1,
         "node 'p' (LpPool-1): attribute 'kernel_shape' is missing: this version's schema makes "
         "it optional, but no output size can be computed without it"),
        (h.make_node("LpPool", ["x"], ["y"], name="p", kernel_shape=[2, 2], p=0), 18,
         "node 'p' (LpPool-18): p=0 must be > 0 (the Lp norm needs p > 0)"),
        (h.make_node("LpPool", ["x"], ["y"], name="p", kernel_shape=[2, 2], p=2.0), 11,
         "node 'p' (LpPool-11): attribute 'p' must be of type INT, got FLOAT"),
        (h.make_node("GlobalLpPool", ["x"], ["y"], name="p", p=-1.0), 1,
         "node 'p' (GlobalLpPool-1): p=-1.0 must be a finite number > 0 (the Lp norm needs "
         "p > 0)"),
        (h.make_node("LpPool", ["x"], ["y"], name="p", kernel_shape=[2, 2], dilations=[2, 2]), 11,
         "node 'p' (LpPool-11): attribute 'dilations' does not exist in this version (it has "
         "auto_pad, kernel_shape, p, pads, strides)"),
        (h.make_node("MaxRoiPool", ["x"], ["y"], name="p", pooled_shape=[2, 2]), 22,
         "node 'p' (MaxRoiPool-22): input 'rois' is required but missing"),
        (h.make_node("MaxRoiPool", ["x", "r"], ["y"], name="p", pooled_shape=[2, 2, 2]), 22,
         "node 'p' (MaxRoiPool-22): pooled_shape='2,2,2' must have 2 values (height, width)"),
    ],
)
def test_refusals(node, opset, message):
    model = _model([node], opset, ir=3 if opset < 7 else 8)
    with pytest.raises(OrtpoolError) as info:
        ortpool.rewrite(model)
    assert str(info.value) == message
    _, report = ortpool.rewrite.rewrite_with_report(model, skip_invalid=True)
    assert report.nodes[0].reason == "invalid: " + message.split("): ", 1)[1]


def test_maxroipool_on_a_3d_input_is_refused_when_the_rank_is_known():
    node = h.make_node("MaxRoiPool", ["x", "r"], ["y"], name="p", pooled_shape=[2, 2])
    graph = h.make_graph([node], "g", [vi("x", T.FLOAT, [1, 3, 9]), vi("r", T.FLOAT, [1, 5])],
                         [vi("y", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 22)])
    with pytest.raises(OrtpoolError, match=r"^node 'p' \(MaxRoiPool-22\): the input has 1 "
                                           r"spatial axes; MaxRoiPool takes N x C x H x W$"):
        ortpool.rewrite(model)


def test_select_the_new_ops_by_name():
    model = _model(_family_nodes(22, False), 22, extra_inputs=[vi("rois", T.FLOAT, [3, 5])],
                   ir=10)
    rewritten = ortpool.rewrite(model, ops="GlobalAveragePool,MaxRoiPool")
    assert [n.op_type for n in rewritten.graph.node] == [
        "LpPool", "GlobalMaxPool", "GlobalAveragePool_22", "GlobalLpPool", "MaxRoiPool_22"
    ]


# ------------------------------------------------------------ the bundled models

FAMILY_MODELS = sorted(
    p for p in bundled_models_dir().glob("*.onnx")
    if p.stem.split("-")[0] in ("lppool", "globalmaxpool", "globalaveragepool", "globallppool",
                                "maxroipool")
)


def test_one_bundled_model_per_new_version():
    assert [p.stem for p in FAMILY_MODELS] == sorted(
        f"{op.lower()}-{v}" for op in ("LpPool", "GlobalMaxPool", "GlobalAveragePool",
                                       "GlobalLpPool", "MaxRoiPool")
        for v in ortpool_versions.versions_of(op)
    )


@pytest.mark.parametrize("path", FAMILY_MODELS, ids=lambda p: p.stem)
def test_bundled_family_model_against_the_loop_reference(path):
    """Every new version's bundled model, rewritten and run, against
    tests/support/reference_loops.py (whether or not onnxruntime has a kernel for it)."""
    from tests.support import reference_loops as ref

    model = onnx.load(path)
    node = model.graph.node[0]
    x = np.random.default_rng(7).standard_normal(
        [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    ).astype(np.float32)
    (got,) = ortpool.InferenceSession(ortpool.rewrite(model)).run(None, {"X": x})
    attrs = support.onnx_attrs(node)
    if node.op_type == "LpPool":
        expected = ref.lp_pool(x, attrs)
    elif node.op_type == "MaxRoiPool":
        rois = onnx.numpy_helper.to_array(model.graph.initializer[0])
        expected = ref.max_roi_pool(x, rois, attrs)
    else:
        expected = ref.global_pool(x, node.op_type, attrs.get("p", 2))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=2e-7 if node.op_type != "MaxRoiPool" else 0)
    assert ortpool.restore(ortpool.rewrite(model)) == model
