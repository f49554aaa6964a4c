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
    ceil mode one window (ruling 19), in floor mode none."""
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


# --- Models made like real exported ones (scripts/make_real_like_models.py) ------------------
# Each resembles one third-party model of issue 28's experiment: its exporter's layout, names
# and dims, at 4-16 channels and maps of at most 64x64 (random weights).


class _Exported(_Graph):
    """Nodes named as their exporter names them; a node's outputs are ``NAME_output_I``."""

    def op(self, op: str, inputs: list[str], name: str, **attrs) -> str:
        return self.ops(op, inputs, name, 1, **attrs)[0]

    def ops(self, op: str, inputs: list[str], name: str, outputs: int, **attrs) -> list[str]:
        names = [f"{name}_output_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, name=name, **attrs))
        return names

    def const(self, values: np.ndarray) -> str:
        name = f"c{len(self.weights)}"
        self.weights.append(numpy_helper.from_array(values, name))
        return name

    def conv2d(self, x: str, cin: int, cout: int, k: int | tuple[int, int], name: str,
               stride: int = 1, pad: int = 0, group: int = 1) -> str:
        kh, kw = (k, k) if isinstance(k, int) else k
        w = self.weight((cout, cin // group, kh, kw), cin // group * kh * kw)
        b = self.const(self.rng.normal(0, 0.1, cout).astype(np.float32))
        return self.op("Conv", [x, w, b], name, kernel_shape=[kh, kw], strides=[stride] * 2,
                       pads=[pad] * 4, group=group)

    def dense(self, x: str, cin: int, cout: int, name: str) -> str:
        """A fully connected layer as tf2onnx and Paddle2ONNX write it: MatMul then Add."""
        w = self.weight((cin, cout), cin)
        y = self.op("MatMul", [x, w], f"{name}/MatMul")
        return self.op("Add", [y, self.const(np.zeros(cout, np.float32))], f"{name}/BiasAdd")

    def prelu(self, x: str, channels: int, name: str, rank: int = 4) -> str:
        shape = (channels,) + (1,) * (rank - 2)
        slope = self.const(np.full(shape, 0.25, np.float32))
        return self.op("PRelu", [x, slope], name)

    def hard_swish(self, x: str, name: str) -> str:
        """Paddle2ONNX's hard_swish below opset 14: HardSigmoid(x/6 + 1/2) * x."""
        gate = self.op("HardSigmoid", [x], f"{name}.HardSigmoid", alpha=1 / 6, beta=0.5)
        return self.op("Mul", [x, gate], f"{name}.Mul")

    def model(self, name: str, inputs: list, outputs: list, opset: int, doc: str,
              ir_version: int = IR_VERSION) -> onnx.ModelProto:
        """Outputs are (node output, graph output name, element type, dims): the last node that
        writes a graph output is renamed to it. Below IR version 4 every weight is also a graph
        input, as IR 3 required and Caffe2-era exporters kept writing."""
        renames = {value: out for value, out, _, _ in outputs}
        for node in self.nodes:
            node.output[:] = [renames.get(o, o) for o in node.output]
        inputs = [helper.make_tensor_value_info(*i) for i in inputs]
        if ir_version <= 4:
            inputs += [helper.make_tensor_value_info(w.name, w.data_type, list(w.dims))
                       for w in self.weights]
        graph = helper.make_graph(
            self.nodes, name, inputs,
            [helper.make_tensor_value_info(out, elem, dims) for _, out, elem, dims in outputs],
            self.weights,
        )
        model = _model(graph, opset)
        model.ir_version = ir_version
        model.doc_string = doc
        onnx.checker.check_model(model)
        return model


_F = TensorProto.FLOAT


def captcha_spp() -> onnx.ModelProto:
    """A captcha detector as torch.onnx writes a YOLO with an SPP block (opset 12): SiLU as
    Sigmoid * x; SPP: MaxPool k5/k9/k13 stride 1 pads k//2 on one map, concatenated; input
    ``images`` [batch, 3, height, width], all dynamic. Real size 1x3x64x64 (SPP at 16x16)."""
    g = _Exported(101)

    def conv(x: str, cin: int, cout: int, k: int, stride: int, scope: str) -> str:
        y = g.conv2d(x, cin, cout, k, f"/{scope}/conv/Conv", stride, k // 2)
        return g.op("Mul", [y, g.op("Sigmoid", [y], f"/{scope}/act/Sigmoid")],
                    f"/{scope}/act/Mul")

    x = conv(conv("images", 3, 8, 3, 2, "model.0"), 8, 16, 3, 2, "model.1")
    x = conv(x, 16, 8, 1, 1, "model.2/cv1")
    pools = [g.op("MaxPool", [x], f"/model.2/m.{i}/MaxPool", kernel_shape=[k, k],
                  strides=[1, 1], pads=[k // 2] * 4) for i, k in enumerate((5, 9, 13))]
    x = g.op("Concat", [x, *pools], "/model.2/Concat", axis=1)
    x = conv(x, 32, 16, 1, 1, "model.2/cv2")
    y = g.conv2d(x, 16, 12, 1, "/model.3/m.0/Conv")
    return g.model(
        "main_graph", [("images", _F, ["batch", 3, "height", "width"])],
        [(y, "output0", _F, ["batch", 12, "Convoutput0_dim_2", "Convoutput0_dim_3"])], 12,
        "captcha detector (torch.onnx, YOLO with SPP: MaxPool k5/k9/k13 s1)",
    )


def _keras_head(g: _Exported, x: str, cin: int, cout: int, name: str) -> str:
    """A 1x1 conv whose result keras2onnx hands back in NHWC."""
    y = g.conv2d(x, cin, cout, 1, name)
    return g.op("Transpose", [y], f"{name}_nhwc", perm=[0, 2, 3, 1])


def _keras_stem(g: _Exported, cout: int, k: int) -> str:
    """keras2onnx's start of an MTCNN stage: the NHWC input transposed once, a valid 3x3 conv,
    PReLU, MaxPool k s2 SAME_UPPER."""
    x = g.op("Transpose", ["input_1"], "input_1_nchw", perm=[0, 3, 1, 2])
    x = g.prelu(g.conv2d(x, 3, cout, 3, "conv2d_1"), cout, "p_re_lu_1")
    return g.op("MaxPool", [x], "max_pooling2d_1", kernel_shape=[k, k], strides=[2, 2],
                auto_pad="SAME_UPPER")


def mtcnn_pnet() -> onnx.ModelProto:
    """MTCNN's P-Net as keras2onnx writes it (opset 10): NHWC input ``input_1`` [N, H, W, 3]
    transposed once, valid 3x3 convs with PReLU, MaxPool k2 s2 SAME_UPPER, two 1x1 heads
    transposed back to NHWC (softmax over the last axis). Real size 1x37x29x3: the pool reads
    an odd 35x27 map."""
    g = _Exported(102)
    x = _keras_stem(g, 8, 2)
    x = g.prelu(g.conv2d(x, 8, 16, 3, "conv2d_2"), 16, "p_re_lu_2")
    x = g.prelu(g.conv2d(x, 16, 16, 3, "conv2d_3"), 16, "p_re_lu_3")
    prob = g.op("Softmax", [_keras_head(g, x, 16, 2, "conv2d_4")], "softmax_1", axis=3)
    box = _keras_head(g, x, 16, 4, "conv2d_5")
    return g.model(
        "pnet", [("input_1", _F, ["N", "H", "W", 3])],
        [(prob, "softmax_1", _F, ["N", "M1", "M2", 2]), (box, "conv2d_5", _F,
                                                          ["N", "M1", "M2", 4])],
        10, "MTCNN P-Net (keras2onnx): MaxPool k2 s2 SAME_UPPER on an odd map",
    )


def mtcnn_rnet() -> onnx.ModelProto:
    """MTCNN's R-Net as keras2onnx writes it (opset 11): NHWC input [N, 24, 24, 3], MaxPool k3
    s2 SAME_UPPER on 22x22, MaxPool k3 s2 VALID on 9x9, a 2x2 conv, flattened in NHWC order
    into MatMul layers with PReLU. Real size 8x24x24x3 (a batch of candidate boxes)."""
    g = _Exported(103)
    x = _keras_stem(g, 8, 3)
    x = g.prelu(g.conv2d(x, 8, 12, 3, "conv2d_2"), 12, "p_re_lu_2")
    x = g.op("MaxPool", [x], "max_pooling2d_2", kernel_shape=[3, 3], strides=[2, 2],
             auto_pad="VALID")
    x = g.prelu(g.conv2d(x, 12, 16, 2, "conv2d_3"), 16, "p_re_lu_3")
    x = g.op("Transpose", [x], "permute_1", perm=[0, 2, 3, 1])
    x = g.op("Reshape", [x, g.const(np.array([-1, 144], np.int64))], "flatten_1")
    x = g.prelu(g.dense(x, 144, 32, "dense_1"), 32, "p_re_lu_4", rank=2)
    prob = g.op("Softmax", [g.dense(x, 32, 2, "dense_2")], "softmax_1", axis=1)
    box = g.dense(x, 32, 4, "dense_3")
    return g.model(
        "rnet", [("input_1", _F, ["N", 24, 24, 3])],
        [(prob, "softmax_1", _F, ["N", 2]), (box, "dense_3", _F, ["N", 4])], 11,
        "MTCNN R-Net (keras2onnx): MaxPool k3 s2 SAME_UPPER, then VALID",
    )


def wakeword_embedding() -> onnx.ModelProto:
    """A wake-word embedding as tf2onnx writes it (opset 13): audio features ``input_1``
    [unk__60, 1, unk__61, 40] (frames x 40 mel bins), three SAME 3x3 convs each followed by
    MaxPool kernel [1, 2] strides [1, 2] over the bins, frames kept; then per-frame features
    averaged into a 16-wide embedding. Real size 1x1x64x40."""
    g = _Exported(104)
    scope = "StatefulPartitionedCall/embedding"
    x, cin = "input_1", 1
    for i, cout in enumerate((8, 16, 16)):
        x = g.op("Relu", [g.conv2d(x, cin, cout, 3, f"{scope}/conv2d_{i}/Conv2D", pad=1)],
                 f"{scope}/conv2d_{i}/Relu")
        x = g.op("MaxPool", [x], f"{scope}/max_pooling2d_{i}/MaxPool", kernel_shape=[1, 2],
                 strides=[1, 2])
        cin = cout
    x = g.op("Transpose", [x], f"{scope}/permute/transpose", perm=[0, 2, 1, 3])
    x = g.op("Reshape", [x, g.const(np.array([0, 0, 80], np.int64))], f"{scope}/reshape")
    x = g.op("ReduceMean", [x], f"{scope}/frames/Mean", axes=[1], keepdims=0)
    y = g.dense(x, 80, 16, f"{scope}/dense")
    return g.model(
        "tf2onnx", [("input_1", _F, ["unk__60", 1, "unk__61", 40])],
        [(y, "embedding", _F, ["unk__60", 16])], 13,
        "wake-word embedding (tf2onnx): MaxPool kernel [1,2] strides [1,2] on audio features",
    )


def paddle_cls() -> onnx.ModelProto:
    """A text-orientation classifier as Paddle2ONNX writes it (opset 11): input ``x`` [?, 3,
    48, 64], stem conv s2 with hard_swish (HardSigmoid * x), MaxPool k3 s2 p1, depthwise and
    pointwise convs, GlobalAveragePool head, MatMul + Add, Softmax. Real size 1x3x48x64."""
    g = _Exported(105)
    x = g.hard_swish(g.conv2d("x", 3, 8, 3, "p2o.Conv.0", 2, 1), "p2o.HardSwish.0")
    x = g.op("MaxPool", [x], "p2o.MaxPool.0", kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1])
    x = g.op("Relu", [g.conv2d(x, 8, 8, 3, "p2o.Conv.1", 1, 1, group=8)], "p2o.Relu.0")
    x = g.hard_swish(g.conv2d(x, 8, 16, 1, "p2o.Conv.2"), "p2o.HardSwish.1")
    x = g.op("Relu", [g.conv2d(x, 16, 16, 3, "p2o.Conv.3", 2, 1, group=16)], "p2o.Relu.1")
    x = g.hard_swish(g.conv2d(x, 16, 16, 1, "p2o.Conv.4"), "p2o.HardSwish.2")
    x = g.op("GlobalAveragePool", [x], "p2o.GlobalAveragePool.0")
    x = g.op("Flatten", [x], "p2o.Flatten.0", axis=1)
    y = g.op("Softmax", [g.dense(x, 16, 2, "p2o.linear_0")], "p2o.Softmax.0", axis=1)
    return g.model(
        "paddle-cls", [("x", _F, ["?", 3, 48, 64])],
        [(y, "softmax_0.tmp_0", _F, ["?", 2])], 11,
        "text orientation classifier (Paddle2ONNX): MaxPool k3 s2 p1, GlobalAveragePool head",
    )


def paddle_table() -> onnx.ModelProto:
    """A table-structure backbone and heads as Paddle2ONNX writes them (opset 11): input ``x``
    [-1, 3, -1, -1], stem conv s2, MaxPool k3 s2 p1, an exclusive AveragePool k2 s2
    (count_include_pad 0) and a GlobalAveragePool head. Real size 1x3x64x64."""
    g = _Exported(106)
    x = g.hard_swish(g.conv2d("x", 3, 8, 3, "p2o.Conv.0", 2, 1), "p2o.HardSwish.0")
    x = g.op("MaxPool", [x], "p2o.MaxPool.0", kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1])
    x = g.hard_swish(g.conv2d(x, 8, 16, 3, "p2o.Conv.1", 1, 1), "p2o.HardSwish.1")
    x = g.op("Relu", [g.conv2d(x, 16, 16, 3, "p2o.Conv.2", 2, 1, group=16)], "p2o.Relu.0")
    x = g.hard_swish(g.conv2d(x, 16, 16, 1, "p2o.Conv.3"), "p2o.HardSwish.2")
    x = g.op("AveragePool", [x], "p2o.AveragePool.0", kernel_shape=[2, 2], strides=[2, 2],
             count_include_pad=0)
    loc = g.op("Sigmoid", [g.conv2d(x, 16, 4, 1, "p2o.Conv.4")], "p2o.Sigmoid.0")
    pooled = g.op("Flatten", [g.op("GlobalAveragePool", [x], "p2o.GlobalAveragePool.0")],
                  "p2o.Flatten.0", axis=1)
    structure = g.op("Softmax", [g.dense(pooled, 16, 8, "p2o.linear_0")], "p2o.Softmax.0",
                     axis=1)
    return g.model(
        "paddle-table", [("x", _F, [-1, 3, -1, -1])],
        [(structure, "save_infer_model/scale_0.tmp_0", _F, [-1, 8]),
         (loc, "save_infer_model/scale_1.tmp_0", _F, [-1, 4, -1, -1])], 11,
        "table structure model (Paddle2ONNX): MaxPool k3 s2 p1, AveragePool k2 s2 exclusive",
    )


class _Quantized(_Exported):
    """QDQ as onnxruntime's quantize_static writes it: uint8 activations (QuantizeLinear then
    DequantizeLinear on each tensor a quantized op reads), int8 weights per output channel and
    int32 biases, each through a DequantizeLinear; a Relu after a Conv or Add folded into the
    quantization (zero point 0)."""

    def qdq(self, x: str, scale: float, zero_point: int) -> str:
        s = self.const(np.array(scale, np.float32))
        z = self.const(np.array(zero_point, np.uint8))
        q = self.op("QuantizeLinear", [x, s, z], f"{x}_QuantizeLinear")
        return self.op("DequantizeLinear", [q, s, z], f"{x}_DequantizeLinear")

    def qconv(self, x: str, in_scale: float, cin: int, cout: int, k: int, name: str,
              stride: int = 1) -> str:
        w = self.rng.normal(0, np.sqrt(2 / (cin * k * k)), (cout, cin, k, k)).astype(np.float32)
        w_scale = (np.abs(w).reshape(cout, -1).max(axis=1) / 127).astype(np.float32)
        w_q = np.round(w / w_scale[:, None, None, None]).astype(np.int8)
        b_scale = (w_scale * np.float32(in_scale)).astype(np.float32)
        b_q = np.round(self.rng.normal(0, 0.1, cout) / b_scale).astype(np.int32)
        w_dq = self.op("DequantizeLinear", [self.const(w_q), self.const(w_scale),
                                            self.const(np.zeros(cout, np.int8))],
                       f"{name}.weight_DequantizeLinear", axis=0)
        b_dq = self.op("DequantizeLinear", [self.const(b_q), self.const(b_scale),
                                            self.const(np.zeros(cout, np.int32))],
                       f"{name}.bias_DequantizeLinear", axis=0)
        return self.op("Conv", [x, w_dq, b_dq], f"/{name}/Conv", kernel_shape=[k, k],
                       strides=[stride] * 2, pads=[k // 2] * 4)


def qdq_resnet() -> onnx.ModelProto:
    """A QDQ-quantized ResNet (onnxruntime quantize_static, opset 13): 7x7 s2 stem, MaxPool k3
    s2 p1 between QDQ pairs, a basic block and a downsampling block, GlobalAveragePool between
    QDQ pairs, Gemm. Input ``input`` [batch_size, 3, 64, 64]; real size 1x3x64x64."""
    g = _Quantized(107)
    act = 6 / 255  # the calibrated range of a ReLU activation, [0, 6]
    x = g.qdq("input", 6 / 255, 128)
    x = g.qdq(g.qconv(x, 6 / 255, 3, 8, 7, "conv1", 2), act, 0)
    x = g.qdq(g.op("MaxPool", [x], "/maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2],
                   pads=[1, 1, 1, 1]), act, 0)
    y = g.qdq(g.qconv(x, act, 8, 8, 3, "layer1.0.conv1"), act, 0)
    y = g.qdq(g.qconv(y, act, 8, 8, 3, "layer1.0.conv2"), 12 / 255, 128)
    x = g.qdq(g.op("Add", [y, x], "/layer1.0/Add"), act, 0)
    y = g.qdq(g.qconv(x, act, 8, 16, 3, "layer2.0.conv1", 2), act, 0)
    y = g.qdq(g.qconv(y, act, 16, 16, 3, "layer2.0.conv2"), 12 / 255, 128)
    short = g.qdq(g.qconv(x, act, 8, 16, 1, "layer2.0.downsample.0", 2), 12 / 255, 128)
    x = g.qdq(g.op("Add", [y, short], "/layer2.0/Add"), act, 0)
    x = g.qdq(g.op("GlobalAveragePool", [x], "/avgpool/GlobalAveragePool"), act, 0)
    x = g.op("Flatten", [x], "/Flatten", axis=1)
    w = g.weight((10, 16), 16)
    y = g.op("Gemm", [x, w, g.const(np.zeros(10, np.float32))], "/fc/Gemm", transB=1)
    return g.model(
        "main_graph", [("input", _F, ["batch_size", 3, 64, 64])],
        [(y, "output", _F, ["batch_size", 10])], 13,
        "QDQ ResNet (quantize_static): MaxPool k3 s2 p1 and GlobalAveragePool between QDQ pairs",
    )


def inception_opset9() -> onnx.ModelProto:
    """A Caffe2-era Inception (opset 9, as the model zoo's googlenet/inception_v2): Caffe's ceil
    mode written as pads 0,0,1,1 on MaxPool k3 s2, BatchNormalization after convs, two
    inception modules (1x1, 3x3 and MaxPool k3 s1 p1 branches), AveragePool k3 s1 pads 0,0,1,1
    over the last 4x4 map, Dropout-7 whose mask output nothing reads, Gemm, Softmax. Input
    ``data_0`` [1, 3, 64, 64]; IR version 4 with every weight also a graph input (as the zoo's
    opset-9 models are: onnxruntime may not fold them as constants)."""
    g = _Exported(108)

    def conv(x: str, cin: int, cout: int, k: int, name: str, stride: int = 1) -> str:
        y = g.conv2d(x, cin, cout, k, name, stride, k // 2)
        stats = [g.const(a.astype(np.float32)) for a in (
            1 + 0.1 * g.rng.standard_normal(cout), 0.1 * g.rng.standard_normal(cout),
            0.1 * g.rng.standard_normal(cout), 1 + 0.1 * g.rng.random(cout))]
        y = g.op("BatchNormalization", [y, *stats], f"{name}/bn", epsilon=1e-5)
        return g.op("Relu", [y], f"{name}/relu")

    def pool3s2(x: str, name: str) -> str:
        return g.op("MaxPool", [x], name, kernel_shape=[3, 3], strides=[2, 2],
                    pads=[0, 0, 1, 1])

    def inception(x: str, cin: int, name: str) -> str:
        a = conv(x, cin, 4, 1, f"{name}/1x1")
        b = conv(conv(x, cin, 4, 1, f"{name}/3x3_reduce"), 4, 8, 3, f"{name}/3x3")
        p = g.op("MaxPool", [x], f"{name}/pool", kernel_shape=[3, 3], strides=[1, 1],
                 pads=[1, 1, 1, 1])
        p = conv(p, cin, 4, 1, f"{name}/pool_proj")
        return g.op("Concat", [a, b, p], f"{name}/output", axis=1)

    x = pool3s2(conv("data_0", 3, 8, 7, "conv1/7x7_s2", 2), "pool1/3x3_s2")  # 32 -> 16
    x = conv(conv(x, 8, 8, 1, "conv2/3x3_reduce"), 8, 16, 3, "conv2/3x3")
    x = pool3s2(x, "pool2/3x3_s2")  # 16 -> 8
    x = pool3s2(inception(x, 16, "inception_3a"), "pool3/3x3_s2")  # 8 -> 4
    x = inception(x, 16, "inception_4a")
    # Caffe's ceil mode again: 4x4 -> 3x3
    x = g.op("AveragePool", [x], "pool5/3x3_s1", kernel_shape=[3, 3], strides=[1, 1],
             pads=[0, 0, 1, 1])
    x = g.ops("Dropout", [x], "pool5/drop_3x3_s1", 2, ratio=0.4)[0]
    x = g.op("Flatten", [x], "OC2_DUMMY_0", axis=1)
    w = g.weight((10, 144), 144)
    x = g.op("Gemm", [x, w, g.const(np.zeros(10, np.float32))], "loss3/classifier", transB=1)
    y = g.op("Softmax", [x], "prob")
    return g.model(
        "inception", [("data_0", _F, [1, 3, 64, 64])], [(y, "prob_1", _F, [1, 10])], 9,
        "Caffe2-era Inception (opset 9): MaxPool k3 s2 pads 0,0,1,1, AveragePool k3 s1 pads "
        "0,0,1,1, BatchNormalization, Dropout-7 with its mask unused", ir_version=4,
    )


def conv_maxpool_relu() -> onnx.ModelProto:
    """Conv -> MaxPool k2 s2 -> Relu, input ``x`` [N, 3, H, W] (opset 17); real size
    1x3x64x64."""
    g = _Exported(109)
    x = g.op("MaxPool", [g.conv2d("x", 3, 8, 3, "/conv/Conv", pad=1)], "/pool/MaxPool",
             kernel_shape=[2, 2], strides=[2, 2])
    y = g.op("Relu", [x], "/relu/Relu")
    return g.model(
        "main_graph", [("x", _F, ["N", 3, "H", "W"])], [(y, "y", _F, ["N", 8, "h", "w"])], 17,
        "Conv -> MaxPool -> Relu with symbolic dims",
    )


#: name -> (builder, the input sizes the model is used at: its real size)
REAL_LIKE: dict[str, tuple] = {
    "captcha-spp": (captcha_spp, {"images": (1, 3, 64, 64)}),
    "mtcnn-pnet": (mtcnn_pnet, {"input_1": (1, 37, 29, 3)}),
    "mtcnn-rnet": (mtcnn_rnet, {"input_1": (8, 24, 24, 3)}),
    "wakeword-embedding": (wakeword_embedding, {"input_1": (1, 1, 64, 40)}),
    "paddle-cls": (paddle_cls, {"x": (1, 3, 48, 64)}),
    "paddle-table": (paddle_table, {"x": (1, 3, 64, 64)}),
    "qdq-resnet": (qdq_resnet, {"input": (1, 3, 64, 64)}),
    "inception-opset9": (inception_opset9, {"data_0": (1, 3, 64, 64)}),
    "conv-maxpool-relu": (conv_maxpool_relu, {"x": (1, 3, 64, 64)}),
}
