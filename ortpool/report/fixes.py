"""What ``ortpool fix`` did to each pooling node (its realization, the proof, every candidate
tried), as the terminal summary, the ``--json`` document and the exit code."""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import onnx

from ortpool import values
from ortpool.dtypes import FLOATS
from ortpool.model.files import save
from ortpool.model.inputs import CLI, PYTHON, describe_dims
from ortpool.report.notebook import Report
from ortpool.report.outcomes import Attempt, Outcome, Realization
from ortpool.report.text import Printed, plural, safe, tally

#: The realizations by their short names, in the order the summary counts them.
UNCHANGED, FORM, ORTPOOL, UNPROVEN, NOT_SELECTED = REALIZATIONS = tuple(Realization)

EXIT_EXACT, EXIT_NEEDS_ORTPOOL, EXIT_ERROR = 0, 1, 2


@dataclasses.dataclass
class NodeFix:
    """One pooling node."""

    name: str
    location: str
    op: str
    version: int | None
    elem: str | None
    realization: Realization
    form: str | None = None
    why: str = ""
    shapes: str = ""  # "static [..]" or why the sizes were sampled
    proof: dict[str, Any] | None = None  # the winning proof (alone)
    in_model: dict[str, Any] | None = None  # the proof in the fixed model, where it was run
    attempts: list[Attempt] = dataclasses.field(default_factory=list)
    reason: str = ""  # for unproven / not selected

    @property
    def key(self) -> str:
        return f"{self.op}-{self.version}" if self.version is not None else self.op

    def describe(self, verbose: bool = False) -> str:
        """``node 'p' (MaxPool-12, float): form explicit-pads -- exact on 5 input sets ...``."""
        where = f"node {self.name!r} ({self.key}{', ' + self.elem if self.elem else ''})"
        if self.realization in (UNPROVEN, NOT_SELECTED):
            # a selection's reason says "not selected" itself
            why = self.reason.removeprefix(f"{self.realization}: ")
            return f"{where}: {self.realization}: {why}"
        head = {UNCHANGED: "unchanged", FORM: f"form {self.form}", ORTPOOL: "ortpool op"}
        text = f"{where}: {head[self.realization]}"
        if self.proof:
            text += f" -- {proof_text(self.proof, self.in_model, verbose)}"
        return text

    def before(self) -> str:
        """Its ``unchanged`` candidate's failure ("" when the node was exact as it stood)."""
        return next((a.detail for a in self.attempts
                     if a.form == "unchanged" and a.outcome is not Outcome.PROVEN), "")

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["realization"] = self.realization.value
        out["attempts"] = [a.to_dict() for a in self.attempts]
        return out


def proof_text(alone: dict[str, Any], in_model: dict[str, Any] | None = None,
               verbose: bool = False) -> str:
    """A node's proof: ``exact on 5 input sets alone and again in the fixed model, ...``."""
    sets = alone.get("sets") or 0
    text = f"exact on {plural(sets, 'input set')} alone"
    if in_model is not None:
        again, runs = in_model.get("sets") or 0, plural(in_model.get("runs") or 0, "run")
        same = plural(again, "input set") if again != sets else (
            "the same set" if sets == 1 else "the same sets")
        text += (f" and again in the fixed model, on {same} through its form as written and "
                 f"on the model's {runs}" if again else f" and in the fixed model on its {runs}")
    tolerance = alone.get("tolerance") or "exact"
    if not verbose and tolerance != "exact":
        tolerance = "within the accuracy rule for sums, ruling 17"
    if err := max((p.get("max_abs") or 0.0) for p in (alone, in_model or {})):
        tolerance += f", max abs error {err:.3g}"
    noted = alone.get("noted_units")
    if noted is not None:  # ruling 17: agrees, with its figures
        tolerance += (f"; accuracy note: up to {alone['noted_ulp']:.3g} ulp = {noted:.3g} "
                      "u*mean|x|, within the accuracy limit" if verbose
                      else "; with an accuracy note")
    return f"{text} ({tolerance})"


