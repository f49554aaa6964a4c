"""ruling 17: a sum's rounding is accuracy, not semantics. The runtime's error against the
exact result (computed here independently, with fractions or ``math.fsum``) in units of
u*mean|x| and in ulp; agree within 4x the pairwise bound, an accuracy note up to 1e-4 of mean|x|
(exit 0, ``fix`` leaves the node), beyond it counted (exit 1, ``fix`` mends it); semantics (a
divisor) stays a plain difference. Measured with the installed onnxruntime (1.32.0 when written:
its float32 GlobalAveragePool sums in float32)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from ortpool.check import causes
from ortpool.check.compare import CAT_DIFFER, CAT_INACCURATE, CAT_NOTE, compare_values
from ortpool.check.judge import lenient_status
from ortpool.cli import main
from ortpool.errors import OrtpoolError
from ortpool.fix.fixer import Options, fix_model
from ortpool.model.singlenode import alone_model, feed_dict
from ortpool.options.accuracy import parse_limits
from ortpool.ort import ortrun
from ortpool.ort.runtime_spec import ISOLATED_LEVEL, RuntimeSpec
from ortpool.report import record as results
from ortpool.report import terminal
from ortpool.tolerances import AccuracyRule, node_tolerance, ulp
from tests.support.judging import run_node, site_of, spec_outputs

pytestmark = pytest.mark.onnxruntime

U = 2.0**-24
GAP = ("GlobalAveragePool", 17, {})


def _onnxruntime(spec: tuple, x: np.ndarray) -> np.ndarray:
    runtime = RuntimeSpec(level=ISOLATED_LEVEL)  # the CPU provider, optimizations off
    model = alone_model(site_of(*spec, [x]), [x])
    return ortrun.run_builtin(model, feed_dict([x]), runtime, 1)[0]


def _float32_ulp(value: Fraction) -> Fraction:
    return Fraction(2) ** (math.frexp(float(value))[1] - 24)


def test_float32_mean_over_160x160_agrees_and_shows_its_accuracy():
    x = np.random.default_rng(0).random((1, 1, 160, 160), dtype=np.float32)
    node = run_node(*GAP, [x])
    runtime = Fraction(float(_onnxruntime(GAP, x).reshape(-1)[0]))
    exact = sum(map(Fraction, x.reshape(-1).tolist())) / x.size  # |x| = x: mean|x| = exact
    units = float(abs(runtime - exact) / (Fraction(U) * exact))
    ulps = float(abs(runtime - exact) / _float32_ulp(exact))
    assert node.status == results.AGREE and node.causes == [] and node.difference == "none"
    acc = node.accuracy
    assert acc["max_error_units"] == pytest.approx(units, rel=1e-9)
    assert acc["max_error_ulp"] == pytest.approx(ulps, rel=1e-9)
    assert acc["pairwise_bound_units"] == pytest.approx(math.log2(25600) + 1)  # 15.64
    assert acc["agree_units"] == pytest.approx(4 * (math.log2(25600) + 1))  # 62.58
    assert acc["note_limit_units"] == pytest.approx(1e-4 / U)  # 1677.7
    # onnxruntime 1.32.0: 35.8 u*mean|x|, 35.7 ulp: beyond a pairwise sum, within 4x its bound
    assert units < acc["agree_units"]
    line = terminal.accuracy_text(node, verbose=True)
    shown = (
        f"Y off by up to {ulps:.3g} ulp = {units:.3g} u*mean|x| (pairwise bound 15.6, agrees "
        "within 62.6, note up to 1.68e+03 = 0.0001 of mean|x|; n=25600)"
    )
    assert line == (shown if units > acc["pairwise_bound_units"] else "")


def test_float32_mean_over_4096x4096_is_counted_as_inaccurate():
    """uniform [0, 100): onnxruntime 1.32.0 is off by 1.1e-3 relative (18210 u*mean|x|), past
    the 1e-4 limit and within a running sum's bound: rounding, counted (exit code 1)."""
    x = np.random.default_rng(0).random((1, 1, 4096, 4096), dtype=np.float32) * np.float32(100)
    node = run_node(*GAP, [x])
    runtime = float(_onnxruntime(GAP, x).reshape(-1)[0])
    mean = math.fsum(x.reshape(-1).astype(np.float64).tolist()) / x.size
    units = abs(runtime - mean) / (U * mean)
    assert node.status == results.INACCURATE and node.failing
    assert node.difference == "accuracy"
    assert [c.code for c in node.causes] == [causes.ACCUMULATION]
    assert node.accuracy["max_error_units"] == pytest.approx(units, rel=1e-6)
    assert units > 1e-4 / U  # beyond the accuracy limit
    assert node.to_dict()["inaccurate"] == 1
    assert terminal.summary([results.ModelResult("m", nodes=[node])]) == (
        "1 of 1 model differs in accuracy only: 1 pooling node: 1 INACCURATE (by basis: ruling "
        "17 1); 0 graph output(s) differ end to end"
    )


