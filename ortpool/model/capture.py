"""Finding a model's pooling nodes and capturing the real inputs each one receives.

The inputs are captured from a run of the model itself: a copy whose graph also outputs every
pooling node's inputs. Nodes inside local functions are captured after inlining the functions
(their inputs then exist as main-graph tensors). Nodes inside control-flow subgraphs (If, Loop,
Scan bodies) receive a different tensor on every iteration and cannot be pinned to one input:
they are listed as not isolated, and the end-to-end comparison still covers them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import onnx
from onnx import numpy_helper

from ortpool.model.scopes import AI_ONNX, is_pool


@dataclasses.dataclass(frozen=True)
class PoolingNode:
    """A standard pooling node of a model, with where it lives."""

    node: onnx.NodeProto
    name: str
    location: str  # "main graph", "function F (inlined)", "subgraph of node 'loop' (Loop)"
    isolatable: bool

    @property
    def inputs(self) -> list[str]:
        """The node's non-empty inputs (an absent optional input is written "")."""
        return [name for name in self.node.input if name]


def governing_opset(model: onnx.ModelProto) -> int:
    """The model's ai.onnx opset: it decides which spec version each node is."""
    for entry in model.opset_import:
        if entry.domain in AI_ONNX:
            return int(entry.version)
    raise ValueError("the model imports no ai.onnx opset")


def _subgraph_nodes(node: onnx.NodeProto) -> list[tuple[str, onnx.NodeProto]]:
    found = []
    for attr in node.attribute:
        graphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
        for graph in graphs:
            for inner in graph.node:
                found.append((attr.name, inner))
                found.extend(_subgraph_nodes(inner))
    return found


def inline_functions(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with its local functions inlined (unchanged if it has none)."""
    if not model.functions:
        return model
    import onnx.inliner

    return onnx.inliner.inline_local_functions(model)


def pooling_nodes(model: onnx.ModelProto) -> list[PoolingNode]:
    """Every standard pooling node: main graph, inlined functions, control-flow subgraphs.

    ``model`` should already have its functions inlined (:func:`inline_functions`); nodes that
    came from a function carry the function's name in their location when it can be told.
    """
    found: list[PoolingNode] = []
    seen: dict[str, int] = {}

    def unique(node: onnx.NodeProto) -> str:
        base = node.name or f"{node.op_type}({node.output[0] if node.output else '?'})"
        seen[base] = seen.get(base, 0) + 1
        return base if seen[base] == 1 else f"{base}#{seen[base]}"

    for node in model.graph.node:
        if is_pool(node):
            found.append(PoolingNode(node, unique(node), "main graph", True))
        for attr_name, inner in _subgraph_nodes(node):
            if is_pool(inner):
                where = (
                    f"subgraph {attr_name} of node {node.name or node.op_type!r} ({node.op_type})"
                )
                found.append(PoolingNode(inner, unique(inner), where, False))
    return found


def capture_model(model: onnx.ModelProto, tensors: Sequence[str]) -> onnx.ModelProto:
    """A copy of ``model`` that also outputs ``tensors`` (no types needed: onnxruntime infers)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    existing = {o.name for o in copy.graph.output}
    for name in tensors:
        if name not in existing:
            copy.graph.output.append(onnx.ValueInfoProto(name=name))
            existing.add(name)
    return copy


def capture(
    model: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    nodes: Sequence[PoolingNode],
    run: Callable[[onnx.ModelProto, Mapping[str, np.ndarray]], list[np.ndarray]],
) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """Run ``model`` once with every isolatable node's inputs as extra outputs.

    Returns (tensor name -> array, the model's own outputs). Initializers are read directly.
    """
    initializers = {init.name: init for init in model.graph.initializer}
    captured: dict[str, np.ndarray] = {}
    wanted: list[str] = []
    for pooling in nodes:
        if not pooling.isolatable:
            continue
        for name in pooling.inputs:
            if name in feeds:
                captured[name] = np.asarray(feeds[name])
            elif name in initializers:
                captured[name] = numpy_helper.to_array(initializers[name])
            elif name not in wanted:
                wanted.append(name)
    n_outputs = len(model.graph.output)
    extra = [name for name in wanted if name not in {o.name for o in model.graph.output}]
    arrays = run(capture_model(model, extra), feeds)
    outputs = arrays[:n_outputs]
    by_name = {o.name: a for o, a in zip(model.graph.output, outputs, strict=True)}
    by_name.update(dict(zip(extra, arrays[n_outputs:], strict=True)))
    for name in wanted:
        captured[name] = by_name[name]
    return captured, outputs
