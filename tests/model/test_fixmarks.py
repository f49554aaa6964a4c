"""fix's record of the forms it wrote (ortpool.model.fixmarks), read back as validate reads it:
what matches the model is a fixed node; anything else is noted and dropped, never an error."""

from __future__ import annotations

import json

import onnx
from onnx import TensorProto, helper

from ortpool.model import fixmarks


def _model(record: object | None, mark: str = fixmarks.MARK) -> onnx.ModelProto:
    """x -> Pad (inserted, marked with ``mark``) -> MaxPool 'pool' -> y; ``record`` as the
    metadata (a str as it is, anything else as JSON)."""
    pad = helper.make_node("Pad", ["x", "pads"], ["padded"], name="ortpool_fix/pad/pool")
    pad.doc_string = f"{mark} inserted by 'ortpool fix' for node 'pool' (form pad)"
    graph = helper.make_graph(
        [pad, helper.make_node("MaxPool", ["padded"], ["y"], name="pool", kernel_shape=[2, 2])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("pads", TensorProto.INT64, [8], [0, 0, 1, 1, 0, 0, 1, 1])],
    )
    model = helper.make_model(graph)
    if record is not None:
        value = record if isinstance(record, str) else json.dumps(record)
        model.metadata_props.add(key=fixmarks.KEY, value=value)
    return model


ENTRY = {"form": "pad", "op": "MaxPool-12", "nodes": ["ortpool_fix/pad/pool"],
         "attributes": {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1]}, "inputs": ["x"],
         "outputs": ["y"]}


def test_a_record_matching_the_model_is_read():
    fixed, notes = fixmarks.read(_model({"pool": ENTRY}))
    assert fixed == {"pool": fixmarks.FixedNode(
        "pool", "pad", "MaxPool-12", ("ortpool_fix/pad/pool",),
        {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1]}, ("x",), ("y",))}
    assert notes == []
    assert fixmarks.read(_model(None)) == ({}, [])


def test_record_merges_with_an_earlier_fix():
    model = _model({"other": {**ENTRY, "nodes": ["b"]}})
    fixmarks.record(model, [fixmarks.FixedNode("pool", "pad", "MaxPool-12", ("a",),
                                               ENTRY["attributes"], ("x",), ("y",))])
    [prop] = [p for p in model.metadata_props if p.key == fixmarks.KEY]
    assert json.loads(prop.value) == {"other": {**ENTRY, "nodes": ["b"]},
                                      "pool": {**ENTRY, "nodes": ["a"]}}


def test_a_record_that_does_not_match_is_noted_and_dropped():
    cases = {
        "not json": ("{", "metadata 'ortpool.fix' is not JSON (Expecting property name "
                     "enclosed in double quotes: line 1 column 2 (char 1)): fix's record ignored"),
        "a list": ([1], "metadata 'ortpool.fix' is not a JSON object of node names: fix's "
                   "record ignored"),
        # nested past Python's stack: json.loads raised RecursionError (validate's child died,
        # fix ended in a traceback)
        "too deep": ("[" * 100_000 + "]" * 100_000, "metadata 'ortpool.fix' is JSON nested too "
                     "deep to be fix's record: fix's record ignored"),
        "no form": ({"pool": {"op": "MaxPool-12", "nodes": []}},
                    "fix's record of node 'pool' is not one fix writes: ignored"),
        # a record of an earlier release (no attributes, no bounds) describes no form to judge
        "no spec": ({"pool": {"form": "pad", "op": "MaxPool-12", "nodes": ["a"]}},
                    "fix's record of node 'pool' is not one fix writes: ignored"),
        "node gone": ({"gone": {**ENTRY, "nodes": []}},
                      "fix's record of node 'gone' (form pad) no longer matches the model (node "
                      "'gone' is gone, edited after fixing?): its nodes are validated as they "
                      "stand"),
        # bounds no tensor of the model has: the form's nodes were left out of the node
        # judgements and its region could not be judged ("not compared", exit 0 for a defect)
        "input gone": ({"pool": {**ENTRY, "inputs": ["ghost"]}},
                       "fix's record of node 'pool' (form pad) no longer matches the model "
                       "(tensor 'ghost' is gone, edited after fixing?): its nodes are validated "
                       "as they stand"),
        "output empty": ({"pool": {**ENTRY, "outputs": [""]}},
                         "fix's record of node 'pool' (form pad) no longer matches the model "
                         "(tensor '' is gone, edited after fixing?): its nodes are validated as "
                         "they stand"),
        "inserted gone": ({"pool": {**ENTRY, "nodes": ["ortpool_fix/pad/x"]}},
                          "fix's record of node 'pool' (form pad) no longer matches the model "
                          "(node 'ortpool_fix/pad/x' is gone, edited after fixing?): its nodes "
                          "are validated as they stand"),
    }
    for name, (record, note) in cases.items():
        assert fixmarks.read(_model(record)) == ({}, [note]), name
    unmarked = fixmarks.read(_model({"pool": ENTRY}, mark="edited:"))
    assert unmarked == ({}, [
        "fix's record of node 'pool' (form pad) no longer matches the model (node "
        "'ortpool_fix/pad/pool' is no longer marked 'ortpool-fix:', edited after fixing?): its "
        "nodes are validated as they stand"
    ])


