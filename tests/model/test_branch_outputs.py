"""Declared static shapes of subgraph outputs an ortpool op writes: made symbolic by a rewrite
(onnxruntime would allocate them ahead and end the process when the op's output differs), put
back by a restore."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import ortpool
from ortpool.errors import OrtpoolError
from ortpool.model import branch_outputs
from tests import support


def _branch_model(then_nodes, declared=(1, 1, 3, 3)) -> onnx.ModelProto:
    then_g = helper.make_graph(then_nodes, "then", [],
                               [helper.make_tensor_value_info("Yb", TensorProto.FLOAT, declared)])
    zeros = helper.make_tensor("z", TensorProto.FLOAT, declared, [0.0] * int(np.prod(declared)))
    else_g = helper.make_graph([helper.make_node("Constant", [], ["Ye"], value=zeros)],
                               "else", [],
                               [helper.make_tensor_value_info("Ye", TensorProto.FLOAT, declared)])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["Y"], then_branch=then_g, else_branch=else_g, name="if")],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 4, 4]),
         helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = support.IR_VERSION
    return model


def _output(model: onnx.ModelProto, branch: str) -> onnx.ValueInfoProto:
    (attr,) = [a for a in model.graph.node[0].attribute if a.name == branch]
    return attr.g.output[0]


def _dims(value: onnx.ValueInfoProto) -> list:
    return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]


def test_rewrite_makes_the_branch_output_symbolic_and_restore_puts_it_back():
    model = _branch_model([helper.make_node("MaxPool", ["X"], ["P"], kernel_shape=[2, 2],
                                            name="pool"),
                           helper.make_node("Identity", ["P"], ["Yb"])])
    rewritten, report = ortpool.rewrite.rewrite_with_report(model)
    then_out, else_out = _output(rewritten, "then_branch"), _output(rewritten, "else_branch")
    assert _dims(then_out) == ["Yb:0", "Yb:1", "Yb:2", "Yb:3"]
    assert [(e.key, e.value) for e in then_out.metadata_props] == [
        (branch_outputs.KEY, "1,1,3,3")]
    assert _dims(else_out) == [1, 1, 3, 3]  # no ortpool op writes it
    assert any("'Yb'" in note and "ortpool restore" in note for note in report.notes)
    restored = ortpool.restore(rewritten)
    assert restored.SerializeToString() == model.SerializeToString()


def test_a_rewritten_branch_runs_with_a_wrong_declaration_in_a_plain_session():
    """The declaration says 2x2, MaxPool k2 on 4x4 gives 3x3: onnxruntime's own MaxPool only
    warns, and so does the rewritten model now (it ended the process)."""
    import onnxruntime as ort

    model = _branch_model([helper.make_node("MaxPool", ["X"], ["Yb"], kernel_shape=[2, 2],
                                            name="pool")], declared=(1, 1, 2, 2))
    session = ort.InferenceSession(ortpool.rewrite(model).SerializeToString(),
                                   ortpool.session_options(), providers=["CPUExecutionProvider"])
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    (y,) = session.run(None, {"X": x, "c": np.array(True)})
    np.testing.assert_array_equal(y, [[[[5, 6, 7], [9, 10, 11], [13, 14, 15]]]])


def test_only_values_an_ortpool_op_writes_are_touched():
    pool = support.ortpool_model("MaxPool", 12, {"kernel_shape": [2, 2]}, np.float32).graph.node[0]
    pool.input[:], pool.output[:] = ["X"], ["P"]
    relu = helper.make_node("Relu", ["P"], ["Yb"])  # a new buffer: not allocated ahead for P
    model = _branch_model([pool, relu])
    assert branch_outputs.pending(model) == []
    assert branch_outputs.set_aside(model) == []
    reshape_model = _branch_model([pool, helper.make_node("Reshape", ["P", "s"], ["Yb"])])
    assert [v.name for v in branch_outputs.pending(reshape_model)] == ["Yb"]


def test_put_back_skips_a_declaration_whose_rank_changed():
    model = _branch_model([helper.make_node("Identity", ["X"], ["Yb"])])
    value = _output(model, "then_branch")
    value.metadata_props.add(key=branch_outputs.KEY, value="1,1,3")  # 3 sizes, rank 4
    assert branch_outputs.put_back(model) == []
    assert _dims(value) == [1, 1, 3, 3]


def _hand_written_branch_model() -> onnx.ModelProto:
    pool = support.ortpool_model("MaxPool", 12, {"kernel_shape": [2, 2]}, np.float32).graph.node[0]
    pool.input[:], pool.output[:] = ["X"], ["Yb"]
    model = _branch_model([pool])
    model.opset_import.add(domain="ortpool", version=1)
    return model


def test_check_model_names_what_would_end_a_plain_session():
    model = _hand_written_branch_model()
    with pytest.raises(OrtpoolError) as info:
        ortpool.check_model(model)
    assert str(info.value) == (
        "subgraph output 'Yb' is written by an ortpool op and declares the static shape "
        "[1, 1, 3, 3]: onnxruntime allocates it ahead, and an op output of another shape (a "
        "wrong declaration, a failed op) ends a plain session's process; run the model through "
        "ortpool.InferenceSession, or 'ortpool rewrite' it (that makes those dims symbolic)")
    ortpool.check_model(ortpool.rewrite(model))  # the rewrite mends it: nothing raised
    pool = model.graph.node[0].attribute[1].g.node[0]
    pool.attribute[3].s = b"2,\xff"
    with pytest.raises(OrtpoolError) as info:
        ortpool.check_model(model)
    assert str(info.value) == (
        f"node 'pool' (MaxPool-12): attribute {pool.attribute[3].name!r} is not UTF-8 text: "
        "b'2,\\xff'")


def test_a_session_sets_hand_written_branch_shapes_aside_without_touching_the_model():
    model = _hand_written_branch_model()
    before = model.SerializeToString()
    session = ortpool.InferenceSession(model)
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    (y,) = session.run(None, {"X": x, "c": np.array(True)})
    np.testing.assert_array_equal(y, [[[[5, 6, 7], [9, 10, 11], [13, 14, 15]]]])
    assert model.SerializeToString() == before
