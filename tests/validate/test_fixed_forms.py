"""A model fix wrote is judged as it stands: a form's nodes are judged together against the
spec it claims, and fix's record only says which nodes make a form. A record that is forged,
stale or not fix's changes no verdict (issue 33)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from ortpool.fix import fix_with_report
from ortpool.model import fixmarks
from ortpool.report import record as results
from ortpool.validate.validator import ValidateOptions, validate_model

#: Depends on onnxruntime's behaviour (its max drops a NaN): also run on the lowest release.
pytestmark = pytest.mark.onnxruntime

NONFINITE = ValidateOptions(nonfinite=True, guard_cost=False)


def _maxpool(record: object | None = None) -> onnx.ModelProto:
    """The issue's model: MaxPool 'p' k=3x3 pads 1 on x [1,2,6,6], opset 17; ``record`` as fix's
    metadata."""
    graph = h.make_graph(
        [h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[3, 3], pads=[1] * 4)],
        "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 6, 6])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    if record is not None:
        model.metadata_props.add(key=fixmarks.KEY, value=json.dumps(record))
    return model


def _status(model: onnx.ModelProto) -> tuple[str, str, list[str]]:
    found = validate_model(model, NONFINITE, label="m")
    (node,) = found.nodes
    return node.status, found.status, found.notes


def test_a_forged_record_changes_no_verdict():
    plain = _status(_maxpool())
    assert plain[:2] == (results.DIFFER, results.DIFFER)  # onnxruntime's max drops NaN
    # the record: no spec, no bounds: not one fix writes
    forged = _status(_maxpool({"p": {"form": "nan-guard", "op": "MaxPool-12", "nodes": []}}))
    assert forged[:2] == plain[:2]
    assert "fix's record of node 'p' is not one fix writes: ignored" in forged[2]
    # a record as fix writes it, but of a form that inserted nothing: the node is judged against
    # its own attributes, as any node
    written = {"form": "nan-guard", "op": "MaxPool-12", "nodes": [], "inputs": ["x"],
               "outputs": ["y"], "attributes": {"kernel_shape": [3, 3], "pads": [1] * 4}}
    assert _status(_maxpool({"p": written}))[:2] == plain[:2]
    # and one that claims another spec changes nothing either: the node's own attributes rule
    other = {**written, "attributes": {"kernel_shape": [3, 3]}}
    assert _status(_maxpool({"p": other}))[:2] == plain[:2]


def test_a_guard_fix_wrote_is_judged_as_it_stands():
    fixed, report = fix_with_report(_maxpool(), nonfinite=True)
    assert [n.form for n in report.nodes] == ["nan-guard"]
    status, model_status, _ = _status(fixed)
    assert (status, model_status) == (results.FIXED, results.AGREE)
    # the guard's correction cut out (its Add passes the pool's value on): still marked and
    # recorded as fix wrote it, but what it computes is judged, and it differs again
    broken = onnx.ModelProto()
    broken.CopyFrom(fixed)
    guard = next(n for n in broken.graph.node if n.name == "ortpool_fix/nan_guard/p")
    pooled = guard.input[0]
    guard.op_type, guard.input[:] = "Identity", [pooled]
    status, model_status, notes = _status(broken)
    assert (status, model_status) == (results.DIFFER, results.DIFFER), notes


def test_the_fixed_model_agrees_on_nan_where_the_original_did_not():
    fixed, _ = fix_with_report(_maxpool(), nonfinite=True)
    x = np.zeros((1, 2, 6, 6), np.float32)
    x[0, 0, 2, 2] = np.nan
    import ortpool

    (y,) = ortpool.InferenceSession(fixed).run(None, {"x": x})
    assert np.isnan(y[0, 0, 1:4, 1:4]).all() and not np.isnan(y[0, 1]).any()


def _dilated_same_behind_a_mark() -> onnx.ModelProto:
    """A SAME_UPPER MaxPool with dilation (onnxruntime gets it wrong) behind an Identity marked
    as fix's: a record is forged over it."""
    pool = h.make_node("MaxPool", ["x"], ["raw"], name="p", kernel_shape=[3, 3],
                       dilations=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER")
    mark = h.make_node("Identity", ["raw"], ["y"], name="ortpool_fix/guard/p",
                       doc_string=f"{fixmarks.MARK} forged")
    graph = h.make_graph([pool, mark], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 16, 16])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_a_record_claiming_what_the_runtime_computes_instead_of_the_spec_changes_no_verdict():
    """A SAME_UPPER MaxPool with dilation (onnxruntime pads it for the undilated kernel) behind
    an Identity marked as fix's, and a record claiming the pool was MaxPool with the pads
    onnxruntime uses: the region computed the record's spec exactly, and was reported fixed, the
    model's attributes never judged. The record's spec is now checked against what the nodes
    compute under the spec (their pools by ortpool's kernels); it differs, so the record is
    dropped and the pool judged as it stands."""
    model = _dilated_same_behind_a_mark()
    claimed = {"kernel_shape": [3, 3], "dilations": [2, 2], "strides": [2, 2], "pads": [0, 0, 1, 1]}
    model.metadata_props.add(key=fixmarks.KEY, value=json.dumps({"p": {
        "form": "nan-guard", "op": "MaxPool-12", "nodes": ["ortpool_fix/guard/p"],
        "inputs": ["x"], "outputs": ["y"], "attributes": claimed}}))
    found = validate_model(model, ValidateOptions(guard_cost=False), label="m")
    (node,) = found.nodes
    assert (node.name, node.status, found.status) == ("p", results.DIFFER, results.DIFFER)
    assert node.attributes["auto_pad"] == "SAME_UPPER"
    (note,) = [n for n in found.notes if n.startswith("fix's record")]
    assert note.startswith(f"fix's record of node 'p' (form nan-guard) claims MaxPool-12 with "
                           f"attributes {claimed}, which its nodes do not compute under the spec "
                           "(Y has shape [1, 1, 8, 8], the spec's is [1, 1, 7, 7]")
    assert note.endswith("): its nodes are judged as they stand")