@dataclasses.dataclass
class FixReport(Printed):
    """Every pooling node considered, in model order; notes; the runtime proven on."""

    nodes: list[NodeFix] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    runtime: dict[str, Any] = dataclasses.field(default_factory=dict)
    nonfinite: bool = False
    style: str = CLI  # who reads it: the command line (flags) or Python (arguments)
    written: str | None = None
    #: the model's inputs of the runs: shapes, source, open dims and the --shape that sets them
    inputs: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: ruling 17's thresholds the sums were proven under (AccuracyRule.to_dict)
    accuracy: dict[str, Any] = dataclasses.field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        counter = Counter(n.realization for n in self.nodes)
        return {key.value: counter[key] for key in REALIZATIONS if counter[key]}

    def forms(self) -> dict[str, int]:
        """Nodes per standard form name."""
        return dict(sorted(Counter(n.form for n in self.nodes if n.realization == FORM).items()))

    @property
    def needs_ortpool(self) -> list[NodeFix]:
        return [n for n in self.nodes if n.realization == ORTPOOL]

    @property
    def finite_only(self) -> list[NodeFix]:
        """Nodes of a float type proven in the finite domain only (ruling 20)."""
        if self.nonfinite:
            return []
        return [n for n in self.nodes if n.elem in FLOATS
                and n.realization not in (UNPROVEN, NOT_SELECTED)]

    @property
    def unproven(self) -> list[NodeFix]:
        return [n for n in self.nodes if n.realization == UNPROVEN]

    def exit_code(self, allow_unproven: bool = False) -> int:
        """0: every node exact, no ortpool op; 1: ortpool ops needed (or unproven nodes let
        through); 2: unproven nodes and no permission to write them."""
        allow_unproven = values.flag("allow_unproven", allow_unproven)
        if self.unproven:
            return EXIT_NEEDS_ORTPOOL if allow_unproven else EXIT_ERROR
        return EXIT_NEEDS_ORTPOOL if self.needs_ortpool else EXIT_EXACT

    def to_dict(self) -> dict[str, Any]:
        return {
            "runtime": self.runtime, "nonfinite": self.nonfinite, "accuracy": self.accuracy,
            "summary": {
                "considered": len(self.nodes), "realizations": self.counts(),
                "forms": self.forms(), "needs_ortpool": [n.name for n in self.needs_ortpool],
                "unproven": [n.name for n in self.unproven],
                "finite_inputs_only": [n.name for n in self.finite_only],
            },
            "inputs": {**self.inputs,
                       "open_dims": [d.to_dict() for d in self.inputs.get("open_dims", [])]},
            "nodes": [n.to_dict() for n in self.nodes], "notes": list(self.notes),
            "written": self.written,
        }

    def summary_lines(self, verbose: bool = False) -> list[str]:
        """The lines ``ortpool fix`` prints: the counts, each changed node, the notes."""
        verbose = values.flag("verbose", verbose)
        rt = self.runtime
        counts = tally(self.counts()) or "no pooling node"
        lines = [
            f"ortpool fix on {rt.get('build', 'onnxruntime')} {rt.get('onnxruntime')} "
            f"({', '.join(rt.get('providers', []))}, graph optimizations {rt.get('opt_level')}): "
            f"{plural(len(self.nodes), 'pooling node')}: {counts}"
        ]
        if self.inputs.get("open_dims") or "loaded" in self.inputs.get("source", ""):
            # the sizes or values the user chose, or that were chosen for the user
            shapes = ", ".join(
                f"{k} [{','.join(map(str, v))}]" for k, v in self.inputs["shapes"].items())
            lines.append(f"  model inputs {shapes} ({self.inputs.get('source')})")
        dims, hint = self.inputs.get("open_dims", []), self.inputs.get("shape_hint", "")
        lines += [f"  {line}" for line in describe_dims(dims, hint)]
        if forms := self.forms():
            lines.append(f"  standard forms: {tally(forms)}")
        for node in self.nodes:
            if verbose or node.realization != UNCHANGED:
                lines.append(f"  {node.describe(verbose)}")
                if verbose or node.realization in (FORM, ORTPOOL):
                    lines += [
                        f"      tried {a.form}: {a.outcome}" + (
                            " (the proof above)" if a.form == node.form
                            and a.outcome is Outcome.PROVEN else f": {a.detail}")
                        for a in node.attempts
                        if verbose or a.outcome is not Outcome.NOT_APPLICABLE
                    ][: None if verbose else 4]
        if self.needs_ortpool:
            names = ", ".join(repr(n.name) for n in self.needs_ortpool)
            lines.append(
                f"the fixed model needs ortpool at run time (ortpool.InferenceSession) for "
                f"{plural(len(self.needs_ortpool), 'node')}: {names}")
        if maxed := self.finite_only:
            names = ", ".join(repr(n.name) for n in maxed)
            lines.append(
                f"proven in the finite domain (the default, ruling 20) for "
                f"{plural(len(maxed), 'node')}: {names}; NaN and +-inf were not covered "
                f"({'nonfinite=True' if self.style == PYTHON else '--nonfinite'} proves them, "
                "and guards a max onnxruntime gets wrong there)")
        lines += [f"note: {note}" for note in self.notes]
        return lines


