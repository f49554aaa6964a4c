"""ortpool validate end to end: what the pools changed in the graph outputs, not float noise.

A ResNet-like network agrees (it raised a false alarm when the rewritten model ran with
onnxruntime's graph optimisations on and the built-in run with them off, and when tolerances
were per cell: a logit near zero carries the noise of the largest ones); a defective pool still
fails, in the main graph, in an If branch and in a Loop body.
"""

from __future__ import annotations

import json
import re

import numpy as np
import onnx
import pytest

from ortpool.cli import main
from ortpool.report import record as results
from ortpool.validate import endtoend
from ortpool.validate.validator import bundled_models_dir
from tests.support import cnn_builders
from tests.support.judging import run_node

FIGURES = re.compile(
    r"end to end: output logits \[1,100\] agrees(?: \(identical\)| within its tolerance; max abs "
    r"(\S+) = \S+ of magnitude (\S+) \(allowed (\S+)\); onnxruntime's own noise \S+)$"
)


def ort_pads_same_dilated_wrongly() -> bool:
    """onnxruntime's SAME-with-dilation defect (ruling 2), seen on one isolated node."""
    attrs = {"kernel_shape": [3, 3], "dilations": [2, 2], "auto_pad": "SAME_UPPER"}
    x = np.arange(2 * 81, dtype=np.float32).reshape(1, 2, 9, 9)
    return run_node("MaxPool", 12, attrs, [x]).status == results.DIFFER


@pytest.mark.parametrize("optimize", [False, True], ids=["default", "optimize"])
def test_resnet_like_network_agrees_end_to_end_with_its_figures(tmp_path, capsys, optimize):
    path = tmp_path / "resnet_like.onnx"
    onnx.save(cnn_builders.resnet_like(opset=22), str(path))
    report = tmp_path / "r.json"
    argv = ["validate", str(path), "--no-progress", "-v", "--no-guard-cost", "--json",
            str(report)]
    code = main(argv + (["--optimize"] if optimize else []))
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.strip().splitlines()[-2:] == [
        "6 pooling nodes: 6 agree",  # five window pools and the head's GlobalAveragePool
        "1 model agrees; 0 graph output(s) differ end to end",
    ]
    # the output's line, as one line (the report wraps it in 100 columns)
    line = next(x for x in out.replace("\n      ", " ").splitlines() if "end to end:" in x)
    shown = FIGURES.search(line)
    assert shown, line
    logits = json.loads(report.read_text())["models"][0]["end_to_end"]["outputs"][0]
    assert logits["tolerance"] == f"atol=1e-06 rtol=1e-05 of magnitude {logits['magnitude']:.3g}"
    assert logits["allowed"] == pytest.approx(1e-6 + 1e-5 * logits["magnitude"])
    if logits["max_abs"]:
        assert float(shown[1]) == pytest.approx(logits["max_abs"], rel=1e-2)
        assert float(shown[3]) == pytest.approx(logits["allowed"], rel=1e-2)
        assert logits["max_abs"] <= logits["allowed"] and logits["onnxruntime_noise"] is not None


def test_output_tolerance_is_relative_to_the_output_magnitude():
    builtin = np.array([[120.0, -80.0, 0.001, 3.0]], np.float32)
    noise = builtin + np.array([[2e-5, 0, 4e-5, 0]], np.float32)  # 4e-5 at a cell near zero
    [agree] = endtoend.compare_outputs(["y"], [builtin], [noise])
    assert not agree.failing and agree.tolerance.magnitude == pytest.approx(120.0)
    assert agree.allowed == pytest.approx(1e-6 + 1.2e-3)
    wrong = builtin + np.array([[0, 0, 0.01, 0]], np.float32)  # 1e-4 of the magnitude
    grown = builtin * 1000  # a wrong side does not widen its tolerance
    infinite = builtin.copy()
    infinite[0, 3] = np.inf
    outcomes = endtoend.compare_outputs(["a", "b", "c"], [builtin] * 3, [wrong, grown, infinite])
    assert [(o.failing, o.comparison.differing) for o in outcomes] == [(1, 1), (1, 4), (1, 1)]
    assert outcomes[1].tolerance.magnitude == pytest.approx(120.0)


@pytest.mark.parametrize("name", ["ort-defect-same-dilated", "ort-defect-valid-ceil"])
def test_bundled_defect_models_still_fail(capsys, name):
    path = bundled_models_dir() / f"{name}.onnx"
    if not path.is_file():
        pytest.skip("bundled models not generated (scripts/make_models.py)")
    code = main(["validate", str(path), "--no-progress"])
    out = capsys.readouterr().out
    # the node's line, found by its op: the model's line above it wraps where the path is long
    node = next(line for line in out.splitlines() if re.search(r" \w*Pool-\d+ ", line))
    if "DIFFERS" not in node:
        pytest.skip(f"this onnxruntime computes {name} as the spec says: {out.splitlines()[0]}")
    assert code == 1
    assert re.search(r"end to end: output Y differs: shapes differ: .*\[1,2,\d,\d\] has \d+ cells",
                     " ".join(out.split()))