def test_fix_of_a_model_it_wrote_judges_each_form_never_its_record():
    """fix of its own output keeps a form only where it is exact as it stands (as validate
    judges it): a guard with its correction cut out is noted, and the pool guarded anew; a record
    claiming the pads onnxruntime uses over a SAME_UPPER dilated MaxPool is checked against the
    spec, dropped, and the pool fixed. The record fix writes holds the new forms alone."""
    fixed, _ = fix_with_report(_maxpool(), nonfinite=True)
    guard = next(n for n in fixed.graph.node if n.name == "ortpool_fix/nan_guard/p")
    guard.op_type, guard.input[:] = "Identity", guard.input[:1]
    again, report = fix_with_report(fixed, nonfinite=True)
    assert [(n.name, n.realization, n.form) for n in report.nodes] == [
        ("p", "standard form", "nan-guard"), ("ortpool_fix/flag_sum/p", "unchanged", "unchanged")]
    (note,) = [n for n in report.notes if n.startswith("fix's record")]
    # the cells onnxruntime's max gets wrong depend on its release
    assert note.startswith("fix's record of node 'p' (form nan-guard): its nodes as written are "
                           "not exact (Y differs in ")
    assert note.endswith("): each is fixed as it stands")
    found = validate_model(again, NONFINITE, label="m")
    assert ([(n.name, n.status) for n in found.nodes], found.status) == (
        [("ortpool_fix/flag_sum/p", results.AGREE), ("p", results.FIXED)], results.AGREE)

    model = _dilated_same_behind_a_mark()
    claimed = {"kernel_shape": [3, 3], "dilations": [2, 2], "strides": [2, 2], "pads": [0, 0, 1, 1]}
    model.metadata_props.add(key=fixmarks.KEY, value=json.dumps({"p": {
        "form": "nan-guard", "op": "MaxPool-12", "nodes": ["ortpool_fix/guard/p"],
        "inputs": ["x"], "outputs": ["y"], "attributes": claimed}}))
    again, report = fix_with_report(model)
    assert [(n.name, n.form) for n in report.nodes] == [("p", "explicit-pads")]
    assert next(n for n in report.notes if n.startswith("fix's record")).endswith(
        "which its nodes do not compute under the spec (Y has shape [1, 1, 8, 8], the spec's is "
        "[1, 1, 7, 7] (on ties, X [1, 1, 16, 16])): its nodes are judged as they stand")
    assert [(f.name, f.form, f.nodes) for f in fixmarks.read(again)[0].values()] == [
        ("p", "explicit-pads", ())]


