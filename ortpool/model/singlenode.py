"""One pooling node alone, as a model: the built-in node at its opset, stamped with the IR
version every supported onnxruntime reads.

:func:`node_model` is the one builder of the small models ortpool makes (the isolated node here,
a benchmark case, a fix's proof model, the batch's warm-up model, the runtime's IR probe): a
graph of a few nodes, its opset imports, and the IR stamp of :func:`ir_version_for`.

The isolated node is rebuilt from scratch: the built-in model keeps the node's own attributes at
the governing opset (its ortpool twin, that model passed through the rewriter, is
:func:`ortpool.validate.isolate.ortpool_model`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper

from ortpool import dtypes, versions
from ortpool.attributes import PoolAttrs, attribute_values, normalize
from ortpool.versions import OpVersion

#: The IR version of every model ortpool builds. onnxruntime 1.21 and 1.22, the oldest releases
#: ortpool supports, read IR 10 at most (1.23 reads 11, 1.24 to 1.31 read 13, 1.32 reads 14;
#: measured), so one stamp suits the whole range and no model depends on which runtime is
#: installed. IR 10 also covers every opset up to 22, the newest with a pooling version.
IR_VERSION = 10

INPUT_NAMES = ("X", "I", "output_shape")


def ir_version_for(opset: int) -> int:
    """The IR version of a model ortpool builds at ai.onnx ``opset``: :data:`IR_VERSION`, or 3
    below opset 7 (the models of those opsets' time; onnxruntime loads them as such)."""
    return IR_VERSION if opset >= 7 else 3


def node_model(
    nodes: Sequence[onnx.NodeProto],
    name: str,
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[onnx.ValueInfoProto],
    imports: Sequence[onnx.OperatorSetIdProto],
    *,
    ir_version: int | None = None,
    producer_name: str | None = None,
) -> onnx.ModelProto:
    """A model whose graph ``name`` is ``nodes``, stamped with ``ir_version`` or else
    :func:`ir_version_for` the ai.onnx opset in ``imports`` (:data:`IR_VERSION` without one).

    Example: ``node_model([relu], "g", [x], [y], [make_opsetid("", 6)]).ir_version == 3``.
    """
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs))
    extra = {} if producer_name is None else {"producer_name": producer_name}
    model = helper.make_model(graph, opset_imports=list(imports), **extra)
    if ir_version is None:
        opsets = [e.version for e in imports if e.domain in ("", "ai.onnx")]
        ir_version = ir_version_for(opsets[0]) if opsets else IR_VERSION
    model.ir_version = ir_version
    return model


def attribute_dict(attributes: Sequence[onnx.AttributeProto]) -> dict[str, Any]:
    """A node's attributes as plain Python values (strings decoded, lists as lists of ints)."""
    return {
        name: [int(v) for v in value] if isinstance(value, list | tuple) else value
        for name, value in attribute_values(attributes).items()
    }


@dataclasses.dataclass(frozen=True)
class NodeSpec:
    """What defines an isolated node: operator, governing opset, attributes, arity."""

    op: str
    opset: int
    attributes: Mapping[str, Any]
    n_inputs: int
    n_outputs: int

    @property
    def spec(self) -> OpVersion:
        return versions.resolve(self.op, self.opset)

    def pool_attrs(self, rank: int) -> PoolAttrs:
        return normalize(self.spec, self.attributes, rank)


def _value(name: str, dtype: str, shape: Sequence[int] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(
        name, dtypes.CODE[dtype], None if shape is None else list(shape)
    )


def _io(spec: NodeSpec, feeds: Sequence[np.ndarray]) -> tuple[list, list, str]:
    dtype = dtypes.name_of(feeds[0].dtype)
    inputs = [_value(INPUT_NAMES[i], dtypes.name_of(a.dtype), a.shape) for i, a in enumerate(feeds)]
    outputs = [_value("Y", dtype, None)]
    if spec.n_outputs > 1:
        outputs.append(_value("Indices", "int64", None))
    return inputs, outputs, dtype


def builtin_model(spec: NodeSpec, feeds: Sequence[np.ndarray]) -> onnx.ModelProto:
    """The node as onnxruntime sees it: the standard op at ``spec.opset``."""
    inputs, outputs, _ = _io(spec, feeds)
    node = helper.make_node(
        spec.op,
        [v.name for v in inputs],
        [v.name for v in outputs],
        name="node",
        **dict(spec.attributes),
    )
    return node_model([node], "isolated", inputs, outputs, [helper.make_opsetid("", spec.opset)])


def feed_dict(feeds: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    return {INPUT_NAMES[i]: a for i, a in enumerate(feeds)}