def _with_branch(model: onnx.ModelProto, branch_nodes: list[onnx.NodeProto]) -> onnx.ModelProto:
    """``model`` with an If 'branch' whose then_branch holds ``branch_nodes`` (writing 'b')."""
    then = helper.make_graph(branch_nodes, "then", [],
                             [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)])
    other = helper.make_graph([helper.make_node("Identity", ["y"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    model.graph.node.append(helper.make_node("If", ["c"], ["z"], name="branch",
                                             then_branch=then, else_branch=other))
    return model


BRANCH = "main graph > If 'branch'.then_branch"


def test_a_record_is_read_in_its_own_scope_whatever_another_scope_names():
    """Names are unique per graph only: a branch's node named as the main graph's fixed node
    made the record name "node 'pool', which 2 nodes of the model bear", dropped, and validate
    judged the form fix wrote as the nodes it is (a false DIFFERS). A record is now read in its
    own scope, keyed by it outside the main graph, and a name shared within a scope still
    drops it."""
    model = _with_branch(_model({"pool": ENTRY}),
                         [helper.make_node("Relu", ["y"], ["b"], name="pool")])
    fixed, notes = fixmarks.read(model)
    assert (list(fixed), fixed["pool"].scope, notes) == (["pool"], "main graph", [])
    # fix's record of a branch's form, beside the main graph's
    pad = helper.make_node("Pad", ["y", "pads"], ["bp"], name="ortpool_fix/pad/pool_2",
                           doc_string=f"{fixmarks.MARK} inserted")
    model = _with_branch(_model({"pool": ENTRY}),
                         [pad, helper.make_node("MaxPool", ["bp"], ["b"], name="pool",
                                                kernel_shape=[2, 2])])
    branch = fixmarks.FixedNode("pool", "pad", "MaxPool-12", ("ortpool_fix/pad/pool_2",),
                                ENTRY["attributes"], ("y",), ("b",), BRANCH)
    fixmarks.record(model, [branch])
    [prop] = [p for p in model.metadata_props if p.key == fixmarks.KEY]
    assert sorted(json.loads(prop.value)) == [f"{BRANCH} > pool", "pool"]
    fixed, notes = fixmarks.read(model)
    assert (fixed[f"{BRANCH} > pool"], fixed["pool"].scope, notes) == (branch, "main graph", [])
    # a key that is not its scope's, and a scope the name is not in
    for entry, note in (
        ({"pool": {**ENTRY, "scope": BRANCH}}, "fix's record of node 'pool' is not one fix "
         "writes: ignored"),
        ({"other > pool": {**ENTRY, "scope": "other"}}, "fix's record of node 'other > pool' "
         "(form pad) no longer matches the model (node 'pool' is gone, edited after fixing?): its "
         "nodes are validated as they stand"),
    ):
        assert fixmarks.read(_model(entry)) == ({}, [note])
    twice = _model({"pool": ENTRY})
    twice.graph.node.append(helper.make_node("Relu", ["y"], ["r"], name="pool"))
    assert fixmarks.read(twice) == ({}, [
        "fix's record of node 'pool' (form pad) names node 'pool', which 2 nodes of the main "
        "graph bear: its nodes are validated as they stand"])
