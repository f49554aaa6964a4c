#!/usr/bin/env python
"""Rewrite a model with large external weights and report the figures.

Builds, in a temporary directory, a model with >= 200 MB of external weights (``--weights-mb``)
and pooling nodes in the main graph, both branches of an If, a Loop body and a model-local
function; runs ``ortpool rewrite`` on it as a child process (measuring its wall time and peak
memory), then checks: every pool retargeted, the source weight file byte-identical (SHA-256
before and after), the output's weights linked next to it, and the rewritten model's outputs
equal to the built-in run of the original (both If branches).

Run: ``python scripts/big_model_demo.py [--weights-mb 256] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h


def vi(name: str, elem: int = T.FLOAT, shape=None) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 24):
            digest.update(chunk)
    return digest.hexdigest()


def write_weights(path: Path, count: int) -> None:
    """``count`` float32 values in chunks (never the whole array in memory)."""
    rng = np.random.default_rng(7)
    with path.open("wb") as stream:
        left = count
        while left:
            n = min(left, 1 << 24)
            (rng.random(n, dtype=np.float32) * 0.01).tofile(stream)
            left -= n


def build(folder: Path, weights_mb: int) -> Path:
    count = weights_mb * (1 << 20) // 4
    write_weights(folder / "weights.bin", count)
    weights = onnx.TensorProto(name="weights", data_type=T.FLOAT, dims=[count])
    weights.data_location = onnx.TensorProto.EXTERNAL
    for key, value in (("location", "weights.bin"), ("offset", "0"), ("length", str(count * 4))):
        weights.external_data.add(key=key, value=value)

    pool = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    then_branch = h.make_graph(
        [h.make_node("MaxPool", ["shifted"], ["t"], name="then_maxpool", **pool)],
        "then", [], [vi("t")])
    else_branch = h.make_graph(
        [h.make_node("AveragePool", ["shifted"], ["e"], name="else_averagepool", **pool)],
        "else", [], [vi("e")])
    body = h.make_graph(
        [h.make_node("MaxPool", ["state"], ["pooled", "where"], name="loop_maxpool",
                     kernel_shape=[2, 2], strides=[1, 1], pads=[0, 0, 1, 1]),
         h.make_node("Identity", ["c"], ["c_out"], name="loop_cond")],
        "body", [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("state")],
        [vi("c_out", T.BOOL, []), vi("pooled"), vi("where", T.INT64)])
    function = h.make_function(
        "demo", "pool_block", ["a"], ["b"],
        [h.make_node("Cast", ["a"], ["a16"], to=T.FLOAT16),
         h.make_node("AveragePool", ["a16"], ["p16"], name="function_averagepool",
                     kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
         h.make_node("Cast", ["p16"], ["b"], to=T.FLOAT)],
        [h.make_opsetid("", 19)])
    nodes = [
        h.make_node("ReduceMean", ["weights"], ["mean"], name="mean", keepdims=0),
        h.make_node("Add", ["image", "mean"], ["shifted"], name="shift"),
        h.make_node("MaxPool", ["shifted"], ["main", "main_idx"], name="main_maxpool", **pool),
        h.make_node("MaxUnpool", ["main", "main_idx"], ["unpooled"], name="main_maxunpool",
                    **pool),
        h.make_node("If", ["flag"], ["branch"], name="if", then_branch=then_branch,
                    else_branch=else_branch),
        h.make_node("Loop", ["trips", "", "shifted"], ["looped", "scan"], name="loop", body=body),
        h.make_node("pool_block", ["shifted"], ["fn_out"], domain="demo", name="call"),
    ]
    graph = h.make_graph(
        nodes, "big",
        [vi("image", T.FLOAT, [1, 3, 33, 33]), vi("flag", T.BOOL, []), vi("trips", T.INT64, [])],
        [vi("unpooled"), vi("branch"), vi("looped"), vi("scan", T.INT64), vi("fn_out"),
         vi("shifted")],
        [weights])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19), h.make_opsetid("demo", 1)],
                         functions=[function], producer_name="ortpool big_model_demo")
    model.ir_version = 9
    path = folder / "big.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def run_child(args: list[str]) -> tuple[int, float, int, str]:
    """(exit code, wall seconds, peak RSS in KiB, stdout) of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, time.perf_counter() - start, usage.ru_maxrss, output


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights-mb", type=int, default=256)
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep the files")
    args = parser.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ortpool-big-"))
    source_dir, out_dir = base / "source", base / "out"
    source_dir.mkdir(parents=True, exist_ok=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    source = build(source_dir, args.weights_mb)
    data = source_dir / "weights.bin"
    print(f"built {source} ({source.stat().st_size} bytes) + weights.bin "
          f"({data.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - started:.1f} s")
    before = sha256(data), data.stat().st_mtime_ns

    out = out_dir / "big.ortpool.onnx"
    report = out_dir / "report.json"
    code, seconds, peak_kib, output = run_child(
        [sys.executable, "-m", "ortpool", "rewrite", str(source), str(out), "--json", str(report),
         "--link-data"])
    print(output.rstrip())
    if code:
        print(f"ortpool rewrite failed with exit code {code}")
        return 1
    after = sha256(data), data.stat().st_mtime_ns
    summary = json.loads(report.read_text())
    linked = os.path.samefile(data, out_dir / "weights.bin")
    # The peak memory of importing python + numpy + onnx alone, for comparison.
    _, _, baseline_kib, _ = run_child([sys.executable, "-c", "import ortpool.rewrite"])

    import onnxruntime as ort

    import ortpool

    rng = np.random.default_rng(0)
    feed = {"image": rng.standard_normal((1, 3, 33, 33)).astype(np.float32),
            "trips": np.array(2, dtype=np.int64)}
    names = ["unpooled", "branch", "looped", "scan", "fn_out", "shifted"]
    compared = {}
    for flag in (True, False):
        feed["flag"] = np.array(flag)
        expected = ort.InferenceSession(str(source), providers=["CPUExecutionProvider"]).run(
            None, feed)
        got = ortpool.InferenceSession(str(out)).run(None, feed)
        for name, e, g in zip(names, expected, got, strict=True):
            compared[(flag, name)] = (e, g)
    # The function's float16 AveragePool, by hand: float64 mean of the taps inside the input
    # (ceil mode: the last window holds one column), rounded once to float16 (rulings 8, 10).
    half = compared[(True, "shifted")][0].astype(np.float16).astype(np.float64)
    padded = np.pad(half, ((0, 0), (0, 0), (0, 1), (0, 1)), constant_values=np.nan)
    windows = padded.reshape(1, 3, 17, 2, 17, 2)
    spec_fn = np.nanmean(windows, axis=(3, 5)).astype(np.float16).astype(np.float32)

    print()
    print(f"pools retargeted:           {summary['summary']['changed']} of "
          f"{summary['summary']['considered']} {summary['summary']['per_op_version']}")
    for node in summary["nodes"]:
        print(f"  {node['name']:<24} {node['location']:<40} -> {node['op_type']}"
              + (f" (Cast {node['cast']})" if node["cast"] else ""))
    print(f"weights:                    {data.stat().st_size} bytes "
          f"({data.stat().st_size / 2**20:.0f} MiB), external")
    print(f"source sha256 before/after: {before[0]} / {after[0]} "
          f"({'identical' if before == after else 'CHANGED'}, mtime "
          f"{'unchanged' if before[1] == after[1] else 'CHANGED'})")
    print(f"output weights hard-linked: {linked}; output proto {out.stat().st_size} bytes")
    print(f"rewrite CLI wall time:      {seconds:.2f} s")
    print(f"rewrite CLI peak RSS:       {peak_kib / 1024:.1f} MiB "
          f"(python + import ortpool.rewrite alone: {baseline_kib / 1024:.1f} MiB)")
    ok = before == after and linked
    ok = ok and summary["summary"]["changed"] == summary["summary"]["considered"]
    print("outputs, ortpool vs built-in onnxruntime:")
    for (flag, name), (e, g) in compared.items():
        if name in ("fn_out", "shifted"):
            continue
        diff = float(np.max(np.abs(e.astype(np.float64) - g))) if e.size else 0.0
        exact = bool(np.array_equal(e, g))
        # averages may differ by float32 summation order; maxima and indices must be exact
        averaged = name == "branch" and not flag  # the else branch is an AveragePool
        fine = exact or (averaged and diff < 1e-6)
        ok = ok and fine and e.shape == g.shape
        print(f"  flag={flag!s:<5} {name:<9} {'equal' if exact else f'max |diff| {diff:.2e}'}")
    for flag in (True, False):
        e, g = compared[(flag, "fn_out")]
        ours_ok = bool(np.array_equal(g, spec_fn))
        rounded = bool(np.array_equal(e.astype(np.float16).astype(np.float32), e))
        ok = ok and ours_ok
        print(f"  flag={flag!s:<5} fn_out    ortpool == float16 spec result: {ours_ok}; built-in "
              f"max |diff| {float(np.max(np.abs(e - g))):.2e}, built-in values are float16: "
              f"{rounded} (no float16 AveragePool on CPU: ORT computes in float32 and drops the "
              "rounding)")
    print("OK" if ok else "FAILED", f"(files in {base})" if args.keep else "")
    if not args.keep:
        import shutil

        shutil.rmtree(base)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
