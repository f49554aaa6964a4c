"""A pooling node described once: :class:`Site`, found in every scope by :func:`find_sites`.

A site is a standard pooling node where it lives, or one ortpool builds alone (:meth:`Site.alone`):
its spec version, its attributes checked and parsed once (:func:`check_node`), X's element type
and dims, which outputs are read (Indices nobody reads differ in nothing: :func:`read_values`),
its constant inputs. Every command takes it; :mod:`ortpool.check` judges it.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto, helper, numpy_helper

from ortpool import dtypes, optypes, versions
from ortpool.attributes import NodeAttrs, PoolAttrs, attribute_values, normalize
from ortpool.errors import OrtpoolError, shown
from ortpool.geometry import PoolGeometry, pool_geometry
from ortpool.model.scopes import (
    Scope,
    all_nodes,
    called_function,
    calls_below,
    function_index,
    function_label,
    is_pool,
    is_standard,
    model_scopes,
    subgraphs,
    text,
    written,
)
from ortpool.model.selection import Selection
from ortpool.optypes import OpType
from ortpool.versions import GLOBAL_OPERATORS, WINDOW_OPERATORS, OpVersion

#: The ONNX attribute type each kind of pooling attribute must have on a standard node.
PROTO_TYPE = {"int": AttributeProto.INT, "ints": AttributeProto.INTS,
              "string": AttributeProto.STRING, "float": AttributeProto.FLOAT}
#: A pooling node's inputs (I: MaxUnpool's indices or MaxRoiPool's rois) and outputs, as ortpool
#: names them in a model of it alone.
INPUT_NAMES = ("X", "I", "output_shape")
OUTPUT_NAMES = ("Y", "Indices")
#: Ops whose value is a max of input elements: where a runtime's max of NaN and -inf differs
#: (ruling 6).
MAX_LIKE = ("MaxPool", "GlobalMaxPool", "MaxRoiPool")
#: Where a site lives when ortpool built it alone.
ALONE = "alone"

Dims = tuple[int | None, ...]


def least_size(op: str) -> int:
    """The smallest spatial size ``op`` is judged at: 0 for a global pool (ruling 13), else 1."""
    return 0 if op in GLOBAL_OPERATORS else 1


def node_name(node: onnx.NodeProto) -> str:
    return text(node.name) or f"<unnamed {node.op_type}>"


def present(names: Sequence[str]) -> tuple[str, ...]:
    """Names without their trailing empty (absent optional) entries."""
    names = list(names)
    while names and not names[-1]:
        names.pop()
    return tuple(names)


def attribute_dict(attributes: Iterable[onnx.AttributeProto]) -> dict[str, Any]:
    """A node's attributes as plain Python values (strings decoded, lists as lists of ints)."""
    return {name: [int(v) for v in value] if isinstance(value, list | tuple) else value
            for name, value in attribute_values(list(attributes)).items()}


