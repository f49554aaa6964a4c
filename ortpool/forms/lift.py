"""Raising a model's ai.onnx opset where that changes nothing it means (docs/fix.md, "The opset
lift"): onnxruntime lacks Cast below opset 6, IsNaN below 9, a Pad constant PadFusion leaves alone
below 11, and AveragePool-1, LpPool-1, GlobalLpPool-1, and inlines a function at the model's own
opset. So the model is lifted where every node keeps its meaning (:data:`SAME_MEANING`,
:func:`renotation`, :func:`reemission`); :func:`lift_and_fix` takes the first lift that helps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

import onnx
import onnx.defs
from onnx import helper

from ortpool import versions
from ortpool.attributes import attribute_values
from ortpool.model.inputs import PYTHON
from ortpool.model.scopes import AI_ONNX, ai_onnx_opset, model_scopes
from ortpool.model.site import read_values as _read_values
from ortpool.report.outcomes import Realization
from ortpool.versions import OpVersion

if TYPE_CHECKING:  # annotations only: validate's workers need no fix report (nor its views)
    from ortpool.report import fixes as report_mod

#: Pooling operators whose versions differ only in attributes and types (MaxUnpool's do not:
#: version 11 changed what ``output_shape`` means).
REEMITTABLE = ("MaxPool", "AveragePool", "LpPool", "GlobalMaxPool", "GlobalAveragePool",
               "GlobalLpPool", "MaxRoiPool")
#: The name the report gives a realization that needed the lift.
OPSET_LIFT = "opset-lift"
#: The opsets a lift may target: Cast from 6, IsNaN/Where from 9, IsInf from 10, Pad's
#: constant as an input from 11 (a -0.0 there is not folded back as Pad-2's float attribute is).
TARGETS = (6, 7, 8, 9, 10, 11)


def _since(op: str, opset: int) -> int | None:
    try:
        return onnx.defs.get_schema(op, opset, "").since_version
    except onnx.defs.SchemaError:
        return None


def reemission(node: onnx.NodeProto, old: OpVersion, new: OpVersion, elem: str | None) -> str:
    """Why ``node`` (of ``old``) does not mean the same as ``new``; "" when it does: the same
    attributes and values, the ones ``new`` adds at defaults doing what ``old`` did, a float
    ``p`` that is a whole number (rulings 1-3, 8, 12-14 give these versions one semantics)."""
    if old.op not in REEMITTABLE:
        return f"{old.op}'s versions differ in meaning"
    if elem is not None and elem not in new.types:
        return f"{new.key} does not take {elem}"
    values = attribute_values(node.attribute)
    for name, spec in old.attrs.items():
        if name not in new.attrs:
            return f"{new.key} has no attribute {name!r}"
        if new.attrs[name].kind != spec.kind and not (name == "p" and spec.kind == "float"):
            kinds = f"{spec.kind} in {old.key}, {new.attrs[name].kind} in {new.key}"
            return f"attribute {name!r} is {kinds}"
    if "p" in old.attrs and old.attrs["p"].kind == "float" and new.attrs["p"].kind == "int":
        p = float(values.get("p", old.default("p")))
        if not p.is_integer():
            return f"p={p:g} is not a whole number ({new.key} takes an int)"
    for name in set(new.attrs) - set(old.attrs):
        if name not in versions.neutral_defaults():
            return f"{new.key} adds attribute {name!r}"
    return ""


_REDUCE_OPS = ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd", "ReduceL1",
               "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")
#: Version steps (old, new) of other ops that change notation, not meaning (:func:`renotation`
#: adds Dropout's and BatchNormalization's conditions): types added, negative axes or indices
#: accepted, an input made optional, broadcasting. Ops whose attributes become inputs (Pad,
#: Clip, Slice, TopK, Upsample) and opset 7's arithmetic are not listed: a lift stops there.
SAME_MEANING: dict[str, tuple[tuple[int, int], ...]] = {
    "Gemm": ((7, 9), (9, 11)),  # 9: integer types; 11: C optional
    "Concat": ((4, 11),),  # negative axis
    "Flatten": ((1, 9), (9, 11)),  # types; negative axis
    "Softmax": ((1, 11),), "LogSoftmax": ((1, 11),), "Hardmax": ((1, 11),),  # negative axis
    "Squeeze": ((1, 11),), "Unsqueeze": ((1, 11),),  # negative axes
    "Gather": ((1, 11),),  # negative indices
    "Constant": ((1, 9), (9, 11)),  # types; sparse_value added
    "Cast": ((6, 9),),  # string types
    "Sum": ((6, 8),), "Max": ((6, 8),), "Min": ((6, 8),), "Mean": ((6, 8),),  # broadcasting
    "PRelu": ((7, 9),), "MatMul": ((1, 9),), "Greater": ((7, 9),), "Less": ((7, 9),),  # types
    "Equal": ((7, 11),),  # types
    "Conv": ((1, 11),),  # the same op, documented again
    "ArgMax": ((1, 11),), "ArgMin": ((1, 11),), "Split": ((2, 11),),  # negative axis
    **{op: ((1, 11),) for op in _REDUCE_OPS},  # negative axes
    # inference: is_test=1 said at 6 what 7 always means; 10 types the mask bool (unused here)
    "Dropout": ((6, 7), (7, 10)),
    # inference: is_test=1 at 6; spatial=1 (per channel) at 7 is what 9 always computes
    "BatchNormalization": ((6, 7), (7, 9)),
}


def _steps(op: str, before: int, after: int) -> bool:
    """Whether ``op`` goes from version ``before`` to ``after`` through listed steps only."""
    at = before
    for old, new in SAME_MEANING.get(op, ()):
        if old == at and new <= after:
            at = new
    return at == after


def renotation(node: onnx.NodeProto, before: int, after: int, read: set[str]) -> str:
    """Why the non-pooling ``node`` (version ``before``) does not mean the same at version
    ``after`` (a step :data:`SAME_MEANING` lists); "" when it does (``read``: every value read
    in the model)."""
    values = attribute_values(node.attribute)
    training = before < 7 and int(values.get("is_test", 0)) != 1
    if node.op_type in ("Dropout", "BatchNormalization") and training:
        return f"node {node.name!r} ({node.op_type}-{before}) is not in inference (is_test=0)"
    if node.op_type == "Dropout" and len(node.output) > 1 and node.output[1] in read:
        return f"node {node.name!r} (Dropout-{before}): its mask output is read"
    if node.op_type == "BatchNormalization" and int(values.get("spatial", 1)) != 1:
        return f"node {node.name!r} (BatchNormalization-{before}) normalizes per element"
    if node.op_type == "BatchNormalization" and any(o in read for o in node.output[1:]):
        return f"node {node.name!r} (BatchNormalization-{before}): a training output is read"
    return ""


def _renote(node: onnx.NodeProto) -> str:
    """``node`` written for its new version (see :func:`renotation`); what changed."""
    dropped = [a.name for a in node.attribute if a.name in ("is_test", "spatial")]
    kept = [a for a in node.attribute if a.name not in dropped]
    del node.attribute[:]
    node.attribute.extend(kept)
    unused = [o for o in node.output[1:] if o] if node.op_type in (
        "Dropout", "BatchNormalization") else []
    if unused:
        del node.output[1:]
    changes = [f"{name} dropped" for name in dropped]
    changes += [f"unused output {name!r} dropped" for name in unused]
    return ", ".join(changes)


def _nodes(model: onnx.ModelProto) -> Iterator[tuple[onnx.NodeProto, int | None]]:
    for scope in model_scopes(model):
        for node in scope.nodes:
            if node.domain in AI_ONNX:
                yield node, scope.opset


def blocked(model: onnx.ModelProto, target: int, elems: dict[str, str],
            pinned: dict[str, int] | None = None) -> str:
    """Why ``model`` cannot be lifted to ai.onnx opset ``target``; "" when it can (``elems``:
    pooling node -> element type). A global pool or LpPool whose meaning changes is pinned to its
    version instead (a form replaces it), named in ``pinned`` (name -> version)."""
    read = _read_values(model)
    for node, opset in _nodes(model):
        if opset is None or opset >= target:
            return f"the model imports ai.onnx opset {opset}, not below {target}"
        before, after = _since(node.op_type, opset), _since(node.op_type, target)
        if before == after:
            continue
        if node.op_type in versions.OPERATORS and before is not None and after is not None:
            why = reemission(node, versions.get(node.op_type, before),
                             versions.get(node.op_type, after), elems.get(node.name))
            if why and pinned is not None and node.name and node.name not in pinned \
                    and node.op_type in (*versions.GLOBAL_OPERATORS, "LpPool"):
                pinned[node.name], why = before, ""
            if why:
                return f"node {node.name!r}: {why}"
            continue
        if before is None or after is None or not _steps(node.op_type, before, after):
            return (f"node {node.name!r} ({node.op_type}) is version {before} at opset {opset} "
                    f"and {after} at {target}")
        why = renotation(node, before, after, read)
        if why:
            return why
    return ""


def lifted(model: onnx.ModelProto, target: int,
           pinned: dict[str, int] | None = None) -> tuple[onnx.ModelProto, list[str]]:
    """A copy of ``model`` at ai.onnx opset ``target`` (check :func:`blocked` first), its nodes
    written for their versions there but the ``pinned`` ones; and what became of them."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    old = ai_onnx_opset(copy.opset_import)
    for imports in (copy.opset_import, *(f.opset_import for f in copy.functions)):
        for entry in imports:
            if entry.domain in AI_ONNX:
                entry.version = target
    done = []
    for node, _ in _nodes(copy):
        before, after = _since(node.op_type, old), _since(node.op_type, target)
        if before == after:
            continue
        if node.op_type not in versions.OPERATORS:
            change = _renote(node)
            if change:
                done.append(f"{node.name!r} {node.op_type}-{before} as {node.op_type}-{after}, "
                            f"{change}")
            continue
        if node.name in (pinned or {}):
            done.append(f"{node.name!r} kept as {node.op_type}-{before} (replaced by a form)")
            continue
        change = ""
        for attr in node.attribute:
            if attr.name == "p" and attr.type == onnx.AttributeProto.FLOAT:
                change = f", p={attr.f:g} as an int"
                attr.CopyFrom(helper.make_attribute("p", int(attr.f)))
        done.append(f"{node.name!r} {node.op_type}-{before} as {node.op_type}-{after}{change}")
    copy.ir_version = max(copy.ir_version, helper.find_min_ir_version_for(
        [helper.make_opsetid("", target)]))
    return copy, done