def test_classes_and_bounds_of_a_window_average():
    """AveragePool 3x3 over known values: the bounds in the output's units are exact figures;
    n = 9 taps, so a running sum's bound (9 u*mean|x|) lies below the note limit and anything
    beyond the limit is semantics, not rounding."""
    x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4) * np.float32(-0.5)
    attrs = {"kernel_shape": [3, 3]}
    y = spec_outputs("AveragePool", 17, attrs, [x])[0]
    tol = node_tolerance("AveragePool", 11, "float", x, y, attrs)
    mean_abs = np.array([[[[3.0, 3.5], [5.0, 5.5]]]])  # sum of |x| over each window / 9
    acc = tol.accuracy
    np.testing.assert_array_equal(acc.exact, -mean_abs)
    np.testing.assert_allclose(acc.agree, 4 * (math.log2(9) + 1) * U * mean_abs, rtol=1e-15)
    np.testing.assert_allclose(acc.note, 1e-4 * mean_abs, rtol=1e-15)
    np.testing.assert_allclose(acc.rounding, acc.note, rtol=0)
    runtime = (acc.exact + np.array([0.0, 3e-5, 2e-3, 1e-4 * 5.5 * 0.99]).reshape(y.shape)).astype(
        np.float32
    )
    comp = compare_values("Y", "float", runtime, y, tol)
    assert (comp.differing, comp.noted, comp.inaccurate) == (1, 2, 0)
    assert comp.categories.reshape(-1).tolist() == [0, CAT_NOTE, CAT_DIFFER, CAT_NOTE]
    assert lenient_status([comp]) == results.DIFFER
    widened = node_tolerance("AveragePool", 11, "float", x, y, attrs, atol=1e-3)
    wide = compare_values("Y", "float", runtime, y, widened)
    assert (wide.differing, wide.noted) == (1, 0)  # --atol widens the agree band only


def test_norm_error_is_measured_in_its_sum_of_powers():
    """LpPool p=2: an error dy in the norm y is 2*dy/(u*y) units of u*mean|x|^2."""
    x = np.full((1, 1, 2, 2), 3.0, np.float32)
    y = spec_outputs("LpPool", 18, {"kernel_shape": [2, 2], "p": 2}, [x])[0]  # 6
    tol = node_tolerance("LpPool", 18, "float", x, y, {"kernel_shape": [2, 2], "p": 2})
    off = np.array(6.0 + 40 * U * 6.0 / 2, np.float32).reshape(1, 1, 1, 1)  # about 40 units
    comp = compare_values("Y", "float", off, y, tol)
    expected = 2 * abs(float(off.reshape(-1)[0]) - 6.0) / (U * 6.0)
    assert comp.accuracy["max_error_units"] == pytest.approx(expected, rel=1e-12)
    assert comp.accuracy["units"] == "u*mean|x|^p" and comp.noted == 1  # 12 agree (n=4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_types_agree_within_one_ulp_of_the_output(dtype):
    import ml_dtypes  # noqa: F401  (numpy's bfloat16)

    np_type = np.dtype(dtype)
    x = np.array([0.1, 0.2, 0.3, 0.7], np.float32).reshape(1, 1, 2, 2).astype(np_type)
    y = spec_outputs("GlobalAveragePool", 22, {}, [x])[0]
    tol = node_tolerance("GlobalAveragePool", 22, dtype, x, y, {})
    exact = float(sum(Fraction(float(v)) for v in x.reshape(-1).astype(np.float32)) / 4)
    step = float(ulp(np.array(exact), dtype))
    assert step == 2.0 ** (math.frexp(exact)[1] - 1 - (10 if dtype == "float16" else 7))
    within, beyond = (np.array(exact + k * step).astype(np_type).reshape(y.shape) for k in (1, 2))
    assert compare_values("Y", dtype, within, y, tol).agrees
    wrong = compare_values("Y", dtype, beyond, y, tol)
    assert (wrong.inaccurate, wrong.noted, wrong.agrees) == (1, 0, False)
    assert wrong.accuracy["max_error_ulp"] == pytest.approx(
        abs(float(beyond.reshape(-1)[0]) - exact) / step, rel=1e-9
    )
    looser = node_tolerance(
        "GlobalAveragePool", 22, dtype, x, y, {}, rule=AccuracyRule(half_ulps=3.0)
    )
    assert compare_values("Y", dtype, beyond, y, looser).agrees


