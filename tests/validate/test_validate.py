"""ortpool validate: per-node isolation, causes, ties and RULINGS cells, exit codes, JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ortpool import dtypes, versions
from ortpool.attributes import normalize
from ortpool.check import causes
from ortpool.check.compare import (
    CAT_DIFFER,
    CAT_TIE,
    compare_indices,
    compare_values,
    ruling_cells,
    ruling_masks,
)
from ortpool.check.judge import Judgement
from ortpool.cli import main
from ortpool.geometry import pool_geometry
from ortpool.model import InputSpec
from ortpool.report import record as results
from ortpool.tolerances import Tolerance, tolerance_for
from tests.support import runtime_defects
from tests.support.judging import run_node, site_of, spec_outputs

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime


def pool_model(
    *,
    dilation: int = 2,
    opset: int = 12,
    op: str = "MaxPool",
    dims: tuple = ("N", 3, 10, 12),
    elem: int = TensorProto.FLOAT,
    **attrs,
) -> onnx.ModelProto:
    """Relu -> pooling node 'pool_same' (SAME_UPPER, 3x3, dilation) -> Sigmoid, plus an
    AveragePool 'avg' that onnxruntime gets right."""
    pool_attrs = {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "dilations": [dilation] * 2}
    if op == "AveragePool" and opset < 19:
        pool_attrs.pop("dilations")
    pool_attrs.update(attrs)
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node(op, ["r"], ["p"], name="pool_same", **pool_attrs),
        helper.make_node(
            "AveragePool",
            ["r"],
            ["a"],
            name="avg",
            kernel_shape=[2, 2],
            strides=[2, 2],
            pads=[1, 1, 0, 0],
        ),
        helper.make_node("Sigmoid", ["p"], ["y"], name="sig"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", elem, list(dims))],
        [
            helper.make_tensor_value_info("y", elem, None),
            helper.make_tensor_value_info("a", elem, None),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def save(model: onnx.ModelProto, path: Path) -> str:
    onnx.save(model, str(path))
    return str(path)


def x_input(shape=(1, 2, 6, 7), seed=0, dtype=np.float32) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (np.round(rng.normal(size=shape) * 4) / 4).astype(dtype)


# --- must-show 1: SAME_UPPER with dilation 2 ---------------------------------------------------

SAME_D2 = {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "dilations": [2, 2]}


def builtin_same_d2_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape onnxruntime gives pool_same (dilation 2) on ``shape``, skipping the test when
    it is the spec's (SAME keeps the spatial size at stride 1)."""
    got = runtime_defects.builtin("MaxPool", 12, SAME_D2, [x_input(shape)])
    assert got.outputs is not None, got.error
    runtime_defects.require(
        got.outputs[0].shape != shape, "pads SAME for the dilated kernel (ruling 2)"
    )
    return got.outputs[0].shape


def dims(shape: tuple[int, ...]) -> str:
    return "[" + ",".join(map(str, shape)) + "]"