class Saved(list):
    """What :meth:`FixResult.save` returns: the notes on the model's external data (a list),
    shown as the file written and its notes."""

    def __init__(self, notes: list[str], path: str) -> None:
        super().__init__(notes)
        self.path = path

    def __repr__(self) -> str:
        return "\n".join([f"wrote {safe(self.path)}", *(f"note: {safe(n)}" for n in self)])


@dataclasses.dataclass(repr=False, eq=False)  # equal to itself only
class FixResult(Report):
    """What :func:`ortpool.fix` returns: the fixed ``model`` (a new proto; the caller's is never
    changed) and its ``report`` (:class:`FixReport`: every pooling node, its realization and
    proof). Unpacks as a pair: ``model, report = ortpool.fix(m)``."""

    model: onnx.ModelProto
    report: FixReport
    #: the folder the model's external data is read from (the source model's), for :meth:`save`
    source_dir: str | None = None

    @property
    def exit_code(self) -> int:
        """As ``ortpool fix`` exits: 0 every node exact on the runtime's own kernels, 1 some
        need ortpool's op at run time, 2 some could not be proven."""
        return self.report.exit_code()

    @property
    def nodes(self) -> list[NodeFix]:
        return self.report.nodes

    def summary_lines(self) -> list[str]:
        return self.report.summary_lines()

    def to_dict(self) -> dict[str, Any]:
        return self.report.to_dict()

    def save(self, path: str | os.PathLike, *, link_data: bool = False) -> Saved:
        """Write the fixed model to ``path``, its external data linked or copied beside it
        (:func:`ortpool.model.save`, which checks the arguments); returns the notes on the data."""
        return Saved(save(self.model, path, self.source_dir, link_data=link_data), str(path))

    def _describe(self) -> str:
        counts = tally(self.report.counts())
        return plural(len(self.report.nodes), "pooling node") + (f": {counts}" if counts else "")

    def _repr_html_(self) -> str:
        """The nodes as a table: what was wrong before, what became of each, the proof."""
        from ortpool.report.html import SHARED_CSS, name, table

        def why(n: NodeFix) -> str:
            return n.before() or ("exact as it stood" if n.realization == UNCHANGED else
                                  n.reason or "-")

        rows = "".join(
            f"<tr><td><code>{name(n.name, 60)}</code></td><td>{name(n.key)}</td>"
            f"<td>{name(why(n), 300)}</td><td>{name(n.form or n.realization, 60)}</td>"
            f"<td>{name(proof_text(n.proof, n.in_model) if n.proof else n.reason, 300)}</td>"
            "</tr>" for n in self.report.nodes)
        nodes = table(("node", "op", "before the fix", "now", "proof"), rows)
        return (f'<div class="ortpool"><style>{SHARED_CSS}</style><p>'
                f"{name(self.report.summary_lines()[0], 300)}; exit {self.exit_code}</p>"
                f"{nodes}</div>")

    def __iter__(self) -> Iterator[Any]:  # (model, report), as fix_with_report returns them
        return iter((self.model, self.report))

