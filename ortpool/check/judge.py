"""The judgement of one node: a model of it run on its inputs and compared with the spec.

A model of the node (the node as it is, :func:`node_as_is`, or a form ``fix`` wrote) is *exact*
on a runtime when, on every input set of :mod:`ortpool.check.cases` (the domain's, ruling 20),
the runtime's outputs equal the spec's (ruling 16): bit for bit for max and unpool values and for
Indices where they are used (ties are not forgiven: a different index is a different result for a
MaxUnpool downstream), and for averages and norms within ruling 17's accuracy rule
(:mod:`ortpool.tolerances`): an accuracy note is exact, as ``validate`` calls it agreeing. The
session runs at the runtime's optimization level, so a graph optimizer that folds a form back into
what the runtime gets wrong (PadFusion) is caught; the run is then repeated with optimizations
off to say so (:func:`prove`).

:func:`judge_node` is the one decision "does onnxruntime compute this node exactly, in this
domain, on this runtime": ``validate``'s verdict and ``fix``'s "unchanged" both call it.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper

from ortpool import dtypes
from ortpool.check.cases import FeedSet
from ortpool.check.compare import compare_values
from ortpool.check.node import NodeFacts
from ortpool.model import carry
from ortpool.model.singlenode import INPUT_NAMES, node_model
from ortpool.ort import runtime_spec
from ortpool.ort.opening import open_session, optimized
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule, node_tolerance, tolerance_for

#: A model of the node for inputs shaped as the given example arrays.
Build = Callable[[Sequence[np.ndarray]], onnx.ModelProto]


@dataclasses.dataclass
class Proof:
    """How a realization fared: exact or not, on what, and by how much it missed."""

    exact: bool
    where: str = "isolation"  # "isolation" (the node alone) or "model" (in the fixed model)
    sets: int = 0
    shapes: list[list[int]] = dataclasses.field(default_factory=list)
    tolerance: str = "exact"
    max_abs: float | None = None
    max_rel: float | None = None
    differing: int = 0
    failure: str = ""
    folded: bool = False  # right with graph optimizations off: the optimizer undid the form
    #: op type -> the provider that executed it in the proof runs, when another provider than
    #: the CPU one alone was asked for (read from the session's profile); a compiled subgraph
    #: is named by its op type (``OpenVINO-EP-subgraph_1``)
    executed_by: dict[str, str] = dataclasses.field(default_factory=dict)
    #: the provider asked for first: ops another one executed fell back
    asked: str = ""
    #: a sum's worst rounding over the sets, in u*mean|x| (and ulp), when beyond the agree band:
    #: an accuracy note (ruling 17), accepted
    noted_units: float | None = None
    noted_ulp: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def passed(self, feed: FeedSet) -> None:
        """Count ``feed`` as one more set the realization gives the spec's outputs on."""
        self.sets += 1
        if list(feed.shape) not in self.shapes:
            self.shapes.append(list(feed.shape))

    def describe(self) -> str:
        if self.exact:
            err = "" if self.max_abs in (None, 0.0) else f", max abs error {self.max_abs:.3g}"
            if self.noted_units is not None:
                err += (f"; accuracy note: up to {self.noted_ulp:.3g} ulp = "
                        f"{self.noted_units:.3g} u*mean|x|, within the accuracy limit")
            return f"exact on {self.sets} input sets ({self.tolerance}{err}){self.placement()}"
        return self.failure

    def placement(self) -> str:
        """`` on OpenVINOExecutionProvider``, or where some ops ran on another provider than
        the one asked first, ``; MaxPool fell back to CPUExecutionProvider``."""
        if not self.executed_by:
            return ""
        fell = {op: ep for op, ep in self.executed_by.items() if ep != self.asked}
        if not fell:
            return f" on {self.asked}"
        by_provider: dict[str, list[str]] = {}
        for op, ep in fell.items():
            by_provider.setdefault(ep, []).append(op)
        return "; " + "; ".join(
            f"{', '.join(ops)} fell back to {ep}" for ep, ops in by_provider.items()
        )


