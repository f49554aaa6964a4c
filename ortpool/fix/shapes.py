"""Static shapes of the values pooling nodes read, learned by onnx shape inference.

A form may depend on the spatial sizes of a node's input (SAME pads, ceil overhang, a divisor
correction), so ``ortpool fix`` needs them where the model fixes them. onnx infers the main
graph and its subgraphs in one pass (on a light copy: weights are never read). A model-local
function is inferred once per call from the main graph and its subgraphs, with the caller's
input types and shapes; sizes that differ between calls become symbolic (one body serves every
call). Nothing inferred is written into the fixed model.

onnx's inference sizes a pool's output as onnxruntime does, not always as the spec does (VALID
with ceil_mode, the ceil drop rule before version 22), and a fixed model computes the spec's
sizes. So wherever a pool's spec size (:mod:`ortpool.geometry`) differs from the inferred one,
the inference copy gets a ``ConstantOfShape`` of the spec's size in its place and inference runs
again: the nodes downstream are then sized as the fixed model will size them.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ortpool import versions
from ortpool.attributes import attribute_values
from ortpool.errors import OrtpoolError
from ortpool.kernels.shapes import output_shape
from ortpool.model.scopes import (
    AI_ONNX,
    ScopeKey,
    ai_onnx_opset,
    called_function,
    function_index,
    model_scopes,
    subgraphs,
)
from ortpool.rewrite.elemtypes import TypeTable, function_probe, inference_copy

#: Rounds of inference with spec sizes cut in; each round fixes at least one more pool.
_ROUNDS = 8

#: A tensor's element type (TensorProto code, 0 unknown) and dims (int, or None if symbolic);
#: dims None when not even the rank is known.
TensorType = tuple[int, tuple[int | None, ...] | None]


def tensor_type(value: onnx.ValueInfoProto) -> TensorType:
    if not value.type.HasField("tensor_type"):
        return 0, None
    tensor = value.type.tensor_type
    if not tensor.HasField("shape"):
        return tensor.elem_type, None
    # A negative size (exporters write -1 for "any") is as open as a symbol, as onnxruntime
    # reads it.
    dims = tuple(
        d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None
        for d in tensor.shape.dim
    )
    return tensor.elem_type, dims


def _merge(old: TensorType | None, new: TensorType) -> TensorType:
    """Two calls' types of one value: sizes that differ become symbolic."""
    if old is None:
        return new
    if old[0] != new[0] or old[1] is None or new[1] is None or len(old[1]) != len(new[1]):
        return (old[0] if old[0] == new[0] else 0), None
    return old[0], tuple(a if a == b else None for a, b in zip(old[1], new[1], strict=True))


class ShapeTable(TypeTable):
    """Element types and dims per scope; a lookup walks out through enclosing scopes (ONNX
    name scoping), as the rewriter's :class:`~ortpool.rewrite.elemtypes.TypeTable` does."""

    def record(  # type: ignore[override]
        self, key: ScopeKey, name: str, value: TensorType, merge: bool = False
    ) -> None:
        table = self._types.setdefault(key, {})
        table[name] = _merge(table.get(name), value) if merge else value  # type: ignore[arg-type]


def _graph_values(graph: onnx.GraphProto) -> Iterator[tuple[str, TensorType]]:
    for info in (*graph.input, *graph.output, *graph.value_info):
        yield info.name, tensor_type(info)
    for tensor in graph.initializer:
        yield tensor.name, (tensor.data_type, tuple(tensor.dims))


def _collect(table: ShapeTable, graph: onnx.GraphProto, key: ScopeKey, merge: bool) -> None:
    for name, value in _graph_values(graph):
        table.record(key, name, value, merge)
    for index, node in enumerate(graph.node):
        for attr_name, position, sub in subgraphs(node):
            _collect(table, sub, (*key, index, attr_name, position), merge)


def _infer_once(model: onnx.ModelProto) -> onnx.ModelProto:
    return onnx.shape_inference.infer_shapes(
        model, check_type=False, strict_mode=False, data_prop=True
    )


