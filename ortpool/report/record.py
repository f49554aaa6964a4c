"""What a validation finds, as plain dataclasses with ``to_dict`` for the JSON report."""

from __future__ import annotations

import dataclasses
import platform
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ortpool.check import causes
from ortpool.check import status as st
from ortpool.check.cases import FeedSet
from ortpool.check.causes import Basis, Cause, verdict_basis
from ortpool.check.compare import TensorComparison
from ortpool.check.judge import Judgement
from ortpool.model import OpenDim
from ortpool.model.scopes import MAIN_GRAPH
from ortpool.model.site import Site
from ortpool.report.text import clean
from ortpool.tolerances import Tolerance

#: the basis of a difference no cause named (a time-out)
UNNAMED = "no basis named"


def __getattr__(name: str) -> Any:
    """The engine's statuses (:mod:`ortpool.check.status`), read here too (``record.DIFFER``)."""
    if name.startswith("_") or not hasattr(st, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(st, name)


@dataclasses.dataclass
class ReferenceResult:
    """The onnx reference evaluator's answer for a node, compared with ortpool's: why it differs
    or fails named by the engine's causes, as ``--runtime reference`` names them."""

    status: str  # "agree", "differ", "timeout", "error", "skipped"
    message: str = ""
    differing: int = 0
    causes: list[Cause] = dataclasses.field(default_factory=list)
    seconds: float | None = None

    @property
    def basis(self) -> Basis | None:
        return verdict_basis(self.causes)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "message": self.message, "differing": self.differing,
                "causes": [c.to_dict() for c in self.causes],
                "basis": self.basis.to_dict() if self.basis else None, "seconds": self.seconds}


