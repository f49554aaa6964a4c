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


def _spec_calls_in_price(monkeypatch, model: str | onnx.ModelProto) -> tuple[dict, list[str]]:
    """validate_model's guard cost, and the op versions the spec's kernels ran for inside the
    price (not in the judgement before it)."""
    from ortpool.check import cases
    from ortpool.forms import price
    from ortpool.validate import validator

    inside, calls = [], []
    real_outputs, real_price = cases.spec_outputs, price.guard_price

    def outputs(site, arrays):
        if inside:
            calls.append(f"{site.op}-{site.version}")
        return real_outputs(site, arrays)

    def priced(*args, **kwargs):
        inside.append(True)
        try:
            return real_price(*args, **kwargs)
        finally:
            inside.pop()

    monkeypatch.setattr(cases, "spec_outputs", outputs)
    monkeypatch.setattr(validator, "guard_price", priced)
    options = ValidateOptions(runtime=RuntimeSpec(), guard_cost=True)
    return validate_model(model, options, label="m").guard_cost, calls


def test_the_price_proves_its_forms_on_the_sets_validate_ran(monkeypatch):
    """The non-finite cases validate judged the node on carry the spec's answers: the price
    proves its guard on them instead of computing them again (46 MaxRoiPool sets), where the
    node keeps its version (MaxRoiPool-1 lifted to opset 9 is still MaxRoiPool-1)."""
    from pathlib import Path

    bundled = Path(__file__).resolve().parents[2] / "models"
    cost, calls = _spec_calls_in_price(monkeypatch, str(bundled / "maxroipool-1.onnx"))
    assert cost["forms"] == {"maxroipool1": "nan-guard-mask+opset-lift"} and cost["ratio"] > 0
    assert calls == []
    # MaxPool-1 lifted is MaxPool-8: the answers validate has are another version's, so the
    # price computes its own (one per non-finite set, 19)
    cost, calls = _spec_calls_in_price(monkeypatch, str(bundled / "maxpool-1.onnx"))
    assert cost["forms"] == {"maxpool1": "nan-guard+opset-lift"} and cost["ratio"] > 0
    assert calls == ["MaxPool-8"] * 19


def test_a_returned_report_holds_no_proof_sets():
    """The non-finite sets the price reused are dropped once it is measured: a report kept in a
    notebook does not hold every node's built sets (up to 2^23 elements each)."""
    from pathlib import Path

    bundled = Path(__file__).resolve().parents[2] / "models"
    options = ValidateOptions(runtime=RuntimeSpec(), guard_cost=True)
    result = validate_model(str(bundled / "maxroipool-1.onnx"), options, label="m")
    assert result.guard_cost["ratio"] > 0
    assert [n.nonfinite_sets for n in result.nodes] == [None]
    assert result.nodes[0].site is not None  # (the site stays: the views read it)
