#!/usr/bin/env python
"""What the non-finite guard of ``ortpool fix`` costs in plain onnxruntime, form by form.

With NaN and -inf inputs in its domain (``nonfinite=True``), ``ortpool fix`` guards each MaxPool
that onnxruntime computes wrong on them (it drops a NaN that is not a window's first tap and
gives the lowest finite value for a window of -inf only). Two guards exist
(:func:`ortpool.forms.plan.nan_guarded`): the summed flag (``nan-guard``, tried first) and the
pooled mask (``nan-guard-mask``, the only guard before it). This script times, for each model,

* ``original``: the model as it is (the finite domain's fix leaves it unchanged);
* ``control``: the same model in a second session (what the timing's noise alone gives);
* ``nan-guard``: what ``ortpool.fix(model, nonfinite=True)`` writes (each node proven);
* ``nan-guard-mask``: the same nodes guarded by the pooled mask instead (as fix wrote before),

in plain onnxruntime at graph optimization level all, one intra-op thread, interleaved (each
round runs every variant once, in rotating order; the per-call time is the calling thread's CPU
time, which other processes on a shared machine do not inflate), the median of ``--rounds``
rounds; and counts the nodes and the NCHWc ``Reorder*`` nodes of each optimized graph
(``SessionOptions.optimized_model_filepath``). The models: the guard stage Conv -> MaxPool(3x3,
stride 2, pads 1) -> Conv at 64 channels 56x56 (a ResNet stem's pool) and at 16 channels 24x24,
a small CNN end to end (three Conv+Relu, two MaxPools, a GlobalAveragePool and a Gemm head), and
small models built like the third-party ones of issue 28: a YOLO SPP block (stride-1 pools), a
keras2onnx stage (SAME_UPPER k3s2, k2s2 on small maps), a Caffe2-era Inception at opset 9.

Run: ``python scripts/guard_cost.py [--rounds 15] [--write results/guard_cost.md]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import ortpool
from ortpool.forms import apply
from ortpool.forms import plan as forms
from ortpool.model.selection import Selection
from ortpool.model.singlenode import IR_VERSION
from ortpool.model.site import find_sites
from ortpool.model.timing import interleaved

STEM_POOL = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}


class _Builder:
    """Nodes and weights of a small float32 CNN, seeded."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[onnx.TensorProto] = []

    def conv(self, x: str, cin: int, cout: int, name: str, relu: bool = False) -> str:
        w = (self.rng.standard_normal((cout, cin, 3, 3)) * (2 / (9 * cin)) ** 0.5)
        self.weights += [numpy_helper.from_array(w.astype(np.float32), f"{name}_w"),
                         numpy_helper.from_array(np.zeros(cout, np.float32), f"{name}_b")]
        self.nodes.append(h.make_node("Conv", [x, f"{name}_w", f"{name}_b"], [name], name=name,
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        if not relu:
            return name
        self.nodes.append(h.make_node("Relu", [name], [f"{name}_relu"], name=f"{name}_relu"))
        return f"{name}_relu"

    def node(self, op: str, x: str, name: str, **attrs: object) -> str:
        self.nodes.append(h.make_node(op, [x], [name], name=name, **attrs))
        return name

    def model(self, x: str, shape: list[int], y: str) -> onnx.ModelProto:
        graph = h.make_graph(self.nodes, "guard_cost",
                             [h.make_tensor_value_info(x, T.FLOAT, shape)],
                             [h.make_tensor_value_info(y, T.FLOAT, None)], self.weights)
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
        model.ir_version = IR_VERSION
        return model


def guard_stage(channels: int, size: int) -> onnx.ModelProto:
    """Conv -> MaxPool (3x3, stride 2, pads 1) -> Conv."""
    b = _Builder()
    value = b.conv("x", channels, channels, "conv0")
    value = b.node("MaxPool", value, "pool0", **STEM_POOL)
    value = b.conv(value, channels, channels, "conv1")
    return b.model("x", [1, channels, size, size], value)


def small_cnn() -> onnx.ModelProto:
    """3x64x64 -> Conv16+Relu -> MaxPool 3/2 -> Conv32+Relu -> MaxPool 2/2 -> Conv64+Relu ->
    GlobalAveragePool -> Flatten -> Gemm 10."""
    b = _Builder()
    value = b.conv("x", 3, 16, "conv0", relu=True)
    value = b.node("MaxPool", value, "pool0", **STEM_POOL)
    value = b.conv(value, 16, 32, "conv1", relu=True)
    value = b.node("MaxPool", value, "pool1", kernel_shape=[2, 2], strides=[2, 2])
    value = b.conv(value, 32, 64, "conv2", relu=True)
    value = b.node("GlobalAveragePool", value, "gap")
    value = b.node("Flatten", value, "flat")
    weight = (b.rng.standard_normal((10, 64)) * 0.1).astype(np.float32)
    b.weights += [numpy_helper.from_array(weight, "fc_w"),
                  numpy_helper.from_array(np.zeros(10, np.float32), "fc_b")]
    b.nodes.append(h.make_node("Gemm", [value, "fc_w", "fc_b"], ["logits"], name="fc", transB=1))
    return b.model("x", [1, 3, 64, 64], "logits")


def spp_block() -> onnx.ModelProto:
    """YOLO-style SPP: Conv32 -> MaxPool 5/9/13 (stride 1, same pads) -> Concat -> Conv, 20x20."""
    b = _Builder()
    value = b.conv("x", 16, 32, "conv0", relu=True)
    pooled = [value]
    for k in (5, 9, 13):
        pooled.append(b.node("MaxPool", value, f"spp{k}", kernel_shape=[k, k],
                             pads=[k // 2] * 4))
    b.nodes.append(h.make_node("Concat", pooled, ["cat"], name="cat", axis=1))
    value = b.conv("cat", 128, 32, "conv1")
    return b.model("x", [1, 16, 20, 20], value)


def keras_same_upper() -> onnx.ModelProto:
    """keras2onnx-style face-detection stage: SAME_UPPER pools k3 s2 and k2 s2 on small maps."""
    b = _Builder()
    value = b.conv("x", 3, 16, "conv0", relu=True)
    value = b.node("MaxPool", value, "pool0", kernel_shape=[3, 3], strides=[2, 2],
                   auto_pad="SAME_UPPER")
    value = b.conv(value, 16, 32, "conv1", relu=True)
    value = b.node("MaxPool", value, "pool1", kernel_shape=[2, 2], strides=[2, 2],
                   auto_pad="SAME_UPPER")
    value = b.conv(value, 32, 32, "conv2")
    return b.model("x", [1, 3, 24, 24], value)


def inception_opset9() -> onnx.ModelProto:
    """Caffe2-era Inception-style at opset 9: MaxPool 3/2, a branch of 1x1 and 3x3 Convs and a
    MaxPool 3/1, Concat, AveragePool pads (0, 0, 1, 1), Dropout-7 with its mask unused."""
    b = _Builder()
    value = b.conv("x", 3, 16, "conv0", relu=True)
    value = b.node("MaxPool", value, "pool0", kernel_shape=[3, 3], strides=[2, 2])
    branches = [b.conv(value, 16, 16, "b1", relu=True), b.conv(value, 16, 16, "b2", relu=True),
                b.node("MaxPool", value, "pool_branch", kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    b.nodes.append(h.make_node("Concat", branches, ["cat"], name="cat", axis=1))
    value = b.node("AveragePool", "cat", "avg", kernel_shape=[2, 2], pads=[0, 0, 1, 1])
    b.nodes.append(h.make_node("Dropout", [value], ["drop", "mask"], name="drop", ratio=0.4))
    value = b.conv("drop", 48, 32, "conv1")
    model = b.model("x", [1, 3, 35, 35], value)
    model.opset_import[0].version = 9
    model.ir_version = 4
    return model


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "guard stage 64ch 56x56": lambda: guard_stage(64, 56),
    "guard stage 16ch 24x24": lambda: guard_stage(16, 24),
    "small CNN 3x64x64": small_cnn,
    "SPP block 16->32ch 20x20": spp_block,
    "keras SAME_UPPER 3x24x24": keras_same_upper,
    "Inception-style opset 9 3x35x35": inception_opset9,
}


def mask_guarded(model: onnx.ModelProto, guarded: set[str]) -> onnx.ModelProto:
    """The ``guarded`` nodes of ``model`` as the node with the pooled-mask guard (not proven
    here: ``ortpool fix`` proves it when it chooses it; this is for timing)."""
    sites, _ = find_sites(model, Selection())
    plans = {}
    for site in sites:
        if site.judgeable and site.node.name in guarded:
            plan = forms.nan_guarded(forms.unchanged(site), site, forms.GUARD_MASK)
            assert isinstance(plan, forms.Plan), plan
            plans[site.number] = plan
    return apply.apply(model, sites, plans)[0]


def _options(optimized: str | None = None) -> ort.SessionOptions:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = 1
    options.log_severity_level = 3  # no warning that the optimized file is machine-specific
    if optimized:
        options.optimized_model_filepath = optimized
    return options


def session(model: onnx.ModelProto) -> ort.InferenceSession:
    return ort.InferenceSession(model.SerializeToString(), _options(),
                                providers=["CPUExecutionProvider"])


def optimized_counts(model: onnx.ModelProto) -> tuple[int, int]:
    """Nodes and NCHWc Reorder nodes in onnxruntime's optimized graph of ``model``."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "optimized.onnx")
        ort.InferenceSession(model.SerializeToString(), _options(path),
                             providers=["CPUExecutionProvider"])
        graph = onnx.load(path).graph
    return len(graph.node), sum(n.op_type.startswith("Reorder") for n in graph.node)


def measure(name: str, model: onnx.ModelProto, rounds: int) -> list[list[str]]:
    fixed, report = ortpool.fix.fix_with_report(model, nonfinite=True)
    forms_used = sorted({n.form for n in report.nodes if n.form})
    guarded = {n.name for n in report.nodes if n.form and forms.NAN_GUARD in n.form}
    if report.unproven or report.needs_ortpool:
        raise SystemExit(f"{name}: fix left nodes unproven or as ortpool ops: {report}")
    variants = {"original": model, "control": model,
                f"nan-guard ({', '.join(forms_used)})": fixed,
                "nan-guard-mask": mask_guarded(model, guarded)}
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    calls = {}
    for label, variant in variants.items():
        run = session(variant).run
        calls[label] = lambda run=run: run(None, {"x": x})
    stats = interleaved(calls, repeat=rounds, min_sample=0.05, clock=time.thread_time)
    base = stats["original"].median
    rows = []
    for label, variant in variants.items():
        nodes, reorders = optimized_counts(variant)
        st = stats[label]
        rows.append([name, label, f"{st.median * 1e6:.1f}", f"{st.spread * 1e6:.1f}",
                     f"{st.median / base:.3f}", str(nodes), str(reorders)])
    return rows


HEADER = ["model", "variant", "median us", "+/- us", "x original", "nodes", "Reorder"]


def table(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="timing rounds (median of them)")
    parser.add_argument("--write", type=Path, help="also write the table as Markdown here")
    args = parser.parse_args(argv)
    rows = []
    for name, build in MODELS.items():
        rows += measure(name, build(), args.rounds)
    text = table(rows)
    print(text)
    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(
            "# The non-finite guard's cost\n\n"
            f"Written by `python scripts/guard_cost.py --rounds {args.rounds} --write "
            f"{args.write}` (see its docstring for what is timed and how) on onnxruntime "
            f"{ort.__version__}, {os.cpu_count()} cores, Python "
            f"{sys.version.split()[0]}: per-call CPU time of one intra-op thread, median of "
            f"{args.rounds} interleaved rounds; nodes and Reorder nodes of the optimized graph."
            f"\n\n{text}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