@dataclasses.dataclass
class NodeResult:
    """One pooling node run alone by the runtime judged and by ortpool."""

    name: str
    op: str
    spec_version: int
    opset: int
    dtype: str
    attributes: dict[str, Any]
    input_shapes: list[list[int]]
    status: str
    location: str = MAIN_GRAPH
    comparisons: list[TensorComparison] = dataclasses.field(default_factory=list)
    causes: list[Cause] = dataclasses.field(default_factory=list)
    message: str = ""
    reference: ReferenceResult | None = None
    #: the provider that executed the node alone, and in the whole model's run (partitioning
    #: differs with the neighbours), read from the profile; None when only the CPU was asked
    executed_by: str | None = None
    executed_in_model: str | None = None
    #: the provider asked for first: a node another one executed fell back, its values that one's
    asked_provider: str | None = None
    #: the input domain the verdict covers (ruling 20: "finite" or "non-finite")
    domain: str = "finite"
    #: the engine's judgement on the domain: "" when exact, else where it is not; None: not judged
    judged: str | None = None
    #: in the finite domain, what the non-finite cases show (information, not the verdict): ""
    #: when the runtime agrees there too; None: not run (no float type)
    nonfinite: str | None = None
    #: the built case ``comparisons`` were made on (``ties, X [1, 8, 7, 7]``); "" for the
    #: model's own input
    shown: str = ""
    #: the runtime judged: ``onnxruntime`` or a name of :mod:`ortpool.runtimes`
    runtime: str = "onnxruntime"
    #: the input sets the engine found the spec's outputs on, and their shapes
    sets: int = 0
    shapes: list[list[int]] = dataclasses.field(default_factory=list)
    #: the judgement the record was made of, and the site at the size judged (not serialised)
    judgement: Judgement | None = dataclasses.field(default=None, repr=False, compare=False)
    site: Site | None = dataclasses.field(default=None, repr=False, compare=False)
    #: the non-finite domain's built sets with the spec's outputs, while the model is validated
    #: (the guard's price proves its forms on them; dropped before the result is returned)
    nonfinite_sets: list[FeedSet] | None = dataclasses.field(default=None, repr=False,
                                                            compare=False)

    def __repr__(self) -> str:
        return f"<NodeResult {self.name} {self.op}-{self.spec_version}: {self.status}>"

    def _fell(self, executed: str | None) -> str | None:
        fell = executed not in (None, "?", self.asked_provider) and self.asked_provider
        return executed if fell else None

    @property
    def fell_back_to(self) -> str | None:
        """The provider that executed the node alone when not the one asked for first."""
        return self._fell(self.executed_by)

    def fallbacks(self) -> list[str]:
        """``["fell back to CPUExecutionProvider alone", ...]``."""
        runs = (("alone", self.executed_by), ("in the model", self.executed_in_model))
        return [f"fell back to {e} {where}" for where, e in runs if self._fell(e)]

    @property
    def shown_on(self) -> str:
        """The input set ``comparisons`` were made on when not the model's own."""
        if self.shown or not any(c.code == causes.BUILT_CASE for c in self.causes):
            return self.shown
        return "a built case, X " + ", ".join(str(s) for s in self.input_shapes)

    @property
    def builtin_shapes(self) -> list[list[int]]:
        return [list(c.builtin_shape) for c in self.comparisons]

    @property
    def ortpool_shapes(self) -> list[list[int]]:
        return [list(c.ortpool_shape) for c in self.comparisons]

    def _y_max(self, field: str) -> float | None:
        values = [getattr(c, field) for c in self.comparisons
                  if c.name == "Y" and getattr(c, field) is not None]
        return max(values) if values else None

    @property
    def max_abs(self) -> float | None:
        return self._y_max("max_abs")

    @property
    def max_rel(self) -> float | None:
        return self._y_max("max_rel")

    def count(self, field: str) -> int:
        return sum(getattr(c, field) for c in self.comparisons)

    @property
    def failing(self) -> bool:
        return self.status in st.FAILING

    @property
    def notable(self) -> bool:
        """Shown by default in every view: it does not agree, or its rounding is worth a line."""
        return self.status not in st.AGREEING or self.accuracy_shown

    @property
    def difference(self) -> str:
        """"semantics", "accuracy" (a sum's rounding counted or noted) or "none"."""
        if self.status in st.SEMANTICS:
            return "semantics"
        return "accuracy" if self.status in (st.INACCURATE, st.ACCURACY_NOTE) else "none"

    @property
    def accuracy(self) -> dict[str, Any] | None:
        """Y's rounding figures, for a sum (:func:`ortpool.check.compare.figures`)."""
        return next((c.accuracy for c in self.comparisons if c.name == "Y"), None)

    @property
    def accuracy_shown(self) -> bool:
        """A sum's rounding is reported: a note, beyond the limit or beyond the pairwise bound."""
        acc = self.accuracy
        if acc is None or acc.get("max_error_units") is None:
            return False
        return self.status in (st.ACCURACY_NOTE, st.INACCURATE) or (
            self.status == st.AGREE and acc["max_error_units"] > acc["pairwise_bound_units"])

    @property
    def basis(self) -> Basis | None:
        """What the node's difference breaks (the spec's words, or ruling N); None if it agrees
        (or for a time-out: no cause named)."""
        return verdict_basis(self.causes) if self.failing or self.status == st.RULINGS else None

    @property
    def basis_label(self) -> str:
        basis = self.basis
        return basis.label if basis else UNNAMED

    def to_dict(self) -> dict[str, Any]:
        """The JSON report's node: its fields, its outputs' counts summed (each output's under
        ``outputs``), its causes."""
        plain = ("name", "op", "spec_version", "opset", "dtype", "location", "attributes",
                 "input_shapes", "status", "builtin_shapes", "ortpool_shapes")
        counts = {"compared": "compared", "only_in_one": "only_in_one", "differing": "differing",
                  "ruling_differing": "ruling_differing", "index_ties": "ties",
                  "inaccurate": "inaccurate", "accuracy_noted": "noted"}
        return {
            **{k: getattr(self, k) for k in plain},
            "max_abs_error": self.max_abs, "max_rel_error": self.max_rel, "shown": self.shown_on,
            **{k: self.count(field) for k, field in counts.items()},
            "difference": self.difference, "accuracy": self.accuracy,
            "outputs": [c.to_dict() for c in self.comparisons],
            "causes": [c.to_dict() for c in self.causes], "message": self.message,
            "basis": self.basis.to_dict() if self.basis else None,
            "reference": self.reference.to_dict() if self.reference else None,
            **{k: getattr(self, k) for k in ("executed_by", "executed_in_model",
                                             "asked_provider", "domain", "judged", "nonfinite",
                                             "runtime")},
        }


