#!/usr/bin/env python
"""Pooling cases from issue 35 on every runtime installed here, each against the spec.

Each case runs on OpenVINO (``pip install openvino``), tract (``pip install tract``) and the onnx
reference evaluator, each in a worker process (:class:`ortpool.runtimes.Worker`: an abort or a
hang is one line of the output), and on ortpool's kernels (the spec). A case names the runtime
the issue measured it on and what was seen there; the output says whether that still holds.
Run: ``python scripts/runtime_probe.py [--runtime NAME ...] [--timeout S] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

from ortpool import dtypes, kernels, runtimes
from ortpool.model.singlenode import alone_model, feed_dict
from ortpool.model.site import Site


@dataclass(frozen=True)
class Case:
    title: str
    op: str
    opset: int
    attributes: dict[str, Any]
    feeds: list[np.ndarray]
    n_outputs: int = 1
    about: str = ""  # the runtime the issue measured
    seen: str = ""  # what it saw there
    outputs: tuple[str, ...] = field(default=("Y", "Indices"))


X7 = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7)
X34 = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)

CASES = [
    Case(
        "MaxPool-22 k=2 s=3 pads=1,1 ceil_mode=1 on [1..7]",
        "MaxPool", 22, {"kernel_shape": [2], "strides": [3], "pads": [1, 1], "ceil_mode": 1}, [X7],
        about="openvino",
        seen="a 4th output from the window wholly in the end pad (the spec drops it: [1,4,7])",
    ),
    Case(
        "MaxPool-12 k=2x2 storage_order=1 on a 3x4 ramp: Indices",
        "MaxPool", 12, {"kernel_shape": [2, 2], "storage_order": 1}, [X34], n_outputs=2,
        about="openvino", seen="Indices in row-major order whatever storage_order says",
    ),
    Case(
        "AveragePool-19 k=2 pads=2,2 on [1..7] (windows wholly in the padding)",
        "AveragePool", 19, {"kernel_shape": [2], "pads": [2, 2]}, [X7],
        about="openvino", seen="refused when the model is read",
    ),
    Case(
        "GlobalLpPool-2 p=2 on [1..7]",
        "GlobalLpPool", 2, {"p": 2}, [X7],
        about="tract", seen="4.472 (the root mean square) where the spec says 11.832",
    ),
    Case(
        "MaxPool-12 uint8 k=2 pads=1,1 on zeros: Indices",
        "MaxPool", 12, {"kernel_shape": [2], "pads": [1, 1]}, [np.zeros((1, 1, 7), np.uint8)],
        n_outputs=2, about="tract", seen="an index into the padding for an all-zero window",
    ),
    Case(
        "GlobalAveragePool-1 on [1,1,0,0] (zero-size)",
        "GlobalAveragePool", 1, {}, [np.zeros((1, 1, 0, 0), np.float32)],
        about="tract", seen="SIGABRT (the process ends)",
    ),
    Case(
        "GlobalLpPool-2 p=2 on [1,1,0] (zero-size)",
        "GlobalLpPool", 2, {"p": 2}, [np.zeros((1, 1, 0), np.float32)],
        about="tract", seen="(not measured before)",
    ),
    Case(
        "MaxPool-12 k=2 s=2 auto_pad=SAME_LOWER on [1..7]",
        "MaxPool", 12, {"kernel_shape": [2], "strides": [2], "auto_pad": "SAME_LOWER"}, [X7],
        about="reference", seen="3 outputs where the spec has ceil(7/2) = 4",
    ),
    Case(
        "AveragePool-1 k=3 pads=1,1 on [1..7] (count_include_pad does not exist at 1)",
        "AveragePool", 1, {"kernel_shape": [3], "pads": [1, 1]}, [X7],
        about="reference", seen="the pads counted in the divisor (the spec excludes them)",
    ),
    Case(
        "MaxPool-22 bfloat16 k=2 on [1..7]",
        "MaxPool", 22, {"kernel_shape": [2]}, [X7.astype(ml_dtypes.bfloat16)],
        about="tract", seen="no bfloat16",
    ),
]  # fmt: skip


def _values(array: np.ndarray) -> str:
    flat = np.asarray(array)
    if flat.dtype == np.dtype(ml_dtypes.bfloat16):
        flat = flat.astype(np.float32)
    shown = np.array2string(flat.reshape(-1)[:12], precision=5, separator=", ", max_line_width=400)
    more = " ..." if flat.size > 12 else ""
    return f"{shown}{more} shape {list(flat.shape)}"


def _same(got: list[np.ndarray], want: list[np.ndarray]) -> bool:
    for g, w in zip(got, want, strict=True):
        if g.shape != w.shape or g.dtype != w.dtype:
            return False
        floats = np.issubdtype(w.dtype, np.floating) or w.dtype == np.dtype(ml_dtypes.bfloat16)
        a, b = (g.astype(np.float64), w.astype(np.float64)) if floats else (g, w)
        if not np.array_equal(a, b, equal_nan=floats):
            return False
    return True


def spec_of(case: Case) -> tuple[list[np.ndarray] | None, str]:
    try:
        outputs = kernels.run_op(case.op, case.opset, case.feeds, case.attributes, case.n_outputs)
    except Exception as err:  # the spec's kernels reject the case: printed, not raised
        return None, f"rejected: {err}"
    return list(outputs), ""


def probe(names: list[str], timeout: float) -> list[dict[str, Any]]:
    workers = {name: runtimes.Worker(runtimes.get(name), timeout) for name in names}
    results = []
    try:
        for case in CASES:
            site = Site.alone(case.op, case.opset, case.attributes,
                              dtypes.name_of(case.feeds[0].dtype), case.feeds[0].shape,
                              len(case.feeds), case.n_outputs, strict=False)
            model = alone_model(site, case.feeds).SerializeToString()
            feeds = feed_dict(case.feeds)
            want, rejected = spec_of(case)
            row: dict[str, Any] = {"case": case.title, "about": case.about, "seen": case.seen}
            row["spec"] = rejected or [_values(w) for w in want or []]
            for name, worker in workers.items():
                try:
                    got = worker.run(model, feeds)
                except runtimes.RuntimeFailure as err:
                    row[name] = {"verdict": err.kind, "said": err.message}
                    continue
                verdict = "same" if want is not None and _same(got, want) else "differs"
                row[name] = {"verdict": verdict, "got": [_values(g) for g in got]}
            results.append(row)
    finally:
        for worker in workers.values():
            worker.close()
    return results


def show(names: list[str], results: list[dict[str, Any]]) -> None:
    for row in results:
        print(f"\n{row['case']}")
        spec = row["spec"]
        print(f"  {'spec':10s} {spec if isinstance(spec, str) else '; '.join(spec)}")
        for name in names:
            if name not in row:
                continue
            r = row[name]
            told = "; ".join(r["got"]) if "got" in r else r["said"]
            mark = "  <- the issue's runtime" if name == row["about"] else ""
            print(f"  {name:10s} {r['verdict']}: {told}{mark}")
        print(f"  (issue: {row['about']}: {row['seen']})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runtime",
        action="append",
        choices=runtimes.names(),
        help="only this runtime (repeatable; default: every one installed)",
    )
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per case")
    parser.add_argument("--json", action="store_true", help="the results as JSON")
    args = parser.parse_args(argv)
    names = []
    for name in args.runtime or runtimes.names():
        hint = runtimes.install_hint(name)
        if hint is None:
            names.append(name)
        else:
            print(f"{name}: not installed ({hint})", file=sys.stderr)
    if not names:
        print("no runtime to probe", file=sys.stderr)
        return 1
    titles = {name: runtimes.get(name).title() for name in names}
    results = probe(names, args.timeout)
    if args.json:
        print(json.dumps({"runtimes": titles, "cases": results}, indent=1))
        return 0
    for name, title in titles.items():
        print(f"{name:10s} {title}")
    show(names, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
