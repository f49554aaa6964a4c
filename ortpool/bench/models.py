"""Single-node models of a benchmark case: the built-in node, or the ortpool node for it."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from ortpool.bench.cases import Case
from ortpool.model.singlenode import node_model


def _io(case: Case) -> tuple[list[onnx.ValueInfoProto], list[onnx.ValueInfoProto]]:
    """The graph inputs (X, and I for MaxUnpool) and outputs (Y, and Indices) of ``case``."""
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(case.shape))]
    if case.op == "MaxUnpool":
        inputs.append(helper.make_tensor_value_info("I", TensorProto.INT64, list(case.shape)))
    if case.op == "MaxRoiPool":
        inputs.append(helper.make_tensor_value_info("rois", TensorProto.FLOAT, [case.rois, 5]))
    # Output sizes are left symbolic: the runtime computes them.
    dims = [f"d{i}" for i in range(len(case.shape))]
    outputs = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, dims)]
    if case.indices:
        outputs.append(helper.make_tensor_value_info("Indices", TensorProto.INT64, dims))
    return inputs, outputs


def builtin_model(case: Case, opset: int) -> bytes:
    """The case as one standard ONNX node at ``opset``."""
    inputs, outputs = _io(case)
    node = helper.make_node(
        case.op, [i.name for i in inputs], [o.name for o in outputs], name=case.name,
        **case.attributes)
    model = node_model([node], f"bench_{case.name}", inputs, outputs,
                       [helper.make_opsetid("", opset)], producer_name="ortpool-bench")
    return model.SerializeToString()


def ortpool_model(case: Case, opset: int) -> bytes:
    """The built-in model of ``case`` passed through the rewriter, as a user's model would be."""
    from ortpool.rewrite import rewrite

    return rewrite(onnx.load_from_string(builtin_model(case, opset))).SerializeToString()