def compare(
    facts: NodeFacts,
    feed: FeedSet,
    got: Sequence[np.ndarray],
    proof: Proof,
    rule: AccuracyRule = DEFAULT_RULE,
) -> str:
    """Compare one set's outputs with the spec's; the failure text, or "" when exact (an
    accuracy note included: ruling 17 under ``rule``)."""
    want = feed.expected or []
    tol = tolerance_for(facts.op, facts.elem)
    if want:
        tol = node_tolerance(facts.op, facts.version, facts.elem, feed.arrays[0], want[0],
                             facts.attributes, rule=rule)
    proof.tolerance = tol.describe()
    y, expected_y = carry.feedable(np.asarray(got[0])), carry.feedable(want[0])
    if y.dtype != expected_y.dtype:
        return f"Y is {y.dtype}, the spec's is {expected_y.dtype} (on {feed.label})"
    if y.shape == expected_y.shape and np.array_equal(y, expected_y, equal_nan=y.dtype.kind == "f"):
        # the same bits (NaN where the spec's is NaN): nothing to measure (most sets, and the
        # full comparison's categories are what a proof spends most of its time on otherwise)
        proof.max_abs = proof.max_abs or 0.0
        return _compare_indices(facts, feed, got, want, proof)
    comp = compare_values("Y", facts.elem, y, expected_y, tol)
    for field in ("max_abs", "max_rel"):
        value = getattr(comp, field)
        if value is not None:
            old = getattr(proof, field)
            setattr(proof, field, value if old is None else max(old, value))
    if comp.shapes_differ:
        return (
            f"Y has shape {list(comp.builtin_shape)}, the spec's is {list(comp.ortpool_shape)} "
            f"(on {feed.label}, X {list(feed.shape)})"
        )
    if comp.differing or comp.inaccurate:
        wrong = comp.differing + comp.inaccurate
        proof.differing += wrong
        example = comp.examples[0] if comp.examples else {}
        case = feed.case_at(example.get("at"))
        accuracy = ""
        if comp.inaccurate and comp.accuracy:
            accuracy = (f"; {comp.inaccurate} beyond the accuracy limit, up to "
                        f"{comp.accuracy['max_error_units']:.3g} u*mean|x|")
        return (
            f"Y differs in {wrong} of {comp.compared} cells (on {feed.label}, X "
            f"{list(feed.shape)}; e.g. at {example.get('at')}"
            f"{f' ({case})' if case else ''}: {example.get('onnxruntime')} "
            f"instead of {example.get('ortpool')}{accuracy})"
        )
    if comp.noted and comp.accuracy:
        units, ulps = comp.accuracy["max_error_units"], comp.accuracy["max_error_ulp"]
        proof.noted_units = max(proof.noted_units or 0.0, units or 0.0)
        proof.noted_ulp = max(proof.noted_ulp or 0.0, ulps or 0.0)
    return _compare_indices(facts, feed, got, want, proof)


def _compare_indices(
    facts: NodeFacts, feed: FeedSet, got: Sequence[np.ndarray], want: Sequence[np.ndarray],
    proof: Proof,
) -> str:
    """The Indices output against the spec's where the node's are used; "" when equal."""
    if facts.indices_used and len(want) > 1:
        if len(got) < 2:
            return "the realization gives no Indices"
        indices = np.asarray(got[1])
        if indices.shape != want[1].shape or not np.array_equal(indices, want[1]):
            same_shape = indices.shape == want[1].shape
            wrong = int((indices != want[1]).sum()) if same_shape else indices.size
            proof.differing += wrong
            where = ""
            if same_shape:
                at = [int(v) for v in np.argwhere(indices != want[1])[0]]
                case = feed.case_at(at)
                where = (f"; e.g. at {at}{f' ({case})' if case else ''}: {indices[tuple(at)]} "
                         f"instead of {want[1][tuple(at)]}")
            return (f"Indices differ in {wrong} cells (on {feed.label}, X {list(feed.shape)}"
                    f"{where})")
    return ""