@dataclasses.dataclass
class OutputResult:
    """One graph output of the whole model, built-in run against ortpool-rewritten run."""

    comparison: TensorComparison
    tolerance: Tolerance = dataclasses.field(default_factory=lambda: Tolerance(0.0, 0.0, True))
    #: how far the built-in run moves at the other optimisation level (information)
    noise: float | None = None

    @property
    def failing(self) -> bool:
        return not self.comparison.agrees

    @property
    def allowed(self) -> float:
        """The difference allowed at the output's largest cells."""
        tol = self.tolerance
        return 0.0 if tol.exact else tol.atol + tol.rtol * tol.magnitude

    @property
    def relative(self) -> float | None:
        """The largest difference relative to the output's magnitude."""
        max_abs, size = self.comparison.max_abs, self.tolerance.magnitude
        return max_abs / size if max_abs is not None and size else None

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.comparison.to_dict(),
            "magnitude": self.tolerance.magnitude, "allowed": self.allowed,
            "max_abs_relative_to_magnitude": self.relative, "onnxruntime_noise": self.noise,
        }


@dataclasses.dataclass
class ModelResult:
    """Everything ``ortpool validate`` found for one model."""

    path: str
    opset: int | None = None
    runtime: str = ""  # the runtime judged, as its title reads
    inputs: dict[str, list[int]] = dataclasses.field(default_factory=dict)
    input_source: str = ""
    #: the dims the model leaves open (symbols, -1), each with the size chosen and its source
    open_dims: list[OpenDim] = dataclasses.field(default_factory=list)
    shape_hint: str = ""  # the --shape options that set them
    nodes: list[NodeResult] = dataclasses.field(default_factory=list)
    outputs: list[OutputResult] = dataclasses.field(default_factory=list)
    end_to_end: str = ""  # "compared", or why not
    #: the runtime could not run the model (not for a missing kernel) while the ortpool-rewritten
    #: model ran: the pools are the only difference between the two
    run_differs: bool = False
    notes: list[str] = dataclasses.field(default_factory=list)
    #: what guarding the nodes that differ on non-finite inputs only costs (ruling 20): in plain
    #: words, with every figure, and the figures (:class:`ortpool.forms.price.GuardPrice`)
    guard_text: str = ""
    guard_detail: str = ""
    guard_cost: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: "" when the model was validated, else COULD_NOT_RUN, CRASHED or TIMED_OUT (exit 2) ...
    outcome: str = ""
    error: str = ""  # ... and why, in one line

    def __repr__(self) -> str:
        """``<ModelResult cnn.onnx: differ, 8 nodes, 1 of 2 outputs differ>``."""
        if self.outcome:
            return f"<ModelResult {self.path}: {self.outcome}: {self.error.partition(chr(10))[0]}>"
        return (f"<ModelResult {self.path}: {self.status}, {len(self.nodes)} nodes, "
                f"{self.outputs_differing} of {len(self.outputs)} outputs differ>")

    def portable(self) -> ModelResult:
        """Itself without the judgements' arrays and the sites' protos (which do not pickle):
        what a worker sends and a report holds, the same whichever way it was made."""
        for node in self.nodes:
            node.judgement = node.site = None
        return self

    @property
    def status(self) -> str:
        """Its ``outcome``, else DIFFER, AGREE or NOT_COMPARED (nothing compared)."""
        if self.outcome or self.failing:
            return self.outcome or st.DIFFER
        return st.AGREE if self.compared else st.NOT_COMPARED

    @property
    def compared(self) -> bool:
        """Something was compared: a graph output, or a node's outputs on some input set."""
        return bool(self.outputs) or any(n.comparisons or n.sets for n in self.nodes)

    @property
    def outputs_differing(self) -> int:
        return sum(1 for o in self.outputs if o.failing)

    @property
    def nonfinite_nodes(self) -> list[NodeResult]:
        """The nodes that differ on NaN/inf inputs only (ruling 20: information)."""
        return [n for n in self.nodes if n.nonfinite]

    @property
    def failing(self) -> bool:
        return (self.run_differs or any(n.failing for n in self.nodes)
                or self.outputs_differing > 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.path, "runtime": self.runtime, "status": self.status,
            "opset": self.opset, "inputs": self.inputs, "input_source": self.input_source,
            "open_dims": [d.to_dict() for d in self.open_dims],
            "nodes": [n.to_dict() for n in self.nodes],
            "end_to_end": {"status": self.end_to_end, "run_differs": self.run_differs,
                           "outputs": [o.to_dict() for o in self.outputs]},
            "notes": self.notes, "guard_cost": self.guard_cost or None, "error": self.error,
            "differs": self.failing,
        }


