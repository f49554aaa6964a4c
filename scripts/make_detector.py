#!/usr/bin/env python
"""Write a 40 MB detector made like a torch.onnx YOLO export, for measuring validate's time and
the guard's price on a real-sized model (not committed: run it where you measure).

The graph: input ``images`` [batch, 3, height, width] (all dynamic), five stride-2 3x3 Conv +
SiLU stages (32 to 512 channels), a 3x3 Conv to 1024, an SPP block (1x1 Conv to 512, MaxPool
k5/k9/k13 stride 1 pads k//2, Concat, two 1x1 Convs to 1024) and a 1x1 head to 255 channels;
about 10 million float32 weights (seeded random), opset 12, IR 8. Real size 1x3x640x640.

Run: ``python scripts/make_detector.py OUT.onnx``.
"""

from __future__ import annotations

import argparse

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx import helper as h


def detector(seed: int = 0) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    nodes, weights = [], []

    def conv(x: str, cin: int, cout: int, k: int, stride: int, name: str) -> str:
        w = rng.normal(0, (2 / (cin * k * k)) ** 0.5, (cout, cin, k, k)).astype(np.float32)
        weights.extend([numpy_helper.from_array(w, f"{name}.weight"),
                        numpy_helper.from_array(np.zeros(cout, np.float32), f"{name}.bias")])
        y = f"/{name}/Conv_output_0"
        nodes.append(h.make_node("Conv", [x, f"{name}.weight", f"{name}.bias"], [y],
                                 name=f"/{name}/Conv", kernel_shape=[k, k],
                                 strides=[stride] * 2, pads=[k // 2] * 4))
        gate = f"/{name}/act/Sigmoid_output_0"
        nodes.append(h.make_node("Sigmoid", [y], [gate], name=f"/{name}/act/Sigmoid"))
        out = f"/{name}/act/Mul_output_0"
        nodes.append(h.make_node("Mul", [y, gate], [out], name=f"/{name}/act/Mul"))
        return out

    x, cin = "images", 3
    for i, cout in enumerate((32, 64, 128, 256, 512)):
        x, cin = conv(x, cin, cout, 3, 2, f"model.{i}"), cout
    x = conv(x, 512, 1024, 3, 1, "model.5")
    x = conv(x, 1024, 512, 1, 1, "model.6/cv1")
    pools = []
    for i, k in enumerate((5, 9, 13)):
        y = f"/model.6/m.{i}/MaxPool_output_0"
        nodes.append(h.make_node("MaxPool", [x], [y], name=f"/model.6/m.{i}/MaxPool",
                                 kernel_shape=[k, k], strides=[1, 1], pads=[k // 2] * 4))
        pools.append(y)
    cat = "/model.6/Concat_output_0"
    nodes.append(h.make_node("Concat", [x, *pools], [cat], name="/model.6/Concat", axis=1))
    x = conv(cat, 2048, 1024, 1, 1, "model.6/cv2")
    x = conv(x, 1024, 1024, 1, 1, "model.6/cv3")
    w = rng.normal(0, 0.01, (255, 1024, 1, 1)).astype(np.float32)
    weights += [numpy_helper.from_array(w, "model.7.weight"),
                numpy_helper.from_array(np.zeros(255, np.float32), "model.7.bias")]
    nodes.append(h.make_node("Conv", [x, "model.7.weight", "model.7.bias"], ["output0"],
                             name="/model.7/Conv", kernel_shape=[1, 1]))
    graph = h.make_graph(
        nodes, "main_graph",
        [h.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
        [h.make_tensor_value_info("output0", TensorProto.FLOAT,
                                  ["batch", 255, "Convoutput0_dim_2", "Convoutput0_dim_3"])],
        weights,
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 12)],
                         producer_name="pytorch", producer_version="2.3.0")
    model.ir_version = 8
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the model file to write (OUT.onnx)")
    out = parser.parse_args().out
    model = detector()
    onnx.save(model, out)
    size = sum(t.raw_data.__len__() for t in model.graph.initializer)
    print(f"wrote {out}: {len(model.graph.node)} nodes, {size / 1e6:.1f} MB of weights")
