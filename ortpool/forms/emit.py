"""A :class:`~ortpool.forms.plan.Plan` as ONNX nodes, for the opset that governs the node.

One function writes the proof model's nodes and the fixed model's, so what is proven is what is
written. The pool (or its Reduce op, or power-average's AveragePool) keeps the node's name, doc
string and domain; inserted nodes and values are named for their role and marked :data:`MARK`;
constants are ``Constant`` nodes (a function has no initializers). What the opset cannot
express raises :class:`Unwritable`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import onnx.defs
from onnx import TensorProto, helper, numpy_helper

from ortpool import dtypes, versions
from ortpool.forms.plan import GUARD_SUM, Plan
from ortpool.model.fixmarks import MARK
from ortpool.model.scopes import written
from ortpool.model.singlenode import rewired
from ortpool.model.site import Site, check_node, node_name, present
from ortpool.rewrite import retarget


class Unwritable(Exception):
    """The plan needs an op or a type the governing opset does not have."""


def admits(op: str, opset: int, elem: str) -> None:
    """Raise :class:`Unwritable` unless ``op`` exists at ``opset`` and its first input takes
    ``elem``."""
    try:
        schema = onnx.defs.get_schema(op, opset)
    except onnx.defs.SchemaError:
        raise Unwritable(f"{op} does not exist at ai.onnx opset {opset}") from None
    param = schema.inputs[0].type_str if schema.inputs else None
    for constraint in schema.type_constraints:
        if constraint.type_param_str == param:
            if f"tensor({elem})" not in constraint.allowed_type_strs:
                raise Unwritable(
                    f"{op}-{schema.since_version} (opset {opset}) does not take {elem}")
            return


class _Writer:
    """Appends the nodes of one realization, naming every inserted node and value."""

    def __init__(self, node: onnx.NodeProto, opset: int, namer: retarget.Namer, form: str):
        self.node, self.opset, self.namer, self.form = node, opset, namer, form
        self.base = written(node.name or (node.output[0] if node.output else node.op_type))
        self.nodes: list[onnx.NodeProto] = []
        self.domain = node.domain or None

    def value(self, role: str, like: str) -> str:
        return self.namer.fresh(f"{like}__ortpool_fix_{role}")

    def add(self, op: str, inputs: Sequence[str], outputs: Sequence[str], role: str,
            **attrs: Any) -> onnx.NodeProto:
        made = helper.make_node(op, list(inputs), list(outputs), domain=self.domain,
                                name=self.namer.fresh(f"ortpool_fix/{role}/{self.base}"), **attrs)
        made.doc_string = (f"{MARK} inserted by 'ortpool fix' for node "
                           f"{node_name(self.node)!r} (form {self.form})")
        self.nodes.append(made)
        return made

    def op(self, op: str, inputs: Sequence[str], role: str, like: str, **attrs: Any) -> str:
        """``op`` on ``inputs`` into a new value named for ``role``; the value."""
        out = self.value(role, like)
        self.add(op, inputs, [out], role, **attrs)
        return out

    def binary(self, op: str, inputs: Sequence[str], output: str, role: str) -> None:
        """An arithmetic op on a scalar constant (broadcast said before opset 7)."""
        self.add(op, inputs, [output], role, **({"broadcast": 1} if self.opset < 7 else {}))

    def constant(self, role: str, like: str, array: np.ndarray) -> str:
        admits("Constant", self.opset, dtypes.name_of(array.dtype))
        out = self.value(role, like)
        tensor = numpy_helper.from_array(np.asarray(array), name=out)
        self.add("Constant", [], [out], role, value=tensor)
        return out

    def cast(self, source: str, elem: str, role: str, out: str = "") -> str:
        admits("Cast", self.opset, elem)
        out = out or self.value(role, source)
        code = dtypes.CODE[elem]  # Cast-1 takes the type's name
        self.add("Cast", [source], [out], role,
                 to=TensorProto.DataType.Name(code) if self.opset < 6 else code)
        return out

    def pad(self, source: str, pads: Sequence[int], value: float | int, elem: str) -> str:
        """Pad the spatial axes of ``source`` (N and C untouched) with the constant ``value``."""
        admits("Pad", self.opset, elem)
        rank = len(pads) // 2
        full = [0, 0, *pads[:rank], 0, 0, *pads[rank:]]
        out = self.value("pad", source)
        if self.opset >= 11:
            where = self.constant("pads", source, np.asarray(full, np.int64))
            constant = self.constant("pad_value", source,
                                     np.asarray(value, dtype=dtypes.NUMPY[elem]))
            self.add("Pad", [source, where, constant], [out], "pad", mode="constant")
        else:  # Pad-1 calls its pads paddings
            self.add("Pad", [source], [out], "pad", mode="constant", value=float(value),
                     **{"pads" if self.opset >= 2 else "paddings": full})
        return out

    def pool(self, plan: Plan, inputs: Sequence[str], outputs: Sequence[str],
             role: str | None) -> None:
        """The pool node itself (``role`` None: the node's own name, doc string and domain)."""
        if role is None:
            made = rewired(self.node, inputs, outputs)
            self.nodes.append(made)
        else:
            made = self.add(self.node.op_type, inputs, outputs, role)
            if plan.pool is None:
                made.attribute.extend(self.node.attribute)
        if plan.pool is not None:
            del made.attribute[:]
            made.attribute.extend(helper.make_attribute(k, v) for k, v in plan.pool.items())

    def reduce(self, plan: Plan, source: str, output: str, elem: str, rank: int | None,
               role: str) -> None:
        """``plan.reduce`` over the spatial axes of ``source``, keepdims (a norm of another p
        as ``Pow(ReduceSum(Pow(Abs(x), p)), 1/p)``; ``plan.offset`` added at the end)."""
        assert plan.reduce is not None
        if rank is None:
            raise Unwritable("the rank of the input is not known")
        axes = list(range(2, 2 + rank))
        admits(plan.reduce, self.opset, elem)
        if plan.exponent is not None:
            for op in ("Abs", "Pow"):
                admits(op, self.opset, elem)
            magnitude = self.op("Abs", [source], f"{role}_abs", source)
            source = self.power(magnitude, plan.exponent, elem, f"{role}_pow")
        plain = plan.exponent is None and plan.offset is None
        summed = output if plain else self.value(f"{role}_sum", output)
        schema = onnx.defs.get_schema(plan.reduce, self.opset)
        if len(schema.inputs) > 1:  # axes as an input (ReduceSum-13, the others from 18)
            where = self.constant(f"{role}_axes", source, np.asarray(axes, np.int64))
            made = self.add(plan.reduce, [source, where], [summed], role, keepdims=1)
        else:
            made = self.add(plan.reduce, [source], [summed], role, axes=axes, keepdims=1)
        if role == "reduce":  # the pool itself: the Reduce op takes its name and doc string
            made.name, made.doc_string = self.node.name, self.node.doc_string
        if plan.exponent is not None:
            last = output if plan.offset is None else None
            summed = self.power(summed, 1.0 / plan.exponent, elem, f"{role}_root", last)
        if plan.offset is not None:
            admits("Add", self.opset, elem)
            value = self.constant(f"{role}_offset", summed,
                                  np.asarray(plan.offset, dtypes.NUMPY[elem]))
            self.binary("Add", [summed, value], output, f"{role}_offset")

    def power(self, source: str, exponent: float, elem: str, role: str,
              output: str | None = None) -> str:
        """``source ** exponent`` (a scalar constant of the element type)."""
        value = self.constant(f"{role}_exponent", source, np.asarray(exponent, dtypes.NUMPY[elem]))
        out = output or self.value(role, source)
        self.binary("Pow", [source, value], out, role)
        return out

    def power_average(self, plan: Plan, source: str, output: str, elem: str) -> None:
        """``(kvol * AveragePool(|source|^p))^(1/p)`` (see :func:`forms.power_average`)."""
        assert plan.average is not None and plan.exponent is not None
        for op in ("Abs", "AveragePool", "Mul") + ("Pow",) * (plan.exponent != 1.0):
            admits(op, self.opset, elem)
        magnitude = self.op("Abs", [source], "abs", source)
        powered = magnitude
        if plan.exponent != 1.0:
            powered = self.power(magnitude, plan.exponent, elem, "pow")
        averaged = self.op("AveragePool", [powered], "average", output, **dict(plan.average))
        # it takes the node's name, as a Reduce op does: validate finds the form by that name
        self.nodes[-1].name, self.nodes[-1].doc_string = self.node.name, self.node.doc_string
        kvol = float(np.prod(plan.average["kernel_shape"]))
        summed = output if plan.exponent == 1.0 else self.value("sum", output)
        volume = self.constant("kvol", output, np.asarray(kvol, dtypes.NUMPY[elem]))
        self.binary("Mul", [averaged, volume], summed, "sum")
        if plan.exponent != 1.0:
            self.power(summed, 1.0 / plan.exponent, elem, "root", output)

    def core(self, plan: Plan, site: Site, inputs: Sequence[str], outputs: Sequence[str],
             elem: str, role: str | None) -> None:
        if plan.average is not None:
            self.power_average(plan, inputs[0], outputs[0], elem)
        elif plan.reduce is None:
            self.pool(plan, inputs, outputs, role)
        else:
            self.reduce(plan, inputs[0], outputs[0], elem, site.rank, role or "reduce")


def emit(plan: Plan, site: Site, node: onnx.NodeProto, inputs: Sequence[str],
         outputs: Sequence[str], namer: retarget.Namer) -> list[onnx.NodeProto]:
    """The nodes computing ``outputs`` from ``inputs`` (the node's own values, ``""``: absent)
    as ``plan`` says."""
    shaped = rewired(node, inputs, outputs)
    if plan.ortpool:
        return _ortpool(site, shaped, namer)
    if not plan.changes_node:
        return [shaped]
    writer = _Writer(shaped, site.opset, namer, plan.name)
    elem = plan.compute or site.elem
    y = outputs[0]
    indices = outputs[1] if len(outputs) > 1 and plan.keeps_indices else ""
    typed = site.spec.typed_inputs
    inputs = [writer.cast(name, elem, f"cast_in{k or ''}")
              if plan.compute and name and k < len(typed) and typed[k] else name
              for k, name in enumerate(inputs)]
    if plan.reduce is None:
        admits(node.op_type, site.opset, elem)
    pooled_in = inputs[0]
    if plan.pad is not None:
        pooled_in = writer.pad(pooled_in, plan.pad, plan.pad_value, elem)
    last_step = plan.scale is None and not plan.nan_guard and not plan.compute
    result = y if last_step else writer.value("pool", y)
    writer.core(plan, site, [pooled_in, *inputs[1:]], [result, indices] if indices else [result],
                elem, None)
    if plan.scale is not None:
        admits("Mul", site.opset, elem)
        scale = writer.constant("scale", y, plan.scale.astype(dtypes.NUMPY[elem]))
        scaled = y if not plan.nan_guard and not plan.compute else writer.value("scaled", y)
        writer.binary("Mul", [result, scale], scaled, "scale")
        result = scaled
    if plan.nan_guard:
        result = _guard(writer, plan, site, inputs, pooled_in, result, y)
    if plan.compute:
        writer.cast(result, site.elem, "cast_out", y)
    return writer.nodes


def _guard(writer: _Writer, plan: Plan, site: Site, inputs: Sequence[str], padded: str,
           result: str, y: str) -> str:
    """The pool's ``result`` with its non-finite windows mended (``padded``: X as the pool reads
    it). GUARD_SUM: ``F = Where(X < lowest, 0, X + inf)`` summed over each window is ``S``, NaN
    for a NaN tap, +inf for a finite or +inf one, 0 for -inf or padding only: ``Y + (-1 / S)`` is
    NaN, Y itself or -inf. GUARD_MASK: ``M`` (3 for NaN, 1 for -inf, 2 else) pooled by the same
    plan: 3 gives NaN, 1 or below -inf (a MaxRoiPool bin of no element pools to 0: kept)."""
    elem = plan.compute or site.elem
    summed = plan.nan_guard == GUARD_SUM
    ops = ("Add", "Div") if summed else ("IsNaN", "Greater")
    for op in ops:
        admits(op, writer.opset, elem)
    admits("Where", writer.opset, "bool")  # its first input is the condition
    numpy_type = dtypes.NUMPY[elem]

    def const(role: str, value: float) -> str:
        return writer.constant(role, y, np.full((), value, numpy_type))

    source = padded if summed else inputs[0]
    # -inf exactly (NaN compares false), from opset 7 where IsInf is there only from 10
    admits("Less", writer.opset, elem)
    low = const("lowest_finite", float(ml_dtypes.finfo(numpy_type).min))
    is_low = writer.op("Less", [source, low], "isneginf", source)
    out = y if not plan.compute else writer.value("guarded", y)
    if summed:
        raised = writer.op("Add", [source, const("posinf", float("inf"))], "flag_raised", source)
        flag = writer.op("Where", [is_low, const("zero", 0.0), raised], "flag", source)
        total = writer.value("flag_sum", y)
        _sum_windows(writer, plan, site, flag, total, elem)
        correction = writer.op("Div", [const("minus_one", -1.0), total], "correction", y)
        writer.add("Add", [result, correction], [out], "nan_guard")
        return out
    is_nan = writer.op("IsNaN", [source], "isnan", source)
    three, two, one = const("three", 3.0), const("two", 2.0), const("one", 1.0)
    finite = writer.op("Where", [is_low, one, two], "mask_inf", source)
    mask = writer.op("Where", [is_nan, three, finite], "mask", source)
    if plan.pad is not None:
        mask = writer.pad(mask, plan.pad, float("-inf"), elem)
    pooled = writer.value("mask_pool", y)
    writer.core(plan, site, [mask, *inputs[1:]], [pooled], elem, "mask_pool")
    only_low = writer.op("Less", [pooled, const("one_half", 1.5)], "only_neginf", y)
    if site.op == "MaxRoiPool":  # an empty bin (mask 0) keeps the pool's 0
        admits("And", site.opset, "bool")
        some = writer.op("Greater", [pooled, const("half", 0.5)], "nonempty", y)
        only_low = writer.op("And", [only_low, some], "only_neginf_bin", y)
    low = const("neginf", float("-inf"))
    mended = writer.op("Where", [only_low, low, result], "neginf_mended", y)
    has_nan = writer.op("Greater", [pooled, const("two_half", 2.5)], "has_nan", y)
    writer.add("Where", [has_nan, const("nan", float("nan")), mended], [out], "nan_guard")
    return out


def _sum_windows(writer: _Writer, plan: Plan, site: Site, flag: str, total: str,
                 elem: str) -> None:
    """``flag`` summed (up to the kernel volume, which -1/total does not see) over each window
    into ``total``: an AveragePool counting padding as 0, a global pool's ReduceSum."""
    if plan.reduce is not None or site.op == "GlobalMaxPool":
        writer.reduce(Plan("sum", reduce="ReduceSum"), flag, total, elem, site.rank, "flag_sum")
        return
    average = versions.resolve("AveragePool", writer.opset)
    if "count_include_pad" not in average.attrs:
        raise Unwritable(f"{average.key} cannot count padding as 0")
    admits("AveragePool", writer.opset, elem)
    written = {attr.name: helper.get_attribute_value(attr) for attr in writer.node.attribute}
    # the window's attributes, not MaxPool's own (storage_order): those AveragePool declares
    pool = plan.pool if plan.pool is not None else written
    attrs = {name: value for name, value in pool.items() if name in average.attrs}
    if all(int(d) == 1 for d in attrs.get("dilations", [])):
        attrs.pop("dilations", None)
    writer.add("AveragePool", [flag], [total], "flag_sum", count_include_pad=1, **attrs)


def _ortpool(site: Site, shaped: onnx.NodeProto, namer: retarget.Namer) -> list:
    """ortpool's op through the rewriter's own retargeting (Casts for half types included)."""
    rank = site.rank
    attrs = check_node(shaped, site.spec, None if rank is None else rank + 2)
    shaped_site = dataclasses.replace(site, node=shaped, attrs=attrs, inputs=present(shaped.input),
                                      outputs=present(shaped.output))
    if site.elem not in site.spec.types:
        raise Unwritable(f"{site.spec.key} does not take {site.elem}")
    cast_from = None
    if site.elem not in site.spec.carried_types:
        if site.elem not in versions.CAST_TYPES:
            raise Unwritable(f"element type {site.elem} cannot be carried into a Python op")
        cast_from = dtypes.CODE[site.elem]
    return retarget.to_ortpool(shaped_site, cast_from, namer)