def test_same_upper_dilation_2_exits_1_naming_node_and_cause(tmp_path, capsys):
    # onnxruntime 1.21 to 1.32 pad for the undilated kernel: SAME output 10x12 becomes 8x10
    theirs = builtin_same_d2_shape((1, 3, 10, 12))
    path = save(pool_model(dilation=2), tmp_path / "same_d2.onnx")
    code = main(["validate", path, "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1
    lines = out.splitlines()
    row = lines.index("  pool_same  MaxPool-12  k=3x3 d=2x2 SAME_UPPER  DIFFERS")
    assert lines[row + 1].startswith("      shapes differ: the spec's [1,3,10,12] has ")
    assert "cause: SAME padding with dilation (the runtime pads for the undilated kernel)" in out
    assert not any(line.strip().startswith("avg ") for line in lines)  # it agrees: not listed
    assert (f"end to end: output y differs: shapes differ: the spec's [1,3,10,12] has "
            f"{3 * 120 - 3 * theirs[2] * theirs[3]} cells onnxruntime's {dims(theirs)} has not"
            ) in " ".join(out.split())
    assert lines[-1] == "1 of 1 model differs; 1 graph output(s) differ end to end"
    # -v lists every node, the one that agrees too
    assert main(["validate", path, "--no-progress", "-v"]) == 1
    verbose = capsys.readouterr().out.splitlines()
    assert "  avg  AveragePool-11  k=2x2 s=2x2 p=1,1,0,0  agree" in verbose


def test_same_upper_without_dilation_exits_0(tmp_path, capsys):
    path = save(pool_model(dilation=1), tmp_path / "same_d1.onnx")
    code = main(["validate", path, "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "cause:" not in out
    assert out.splitlines()[-2:] == [
        "2 pooling nodes: 2 agree",
        "1 model agrees; 0 graph output(s) differ end to end",
    ]


# --- causes, node by node ----------------------------------------------------------------------


def run(op, opset, attrs, x, n_outputs=1, **kw):
    return run_node(op, opset, attrs, [x], n_outputs, **kw)


def codes(result: results.NodeResult) -> list[str]:
    return [c.code for c in result.causes]


def test_ceil_mode_with_valid_is_recognised():
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "VALID", "ceil_mode": 1}
    x = x_input((1, 2, 8, 8))
    got = runtime_defects.builtin("AveragePool", 19, attrs, [x])
    assert got.outputs is not None, got.error
    # onnxruntime 1.21 to 1.32 give 4x4
    runtime_defects.require(got.outputs[0].shape != (1, 2, 3, 3), "sizes VALID without ceil_mode")
    r = run("AveragePool", 19, attrs, x)
    assert r.status == results.DIFFER
    assert r.builtin_shapes == [list(got.outputs[0].shape)] and r.ortpool_shapes == [[1, 2, 3, 3]]
    assert codes(r) == [causes.CEIL_VALID]
    assert "floor((n-ek)/s)+1 = 3 windows; ceil_mode would give 4" in r.causes[0].detail


def test_pads_at_least_kernel_onnxruntime_refuses_and_cause_is_named():
    attrs, x = {"kernel_shape": [2], "pads": [2, 2]}, x_input((1, 1, 5))
    got = runtime_defects.builtin("MaxPool", 12, attrs, [x])
    runtime_defects.require(got.error is not None, "runs pads >= kernel")
    r = run("MaxPool", 12, attrs, x)
    assert r.status == results.ORT_REJECTED
    # onnxruntime 1.21 to 1.32: "... Pad should be smaller than kernel."
    assert got.error.strip().splitlines()[0][-40:] in r.message
    assert codes(r) == [causes.PADS_GE_KERNEL, causes.EMPTY_WINDOW]
    assert r.failing


def test_nan_in_window_is_a_rulings_cell_not_a_plain_difference():
    x = x_input((1, 1, 6, 6))
    x[0, 0, 2, 3] = np.nan
    attrs = {"kernel_shape": [3, 3]}
    # 9 windows (output rows 0-2, columns 1-3) hold the NaN; ruling 6 makes all 9 NaN.
    # onnxruntime's running max (x > m) drops the NaN: 1.21 in all 9 windows, 1.32 in 8 (it
    # keeps a NaN that is the window's first tap, the window starting at (2, 3)). The count is
    # asked with Indices, as the node has them.
    dropped = runtime_defects.y_differs("MaxPool", 12, attrs, [x], n_outputs=2)
    runtime_defects.require(dropped > 0, "propagates NaN as ruling 6 does")
    r = run("MaxPool", 12, attrs, x, n_outputs=2)
    nan, _ = ruling_masks(site_of("MaxPool", 12, attrs, [x], 2), [x])
    assert int(nan.sum()) == 9
    assert r.status == results.RULINGS
    y = r.comparisons[0]
    assert y.differing == 0 and y.ruling_differing == y.in_nan_windows == dropped
    assert codes(r) == [causes.NAN]
    assert not r.failing


def test_no_kernel_is_reported_as_such():
    attrs, x = {"kernel_shape": [2, 2]}, x_input((1, 1, 4, 4))
    runtime_defects.require(
        runtime_defects.builtin("AveragePool", 1, attrs, [x]).no_kernel, "has AveragePool-1"
    )
    r = run("AveragePool", 1, attrs, x)
    assert r.status == results.NO_KERNEL
    assert codes(r) == [causes.NO_KERNEL]
    assert "AveragePool-1 (opset 1) for element type float" in r.causes[0].detail
    assert not r.failing


def test_double_maxunpool_has_no_kernel():
    x = x_input((1, 1, 2, 2), dtype=np.float64)
    idx = np.array([0, 3, 9, 15], np.int64).reshape(1, 1, 2, 2)
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    got = runtime_defects.builtin("MaxUnpool", 11, attrs, [x, idx])
    runtime_defects.require(got.no_kernel, "has a double MaxUnpool-11")
    r = run_node("MaxUnpool", 11, attrs, [x, idx])
    assert r.status == results.NO_KERNEL


def test_negative_same_pad_and_unpool_output_shape_recognisers():
    opv = versions.get("MaxPool", 12)
    attrs = normalize(opv, {"kernel_shape": [1], "strides": [3], "auto_pad": "SAME_LOWER"})
    found = causes.recognise("MaxPool", attrs, [5])
    assert [c.code for c in found] == [causes.NEGATIVE_SAME_PAD]
    assert "= -1" in found[0].detail
    unpool = normalize(versions.get("MaxUnpool", 11), {"kernel_shape": [2]})
    found = causes.recognise("MaxUnpool", unpool, [4], output_shape_input=True)
    assert [c.code for c in found] == [causes.UNPOOL_OUTPUT_SHAPE]
    # a node that does not differ has no cause
    x = np.zeros((1, 1, 5), np.float32)
    site = site_of("MaxPool", 12, {"kernel_shape": [1], "strides": [3], "auto_pad": "SAME_LOWER"},
                   [x])
    assert causes.of(site, Judgement()) == []


def test_end_pad_window_recogniser_applies_the_drop_rule():
    opv = versions.get("MaxPool", 12)
    # n=7, k=2, s=3, pads (1,1), ceil: ceil(7/3)+1 = 4 windows, the 4th starts at 8 >= 7
    attrs = normalize(opv, {"kernel_shape": [2], "strides": [3], "pads": [1, 1], "ceil_mode": 1})
    found = causes.geometric_causes("MaxPool", attrs, [7])
    assert [c.code for c in found] == [causes.END_PAD_WINDOW]
    assert "(3 windows, not 4)" in found[0].detail


def test_unrecognised_difference_is_not_guessed():
    found = causes.recognise("MaxPool", None, [5])
    assert [c.code for c in found] == [causes.UNRECOGNISED]


# --- comparison --------------------------------------------------------------------------------


def test_index_ties_are_reported_apart():
    x = np.array([[[1.0, 5.0, 5.0, 2.0, 7.0, 3.0]]], np.float32)
    ours = np.array([[[1, 4]]], np.int64)
    theirs = np.array([[[2, 5]]], np.int64)  # 2 is a tie (x[2] == x[1]); 5 is not (3 != 7)
    c = compare_indices(theirs, ours, x)
    assert (c.ties, c.differing, c.ruling_differing) == (1, 1, 0)
    assert c.categories.tolist() == [[[CAT_TIE, CAT_DIFFER]]]
    assert c.examples == [{"at": [0, 0, 1], "onnxruntime": 5, "ortpool": 4}]


def test_values_tolerance_and_exact_comparison():
    a = np.array([1.0, 2.0, np.nan, 4.0], np.float32)
    b = np.array([1.0 + 5e-7, 2.1, np.nan, 4.0], np.float32)
    loose = compare_values("Y", "float", a, b, tolerance_for("AveragePool", "float"))
    assert loose.differing == 1 and loose.max_abs == pytest.approx(0.1, rel=1e-5)
    exact = compare_values("Y", "float", a, b, tolerance_for("MaxPool", "float"))
    assert exact.differing == 2
    assert tolerance_for("MaxPool", "float16") == Tolerance(0.0, 0.0, exact=True)
    assert tolerance_for("AveragePool", "float16", atol=0.5).atol == 0.5


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_scalar_outputs_are_compared(dtype):
    """A 0-d graph output (ReduceMax with keepdims=0) is one cell; it used to crash painting."""
    tol = tolerance_for("AveragePool", dtypes.name_of(np.dtype(dtype)))
    same = compare_values("s", "t", np.array(3, dtype), np.array(3, dtype), tol)
    assert (same.compared, same.differing, same.agrees, same.categories.shape) == (1, 0, True, ())
    other = compare_values("s", "t", np.array(3, dtype), np.array(5, dtype), tol)
    assert (other.compared, other.differing, other.max_abs, other.agrees) == (1, 1, 2.0, False)
    assert other.categories.tolist() == CAT_DIFFER
    assert other.examples == [{"at": [], "onnxruntime": 3, "ortpool": 5}]
    ties = compare_indices(np.array(0), np.array(1), np.array([[[4.0, 4.0]]], np.float32))
    assert (ties.ties, ties.differing, ties.categories.tolist()) == (1, 0, CAT_TIE)


def test_empty_outputs_are_compared():
    tol = tolerance_for("AveragePool", "float")
    empty = np.zeros((1, 0, 3), np.float32)
    both = compare_values("y", "float", empty, empty, tol)
    assert (both.compared, both.differing, both.only_in_one, both.agrees) == (0, 0, 0, True)
    assert both.categories.shape == (1, 0, 3)
    grown = compare_values("y", "float", empty, np.zeros((1, 2, 3), np.float32), tol)
    assert (grown.compared, grown.only_in_one, grown.agrees) == (0, 6, False)


def test_ruling_cells_marks_nan_and_empty_windows():
    attrs = normalize(versions.get("MaxPool", 12), {"kernel_shape": [2], "pads": [2, 0]})
    x = np.array([[[np.nan, 1.0, 2.0, 3.0]]], np.float32)
    nan, empty = ruling_cells(x, pool_geometry([4], attrs))
    # windows start at -2, -1, 0, 1, 2: the first holds no input; windows 1 and 2 hold x[0]
    assert empty.tolist() == [[[True, False, False, False, False]]]
    assert nan.tolist() == [[[False, True, True, False, False]]]


# --- the CLI: JSON, inputs, exit 2 --------------------------------------------------------------


def test_json_report_has_everything(tmp_path):
    theirs = builtin_same_d2_shape((2, 3, 10, 12))
    path = save(pool_model(dilation=2), tmp_path / "m.onnx")
    report = tmp_path / "r.json"
    assert (
        main(["validate", path, "--shape", "x:2,3,10,12", "--json", str(report), "--no-progress"])
        == 1
    )
    doc = json.loads(report.read_text())
    assert doc["differs"] is True and doc["environment"]["onnxruntime"]
    model = doc["models"][0]
    assert model["inputs"] == {"x": [2, 3, 10, 12]} and model["opset"] == 12
    node = next(n for n in model["nodes"] if n["name"] == "pool_same")
    assert node["op"] == "MaxPool" and node["spec_version"] == 12
    assert node["attributes"] == {
        "kernel_shape": [3, 3],
        "auto_pad": "SAME_UPPER",
        "dilations": [2, 2],
    }
    assert node["builtin_shapes"] == [list(theirs)] and node["ortpool_shapes"] == [[2, 3, 10, 12]]
    assert node["status"] == "differ" and node["differing"] > 0
    assert set(node) >= {"max_abs_error", "max_rel_error", "ruling_differing", "index_ties"}
    assert [c["code"] for c in node["causes"]] == ["same-dilation"]
    outputs = {o["name"]: o for o in model["end_to_end"]["outputs"]}
    assert outputs["y"]["shapes_differ"] is True and outputs["a"]["differing"] == 0


def test_inputs_from_npz_are_used(tmp_path, capsys):
    path = save(pool_model(dilation=1, dims=(1, 3, 6, 6)), tmp_path / "m.onnx")
    feeds = tmp_path / "in.npz"
    np.savez(feeds, x=np.full((1, 3, 6, 6), 2.0, np.float32))
    report = tmp_path / "r.json"
    assert (
        main(["validate", path, "--inputs", str(feeds), "--json", str(report), "--no-progress"])
        == 0
    )
    model = json.loads(report.read_text())["models"][0]
    assert model["input_source"] == f"loaded from {feeds}"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["validate", "/nonexistent/model.onnx"], "no such model file"),
        (["validate", "{bad}", "--shape", "x:1,3"], "not a readable ONNX model"),
        (["validate", "{good}", "--shape", "x:a,b"], "must be NAME:D1,D2"),
        (["validate", "{good}", "--shape", "nope:1,3,6,6"], "--shape names input 'nope'"),
        (["validate", "{good}", "--inputs", "{npz}"], "--inputs names input 'y'"),
        (["validate", "{good}", "--providers", "NoSuchEP"], "is not available"),
    ],
)
def test_exit_2_with_the_reason(tmp_path, capsys, argv, message):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not protobuf at all \x00\xff")
    good = save(pool_model(dilation=1), tmp_path / "good.onnx")
    npz = tmp_path / "other.npz"
    np.savez(npz, y=np.zeros(3))
    argv = [a.format(bad=bad, good=good, npz=npz) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "ortpool validate: error:" in err and message in err


def test_model_onnxruntime_cannot_run_is_captured_from_ortpool(tmp_path, capsys):
    nodes = [
        helper.make_node("AveragePool", ["x"], ["y"], name="avg1", kernel_shape=[2, 2]),
        helper.make_node("MaxPool", ["x"], ["z"], name="max1", kernel_shape=[3, 3]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, None),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 1)])
    model.ir_version = 3
    runtime_defects.require(
        runtime_defects.builtin("AveragePool", 1, {"kernel_shape": [2, 2]}, [x_input()]).no_kernel,
        "has AveragePool-1",
    )
    path = save(model, tmp_path / "avg1.onnx")
    report = tmp_path / "r.json"
    code = main(["validate", path, "--json", str(report), "--no-progress"])
    doc = json.loads(report.read_text())["models"][0]
    assert code == 0
    # onnxruntime has no AveragePool-1 at all, but does run MaxPool-1 for float
    assert {n["name"]: n["status"] for n in doc["nodes"]} == {"avg1": "no-kernel", "max1": "agree"}
    assert "onnxruntime could not run the model" in doc["end_to_end"]["status"]
    assert any("ortpool-rewritten run" in note for note in doc["notes"])


