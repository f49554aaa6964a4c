#!/usr/bin/env python
"""Generate tests/support/models/: small models made like exported ones, for input resolution
(``--shape``, ``--inputs``, open dims) in ``validate`` and ``fix`` (deterministic: same bytes
every run; random weights, a few KB each).

* ``resnet-d.onnx``: a timm-style ResNet-D (stem convs, MaxPool 3x3/2, a block whose shortcut
  is AvgPool 2x2/2 ceil_mode count_include_pad=0 then a 1x1 conv, GlobalAveragePool, Gemm);
  input ``image`` [batch, 3, height, width], all symbolic, as torch.onnx writes dynamic axes.
* ``ocr-neg-batch.onnx``: an OCR recognizer's front: input ``x`` [-1, 3, 48, 192] (the batch
  stored as -1, as some converters write it); MaxPool 2x2/2, AveragePool (2,1)/(2,1), a Reshape
  to a fixed sequence length that needs the width 192.
* ``fpn-concat.onnx``: an FPN-style merge: MaxPool 3x3/3, a Resize x3 and a Concat with the
  skip path; runs only where height and width are multiples of 3 (not at 1, nor at 64); a
  head MaxPool SAME_UPPER with dilation 2, which onnxruntime pads wrongly at every size.
* ``gap-large.onnx``: Conv then GlobalAveragePool and GlobalMaxPool over the whole map, meant
  for large maps (``--shape x:1,4,320,320``).
* ``roi-head.onnx``: a detector head: inputs ``image`` [batch, 3, h, w] and ``rois``
  [num_rois, 5] (a graph input, through a Cast from float64 as some exporters leave it) into
  MaxRoiPool: rois must come from ``--inputs``.
* ``segnet-unpool.onnx``: a SegNet decoder stage: inputs ``x``, ``indices`` (int64) and
  ``output_shape`` (int64) into MaxUnpool: indices and output_shape must come from ``--inputs``.

Run: ``python scripts/make_input_models.py [OUT_DIR]`` (default tests/support/models/).
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
PRODUCER = "ortpool scripts/make_input_models.py"
OPSET = 17  # what torch.onnx.export writes by default
IR = 8  # read by every supported onnxruntime (1.21 reads at most 10)


class Graph:
    """Nodes and He-initialised float32 weights, named in order (as an exporter numbers them)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rng = np.random.default_rng(sum(map(ord, name)))
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[onnx.TensorProto] = []

    def node(self, op: str, inputs: list[str], outputs: int = 1, **attrs) -> list[str]:
        base = f"/{op.lower()}_{len(self.nodes)}"
        names = [f"{base}/out{i}" for i in range(outputs)]
        self.nodes.append(h.make_node(op, inputs, names, name=base, **attrs))
        return names

    def one(self, op: str, inputs: list[str], **attrs) -> str:
        return self.node(op, inputs, **attrs)[0]

    def const(self, values: np.ndarray, name: str | None = None) -> str:
        name = name or f"const_{len(self.weights)}"
        self.weights.append(numpy_helper.from_array(values, name))
        return name

    def conv(self, x: str, cin: int, cout: int, k: int = 3, stride: int = 1, relu=True) -> str:
        w = self.rng.normal(0, np.sqrt(2 / (cin * k * k)), (cout, cin, k, k)).astype(np.float32)
        b = (self.rng.normal(0, 0.1, cout)).astype(np.float32)
        y = self.one(
            "Conv", [x, self.const(w), self.const(b)], kernel_shape=[k, k],
            strides=[stride, stride], pads=[k // 2] * 4,
        )
        return self.one("Relu", [y]) if relu else y

    def model(self, inputs, outputs, doc: str) -> onnx.ModelProto:
        graph = h.make_graph(self.nodes, self.name, inputs, outputs, self.weights)
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)],
                             producer_name=PRODUCER)
        model.producer_version = "1"
        model.ir_version = IR
        model.doc_string = doc
        onnx.checker.check_model(model)
        return model


def _vi(name: str, elem: int, dims) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, dims)


