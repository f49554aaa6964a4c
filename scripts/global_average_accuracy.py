#!/usr/bin/env python
"""GlobalAveragePool on 1 x 1 x S x S float32 uniform [0, 1) values: ortpool's and onnxruntime's
relative error against the exact mean, side by side (ruling 13).

Uniform float32 values are multiples of 2**-24, so the exact sum is an integer sum: the "exact
mean" below is exact up to one final rounding of a float64 division.
Run: ``python scripts/global_average_accuracy.py [SIDE ...] [--seed N] [--offset V]`` (default
1024 4096).
"""

from __future__ import annotations

import argparse

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

from ortpool import kernels
from ortpool.kernels import _backend
from ortpool.model.singlenode import node_model


def builtin(x: np.ndarray) -> float:
    model = node_model(
        [helper.make_node("GlobalAveragePool", ["X"], ["Y"])], "gap",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [helper.make_opsetid("", 22)],
    )
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return float(session.run(None, {"X": x})[0].reshape(-1)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sides", nargs="*", type=int, default=[1024, 4096])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--offset", type=float, default=0.0,
                        help="added to every value (in float32; e.g. 100: uniform [100, 101))")
    args = parser.parse_args()
    print(f"onnxruntime {ort.__version__}; uniform [0, 1) float32 + {args.offset:g}, "
          f"seed {args.seed}")
    for side in args.sides:
        x = np.random.default_rng(args.seed).random((1, 1, side, side), dtype=np.float32)
        x += np.float32(args.offset)  # values stay multiples of 2**-24 below 2**24
        exact = int((x.astype(np.float64) * 2.0**24).astype(np.int64).sum()) / 2.0**24 / x.size
        ulp = float(np.spacing(np.float32(exact)))
        rows = [("onnxruntime", builtin(x))]
        for path in ("numpy", "numba"):
            _backend.set_backend(path)
            rows.append((f"ortpool ({path})", float(kernels.global_average_pool(x).reshape(-1)[0])))
        for name, value in rows:
            err = abs(value - exact)
            print(f"{side}x{side}  {name:16} {value!r:22} relative error {err / exact:.2e}"
                  f"  ({err / ulp:.2f} ulp)")


if __name__ == "__main__":
    main()