@dataclasses.dataclass(frozen=True, eq=False)
class Site:
    """One pooling node and everything ortpool knows of it (the module's docstring). ``attrs``
    is None and ``reason`` says why when it cannot be reasoned about; ``selected`` is False when
    ``--ops``, ``--nodes`` or ``--exclude`` leaves it out."""

    node: onnx.NodeProto = dataclasses.field(repr=False)
    name: str
    op: str
    version: int
    opset: int  # the ai.onnx opset governing the node (decides which ops a form may use)
    attrs: NodeAttrs | None
    elem: str | None  # X's element type as the schemas name it ("float", "uint8", ...)
    #: X's dims: an int where static, None where symbolic; None: the rank unknown too
    x_dims: Dims | None
    inputs: tuple[str, ...] = ()  # present inputs, trailing empty optionals dropped
    outputs: tuple[str, ...] = ()
    indices_read: bool = False
    scope: Scope | None = dataclasses.field(default=None, repr=False)  # None: built alone
    location: str = ALONE  # for humans: "main graph", "function F > If 'i'.then_branch"
    number: int = 0  # position among the model's pooling nodes (scope order)
    #: MaxUnpool's output_shape when it is a constant of the model
    output_shape: np.ndarray | None = dataclasses.field(default=None, repr=False)
    #: MaxRoiPool's rois dims, as inference knows them
    rois_dims: Dims | None = None
    #: the node keeps ``version`` whatever ``opset`` says (a lifted model's node)
    pinned: bool = False
    selected: bool = True
    reason: str = ""

    @property
    def spec(self) -> OpVersion:
        return versions.get(self.op, self.version)

    @property
    def key(self) -> str:
        """``MaxPool-12``."""
        return f"{self.op}-{self.version}"

    @property
    def attributes(self) -> dict[str, Any]:
        """As written (name -> Python value)."""
        return attribute_dict(self.node.attribute)

    @property
    def n_inputs(self) -> int:
        return len(self.inputs)

    @property
    def n_outputs(self) -> int:
        return len(self.outputs)

    @property
    def compared_outputs(self) -> tuple[str, ...]:
        """Y, and Indices where something reads them: the outputs a run of the node is judged on
        (Indices nobody reads differ in nothing)."""
        return self.outputs[: 2 if self.indices_read else 1]

    @property
    def op_type(self) -> OpType:
        return optypes.for_node(self.op, self.version, self.n_inputs, self.n_outputs)

    @property
    def judgeable(self) -> bool:
        """Selected, its attributes and element type known."""
        return self.selected and self.attrs is not None and self.elem is not None

    @property
    def in_main_graph(self) -> bool:
        """In the main graph itself (its inputs are tensors of the model's run)."""
        return self.scope is not None and self.scope.key == ("graph",)

    @property
    def rank(self) -> int | None:
        """Spatial axes of X (from the kernel without dims; None: unknown)."""
        if self.x_dims is not None:
            return len(self.x_dims) - 2
        return self.attrs.rank if isinstance(self.attrs, PoolAttrs) else None

    @property
    def spatial(self) -> tuple[int, ...] | None:
        """X's static spatial sizes, each at least :func:`least_size`; None otherwise."""
        dims = self.x_dims
        if dims is None or not all(isinstance(d, int) for d in dims[2:]):
            return None
        if any(d < least_size(self.op) for d in dims[2:]):  # type: ignore[operator]
            return None
        return tuple(int(d) for d in dims[2:])  # type: ignore[arg-type]

    @property
    def windowed(self) -> bool:
        """MaxPool, AveragePool, LpPool: kernel, strides, pads."""
        return self.op in WINDOW_OPERATORS and isinstance(self.attrs, PoolAttrs)

    def geometry(self) -> PoolGeometry | None:
        """The spec's geometry at the static sizes (None when they are symbolic)."""
        spatial = self.spatial
        if spatial is None or not self.windowed:
            return None
        return pool_geometry(spatial, self.attrs)  # type: ignore[arg-type]

    def at(self, x_shape: Sequence[int], elem: str | None = None) -> Site:
        """The site with X of ``x_shape`` (a run's sizes), attributes normalized at that rank;
        ``elem`` where the arrays decide the element type."""
        dims = tuple(int(d) for d in x_shape)
        attrs = normalize(self.spec, self.attributes, len(dims) - 2) if self.attrs else None
        return dataclasses.replace(self, x_dims=dims, attrs=attrs, elem=elem or self.elem)

    @classmethod
    def alone(cls, op: str, version: int, attributes: Mapping[str, Any], elem: str,
              x_dims: Sequence[int | None] | None, n_inputs: int = 1, n_outputs: int = 1,
              name: str = "node", indices_read: bool | None = None, strict: bool = True) -> Site:
        """A node of ``op``-``version`` built by ortpool, at the opset of that version, checked as
        a model's (an :class:`OrtpoolError`; with ``strict`` False, ``attrs`` None and the
        reason). ``indices_read`` None: whenever it has them."""
        spec = versions.get(op, version)
        node = helper.make_node(op, list(INPUT_NAMES[:n_inputs]), list(OUTPUT_NAMES[:n_outputs]),
                                name=written(name))
        # as make_node's keywords would, but an attribute named 'name' or 'inputs' (fix's record
        # read back) is an attribute, and a value no attribute holds an error naming it
        for key, value in sorted(attributes.items()):
            if value is None:
                continue
            try:
                node.attribute.append(helper.make_attribute(key, value))
            except (TypeError, ValueError) as err:
                raise OrtpoolError(f"attribute {key!r} = {shown(value)}: {err}",
                                   node=name, op=op, version=version) from None
        dims = None if x_dims is None else tuple(x_dims)
        reason = ""
        try:
            attrs: NodeAttrs | None = check_node(node, spec, None if dims is None else len(dims))
        except OrtpoolError as err:
            if strict:
                raise
            attrs, reason = None, f"invalid: {err.detail}"
        return cls(node=node, name=name, op=op, version=version, opset=version, attrs=attrs,
                   elem=elem, x_dims=dims, inputs=present(node.input), outputs=present(node.output),
                   indices_read=n_outputs > 1 if indices_read is None else indices_read,
                   reason=reason)


