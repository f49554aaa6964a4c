"""Every spec version of the pooling operators, as data read from ``onnx.defs``; typed in by hand
only the operator list and the two rules the schemas cannot carry (:meth:`OpVersion.default`)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping

import onnx
import onnx.defs
from onnx import AttributeProto

OPERATORS: tuple[str, ...] = ("MaxPool", "AveragePool", "MaxUnpool", "LpPool", "GlobalMaxPool",
                              "GlobalAveragePool", "GlobalLpPool", "MaxRoiPool")
#: Operators whose window is the whole spatial extent: no window attributes, spatial output 1.
GLOBAL_OPERATORS: tuple[str, ...] = ("GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool")
#: Operators whose output size is :func:`ortpool.geometry.pool_geometry`'s.
WINDOW_OPERATORS: tuple[str, ...] = ("MaxPool", "AveragePool", "LpPool")

#: Element types a Python custom op can carry; float16/bfloat16 abort the process when they reach
#: one, so they go through Cast pairs instead (ruling 10).
CARRIED_TYPES: tuple[str, ...] = ("float", "double", "int8", "uint8")
CAST_TYPES: tuple[str, ...] = ("float16", "bfloat16")

#: List attributes whose schema text (not its default) gives one value per spatial axis.
PER_AXIS_DEFAULTS: Mapping[str, int] = {"strides": 1, "dilations": 1, "pads": 0}
#: The neutral value of an attribute no version of some operator has (MaxUnpool, the global
#: pools, MaxRoiPool read as NOTSET); those a later version adds: :func:`neutral_defaults`.
ABSENT_DEFAULTS: Mapping[str, int | str | None] = {"auto_pad": "NOTSET"}


#: An attribute's value as a schema or node holds it.
Value = int | float | str | tuple[int, ...] | None


@dataclasses.dataclass(frozen=True)
class AttrSpec:
    """One attribute of one spec version."""

    name: str
    kind: str  # "int", "ints", "float" or "string"
    #: None: required, or an empty list by default
    default: Value
    required: bool


@dataclasses.dataclass(frozen=True)
class OpVersion:
    """One (operator, spec version) as its schema describes it."""

    op: str
    version: int
    attrs: Mapping[str, AttrSpec]
    max_inputs: int
    max_outputs: int
    types: tuple[str, ...]  # element types of X / Y, e.g. ("float16", "float", ...)
    #: The schema's input names, e.g. ("X", "I", "output_shape"), the first ``min_inputs`` required.
    input_names: tuple[str, ...] = ("X",)
    min_inputs: int = 1
    #: Per input, whether it has X's element type (as MaxRoiPool's rois): a Cast pair carries it.
    typed_inputs: tuple[bool, ...] = (True,)

    @property
    def carried_types(self) -> tuple[str, ...]:
        return tuple(t for t in self.types if t in CARRIED_TYPES)

    @property
    def key(self) -> str:
        return f"{self.op}-{self.version}"

    def default(self, name: str, rank: int | None = None) -> Value:
        """The value of ``name`` on a node of this version that does not write it: the schema's
        default, a list attribute's fill for ``rank`` spatial axes, or for an attribute this version
        lacks its :func:`neutral_defaults` value; None for ``kernel_shape`` and ``pooled_shape``."""
        spec = self.attrs.get(name)
        if spec is not None and spec.default is not None:
            return spec.default
        if name in PER_AXIS_DEFAULTS:
            if rank is None:
                raise ValueError(f"the default of {name!r} needs the number of spatial axes")
            return (PER_AXIS_DEFAULTS[name],) * (2 * rank if name == "pads" else rank)
        if spec is None and name in neutral_defaults():
            return neutral_defaults()[name]
        return None


_KINDS = {AttributeProto.INT: "int", AttributeProto.INTS: "ints", AttributeProto.STRING: "string",
          AttributeProto.FLOAT: "float"}


def _attr_spec(attr: onnx.defs.OpSchema.Attribute) -> AttrSpec:
    kind = _KINDS.get(attr.type)
    if kind is None:
        raise ValueError(f"unexpected attribute type {attr.type} for {attr.name}")
    default: Value = None
    proto = attr.default_value
    if proto is not None and proto.name:
        value = onnx.helper.get_attribute_value(proto)
        default = value.decode() if isinstance(value, bytes) else value
    return AttrSpec(attr.name, kind, default, bool(attr.required))


def _op_version(schema: onnx.defs.OpSchema) -> OpVersion:
    type_param = schema.inputs[0].type_str
    (allowed,) = [
        tc.allowed_type_strs for tc in schema.type_constraints if tc.type_param_str == type_param
    ]
    attrs = {name: _attr_spec(a) for name, a in sorted(schema.attributes.items())}
    optional = onnx.defs.OpSchema.FormalParameterOption.Optional
    return OpVersion(op=schema.name, version=schema.since_version, attrs=attrs,
                     max_inputs=len(schema.inputs), max_outputs=len(schema.outputs),
                     types=tuple(t[len("tensor(") : -1] for t in allowed),
                     input_names=tuple(i.name for i in schema.inputs),
                     min_inputs=sum(1 for i in schema.inputs if i.option != optional),
                     typed_inputs=tuple(i.type_str == type_param for i in schema.inputs))


@functools.cache
def all_versions() -> tuple[OpVersion, ...]:
    """Every (operator, since_version) the installed onnx knows, oldest first per operator."""
    found = {(s.name, s.since_version): s for s in onnx.defs.get_all_schemas_with_history()
             if s.domain == "" and s.name in OPERATORS}
    order = sorted(found, key=lambda k: (OPERATORS.index(k[0]), k[1]))
    return tuple(_op_version(found[key]) for key in order)


@functools.cache
def neutral_defaults() -> Mapping[str, Value]:
    """Attributes a later version adds, with the value that does what the versions without it did:
    the schema default of the first version that has it (dilations None: 1 per axis), and
    :data:`ABSENT_DEFAULTS`: how a node of such a version reads, what a lifted node may keep."""
    found: dict[str, Value] = {}
    for opv in all_versions():
        earlier = [v for v in all_versions() if v.op == opv.op and v.version < opv.version]
        for name, spec in opv.attrs.items():
            if earlier and not all(name in v.attrs for v in earlier):
                found.setdefault(name, spec.default)
    return {**found, **ABSENT_DEFAULTS}


@functools.cache
def flags() -> tuple[str, ...]:
    """The 0/1 attributes of any version (an int whose schema default is 0), by name:
    ``("ceil_mode", "count_include_pad", "storage_order")``."""
    return tuple(sorted({name for opv in all_versions() for name, spec in opv.attrs.items()
                         if spec.kind == "int" and spec.default == 0}))


def versions_of(op: str) -> tuple[int, ...]:
    """The spec versions of ``op``, e.g. ``versions_of("MaxUnpool") == (9, 11, 22)``."""
    if op not in OPERATORS:
        raise ValueError(f"unknown pooling operator {op!r}; expected one of {', '.join(OPERATORS)}")
    return tuple(v.version for v in all_versions() if v.op == op)


def get(op: str, version: int) -> OpVersion:
    """The exact spec version ``version`` of ``op`` (not the one in force at an opset)."""
    for v in all_versions():
        if v.op == op and v.version == version:
            return v
    raise ValueError(f"{op} has no spec version {version}; its versions are "
                     f"{', '.join(map(str, versions_of(op)))}")


#: The highest opset onnx can number: its schemas hold a version in a C int.
MAX_OPSET = 2**31 - 1


def resolve(op: str, opset: int) -> OpVersion:
    """The version of ``op`` in force at ``ai.onnx`` opset ``opset``: the highest <= opset."""
    if opset > MAX_OPSET:  # onnx and onnxruntime hold an opset in an int (onnxruntime reads 0)
        raise ValueError(f"ai.onnx opset {opset} is beyond any opset onnx can number (at most "
                         f"{MAX_OPSET})")
    candidates = [v for v in versions_of(op) if v <= opset]
    if not candidates:
        raise ValueError(f"{op} does not exist at ai.onnx opset {opset}")
    return get(op, candidates[-1])
