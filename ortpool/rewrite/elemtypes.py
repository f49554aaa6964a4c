"""Element types, ranks and dims of the values a pooling node reads, learned by onnx shape
inference.

Inference runs on a light copy of the model (large initializers reduced to their type and dims, so
weights are never copied or loaded) and the results are only read: nothing inferred is written into
the rewritten model.

Model-local functions are not typed by onnx's inference, so each function body is inferred once
per distinct call signature (input types and attributes at a call site), starting from the calls in
the graphs and following calls from function to function. A value that gets different element types
from different call sites is :data:`MIXED`: one rewritten body cannot serve them all when a Cast is
involved, so the rewriter leaves such a node alone and says why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import onnx
from onnx import AttributeProto, TensorProto

from ortpool.model.scopes import (
    Scope,
    ScopeKey,
    called_function,
    function_index,
    function_label,
    graph_scopes,
    model_scopes,
    subgraphs,
)

#: Initializers at least this large are handed to inference as type + dims only.
_STUB_BYTES = 1 << 16


#: One axis of a shape: a size, a symbolic name, or None (unknown).
Dim = int | str | None


@dataclasses.dataclass(frozen=True)
class ValueType:
    """A tensor's element type (``TensorProto`` enum), rank and dims, each possibly unknown."""

    elem_type: int  # 0: unknown; -1: different types at different call sites
    rank: int | None = None
    dims: tuple[Dim, ...] | None = None  # None when the rank is unknown

    @property
    def name(self) -> str | None:
        """``"float"``, ``"float16"``, ... as the schemas spell them; None when not known."""
        if self.elem_type <= 0:
            return None
        return TensorProto.DataType.Name(self.elem_type).lower()


MIXED = ValueType(-1)


class TypeTable:
    """Types per scope; a lookup walks out through enclosing scopes, as ONNX name scoping does."""

    def __init__(self) -> None:
        self._types: dict[ScopeKey, dict[str, ValueType]] = {}
        self.notes: list[str] = []

    def record(self, key: ScopeKey, name: str, value: ValueType, *, merge: bool = False) -> None:
        types = self._types.setdefault(key, {})
        old = types.get(name)
        if old is None or not merge:
            types[name] = value
        elif old.elem_type != value.elem_type:
            types[name] = MIXED
        elif old.rank != value.rank:
            types[name] = ValueType(old.elem_type, None)
        elif old.dims != value.dims:  # another call site: keep only the dims they agree on
            pairs = zip(old.dims or (), value.dims or (), strict=False)
            dims = tuple(a if a == b else None for a, b in pairs) if old.rank else None
            types[name] = ValueType(old.elem_type, old.rank, dims)

    def lookup(self, scope: Scope | None, name: str) -> ValueType | None:
        while scope is not None:
            found = self._types.get(scope.key, {}).get(name)
            if found is not None:
                return found
            scope = scope.parent
        return None


def learn_types(model: onnx.ModelProto) -> TypeTable:
    """The type table of every scope of ``model`` (see the module docstring)."""
    table = TypeTable()
    try:
        inferred = onnx.shape_inference.infer_shapes(
            inference_copy(model), check_type=False, strict_mode=False, data_prop=False
        )
    except Exception as err:  # onnx raises several types; any failure leaves declared types only
        table.notes.append(
            f"onnx shape inference failed ({type(err).__name__}: {str(err).splitlines()[0]}); "
            "only declared types are known"
        )
        inferred = model
    _collect_graph(table, inferred.graph, ("graph",), merge=False)
    for index, function in enumerate(model.functions):
        for info in function.value_info:  # IR >= 10 may declare types inside a function
            table.record(("function", index), info.name, _value_info_type(info))
    _type_functions(table, model)
    return table


