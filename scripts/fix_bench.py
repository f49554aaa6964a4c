#!/usr/bin/env python
"""Speed of a model fixed by ``ortpool fix`` against the original and against ortpool's ops.

The model: Conv -> MaxPool (SAME_UPPER with dilation: onnxruntime pads for the undilated kernel)
-> Conv -> AveragePool (VALID with ceil_mode: onnxruntime grows the output) -> Conv, 64 channels
at 56x56 (a ResNet stage). Three versions run in plain onnxruntime at its default optimization
level, interleaved in one process (every round runs each once, in rotating order):

* ``original``: the defective model as it is (fast, wrong);
* ``fixed``: ``ortpool fix`` of it (both pools proven exact);
* ``ortpool-ops``: ``ortpool rewrite --nodes`` of the two pools (exact, Python ops).

Then throughput with two Python threads sharing one session against one thread, each run
single-threaded inside onnxruntime (intra_op_num_threads=1) so that the threads are what scales.

Run: ``python scripts/fix_bench.py [--rounds 300] [--seconds 2] [--repeats 5] [--save DIR]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import ortpool


def cnn(channels: int = 64, size: int = 56) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits, nodes = [], []
    value = "x"
    layers = [
        ("MaxPool", {"kernel_shape": [3, 3], "dilations": [2, 2], "auto_pad": "SAME_UPPER"}),
        ("AveragePool", {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "VALID",
                         "ceil_mode": 1}),
        (None, None),
    ]
    for index, (pool, attrs) in enumerate(layers):
        weight = f"w{index}"
        inits.append(numpy_helper.from_array(
            (rng.standard_normal((channels, channels, 3, 3)) * 0.05).astype(np.float32), weight))
        inits.append(numpy_helper.from_array(np.zeros(channels, np.float32), f"b{index}"))
        nodes.append(h.make_node("Conv", [value, weight, f"b{index}"], [f"c{index}"],
                                 name=f"conv{index}", kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        value = f"c{index}"
        if pool:
            nodes.append(h.make_node(pool, [value], [f"p{index}"], name=f"pool{index}", **attrs))
            value = f"p{index}"
    graph = h.make_graph(
        nodes, "fix-bench",
        [h.make_tensor_value_info("x", T.FLOAT, [1, channels, size, size])],
        [h.make_tensor_value_info(value, T.FLOAT, None)], inits,
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)])
    model.ir_version = 9
    return model


def session(model: onnx.ModelProto, threads: int = 0):
    options = ort.SessionOptions()
    # Errors only: the original model makes onnxruntime warn on every run (its SAME-with-dilation
    # output is not the size the model's shapes say), and logging is not free.
    options.log_severity_level = 3
    if threads:
        options.intra_op_num_threads = threads
    if any(n.domain == "ortpool" for n in model.graph.node):
        return ortpool.InferenceSession(model, options)
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def interleaved(sessions: dict, feeds: dict, rounds: int) -> dict[str, list[float]]:
    names = list(sessions)
    times: dict[str, list[float]] = {n: [] for n in names}
    for name in names:  # warm-up (first runs allocate; ortpool's ops compile or load kernels)
        for _ in range(5):
            sessions[name].run(None, feeds)
    for r in range(rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            start = time.perf_counter()
            sessions[name].run(None, feeds)
            times[name].append(time.perf_counter() - start)
    return times


def throughput(sess, feeds: dict, threads: int, seconds: float) -> float:
    """Runs per second with ``threads`` Python threads calling one session."""
    counts = [0] * threads
    stop = time.perf_counter() + seconds

    def loop(slot: int) -> None:
        while time.perf_counter() < stop:
            sess.run(None, feeds)
            counts[slot] += 1

    workers = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(counts) / seconds


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--save", type=Path, help="write the three models here")
    args = parser.parse_args(argv)

    original = cnn()
    fixed, report = ortpool.fix.fix_with_report(original)
    print("\n".join(report.summary_lines()))
    rewritten = ortpool.rewrite(original, nodes=["pool0", "pool1"])
    models = {"original": original, "fixed": fixed, "ortpool-ops": rewritten}
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        for name, model in models.items():
            onnx.save(model, args.save / f"{name}.onnx")
    feeds = {"x": np.random.default_rng(1).standard_normal((1, 64, 56, 56)).astype(np.float32)}

    sessions = {name: session(model) for name, model in models.items()}
    got = {name: s.run(None, feeds)[0] for name, s in sessions.items()}
    np.testing.assert_allclose(got["fixed"], got["ortpool-ops"], rtol=1e-5, atol=1e-5)
    print(f"\noutputs: original {got['original'].shape} (wrong), fixed {got['fixed'].shape} "
          f"= ortpool-ops {got['ortpool-ops'].shape}")
    times = interleaved(sessions, feeds, args.rounds)
    median = {n: statistics.median(t) * 1e3 for n, t in times.items()}
    print(f"\nsession.run, interleaved, {args.rounds} rounds (ms: median [p10, p90])")
    for name, values in times.items():
        ms = sorted(v * 1e3 for v in values)
        p10, p90 = ms[len(ms) // 10], ms[9 * len(ms) // 10]
        print(f"  {name:<12} {median[name]:7.3f} [{p10:.3f}, {p90:.3f}]")
    print(f"  fixed / original    {median['fixed'] / median['original']:.3f}")
    print(f"  ortpool-ops / fixed {median['ortpool-ops'] / median['fixed']:.3f}")

    print(f"\nthroughput, one session per model, intra_op_num_threads=1, {args.repeats} windows "
          f"of {args.seconds:g} s per model and thread count, interleaved (runs/s, median)")
    singles = {name: session(model, threads=1) for name, model in models.items()}
    for single in singles.values():
        single.run(None, feeds)
    rates: dict[tuple[str, int], list[float]] = {}
    for rep in range(args.repeats):
        order = [(n, t) for n in singles for t in (1, 2)]
        shift = rep % len(order)
        for name, threads in order[shift:] + order[:shift]:
            rate = throughput(singles[name], feeds, threads, args.seconds)
            rates.setdefault((name, threads), []).append(rate)
    for name in singles:
        one = statistics.median(rates[(name, 1)])
        two = statistics.median(rates[(name, 2)])
        print(f"  {name:<12} 1 thread {one:7.1f}   2 threads {two:7.1f}   x{two / one:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