def shape_groups(sets: Sequence[FeedSet]) -> list[list[FeedSet]]:
    """Input sets grouped by their shapes (one session per group, inputs declared static)."""
    groups: dict[tuple, list[FeedSet]] = {}
    for feed in sets:
        groups.setdefault(tuple(a.shape for a in feed.arrays), []).append(feed)
    return list(groups.values())


def run_group(
    session: Any,
    facts: NodeFacts,
    group: Sequence[FeedSet],
    proof: Proof,
    rule: AccuracyRule = DEFAULT_RULE,
) -> str:
    """Run ``session`` on each set of ``group`` and compare; the first failure, or "" (the
    sets and shapes proven are counted in ``proof``)."""
    names = [o.name for o in session.get_outputs()]
    inputs = session.get_inputs()
    for feed in group:
        try:
            arrays = zip(inputs, feed.arrays, strict=True)
            feeds = {i.name: carry.feedable(a) for i, a in arrays}
            got = session.run(names, feeds)
        except Exception as err:
            return f"the run fails on {feed.label}: {short_error(err)}"
        failure = compare(facts, feed, got, proof, rule)
        if failure:
            return failure
        proof.passed(feed)
    return ""


def run_sets(
    build: Build,
    facts: NodeFacts,
    sets: Sequence[FeedSet],
    runtime: RuntimeSpec,
    level: str | None,
    rule: AccuracyRule = DEFAULT_RULE,
) -> Proof:
    """The model ``build`` makes for each shape of ``sets``, run on every set at ``level`` (None:
    the runtime's) and compared with the spec's outputs: exact when every set gave them."""
    proof = Proof(exact=False)
    # Where onnxruntime may run the form on another provider than the first asked (it falls
    # back silently), the proof says which executed each op.
    placed = runtime.provider_names != [runtime_spec.CPU]
    for group in shape_groups(sets):
        model = build(group[0].arrays)
        folder = runtime_spec.profile_dir() if placed else None
        try:
            failure = _run_group_placed(runtime, model, level, folder, facts, group, proof, rule)
        finally:
            # read or not (a refusal, a failing set), the profile goes: a process ended by
            # os._exit (validate's children) never runs the atexit cleanup of its folders
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
        if failure:
            proof.failure = failure
            return proof
    proof.exact = proof.sets > 0
    if not proof.exact:
        proof.failure = "no input set could be run"
    return proof




def _run_group_placed(
    runtime: RuntimeSpec,
    model: onnx.ModelProto,
    level: str | None,
    folder: str | None,
    facts: NodeFacts,
    group: Sequence[FeedSet],
    proof: Proof,
    rule: AccuracyRule,
) -> str:
    """One session of ``model`` run on ``group``: the first failure, or ""; with a profile
    ``folder``, which provider executed each op goes into ``proof``."""
    try:
        session = open_session(runtime, model, level=level, threads=1, profile_dir=folder)
    except Exception as err:  # onnxruntime raises its own types; every one is a refusal
        return f"onnxruntime refuses it: {short_error(err)}"
    failure = run_group(session, facts, group, proof, rule)
    if not failure and folder is not None:
        proof.asked = runtime.first
        for _, op_type, provider in runtime_spec.profile_events(session):
            if op_type != "Cast":  # the carrying Casts are no part of the form
                proof.executed_by[op_type] = provider
    return failure


def value_info(name: str, array: np.ndarray, static: bool) -> onnx.ValueInfoProto:
    """A graph input typed as ``array`` (its shape when ``static``, else every dim open)."""
    shape = list(array.shape) if static else [None] * array.ndim
    return helper.make_tensor_value_info(name, dtypes.CODE[dtypes.name_of(array.dtype)], shape)


def frame(
    facts: NodeFacts, example: Sequence[np.ndarray], with_indices: bool
) -> tuple[list[onnx.ValueInfoProto], list[onnx.ValueInfoProto]]:
    """The inputs (X, I, output_shape; MaxRoiPool's rois as I) shaped as ``example`` and the
    outputs (Y, and Indices ``with_indices``) of an isolated model of the node."""
    inputs = [value_info(INPUT_NAMES[i], a, True) for i, a in enumerate(example)]
    outputs = [helper.make_tensor_value_info("Y", dtypes.CODE[facts.elem], None)]
    if with_indices:
        outputs.append(helper.make_tensor_value_info("Indices", onnx.TensorProto.INT64, None))
    return inputs, outputs


