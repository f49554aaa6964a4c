#!/usr/bin/env python
"""Generate ortpool's bundled models into ``models/`` (installed as ``ortpool/models/``), the
package data ``ortpool validate`` checks by default (deterministic: same bytes every run).

* ``<op>-<version>.onnx``: one small model per (operator, spec version), at the opset that
  introduced that version, with attributes that version is known for (Indices, storage_order,
  ceil_mode, dilations, auto_pad, count_include_pad, output_shape, 1-D and 3-D inputs).
* ``cnn.onnx``: a small CNN: Conv -> MaxPool with Indices -> MaxUnpool (output_shape) ->
  AveragePool SAME_UPPER -> ceil-mode MaxPool -> If (MaxPool in one branch, AveragePool in the
  other) and a float16 path (Cast -> MaxPool -> AveragePool -> Cast).
* ``ort-defect-*.onnx``: valid models where onnxruntime's built-in pooling is known to differ from
  the spec (rulings 2, 3); they are what ``ortpool validate`` exists for.
* the same one model per version for LpPool, GlobalMaxPool, GlobalAveragePool, GlobalLpPool and
  MaxRoiPool (its RoIs an initializer, scaled by 1/4); onnxruntime 1.31 has no kernel for LpPool-1,
  GlobalLpPool-1 and -22, MaxRoiPool-22 (they run once rewritten).
* ``fix/fix-*.onnx``: one model per defect class of onnxruntime's pooling (SAME with dilation,
  VALID with ceil_mode, pads >= kernel, NaN, missing kernels, and the same in an If branch and a
  local function), each inside a small Conv/Relu CNN: what ``ortpool fix`` exists for.

Every model is stamped with the lowest IR version (>= 7) its opsets need, at most 10, so every
supported onnxruntime reads all of them (1.21 reads IR <= 10; 1.21 to 1.32 have no kernel for
AveragePool-1 and -22: those two run only once rewritten).
Run: ``python scripts/make_models.py [OUT_DIR]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

ROOT = Path(__file__).resolve().parent.parent
PRODUCER = "ortpool scripts/make_models.py"


def _model(graph: onnx.GraphProto, opset: int, doc: str) -> onnx.ModelProto:
    imports = [h.make_opsetid("", opset)]
    model = h.make_model(graph, opset_imports=imports, producer_name=PRODUCER)
    model.producer_version = "1"
    # IR 7 at least (IR < 4 demands shapes on every output); onnxruntime 1.21 reads up to 10.
    model.ir_version = max(7, h.find_min_ir_version_for(imports))
    model.doc_string = doc
    onnx.checker.check_model(model)
    return model


def _vi(name: str, elem: int, shape: list[int | None] | int) -> onnx.ValueInfoProto:
    """A tensor value; an int ``shape`` is a rank with unknown sizes (outputs: the sizes are
    what is under test, so the model does not state them)."""
    dims = [None] * shape if isinstance(shape, int) else shape
    return h.make_tensor_value_info(name, elem, dims)


def _single(
    op: str, version: int, shape: list[int], attrs: dict, *, indices: bool = False,
    elem: int = T.FLOAT, doc: str = "", opset: int | None = None,
) -> onnx.ModelProto:
    outputs = ["Y", "Indices"] if indices else ["Y"]
    node = h.make_node(op, ["X"], outputs, name=f"{op.lower()}{version}", **attrs)
    graph = h.make_graph(
        [node], f"{op}-{version}", [_vi("X", elem, shape)],
        [_vi("Y", elem, len(shape))] + ([_vi("Indices", T.INT64, len(shape))] if indices else []),
    )
    return _model(graph, opset or version, doc or f"{op}-{version}: {attrs}")


def _unpool(version: int, shape: list[int], attrs: dict, with_shape: bool) -> onnx.ModelProto:
    """MaxPool with Indices feeding MaxUnpool (optionally with output_shape = X's shape)."""
    nodes = [h.make_node("MaxPool", ["X"], ["P", "I"], name="pool", **attrs)]
    inputs = ["P", "I"]
    if with_shape:
        nodes.append(h.make_node("Shape", ["X"], ["S"], name="shape"))
        inputs.append("S")
    nodes.append(h.make_node("MaxUnpool", inputs, ["Y"], name=f"maxunpool{version}", **attrs))
    graph = h.make_graph(nodes, f"MaxUnpool-{version}", [_vi("X", T.FLOAT, shape)],
                         [_vi("Y", T.FLOAT, len(shape))])
    doc = f"MaxUnpool-{version}: MaxPool with Indices -> MaxUnpool {attrs}"
    return _model(graph, version, doc + (" with output_shape" if with_shape else ""))


def per_version_models() -> dict[str, onnx.ModelProto]:
    s2 = {"kernel_shape": [3, 3], "strides": [2, 2]}
    return {
        "maxpool-1": _single("MaxPool", 1, [1, 3, 16, 16], {**s2, "pads": [1, 1, 1, 1]}),
        "maxpool-8": _single(
            "MaxPool", 8, [1, 3, 16, 16], {**s2, "storage_order": 1}, indices=True
        ),
        "maxpool-10": _single(
            "MaxPool", 10, [1, 3, 16, 16],
            {**s2, "ceil_mode": 1, "dilations": [2, 2], "pads": [0, 0, 1, 1]}, indices=True,
        ),
        "maxpool-11": _single(
            "MaxPool", 11, [1, 3, 15, 15], {**s2, "auto_pad": "SAME_UPPER"}, indices=True
        ),
        "maxpool-12": _single(
            "MaxPool", 12, [1, 3, 16, 16],
            {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [2, 2, 2, 2]},
            elem=T.UINT8,
        ),
        "maxpool-22": _single(
            "MaxPool", 22, [1, 2, 7, 7, 7],
            {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2], "ceil_mode": 1}, indices=True,
        ),
        "averagepool-1": _single(
            "AveragePool", 1, [1, 3, 16, 16], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
        ),
        "averagepool-7": _single(
            "AveragePool", 7, [1, 3, 16, 16],
            {**s2, "pads": [1, 1, 1, 1], "count_include_pad": 1},
        ),
        "averagepool-10": _single(
            "AveragePool", 10, [1, 3, 16, 16], {**s2, "ceil_mode": 1, "pads": [1, 1, 0, 0]}
        ),
        "averagepool-11": _single(
            "AveragePool", 11, [1, 3, 16],
            {"kernel_shape": [4], "strides": [3], "auto_pad": "SAME_LOWER"},
        ),
        "averagepool-19": _single(
            "AveragePool", 19, [1, 3, 16, 16],
            {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [2, 2, 2, 2],
             "count_include_pad": 1},
        ),
        "averagepool-22": _single(
            "AveragePool", 22, [1, 3, 16, 16], {**s2, "ceil_mode": 1}, elem=T.DOUBLE
        ),
        "maxunpool-9": _unpool(9, [1, 3, 16, 16], {"kernel_shape": [2, 2], "strides": [2, 2]},
                               False),
        "maxunpool-11": _unpool(11, [1, 3, 15, 15], {"kernel_shape": [2, 2], "strides": [2, 2]},
                                True),
        "maxunpool-22": _unpool(
            22, [1, 3, 15, 15], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
            False,
        ),
    }