@pytest.mark.parametrize("container", ["If", "Loop"])
def test_defective_pool_in_a_subgraph_fails_end_to_end(tmp_path, capsys, container):
    if not ort_pads_same_dilated_wrongly():
        pytest.skip("this onnxruntime pads SAME with dilation as the spec says")
    path = tmp_path / f"{container}.onnx"
    onnx.save(cnn_builders.subgraph_pool_model(container), str(path))
    code = main(["validate", str(path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1
    # judged as fix judges it, on the built cases at the branch's static size, with its cause
    assert re.search(r"inner_pool .* DIFFERS$", out, re.M)
    assert "cause: SAME padding with dilation" in out
    flat = " ".join(out.split())  # the report wraps its lines in 100 columns
    if container == "If":
        # onnxruntime allocates the branch output for the spec's 9x9 and its kernel writes 7x7
        assert "end to end: DIFFERS: only the ortpool-rewritten model runs; onnxruntime could " \
            "not run the model" in flat
        assert flat.endswith("1 model(s) only ortpool's rewrite could run")
    else:
        assert ("end to end: output y differs: shapes differ: the spec's [2,1,2,9,9] has 128 cells "
                "onnxruntime's [2,1,2,7,7] has not; of the 196 cells both have, 182 differ") in flat


def test_half_roundings_count_the_nodes_that_round_to_a_half_type_after_a_pool():
    # the Cast before the pools is the same in both runs, the MaxPool selects, the Cast after
    # them widens: only the GlobalAveragePool rounds to float16 where the runs can differ
    model = cnn_builders.half_head(defective=False, out_type=onnx.TensorProto.FLOAT)
    assert endtoend.half_roundings(model) == {"out": {"float16": 1}}
    cnn = onnx.load(str(bundled_models_dir() / "cnn.onnx"))
    assert endtoend.half_roundings(cnn) == {"head": {}, "half_out": {"float16": 1}}


def test_half_output_is_judged_in_ulps_of_its_half_type():
    ulp = 2.0**-9  # float16 at [2, 4)
    builtin = np.array([2.0, 2.5, -3.0, 0.01], np.float32)
    rounded = builtin + np.array([ulp, 0, -ulp / 3, 0], np.float32)  # one rounding apart
    wrong = builtin + np.array([0, 5 * ulp, 0, 0], np.float32)
    one = {"y": {"float16": 1}}
    [agree] = endtoend.compare_outputs(["y"], [builtin], [rounded], roundings=one)
    assert not agree.failing
    assert agree.allowed == pytest.approx(1e-6 + 1e-5 * 3.0 + ulp)
    assert agree.tolerance.describe() == (
        "atol=0.00195413 rtol=1e-05 of magnitude 3 + atol 1e-06 + 1 x 1 ulp of float16 at the "
        "magnitude (0.00195), one per rounding to float16 after a pool (ruling 17)"
    )
    [differs] = endtoend.compare_outputs(["y"], [builtin], [wrong], roundings=one)
    assert differs.failing and differs.comparison.differing == 1
    # two roundings allow two ulp; no rounding after a pool: float32's allowance alone
    [two] = endtoend.compare_outputs(["y"], [builtin], [rounded + ulp], roundings={"y": {
        "float16": 2}})
    assert not two.failing
    assert two.allowed == pytest.approx(1e-6 + 1e-5 * two.tolerance.magnitude + 2 * ulp)
    [none] = endtoend.compare_outputs(["y"], [builtin], [rounded])
    assert none.failing and none.allowed == pytest.approx(1e-6 + 3e-5)


def test_bundled_cnn_half_output_agrees_in_float16_ulps(tmp_path, capsys):
    report = tmp_path / "r.json"
    code = main(["validate", str(bundled_models_dir() / "cnn.onnx"), "--no-progress",
                 "--json", str(report)])
    out = capsys.readouterr().out
    assert code == 0, out
    outputs = json.loads(report.read_text())["models"][0]["end_to_end"]["outputs"]
    half = next(o for o in outputs if o["name"] == "half_out")
    # averagepool_half: onnxruntime's float16 fallback skips the rounding to float16 that
    # ortpool's Cast pair makes, at most half an ulp of float16 at 2.25 (0.00195) apart; the
    # float32 allowance alone (2.35e-05) called that a difference
    assert half["magnitude"] == pytest.approx(2.25, abs=0.01)
    assert 0 <= half["max_abs"] <= 2.0**-10
    assert half["allowed"] == pytest.approx(1e-6 + 1e-5 * half["magnitude"] + 2.0**-9)
    assert out.strip().splitlines()[-2:] == [
        "8 pooling nodes: 8 agree",  # the If branches' two judged at sampled sizes
        "1 model agrees; 0 graph output(s) differ end to end",
    ]


@pytest.mark.parametrize("out_type", [onnx.TensorProto.FLOAT16, onnx.TensorProto.FLOAT],
                         ids=["float16", "float"])
def test_half_output_differing_by_many_ulps_still_fails(tmp_path, capsys, out_type):
    if not ort_pads_same_dilated_wrongly():
        pytest.skip("this onnxruntime pads SAME with dilation as the spec says")
    path = tmp_path / "half.onnx"
    onnx.save(cnn_builders.half_head(defective=True, out_type=out_type), str(path))
    report = tmp_path / "r.json"
    code = main(["validate", str(path), "--no-progress", "--json", str(report)])
    out = capsys.readouterr().out
    assert code == 1, out
    [head] = json.loads(report.read_text())["models"][0]["end_to_end"]["outputs"]
    # the means of a 7x7 and a 9x9 map: the same shape, many ulps of float16 apart
    assert head["differing"] == 2 and head["max_abs"] > 8 * 2.0**-9
    assert head["allowed"] == pytest.approx(1e-6 + 1e-5 * head["magnitude"] + 2.0**-9)


def test_a_rewritten_model_is_validated_as_ortpools(tmp_path, capsys):
    """Every pool an ortpool op (the If branches' too): each is ortpool's, the model runs with
    them registered on both sides, and nothing is a difference."""
    from ortpool.rewrite import rewrite

    path = tmp_path / "cnn_rewritten.onnx"
    onnx.save(rewrite(onnx.load(str(bundled_models_dir() / "cnn.onnx"))), str(path))
    code = main(["validate", str(path), "--no-progress", "-v"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "only the ortpool-rewritten model runs" not in out
    assert "  maxpool_indices  MaxPool-12  k=2x2 s=2x2  ortpool op\n      note: ortpool op " \
        "MaxPool_12_Indices: runs ortpool's kernel (nothing built-in to compare it\n" in out
    assert "  if_then_maxpool  MaxPool-12  k=2x2 s=2x2  ortpool op\n" in out
    assert "end to end: output head [1,8,4,4] agrees (identical)" in out
    assert out.strip().splitlines()[-2:] == [
        "8 pooling nodes: 8 ortpool op",
        "1 model agrees; 0 graph output(s) differ end to end",
    ]


class _FailsOnWholeModels(__import__("ortpool.runtimes.reference_runtime",
                                     fromlist=["Reference"]).Reference):
    """The onnx reference evaluator, failing on a model with a Relu (the whole model, not a
    pooling node's one-node model) as ``how`` says: "hang" (60 s), "abort" (as tract does on a
    zero-size ReduceMean) or "refuse"; imported by its worker's child from this module."""

    name = "fails-whole"

    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how

    def run(self, model, feeds):
        import os
        import time

        if any(n.op_type == "Relu" for n in onnx.load_from_string(model).graph.node):
            if self.how == "hang":
                time.sleep(60)
            if self.how == "abort":
                os.abort()
            raise self.failure("refused", "no Relu here")
        return super().run(model, feeds)


@pytest.mark.parametrize(("how", "why"), [
    ("hang", "timed-out: the worker took longer than 5 s"),
    ("abort", "crashed: the worker was killed by SIGABRT"),
    ("refuse", "refused: no Relu here")])
def test_another_runtime_failing_the_whole_model_is_no_difference_of_the_pools(how, why):
    """Another runtime that crashes on, refuses or does not finish (--case-timeout) the whole
    model, while every pooling node agrees on it: the failure may be any op's (the rewritten
    model runs on onnxruntime), so the outputs are not compared and the model agrees (it was
    DIFFERS, 'only the ortpool-rewritten model runs', exit 1, with no difference anywhere)."""
    from onnx import TensorProto, helper

    import ortpool

    graph = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2], name="pool"),
         helper.make_node("Relu", ["p"], ["y"])], "slow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 5, 5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 8
    # a limit the node's own cases meet on a loaded machine; a minute where no hang is tested
    limit = 5.0 if how == "hang" else 60.0
    report = ortpool.validate(model, runtime=_FailsOnWholeModels(how), case_timeout=limit,
                              guard_cost=False)
    (found,) = report.models
    assert [n.status for n in found.nodes] == [results.AGREE]
    assert not found.run_differs and found.status == results.AGREE, found.end_to_end
    assert found.end_to_end.startswith(
        f"not compared: fails-whole could not run the model: fails-whole: {why}")
    assert report.exit_code == 0


def test_outputs_that_are_no_numeric_tensors_are_named_not_compared():
    """A classifier exported with its label (a string tensor) and ZipMap's probabilities (a
    sequence of maps), as Custom Vision and sklearn-onnx write them, beside a float output: the
    whole model was 'COULD NOT RUN: ValueError: element type object has no onnx equivalent',
    every node's verdict lost. Now those outputs are named as not compared, the rest is judged."""
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper

    from ortpool.validate.validator import ValidateOptions, validate_model

    labels = numpy_helper.from_array(np.array([b"cat", b"dog"], dtype=object), "labels")
    probabilities = h.make_sequence_type_proto(
        h.make_map_type_proto(T.STRING, h.make_tensor_type_proto(T.FLOAT, [])))
    graph = h.make_graph([
        h.make_node("MaxPool", ["x"], ["p"], name="pool", kernel_shape=[3, 3], dilations=[2, 2],
                    auto_pad="SAME_UPPER"),
        h.make_node("GlobalAveragePool", ["p"], ["gap"], name="gap"),
        h.make_node("Flatten", ["gap"], ["flat"], name="flat"),
        h.make_node("Softmax", ["flat"], ["scores"], name="softmax"),
        h.make_node("ArgMax", ["scores"], ["index"], axis=1, keepdims=0, name="argmax"),
        h.make_node("Gather", ["labels", "index"], ["label"], name="label"),
        h.make_node("ZipMap", ["scores"], ["loss"], classlabels_strings=["cat", "dog"],
                    domain="ai.onnx.ml", name="zipmap"),
    ], "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 9, 9])],
        [h.make_tensor_value_info("label", T.STRING, [1]), h.make_value_info("loss", probabilities),
         h.make_tensor_value_info("scores", T.FLOAT, [1, 2])], initializer=[labels])
    model = onnx.helper.make_model(graph, opset_imports=[
        h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 1)])
    model.ir_version = 8
    found = validate_model(model, ValidateOptions(guard_cost=False), label="m")
    assert [(n.name, n.status) for n in found.nodes] == [
        ("pool", results.DIFFER), ("gap", results.AGREE)]
    assert [o.comparison.name for o in found.outputs] == ["scores"]
    assert ("graph outputs 'label', 'loss' not compared end to end: only numeric tensors are"
            in found.notes)


def _sequence_model(sizes: list[int]) -> onnx.ModelProto:
    """x [1, 1, 5, 5] -> MaxPool 'pool' k2 -> p [1, 1, 4, 4], also split along its last axis
    into a sequence output 's' of tensors ``sizes`` wide."""
    from onnx import TensorProto as T
    from onnx import helper as h

    graph = h.make_graph([
        h.make_node("MaxPool", ["x"], ["p"], name="pool", kernel_shape=[2, 2]),
        h.make_node("SplitToSequence", ["p", "split"], ["s"], name="seq", axis=3),
    ], "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 5, 5])],
        [h.make_tensor_sequence_value_info("s", T.FLOAT, None),
         h.make_tensor_value_info("p", T.FLOAT, [1, 1, 4, 4])],
        initializer=[h.make_tensor("split", T.INT64, [len(sizes)], sizes)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def test_a_sequence_of_tensors_of_different_shapes_is_named_not_blamed_on_the_model():
    """SplitToSequence into tensors 1 and 3 wide: numpy could not stack the sequence, and the
    model was 'COULD NOT RUN ... inhomogeneous shape'. Now the sequence is named as not
    compared and the rest judged; ``ortpool bench MODEL FIXED`` compares it tensor by tensor
    (it raised numpy's ValueError)."""
    from ortpool.bench import runner, usermodel
    from ortpool.validate.validator import ValidateOptions, validate_model

    model = _sequence_model([1, 3])
    found = validate_model(model, ValidateOptions(guard_cost=False), label="m")
    assert [(n.name, n.status) for n in found.nodes] == [("pool", results.AGREE)]
    assert [o.comparison.name for o in found.outputs] == ["p"]
    assert "graph output 's' not compared end to end: only numeric tensors are" in found.notes
    for sizes, refusal in (([1, 3], None), ([1, 2, 1], "output 's' holds 3 tensors, not 2"),
                           ([3, 1], r"output 's' shape \[1, 1, 4, 3\] != \[1, 1, 4, 1\]")):
        pair = usermodel.Pair(model, _sequence_model(sizes), "m", "f", [])
        if refusal is None:
            usermodel.check_equivalent(pair, None, runner.Settings())
        else:
            with pytest.raises(ValueError, match=refusal):
                usermodel.check_equivalent(pair, None, runner.Settings())