def all_nodes(models: Sequence[ModelResult]) -> list[NodeResult]:
    return [n for m in models for n in m.nodes]


def bases(nodes: Sequence[NodeResult]) -> dict[str, int]:
    """The differing nodes counted by basis: ``{"spec text": 3, "ruling 7": 2}`` (RULINGS nodes
    are not: the spec gives those cells no value)."""
    return ordered_bases(Counter(n.basis_label for n in nodes if n.failing))


def ordered_bases(counts: Mapping[str, int]) -> dict[str, int]:
    """Counts by basis label: the spec's text, the rulings by number, then :data:`UNNAMED`."""

    def order(key: str) -> tuple[int, int]:
        if key == causes.SPEC_TEXT:
            return (0, 0)
        return (1, int(key.split()[-1])) if key.startswith("ruling ") else (2, 0)

    return {k: counts[k] for k in sorted(counts, key=order) if counts[k]}


def environment() -> dict[str, str]:
    """The versions a report was made with."""
    from ortpool.ort import runtime

    return {**runtime.versions(), "python": platform.python_version()}


def validate_document(models: Sequence[ModelResult], settings: dict[str, Any]) -> dict[str, Any]:
    """The JSON report of ``ortpool validate``: everything the terminal shows and more."""
    return clean({
        "tool": "ortpool validate", "environment": environment(), "settings": settings,
        "status": run_status(models), "differs": any(m.failing for m in models),
        # the differing nodes by what they break: the spec's text, or ruling N
        "bases": bases(all_nodes(models)), "models": [m.to_dict() for m in models],
    })


def run_status(models: Sequence[ModelResult]) -> str:
    """A run's status: its models' most severe (AGREE for none)."""
    found = {m.status for m in models}
    return next((s for s in st.MODEL_ORDER if s in found), st.AGREE)


def exit_code(models: Sequence[ModelResult], fail_on_rulings: bool = False) -> int:
    """2 if a model was not validated, 1 if one differs (or, with ``fail_on_rulings``, has cells
    docs/rulings.md decides), else 0."""
    if any(m.outcome for m in models):
        return 2
    failing = any(m.failing for m in models)
    if fail_on_rulings:
        failing = failing or any(n.status == st.RULINGS for n in all_nodes(models))
    return 1 if failing else 0


def node_record(site: Site, judgement: Judgement, domain: str = "finite") -> NodeResult:
    """The report's record of a node from its judgement."""
    node = NodeResult(
        name=site.name, op=site.op, spec_version=site.version, opset=site.opset,
        dtype=site.elem or "?", attributes=site.attributes,
        input_shapes=judgement.shown_shapes or (
            [list(site.x_dims)] if site.x_dims and None not in site.x_dims else []),
        status=judgement.status, location=site.location, comparisons=judgement.comparisons,
        domain=domain, judged=judgement.failure if judgement.sets or judgement.failure else None,
        runtime=judgement.runtime)
    node.judgement = judgement
    node.sets, node.shapes = judgement.sets, judgement.shapes
    if judgement.comparisons and judgement.shown and not judgement.shown_observed:
        shapes = ", ".join(str(s) for s in judgement.shown_shapes)
        node.shown = f"{judgement.shown}, X {shapes}" if shapes else judgement.shown
    node.causes = causes.of(site, judgement)
    if judgement.status in (st.ORT_REJECTED, st.ORTPOOL_REJECTED, st.BOTH_REJECTED,
                            st.NOT_COMPARED):
        node.message = judgement.failure
    elif judgement.status == st.NO_KERNEL:
        node.message = judgement.failure.removeprefix("onnxruntime refuses it: ")
    if judgement.executed_by:
        node.executed_by = judgement.executed_by.get(site.op) or next(
            iter(judgement.executed_by.values()))
        node.asked_provider = judgement.asked
    return node