def test_node_in_a_subgraph_is_judged_at_its_static_size(tmp_path, capsys):
    """Its input changes per branch (nothing to capture): judged as fix judges it, on the
    built cases of the domain at the size shape inference gives."""
    inner = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["t"], name="inner_pool", kernel_shape=[2, 2])],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
    )
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="branch", then_branch=inner, else_branch=other)],
        "g",
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = save(model, tmp_path / "if.onnx")
    report = tmp_path / "r.json"
    main(["validate", path, "--json", str(report), "--no-progress"])
    node = json.loads(report.read_text())["models"][0]["nodes"][0]
    assert node["name"] == "inner_pool" and node["status"] == "agree"
    assert node["input_shapes"] == [[1, 1, 4, 4]] and node["judged"] == ""
    assert "judged on the built cases at its static size [1, 1, 4, 4]" in node["message"]
    assert node["location"] == "main graph > If 'branch'.then_branch"


def test_reference_column_labels_its_nan_defect(tmp_path):
    from ortpool.validate.validator import ValidateOptions, validate_model

    model = pool_model(dilation=1, dims=(1, 1, 6, 6))
    npz = tmp_path / "in.npz"
    x = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)
    x[0, 0, 3, 3] = np.nan
    np.savez(npz, x=x)
    spec = InputSpec.make(inputs=str(npz))
    found = validate_model(model, ValidateOptions(reference=True, inputs=spec))
    pool = next(n for n in found.nodes if n.name == "pool_same")
    assert pool.reference is not None
    assert pool.reference.status == "differ"
    # named by the engine's causes, with the basis, as --runtime reference names them
    assert [(c.code, c.detail) for c in pool.reference.causes] == [
        ("nan", "9 cell(s) of windows holding a NaN: the runtime drops the NaN: its value is the "
         "max of the window's other elements, where a NaN must give NaN")
    ]
    assert pool.reference.basis.label == "ruling 6"
    assert pool.reference.to_dict()["basis"]["ruling"] == 6
    from ortpool.report import terminal

    text = " ".join(" ".join(terminal.node_lines(pool, verbose=True)).split())
    assert ("reference evaluator: differ, 9 cells differ from ortpool cause: NaN handling (a "
            "window holding a NaN gives NaN, index of the first NaN): 9 cell(s) of windows "
            "holding a NaN:") in text
    assert "basis: ruling 6 (docs/rulings.md)" in text