def _roi_pool(version: int) -> onnx.ModelProto:
    """MaxRoiPool on a 1x3x16x16 map: three RoIs in input coordinates (scale 1/4: a feature map
    of stride 4), one across the border, one degenerate (x2 < x1)."""
    rois = numpy_helper.from_array(
        np.array([[0, 4, 6, 50, 40], [0, -10, 30, 90, 70], [0, 33, 33, 20, 20]], np.float32),
        "rois",
    )
    node = h.make_node("MaxRoiPool", ["X", "rois"], ["Y"], name=f"maxroipool{version}",
                       pooled_shape=[3, 2], spatial_scale=0.25)
    graph = h.make_graph([node], f"MaxRoiPool-{version}", [_vi("X", T.FLOAT, [1, 3, 16, 16])],
                         [_vi("Y", T.FLOAT, 4)], [rois])
    return _model(graph, version, f"MaxRoiPool-{version}: 3 RoIs, 3x2 bins, scale 1/4")


def family_models() -> dict[str, onnx.ModelProto]:
    s2 = {"kernel_shape": [3, 3], "strides": [2, 2]}
    return {
        "lppool-1": _single("LpPool", 1, [1, 3, 16, 16], {**s2, "p": 3.0}),
        # onnx knows no IR version for opset 2: version 2 at opset 7 (in force from 2 to 10).
        "lppool-2": _single("LpPool", 2, [1, 3, 16], {"kernel_shape": [4], "strides": [2],
                                                      "pads": [1, 2], "p": 1}, opset=7),
        "lppool-11": _single("LpPool", 11, [1, 3, 15, 15], {**s2, "auto_pad": "SAME_UPPER"}),
        "lppool-18": _single(
            "LpPool", 18, [1, 3, 16, 16],
            {**s2, "ceil_mode": 1, "dilations": [2, 2], "pads": [0, 0, 1, 1], "p": 3},
        ),
        "lppool-22": _single("LpPool", 22, [1, 2, 7, 7, 7],
                             {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2], "p": 4}),
        "globalmaxpool-1": _single("GlobalMaxPool", 1, [1, 3, 16, 16], {}),
        "globalmaxpool-22": _single("GlobalMaxPool", 22, [1, 3, 5, 6, 7], {}),
        "globalaveragepool-1": _single("GlobalAveragePool", 1, [1, 8, 7, 7], {}),
        "globalaveragepool-22": _single("GlobalAveragePool", 22, [1, 4, 300], {}),
        "globallppool-1": _single("GlobalLpPool", 1, [1, 3, 16, 16], {"p": 1.5}),
        "globallppool-2": _single("GlobalLpPool", 2, [1, 3, 16, 16], {}, opset=7),
        "globallppool-22": _single("GlobalLpPool", 22, [1, 3, 9, 9], {"p": 3}),
        "maxroipool-1": _roi_pool(1),
        "maxroipool-22": _roi_pool(22),
    }


