"""The small models ortpool makes, stamped with the IR version every supported onnxruntime
reads: :func:`node_model` builds each; :func:`alone_model` is a site's node alone at its
governing opset, as the engine judges it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import helper

from ortpool import dtypes
from ortpool.model.scopes import ai_onnx_opset
from ortpool.model.site import INPUT_NAMES, Site

#: The IR version of every model ortpool builds. onnxruntime 1.21 and 1.22, the oldest releases
#: ortpool supports, read IR 10 at most (1.23 reads 11, 1.24 to 1.31 read 13, 1.32 reads 14;
#: measured), so one stamp suits the whole range and no model depends on which runtime is
#: installed. IR 10 also covers every opset up to 22, the newest with a pooling version.
IR_VERSION = 10


def ir_version_for(opset: int) -> int:
    """The IR version of a model ortpool builds at ai.onnx ``opset``: :data:`IR_VERSION`, or 3
    below opset 7 (the models of those opsets' time; onnxruntime loads them as such)."""
    return IR_VERSION if opset >= 7 else 3


def node_model(nodes: Sequence[onnx.NodeProto], name: str, inputs: Sequence[onnx.ValueInfoProto],
               outputs: Sequence[onnx.ValueInfoProto], imports: Sequence[onnx.OperatorSetIdProto],
               *, ir_version: int | None = None,
               producer_name: str | None = None) -> onnx.ModelProto:
    """A model whose graph ``name`` is ``nodes``, stamped with ``ir_version``, else
    :func:`ir_version_for` the ai.onnx opset in ``imports`` (:data:`IR_VERSION` without one)."""
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs))
    extra = {} if producer_name is None else {"producer_name": producer_name}
    model = helper.make_model(graph, opset_imports=list(imports), **extra)
    if ir_version is None:
        opset = ai_onnx_opset(imports)
        ir_version = IR_VERSION if opset is None else ir_version_for(opset)
    model.ir_version = ir_version
    return model


def value_info(name: str, array: np.ndarray) -> onnx.ValueInfoProto:
    """A graph input typed and shaped as ``array``."""
    code = dtypes.CODE[dtypes.name_of(array.dtype)]
    return helper.make_tensor_value_info(name, code, array.shape)


def frame(site: Site, example: Sequence[np.ndarray],
          with_indices: bool) -> tuple[list[onnx.ValueInfoProto], list[onnx.ValueInfoProto]]:
    """The inputs (X, I, output_shape) shaped as ``example`` and outputs (Y, Indices
    ``with_indices``) of a model of ``site`` alone."""
    inputs = [value_info(INPUT_NAMES[i], a) for i, a in enumerate(example)]
    elem = site.elem or dtypes.name_of(example[0].dtype)
    outputs = [helper.make_tensor_value_info("Y", dtypes.CODE[elem], None)]
    if with_indices:
        outputs.append(helper.make_tensor_value_info("Indices", onnx.TensorProto.INT64, None))
    return inputs, outputs


def alone_model(site: Site, example: Sequence[np.ndarray]) -> onnx.ModelProto:
    """The node of ``site`` as it stands alone, at its governing opset, its inputs shaped as
    ``example``."""
    node = site.node
    inputs, outputs = frame(site, example, len(site.outputs) > 1)
    wired = rewired(node, [v.name for v in inputs], [v.name for v in outputs])
    imports = [helper.make_opsetid(node.domain or "", site.opset)]
    return node_model([wired], "ortpool_check", inputs, outputs, imports)


def rewired(node: onnx.NodeProto, inputs: Sequence[str], outputs: Sequence[str]
            ) -> onnx.NodeProto:
    """A copy of ``node`` (its attributes, name, domain) reading ``inputs``, writing ``outputs``."""
    wired = onnx.NodeProto()
    wired.CopyFrom(node)
    wired.input[:] = inputs
    wired.output[:] = outputs
    return wired


def feed_dict(arrays: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """The arrays of a model of one node alone, by its input names."""
    return {INPUT_NAMES[i]: a for i, a in enumerate(arrays)}


def region_model(model: onnx.ModelProto, inputs: Sequence[str], outputs: Sequence[str],
                 example: Sequence[np.ndarray],
                 holder: onnx.GraphProto | onnx.FunctionProto | None = None) -> onnx.ModelProto:
    """The nodes of ``holder`` (default the main graph; a subgraph, a function body) that
    compute ``outputs`` from ``inputs`` (a fix's realization) as written, with the initializers
    they read; ``inputs`` shaped as ``example``."""
    graph = model.graph if holder is None else holder
    producer = {name: node for node in graph.node for name in node.output if name}
    initializers = {t.name: t for t in model.graph.initializer}
    initializers.update({t.name: t for t in getattr(graph, "initializer", ())})
    wanted, seen, order = list(outputs), set(inputs), []
    while wanted:
        name = wanted.pop()
        if name in seen or name in initializers or name not in producer:
            continue
        seen.add(name)
        node = producer[name]
        if node not in order:
            order.append(node)
            wanted += [n for n in node.input if n]
            for attr in node.attribute:  # a subgraph's outer-scope reads
                for sub in [attr.g, *attr.graphs]:
                    wanted += [n for inner in sub.node for n in inner.input if n]
    nodes = sorted(order, key=lambda n: list(graph.node).index(n))
    used = {n for node in nodes for n in node.input}
    values = [value_info(name, a) for name, a in zip(inputs, example, strict=True)]
    outs = [onnx.ValueInfoProto(name=name) for name in outputs]  # untyped: onnxruntime infers
    kept = [initializers[n] for n in initializers if n in used and n not in inputs]
    region = helper.make_graph(nodes, "ortpool_fix_region", values, outs, kept)
    imports = holder.opset_import if isinstance(holder, onnx.FunctionProto) else (
        model.opset_import)
    out = helper.make_model(region, opset_imports=list(imports), functions=list(model.functions))
    out.ir_version = model.ir_version
    return out
