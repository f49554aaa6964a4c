"""The two passes over a whole model: standard pooling -> ortpool (rewrite) and back (restore).

Both edit a model in place, scope by scope (see :mod:`ortpool.model.scopes`), replacing only
the pooling nodes they change (plus the marked Casts a rewrite inserts and a restore removes),
the ``ortpool`` opset import and the marked declarations of ortpool outputs
(:mod:`ortpool.rewrite.op_outputs`); node order, names, graph inputs and outputs, initializers,
the model's own value_info, metadata, doc strings and every other node stay as they were.
"""

from __future__ import annotations

import onnx

from ortpool import optypes
from ortpool.attributes import empty_auto_pad_note
from ortpool.errors import OrtpoolError
from ortpool.model import branch_outputs, splice
from ortpool.model.inference import MIXED, TypeTable, learn_types
from ortpool.model.scopes import Scope, is_pool, model_scopes
from ortpool.ort import runtime
from ortpool.rewrite import op_outputs, retarget
from ortpool.rewrite.checks import check_node, node_name, resolve_version
from ortpool.rewrite.report import LEFT_ALONE, RESTORED, RETARGETED, NodeReport, RewriteReport
from ortpool.rewrite.selection import Selection

_CAST_FROM = {"float16": onnx.TensorProto.FLOAT16, "bfloat16": onnx.TensorProto.BFLOAT16}


def _is_ortpool(node: onnx.NodeProto) -> bool:
    return node.domain == optypes.DOMAIN


def rewrite_model(
    model: onnx.ModelProto, selection: Selection, skip_invalid: bool
) -> RewriteReport:
    """Retarget the selected standard pooling nodes of ``model`` (edited in place)."""
    report = RewriteReport("rewrite")
    scopes = model_scopes(model)
    selection.check_names(
        {n.name for s in scopes for n in s.nodes if is_pool(n)}, "pooling"
    )
    if not any(is_pool(n) for s in scopes for n in s.nodes):
        _set_aside_branch_shapes(model, report)
        _note_ir(model, report)
        return report
    types = learn_types(model)
    report.notes.extend(types.notes)
    namer = retarget.Namer(retarget.all_names(model))
    for scope in scopes:
        for node in list(scope.nodes):
            if not is_pool(node):
                continue
            entry, replacement = _rewrite_node(node, scope, types, selection, skip_invalid, namer)
            report.nodes.append(entry)
            note = empty_auto_pad_note(node, entry.name)
            if note is not None:
                report.notes.append(note)
            if replacement is None:
                continue
            # [Casts in..., the ortpool node, Cast out] or [the ortpool node]: the node keeps
            # its place, the Casts go right before and after it.
            splice.replace(scope.nodes, node, replacement)
            splice.add_import(scope.imports, optypes.DOMAIN, optypes.DOMAIN_VERSION)
    op_outputs.declare(model, types)
    _set_aside_branch_shapes(model, report)
    _note_ir(model, report)
    return report


def _set_aside_branch_shapes(model: onnx.ModelProto, report: RewriteReport) -> None:
    moved = branch_outputs.set_aside(model)
    if moved:
        report.notes.append(
            f"subgraph outputs {', '.join(map(repr, moved))} are written by an ortpool op: their "
            "declared static sizes are kept in their metadata and their dims made symbolic "
            "(onnxruntime would allocate them ahead, which ends the process when the op's output "
            "differs); 'ortpool restore' puts them back"
        )


def _rewrite_node(
    node: onnx.NodeProto,
    scope: Scope,
    types: TypeTable,
    selection: Selection,
    skip_invalid: bool,
    namer: retarget.Namer,
) -> tuple[NodeReport, list[onnx.NodeProto] | None]:
    name = node_name(node)
    entry = NodeReport(name, scope.location, node.op_type, None, LEFT_ALONE)
    reason = selection.why_not(node.op_type, node.name)
    if reason is not None:
        entry.reason = reason
        return entry, None
    refs = [a for a in node.attribute if a.ref_attr_name]
    if refs:
        entry.reason = (
            f"attribute {refs[0].name!r} refers to the function's attribute "
            f"{refs[0].ref_attr_name!r}, whose value is only known per call"
        )
        return entry, None
    x_type = types.lookup(scope, node.input[0]) if node.input and node.input[0] else None
    try:
        spec = resolve_version(node, scope.opset)
        entry.version = spec.version
        checked = check_node(node, spec, x_type.rank if x_type and x_type.elem_type > 0 else None)
    except OrtpoolError as err:
        if not skip_invalid:
            raise
        entry.reason = f"invalid: {err.detail}"
        entry.invalid = True
        return entry, None
    elem = x_type.name if x_type is not None else None
    if x_type is MIXED or (x_type is not None and x_type.elem_type == MIXED.elem_type):
        entry.reason = (
            f"input {node.input[0]!r} has different element types at different calls of the "
            "function"
        )
        return entry, None
    if elem is None:
        entry.reason = f"the element type of input {node.input[0]!r} could not be learned"
        return entry, None
    if elem not in spec.types:
        entry.reason = (
            f"element type {elem} is not one {spec.key} accepts ({', '.join(spec.types)})"
        )
        return entry, None
    cast_from = None
    if elem not in spec.carried_types:
        if elem not in _CAST_FROM:
            entry.reason = f"element type {elem} cannot be carried into a Python op"
            return entry, None
        cast_from = _CAST_FROM[elem]
        entry.cast = elem
    entry.status, entry.op_type = RETARGETED, checked.op_type.name
    return entry, retarget.to_ortpool(node, checked, cast_from, scope.opset or 0, namer)


