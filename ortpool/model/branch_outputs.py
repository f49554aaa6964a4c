"""Declared shapes of subgraph outputs that an ortpool op produces: set aside, and put back.

onnxruntime allocates a control-flow output ahead when the branch declares a static shape, and a
custom op (not shape-inferred) producing another shape ends the process (a wrong declaration, a
failed op's placeholder); views (Identity, Reshape...) of its output count too. So the sizes are
kept in the output's ``metadata_props`` (:data:`KEY`, ``"1,64,56,56"``) and its dims made symbolic
(``"Y:0"``...; Scan needs the rank); :func:`put_back` restores them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import onnx

from ortpool import optypes
from ortpool.attributes import decode_ints, encode_ints
from ortpool.model.scopes import is_standard, model_scopes

KEY = "ortpool.declared_shape"
#: Standard ops whose output onnxruntime may place in their input's buffer.
VIEWS = frozenset({"Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten"})


def model_subgraphs(model: onnx.ModelProto) -> list[onnx.GraphProto]:
    """Every graph a node attribute holds, at any depth, in the main graph and functions."""
    return [scope.holder for scope in model_scopes(model) if scope.key != scope.owner_key]


def ortpool_values(graph: onnx.GraphProto) -> set[str]:
    """Values of ``graph`` an ortpool op writes: its outputs, and views of them."""
    written: set[str] = set()
    for node in graph.node:
        if node.domain == optypes.DOMAIN:
            written.update(node.output)
        elif is_standard(node) and node.op_type in VIEWS and node.input[:1] and (
            node.input[0] in written
        ):
            written.update(node.output[:1])
    return written


def static_dims(value: onnx.ValueInfoProto) -> tuple[int, ...] | None:
    tensor = value.type.tensor_type
    if not value.type.HasField("tensor_type") or not tensor.HasField("shape"):
        return None
    dims = tensor.shape.dim
    if all(d.HasField("dim_value") for d in dims):
        return tuple(d.dim_value for d in dims)
    return None


def _metadata(value: onnx.ValueInfoProto) -> str | None:
    return next((entry.value for entry in value.metadata_props if entry.key == KEY), None)


def pending(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The subgraph outputs an ortpool op writes that still declare a static shape."""
    found = []
    for graph in model_subgraphs(model):
        written = ortpool_values(graph)
        found += [value for value in graph.output
                  if value.name in written and static_dims(value) is not None
                  and _metadata(value) is None]
    return found


def redeclare(model: onnx.ModelProto, sizes: Mapping[str, Sequence[int]]) -> list[str]:
    """Declare the subgraph outputs named in ``sizes`` with those sizes, in place, their
    declared shape kept as :func:`set_aside` keeps it; their names. For ``ortpool fix``: a node
    it rewrote computes the spec's size where the branch declared another, and onnxruntime
    allocates by the declaration and refuses the result (``OutputMLValue ... INVALID_ARGUMENT``).
    """
    done = []
    for graph in model_subgraphs(model):
        for value in graph.output:
            if value.name not in sizes or static_dims(value) is None or _metadata(value):
                continue
            dims = value.type.tensor_type.shape.dim
            if len(dims) != len(sizes[value.name]):
                continue
            value.metadata_props.add(key=KEY, value=encode_ints([d.dim_value for d in dims]))
            for dim, size in zip(dims, sizes[value.name], strict=True):
                dim.dim_value = int(size)
            done.append(value.name)
    return done


def set_aside(model: onnx.ModelProto) -> list[str]:
    """Move the static shape of every subgraph output an ortpool op writes into its metadata (in
    place); their names."""
    moved = []
    for value in pending(model):
        dims = value.type.tensor_type.shape.dim
        value.metadata_props.add(key=KEY, value=encode_ints([d.dim_value for d in dims]))
        # Symbolic dims, not no shape: Scan refuses a body output without a rank.
        for axis, dim in enumerate(dims):
            dim.dim_param = f"{value.name}:{axis}"
        moved.append(value.name)
    return moved


def put_back(model: onnx.ModelProto) -> list[str]:
    """Restore the shapes :func:`set_aside` moved where no ortpool op writes the value any more
    (in place); their names."""
    restored = []
    for graph in model_subgraphs(model):
        written = ortpool_values(graph)
        for value in graph.output:
            text = _metadata(value)
            if text is None or value.name in written:
                continue
            dims = value.type.tensor_type.shape.dim
            sizes = decode_ints(text, KEY)
            if len(sizes) != len(dims):  # edited since: the declaration no longer applies
                continue
            for dim, size in zip(dims, sizes, strict=True):
                dim.dim_value = size
            kept = [e for e in value.metadata_props if e.key != KEY]
            del value.metadata_props[:]
            value.metadata_props.extend(kept)
            restored.append(value.name)
    return restored