def _branching(branch_node: onnx.NodeProto) -> onnx.ModelProto:
    """The main graph's MaxPool 'p' (k=3x3 pads 1, opset 17) and an If whose then_branch holds
    ``branch_node`` (writing 'b' from 'y')."""
    branch = h.make_graph([branch_node], "then", [],
                          [h.make_tensor_value_info("b", T.FLOAT, None)])
    other = h.make_graph([h.make_node("Identity", ["y"], ["e"])], "else", [],
                         [h.make_tensor_value_info("e", T.FLOAT, [1, 2, 6, 6])])
    graph = h.make_graph(
        [h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[3, 3], pads=[1] * 4),
         h.make_node("If", ["c"], ["z"], name="branch", then_branch=branch, else_branch=other)],
        "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 6, 6]),
              h.make_tensor_value_info("c", T.BOOL, [])],
        [h.make_tensor_value_info("z", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_a_record_naming_a_node_several_nodes_bear_changes_no_verdict():
    """The main graph's MaxPool 'p' and an If branch's MaxPool 'p' (names are unique per graph
    only), both guarded by fix: its record kept one entry for 'p' (the branch's). validate took
    the record for the main graph's node too and judged the branch's region only: with the main
    guard cut out (onnxruntime's max then drops NaN), the model still agreed. Each form is now
    recorded in its own scope and judged there: the branch's fixed, the cut main one DIFFERS."""
    model = _branching(h.make_node("MaxPool", ["y"], ["b"], name="p", kernel_shape=[2, 2]))
    fixed, report = fix_with_report(model, nonfinite=True)
    assert [n.form for n in report.nodes] == ["nan-guard", "nan-guard"]
    found = validate_model(fixed, NONFINITE, label="m")
    assert [(n.location, n.status) for n in found.nodes] == [
        ("main graph > If 'branch'.then_branch", results.FIXED), ("main graph", results.FIXED)]
    guard = next(n for n in fixed.graph.node if n.name == "ortpool_fix/nan_guard/p")
    guard.op_type, guard.input[:] = "Identity", guard.input[:1]
    found = validate_model(fixed, NONFINITE, label="m")
    main = next(n for n in found.nodes if n.name == "p" and n.location == "main graph")
    assert (main.attributes["kernel_shape"], main.status) == ([3, 3], results.DIFFER)
    assert [n.status for n in found.nodes if n.location != "main graph"] == [results.FIXED]


def test_a_form_is_judged_fixed_when_a_branch_reuses_its_nodes_name():
    """`ortpool fix --nonfinite` guards the main graph's MaxPool 'p'; an If branch has a Relu
    also named 'p'. fix's record was dropped ("names node 'p', which 2 nodes of the model
    bear") and the guard judged as the nodes it is: MaxPool 'p' DIFFERS on a model ortpool
    wrote itself, exit 1. The record is read in the main graph: the form is judged fixed."""
    fixed, report = fix_with_report(_branching(h.make_node("Relu", ["y"], ["b"], name="p")),
                                    nonfinite=True)
    assert [n.form for n in report.nodes] == ["nan-guard"]
    found = validate_model(fixed, NONFINITE, label="m")
    assert [(n.name, n.status) for n in found.nodes] == [("p", results.FIXED)]
    assert (found.status, found.notes) == (
        results.AGREE, ["node inputs captured from the onnxruntime built-in run"])


def test_a_record_whose_attributes_are_no_attributes_changes_no_verdict():
    """Attributes named 'name' or 'inputs' (make_node's own keywords) or holding booleans, in a
    record of a form with a node: validate's model process died of the TypeError ("internal
    error", reported crashed). Each record is now dropped with a note naming the attribute."""
    pool = h.make_node("MaxPool", ["x"], ["raw"], name="p", kernel_shape=[3, 3], pads=[1] * 4)
    mark = h.make_node("Identity", ["raw"], ["y"], name="ortpool_fix/guard/p",
                       doc_string=f"{fixmarks.MARK} forged")
    graph = h.make_graph([pool, mark], "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 6, 6])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)])
    plain = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    plain.ir_version = 8
    want = _status(plain)[:2]
    for attributes, why in (
        ({"kernel_shape": [3, 3], "name": "q"}, "attribute 'name' does not exist in this version"),
        ({"kernel_shape": [3, 3], "inputs": ["a"]},
         "attribute 'inputs' does not exist in this version"),
        ({"kernel_shape": [True, True]}, "attribute 'kernel_shape' = [True, True]: "),
    ):
        model = onnx.ModelProto()
        model.CopyFrom(plain)
        model.metadata_props.add(key=fixmarks.KEY, value=json.dumps({"p": {
            "form": "nan-guard", "op": "MaxPool-12", "nodes": ["ortpool_fix/guard/p"],
            "inputs": ["x"], "outputs": ["y"], "attributes": attributes}}))
        status, model_status, notes = _status(model)
        assert (status, model_status) == want, attributes
        assert any(n.startswith("fix's record of node 'p' names no spec ortpool knows (MaxPool-12: "
                                f"node 'p' (MaxPool-12): {why}") for n in notes), notes


def test_a_record_whose_bounds_the_model_lacks_changes_no_verdict():
    """A SAME_UPPER dilated MaxPool (onnxruntime gets it wrong) behind a marked Identity,
    recorded with an input 'ghost' no tensor bears: the pool was left out as part of the form and
    the form not judged ("not compared"), the model's exit 0; the captured 'ghost' broke the
    model's run too. The record is dropped with a note and the pool judged as it stands."""
    model = _dilated_same_behind_a_mark()
    model.metadata_props.add(key=fixmarks.KEY, value=json.dumps({"p": {
        "form": "nan-guard", "op": "MaxPool-12", "nodes": ["ortpool_fix/guard/p"],
        "inputs": ["ghost"], "outputs": ["y"],
        "attributes": {"kernel_shape": [3, 3], "dilations": [2, 2], "strides": [2, 2],
                       "auto_pad": "SAME_UPPER"}}}))
    found = validate_model(model, ValidateOptions(guard_cost=False), label="m")
    (node,) = found.nodes
    assert (node.name, node.status, found.status) == ("p", results.DIFFER, results.DIFFER)
    assert "fix's record of node 'p' (form nan-guard) no longer matches the model (tensor " \
        "'ghost' is gone, edited after fixing?): its nodes are validated as they stand" \
        in found.notes


def _function_fixed_with_branch(body: list[onnx.NodeProto], branch_pool: onnx.NodeProto,
                                nonfinite: bool) -> onnx.ModelProto:
    """A model calling local.F (``body``, 'fx' -> 'fy') fixed by fix, then given an If whose
    then_branch holds ``branch_pool`` ('y' -> 'b')."""
    imports = [h.make_opsetid("", 17), h.make_opsetid("local", 1)]
    graph = h.make_graph([h.make_node("F", ["x"], ["y"], name="call", domain="local")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 6, 6])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=imports,
                         functions=[h.make_function("local", "F", ["fx"], ["fy"], body, imports)])
    model.ir_version = 8
    fixed, _ = fix_with_report(model, nonfinite=nonfinite)
    then = h.make_graph([branch_pool], "then", [],
                        [h.make_tensor_value_info("b", T.FLOAT, [1, 2, 6, 6])])
    other = h.make_graph([h.make_node("Identity", ["y"], ["e"])], "else", [],
                         [h.make_tensor_value_info("e", T.FLOAT, [1, 2, 6, 6])])
    fixed.graph.node.append(h.make_node("If", ["c"], ["z"], name="branch", then_branch=then,
                                        else_branch=other))
    fixed.graph.input.append(h.make_tensor_value_info("c", T.BOOL, []))
    fixed.graph.output.append(h.make_tensor_value_info("z", T.FLOAT, None))
    return fixed


def test_a_branch_node_named_like_an_inlined_copy_is_not_labelled_fixed():
    """A local function's SAME_UPPER dilated MaxPool fixed in place (explicit pads), and an If
    branch's plain MaxPool 'p__1' (agrees), named as onnx's inliner names the function node's
    copy: the branch's node was reported 'fixed', the form's label."""
    same = {"kernel_shape": [3, 3], "dilations": [2, 2], "auto_pad": "SAME_UPPER"}
    fixed = _function_fixed_with_branch(
        [h.make_node("MaxPool", ["fx"], ["fy"], name="p", **same)],
        h.make_node("MaxPool", ["y"], ["b"], name="p__1", kernel_shape=[1, 1]), nonfinite=False)
    found = validate_model(fixed, ValidateOptions(guard_cost=False), label="m")
    assert [(n.name, n.status) for n in found.nodes] == [
        ("p", results.FIXED), ("p__1", results.AGREE)]


def test_a_function_fixed_in_place_is_fixed_in_its_copy_inlined_into_a_branch():
    """A local function's SAME_UPPER dilated MaxPool fixed in place (explicit pads), the function
    called inside an If branch: onnx's inliner puts its copy 'p__1' in the branch, and validate
    labelled it 'agree' under that name (only a copy in the main graph was taken for the
    function's node); the guard, a region, was 'fixed' as 'p'. Both are 'fixed' as 'p' now."""
    imports = [h.make_opsetid("", 17), h.make_opsetid("local", 1)]
    pool = h.make_node("MaxPool", ["fx"], ["fy"], name="p", kernel_shape=[3, 3], dilations=[2, 2],
                       auto_pad="SAME_UPPER")
    then = h.make_graph([h.make_node("F", ["x"], ["b"], name="call", domain="local")], "then", [],
                        [h.make_tensor_value_info("b", T.FLOAT, [1, 2, 6, 6])])
    other = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [],
                         [h.make_tensor_value_info("e", T.FLOAT, [1, 2, 6, 6])])
    graph = h.make_graph(
        [h.make_node("If", ["c"], ["z"], name="branch", then_branch=then, else_branch=other)],
        "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 6, 6]),
              h.make_tensor_value_info("c", T.BOOL, [])],
        [h.make_tensor_value_info("z", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=imports,
                         functions=[h.make_function("local", "F", ["fx"], ["fy"], [pool], imports)])
    model.ir_version = 8
    fixed, report = fix_with_report(model)
    assert [(n.name, n.form) for n in report.nodes] == [("p", "explicit-pads")]
    found = validate_model(fixed, ValidateOptions(guard_cost=False), label="m")
    assert [(n.name, n.location, n.status) for n in found.nodes] == [
        ("p", "main graph > If 'branch'.then_branch", results.FIXED)]
    assert found.nodes[0].message.startswith(
        "fixed: form explicit-pads (the node with its attributes rewritten), judged as it stands: ")


def test_a_branch_node_named_like_an_inlined_copy_of_a_form_is_judged():
    """A local function's MaxPool guarded by fix; then an If branch with a SAME_UPPER dilated
    MaxPool (onnxruntime gets it wrong) named 'p__1', as onnx's inliner names the function
    node's copy. The branch's node was taken for that copy, a node of the form, and never
    judged (the model agreed); the copy, which the inliner then names 'p__1_0', was judged as a
    plain node beside its form. Now a name the model's graphs bear is never an inlined copy's."""
    fixed = _function_fixed_with_branch(
        [h.make_node("MaxPool", ["fx"], ["fy"], name="p", kernel_shape=[3, 3], pads=[1] * 4)],
        h.make_node("MaxPool", ["y"], ["b"], name="p__1", kernel_shape=[3, 3], dilations=[2, 2],
                    auto_pad="SAME_UPPER"), nonfinite=True)
    found = validate_model(fixed, NONFINITE, label="m")
    assert [(n.name, n.location, n.status) for n in found.nodes] == [
        ("p__1", "main graph > If 'branch'.then_branch", results.DIFFER),
        ("p", "function local.F", results.FIXED)]


def test_a_form_that_replaced_its_node_by_one_reduce_op_is_judged():
    """A double GlobalMaxPool at opset 17 (no onnxruntime kernel) fixed as one ReduceMax of its
    name (ReduceMax-13 takes its axes as an attribute: fix inserts no node): validate of the
    fixed model judged nothing of it ('1 node: 1 agree', the MaxPool beside it), so a ReduceMin
    written over it still agreed, end to end too. Now it is a region as any form."""
    graph = h.make_graph(
        [h.make_node("GlobalMaxPool", ["x"], ["z"], name="gmp"),
         h.make_node("MaxPool", ["x"], ["w"], name="mp", kernel_shape=[2, 2])],
        "g", [h.make_tensor_value_info("x", T.DOUBLE, [1, 3, 5, 5])],
        [h.make_tensor_value_info("z", T.DOUBLE, None),
         h.make_tensor_value_info("w", T.DOUBLE, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    fixed, report = fix_with_report(model)
    assert [(n.name, n.form) for n in report.nodes] == [("gmp", "reduce"), ("mp", "unchanged")]
    assert [n.op_type for n in fixed.graph.node] == ["ReduceMax", "MaxPool"]
    options = ValidateOptions(guard_cost=False)
    found = validate_model(fixed, options, label="m")
    assert [(n.name, n.status) for n in found.nodes] == [
        ("mp", results.AGREE), ("gmp", results.FIXED)]
    fixed.graph.node[0].op_type = "ReduceMin"
    found = validate_model(fixed, options, label="m")
    assert [(n.name, n.status) for n in found.nodes] == [("mp", results.AGREE)]
    (note,) = [n for n in found.notes if n.startswith("fix's record")]
    assert note.startswith("fix's record of node 'gmp' (form reduce) claims GlobalMaxPool-1 "
                           "with attributes {}, which its nodes do not compute under the spec (")


def test_a_form_fix_wrote_for_an_unnamed_node_is_judged_as_one():
    """The guard fix writes around an unnamed MaxPool: fix recorded no form for an unnamed node,
    so validate judged the pool alone (it differs on NaN, exit 1 on the model fix had proven)
    and the guard's own AveragePool as a pooling node of the model. The node is named now; fix
    reported it as '<unnamed MaxPool>' still, validate by that name: both say the name now."""
    model = _maxpool()
    model.graph.node[0].name = ""
    fixed, report = fix_with_report(model, nonfinite=True)
    assert [(n.name, n.form) for n in report.nodes] == [("ortpool_fix/node/y", "nan-guard")]
    found = validate_model(fixed, NONFINITE, label="m")
    assert [(n.name, n.status) for n in found.nodes] == [("ortpool_fix/node/y", results.FIXED)]
    assert found.status == results.AGREE


def test_a_power_average_form_is_judged_as_its_node():
    """LpPool-1 with p=1.5 (no later version can write it) becomes (kvol*AveragePool(|x|^p))^(1/p)
    at a lifted opset, every node of it inserted: the node's name was gone from the model, so
    validate called fix's record stale ('edited after fixing?') and judged the form's
    AveragePool as a pooling node of the model. Its AveragePool takes the node's name, as a
    Reduce op does in the reduce form."""
    graph = h.make_graph(
        [h.make_node("LpPool", ["x"], ["y"], name="lp", kernel_shape=[2, 2], p=1.5)], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 6, 6])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 2, 5, 5])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 1)])
    model.ir_version = 3
    fixed, report = fix_with_report(model)
    assert [(n.name, n.form) for n in report.nodes] == [("lp", "power-average+opset-lift")]
    found = validate_model(fixed, ValidateOptions(guard_cost=False), label="m")
    assert [(n.name, n.status) for n in found.nodes] == [("lp", results.FIXED)]
    assert not [n for n in found.notes if n.startswith("fix's record")]