def cnn_model() -> onnx.ModelProto:
    rng = np.random.default_rng(20240601)
    weight = numpy_helper.from_array(
        (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32), "conv.weight"
    )
    bias = numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32), "conv.bias")
    then_branch = h.make_graph(
        [h.make_node("MaxPool", ["pooled"], ["branch_out"], name="if_then_maxpool",
                     kernel_shape=[2, 2], strides=[2, 2])],
        "then", [], [_vi("branch_out", T.FLOAT, 4)],
    )
    else_branch = h.make_graph(
        [h.make_node("AveragePool", ["pooled"], ["branch_avg"], name="if_else_averagepool",
                     kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1],
                     count_include_pad=1)],
        "else", [], [_vi("branch_avg", T.FLOAT, 4)],
    )
    nodes = [
        h.make_node("Conv", ["image", "conv.weight", "conv.bias"], ["conv"], name="conv",
                    kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["conv"], ["relu"], name="relu"),
        h.make_node("MaxPool", ["relu"], ["down", "down_indices"], name="maxpool_indices",
                    kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("Shape", ["relu"], ["relu_shape"], name="relu_shape"),
        h.make_node("MaxUnpool", ["down", "down_indices", "relu_shape"], ["up"], name="maxunpool",
                    kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("AveragePool", ["up"], ["smooth"], name="averagepool_same",
                    kernel_shape=[3, 3], auto_pad="SAME_UPPER"),
        h.make_node("MaxPool", ["smooth"], ["pooled"], name="maxpool_ceil",
                    kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        h.make_node("If", ["use_max"], ["head"], name="branch",
                    then_branch=then_branch, else_branch=else_branch),
        h.make_node("Cast", ["image"], ["image_half"], name="to_half", to=T.FLOAT16),
        h.make_node("MaxPool", ["image_half"], ["half_max"], name="maxpool_half",
                    kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("AveragePool", ["half_max"], ["half_avg"], name="averagepool_half",
                    kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node("Cast", ["half_avg"], ["half_out"], name="from_half", to=T.FLOAT),
    ]
    graph = h.make_graph(
        nodes, "cnn",
        [_vi("image", T.FLOAT, [1, 3, 16, 16]), _vi("use_max", T.BOOL, [])],
        [_vi("head", T.FLOAT, 4), _vi("half_out", T.FLOAT, 4)],
        [weight, bias],
    )
    return _model(graph, 13, "small CNN exercising every pooling feature ortpool rewrites")


def defect_models() -> dict[str, onnx.ModelProto]:
    return {
        # ruling 2: SAME pads from the dilated kernel span; ORT uses the undilated kernel.
        "ort-defect-same-dilated": _single(
            "MaxPool", 12, [1, 2, 9, 9],
            {"kernel_shape": [3, 3], "dilations": [2, 2], "auto_pad": "SAME_UPPER"},
            doc="MaxPool-12 SAME_UPPER with dilations: ORT pads for the undilated kernel",
        ),
        # ruling 3: VALID ignores ceil_mode; ORT makes the output one larger.
        "ort-defect-valid-ceil": _single(
            "AveragePool", 19, [1, 2, 8, 8],
            {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "VALID", "ceil_mode": 1},
            doc="AveragePool-19 VALID with ceil_mode: ORT gives a larger output",
        ),
    }


def all_models() -> dict[str, onnx.ModelProto]:
    return {**per_version_models(), "cnn": cnn_model(), **defect_models(), **family_models()}


# --- models/fix/: each defect class of onnxruntime's pooling inside a small Conv/Relu CNN
# (``ortpool fix`` turns each into a form the runtime computes exactly, or ortpool's op).


def _conv(rng: np.random.Generator, name: str, cin: int, cout: int, elem=np.float32):
    weight = numpy_helper.from_array(
        (rng.standard_normal((cout, cin, 3, 3)) * 0.3).astype(elem), f"{name}.weight"
    )
    bias = numpy_helper.from_array((rng.standard_normal(cout) * 0.1).astype(elem), f"{name}.bias")
    return weight, bias


def _cnn(name: str, pools: list, opset: int, doc: str, *, shape=(1, 3, 16, 16), elem=T.FLOAT,
         channels: int = 8, extra_nodes=(), functions=(), extra_imports=(),
         extra_inputs=(), extra_initializers=()) -> onnx.ModelProto:
    """image -> Conv -> Relu -> ``pools`` (each reads the previous value) -> Conv -> out."""
    rng = np.random.default_rng(sum(map(ord, name)))
    np_elem = np.float64 if elem == T.DOUBLE else np.float32
    w1, b1 = _conv(rng, "conv1", shape[1], channels, np_elem)
    w2, b2 = _conv(rng, "conv2", channels, channels, np_elem)
    nodes = [
        h.make_node("Conv", ["image", w1.name, b1.name], ["c1"], name="conv1",
                    kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    ]
    value = "r1"
    for pool in pools:
        pool.input[0] = value
        nodes.append(pool)
        value = pool.output[0]
    nodes += list(extra_nodes)
    if extra_nodes:
        value = extra_nodes[-1].output[0]
    nodes.append(h.make_node("Conv", [value, w2.name, b2.name], ["out"], name="conv2",
                             kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    graph = h.make_graph(nodes, name, [_vi("image", elem, list(shape)), *extra_inputs],
                         [_vi("out", elem, 4)], [w1, b1, w2, b2, *extra_initializers])
    imports = [h.make_opsetid("", opset), *extra_imports]
    model = h.make_model(graph, opset_imports=imports, producer_name=PRODUCER,
                         functions=list(functions))
    model.producer_version = "1"
    model.ir_version = max(7, h.find_min_ir_version_for(imports[:1]))
    model.doc_string = doc
    onnx.checker.check_model(model)
    return model


def fix_models() -> dict[str, onnx.ModelProto]:
    """One model per defect class of onnxruntime 1.31's pooling, each inside a Conv/Relu CNN."""
    pool = h.make_node
    return {
        # ruling 2: SAME pads from the dilated span; onnxruntime pads for the undilated one.
        "fix-same-dilated": _cnn("fix-same-dilated", [
            pool("MaxPool", ["?"], ["p1"], name="maxpool_same_dilated", kernel_shape=[3, 3],
                 dilations=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER"),
            pool("AveragePool", ["?"], ["p2"], name="averagepool_same_dilated",
                 kernel_shape=[3, 3], dilations=[2, 2], auto_pad="SAME_LOWER"),
        ], 19, "SAME with dilation: onnxruntime pads for the undilated kernel"),
        # ruling 3: VALID ignores ceil_mode; onnxruntime grows the output.
        "fix-valid-ceil": _cnn("fix-valid-ceil", [
            pool("MaxPool", ["?"], ["p1"], name="maxpool_valid_ceil", kernel_shape=[3, 3],
                 strides=[2, 2], auto_pad="VALID", ceil_mode=1),
            pool("AveragePool", ["?"], ["p2"], name="averagepool_valid_ceil",
                 kernel_shape=[2, 2], strides=[2, 2], auto_pad="VALID", ceil_mode=1),
        ], 13, "VALID with ceil_mode: onnxruntime gives a larger output"),
        # ruling 5: pads >= kernel are legal and give empty windows; onnxruntime refuses them.
        "fix-pads-ge-kernel": _cnn("fix-pads-ge-kernel", [
            pool("MaxPool", ["?"], ["p1"], name="maxpool_big_pads", kernel_shape=[2, 2],
                 strides=[2, 2], pads=[2, 2, 2, 2]),
            pool("AveragePool", ["?"], ["p2"], name="averagepool_big_pads", kernel_shape=[2, 2],
                 pads=[2, 2, 2, 2], count_include_pad=1),
        ], 19, "pads >= kernel (empty windows): onnxruntime refuses the nodes"),
        # ruling 6: NaN propagates; onnxruntime skips a NaN unless it is the window's first
        # tap (and gives -3.4e38 for a window of -inf only): ortpool fix --nonfinite.
        "fix-nan": _cnn("fix-nan", [
            pool("MaxPool", ["?"], ["p1"], name="maxpool_stem", kernel_shape=[3, 3],
                 strides=[2, 2], pads=[1, 1, 1, 1]),
            pool("GlobalMaxPool", ["?"], ["p2"], name="globalmaxpool_head"),
        ], 13, "NaN in a MaxPool window and a GlobalMaxPool plane: onnxruntime skips it (fix "
           "with --nonfinite)"),
        # No kernel: bfloat16 MaxPool-22 (exact in float32 between Casts) and double
        # AveragePool (no exact standard form: ortpool's op).
        "fix-no-kernel": _no_kernel_model(),
        # AveragePool-1 (opsets 1-6): onnxruntime registers AveragePool from version 7.
        "fix-averagepool-1": _cnn("fix-averagepool-1", [
            pool("AveragePool", ["?"], ["p1"], name="averagepool_v1", kernel_shape=[3, 3],
                 pads=[1, 1, 1, 1]),
        ], 6, "AveragePool-1: onnxruntime has no kernel"),
        # The same defects inside an If branch and a model-local function.
        "fix-branches": _branches_model(),
        # LpPool (ruling 12) with onnxruntime's window defects: SAME with dilation, VALID
        # with ceil_mode, pads >= kernel; GlobalLpPool-22 has no kernel at all.
        "fix-lppool": _cnn("fix-lppool", [
            pool("LpPool", ["?"], ["p1"], name="lppool_same_dilated", kernel_shape=[3, 3],
                 dilations=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER", p=2),
            pool("LpPool", ["?"], ["p2"], name="lppool_valid_ceil", kernel_shape=[3, 3],
                 strides=[2, 2], auto_pad="VALID", ceil_mode=1, p=3),
            pool("LpPool", ["?"], ["p3"], name="lppool_big_pads", kernel_shape=[2, 2],
                 pads=[2, 2, 2, 2], p=1),
            pool("GlobalLpPool", ["?"], ["p4"], name="globallppool_head", p=2),
        ], 22, "LpPool SAME+dilation, VALID+ceil_mode, pads >= kernel; GlobalLpPool-22 (no "
           "onnxruntime kernel)"),
        # ruling 13: a float32 running sum over a 512x512 plane loses digits
        # (microsoft/onnxruntime#12043); MaxRoiPool-22 has no onnxruntime kernel.
        "fix-global-large": _global_large_model(),
    }


def _global_large_model() -> onnx.ModelProto:
    rois = numpy_helper.from_array(
        np.array([[0, 0, 0, 255, 255], [0, 128, 64, 511, 300]], np.float32), "rois"
    )
    extra = [
        h.make_node("MaxRoiPool", ["r1", "rois"], ["roi"], name="maxroipool_v22",
                    pooled_shape=[4, 4], spatial_scale=0.5),
        h.make_node("GlobalAveragePool", ["roi"], ["roi_mean"], name="globalaveragepool_rois"),
        h.make_node("GlobalAveragePool", ["r1"], ["mean"], name="globalaveragepool_plane"),
        h.make_node("Mul", ["roi_mean", "mean"], ["head"], name="head"),
    ]
    extra[0].input[0] = "r1"
    return _cnn("fix-global-large", [], 22, "GlobalAveragePool over a 512x512 plane (float32 "
                "accumulation), MaxRoiPool-22 (no onnxruntime kernel)", shape=(1, 3, 512, 512),
                channels=4, extra_nodes=extra, extra_initializers=[rois])


def _no_kernel_model() -> onnx.ModelProto:
    half = [
        h.make_node("Cast", ["?"], ["r1_bf16"], name="to_bfloat16", to=T.BFLOAT16),
        h.make_node("MaxPool", ["r1_bf16"], ["p1_bf16"], name="maxpool_bfloat16",
                    kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("Cast", ["p1_bf16"], ["p1"], name="from_bfloat16", to=T.FLOAT),
        h.make_node("Cast", ["p1"], ["p1_f64"], name="to_double", to=T.DOUBLE),
        h.make_node("AveragePool", ["p1_f64"], ["p2_f64"], name="averagepool_double",
                    kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node("Cast", ["p2_f64"], ["p2"], name="from_double", to=T.FLOAT),
    ]
    half[0].input[0] = "r1"
    return _cnn("fix-no-kernel", [], 22, "no onnxruntime kernel: bfloat16 MaxPool-22, double "
                "AveragePool-22", extra_nodes=half)


def _branches_model() -> onnx.ModelProto:
    then_branch = h.make_graph(
        [h.make_node("MaxPool", ["r1"], ["branch_max"], name="if_maxpool_big_pads",
                     kernel_shape=[2, 2], strides=[2, 2], pads=[2, 2, 2, 2])],
        "then", [], [_vi("branch_max", T.FLOAT, 4)],
    )
    else_branch = h.make_graph(
        [h.make_node("AveragePool", ["r1"], ["branch_avg"], name="if_averagepool_valid_ceil",
                     kernel_shape=[3, 3], strides=[2, 2], auto_pad="VALID", ceil_mode=1)],
        "else", [], [_vi("branch_avg", T.FLOAT, 4)],
    )
    block = h.make_function(
        "local", "block", ["x"], ["y"],
        [h.make_node("MaxPool", ["x"], ["m"], name="fn_maxpool_same_dilated",
                     kernel_shape=[3, 3], dilations=[2, 2], auto_pad="SAME_UPPER"),
         h.make_node("Relu", ["m"], ["y"], name="fn_relu")],
        [h.make_opsetid("", 19)],
    )
    extra = [
        h.make_node("If", ["use_max"], ["branch"], name="branch", then_branch=then_branch,
                    else_branch=else_branch),
        h.make_node("block", ["branch"], ["blocked"], name="call_block", domain="local"),
    ]
    return _cnn("fix-branches", [], 19, "pools in an If branch and in a local function",
                extra_nodes=extra, functions=[block], extra_imports=[h.make_opsetid("local", 1)],
                extra_inputs=[_vi("use_max", T.BOOL, [])])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "models",
                        help="the folder to write (default: models/)")
    out = parser.parse_args(argv).out
    out.mkdir(parents=True, exist_ok=True)
    for name, model in all_models().items():
        (out / f"{name}.onnx").write_bytes(model.SerializeToString(deterministic=True))
    fix_dir = out / "fix"
    fix_dir.mkdir(exist_ok=True)
    for name, model in fix_models().items():
        (fix_dir / f"{name}.onnx").write_bytes(model.SerializeToString(deterministic=True))
    print(f"wrote {len(all_models())} models to {out}, {len(fix_models())} to {fix_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
