#!/usr/bin/env python
"""Must the fixed models have ortpool at run time? Run them where only onnxruntime is installed.

Two steps, in two environments:

    python scripts/fix_onnxruntime_alone.py make DIR     # here: fix the bundled fix models,
                                                         # keep those without ortpool ops, save
                                                         # each with its inputs and proven outputs
    python3 -m venv /tmp/ort && /tmp/ort/bin/pip install onnxruntime
    /tmp/ort/bin/python scripts/fix_onnxruntime_alone.py run DIR   # onnxruntime (and numpy) only

``run`` first checks that ortpool, onnx, onnxruntime-extensions and numba cannot be imported, then
compares every output with the proven run's, bit for bit (NaN cells included).
"""

from __future__ import annotations

import argparse
import glob
import os
import sys

import numpy as np


def make(folder: str) -> int:
    import onnx

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    sys.path.insert(0, root)
    from ortpool.fix import fix_with_report
    from ortpool.validate.validator import bundled_models_dir
    from tests.support.fix import model_feeds, run_fixed

    os.makedirs(folder, exist_ok=True)
    for path in sorted((bundled_models_dir() / "fix").glob("*.onnx")):
        fixed, report = fix_with_report(path, nonfinite=path.stem == "fix-nan")
        if report.needs_ortpool or report.unproven:
            names = [n.name for n in report.needs_ortpool + report.unproven]
            print(f"{path.stem}: skipped, needs ortpool at run time ({', '.join(names)})")
            continue
        feeds = {k: np.asarray(v) for k, v in model_feeds(onnx.load(path), seed=7).items()}
        outputs = run_fixed(fixed, feeds)
        onnx.save(fixed, os.path.join(folder, f"{path.stem}.onnx"))
        np.savez(os.path.join(folder, f"{path.stem}.npz"),
                 **{f"in_{k}": v for k, v in feeds.items()},
                 **{f"out_{i}": v for i, v in enumerate(outputs)})
        print(f"{path.stem}: saved ({', '.join(sorted({n.form for n in report.nodes}))})")
    return 0


def run(folder: str) -> int:
    import onnxruntime as ort

    present = []
    for module in ("ortpool", "onnx", "onnxruntime_extensions", "numba"):
        try:
            __import__(module)
            present.append(module)
        except ImportError:
            pass
    if present:
        print(f"not an onnxruntime-only environment: {', '.join(present)} importable")
        return 2
    print(f"onnxruntime {ort.__version__} alone")
    failed = 0
    for path in sorted(glob.glob(os.path.join(folder, "*.onnx"))):
        data = np.load(path[: -len(".onnx")] + ".npz")
        feeds = {k[3:]: data[k] for k in data.files if k.startswith("in_")}
        want = [data[f"out_{i}"] for i in range(sum(k.startswith("out_") for k in data.files))]
        got = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
        same = len(got) == len(want) and all(
            g.dtype == w.dtype and np.array_equal(g, w, equal_nan=True)
            for g, w in zip(got, want, strict=True)
        )
        failed += not same
        shapes = [list(g.shape) for g in got]
        print(f"{os.path.basename(path)}: {shapes} {'bit-identical' if same else 'DIFFERENT'}")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["make", "run"])
    parser.add_argument("folder")
    args = parser.parse_args()
    return make(args.folder) if args.step == "make" else run(args.folder)


if __name__ == "__main__":
    sys.exit(main())