def test_a_node_fix_rewrote_in_place_is_fixed_only_where_it_computes_the_record():
    """A SAME_UPPER dilated MaxPool of stride 2 fixed in place (explicit pads, right for 9x9),
    then the model's input re-declared 10x10: the pads are no longer the spec's, yet validate
    labelled the node fixed, read from the record (the node agrees with its own attributes).
    The record's spec is checked as a region's is; here it is dropped with a note."""
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "dilations": [2, 2],
             "auto_pad": "SAME_UPPER"}
    graph = h.make_graph([h.make_node("MaxPool", ["x"], ["y"], name="p", **attrs)], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 9, 9])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    fixed, report = fix_with_report(model)
    assert [n.form for n in report.nodes] == ["explicit-pads"]
    options = ValidateOptions(guard_cost=False)
    assert [(n.name, n.status) for n in validate_model(fixed, options, label="m").nodes] == [
        ("p", results.FIXED)]
    fixed.graph.input[0].type.tensor_type.shape.dim[3].dim_value = 10
    found = validate_model(fixed, options, label="m")
    assert [(n.name, n.status) for n in found.nodes] == [("p", results.AGREE)]
    (note,) = [n for n in found.notes if n.startswith("fix's record")]
    assert note.startswith("fix's record of node 'p' (form explicit-pads) claims MaxPool-12 with "
                           f"attributes {dict(sorted(attrs.items()))}, which its nodes do not "
                           "compute under the spec (")
