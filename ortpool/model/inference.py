"""Element types, ranks and dims of a model's values per scope, by onnx shape inference on a
light copy (large initializers reduced to type and dims; nothing inferred is written back): one
:class:`TypeTable` for ``rewrite`` (:func:`learn_types`) and ``fix`` (:func:`learn_shapes`).

onnx does not type local functions: a body is inferred per call (inputs typed as at the call) and
the calls merged (different element types make a value :data:`MIXED`, differing sizes unknown).
onnx sizes a pool's output as onnxruntime does, not always as the spec (VALID with ceil_mode, the
ceil drop rule before version 22): :func:`learn_shapes` cuts such a pool out (a ConstantOfShape of
the spec's size) and infers again, sizing the nodes downstream as the fixed model will.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from ortpool import versions
from ortpool.attributes import attribute_values
from ortpool.errors import OrtpoolError
from ortpool.kernels.shapes import output_shape
from ortpool.model.scopes import (
    Scope,
    ScopeKey,
    ai_onnx_opset,
    called_function,
    function_index,
    function_label,
    graph_scopes,
    is_pool,
    model_scopes,
    subgraphs,
)

#: Initializers at least this large are handed to inference as type + dims only.
_STUB_BYTES = 1 << 16

#: Rounds of inference with spec sizes cut in; each round fixes at least one more pool.
_ROUNDS = 8

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

    @property
    def static_dims(self) -> tuple[int | None, ...] | None:
        """The dims with every size not fixed (a symbol, unknown) as None; None without a rank."""
        if self.dims is None:
            return None
        return tuple(d if isinstance(d, int) else None for d in self.dims)


MIXED = ValueType(-1)


class TypeTable:
    """Types per scope; a lookup walks out through enclosing scopes, as ONNX name scoping does."""

    def __init__(self) -> None:
        self._types: dict[ScopeKey, dict[str, ValueType]] = {}
        self.notes: list[str] = []

    def record(self, key: ScopeKey, name: str, value: ValueType, *, merge: bool = False) -> None:
        """``name``'s type in scope ``key``; with ``merge``, merged with another call's."""
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


def value_type(info: onnx.ValueInfoProto) -> ValueType:
    """A declared value's type (ValueType(0) when it declares no tensor type)."""
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