def test_accuracy_limit_flag_parsing():
    assert parse_limits(["1e-3"]) == {"double": 1e-3, "float": 1e-3}
    assert parse_limits(["1e-3", "double:1e-10"]) == {"double": 1e-10, "float": 1e-3}
    for bad, message in (
        ("half:1", "'half' is not an accumulation type"),
        ("float:-1", "must be a finite number >= 0"),
        ("nan", "must be a finite number >= 0"),
        ("x", "'x' is not a number"),
    ):
        with pytest.raises(OrtpoolError, match=message):
            parse_limits([bad])
    rule = AccuracyRule().with_limits(parse_limits(["float:0"]))
    assert (rule.limit("float"), rule.limit("double")) == (0.0, 1e-12)


def _gap_model(path):
    graph = h.make_graph(
        [h.make_node("GlobalAveragePool", ["x"], ["y"], name="gap")],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["N", "C", "H", "W"])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return model


def _validate_args(tmp_path) -> list[str]:
    """``validate gap.onnx --inputs x.npz --json r.json`` in ``tmp_path``."""
    return [
        "validate",
        str(tmp_path / "gap.onnx"),
        "--inputs",
        str(tmp_path / "x.npz"),
        "--no-progress",
        "--json",
        str(tmp_path / "r.json"),
    ]


def test_validate_and_fix_follow_the_same_rule_and_flags(tmp_path, capsys):
    """160x160 uniform [0, 1): agree by default; with the agree band at 1x the pairwise bound an
    accuracy note (exit 0, fix leaves the node); with the limit at 0 too, counted (exit 1, fix
    rewrites it)."""
    model = _gap_model(tmp_path / "gap.onnx")
    x = np.random.default_rng(0).random((1, 4, 160, 160), dtype=np.float32)
    np.savez(tmp_path / "x.npz", x=x)
    base = _validate_args(tmp_path)
    seen = {}
    for flags, code, status in (
        ([], 0, "agree"),
        (["--accuracy-agree-factor", "1"], 0, "accuracy-note"),
        (
            [
                "--accuracy-agree-factor",
                "1",
                "--accuracy-limit",
                "0",
                "--html",
                str(tmp_path / "r.html"),
            ],
            1,
            "inaccurate",
        ),
    ):
        assert main(base + flags) == code, flags
        text = capsys.readouterr().out
        document = json.loads((tmp_path / "r.json").read_text())
        (node,) = document["models"][0]["nodes"]
        assert node["status"] == status and document["differs"] == bool(code)
        assert "      accuracy: Y is off the exact result by up to " in text
        seen[status] = (text, document)
    assert "agree (accuracy note)" in seen["accuracy-note"][0]
    assert "1 of 1 model differs in accuracy only" in seen["inaccurate"][0]
    page = (tmp_path / "r.html").read_text()
    assert 'class="badge s-inaccurate">INACCURATE<' in page
    assert '<div class="cause">accuracy: Y is off the exact result by up to ' in page
    assert seen["inaccurate"][1]["settings"]["accuracy"] == {
        "agree_factor": 1.0,
        "limits": {"double": 0.0, "float": 0.0},
        "half_ulps": 1.0,
    }
    assert seen["accuracy-note"][1]["models"][0]["nodes"][0]["difference"] == "accuracy"
    for rule, kept in (
        (AccuracyRule(agree_factor=1.0), True),
        (AccuracyRule(agree_factor=1.0, limits=(("float", 0.0),)), False),
    ):
        fixed, report = fix_model(model, Options(inputs=[{"x": x}], accuracy=rule))
        assert ([n.op_type for n in fixed.graph.node] == ["GlobalAveragePool"]) is kept
        (fix,) = report.nodes
        assert (fix.realization == "unchanged") is kept
        assert report.to_dict()["accuracy"] == rule.to_dict()
        if kept:
            assert "accuracy note: up to " in fix.describe(verbose=True)


HOSTILE = {
    "zeros": np.zeros((1, 1, 4, 4), np.float32),
    "subnormal": np.full((1, 1, 4, 4), 1e-45, np.float32),
    "huge": np.full((1, 1, 4, 4), 3e38, np.float32),
    "cancelling": np.tile(np.array([1e8, -1e8], np.float32), 8).reshape(1, 1, 4, 4),
    "inf-and-minus-inf": np.array([np.inf, -np.inf] + [1.0] * 14, np.float32).reshape(1, 1, 4, 4),
    "empty-plane": np.zeros((1, 1, 0, 4), np.float32),
}


