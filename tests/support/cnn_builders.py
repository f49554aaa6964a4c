"""Small CNNs of real networks' structure, random weights, built with onnx.helper (no torch).

``resnet_like``: torchvision's ResNet (7x7 stem, MaxPool 3x3/2, basic blocks, global average,
fully connected) at 64x64, with an Inception-style AveragePool 3x3/1 (pads 1,
count_include_pad) beside each stage's first block. Deep enough that float noise from a
different summation order reaches the logits, as it does in ResNet-50 and Inception-v3.
``resnet_d``: ResNet-D's average-pool shortcuts (k2 s2 ceil mode), reaching a 1x1 map at 32x32.
``subgraph_pool_model``: a defective-in-onnxruntime MaxPool (SAME_UPPER, dilation 2) inside
an If branch or a Loop body, where validate can only compare end to end.
``half_head``: float32 image -> float16 MaxPool -> float16 GlobalAveragePool, the pool either
plain or onnxruntime's SAME-with-dilation defect (the same [1,C,1,1] output, other values).
``unknown_hw``: ``x: [N, 3, '?', '?']`` -> Conv -> MaxPool -> Relu, H and W written as one
converter's "unknown" symbol.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.support import IR_VERSION


class _Graph:
    """Nodes and He-initialised weights, named in order."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[onnx.TensorProto] = []

    def _name(self, kind: str) -> str:
        return f"{kind}{len(self.nodes)}"

    def node(self, op: str, inputs: list[str], **attrs) -> str:
        out = self._name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def weight(self, shape: tuple[int, ...], fan_in: int) -> str:
        name = f"w{len(self.weights)}"
        values = self.rng.normal(0, np.sqrt(2 / fan_in), shape).astype(np.float32)
        self.weights.append(numpy_helper.from_array(values, name))
        return name

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, relu: bool = True) -> str:
        w = self.weight((cout, cin, k, k), cin * k * k)
        b = self.weight((cout,), cout * 50)
        pad = k // 2
        y = self.node("Conv", [x, w, b], kernel_shape=[k, k], strides=[stride] * 2,
                      pads=[pad] * 4)
        return self.node("Relu", [y]) if relu else y

    def block(self, x: str, cin: int, cout: int, stride: int) -> str:
        """A basic block: conv-relu-conv plus the shortcut (1x1 conv when the shape changes)."""
        y = self.conv(self.conv(x, cin, cout, 3, stride), cout, cout, 3, relu=False)
        short = x if stride == 1 and cin == cout else self.conv(x, cin, cout, 1, stride, False)
        return self.node("Relu", [self.node("Add", [y, short])])


def resnet_like(
    opset: int = 22, size: int = 64, widths: tuple[int, ...] = (16, 32, 64, 128),
    blocks: int = 2, classes: int = 100, seed: int = 0,
) -> onnx.ModelProto:
    """ResNet-18's layout, narrower: input ``image`` [1,3,size,size], output ``logits``."""
    g = _Graph(seed)
    x = g.conv("image", 3, widths[0], 7, 2)
    x = g.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = widths[0]
    for stage, width in enumerate(widths):
        for i in range(blocks):
            x = g.block(x, cin, width, 2 if stage and not i else 1)
            cin = width
            if not i:
                avg = g.node("AveragePool", [x], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                             count_include_pad=1)
                x = g.node("Add", [x, avg])
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x])])
    w = g.weight((classes, cin), cin)
    b = g.weight((classes,), cin)
    g.nodes.append(helper.make_node("Gemm", [x, w, b], ["logits"], name="fc", transB=1))
    graph = helper.make_graph(
        g.nodes, "resnet_like",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, classes])],
        g.weights,
    )
    return _model(graph, opset)


