"""A model's bfloat16 inputs and outputs through every run of it: onnxruntime's Python API
converts no ml_dtypes array, either way (``Numpy_type 256 can't be converted to MLDataType``),
so ortpool feeds and fetches them as OrtValues (:func:`ortpool.ort.runtime_spec.run_arrays`)."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import ortpool
from ortpool.bench import runner, usermodel
from ortpool.fix import fix_with_report
from ortpool.model.capture import capture_model
from ortpool.model.singlenode import IR_VERSION
from ortpool.ort import timed
from ortpool.ort.opening import open_session
from ortpool.ort.runtime_spec import RuntimeSpec, run_arrays

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

BF16 = np.dtype(ml_dtypes.bfloat16)
#: X, its 2x2 windows' maxima
X = np.array([[[[1, -2, 3.5, 4], [0.25, 6, -7, 8], [9, 10, 11, -12], [13, 14.5, 15, 16]]]],
             np.float32).astype(BF16)
Y = np.array([[[[6, 8], [14.5, 16]]]], np.float32).astype(BF16)


def _model(path: Path) -> str:
    """X (bfloat16) -> Cast to float -> MaxPool 'pool' 2x2/2 -> P (float) -> Cast to bfloat16
    -> Y."""
    graph = helper.make_graph(
        [helper.make_node("Cast", ["X"], ["F"], name="in", to=TensorProto.FLOAT),
         helper.make_node("MaxPool", ["F"], ["P"], name="pool", kernel_shape=[2, 2],
                          strides=[2, 2]),
         helper.make_node("Cast", ["P"], ["Y"], name="out", to=TensorProto.BFLOAT16)], "g",
        [helper.make_tensor_value_info("X", TensorProto.BFLOAT16, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("Y", TensorProto.BFLOAT16, None),
         helper.make_tensor_value_info("P", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = IR_VERSION
    onnx.save(model, path)
    return str(path)


def test_a_session_takes_and_gives_bfloat16_arrays(tmp_path):
    session = ortpool.InferenceSession(_model(tmp_path / "bf16.onnx"))
    y, p = session.run(None, {"X": X})
    assert y.dtype == BF16 and y.tobytes() == Y.tobytes()
    assert p.dtype == np.float32 and np.array_equal(p, Y.astype(np.float32))
    # outputs named, in their order; the float one alone runs as it always did
    assert [a.dtype for a in session.run(["P", "Y"], {"X": X})] == [np.float32, BF16]
    assert [a.dtype for a in session.run(["P"], {"X": X})] == [np.float32]


def test_validate_runs_a_model_with_bfloat16_inputs_generated_or_given(tmp_path):
    path = _model(tmp_path / "bf16.onnx")
    report = ortpool.validate(path, isolate=False)
    assert report[0].status == "agree" and report[0].end_to_end == "compared"
    # its max differs on NaN only: the guard's price is timed on the same bfloat16 inputs
    assert report[0].guard_cost["ratio"] > 0 and report[0].guard_cost["error"] == ""
    given = ortpool.validate(path, inputs={"X": X}, isolate=False)
    assert given[0].status == "agree"
    # numpy.savez writes an ml_dtypes array as raw 2-byte records (|V2): read as its bits
    np.savez(tmp_path / "in.npz", X=X)
    assert ortpool.validate(path, inputs=str(tmp_path / "in.npz"), isolate=False)[0].status == (
        "agree")


def test_validate_compares_a_model_without_pools_end_to_end(tmp_path):
    """Its rewritten form holds no ortpool op: a plain onnxruntime session runs it."""
    graph = helper.make_graph(
        [helper.make_node("Identity", ["X"], ["Y"])], "g",
        [helper.make_tensor_value_info("X", TensorProto.BFLOAT16, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("Y", TensorProto.BFLOAT16, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = IR_VERSION
    onnx.save(model, tmp_path / "identity.onnx")
    report = ortpool.validate(str(tmp_path / "identity.onnx"), isolate=False)
    assert report[0].end_to_end == "compared" and not report[0].outputs[0].failing


def test_bench_times_a_model_with_bfloat16_inputs(tmp_path):
    pair = usermodel.load_pair(_model(tmp_path / "bf16.onnx"), None)
    result = usermodel.bench_models(pair, None, runner.Settings(repeat=1, min_sample=0.0))
    assert set(result.times) == {timed.ORIGINAL, timed.CONTROL}


def test_a_session_that_does_not_load_is_a_failed_variant_not_a_traceback(tmp_path):
    model = onnx.load(_model(tmp_path / "bf16.onnx"))
    model.graph.node[1].domain = "no.such.domain"
    with pytest.raises(timed.RunFailed) as raised:
        timed.time_against(model, None, {"X": X}, RuntimeSpec(), 1, 0.0)
    assert raised.value.variant == timed.ORIGINAL


def test_every_bfloat16_value_crosses_both_ways_bit_for_bit():
    """All 65536 bit patterns fed, fetched as a graph output and as an inner tensor (a capture,
    as ``fix`` widens a model), each as it is: NaNs' payloads and -0 too."""
    graph = helper.make_graph(
        [helper.make_node("Identity", ["X"], ["mid"]),
         helper.make_node("Identity", ["mid"], ["Y"])], "g",
        [helper.make_tensor_value_info("X", TensorProto.BFLOAT16, [None])],
        [helper.make_tensor_value_info("Y", TensorProto.BFLOAT16, [None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = IR_VERSION
    bits = np.arange(1 << 16, dtype=np.uint16)
    session = open_session(RuntimeSpec(), capture_model(model, ["mid"]))
    for got in run_arrays(session, ["Y", "mid"], {"X": bits.view(BF16)}):
        assert got.dtype == BF16 and np.array_equal(got.view(np.uint16), bits)


def test_an_output_of_no_declared_type_comes_back_as_bfloat16():
    """onnxruntime infers its type: a captured tensor (fix's capture declares none)."""
    graph = helper.make_graph(
        [helper.make_node("Cast", ["X"], ["B"], to=TensorProto.BFLOAT16),
         helper.make_node("Cast", ["B"], ["Y"], to=TensorProto.FLOAT)], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2]),
         onnx.ValueInfoProto(name="B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = IR_VERSION
    y, b = ortpool.InferenceSession(model).run(None, {"X": np.array([1.5, -2], np.float32)})
    assert y.dtype == np.float32 and b.dtype == BF16 and b.tolist() == [1.5, -2]


def test_fix_captures_a_bfloat16_tensor_inside_the_model():
    """X (float) -> Cast to bfloat16 -> AveragePool, which has no kernel: onnxruntime cannot run
    the model, so the pool's input is captured from its rewritten run (ortpool's op there)."""
    graph = helper.make_graph(
        [helper.make_node("Cast", ["X"], ["B"], name="in", to=TensorProto.BFLOAT16),
         helper.make_node("AveragePool", ["B"], ["P"], name="pool", kernel_shape=[3, 3]),
         helper.make_node("Cast", ["P"], ["Y"], name="out", to=TensorProto.FLOAT)], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 5, 5])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    model.ir_version = IR_VERSION
    _, report = fix_with_report(model)
    assert report.notes == [
        "onnxruntime could not run the model (Could not find an implementation for "
        "AveragePool(22) node with name 'pool'); node inputs were captured from its "
        "ortpool-rewritten run"]
    assert report.nodes[0].form == "in-float" and report.nodes[0].in_model["runs"] == 2


def test_a_fixed_bfloat16_node_is_judged_on_another_runtime_as_it_stands():
    """The form fix wrote (in-float) runs on the reference evaluator with its own bfloat16 X:
    fixed, not refused for a float input named 'X__float32' the model does not have."""
    graph = helper.make_graph(
        [helper.make_node("MaxPool", ["X"], ["Y"], name="pool", kernel_shape=[2, 2])], "g",
        [helper.make_tensor_value_info("X", TensorProto.BFLOAT16, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("Y", TensorProto.BFLOAT16, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    model.ir_version = IR_VERSION
    fixed, _ = fix_with_report(model)
    report = ortpool.validate(fixed, runtime="reference", guard_cost=False, isolate=False)
    assert [(n.name, n.status) for n in report[0].nodes] == [("pool", "fixed")]
    assert report[0].status == "agree"
