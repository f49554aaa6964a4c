"""Declared types of ortpool op outputs: written by a rewrite, removed by a restore.

onnxruntime infers nothing about a custom op's outputs, and a provider that compiles the graph
refuses an output of unknown rank (OpenVINO). So a rewrite declares them, with a static size only
where certain (OpenVINO trusts it): in the main graph; elsewhere the rank only. Each declaration
carries :data:`MARK`, which :func:`remove` drops, so ``restore(rewrite(m))`` gives ``m`` back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import onnx
from onnx import TensorProto, numpy_helper

from ortpool import optypes
from ortpool.attributes import attribute_values
from ortpool.errors import OrtpoolError
from ortpool.kernels.shapes import output_shape
from ortpool.model.inference import Dim, TypeTable
from ortpool.model.scopes import Scope, model_scopes
from ortpool.rewrite.retarget import is_inserted_cast
from ortpool.versions import GLOBAL_OPERATORS

#: The doc string of every value_info entry a rewrite writes; a restore removes those entries.
MARK = "ortpool-shape: declared by 'ortpool rewrite'; 'ortpool restore' removes it"


def declare(model: onnx.ModelProto, types: TypeTable) -> list[str]:
    """Declare the outputs of every ortpool node nothing declares yet; returns their names."""
    declared: list[str] = []
    tainted = _tainted(model)
    for scope in model_scopes(model):
        holder = scope.holder
        if holder is None or (scope.function is not None and model.ir_version < 10):
            continue  # a FunctionProto has value_info from IR 10 on
        known = _declared_names(holder)
        static = scope.key == ("graph",)
        # Sizes this pass computed, so a pool reading another pool's output sees spec sizes.
        computed: dict[str, tuple[Dim, ...]] = {}
        for node in scope.nodes:
            if _calls_ortpool(node, tainted):
                for name in node.output:
                    kind = types.lookup(scope, name) if name else None
                    if (name not in known and kind is not None and kind.elem_type > 0
                            and kind.rank is not None):
                        fresh = [f"{name}:{axis}" for axis in range(kind.rank)]
                        declared.append(_append(holder, known, name, kind.elem_type, fresh))
                continue
            if node.domain != optypes.DOMAIN:
                continue
            try:
                outputs = _output_types(node, scope, types, computed, static)
            except (OrtpoolError, ValueError):
                continue  # not an op type ortpool knows: restore or the session will say so
            for name, (elem, dims) in zip(node.output, outputs, strict=False):
                computed[name] = dims
                if name and name not in known and elem is not None and dims is not None:
                    declared.append(_append(holder, known, name, elem, list(dims)))
    return declared


def _append(holder, known: set[str], name: str, elem: int, dims: list) -> str:
    info = onnx.helper.make_tensor_value_info(name, elem, dims)
    info.doc_string = MARK
    holder.value_info.append(info)
    known.add(name)
    return name


def _tainted(model: onnx.ModelProto) -> set[tuple[str, str, str]]:
    """The local functions whose body (called functions included) holds an ortpool node: the
    calls' outputs must be declared, onnxruntime infers nothing through an ortpool op."""
    scopes = model_scopes(model)
    bodies = {(f.domain, f.name, f.overload): [n for s in scopes if s.key[:2] == ("function", i)
                                               for n in s.nodes]
              for i, f in enumerate(model.functions)}
    tainted: set[tuple[str, str, str]] = set()
    changed = True
    while changed:
        changed = False
        for key, nodes in bodies.items():
            if key not in tainted and any(_calls_ortpool(n, tainted) or n.domain == optypes.DOMAIN
                                          for n in nodes):
                tainted.add(key)
                changed = True
    return tainted


def _calls_ortpool(node: onnx.NodeProto, tainted: set[tuple[str, str, str]]) -> bool:
    return (node.domain, node.op_type, node.overload) in tainted


def remove(model: onnx.ModelProto) -> list[str]:
    """Drop the declarations :func:`declare` wrote that no ortpool op writes; returns them."""
    removed: list[str] = []
    tainted = _tainted(model)
    for holder in (scope.holder for scope in model_scopes(model)):
        written = {o for n in holder.node if n.domain == optypes.DOMAIN
                   or _calls_ortpool(n, tainted) for o in n.output}
        stale = [v.doc_string == MARK and v.name not in written for v in holder.value_info]
        if any(stale):
            removed += [v.name for v, drop in zip(holder.value_info, stale, strict=True) if drop]
            keep = [v for v, drop in zip(holder.value_info, stale, strict=True) if not drop]
            del holder.value_info[:]
            holder.value_info.extend(keep)
    return removed


