"""The two passes over a whole model, standard pooling -> ortpool (rewrite) and back (restore),
in place: only the pooling nodes, their marked Casts and output declarations and the ``ortpool``
opset import change."""

from __future__ import annotations

import onnx

from ortpool import dtypes, optypes, versions
from ortpool.attributes import empty_auto_pad_note
from ortpool.errors import OrtpoolError
from ortpool.model import branch_outputs, splice
from ortpool.model.inference import learn_types
from ortpool.model.scopes import (
    Scope,
    called_function,
    calls_below,
    function_index,
    function_label,
    is_pool,
    model_scopes,
    walk,
)
from ortpool.model.selection import Selection
from ortpool.model.site import Site, find_sites, node_name
from ortpool.ort import runtime
from ortpool.report.rewrites import LEFT_ALONE, RESTORED, RETARGETED, NodeReport, RewriteReport
from ortpool.rewrite import op_outputs, retarget


def _is_ortpool(node: onnx.NodeProto) -> bool:
    return node.domain == optypes.DOMAIN


def rewrite_model(model: onnx.ModelProto, selection: Selection,
                  skip_invalid: bool) -> RewriteReport:
    """Retarget the selected standard pooling nodes of ``model`` (edited in place)."""
    report = RewriteReport("rewrite")
    if any(is_pool(n) for s in model_scopes(model) for n in s.nodes):
        types = learn_types(model)
        sites, notes = find_sites(model, selection, skip_invalid, table=types)
        report.notes.extend(notes)
        namer = retarget.Namer(retarget.all_names(model))
        untyped = _typed_from_their_bodies(model)
        for site in sites:
            entry, replacement = _rewrite_node(site, namer, untyped)
            report.nodes.append(entry)
            if (note := empty_auto_pad_note(site.node, entry.name)) is not None:
                report.notes.append(note)
            if replacement is not None and site.scope is not None:
                # the node keeps its place, the Casts go right before and after it
                splice.replace(site.scope.nodes, site.node, replacement)
                splice.add_import(site.scope.imports, optypes.DOMAIN, optypes.DOMAIN_VERSION)
        op_outputs.declare(model, types)
    else:
        selection.check_names(set(), "pooling")
    if moved := branch_outputs.set_aside(model):
        report.notes.append(
            f"subgraph outputs {', '.join(map(repr, moved))} are written by an ortpool op: their "
            "declared static sizes are kept in their metadata and their dims made symbolic "
            "(onnxruntime would allocate them ahead, which ends the process when the op's output "
            "differs); 'ortpool restore' puts them back")
    _note_ir(model, report)
    return report


def _typed_from_their_bodies(model: onnx.ModelProto) -> dict[int, str]:
    """Local functions (by position) a function body calls and reads the call's output, and all
    they call: onnxruntime types such a call from the called body, where no type passes an
    ortpool op, and reads no value_info of the calling body (1.32: "Input 0 expected to have
    type but instead is null"); why, per function."""
    index, scopes = function_index(model), model_scopes(model)
    found: dict[int, str] = {}
    for scope in scopes:
        read = {name for node in walk(scope.nodes) for name in node.input}  # branches too
        for node in scope.nodes:
            position = called_function(node, index)
            if scope.function is not None and position is not None and read & set(node.output):
                found.setdefault(position, (
                    f"function {function_label(model.functions[position])} is called in the "
                    f"body of function {function_label(scope.function)}, which reads the call's "
                    "output: onnxruntime types such a call from the called body, and no type "
                    "passes an ortpool op"))
    return calls_below(model, scopes, found)  # what they call, at any depth, is typed through them


def _rewrite_node(site: Site, namer: retarget.Namer,
                  untyped: dict[int, str]) -> tuple[NodeReport, list | None]:
    entry = NodeReport(site.name, site.location, site.op, site.version or None, LEFT_ALONE)
    if not site.judgeable:
        entry.reason = site.reason
        entry.invalid = site.reason.startswith("invalid: ")
        return entry, None
    key = site.scope.key if site.scope is not None else ()
    if key[:1] == ("function",) and key[1] in untyped:
        entry.reason = untyped[key[1]]
        return entry, None
    cast_from = None
    if site.elem not in site.spec.carried_types:
        if site.elem not in versions.CAST_TYPES:
            entry.reason = f"element type {site.elem} cannot be carried into a Python op"
            return entry, None
        cast_from = dtypes.CODE[site.elem]
        entry.cast = site.elem
    entry.status, entry.op_type = RETARGETED, site.op_type.name
    return entry, retarget.to_ortpool(site, cast_from, namer)


def restore_model(model: onnx.ModelProto, selection: Selection,
                  skip_invalid: bool) -> RewriteReport:
    """Turn the selected ortpool nodes of ``model`` back into standard nodes (in place)."""
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


def _restore_node(node: onnx.NodeProto, scope: Scope, selection: Selection,
                  skip_invalid: bool) -> NodeReport:
    name = node_name(node)
    try:
        spec = optypes.parse(node.op_type).spec
        entry = NodeReport(name, scope.location, spec.op, spec.version, LEFT_ALONE)
    except ValueError:
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
    # the Casts a rewrite put before X and every other input of X's type (MaxRoiPool's rois)
    typed = spec.typed_inputs
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
    if (readable := runtime.unreadable(model.ir_version)) is not None:
        report.notes.append(
            f"the model has IR version {model.ir_version}; the installed onnxruntime "
            f"{runtime.build()['version']} reads at most {readable}")
