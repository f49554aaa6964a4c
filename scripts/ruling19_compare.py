#!/usr/bin/env python
"""ruling 19 (a kernel longer than the padded input): ortpool vs onnxruntime vs PyTorch.

Every windowed operator (MaxPool with Indices, AveragePool with and without count_include_pad,
LpPool) on inputs where the effective kernel is longer than the padded input, in floor and ceil
mode, explicit pads and VALID. Each cell is the output's shape and values (or the error); the
last column says whether onnxruntime and PyTorch give ortpool's result.

    pip install torch        # in your own venv: torch is no dependency of ortpool
    python scripts/ruling19_compare.py

The input is 1..n*n (positive, so LpPool's |x| and PyTorch's lp_pool agree on the sign).
PyTorch has no auto_pad and pads at most half the kernel: those cells say "-". PyTorch's
lp_pool2d is avg_pool2d(x^p) * kw * kh, so where ceil mode clips a window it differs from the
Lp norm (its own difference, not ruling 19's).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import onnx
from onnx import TensorProto, helper

from ortpool import kernels
from ortpool.model.singlenode import node_model


@dataclasses.dataclass(frozen=True)
class Case:
    n: int  # the input is n x n
    k: int
    s: int
    ceil: int
    pad: int = 0  # the same begin and end pad on both axes
    valid: bool = False

    @property
    def label(self) -> str:
        mode = "VALID" if self.valid else ("ceil" if self.ceil else "floor")
        pads = f" p{self.pad}" if self.pad else ""
        return f"{self.n}x{self.n} k{self.k} s{self.s}{pads} {mode}"


CASES = [
    Case(1, 2, 2, 1),  # ResNet-D's shortcut on a 1x1 map: one window
    Case(1, 2, 2, 0),  # floor(-1/2) + 1 = 0: no window
    Case(1, 3, 3, 1),  # overhang 2 < stride 3: one window
    Case(1, 3, 2, 1),  # overhang 2 = stride 2: ceil(-2/2) + 1 = 0
    Case(3, 4, 4, 1),  # ceil(-1/4) + 1 = 1: the window holds all 9 elements
    Case(3, 4, 4, 0),
    Case(2, 5, 4, 1, pad=1),  # padded 4 < 5: one window from -1, count_include_pad counts 4
    Case(1, 2, 2, 1, valid=True),  # VALID ignores ceil_mode: ceil(0/2) = 0
]

OPS = [
    ("MaxPool", 12, {}),
    ("AveragePool", 19, {"count_include_pad": 0}),
    ("AveragePool", 19, {"count_include_pad": 1}),
    ("LpPool", 18, {"p": 2}),
]


def attributes(case: Case, op: str, extra: dict) -> dict:
    attrs = {"kernel_shape": [case.k] * 2, "strides": [case.s] * 2, **extra}
    if case.valid:
        attrs["auto_pad"] = "VALID"
    else:
        attrs["pads"] = [case.pad] * 4
    attrs["ceil_mode"] = case.ceil
    return attrs


def show(arrays) -> str:
    if isinstance(arrays, str):
        return arrays
    parts = []
    for a in arrays:
        a = np.asarray(a)
        values = ",".join(f"{v:g}" for v in a.ravel()[:4].tolist())
        parts.append(f"{list(a.shape)}[{values}]")
    return " ".join(parts)


def same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str) or len(a) != len(b):
        return False
    return all(
        np.shape(x) == np.shape(y) and np.allclose(x, y, rtol=1e-6, equal_nan=True)
        for x, y in zip(a, b, strict=True)
    )


def ortpool_run(x, op, version, attrs):
    try:
        return kernels.run_op(op, version, [x], attrs, 2 if op == "MaxPool" else 1)
    except Exception as err:  # the table shows any failure
        return f"error: {str(err)[:60]}"


def onnxruntime_run(x, op, version, attrs):
    import onnxruntime as ort

    outputs = ["Y", "I"] if op == "MaxPool" else ["Y"]
    node = helper.make_node(op, ["X"], outputs, **attrs)
    model = node_model(
        [node],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT if o == "Y" else TensorProto.INT64,
                                       None) for o in outputs],
        [helper.make_opsetid("", version)],
    )
    try:
        session = ort.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        return session.run(None, {"X": x})
    except Exception as err:
        return f"error: {str(err).splitlines()[0][-60:]}"


def torch_run(x, op, case: Case, extra: dict):
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return "torch not installed"
    if case.valid or 2 * case.pad > case.k:
        return "-"
    t = torch.from_numpy(x)
    try:
        if op == "MaxPool":
            y, i = F.max_pool2d(t, case.k, case.s, case.pad, ceil_mode=bool(case.ceil),
                                return_indices=True)
            return [y.numpy(), i.numpy()]
        if op == "AveragePool":
            y = F.avg_pool2d(t, case.k, case.s, case.pad, ceil_mode=bool(case.ceil),
                             count_include_pad=bool(extra["count_include_pad"]))
            return [y.numpy()]
        if case.pad:
            return "-"
        return [F.lp_pool2d(t, 2, case.k, case.s, ceil_mode=bool(case.ceil)).numpy()]
    except Exception as err:
        text = str(err).splitlines()[0]
        return "error: output size is too small" if "too small" in text else f"error: {text[:60]}"


def main() -> int:
    rows = []
    for case in CASES:
        x = np.arange(1, case.n * case.n + 1, dtype=np.float32).reshape(1, 1, case.n, case.n)
        for op, version, extra in OPS:
            attrs = attributes(case, op, extra)
            name = op + ("" if "count_include_pad" not in extra
                         else f" cip={extra['count_include_pad']}")
            ours = ortpool_run(x, op, version, attrs)
            ort_result = onnxruntime_run(x, op, version, attrs)
            torch_result = torch_run(x, op, case, extra)
            agree = []
            for label, theirs in (("ort", ort_result), ("torch", torch_result)):
                if theirs == "-":
                    continue
                if isinstance(theirs, str) and theirs.startswith("error"):
                    agree.append(f"{label}:refuses")
                else:
                    agree.append(f"{label}:{'=' if same(ours, theirs) else 'DIFF'}")
            rows.append((case.label, name, show(ours), show(ort_result), show(torch_result),
                         " ".join(agree)))
    header = ("case", "op", "ortpool", "onnxruntime", "torch", "vs ortpool")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print(" | ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    import onnxruntime

    try:
        import torch

        torch_version = torch.__version__
    except ImportError:
        torch_version = "absent"
    print(f"\nonnx {onnx.__version__}, onnxruntime {onnxruntime.__version__}, "
          f"torch {torch_version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
