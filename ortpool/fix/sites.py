"""Every standard pooling node of a model, with the facts its forms depend on.

A *site* is one node where it lives (main graph, any subgraph, any model-local function), checked
against the spec version its governing opset gives it (the rewriter's checks: an invalid node is
an :class:`~ortpool.OrtpoolError` naming node, version and attribute), with the element type and
the static sizes of its input (:func:`ortpool.model.inference.learn_shapes`) and whether its
Indices are read.
A node ``ortpool fix`` cannot reason about (type not learned, attributes bound per call) keeps
``facts=None`` and the reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

import numpy as np
import onnx
from onnx import numpy_helper

from ortpool import dtypes, versions
from ortpool.check.node import NodeFacts
from ortpool.errors import OrtpoolError
from ortpool.model.inference import TypeTable, learn_shapes
from ortpool.model.scopes import Scope, is_pool, is_standard, model_scopes, subgraphs
from ortpool.model.singlenode import attribute_dict
from ortpool.rewrite.checks import check_node, node_name, resolve_version
from ortpool.rewrite.selection import Selection
from ortpool.versions import GLOBAL_OPERATORS


@dataclasses.dataclass
class Site:
    """One pooling node and what is known about it."""

    number: int  # position among the model's pooling nodes (scope order)
    scope: Scope
    node: onnx.NodeProto  # the node as it stands in the source model
    name: str
    facts: NodeFacts | None = None
    x_dims: tuple[int | None, ...] | None = None
    output_shape: np.ndarray | None = None  # MaxUnpool's output_shape when it is a constant
    rois_dims: tuple[int | None, ...] | None = None  # MaxRoiPool's rois, as inference knows
    selected: bool = True
    reason: str = ""  # why facts are None, or why the node is not selected

    @property
    def location(self) -> str:
        return self.scope.location

    @property
    def in_main_graph(self) -> bool:
        return self.scope.key == ("graph",)


def _read_values(model: onnx.ModelProto) -> set[str]:
    """Every value read anywhere (any node input, any graph or function output)."""
    read: set[str] = set()

    def graph(g: onnx.GraphProto) -> None:
        read.update(o.name for o in g.output)
        nodes(g.node)

    def nodes(ns: Iterable[onnx.NodeProto]) -> None:
        for node in ns:
            read.update(node.input)
            for _, _, sub in subgraphs(node):
                graph(sub)

    graph(model.graph)
    for function in model.functions:
        read.update(function.output)
        nodes(function.node)
    return read


def _constants(scope: Scope, model: onnx.ModelProto) -> dict[str, onnx.TensorProto]:
    """Values fixed in the model: initializers of the main graph, Constant nodes of the scope."""
    found = {
        t.name: t
        for t in model.graph.initializer
        if t.data_location != onnx.TensorProto.EXTERNAL
    }
    for node in scope.nodes:
        if node.op_type == "Constant" and is_standard(node) and node.output:
            for attr in node.attribute:
                if attr.name == "value" and attr.type == onnx.AttributeProto.TENSOR:
                    found[node.output[0]] = attr.t
    return found


def find_sites(
    model: onnx.ModelProto,
    selection: Selection,
    skip_invalid: bool = False,
    pinned: Mapping[str, int] | None = None,
) -> tuple[list[Site], list[str]]:
    """Every standard pooling node of ``model`` as a :class:`Site`, and notes on the shapes.
    An invalid node raises :class:`~ortpool.OrtpoolError`, or with ``skip_invalid`` is left as
    it is (not selected, with the reason). ``pinned``: node name -> the spec version the node
    keeps whatever its opset says (a lifted model's node that only a replacing form may
    realize: :mod:`ortpool.fix.lift`)."""
    scopes = model_scopes(model)
    selection.check_names(
        {n.name for s in scopes for n in s.nodes if is_pool(n)}, "pooling"
    )
    table = learn_shapes(model)
    read = _read_values(model)
    sites: list[Site] = []
    for scope in scopes:
        for node in scope.nodes:
            if not is_pool(node):
                continue
            site = Site(len(sites), scope, node, node_name(node))
            sites.append(site)
            why_not = selection.why_not(node.op_type, node.name)
            if why_not is not None:
                site.selected, site.reason = False, why_not
                continue
            try:
                _learn(site, model, table, read, (pinned or {}).get(node.name))
            except OrtpoolError as err:
                if not skip_invalid:
                    raise
                site.selected, site.reason = False, f"invalid: {err.detail}"
    return sites, table.notes


def _learn(
    site: Site, model: onnx.ModelProto, table: TypeTable, read: set[str], pinned: int | None
) -> None:
    node, scope = site.node, site.scope
    refs = [a for a in node.attribute if a.ref_attr_name]
    if refs:
        site.reason = (
            f"attribute {refs[0].name!r} refers to the function's attribute "
            f"{refs[0].ref_attr_name!r}, whose value is only known per call"
        )
        return
    spec = resolve_version(node, scope.opset) if pinned is None else versions.get(
        node.op_type, pinned
    )
    x_type = table.lookup(scope, node.input[0]) if node.input and node.input[0] else None
    elem_code = x_type.elem_type if x_type is not None else 0
    dims = x_type.static_dims if x_type is not None else None
    checked = check_node(node, spec, len(dims) if dims is not None else None)
    if elem_code not in dtypes.NAME_OF_CODE:
        site.reason = f"the element type of input {node.input[0]!r} could not be learned"
        return
    elem = dtypes.NAME_OF_CODE[elem_code]
    if elem not in spec.types:
        site.reason = f"element type {elem} is not one {spec.key} accepts"
        return
    spatial = None
    # An empty plane is a size a global pool has an answer for (ruling 13); a window no.
    least = 0 if spec.op in GLOBAL_OPERATORS else 1
    if dims is not None and all(isinstance(d, int) and d >= least for d in dims[2:]):
        spatial = tuple(int(d) for d in dims[2:])
    outputs = checked.outputs
    indices_used = len(outputs) > 1 and bool(outputs[1]) and outputs[1] in read
    site.x_dims = dims
    site.facts = NodeFacts(
        op=spec.op,
        version=spec.version,
        opset=scope.opset or 0,
        attrs=checked.attrs,
        elem=elem,
        spatial=spatial,
        n_inputs=len(checked.inputs),
        n_outputs=len(outputs),
        indices_used=indices_used,
        rank=len(dims) - 2 if dims is not None else None,
        attributes=attribute_dict(node.attribute),
        pinned=pinned is not None,
    )
    if spec.op == "MaxRoiPool":
        rois = table.lookup(scope, checked.inputs[1])
        site.rois_dims = rois.static_dims if rois is not None else None
    if spec.op == "MaxUnpool" and len(checked.inputs) > 2:
        constant = _constants(scope, model).get(checked.inputs[2])
        if constant is not None:
            site.output_shape = numpy_helper.to_array(constant).astype(np.int64)