@pytest.mark.parametrize("op", ["GlobalAveragePool", "AveragePool", "LpPool"])
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_values_are_classed_without_error(op, case):
    """Every class on values a float sum can break on: a runtime equal to the spec agrees; one
    off by a whole ulp in every cell of a huge, subnormal or cancelling sum never raises and
    a non-finite cell against a finite one is semantics, never accuracy."""
    x = HOSTILE[case]
    attrs = {} if op == "GlobalAveragePool" else {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1]}
    if op == "LpPool":
        attrs["p"] = 2
    if case == "empty-plane" and op != "GlobalAveragePool":
        pytest.skip("a window op over an empty axis has no output cell")
    version = {"GlobalAveragePool": 1, "AveragePool": 19, "LpPool": 18}[op]
    y = spec_outputs(op, 19, attrs, [x])[0]
    with np.errstate(all="ignore"):
        tol = node_tolerance(op, version, "float", x, y, attrs)
        same = compare_values("Y", "float", y, y, tol)
        nudged = np.nextafter(y, np.float32(np.inf)).astype(np.float32)
        off = compare_values("Y", "float", nudged, y, tol)
    assert same.agrees and same.noted == same.inaccurate == 0, case
    cats = off.categories
    assert (
        int((cats == CAT_NOTE).sum()),
        int((cats == CAT_INACCURATE).sum()),
        int((cats == CAT_DIFFER).sum()),
    ) == (off.noted, off.inaccurate, off.differing)
    finite = np.isfinite(y.astype(np.float64))
    jumped = ~np.isfinite(nudged.astype(np.float64)) & finite  # 3e38 -> inf
    assert off.differing >= int(jumped.sum())
    if off.accuracy is not None:
        assert off.accuracy["max_error_units"] is None or off.accuracy["max_error_units"] >= 0


def test_bad_accuracy_flags_exit_2(tmp_path, capsys):
    """Refused before anything runs: in a child process once (a hang or crash fails), then the
    other values in this one."""
    from tests.support import run_cli

    _gap_model(tmp_path / "gap.onnx")
    done = run_cli(
        "validate",
        str(tmp_path / "gap.onnx"),
        "--no-progress",
        "--accuracy-agree-factor",
        "-1",
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "--accuracy-agree-factor=-1.0 must be a finite number >= 0" in done.stderr
    for command, flags, message in (
        ("validate", ["--accuracy-limit", "int8:1e-3"], "'int8' is not an accumulation type"),
        ("validate", ["--half-ulps", "inf"], "--half-ulps=inf must be a finite number >= 0"),
        ("fix", ["--accuracy-limit", "double:-1"], "must be a finite number >= 0"),
    ):
        paths = [str(tmp_path / "gap.onnx")] + (
            [str(tmp_path / "o.onnx")] if command == "fix" else ["--no-progress"]
        )
        assert main([command, *paths, *flags]) == 2, flags
        assert message in capsys.readouterr().err
    assert not (tmp_path / "o.onnx").exists()


def test_a_note_never_fails_the_run_end_to_end(tmp_path, capsys):
    """A graph output that is a noted mean: 512x512 of 0.3, onnxruntime 1.32.0 off by 835
    u*mean|x| (5e-5 relative, beyond the outputs' rtol 1e-5): the outputs' rtol gains the
    notes' relative error, so the note keeps exit 0 end to end too."""
    _gap_model(tmp_path / "gap.onnx")
    np.savez(tmp_path / "x.npz", x=np.full((1, 1, 512, 512), 0.3, np.float32))
    code = main(_validate_args(tmp_path))
    model = json.loads((tmp_path / "r.json").read_text())["models"][0]
    (node,) = model["nodes"]
    (output,) = model["end_to_end"]["outputs"]
    relative = node["accuracy"]["max_error_units"] * U
    assert node["status"] == "accuracy-note" and relative > 1e-5
    assert (code, output["differing"]) == (0, 0)
    assert output["tolerance"] == (
        f"atol=1e-06 rtol={1e-5 + relative:g} of magnitude 0.3 + rtol 1e-05 + {relative:.3g} "
        "for the accuracy notes (ruling 17)"
    )
    assert capsys.readouterr().out.splitlines()[-2:] == [
        "1 pooling node: 1 agree (accuracy note)",
        "1 model agrees; 0 graph output(s) differ end to end",
    ]