def test_the_reference_column_answers_where_the_runtime_has_no_kernel():
    """LpPool-1 (no onnxruntime kernel): its input captured from the rewritten run was the
    reference evaluator's to judge, yet it said "skipped (no captured input with the spec's
    outputs)" and the summary "agrees with ortpool on 0 of 1 node"."""
    from ortpool.validate.validator import ValidateOptions, bundled_models, validate_model

    path = next(p for p in bundled_models() if p.stem == "lppool-1")
    (node,) = validate_model(path, ValidateOptions(reference=True)).nodes
    assert node.status == "no-kernel" and node.reference is not None
    assert (node.reference.status, node.reference.message) == ("agree", "")


def test_bundled_models_name_the_known_onnxruntime_defects(capsys):
    from ortpool.validate.validator import bundled_models

    paths = {p.stem: p for p in bundled_models()}
    shown = {
        name: title
        for name, title in runtime_defects.DEFECT_MODELS.items()
        if runtime_defects.node_differs(onnx.load(paths[name]))
    }
    # onnxruntime 1.21 to 1.32 show both
    runtime_defects.require(bool(shown), "computes both bundled defect models to the spec")
    code = main(["validate", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1
    for title in runtime_defects.DEFECT_MODELS.values():
        assert (f"cause: {title}" in out) == (title in shown.values())


def test_the_rewritten_session_and_the_kernels_agree_on_float16():
    """What the engine takes as the spec (the kernels) is what a rewritten model computes
    through ortpool's op in a session, Casts included."""
    import ortpool
    from ortpool.model.singlenode import alone_model, feed_dict
    from tests.support.judging import site_of

    x = x_input((1, 2, 5, 5), dtype=np.float16)
    attrs = {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1]}
    assert run_node("AveragePool", 11, attrs, [x]).status == results.AGREE
    model = ortpool.rewrite(alone_model(site_of("AveragePool", 11, attrs, [x]), [x]))
    (via_session,) = ortpool.InferenceSession(model).run(None, feed_dict([x]))
    (via_numpy,) = spec_outputs("AveragePool", 11, attrs, [x])
    assert via_session.dtype == via_numpy.dtype == np.float16
    np.testing.assert_array_equal(via_session, via_numpy)


def test_empty_auto_pad_is_read_as_notset_with_a_note(tmp_path, capsys):
    """Older exporters write auto_pad=""; onnxruntime reads it as NOTSET, and so does ortpool:
    validate, rewrite and the kernels accept it, and the reports say so."""
    import ortpool
    from ortpool import kernels

    model = pool_model(dilation=1, auto_pad="", pads=[1, 1, 1, 1])
    path = save(model, tmp_path / "empty_auto_pad.onnx")
    code = main(["validate", path, "--no-progress"])
    out = capsys.readouterr().out
    note = ("node 'pool_same': auto_pad='' read as NOTSET, as onnxruntime reads it (older "
            "exporters write the empty string)")
    assert code == 0 and f"note: {note}" in " ".join(out.split())  # wrapped in 100 columns
    rewritten, report = ortpool.rewrite.rewrite_with_report(model)
    assert note in report.notes
    assert [n.op_type for n in rewritten.graph.node][1] == "MaxPool_12"
    x = x_input()
    np.testing.assert_array_equal(
        kernels.max_pool(x, version=12, kernel_shape=[3, 3], auto_pad="", pads=[1, 1, 1, 1]),
        kernels.max_pool(x, version=12, kernel_shape=[3, 3], pads=[1, 1, 1, 1]))


def test_a_node_after_a_wrong_one_is_judged_at_the_spec_size_too():
    """fix-valid-ceil: onnxruntime's VALID-with-ceil MaxPool gives the AveragePool after it an
    8x8 map where the spec gives 7x7. At onnxruntime's 8x8 the AveragePool agrees; at the
    spec's 7x7 (what it sees once the model is fixed, where fix proves it) it does not: one
    verdict, the one fix acts on."""
    from ortpool.validate.validator import bundled_models_dir, validate_model

    found = validate_model(bundled_models_dir() / "fix" / "fix-valid-ceil.onnx")
    node = next(n for n in found.nodes if n.name == "averagepool_valid_ceil")
    # the table shows the set that differs: the spec's size
    assert node.status == results.DIFFER and node.input_shapes == [[1, 8, 7, 7]]
    assert [c.code for c in node.causes] == [causes.CEIL_VALID, causes.BUILT_CASE]
    assert node.causes[1].detail.startswith(
        "at X [1, 8, 7, 7], the size the spec's upstream nodes give it (onnxruntime's run gives "
        "[1, 8, 8, 8]; fix proves it there): Y has shape [1, 8, 4, 4], the spec's is [1, 8, 3, 3]"
    )


def test_a_tie_under_storage_order_1_is_read_where_the_column_major_index_points():
    """storage_order=1 Indices count each plane's cells last axis first (ruling 7): a differing
    index is a tie when the cell it names in that order holds the maximum, whatever the cell of
    the same number in row-major order holds."""
    from ortpool import kernels

    # one 2x3 plane, k=2x3: its one window is the plane; column-major numbering: x[h, w] is
    # cell w * 2 + h
    x = np.array([[[[1.0, 9.0, 0.0], [9.0, 5.0, 9.0]]]], dtype=np.float32)
    _, ours = kernels.max_pool(x, version=12, kernel_shape=[2, 3], storage_order=1,
                               return_indices=True)
    # the first maximum in tap order (row-major, ruling 6) is x[0, 1]: cell 1 * 2 + 0
    assert ours.reshape(-1).tolist() == [2]
    # 1 is x[1, 0] (a 9: a tie); 5 is x[1, 2] (a 9: a tie); 3 is x[1, 1] (5: not a tie),
    # though row-major 3 is x[1, 0] (a 9)
    for other, tie in ((1, True), (5, True), (3, False)):
        builtin = np.full_like(ours, other)
        comp = compare_indices(builtin, ours, x, column_major=True)
        assert (comp.ties, comp.differing) == ((1, 0) if tie else (0, 1)), other
    # read row-major (cells 1 and 2 are x[0, 1] = 9 and x[0, 2] = 0), the tie was a difference
    wrong = compare_indices(np.full_like(ours, 1), ours, x)
    assert (wrong.ties, wrong.differing) == (0, 1)