def inference_copy(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` without the bytes of its large initializers, every negative declared dim made
    unknown: onnx takes Paddle2ONNX's ``[-1, 3, -1, -1]`` as sizes (a pool then sees an invented
    1x1 map), onnxruntime as unknown (issue 28)."""
    copy = onnx.ModelProto()
    copy.ir_version = model.ir_version
    copy.opset_import.extend(model.opset_import)
    copy.functions.extend(model.functions)
    graph, source = copy.graph, model.graph
    graph.name = source.name
    for field in ("node", "input", "output", "value_info", "sparse_initializer"):
        getattr(graph, field).extend(getattr(source, field))
    for info in (*graph.input, *graph.output, *graph.value_info):
        if info.type.HasField("tensor_type") and info.type.tensor_type.HasField("shape"):
            for dim in info.type.tensor_type.shape.dim:
                if dim.HasField("dim_value") and dim.dim_value < 0:
                    dim.Clear()  # unknown, as onnxruntime reads it
    for tensor in source.initializer:
        if tensor.ByteSize() < _STUB_BYTES:
            graph.initializer.add().CopyFrom(tensor)
        else:
            graph.initializer.add(name=tensor.name, data_type=tensor.data_type, dims=tensor.dims)
    return copy


def _graph_values(graph: onnx.GraphProto) -> Iterator[tuple[str, ValueType]]:
    """Every value ``graph`` itself declares (inputs, outputs, value_info, initializers)."""
    for info in (*graph.input, *graph.output, *graph.value_info):
        yield info.name, value_type(info)
    for tensor in graph.initializer:
        dims = tuple(int(d) for d in tensor.dims)
        yield tensor.name, ValueType(tensor.data_type, len(dims), dims)
    for sparse in graph.sparse_initializer:
        dims = tuple(int(d) for d in sparse.dims)
        yield sparse.values.name, ValueType(sparse.values.data_type, len(dims), dims)


def _collect(table: TypeTable, graph: onnx.GraphProto, key: ScopeKey, merge: bool,
             untyped: bool) -> None:
    """Record every value of ``graph`` and its subgraphs; ``untyped``: a value declared without
    an element type is recorded as unknown too (it hides what an outer scope knows)."""
    for name, value in _graph_values(graph):
        if value.elem_type or untyped:
            table.record(key, name, value, merge=merge)
    for index, node in enumerate(graph.node):
        for attr_name, position, sub in subgraphs(node):
            _collect(table, sub, (*key, index, attr_name, position), merge, untyped)


def _infer(model: onnx.ModelProto, data_prop: bool) -> onnx.ModelProto:
    """onnx's inference, lenient (a node it cannot type is left untyped, not an error)."""
    return onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False,
                                             data_prop=data_prop)


def _first_line(err: Exception) -> str:
    return f"{type(err).__name__}: {str(err).splitlines()[0]}"


def _learned(model: onnx.ModelProto, infer: Any, what: str, untyped: bool) -> TypeTable:
    """The main graph's values as ``infer`` types a light copy (declared ones if it fails)."""
    table = TypeTable()
    try:
        inferred = infer(inference_copy(model))
    except Exception as err:  # onnx raises several types
        table.notes.append(f"onnx shape inference failed ({_first_line(err)}); only declared "
                           f"{what} are known")
        inferred = model
    _collect(table, inferred.graph, ("graph",), merge=False, untyped=untyped)
    return table


def learn_types(model: onnx.ModelProto) -> TypeTable:
    """The types of every scope of ``model``, for the rewrite (the module docstring)."""
    table = _learned(model, lambda m: _infer(m, data_prop=False), "types", untyped=False)
    for index, function in enumerate(model.functions):
        for info in function.value_info:  # IR >= 10 may declare types inside a function
            table.record(("function", index), info.name, value_type(info))
    _type_functions(table, model)
    return table


def _type_functions(table: TypeTable, model: onnx.ModelProto) -> None:
    """Infer each function body once per call signature, following nested calls."""
    if not model.functions:
        return
    index = function_index(model)
    pending = [call for scope in model_scopes(model) if scope.function is None
               for call in _calls(table, scope, index)]
    seen: set[tuple[int, tuple[int, ...], bytes]] = set()
    while pending:
        position, node, found = pending.pop(0)
        signature = _elem_types(found)
        attrs = tuple(node.attribute)
        marker = (position, signature, b"".join(a.SerializeToString() for a in attrs))
        if marker in seen:
            continue
        seen.add(marker)
        function = model.functions[position]
        probe = function_probe(model, function, signature, attrs)
        try:
            inferred = _infer(probe, data_prop=False)
        except Exception as err:
            table.notes.append(f"types inside function {function_label(function)} could not be "
                               f"inferred ({_first_line(err)})")
            continue
        key: ScopeKey = ("function", position)
        _collect(table, inferred.graph, key, merge=True, untyped=False)
        # Nested calls: look their input types up in this body's (merged) types.
        for scope in graph_scopes(inferred.graph, key, "", function.opset_import, None, function):
            pending.extend(_calls(table, scope, index))


def _calls(
    table: TypeTable, scope: Scope, index: Mapping[tuple[str, str, str], int]
) -> Iterator[tuple[int, onnx.NodeProto, list[ValueType | None]]]:
    """Each call of a local function in ``scope``: its position, the node, its inputs' types."""
    for node in scope.nodes:
        position = called_function(node, index)
        if position is not None:
            yield position, node, [table.lookup(scope, n) if n else None for n in node.input]


def _elem_types(found: Sequence[ValueType | None]) -> tuple[int, ...]:
    return tuple(f.elem_type if f else 0 for f in found)


def function_probe(model: onnx.ModelProto, function: onnx.FunctionProto, signature: tuple[int, ...],
                   attrs: tuple[AttributeProto, ...],
                   dims: Sequence[tuple[int | None, ...] | None] = ()) -> onnx.ModelProto:
    """A model whose graph is ``function``'s body, inputs typed as at one call (element types
    ``signature``, ``dims`` where given)."""
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
    for info, sizes in zip(graph.input, dims, strict=False):
        if sizes is not None:
            shape = info.type.tensor_type.shape
            for size in sizes:
                dim = shape.dim.add()
                if size is not None:
                    dim.dim_value = size
    for name in function.output:
        graph.output.add(name=name)
    graph.value_info.extend(function.value_info)
    graph.node.extend(function.node)
    for node in graph.node:
        _bind_attributes(node, given, defaults)
    return probe


def _bind_attributes(node: onnx.NodeProto, given: dict[str, AttributeProto],
                     defaults: dict[str, AttributeProto]) -> None:
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


def spec_output_dims(node: onnx.NodeProto, opset: int | None, x: ValueType | None,
                     rois: ValueType | None = None) -> tuple[int, ...] | None:
    """The spec's size of a pooling node's Y for X's static dims (None when not computable)."""
    dims, rois_shape = _static(x), _static(rois) if node.op_type == "MaxRoiPool" else None
    if dims is None or opset is None or (node.op_type == "MaxRoiPool" and rois_shape is None) or (
            node.op_type == "MaxUnpool" and len([i for i in node.input if i]) > 2):
        return None
    try:
        spec = versions.resolve(node.op_type, opset)
        return output_shape(spec.op, spec.version, dims, attribute_values(node.attribute),
                            rois_shape=rois_shape)
    except (OrtpoolError, ValueError):
        return None


def _static(value: ValueType | None) -> tuple[int, ...] | None:
    """``value``'s dims when every one is a static size."""
    dims = value.static_dims if value is not None else None
    return None if dims is None or None in dims else tuple(int(d) for d in dims)  # type: ignore


def _cut(graph: onnx.GraphProto, inferred: onnx.GraphProto, opset: int | None,
         outer: Mapping[str, ValueType]) -> bool:
    """Replace in ``graph`` each pool whose inferred size (``inferred``: ``graph`` inferred) is
    not the spec's by a ConstantOfShape of the spec's size; whether any was."""
    known = dict(outer)
    known.update(_graph_values(inferred))
    changed = False
    for index, (node, seen) in enumerate(zip(graph.node, inferred.node, strict=True)):
        for (_, _, sub), (_, _, seen_sub) in zip(subgraphs(node), subgraphs(seen), strict=True):
            changed |= _cut(sub, seen_sub, opset, known)
        if not is_pool(node):
            continue
        x = known.get(node.input[0]) if node.input else None
        rois = known.get(node.input[1]) if len(node.input) > 1 else None
        want = spec_output_dims(node, opset, x, rois)
        if want is None or x is None or not node.output:
            continue
        got = known.get(node.output[0])
        if got is not None and got.static_dims == want:
            continue
        shape = f"{node.output[0]}__spec_shape"
        graph.initializer.append(numpy_helper.from_array(np.asarray(want, np.int64), shape))
        fill = onnx.TensorProto(data_type=x.elem_type, dims=[1], name="value")
        fill.raw_data = np.zeros(1, helper.tensor_dtype_to_np_dtype(x.elem_type)).tobytes()
        cut = helper.make_node("ConstantOfShape", [shape], [node.output[0]], value=fill)
        graph.node[index].CopyFrom(cut)
        changed = True
    return changed


def _infer_spec_sizes(model: onnx.ModelProto) -> onnx.ModelProto:
    """Inference with the spec's pool sizes cut in (``model``, a copy, is edited)."""
    opset = ai_onnx_opset(model.opset_import)
    inferred = _infer(model, data_prop=True)
    for _ in range(_ROUNDS):
        if opset is None or opset < 9 or not _cut(model.graph, inferred.graph, opset, {}):
            break
        inferred = _infer(model, data_prop=True)
    return inferred


def learn_shapes(model: onnx.ModelProto) -> TypeTable:
    """Types and static shapes of every scope of ``model``, the spec's pool sizes cut in, for the
    fix (the module docstring)."""
    table = _learned(model, _infer_spec_sizes, "shapes", untyped=True)
    _shape_functions(table, model)
    return table


def _shape_functions(table: TypeTable, model: onnx.ModelProto) -> None:
    """Infer each function body once per call site in the graphs, merging the sizes; a body
    another function calls, once per element types at those calls, its sizes unknown."""
    index = function_index(model)
    pending = [(call, True) for scope in model_scopes(model) if scope.function is None
               for call in _calls(table, scope, index)]
    seen: set[tuple[int, tuple[int, ...], bytes]] = set()
    while pending:
        (position, node, callers), sized = pending.pop(0)
        function = model.functions[position]
        signature = _elem_types(callers)
        if not sized:  # the sizes stay unknown: once per element types and attributes
            marker = (position, signature, b"".join(a.SerializeToString() for a in node.attribute))
            if marker in seen:
                continue
            seen.add(marker)
        dims = [c.static_dims if c else None for c in callers] if sized else []
        probe = function_probe(model, function, signature, tuple(node.attribute), dims)
        try:
            inferred = _infer_spec_sizes(probe)
        except Exception as err:
            table.notes.append(f"shapes inside function {function.name!r} could not be "
                               f"inferred ({type(err).__name__})")
            continue
        key: ScopeKey = ("function", position)
        _collect(table, inferred.graph, key, merge=True, untyped=True)
        for scope in graph_scopes(inferred.graph, key, "", function.opset_import, None, function):
            pending.extend((call, False) for call in _calls(table, scope, index))