def resnet_d() -> onnx.ModelProto:
    g = Graph("resnet-d")
    x = g.conv(g.conv("image", 3, 8, stride=2), 8, 8)
    x = g.one("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    y = g.conv(g.conv(x, 8, 16, stride=2), 16, 16, relu=False)
    short = g.one("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1,
                  count_include_pad=0)
    short = g.conv(short, 8, 16, k=1, relu=False)
    x = g.one("Relu", [g.one("Add", [y, short])])
    x = g.one("Flatten", [g.one("GlobalAveragePool", [x])])
    w = g.const(g.rng.normal(0, 0.25, (10, 16)).astype(np.float32))
    b = g.const(np.zeros(10, np.float32))
    g.nodes.append(h.make_node("Gemm", [x, w, b], ["logits"], name="/fc/Gemm", transB=1))
    return g.model(
        [_vi("image", T.FLOAT, ["batch", 3, "height", "width"])],
        [_vi("logits", T.FLOAT, ["batch", 10])],
        "timm-style ResNet-D, all dims of the image symbolic",
    )


def ocr_neg_batch() -> onnx.ModelProto:
    g = Graph("ocr-neg-batch")
    x = g.conv("x", 3, 8)
    x = g.one("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])  # 24 x 96
    x = g.conv(x, 8, 8)
    x = g.one("AveragePool", [x], kernel_shape=[2, 1], strides=[2, 1])  # 12 x 96
    x = g.one("AveragePool", [x], kernel_shape=[12, 1], strides=[12, 1])  # 1 x 96
    # [N, 8, 1, 96] -> [N, 96, 8]: a sequence of 96 steps, fixed as exporters often fix it
    x = g.one("Reshape", [x, g.const(np.array([-1, 8, 96], np.int64))])
    g.nodes.append(h.make_node("Transpose", [x], ["seq"], name="/transpose", perm=[0, 2, 1]))
    return g.model(
        [_vi("x", T.FLOAT, [-1, 3, 48, 192])],
        [_vi("seq", T.FLOAT, [-1, 96, 8])],
        "OCR front: batch stored as -1, pools down to a 96-step sequence",
    )


def fpn_concat() -> onnx.ModelProto:
    g = Graph("fpn-concat")
    skip = g.conv("x", 3, 4)
    down = g.one("MaxPool", [skip], kernel_shape=[3, 3], strides=[3, 3])
    down = g.conv(down, 4, 4)
    up = g.one("Resize", [down, "", g.const(np.array([1, 1, 3, 3], np.float32), "scales")],
               mode="nearest")
    merged = g.one("Concat", [skip, up], axis=1)
    out = g.conv(merged, 8, 4, relu=False)
    # SAME with dilation, as TF converters write it: onnxruntime pads for the undilated kernel
    # (ruling 2), so the border rows and columns differ from the spec's at every size
    g.nodes.append(h.make_node("MaxPool", [out], ["y"], name="/head_pool",
                               kernel_shape=[3, 3], dilations=[2, 2], auto_pad="SAME_UPPER"))
    return g.model(
        [_vi("x", T.FLOAT, ["N", 3, "H", "W"])],
        [_vi("y", T.FLOAT, ["N", 4, "H", "W"])],
        "FPN merge: MaxPool /3, Resize x3, Concat with the skip: H and W multiples of 3",
    )


def gap_large() -> onnx.ModelProto:
    g = Graph("gap-large")
    x = g.conv("x", 4, 4)
    mean = g.one("GlobalAveragePool", [x])
    peak = g.one("GlobalMaxPool", [x])
    g.nodes.append(h.make_node("Add", [mean, peak], ["y"], name="/head"))
    return g.model(
        [_vi("x", T.FLOAT, ["batch", 4, "height", "width"])],
        [_vi("y", T.FLOAT, ["batch", 4, 1, 1])],
        "GlobalAveragePool and GlobalMaxPool over the whole map (meant for large maps)",
    )


def roi_head() -> onnx.ModelProto:
    g = Graph("roi-head")
    x = g.conv(g.conv("image", 3, 8, stride=2), 8, 8, stride=2)  # stride 4: spatial_scale 1/4
    rois = g.one("Cast", ["rois"], to=T.FLOAT)
    pooled = g.one("MaxRoiPool", [x, rois], pooled_shape=[3, 3], spatial_scale=0.25)
    flat = g.one("Flatten", [pooled])
    w = g.const(g.rng.normal(0, 0.2, (5, 72)).astype(np.float32))
    b = g.const(np.zeros(5, np.float32))
    g.nodes.append(h.make_node("Gemm", [flat, w, b], ["scores"], name="/cls/Gemm", transB=1))
    return g.model(
        [_vi("image", T.FLOAT, ["batch", 3, "h", "w"]), _vi("rois", T.DOUBLE, ["num_rois", 5])],
        [_vi("scores", T.FLOAT, ["num_rois", 5])],
        "detector head: RoIs as a graph input (float64, cast) into MaxRoiPool",
    )


def segnet_unpool() -> onnx.ModelProto:
    g = Graph("segnet-unpool")
    up = g.one("MaxUnpool", ["x", "indices", "output_shape"], kernel_shape=[2, 2],
               strides=[2, 2])
    y = g.conv(up, 4, 4, relu=False)
    g.nodes[-1].output[0] = "y"
    del y
    return g.model(
        [_vi("x", T.FLOAT, ["batch", 4, "h", "w"]), _vi("indices", T.INT64, ["batch", 4, "h", "w"]),
         _vi("output_shape", T.INT64, [4])],
        [_vi("y", T.FLOAT, ["batch", 4, "H", "W"])],
        "SegNet decoder stage: MaxUnpool's indices and output_shape as graph inputs",
    )


def input_models() -> dict[str, onnx.ModelProto]:
    return {
        "resnet-d": resnet_d(),
        "ocr-neg-batch": ocr_neg_batch(),
        "fpn-concat": fpn_concat(),
        "gap-large": gap_large(),
        "roi-head": roi_head(),
        "segnet-unpool": segnet_unpool(),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "tests" / "support" / "models",
                        help="the folder to write (default: tests/support/models/)")
    out = parser.parse_args(argv).out
    out.mkdir(parents=True, exist_ok=True)
    models = input_models()
    for name, model in models.items():
        (out / f"{name}.onnx").write_bytes(model.SerializeToString(deterministic=True))
    print(f"wrote {len(models)} models to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
