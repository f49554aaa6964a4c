"""Static shapes of the values pooling nodes read, learned by onnx shape inference.

A form may depend on the spatial sizes of a node's input (SAME pads, ceil overhang, a divisor
correction), so ``ortpool fix`` needs them where the model fixes them. onnx infers the main
graph and its subgraphs in one pass (on a light copy: weights are never read). A model-local
function is inferred once per call from the main graph and its subgraphs, with the caller's
input types and shapes; sizes that differ between calls become symbolic (one body serves every
call). Nothing inferred is written into the fixed model.
"""

from __future__ import annotations

from collections.abc import Iterator

import onnx

from ortpool.rewrite.elemtypes import function_probe, inference_copy
from ortpool.rewrite.scopes import (
    Scope,
    ScopeKey,
    called_function,
    function_index,
    model_scopes,
    subgraphs,
)

#: A tensor's element type (TensorProto code, 0 unknown) and dims (int, or None if symbolic);
#: dims None when not even the rank is known.
TensorType = tuple[int, tuple[int | None, ...] | None]


def tensor_type(value: onnx.ValueInfoProto) -> TensorType:
    if not value.type.HasField("tensor_type"):
        return 0, None
    tensor = value.type.tensor_type
    if not tensor.HasField("shape"):
        return tensor.elem_type, None
    dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim)
    return tensor.elem_type, dims


def _merge(old: TensorType | None, new: TensorType) -> TensorType:
    """Two calls' types of one value: sizes that differ become symbolic."""
    if old is None:
        return new
    if old[0] != new[0] or old[1] is None or new[1] is None or len(old[1]) != len(new[1]):
        return (old[0] if old[0] == new[0] else 0), None
    return old[0], tuple(a if a == b else None for a, b in zip(old[1], new[1], strict=True))


class ShapeTable:
    """Types per scope; a lookup walks out through enclosing scopes (ONNX name scoping)."""

    def __init__(self) -> None:
        self._types: dict[ScopeKey, dict[str, TensorType]] = {}
        self.notes: list[str] = []

    def record(self, key: ScopeKey, name: str, value: TensorType, merge: bool = False) -> None:
        table = self._types.setdefault(key, {})
        table[name] = _merge(table.get(name), value) if merge else value

    def lookup(self, scope: Scope | None, name: str) -> TensorType | None:
        while scope is not None:
            found = self._types.get(scope.key, {}).get(name)
            if found is not None:
                return found
            scope = scope.parent
        return None


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


def _infer(model: onnx.ModelProto) -> onnx.ModelProto:
    return onnx.shape_inference.infer_shapes(
        model, check_type=False, strict_mode=False, data_prop=True
    )


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
