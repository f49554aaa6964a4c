"""What guarding the nodes that differ on NaN/inf only costs (ruling 20), as validate reports it
(``ortpool.forms.price``): the forms fix --nonfinite would write for those nodes, the guarded
model timed against the original with a control; or, where no standard form is exact, why
not."""

from __future__ import annotations

import onnx
from onnx import TensorProto as T
from onnx import helper as h

from ortpool.ort import RuntimeSpec
from ortpool.validate.validator import ValidateOptions, validate_model


def _pool(indices: bool) -> onnx.ModelProto:
    outputs = ["y", "i"] if indices else ["y"]
    graph = h.make_graph(
        [h.make_node("MaxPool", ["x"], outputs, name="p", kernel_shape=[2, 2])],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 8, 8])],
        [h.make_tensor_value_info(o, T.FLOAT if o == "y" else T.INT64, None) for o in outputs],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 12)])
    model.ir_version = 8
    return model


def test_the_guard_is_priced_on_the_model():
    options = ValidateOptions(runtime=RuntimeSpec(), guard_cost=True)
    result = validate_model(_pool(indices=False), options, label="m")
    (node,) = result.nodes
    assert node.status == "agree" and node.nonfinite.endswith("instead of nan)")
    cost = result.guard_cost
    assert (cost["nodes"], cost["forms"], cost["level"], cost["error"]) == (
        ["p"], {"p": "nan-guard"}, "all", ""
    )
    assert cost["ratio"] > 0 and cost["control"] > 0 and 3 <= cost["rounds"] <= 12
    assert result.guard_text.startswith(
        "guarding 'p' against NaN and -inf makes a run take "
    )
    assert result.guard_detail.endswith(
        f"over {cost['rounds']} interleaved rounds, the original against itself "
        f"{cost['control']:.2f}; level all, whole runs as 'ortpool bench MODEL FIXED' times them"
    )
    # the non-finite domain judges those nodes itself: nothing to price
    options.nonfinite = True
    assert validate_model(_pool(indices=False), options, label="m").guard_cost == {}


def test_a_guard_that_needs_ortpools_op_is_said_so():
    options = ValidateOptions(runtime=RuntimeSpec(), guard_cost=True)
    result = validate_model(_pool(indices=True), options, label="m")
    assert result.guard_cost["ratio"] is None
    assert result.guard_text == (
        "guarding 'p' could not be measured: p: no standard-op form (ortpool's op would guard "
        "it)"
    )


def test_the_spec_answers_are_computed_only_at_an_opset_where_a_guard_can_be_written(
        monkeypatch):
    """MaxRoiPool-1 at opset 1: no guard is writable before opset 9 (the lift tries 6, 7, 8
    first), and its 46 proof sets' answers cost more than the proofs: computed once, at 9."""
    from pathlib import Path

    from ortpool.forms import price

    bundled = Path(__file__).resolve().parents[2] / "models"

    calls = []
    real = price.expect

    def counted(site, sets):
        calls.append(site.opset)
        return real(site, sets)

    monkeypatch.setattr(price, "expect", counted)
    options = ValidateOptions(runtime=RuntimeSpec(), guard_cost=True)
    result = validate_model(str(bundled / "maxroipool-1.onnx"), options, label="m")
    assert result.guard_cost["forms"] == {"maxroipool1": "nan-guard-mask+opset-lift"}
    assert result.guard_cost["error"] == "" and result.guard_cost["ratio"] > 0
    assert calls == [9]
