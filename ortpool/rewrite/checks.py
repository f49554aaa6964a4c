"""Schema checks of a standard pooling node against the spec version that governs it.

A node is checked before it is retargeted: the version must exist at the governing opset, the
inputs and outputs must fit the version, every attribute must exist in the version with the
schema's attribute type, and the values must pass :func:`ortpool.attributes.normalize` (pads with
auto_pad, missing kernel_shape, lengths against the kernel rank and the input rank). Every error is
an :class:`OrtpoolError` naming the node, the op version and the attribute.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import onnx
from onnx import AttributeProto

from ortpool import optypes, versions
from ortpool.attributes import NodeAttrs, attribute_values, normalize
from ortpool.errors import OrtpoolError
from ortpool.optypes import OpType
from ortpool.versions import OpVersion

#: The ONNX attribute type each kind of pooling attribute must have on a standard node.
PROTO_TYPE = {
    "int": AttributeProto.INT,
    "ints": AttributeProto.INTS,
    "string": AttributeProto.STRING,
    "float": AttributeProto.FLOAT,
}
_OUTPUTS = ("Y", "Indices")


@dataclasses.dataclass(frozen=True)
class CheckedNode:
    """A standard pooling node that passed its checks, with what retargeting it needs."""

    spec: OpVersion
    attrs: NodeAttrs
    op_type: OpType
    inputs: tuple[str, ...]  # present inputs, trailing empty optionals dropped
    outputs: tuple[str, ...]


def node_name(node: onnx.NodeProto) -> str:
    return node.name or f"<unnamed {node.op_type}>"


def present(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Names with trailing empty (absent optional) entries removed."""
    names = list(names)
    while names and not names[-1]:
        names.pop()
    return tuple(names)


def resolve_version(node: onnx.NodeProto, opset: int | None) -> OpVersion:
    name = node_name(node)
    if opset is None:
        raise OrtpoolError("no ai.onnx opset import governs this node", node=name, op=node.op_type)
    try:
        return versions.resolve(node.op_type, opset)
    except ValueError as err:
        raise OrtpoolError(str(err), node=name, op=node.op_type) from None


def check_node(node: onnx.NodeProto, spec: OpVersion, input_rank: int | None) -> CheckedNode:
    """Check ``node`` against ``spec``; ``input_rank`` is X's rank when inference knows it."""
    name = node_name(node)

    def fail(message: str) -> OrtpoolError:
        return OrtpoolError(message, node=name, op=spec.op, version=spec.version)

    inputs, outputs = present(node.input), present(node.output)
    input_names = spec.input_names
    if len(inputs) > spec.max_inputs:
        raise fail(
            f"has {len(inputs)} inputs; this version takes at most {spec.max_inputs} "
            f"({', '.join(input_names[: spec.max_inputs])})"
        )
    if len(outputs) > spec.max_outputs:
        raise fail(
            f"has {len(outputs)} outputs; this version has at most {spec.max_outputs} "
            f"({', '.join(_OUTPUTS[: spec.max_outputs])})"
        )
    for position in range(spec.min_inputs):
        if position >= len(inputs) or not inputs[position]:
            raise fail(f"input {input_names[position]!r} is required but missing")
    if not outputs or not outputs[0]:
        raise fail("output 'Y' is required but missing")

    repeated = [n for n, count in Counter(a.name for a in node.attribute).items() if count > 1]
    if repeated:
        raise fail(f"attribute {repeated[0]!r} is given more than once")
    for attr in node.attribute:
        attr_spec = spec.attrs.get(attr.name)
        if attr_spec is None:
            raise fail(
                f"attribute {attr.name!r} does not exist in this version "
                f"(it has {', '.join(spec.attrs)})"
            )
        want = PROTO_TYPE[attr_spec.kind]
        if attr.type != want:
            raise fail(
                f"attribute {attr.name!r} must be of type {_type_name(want)}, "
                f"got {_type_name(attr.type)}"
            )
    if input_rank is not None and input_rank < 3:
        raise fail(f"input {inputs[0]!r} has rank {input_rank}; pooling needs N x C x D1 x ...")
    try:
        attrs = normalize(
            spec, attribute_values(node.attribute), None if input_rank is None else input_rank - 2
        )
    except OrtpoolError as err:
        raise err.located(node=name) from None
    op_type = optypes.for_node(spec.op, spec.version, len(inputs), len(outputs))
    return CheckedNode(spec, attrs, op_type, inputs, outputs)


def _type_name(proto_type: int) -> str:
    return AttributeProto.AttributeType.Name(proto_type)