def node_as_is(
    facts: NodeFacts, node: onnx.NodeProto, example: Sequence[np.ndarray]
) -> onnx.ModelProto:
    """The node as it stands (its attributes, name and domain) alone, at its governing opset,
    reading X (I, output_shape) shaped as ``example``; bfloat16 carried as float32 (onnxruntime's
    Python API has no bfloat16 array)."""
    has_indices = len([o for o in node.output if o]) > 1
    inputs, outputs = frame(facts, example, has_indices)
    wired = onnx.NodeProto()
    wired.CopyFrom(node)
    del wired.input[:]
    del wired.output[:]
    wired.input.extend(v.name for v in inputs)
    wired.output.extend(v.name for v in outputs)
    imports = [helper.make_opsetid(node.domain or "", facts.opset)]
    return carry.carry(node_model([wired], "ortpool_check", inputs, outputs, imports))


def prove(
    build: Build,
    facts: NodeFacts,
    sets: Sequence[FeedSet],
    runtime: RuntimeSpec,
    rule: AccuracyRule = DEFAULT_RULE,
) -> Proof:
    """Run ``build``'s model on every set at the runtime's level; not exact at that level but
    exact with optimizations off means the optimizer changed it (``folded``). Sums are judged by
    ruling 17 under ``rule``."""
    proof = run_sets(build, facts, sets, runtime, None, rule)
    if not proof.exact and runtime.level != "disable" and sets:
        plain = run_sets(build, facts, sets, runtime, "disable", rule)
        if plain.exact:
            proof.folded = True
            proof.failure = (
                f"{proof.failure} -- exact with graph optimizations off: "
                f"{optimizer_change(build(sets[0].arrays), runtime)}"
            )
    return proof


def judge_node(
    facts: NodeFacts,
    node: onnx.NodeProto,
    sets: Sequence[FeedSet],
    runtime: RuntimeSpec,
    rule: AccuracyRule = DEFAULT_RULE,
) -> Proof:
    """Whether the runtime computes ``node`` as it is exactly on ``sets`` (the node's inputs in
    one domain, :func:`ortpool.check.cases.proof_sets`): ``validate``'s verdict and ``fix``'s
    decision to leave the node unchanged."""
    return prove(lambda example: node_as_is(facts, node, example), facts, sets, runtime, rule)


def optimizer_change(model: onnx.ModelProto, runtime: RuntimeSpec) -> str:
    """What onnxruntime's optimizer at the runtime's level made of ``model``, in words: a Pad
    folded into the pool (PadFusion), the pool run as a layout kernel (NCHWc), or the ops
    before and after."""
    try:
        after = optimized(runtime, model)
    except Exception as err:  # the optimized graph could not be written: say so, guess nothing
        return (f"onnxruntime's optimizer (level {runtime.level}) changes it (its graph could "
                f"not be read back: {short_error(err)})")
    head = f"onnxruntime's optimizer (level {runtime.level})"
    ops_before = [n.op_type for n in model.graph.node]
    ops_after = [n.op_type for n in after.graph.node]
    layouts = sorted({f"{n.domain} {n.op_type}" for n in after.graph.node
                      if n.domain.endswith("nchwc") and not n.op_type.startswith("Reorder")})
    if "Pad" in ops_before and ops_after.count("Pad") < ops_before.count("Pad"):
        return f"{head} folds the Pad into the pool after it (PadFusion)"
    if layouts:
        return (f"{head} runs it as {', '.join(layouts)} (its NCHWc layout kernels), which "
                "computes it otherwise")
    return f"{head} rewrites {'+'.join(ops_before)} as {'+'.join(ops_after) or 'nothing'}"


def short_error(err: Exception) -> str:
    """onnxruntime's error as one line, its source location and status prefix left out."""
    from ortpool.ort.ortrun import classify

    return str(classify(err, "load"))[:400]