#: One fix of a model at its own opsets, the pinned nodes (name -> version) at theirs.
FixOnce = Callable[[onnx.ModelProto, Mapping[str, int] | None],
                   tuple[onnx.ModelProto, "report_mod.FixReport"]]


def _score(report: report_mod.FixReport) -> tuple[int, int]:
    return len(report.unproven), len(report.needs_ortpool)


def lift_and_fix(model: onnx.ModelProto, fixed: onnx.ModelProto, report: report_mod.FixReport,
                 fix_once: FixOnce, allowed: bool = True
                 ) -> tuple[onnx.ModelProto, report_mod.FixReport]:
    """``fixed`` and its ``report``, or, where nodes stay unproven or need ortpool's op, the
    first lift of ``model`` (:func:`blocked`) that ``fix_once`` fixes with fewer such nodes
    (``allowed`` False, ``--no-opset-lift``: the report says a lift may help)."""
    opset = ai_onnx_opset(model.opset_import)
    if _score(report) == (0, 0) or opset is None or opset >= TARGETS[-1]:
        return fixed, report
    if not allowed:
        told = "lift_opset=False" if report.style == PYTHON else "--no-opset-lift"
        report.notes.append(f"the ai.onnx opset {opset} was kept ({told}): a lift may realize "
                            "more nodes")
        return fixed, report
    elems = {n.name: n.elem for n in report.nodes if n.elem}
    reasons = []
    for target in TARGETS:
        if target <= opset:
            continue
        pinned: dict[str, int] = {}
        why = blocked(model, target, elems, pinned)
        if why:
            reasons.append(f"{target}: {why}")
            continue
        copy, reemitted = lifted(model, target, pinned)
        lifted_fixed, lifted_report = fix_once(copy, pinned)
        if _score(lifted_report) < _score(report):
            _mark_lifted(report, lifted_report, target)
            lifted_report.notes.insert(0, (
                f"ai.onnx opset lifted from {opset} to {target}, where every node keeps its "
                f"meaning (onnxruntime runs there what it cannot at opset {opset})"
                + (f"; {', '.join(reemitted)}" if reemitted else "")))
            fixed, report = lifted_fixed, lifted_report
            if _score(report) == (0, 0):
                break
    if reasons and ai_onnx_opset(fixed.opset_import) == opset:
        report.notes.append(f"the opset could not be lifted to {reasons[0]}")
    return fixed, report


def _mark_lifted(plain: report_mod.FixReport, lifted_report: report_mod.FixReport,
                 target: int) -> None:
    """Each node of the lifted model's report as the user wrote it (its own version), its
    realization including the lift: a node left as it is is now written at another opset."""
    for before, node in zip(plain.nodes, lifted_report.nodes, strict=True):
        if node.version != before.version:
            node.why = f"{node.why}; {node.op}-{before.version} written as {node.key}".lstrip("; ")
            node.version = before.version
        if node.realization == Realization.UNCHANGED:
            node.realization, node.form = Realization.FORM, OPSET_LIFT
            node.why = f"the node at ai.onnx opset {target}; {node.why}".rstrip("; ")
        elif node.realization == Realization.FORM:
            node.form = f"{node.form}+{OPSET_LIFT}"