def resnet_d(ceil_mode: int = 1, widths: tuple[int, ...] = (8, 16, 32, 64, 64),
             seed: int = 0, opset: int = 17) -> onnx.ModelProto:
    """A ResNet-D (Bag of Tricks, timm's ``resnet*d``) of basic blocks, narrower and one stage
    deeper, random weights, batch norm folded into the convolutions' biases: input ``image``
    [N, 3, H, W] (batch and spatial dims symbolic), output ``logits``. Each downsampling block's
    shortcut is AveragePool k2 s2 ``ceil_mode``, ``count_include_pad=0``, then a 1x1 conv.
    At 32x32 the stem (/4) and four strided stages bring the last shortcut a 1x1 map: with
    ceil mode one window (RULINGS.md 19), in floor mode none."""
    g = _Graph(seed)
    x = g.conv("image", 3, widths[0], 3, 2)
    x = g.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = widths[0]
    for stage, width in enumerate(widths):
        stride = 2 if stage else 1
        y = g.conv(g.conv(x, cin, width, 3, stride), width, width, 3, relu=False)
        short = x
        if stride == 2:
            short = g.node("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2],
                           ceil_mode=ceil_mode, count_include_pad=0)
        if stride == 2 or cin != width:
            short = g.conv(short, cin, width, 1, 1, relu=False)
        x = g.node("Relu", [g.node("Add", [y, short])])
        cin = width
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x])])
    w = g.weight((10, cin), cin)
    b = g.weight((10,), cin)
    g.nodes.append(helper.make_node("Gemm", [x, w, b], ["logits"], name="fc", transB=1))
    graph = helper.make_graph(
        g.nodes, "resnet_d",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
        g.weights,
    )
    return _model(graph, opset)


def subgraph_pool_model(container: str) -> onnx.ModelProto:
    """``x`` [1,2,9,9] -> ``container`` ("If" or "Loop") whose body holds MaxPool-12 SAME_UPPER
    3x3 dilation 2 on ``x`` (onnxruntime pads for the undilated kernel: 7x7 instead of 9x9)."""
    pool = helper.make_node("MaxPool", ["x"], ["pooled"], name="inner_pool", kernel_shape=[3, 3],
                            dilations=[2, 2], auto_pad="SAME_UPPER")
    pooled = helper.make_tensor_value_info("pooled", TensorProto.FLOAT, None)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 9, 9])]
    if container == "If":
        other = helper.make_graph(
            [helper.make_node("Identity", ["x"], ["same"])], "else", [],
            [helper.make_tensor_value_info("same", TensorProto.FLOAT, None)],
        )
        body = helper.make_graph([pool], "then", [], [pooled])
        node = helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=body,
                                else_branch=other)
        initializers = [numpy_helper.from_array(np.array(True), "cond")]
    else:
        body = helper.make_graph(
            [pool, helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("cond_in", TensorProto.BOOL, [])],
            [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), pooled],
        )
        node = helper.make_node("Loop", ["trips", ""], ["y"], name="loop", body=body)
        initializers = [numpy_helper.from_array(np.array(2, np.int64), "trips")]
    graph = helper.make_graph(
        [node], container.lower(), inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializers,
    )
    return _model(graph, 13)


def half_head(defective: bool, out_type: int = TensorProto.FLOAT16) -> onnx.ModelProto:
    """``image`` [1,2,9,9] float -> Cast float16 -> MaxPool 3x3 (SAME_UPPER dilation 2 when
    ``defective``: onnxruntime pools a 7x7 map, the spec a 9x9 one; else pads 1) ->
    GlobalAveragePool -> ``out`` [1,2,1,1] of ``out_type`` (float16, or a Cast to float)."""
    pool = {"kernel_shape": [3, 3], "dilations": [2, 2], "auto_pad": "SAME_UPPER"} if defective \
        else {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    nodes = [
        helper.make_node("Cast", ["image"], ["half"], name="to_half", to=TensorProto.FLOAT16),
        helper.make_node("MaxPool", ["half"], ["pooled"], name="maxpool_half", **pool),
        helper.make_node("GlobalAveragePool", ["pooled"], ["mean"], name="gap_half"),
    ]
    last = "mean"
    if out_type != TensorProto.FLOAT16:
        nodes.append(helper.make_node("Cast", ["mean"], ["out"], name="from_half", to=out_type))
        last = "out"
    graph = helper.make_graph(
        nodes, "half_head", [helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                                           [1, 2, 9, 9])],
        [helper.make_tensor_value_info(last, out_type, [1, 2, 1, 1])],
    )
    return _model(graph, 13)


def unknown_hw(symbol: str = "?") -> onnx.ModelProto:
    """``x`` [N, 3, symbol, symbol] -> Conv 3x3 (8 channels, pads 1) -> MaxPool 2x2/2 -> Relu:
    an OCR classifier's head, H and W both declared as the one dim_param ``symbol``."""
    rng = np.random.default_rng(3)
    weight = numpy_helper.from_array(rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32), "w")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["conv"], name="conv", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["conv"], ["pooled"], name="maxpool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Relu", ["pooled"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "unknown_hw",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, symbol, symbol])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8, None, None])], [weight],
    )
    return _model(graph, 13)


def _model(graph: onnx.GraphProto, opset: int) -> onnx.ModelProto:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = IR_VERSION
    return model