def spec_output_dims(
    node: onnx.NodeProto,
    opset: int | None,
    x: TensorType | None,
    rois: TensorType | None = None,
) -> tuple[int, ...] | None:
    """The spec's size of a pooling node's Y for X's static dims (None when not computable).

    Example: AveragePool k=3, s=2, VALID, ceil_mode=1 on (1, 8, 16, 16): (1, 8, 7, 7), where
    onnx (like onnxruntime) infers 8x8.
    """
    if x is None or x[1] is None or opset is None or any(d is None for d in x[1]):
        return None
    dims = tuple(int(d) for d in x[1])  # type: ignore[arg-type]
    try:
        spec = versions.resolve(node.op_type, opset)
        if node.op_type == "MaxUnpool" and len([i for i in node.input if i]) > 2:
            return None
        rois_shape = None
        if node.op_type == "MaxRoiPool":
            if rois is None or rois[1] is None or any(d is None for d in rois[1]):
                return None
            rois_shape = [int(d) for d in rois[1]]  # type: ignore[arg-type]
        return output_shape(
            spec.op, spec.version, dims, attribute_values(node.attribute), rois_shape=rois_shape
        )
    except (OrtpoolError, ValueError):
        return None


def _cut(graph: onnx.GraphProto, inferred: onnx.GraphProto, opset: int | None, outer) -> bool:
    """Replace, in ``graph``, each pool whose inferred output size is not the spec's by a
    ConstantOfShape of the spec's size (``inferred`` is the same graph after inference)."""
    known = dict(outer)
    known.update(_graph_values(inferred))
    changed = False
    for index, (node, seen) in enumerate(zip(graph.node, inferred.node, strict=True)):
        for (_, _, sub), (_, _, seen_sub) in zip(subgraphs(node), subgraphs(seen), strict=True):
            changed |= _cut(sub, seen_sub, opset, known)
        if node.domain not in AI_ONNX or node.op_type not in versions.OPERATORS:
            continue
        x = known.get(node.input[0]) if node.input else None
        rois = known.get(node.input[1]) if len(node.input) > 1 else None
        want = spec_output_dims(node, opset, x, rois)
        if want is None or x is None or not node.output:
            continue
        got = known.get(node.output[0])
        if got is not None and got[1] == want:
            continue
        shape = f"{node.output[0]}__spec_shape"
        graph.initializer.append(numpy_helper.from_array(np.asarray(want, np.int64), shape))
        fill = onnx.TensorProto(data_type=x[0], dims=[1], name="value")
        fill.raw_data = np.zeros(1, np.dtype(helper.tensor_dtype_to_np_dtype(x[0]))).tobytes()
        cut = helper.make_node("ConstantOfShape", [shape], [node.output[0]], value=fill)
        graph.node[index].CopyFrom(cut)
        changed = True
    return changed


def _infer(model: onnx.ModelProto) -> onnx.ModelProto:
    """Inference with the spec's pool sizes cut in (see the module docstring); ``model`` is a
    copy that may be edited."""
    opset = ai_onnx_opset(model.opset_import)
    inferred = _infer_once(model)
    for _ in range(_ROUNDS):
        if opset is None or opset < 9 or not _cut(model.graph, inferred.graph, opset, {}):
            break
        inferred = _infer_once(model)
    return inferred


def learn_shapes(model: onnx.ModelProto) -> ShapeTable:
    """Types and static shapes of every scope of ``model`` (see the module docstring)."""
    table = ShapeTable()
    try:
        inferred = _infer(inference_copy(model))
    except Exception as err:  # onnx raises several types; declared shapes only, then
        table.notes.append(
            f"onnx shape inference failed ({type(err).__name__}: {str(err).splitlines()[0]}); "
            "only declared shapes are known"
        )
        inferred = model
    _collect(table, inferred.graph, ("graph",), merge=False)
    _functions(table, model)
    return table


def _functions(table: ShapeTable, model: onnx.ModelProto) -> None:
    """Infer each function body once per call site in the graphs, merging the sizes."""
    index = function_index(model)
    for scope in model_scopes(model):
        if scope.function is not None:
            continue  # calls from function to function: their sizes stay unknown
        for node in scope.nodes:
            position = called_function(node, index)
            if position is None:
                continue
            function = model.functions[position]
            callers = [table.lookup(scope, name) if name else None for name in node.input]
            signature = tuple(c[0] if c else 0 for c in callers)
            probe = function_probe(model, function, signature, tuple(node.attribute))
            for value, caller in zip(probe.graph.input, callers, strict=False):
                dims = caller[1] if caller else None
                if dims is not None:
                    shape = value.type.tensor_type.shape
                    for size in dims:
                        dim = shape.dim.add()
                        if size is not None:
                            dim.dim_value = size
            try:
                inferred = _infer(probe)
            except Exception as err:
                table.notes.append(
                    f"shapes inside function {function.name!r} could not be inferred "
                    f"({type(err).__name__})"
                )
                continue
            _collect(table, inferred.graph, ("function", position), merge=True)