def _declared_names(holder) -> set[str]:
    if isinstance(holder, onnx.FunctionProto):
        return {*holder.input, *holder.output, *(v.name for v in holder.value_info)}
    return {v.name for seq in (holder.input, holder.output, holder.value_info) for v in seq}


def _output_types(
    node: onnx.NodeProto, scope: Scope, types: TypeTable,
    computed: Mapping[str, tuple[Dim, ...]], static: bool,
) -> list[tuple[int | None, tuple[Dim, ...] | None]]:
    """(element type, dims) of each output of the ortpool ``node``; None where unknown."""
    op_type = optypes.parse(node.op_type)
    spec = op_type.spec
    attrs = attribute_values(node.attribute)
    source = _through_cast(scope, node.input[0])
    x_type = types.lookup(scope, source)
    x_dims = computed.get(source) or (x_type.dims if x_type is not None else None)
    elem = TensorProto.FLOAT if source != node.input[0] else (x_type.elem_type if x_type else 0)
    kernel = attrs.get("kernel_shape")
    rank = len(x_dims) if x_dims is not None else None
    if rank is None and isinstance(kernel, str) and kernel:
        rank = 2 + len(kernel.split(","))
    if rank is None and spec.op == "MaxRoiPool":
        rank = 4
    dims = None
    if rank is not None:
        fresh = [f"{node.output[0]}:{axis}" for axis in range(rank)]
        dims = _dims(node, scope, types, attrs, x_dims, fresh) if static else tuple(fresh)
    y = (elem if elem and elem > 0 else None, dims)
    return [y, (TensorProto.INT64, dims)][: op_type.n_outputs]


def _dims(node: onnx.NodeProto, scope: Scope, types: TypeTable, attrs: Mapping[str, object],
          x_dims: Sequence[Dim] | None, fresh: list[str]) -> tuple[Dim, ...]:
    """The main graph's dims: sizes where certain, the input's names for N and C, else fresh."""
    spec = optypes.parse(node.op_type).spec
    out: list[Dim] = list(fresh)
    if x_dims is None:
        return tuple(out)
    extra: dict[str, object] = {}
    if spec.op == "MaxRoiPool":
        rois = types.lookup(scope, _through_cast(scope, node.input[1]))
        rois_dims = rois.dims if rois is not None else None
        pooled = [int(v) for v in str(attrs.get("pooled_shape", "")).split(",") if v]
        if rois_dims and len(rois_dims) == 2 and rois_dims[0] is not None:
            out[0] = rois_dims[0]
        if x_dims[1] is not None:
            out[1] = x_dims[1]
        if len(pooled) == len(out) - 2:
            out[2:] = pooled
        return tuple(out)
    if spec.op == "MaxUnpool" and len(node.input) > 2:
        constant = _constant(scope, node.input[2])
        if constant is None:
            return tuple(out)  # sizes given at run time
        extra["unpool_shape"] = constant
    out[:2] = [d if d is not None else f for d, f in zip(x_dims[:2], fresh[:2], strict=True)]
    if spec.op in GLOBAL_OPERATORS:
        return (*out[:2], *(1,) * (len(out) - 2))
    if not all(isinstance(d, int) for d in x_dims[2:]):
        return tuple(out)
    # N and C do not move the spatial sizes; 1 stands in for a symbolic one.
    probe = [d if isinstance(d, int) else 1 for d in x_dims]
    try:
        sizes = output_shape(spec.op, spec.version, probe, attrs, **extra)
    except OrtpoolError:
        return tuple(out)  # no output for these sizes: the run will say why
    if "unpool_shape" in extra:
        return tuple(sizes)
    return (*out[:2], *sizes[2:])


def _through_cast(scope: Scope, name: str) -> str:
    """The value an inserted Cast to float32 read, when ``name`` is its output."""
    for node in scope.nodes:
        if is_inserted_cast(node) and name in node.output:
            return node.input[0]
    return name


def _constant(scope: Scope, name: str) -> list[int] | None:
    """The integers of an initializer or Constant node of the main graph named ``name``."""
    holder = scope.holder
    for tensor in getattr(holder, "initializer", ()):
        if tensor.name == name and not tensor.data_location:
            return [int(v) for v in numpy_helper.to_array(tensor).reshape(-1)]
    for node in scope.nodes:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and name in node.output:
            for attr in node.attribute:
                if attr.name == "value" and attr.type == onnx.AttributeProto.TENSOR:
                    return [int(v) for v in numpy_helper.to_array(attr.t).reshape(-1)]
    return None
