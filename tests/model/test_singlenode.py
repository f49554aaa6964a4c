"""ortpool.model.singlenode: the one builder of the small models ortpool makes, and its IR
stamp."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from ortpool.model.singlenode import IR_VERSION, node_model


def _io(name: str, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def test_node_model_stamps_the_ir_every_supported_runtime_reads():
    relu = helper.make_node("Relu", ["x"], ["y"])
    old = node_model([relu], "g", [_io("x", [1])], [_io("y", [1])], [helper.make_opsetid("", 6)])
    assert (old.ir_version, old.graph.name) == (3, "g")
    new = node_model(
        [relu],
        "g",
        [_io("x", [1])],
        [_io("y", [1])],
        [helper.make_opsetid("ai.onnx", 13)],
        producer_name="p",
    )
    assert (new.ir_version, new.producer_name) == (IR_VERSION, "p")
    custom = node_model(
        [relu], "g", [_io("x", [1])], [_io("y", [1])], [helper.make_opsetid("ortpool", 1)]
    )
    assert custom.ir_version == IR_VERSION
    probe = node_model(
        [relu], "g", [_io("x", [1])], [_io("y", [1])], [helper.make_opsetid("", 13)], ir_version=12
    )
    assert probe.ir_version == 12
    onnx.checker.check_model(new)