def inference_copy(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` without the bytes of its large initializers (their types and dims are enough)."""
    copy = onnx.ModelProto()
    copy.ir_version = model.ir_version
    copy.opset_import.extend(model.opset_import)
    copy.functions.extend(model.functions)
    graph, source = copy.graph, model.graph
    graph.name = source.name
    for field in ("node", "input", "output", "value_info", "sparse_initializer"):
        getattr(graph, field).extend(getattr(source, field))
    for tensor in source.initializer:
        if tensor.ByteSize() < _STUB_BYTES:
            graph.initializer.add().CopyFrom(tensor)
        else:
            graph.initializer.add(name=tensor.name, data_type=tensor.data_type, dims=tensor.dims)
    return copy


def _value_info_type(info: onnx.ValueInfoProto) -> ValueType:
    if not info.type.HasField("tensor_type"):
        return ValueType(0)
    tensor = info.type.tensor_type
    if not tensor.HasField("shape"):
        return ValueType(tensor.elem_type)
    dims = tuple(_dim(d) for d in tensor.shape.dim)
    return ValueType(tensor.elem_type, len(dims), dims)


def _dim(dim: onnx.TensorShapeProto.Dimension) -> Dim:
    # Exporters write -1 (and onnx leaves nothing) for a size known only at run time.
    if dim.HasField("dim_value"):
        return dim.dim_value if dim.dim_value >= 0 else None
    return dim.dim_param or None


def _collect_graph(table: TypeTable, graph: onnx.GraphProto, key: ScopeKey, merge: bool) -> None:
    for info in (*graph.input, *graph.output, *graph.value_info):
        value = _value_info_type(info)
        if value.elem_type:
            table.record(key, info.name, value, merge=merge)
    for tensor in graph.initializer:
        dims = tuple(int(d) for d in tensor.dims)
        table.record(key, tensor.name, ValueType(tensor.data_type, len(dims), dims), merge=merge)
    for sparse in graph.sparse_initializer:
        table.record(
            key,
            sparse.values.name,
            ValueType(sparse.values.data_type, len(sparse.dims), tuple(sparse.dims)),
            merge=merge,
        )
    for index, node in enumerate(graph.node):
        for attr_name, position, sub in subgraphs(node):
            _collect_graph(table, sub, (*key, index, attr_name, position), merge)


def _type_functions(table: TypeTable, model: onnx.ModelProto) -> None:
    """Infer each function body once per call signature, following nested calls."""
    if not model.functions:
        return
    index = function_index(model)
    pending: list[tuple[int, tuple[int, ...], tuple[AttributeProto, ...]]] = []
    for scope in model_scopes(model):
        if scope.function is None:
            pending.extend(_calls(table, scope, index))
    seen: set[tuple[int, tuple[int, ...], bytes]] = set()
    while pending:
        position, signature, attrs = pending.pop(0)
        marker = (position, signature, b"".join(a.SerializeToString() for a in attrs))
        if marker in seen:
            continue
        seen.add(marker)
        function = model.functions[position]
        probe = function_probe(model, function, signature, attrs)
        try:
            inferred = onnx.shape_inference.infer_shapes(
                probe, check_type=False, strict_mode=False, data_prop=False
            )
        except Exception as err:
            table.notes.append(
                f"types inside function {function_label(function)} could not be inferred "
                f"({type(err).__name__}: {str(err).splitlines()[0]})"
            )
            continue
        key: ScopeKey = ("function", position)
        _collect_graph(table, inferred.graph, key, merge=True)
        # Nested calls: look their input types up in this body's (merged) types.
        for scope in graph_scopes(inferred.graph, key, "", function.opset_import, None, function):
            pending.extend(_calls(table, scope, index))


def _calls(
    table: TypeTable, scope: Scope, index: dict[tuple[str, str, str], int]
) -> Iterable[tuple[int, tuple[int, ...], tuple[AttributeProto, ...]]]:
    for node in scope.nodes:
        position = called_function(node, index)
        if position is None:
            continue
        signature = []
        for name in node.input:
            found = table.lookup(scope, name) if name else None
            signature.append(found.elem_type if found is not None else 0)
        yield position, tuple(signature), tuple(node.attribute)


def function_probe(
    model: onnx.ModelProto,
    function: onnx.FunctionProto,
    signature: tuple[int, ...],
    attrs: tuple[AttributeProto, ...],
) -> onnx.ModelProto:
    """A model whose graph is ``function``'s body, inputs typed as at one call site."""
    given = {a.name: a for a in attrs}
    defaults = {a.name: a for a in function.attribute_proto}
    probe = onnx.ModelProto(ir_version=model.ir_version)
    probe.opset_import.extend(function.opset_import)
    own = {entry.domain for entry in function.opset_import}
    probe.opset_import.extend(e for e in model.opset_import if e.domain not in own)
    probe.functions.extend(model.functions)
    graph = probe.graph
    graph.name = function.name
    for position, name in enumerate(function.input):
        info = graph.input.add(name=name)
        elem = signature[position] if position < len(signature) else 0
        if elem > 0:
            info.type.tensor_type.elem_type = elem
    for name in function.output:
        graph.output.add(name=name)
    graph.value_info.extend(function.value_info)
    graph.node.extend(function.node)
    for node in graph.node:
        _bind_attributes(node, given, defaults)
    return probe


def _bind_attributes(
    node: onnx.NodeProto, given: dict[str, AttributeProto], defaults: dict[str, AttributeProto]
) -> None:
    """Replace references to function attributes by the call's values (or the defaults)."""
    kept = []
    for attr in node.attribute:
        if attr.ref_attr_name:
            source = given.get(attr.ref_attr_name) or defaults.get(attr.ref_attr_name)
            if source is None:
                continue
            bound = AttributeProto()
            bound.CopyFrom(source)
            bound.name = attr.name
            kept.append(bound)
        else:
            kept.append(attr)
    del node.attribute[:]
    node.attribute.extend(kept)
    for _, _, sub in subgraphs(node):
        for inner in sub.node:
            _bind_attributes(inner, given, defaults)
