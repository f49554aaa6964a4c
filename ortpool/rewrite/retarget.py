"""One node at a time: a checked standard pooling node to its ortpool op type, and back.

float16 and bfloat16 cannot enter a Python custom op: such a node is wrapped in Casts to and from
float32, marked (name prefix and doc string) so that restore removes exactly those.
"""

from __future__ import annotations

from collections.abc import Iterable

import onnx
from onnx import AttributeProto, TensorProto

from ortpool import optypes, versions
from ortpool.attributes import attribute_values, full_attributes, normalize, standard_attributes
from ortpool.errors import OrtpoolError
from ortpool.model.scopes import model_scopes
from ortpool.model.site import PROTO_TYPE, Site, node_name, present

#: Every Cast a rewrite inserts carries this doc string prefix; restore looks for it.
CAST_MARK = "ortpool-cast:"
CAST_IN_PREFIX = "ortpool_cast_in/"
CAST_OUT_PREFIX = "ortpool_cast_out/"


class Namer:
    """Fresh value and node names that collide with nothing anywhere in the model."""

    def __init__(self, taken: Iterable[str]) -> None:
        self._taken = set(taken)

    def fresh(self, base: str) -> str:
        name, count = base, 1
        while name in self._taken:
            count += 1
            name = f"{base}_{count}"
        self._taken.add(name)
        return name


def all_names(model: onnx.ModelProto) -> set[str]:
    """Every value and node name used anywhere in ``model`` (graphs, subgraphs, functions)."""
    names: set[str] = set()
    for scope in model_scopes(model):
        holder = scope.holder
        if isinstance(holder, onnx.FunctionProto):
            names.update([*holder.input, *holder.output])
        else:
            names.update(v.name for seq in (holder.input, holder.output, holder.value_info,
                                            holder.initializer) for v in seq)
        for node in scope.nodes:
            names.update([node.name, *node.input, *node.output])
    return names


def _like(node: onnx.NodeProto, op_type: str, domain: str | None) -> onnx.NodeProto:
    """A node of ``op_type`` with ``node``'s name and doc string copied (a name that is not
    UTF-8 is taken only by copy), no other field set."""
    out = onnx.NodeProto()
    out.CopyFrom(node)
    for field in out.DESCRIPTOR.fields:
        if field.name not in ("name", "doc_string"):
            out.ClearField(field.name)
    out.op_type = op_type
    if domain:
        out.domain = domain
    return out


def _cast(name: str, source: str, target: str, to: int, opset: int, domain: str, about: str):
    node = onnx.helper.make_node("Cast", [source], [target], name=name, domain=domain or None)
    if opset < 6:  # Cast-1 names the type as a string
        node.attribute.append(onnx.helper.make_attribute("to", TensorProto.DataType.Name(to)))
    else:
        node.attribute.append(onnx.helper.make_attribute("to", to))
    node.doc_string = (
        f"{CAST_MARK} inserted by 'ortpool rewrite' around node {about!r}; "
        "'ortpool restore' removes it"
    )
    return node


def to_ortpool(site: Site, cast_from: int | None, namer: Namer) -> list[onnx.NodeProto]:
    """The nodes replacing the site's node: the ortpool node, between Casts when ``cast_from``
    (X's TensorProto type) is float16/bfloat16."""
    node, opset = site.node, site.opset
    inputs, outputs = list(site.inputs), list(site.outputs)
    new = _like(node, site.op_type.name, optypes.DOMAIN)
    for attr_name, value in full_attributes(site.spec, site.attrs).items():
        new.attribute.append(onnx.helper.make_attribute(attr_name, value))
    if cast_from is None:
        new.input.extend(inputs)
        new.output.extend(outputs)
        return [new]
    base, about = node.name or outputs[0], node_name(node)
    casts_in, new_inputs = [], list(inputs)
    for position, typed in enumerate(site.spec.typed_inputs[: len(inputs)]):
        if not typed or not inputs[position]:
            continue
        wide = namer.fresh(f"{inputs[position]}__ortpool_f32")
        casts_in.append(_cast(namer.fresh(CAST_IN_PREFIX + base), inputs[position], wide,
                              TensorProto.FLOAT, opset, node.domain, about))
        new_inputs[position] = wide
    y32 = namer.fresh(f"{outputs[0]}__ortpool_f32")
    cast_out = _cast(namer.fresh(CAST_OUT_PREFIX + base), y32, outputs[0], cast_from, opset,
                     node.domain, about)
    new.input.extend(new_inputs)
    new.output.extend([y32, *outputs[1:]])
    return [*casts_in, new, cast_out]


def is_inserted_cast(node: onnx.NodeProto) -> bool:
    return node.op_type == "Cast" and node.doc_string.startswith(CAST_MARK)


def to_standard(node: onnx.NodeProto, opset: int | None) -> onnx.NodeProto:
    """The standard node an ortpool node stands for, defaults omitted; an error at an opset
    that gives the operator another spec version, or for an attribute not in its encoding."""
    name = node_name(node)
    try:
        op_type = optypes.parse(node.op_type)
    except ValueError as err:
        raise OrtpoolError(str(err), node=name) from None
    spec = op_type.spec

    def fail(message: str) -> OrtpoolError:
        return OrtpoolError(message, node=name, op=spec.op, version=spec.version)

    if opset is None:
        raise fail("no ai.onnx opset import governs this node, so it cannot become a standard node")
    governing = versions.resolve(spec.op, opset) if spec.version <= opset else None
    if governing is None or governing.version != spec.version:
        now = f"version {governing.version}" if governing else "no version"
        raise fail(f"ai.onnx opset {opset} gives {spec.op} {now}; restoring {node.op_type} there "
                   "would change what the node computes")
    declared = {a.name: a for a in node.attribute}
    for attr_name, attr_spec in spec.attrs.items():
        attr = declared.get(attr_name)
        want = AttributeProto.INT if attr_spec.kind == "int" else AttributeProto.STRING
        if attr is None:
            raise fail(f"attribute {attr_name!r} is missing from the ortpool node")
        if attr.type != want:
            raise fail(
                f"attribute {attr_name!r} must be {AttributeProto.AttributeType.Name(want)} "
                f"in the ortpool encoding, got {AttributeProto.AttributeType.Name(attr.type)}")
    extra = sorted(set(declared) - set(spec.attrs))
    if extra:
        raise fail(f"attribute {extra[0]!r} does not exist in this version")
    inputs, outputs = present(node.input), present(node.output)
    if (len(inputs), len(outputs)) != (op_type.n_inputs, op_type.n_outputs):
        raise fail(
            f"{node.op_type} takes {op_type.n_inputs} inputs and {op_type.n_outputs} outputs, "
            f"the node has {len(inputs)} and {len(outputs)}")
    try:
        attrs = normalize(spec, attribute_values(node.attribute))
    except OrtpoolError as err:
        raise err.located(node=name) from None
    out = _like(node, spec.op, None)
    out.input.extend(inputs)
    out.output.extend(outputs)
    for attr_name, value in standard_attributes(spec, attrs).items():
        kind = spec.attrs[attr_name].kind
        attr = onnx.helper.make_attribute(attr_name, value)
        if attr.type != PROTO_TYPE[kind]:  # make_attribute guesses from the value
            raise fail(f"attribute {attr_name!r} could not be written as {kind}")
        out.attribute.append(attr)
    return out
