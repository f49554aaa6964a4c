"""``ortpool bench``: its cases, models, timing loop, comparison, report and command line.

No test here asserts a speed: figures depend on the machine. They check what the benchmark
measures and prints, on the tiny cases.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest

from ortpool.bench import cases, models, runner
from ortpool.bench.cases import Case
from ortpool.model import timing
from ortpool.model.singlenode import IR_VERSION
from ortpool.model.timing import Stats
from ortpool.report import bench as report

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

TINY = cases.select(["fixed-cost"])[0]


def test_the_issue_cases_are_all_there_with_their_shapes():
    shapes = {c.name: (c.op, c.shape, c.attributes, c.indices) for c in cases.CASES}
    assert shapes["resnet-stem"] == (
        "MaxPool", (1, 64, 112, 112),
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}, False,
    )
    assert shapes["segnet-indices"][3] is True
    assert shapes["segnet-unpool"][:2] == ("MaxUnpool", (1, 64, 112, 112))
    assert shapes["3d"][1] == (1, 32, 16, 56, 56)
    assert shapes["1d"][1:3] == ((1, 256, 4096), {"kernel_shape": [4], "strides": [4]})
    assert [c.name for c in cases.CASES if c.fixed_cost] == ["fixed-cost"]
    assert shapes["audio-1d"][:3] == (
        "AveragePool", (1, 1, 1_000_000), {"kernel_shape": [400], "strides": [160]}
    )
    assert [c.name for c in cases.CASES if not c.cnn and not c.family] == ["audio-1d", "fixed-cost"]
    assert [c.name for c in cases.CASES if c.family] == [
        "gap-r50-head", "gap-512", "lppool", "faster-rcnn-roi"
    ]
    assert shapes["faster-rcnn-roi"][:2] == ("MaxRoiPool", (1, 512, 38, 50))
    # AveragePool is timed at 11 (fast path in onnxruntime) and at 19 and 22.
    assert cases.CASES[4].opsets == (11, 19, 22)


def test_select_by_name_substring_and_glob_keeps_the_table_order():
    assert [c.name for c in cases.select(["vgg", "resnet*"])] == ["resnet-stem", "vgg"]
    assert [c.name for c in cases.select(["segnet"])] == ["segnet-indices", "segnet-unpool"]
    assert len(cases.select(None)) == len(cases.CASES)
    with pytest.raises(ValueError, match="no benchmark case matches nope; the cases are resnet"):
        cases.select(["nope"])


def test_unpool_inputs_come_from_a_max_pool_of_the_doubled_input():
    case = cases.select(["segnet-unpool"])[0]
    small = Case("u", "u", "MaxUnpool", (1, 2, 3, 3), case.attrs)
    feed = small.inputs(seed=3)
    assert feed["X"].shape == feed["I"].shape == (1, 2, 3, 3)
    assert feed["I"].dtype == np.int64
    # Each index points into its own 6x6 plane, inside the 2x2 window of its output position.
    plane = np.arange(2).reshape(1, 2, 1, 1) * 36
    rows, cols = np.divmod(feed["I"] - plane, 6)
    assert (rows // 2 == np.arange(3).reshape(1, 1, 3, 1)).all()
    assert (cols // 2 == np.arange(3).reshape(1, 1, 1, 3)).all()


def test_models_hold_the_builtin_node_or_the_ortpool_node():
    builtin = onnx.load_from_string(models.builtin_model(TINY, 12))
    assert builtin.ir_version == IR_VERSION
    assert [(o.domain, o.version) for o in builtin.opset_import] == [("", 12)]
    (node,) = builtin.graph.node
    assert (node.op_type, node.domain) == ("MaxPool", "")
    onnx.checker.check_model(builtin)

    ours = onnx.load_from_string(models.ortpool_model(TINY, 12))
    (node,) = ours.graph.node
    assert (node.op_type, node.domain) == ("MaxPool_12", "ortpool")
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert attrs["kernel_shape"] == b"2,2" and attrs["strides"] == b"2,2"
    assert attrs["storage_order"] == 0
    indices = Case("i", "i", "MaxPool", (1, 1, 4, 4), TINY.attrs, indices=True)
    (node,) = onnx.load_from_string(models.ortpool_model(indices, 22)).graph.node
    assert node.op_type == "MaxPool_22_Indices" and list(node.output) == ["Y", "Indices"]


def test_stats_median_quantiles_and_spread():
    stats = Stats((4.0, 1.0, 3.0, 2.0, 5.0), calls_per_sample=7)
    assert stats.median == 3.0
    assert stats.quantile(0.25) == 2.0 and stats.quantile(0.75) == 4.0
    assert stats.spread == 1.0
    assert stats.as_dict()["calls_per_sample"] == 7
    assert stats.as_dict()["min_s"] == 1.0


def test_interleaved_samples_every_variant_each_round_in_rotating_order():
    calls: list[str] = []
    variants = {name: (lambda n=name: calls.append(n)) for name in "abc"}
    result = timing.interleaved(variants, repeat=3, min_sample=0.0, warmup=1, warmup_time=0.0)
    assert {k: len(v.samples) for k, v in result.items()} == {"a": 3, "b": 3, "c": 3}
    assert all(v.calls_per_sample == 1 for v in result.values())
    # After warm-up (1 each) and calibration (1 each): rounds a b c, b c a, c a b.
    assert calls[6:] == list("abcbcacab")


def test_a_control_that_is_the_same_callable_is_calibrated_once():
    """The guard's price times the original twice (the second its control) with one callable:
    one calibration serves both, and both time the same number of calls per sample."""
    calls: list[str] = []
    variants = {"original": (lambda: calls.append("o")), "fixed": (lambda: calls.append("f"))}
    variants["control"] = variants["original"]
    result = timing.interleaved(variants, repeat=2, min_sample=0.0, warmup=1, warmup_time=0.0)
    # warm-up o f o, calibration o f (not the control's), rounds o f o, f o o
    assert "".join(calls) == "ofo" + "of" + "ofo" + "foo"
    assert result["control"].calls_per_sample == result["original"].calls_per_sample == 1


def test_calls_for_grows_until_a_sample_lasts_long_enough():
    assert timing.calls_for(lambda: None, 0.0) == 1
    number = timing.calls_for(lambda: sum(range(100)), 0.002)
    assert number > 10


def test_compare_exact_tolerant_and_mismatches():
    a = np.array([1.0, np.nan, 3.0], np.float32)
    assert runner.compare([a], [a.copy()], exact=True) == ("exact", True, 0.0)
    b = a.copy()
    b[0] = np.nextafter(np.float32(1.0), np.float32(2.0))
    text, ok, worst = runner.compare([a], [b], exact=False)
    assert ok and text.startswith("max |d|") and worst == pytest.approx(1.19e-7, rel=1e-2)
    text, ok, _ = runner.compare([a], [b], exact=True)
    assert not ok and text.startswith("differs")
    text, ok, _ = runner.compare([a], [a[:2]], exact=True)
    assert (text, ok) == ("shape [2] != [3]", False)
    i = np.array([0, 5, 7], np.int64)
    assert runner.compare([i], [np.array([0, 5, 8])], exact=True)[:2] == ("1 values differ", False)


def _result(name: str, builtin: float, ours: float, fixed: bool = False) -> runner.CaseResult:
    case = Case(name, name, "MaxPool", (1, 1, 4, 4), TINY.attrs, fixed_cost=fixed)
    times = {
        "builtin@12": Stats((builtin,), 1),
        "builtin@22": Stats((builtin * 2,), 1),
        "ortpool": Stats((ours,), 1),
        "numpy": Stats((ours / 2,), 1),
        "floor": Stats((builtin * 1.5,), 1),
    }
    return runner.CaseResult(case, 12, times, "exact", True, 0.0, [ours * 1000], "ok")


def test_summary_geometric_mean_worst_case_fixed_cost_and_reference():
    results = [
        _result("a", 1e-3, 2e-3),
        _result("b", 1e-3, 8e-3),
        _result("tiny", 5e-6, 25e-6, fixed=True),
    ]
    info = report.summary(results)
    assert info["geomean_ratio"] == pytest.approx(4.0)
    assert info["max_ratio"] == {"case": "b", "ratio": pytest.approx(8.0)}
    assert info["fixed_cost_extra_s"] == pytest.approx(20e-6)
    assert info["cnn_cases"] == ["a", "b"]
    assert info["min_reference_speedup"]["speedup"] == pytest.approx(1000)
    assert info["all_agree"] is True
    lines = report.summary_lines(info)
    assert lines[0] == "geometric mean ortpool/built-in over 2 CNN shapes: 4.00 (worst 8.00, b)"
    assert info["geomean_floor_ratio"] == pytest.approx(1.5)
    assert lines[1].startswith("marshalling floor") and lines[1].split(": ")[1].startswith("1.50")
    assert lines[2] == "fixed cost per call above built-in: +20.0 µs"


def test_summary_leaves_the_long_axis_out_of_the_cnn_mean():
    audio = Case("audio", "audio", "MaxPool", (1, 1, 100), TINY.attrs, long_axis=True)
    results = [_result("a", 1e-3, 2e-3), runner.CaseResult(
        audio, 12, _result("b", 1e-3, 9e-3).times, "exact", True, 0.0, plan=0.25)]
    info = report.summary(results)
    assert info["cnn_cases"] == ["a"] and info["geomean_ratio"] == pytest.approx(2.0)
    assert report.table(results)[2][-2] == "250 ms"
    assert report.table(results)[1][-2] == "-"


def test_plan_time_forgets_the_plans_before_each_first_call():
    from ortpool.kernels import _calls

    seen = []

    def call():
        seen.append(len(_calls._CALLS))
        _calls.remember(("bench-test", len(seen)), lambda x: x)

    try:
        assert runner.plan_time(call) >= 0.0
    finally:
        _calls.forget()
    # Each first call finds no plan, the call right after it finds the one just made.
    assert seen == [0, 1, 0, 1, 0, 1]


def test_table_uses_the_fastest_builtin_opset_and_formats_times():
    rows = report.table([_result("a", 1e-3, 2e-3)])
    assert rows[0][:5] == ["case", "shape", "built-in (fastest opset)", "ortpool run", "ratio"]
    assert rows[1][:5] == ["a", "1x1x4x4", "1 ms ±0% @12", "2 ms ±0%", "2.00"]
    assert rows[0][5:7] == ["floor (no-op op)", "floor ratio"]
    assert rows[1][5:7] == ["1.5 ms ±0%", "1.50"]
    assert rows[1][8] == "@22 2 ms"
    assert report.fmt_time(8.123e-6) == "8.12 µs" and report.fmt_time(0.0123) == "12.3 ms"
    text = report.render(rows, markdown=True)
    assert text.splitlines()[1] == "|" + "---|" * len(rows[0])


def test_run_case_times_every_variant_and_checks_outputs():
    settings = runner.Settings(repeat=3, min_sample=0.0, reference_limit=0.0)
    result = runner.run_case(TINY, settings)
    assert set(result.times) == {"builtin@12", "builtin@22", "ortpool", "floor", "numpy"}
    assert all(len(s.samples) == 3 for s in result.times.values())
    assert result.floor_ratio == pytest.approx(
        result.times["floor"].median / result.builtin.median
    )
    assert result.agrees and result.agreement == "exact"
    assert result.fastest_opset in (12, 22)
    assert result.ratio > 0
    assert result.reference_status == "not run" and result.reference_speedup is None
    assert result.plan is not None and result.plan >= 0


def test_average_case_compares_with_a_tolerance():
    case = Case("avg", "avg", "AveragePool", (1, 3, 7, 7),
                (("kernel_shape", (3, 3)), ("pads", (1, 1, 1, 1)), ("strides", (2, 2))))
    result = runner.run_case(case, runner.Settings(repeat=1, min_sample=0.0, reference_limit=0.0))
    assert result.agrees
    assert set(result.times) == {
        "builtin@11", "builtin@19", "builtin@22", "ortpool", "floor", "numpy"
    }


def test_floor_runs_the_ortpool_op_without_its_kernel():
    import ortpool
    from ortpool.ort import hook

    case = Case("i", "i", "MaxPool", (1, 2, 4, 4), TINY.attrs, indices=True)
    feed = case.inputs(seed=1)
    session = ortpool.InferenceSession(models.ortpool_model(case, 12))
    real = session.run(None, feed)
    prepared = [np.full((1, 2, 2, 2), 7.5, np.float32), np.arange(8, dtype=np.int64)]
    got = runner._floor_call(session, feed, prepared)()
    np.testing.assert_array_equal(got[0], prepared[0])
    np.testing.assert_array_equal(got[1], prepared[1])
    # Only inside the floor call: the next run computes again.
    after = session.run(None, feed)
    np.testing.assert_array_equal(after[0], real[0])
    np.testing.assert_array_equal(after[1], real[1])
    assert getattr(hook._local, "prepared", None) is None


def test_reference_evaluator_runs_in_a_child_and_is_stopped_at_the_limit():
    from ortpool.runtimes import reference_runtime as reference

    feed = TINY.inputs()
    measured = reference.time_reference(models.builtin_model(TINY, 12), feed, limit=30.0)
    assert measured is not None
    times, outputs = measured
    assert 1 <= len(times) <= 5
    x = feed["X"][0, 0]
    expected = x.reshape(2, 2, 2, 2).max(axis=(1, 3))
    np.testing.assert_array_equal(outputs[0][0, 0], expected)
    assert reference.time_reference(
        models.builtin_model(TINY, 12), feed, limit=0.0, startup=0.0
    ) is None


def test_command_line_list_and_bad_case():
    from ortpool.cli import main

    assert main(["bench", "--list"]) == 0
    assert main(["bench", "--cases", "nope"]) == 2
    assert main(["bench", "--repeat", "0"]) == 2


def test_command_line_prints_table_machine_and_writes_json(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-m", "ortpool", "bench", "--cases", "fixed-cost", "--repeat", "2",
         "--min-sample-ms", "0.1", "--no-reference", "--json", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("machine: ")
    # onnxruntime 1.21 and 1.22 cannot share one pool from Python: the run says so
    from onnxruntime.capi import _pybind_state

    shared = hasattr(_pybind_state, "set_global_thread_pool_sizes")
    pool = "one shared by all sessions" if shared else "one per session"
    assert "onnxruntime intra-op default" in lines[1] and pool in lines[1]
    assert any(line.startswith("fixed-cost ") and line.endswith("exact") for line in lines)
    assert "fixed cost per call above built-in:" in proc.stdout
    doc = json.loads(out.read_text())
    assert doc["settings"]["repeat"] == 2 and doc["settings"]["shared_pool"] is shared
    (case,) = doc["cases"]
    assert case["name"] == "fixed-cost" and case["outputs_agree"] is True
    assert set(case["times"]) == {"builtin@12", "builtin@22", "ortpool", "floor", "numpy"}
    # the terminal's table: the columns that fit 100 characters (the rest in --json)
    assert max(len(line) for line in lines) <= 100
    header = next(line for line in lines if line.startswith("case "))
    assert header.split() == ["case", "shape", "built-in", "@opset", "ortpool", "ratio", "floor",
                              "outputs"]
    assert case["times"]["ortpool"]["samples"] == 2
    assert case["reference"]["status"] == "not run"
    assert doc["summary"]["fixed_cost_extra_s"] == pytest.approx(
        case["times"]["ortpool"]["median_s"]
        - case["times"][f"builtin@{case['fastest_builtin_opset']}"]["median_s"]
    )


def test_the_family_cases_and_their_inputs():
    family = [c for c in cases.CASES if c.family]
    assert [(c.name, c.op, c.shape) for c in family] == [
        ("gap-r50-head", "GlobalAveragePool", (1, 2048, 7, 7)),
        ("gap-512", "GlobalAveragePool", (1, 64, 512, 512)),
        ("lppool", "LpPool", (1, 64, 112, 112)),
        ("faster-rcnn-roi", "MaxRoiPool", (1, 512, 38, 50)),
    ]
    roi = family[-1]
    assert roi.attributes == {"pooled_shape": [7, 7], "spatial_scale": 0.0625}
    assert roi.opsets == (21,)  # onnxruntime 1.31 has no MaxRoiPool-22 kernel
    feed = roi.inputs(seed=1)
    rois = feed["rois"]
    assert rois.shape == (300, 5) and rois.dtype == np.float32
    # Proposals on the 608x800 image the 38x50 map was pooled from, inside it, 16 px or more.
    assert (rois[:, 0] == 0).all() and (rois[:, 1:3] >= 0).all()
    assert (rois[:, 3] < 800).all() and (rois[:, 4] < 608).all()
    assert (rois[:, 3] - rois[:, 1] > 0).all()


def after_a_shared_pool(model: str) -> None:
    """In the child: ``ortpool.bench(shared_pool=True)`` twice (one thread, then the default),
    then the other calls that open sessions in this process; prints what each gave."""
    import ortpool

    found = []
    for threads in (1, 0):
        report = ortpool.bench(cases="fixed-cost", repeat=1, min_sample_ms=0,
                               reference_timeout=0, shared_pool=True, intra_op_threads=threads)
        found.append([report.exit_code, report.machine["ort_intra_op_threads"]])
    try:  # the threads of a pool the process cannot have are refused, not reported
        ortpool.validate(model, intra_op_threads=2)
    except ortpool.OrtpoolError as err:
        found.append(str(err))
    validated = ortpool.validate(model, isolate=False)
    found.append(validated[0].status)
    runtime = json.loads(validated.to_json())["settings"]["runtime"]
    found.append([runtime["intra_op_threads"], runtime["shared_pool"]])
    found.append(ortpool.fix(model).exit_code)
    session = ortpool.InferenceSession(ortpool.rewrite(model))
    found.append(session.run(None, {"X": np.zeros((1, 3, 16, 16), np.uint8)})[0].shape)
    print(json.dumps(found))


def test_a_shared_pool_leaves_the_process_s_later_sessions_running():
    """onnxruntime's process-wide pool cannot be replaced nor left: after a first
    ``bench(shared_pool=True)`` a second one raised onnxruntime's Fail, and every later session
    of the process (one with a pool of its own) failed: validate said could-not-run, fix exit 2
    (unproven), InferenceSession raised. They now run on the shared pool, and their reports say
    so: the pool's threads, not others asked for (which are refused)."""
    from tests.support import ROOT, run_child

    if not runner_can_share():
        pytest.skip("onnxruntime 1.21 and 1.22 cannot share one pool from Python")
    done = run_child(__name__, "after_a_shared_pool", str(ROOT / "models" / "maxpool-12.onnx"),
                     timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        [0, 1], [0, 1],
        "intra_op_threads=2: every session of this process runs on the one pool "
        "bench(shared_pool=True) made (intra-op threads: 1; no inter-op pool), which onnxruntime "
        "keeps for the process's life; leave the threads out, or run in another process",
        "agree", [1, True], 0, [1, 3, 16, 16]]


def runner_can_share() -> bool:
    from onnxruntime.capi import _pybind_state

    return hasattr(_pybind_state, "set_global_thread_pool_sizes")