def resolve_version(node: onnx.NodeProto, opset: int | None) -> OpVersion:
    """The spec version ``opset`` gives ``node``, else an :class:`OrtpoolError` naming it."""
    name = node_name(node)
    if opset is None:
        raise OrtpoolError("no ai.onnx opset import governs this node", node=name, op=node.op_type)
    try:
        return versions.resolve(node.op_type, opset)
    except ValueError as err:
        raise OrtpoolError(str(err), node=name, op=node.op_type) from None


def check_node(node: onnx.NodeProto, spec: OpVersion, input_rank: int | None) -> NodeAttrs:
    """``node``'s attributes parsed, checked against ``spec`` (arity, every attribute's existence,
    type and value; ``input_rank``: X's rank when known)."""
    name = node_name(node)

    def fail(message: str) -> OrtpoolError:
        return OrtpoolError(message, node=name, op=spec.op, version=spec.version)

    inputs, outputs = present(node.input), present(node.output)
    input_names = spec.input_names
    if len(inputs) > spec.max_inputs:
        raise fail(f"has {len(inputs)} inputs; this version takes at most {spec.max_inputs} "
                   f"({', '.join(input_names[: spec.max_inputs])})")
    if len(outputs) > spec.max_outputs:
        raise fail(f"has {len(outputs)} outputs; this version has at most {spec.max_outputs} "
                   f"({', '.join(OUTPUT_NAMES[: spec.max_outputs])})")
    for position in range(spec.min_inputs):
        if position >= len(inputs) or not inputs[position]:
            raise fail(f"input {input_names[position]!r} is required but missing")
    if not outputs or not outputs[0]:
        raise fail("output 'Y' is required but missing")
    for kind, names, spelled in (("input", inputs, input_names), ("output", outputs, OUTPUT_NAMES)):
        for position, tensor in enumerate(names):
            if isinstance(tensor, bytes):  # protobuf hands a name that is not UTF-8 over as bytes
                raise fail(f"{kind} {spelled[position]!r} names the tensor {tensor!r}, which is "
                           "not UTF-8 text: onnxruntime cannot load the model, nor can ortpool "
                           "write it")
    repeated = [n for n, count in Counter(a.name for a in node.attribute).items() if count > 1]
    if repeated:
        raise fail(f"attribute {repeated[0]!r} is given more than once")
    for attr in node.attribute:
        attr_spec = spec.attrs.get(attr.name)
        if attr_spec is None:
            raise fail(f"attribute {attr.name!r} does not exist in this version "
                       f"(it has {', '.join(spec.attrs) or 'no attributes'})")
        want = PROTO_TYPE[attr_spec.kind]
        if attr.type != want:
            raise fail(f"attribute {attr.name!r} must be of type {_type_name(want)}, "
                       f"got {_type_name(attr.type)}")
    if input_rank is not None and input_rank < 3:
        raise fail(f"input {inputs[0]!r} has rank {input_rank}; pooling needs N x C x D1 x ...")
    try:
        return normalize(spec, attribute_values(node.attribute),
                         None if input_rank is None else input_rank - 2)
    except OrtpoolError as err:
        raise err.located(node=name) from None


def _type_name(proto_type: int) -> str:
    return AttributeProto.AttributeType.Name(proto_type)


def read_values(model: onnx.ModelProto) -> set[str]:
    """Every value read anywhere: any node input, any graph, subgraph or function output."""
    read = {o.name for o in model.graph.output}
    for function in model.functions:
        read.update(function.output)
    for node in all_nodes(model):
        read.update(node.input)
        read.update(o.name for _, _, sub in subgraphs(node) for o in sub.output)
    return read


def _constants(scope: Scope, model: onnx.ModelProto) -> dict[str, onnx.TensorProto]:
    """Initializers of the main graph and Constant nodes of the scope."""
    found = {t.name: t for t in model.graph.initializer
             if t.data_location != onnx.TensorProto.EXTERNAL}
    for node in scope.nodes:
        if node.op_type == "Constant" and is_standard(node) and node.output:
            for attr in node.attribute:
                if attr.name == "value" and attr.type == onnx.AttributeProto.TENSOR:
                    found[node.output[0]] = attr.t
    return found