def restore_model(
    model: onnx.ModelProto, selection: Selection, skip_invalid: bool
) -> RewriteReport:
    """Turn the selected ortpool nodes of ``model`` back into standard nodes (in place), removing
    the Casts a rewrite put around them and the ``ortpool`` import where nothing uses it."""
    report = RewriteReport("restore")
    scopes = model_scopes(model)
    selection.check_names({n.name for s in scopes for n in s.nodes if _is_ortpool(n)}, "ortpool")
    for scope in scopes:
        for node in list(scope.nodes):
            if _is_ortpool(node):
                report.nodes.append(_restore_node(node, scope, selection, skip_invalid))
    for owner_key, imports in splice.owners(model):
        in_use = any(_is_ortpool(n) for s in scopes if s.owner_key == owner_key for n in s.nodes)
        if not in_use:
            splice.drop_import(imports, optypes.DOMAIN)
    op_outputs.remove(model)
    branch_outputs.put_back(model)
    _note_ir(model, report)
    return report


def _restore_node(
    node: onnx.NodeProto, scope: Scope, selection: Selection, skip_invalid: bool
) -> NodeReport:
    name = node_name(node)
    try:
        spec = optypes.parse(node.op_type).spec
        entry = NodeReport(name, scope.location, spec.op, spec.version, LEFT_ALONE)
    except ValueError:
        spec = None
        entry = NodeReport(name, scope.location, node.op_type, None, LEFT_ALONE)
    reason = selection.why_not(entry.op, node.name)
    if reason is not None:
        entry.reason = reason
        return entry
    try:
        standard = retarget.to_standard(node, scope.opset)
    except OrtpoolError as err:
        if not skip_invalid:
            raise
        entry.reason, entry.invalid = f"invalid: {err.detail}", True
        return entry
    producers = {out: n for n in scope.nodes if retarget.is_inserted_cast(n) for out in n.output}
    consumers = {n.input[0]: n for n in scope.nodes if retarget.is_inserted_cast(n) and n.input}
    drop = []
    # The Casts a rewrite put before X and every other input of X's type (MaxRoiPool's rois).
    typed = optypes.parse(node.op_type).spec.typed_inputs
    for position, name in enumerate(standard.input):
        cast_in = producers.get(name) if position < len(typed) and typed[position] else None
        if cast_in is not None and _only_reader(scope, cast_in.output[0], node):
            standard.input[position] = cast_in.input[0]
            drop.append(cast_in)
    cast_out = consumers.get(standard.output[0])
    if cast_out is not None and _only_reader(scope, standard.output[0], cast_out):
        standard.output[0] = cast_out.output[0]
        drop.append(cast_out)
        entry.cast = _elem_name(cast_out)
    node.CopyFrom(standard)
    for cast in drop:
        splice.remove(scope.nodes, cast)
    entry.status, entry.op_type = RESTORED, standard.op_type
    return entry


def _only_reader(scope: Scope, value: str, reader: onnx.NodeProto) -> bool:
    """Whether ``reader`` is the one node of the scope (subgraphs included) reading ``value``."""
    readers = [n for n in scope.nodes if value in n.input]
    return readers == [reader] or (len(readers) == 1 and readers[0] is reader)


def _elem_name(cast: onnx.NodeProto) -> str | None:
    for attr in cast.attribute:
        if attr.name == "to" and attr.type == onnx.AttributeProto.INT:
            return onnx.TensorProto.DataType.Name(attr.i).lower()
    return None


def _note_ir(model: onnx.ModelProto, report: RewriteReport) -> None:
    # Only above runtime.IR_VERSION is the installed onnxruntime asked (and imported): a
    # rewrite of an older model never imports it.
    readable = runtime.unreadable(model.ir_version)
    if readable is not None:
        report.notes.append(
            f"the model has IR version {model.ir_version}; the installed onnxruntime "
            f"{runtime.build()['version']} reads at most {readable}"
        )