def find_sites(model: onnx.ModelProto, selection: Selection | None = None,
               skip_invalid: bool = False, pinned: Mapping[str, int] | None = None,
               table: Any = None) -> tuple[list[Site], list[str]]:
    """Every standard pooling node of ``model`` (scope order) as a :class:`Site`, and notes on
    its types and shapes. ``table``: the :class:`~ortpool.model.inference.TypeTable` to read
    (default :func:`~ortpool.model.inference.learn_shapes`). An invalid node raises, or with
    ``skip_invalid`` is not selected, with the reason. ``pinned``: name -> its kept version."""
    from ortpool.model.inference import learn_shapes  # inference imports the scopes, not sites

    selection = selection or Selection()
    scopes = model_scopes(model)
    selection.check_names({text(n.name) for s in scopes for n in s.nodes if is_pool(n)},
                          "pooling")
    table = learn_shapes(model) if table is None else table
    read = read_values(model)
    called = _called(model, scopes)
    sites: list[Site] = []
    for scope in scopes:
        for node in scope.nodes:
            if not is_pool(node):
                continue
            base = Site(node=node, name=node_name(node), op=node.op_type, version=0,
                        opset=scope.opset or 0, attrs=None, elem=None, x_dims=None,
                        inputs=present(node.input), outputs=present(node.output), scope=scope,
                        location=scope.location, number=len(sites))
            why_not = selection.why_not(node.op_type, text(node.name))
            if why_not is None and scope.function is not None and scope.key[1] not in called:
                why_not = (f"function {function_label(scope.function)} is called nowhere: it "
                           "never runs")
            if why_not is not None:
                sites.append(dataclasses.replace(base, selected=False, reason=why_not))
                continue
            try:
                sites.append(_learn(base, model, table, read,
                                    (pinned or {}).get(text(node.name))))
            except OrtpoolError as err:
                if not skip_invalid:
                    raise
                sites.append(dataclasses.replace(base, version=err.version or 0, selected=False,
                                                 reason=f"invalid: {err.detail}"))
    return sites, list(table.notes)


def _called(model: onnx.ModelProto, scopes: list[Scope]) -> set[int]:
    """The local functions (by position) the graphs call, at any depth of calls."""
    index = function_index(model)
    direct = {position: None for scope in scopes if scope.function is None
              for node in scope.nodes
              if (position := called_function(node, index)) is not None}
    return set(calls_below(model, scopes, direct))


def _learn(site: Site, model: onnx.ModelProto, table: Any, read: set[str],
           pinned: int | None) -> Site:
    node, scope = site.node, site.scope
    refs = [a for a in node.attribute if a.ref_attr_name]
    if refs:
        return dataclasses.replace(site, reason=(f"attribute {refs[0].name!r} refers to the "
                                                 f"function's attribute {refs[0].ref_attr_name!r}, "
                                                 "whose value is only known per call"))
    spec = (resolve_version(node, scope.opset if scope else None) if pinned is None
            else versions.get(node.op_type, pinned))
    x_type = table.lookup(scope, node.input[0]) if node.input and node.input[0] else None
    dims = x_type.static_dims if x_type is not None else None
    attrs = check_node(node, spec, len(dims) if dims is not None else None)
    indices_read = len(site.outputs) > 1 and bool(site.outputs[1]) and site.outputs[1] in read
    site = dataclasses.replace(site, version=spec.version, x_dims=dims, pinned=pinned is not None,
                               indices_read=indices_read)
    elem_code = x_type.elem_type if x_type is not None else 0
    if elem_code < 0:  # inference's MIXED: a function called with different types
        return dataclasses.replace(site, reason=(f"input {node.input[0]!r} has different element "
                                                 "types at different calls of the function"))
    if elem_code not in dtypes.NAME_OF_CODE:
        return dataclasses.replace(site, reason=(f"the element type of input {node.input[0]!r} "
                                                 "could not be learned"))
    elem = dtypes.NAME_OF_CODE[elem_code]
    if elem not in spec.types:
        return dataclasses.replace(site, elem=elem, reason=(
            f"element type {elem} is not one {spec.key} accepts ({', '.join(spec.types)})"))
    extra: dict[str, Any] = {}
    if spec.op == "MaxRoiPool" and len(site.inputs) > 1:
        rois = table.lookup(scope, site.inputs[1])
        extra["rois_dims"] = rois.static_dims if rois is not None else None
    if spec.op == "MaxUnpool" and len(site.inputs) > 2 and scope is not None:
        constant = _constants(scope, model).get(site.inputs[2])
        if constant is not None:
            extra["output_shape"] = numpy_helper.to_array(constant).astype(np.int64)
    return dataclasses.replace(site, attrs=attrs, elem=elem, **extra)
