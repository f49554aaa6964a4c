"""The terminal report, fitting :data:`WIDTH` columns.

By default one line per model, then the nodes that do not agree (or carry an accuracy note),
each with its causes, the graph outputs that differ and the notes that matter; ``verbose`` adds
every node, every output, the inputs and every note. Long texts are wrapped; onnxruntime's
messages are shown by their first line (its stack and the rest are in the JSON report).
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from ortpool.model import describe_dims
from ortpool.report import record as results
from ortpool.report.record import ModelResult, NodeResult, OutputResult

STATUS_TEXT = {
    results.AGREE: "agree",
    results.TIES: "agree (index ties)",
    results.RULINGS: "differs in RULINGS cells",
    results.DIFFER: "DIFFERS",
    results.INACCURATE: "INACCURATE",
    results.ACCURACY_NOTE: "agree (accuracy note)",
    results.ORT_REJECTED: "ORT REJECTS",
    results.ORTPOOL_REJECTED: "ORTPOOL REJECTS",
    results.BOTH_REJECTED: "both reject",
    results.NO_KERNEL: "no ORT kernel",
    results.NOT_COMPARED: "not compared",
    results.FIXED: "fixed",
    results.ORTPOOL_OP: "ortpool op",
    # a whole model's outcome when it was not validated
    results.COULD_NOT_RUN: "COULD NOT RUN",
    results.CRASHED: "CRASHED",
    results.TIMED_OUT: "TIMED OUT",
}
#: the columns the report fits
WIDTH = 100
#: the lines one text may take (a cause, a note, a message)
MAX_LINES = 6
#: node statuses that agree with the spec: a node with another status is listed by default
#: statuses shown in the model's count only (``-v``: a line each): the node computes the spec
#: (a form fix proved, ortpool's own op: exact by construction)
AGREEING = (results.AGREE, results.TIES, results.ACCURACY_NOTE, results.FIXED, results.ORTPOOL_OP)
COLUMNS = (
    "node",
    "op",
    "attributes",
    "onnxruntime",
    "ortpool",
    "max abs",
    "max rel",
    "differ",
    "rulings",
    "ties",
    "status",
)


def short_attributes(attrs: Mapping[str, Any]) -> str:
    """``k=3x3 s=2x2 p=1,1,1,1 d=2x2 SAME_UPPER ceil cip so=1``: the attributes that matter."""

    def xs(values: Any) -> str:
        return "x".join(str(v) for v in values)

    parts = []
    if "kernel_shape" in attrs:
        parts.append(f"k={xs(attrs['kernel_shape'])}")
    if attrs.get("strides") and any(s != 1 for s in attrs["strides"]):
        parts.append(f"s={xs(attrs['strides'])}")
    if attrs.get("pads") and any(attrs["pads"]):
        parts.append("p=" + ",".join(str(p) for p in attrs["pads"]))
    if attrs.get("dilations") and any(d != 1 for d in attrs["dilations"]):
        parts.append(f"d={xs(attrs['dilations'])}")
    if attrs.get("auto_pad", "NOTSET") != "NOTSET":
        parts.append(str(attrs["auto_pad"]))
    if attrs.get("ceil_mode"):
        parts.append("ceil")
    if attrs.get("count_include_pad"):
        parts.append("cip")
    if attrs.get("storage_order"):
        parts.append("so=1")
    if "p" in attrs:
        parts.append(f"p^{attrs['p']}")  # LpPool's exponent ("p=" already names the pads)
    if "pooled_shape" in attrs:
        parts.append(f"bins={xs(attrs['pooled_shape'])}")
    if "spatial_scale" in attrs:
        parts.append(f"scale={attrs['spatial_scale']:g}")
    return " ".join(parts)


def _shape(shapes: Sequence[Sequence[int]]) -> str:
    return " ".join("[" + ",".join(map(str, s)) + "]" for s in shapes) or "-"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def node_row(node: NodeResult) -> list[str]:
    return [
        node.name,
        f"{node.op}-{node.spec_version}"
        + (f" {node.dtype}" if node.dtype not in ("float", "?") else ""),
        short_attributes(node.attributes)
        + (" +output_shape" if node.op == "MaxUnpool" and len(node.input_shapes) > 2 else ""),
        _shape(node.builtin_shapes),
        _shape(node.ortpool_shapes),
        _num(node.max_abs),
        _num(node.max_rel),
        str(node.count("differing") + node.count("inaccurate") + node.count("only_in_one")),
        str(node.count("ruling_differing")),
        str(node.count("ties")),
        STATUS_TEXT.get(node.status, node.status),
    ]


def _short(provider: str | None) -> str:
    return "-" if provider is None else provider.removesuffix("ExecutionProvider")


def _executed(node: NodeResult) -> str:
    """``OpenVINO`` (alone and in the model), ``CPU/OpenVINO`` (alone/in the model)."""
    alone, inside = _short(node.executed_by), _short(node.executed_in_model)
    return alone if inside in (alone, "-") else f"{alone}/{inside}"


def accuracy_text(node: NodeResult) -> str:
    """``Y off by 35.7 ulp = 35.8 u*mean|x| (pairwise bound 15.6, agrees within 62.6, note up to
    1.68e+03 = 1e-4 of mean|x|)``: a sum's rounding, shown for a note, a sum beyond the limit,
    and an agreeing sum rounded beyond the pairwise bound; "" otherwise."""
    acc = node.accuracy
    if acc is None or acc.get("max_error_units") is None:
        return ""
    units, ulps = acc["max_error_units"], acc["max_error_ulp"]
    shown = node.status in (results.ACCURACY_NOTE, results.INACCURATE) or (
        node.status == results.AGREE and units > acc["pairwise_bound_units"]
    )
    if not shown:
        return ""
    what = acc["units"]
    text = f"Y off by up to {_num(ulps)} ulp = {_num(units)} {what}"
    if acc["half"]:
        return text + f" (half type: agrees within {acc['half_ulps']:g} ulp)"
    return text + (
        f" (pairwise bound {_num(acc['pairwise_bound_units'])}, agrees within "
        f"{_num(acc['agree_units'])}, note up to {_num(acc['note_limit_units'])} = "
        f"{acc['note_limit']:g} of {what[2:]}; n={acc['n']})"
    )


def output_figures(out: OutputResult) -> str:
    """``, max abs 7.86e+05 = 3.7e-07 of magnitude 2.13e+12 (allowed 2.13e+07); onnxruntime's
    own noise 9.18e+05``: how far the output moved, against its scale and its tolerance."""
    c = out.comparison
    if c.max_abs is None or (c.max_abs == 0 and c.agrees):
        return "" if c.max_abs is None else " (identical)"
    text = f", max abs {_num(c.max_abs)}"
    if out.tolerance.exact:
        return text + " (exact)"
    if out.relative is not None:
        text += f" = {_num(out.relative)} of magnitude {_num(out.tolerance.magnitude)}"
    text += f" (allowed {_num(out.allowed)})"
    if out.noise is not None:
        text += f"; onnxruntime's own noise {_num(out.noise)}"
    return text


def table(rows: Sequence[Sequence[str]], header: Sequence[str], indent: str = "  ") -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    numeric = {
        i for i, h in enumerate(header) if h in ("max abs", "max rel", "differ", "rulings", "ties")
    }

    def fmt(row: Sequence[str]) -> str:
        cells = [
            str(c).rjust(widths[i]) if i in numeric else str(c).ljust(widths[i])
            for i, c in enumerate(row)
        ]
        return (indent + "  ".join(cells)).rstrip()

    return [fmt(header), indent + "  ".join("-" * w for w in widths), *(fmt(r) for r in rows)]


def status_text(status: str) -> str:
    """A status as the report names it; one the report does not know by its own name (statuses
    are added over time: the report shows them, never hides them)."""
    return STATUS_TEXT.get(status, status)


def first_line(text: str) -> str:
    """A message's first line: onnxruntime's runtime errors carry a C++ stack and the model's
    graph after it (about 3,000 characters); the JSON report keeps the whole text."""
    text = str(text).strip()
    return text.splitlines()[0].rstrip() if text else ""


def fit(text: str, indent: str = "", more: str = "    ") -> list[str]:
    """``text``'s first line in :data:`WIDTH` columns, starting at ``indent``, wrapped, the
    next lines indented by ``more`` further; at most :data:`MAX_LINES` (a runtime's message
    may be one line of thousands of characters: the JSON report keeps it whole)."""
    lines = _wrap(first_line(text), indent, more) or [indent.rstrip()]
    if len(lines) <= MAX_LINES:
        return lines
    cut = " ... (cut: --json has the whole text)"
    return [*lines[: MAX_LINES - 1], lines[MAX_LINES - 1][: WIDTH - len(cut)].rstrip() + cut]


def wrapped(lines: Sequence[str]) -> list[str]:
    """A report's logical lines (each indented by spaces) in :data:`WIDTH` columns: a long
    line wrapped, whole, its continuation six columns deeper than its own indent (deeper than
    any line nested under it), so that it reads as one (``fix``'s and ``rewrite``'s reports)."""
    out: list[str] = []
    for line in lines:
        text = line.lstrip(" ")
        if len(line) <= WIDTH or not text:
            out.append(line)
            continue
        out += _wrap(text, line[: len(line) - len(text)], " " * 6)
    return out


def _wrap(text: str, indent: str, more: str) -> list[str]:
    """``text`` in :data:`WIDTH` columns from ``indent``, continued ``more`` further (long words
    broken: a path may be wider than the report)."""
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + more,
                         break_long_words=True, break_on_hyphens=False)


def display_path(path: str) -> str:
    """A model's path as the report shows it: relative to the working folder when inside it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith("..") else relative


def _counted(statuses: Sequence[str], known: Sequence[str] = results.ORDER) -> str:
    """``5 agree, 2 not isolated``: statuses counted, most severe first (``known``'s order;
    statuses it lacks after them, by name)."""
    counts: dict[str, int] = {}
    for status in statuses:
        counts[status] = counts.get(status, 0) + 1
    order = [s for s in known if s in counts] + sorted(set(counts) - set(known))
    return ", ".join(f"{counts[s]} {status_text(s)}" for s in order)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def model_line(model: ModelResult) -> str:
    """One line for a model: its status, its path, its nodes counted and its outputs' verdict."""
    name = display_path(model.path)
    if model.outcome:
        why = first_line(model.error)
        if why.startswith(model.path):  # the reason names the model already
            return f"{status_text(model.outcome)}  {name}{why.removeprefix(model.path)}"
        return f"{status_text(model.outcome)}  {name}: {why}"
    status = status_text(model.status)
    nodes = _plural(len(model.nodes), "node")
    if model.nodes:
        nodes += f": {_counted([n.status for n in model.nodes])}"
    bad, count = sum(1 for o in model.outputs if o.failing), len(model.outputs)
    if count == 1:
        outputs = "its output differs" if bad else "its output agrees"
    elif count:
        outputs = f"{bad} of {count} outputs differ" if bad else f"{count} outputs agree"
    elif model.run_differs:
        outputs = "only ortpool's rewrite runs"
    else:
        outputs = "outputs not compared"
    return f"{status:<7}  {name}  opset {model.opset}, {nodes}; {outputs}{_nonfinite_tail(model)}"


def _nonfinite_tail(model: ModelResult) -> str:
    """Ruling 20's information on the model's line: how many nodes differ on NaN/inf inputs
    only (not counted) and what guarding them costs, where measured."""
    beyond = sum(1 for n in model.nodes if n.nonfinite)
    if not beyond:
        return ""
    ratio = (model.guard_cost or {}).get("ratio")
    cost = f", guarding them x{ratio:.2f}" if ratio else ""
    return f"; on NaN/inf only {beyond} differ{cost}"


def model_report(model: ModelResult, verbose: bool = False) -> list[str]:
    """A model's lines: :func:`model_line`, then the nodes that do not agree and the outputs
    that differ; ``verbose``: every node and output, the inputs and the notes, wrapped."""
    lines = fit(model_line(model))
    if model.outcome:
        return lines
    if verbose:
        inputs = ", ".join(f"{k}:[{','.join(map(str, v))}]" for k, v in model.inputs.items())
        lines += fit(f"inputs {inputs or '-'} ({model.input_source})", "  ")
    for line in describe_dims(model.open_dims, model.shape_hint):
        lines += fit(line, "  ")
    for node in model.nodes:
        # a node another provider executed is shown: its verdict is not the asked provider's
        if verbose or node.status not in AGREEING or accuracy_text(node) or node.fallbacks():
            lines += node_lines(node, verbose)
    if model.nodes and any(n.reference for n in model.nodes):
        agree = sum(1 for n in model.nodes if n.reference and n.reference.status == "agree")
        lines.append(
            f"  reference evaluator agrees with ortpool on {agree} of "
            f"{sum(1 for n in model.nodes if n.reference)} node(s)"
        )
    for out in model.outputs:
        if verbose or out.failing:
            c = out.comparison
            verdict = "agree" if c.agrees else f"DIFFER: {c.differing + c.only_in_one} cell(s)"
            shapes = f"{_shape([c.builtin_shape])} vs {_shape([c.ortpool_shape])}"
            text = f"end to end: output {c.name} {shapes}: {verdict}{output_figures(out)}"
            lines += fit(text, "  ")
    if not model.outputs and model.end_to_end and (verbose or model.run_differs):
        verdict = "DIFFERS: " if model.run_differs else ""
        lines += fit(f"end to end: {verdict}{model.end_to_end}", "  ")
    lines += _nonfinite_lines(model, verbose)
    for note in model.notes:
        if verbose or _worth_noting(note, model):
            lines += fit(f"note: {note}", "  ")
    return lines


def _nonfinite_lines(model: ModelResult, verbose: bool) -> list[str]:
    """With ``verbose``, what guarding the nodes that differ on NaN/inf inputs only costs, in
    full (each node's case is under its node; the model's line counts them)."""
    if not verbose or not model.guard_text:
        return []
    return fit(f"non-finite inputs: {model.guard_detail or model.guard_text}", "  ")


def _worth_noting(note: str, model: ModelResult) -> bool:
    """The notes shown by default: not where the node inputs were captured (every model has
    one), not onnxruntime's failure to run the model when a missing kernel says it per node."""
    if note.startswith("node inputs captured from"):
        return False
    return not (
        note.startswith("onnxruntime could not run the model")
        and any(n.status == results.NO_KERNEL for n in model.nodes)
    )


def node_lines(node: NodeResult, verbose: bool = False) -> list[str]:
    """A node's line (name, operator, attributes, status), its figures when it ran, and the
    lines that explain it: fallbacks, causes, accuracy, note, the reference evaluator."""
    op = f"{node.op}-{node.spec_version}" + (
        f" {node.dtype}" if node.dtype not in ("float", "?") else ""
    )
    attrs = short_attributes(node.attributes)
    if node.op == "MaxUnpool" and len(node.input_shapes) > 2:
        attrs += " +output_shape"
    head = f"{node.name}  {op}" + (f"  {attrs}" if attrs else "")
    status = status_text(node.status)
    lines = fit(f"{head}  {status}", "  ")
    if node.comparisons and (verbose or node.status not in AGREEING):
        differ = node.count("differing") + node.count("inaccurate") + node.count("only_in_one")
        figures = (
            f"onnxruntime {_shape(node.builtin_shapes)} vs ortpool {_shape(node.ortpool_shapes)}"
            f"; {differ} differ, max abs {_num(node.max_abs)}, max rel {_num(node.max_rel)}"
        )
        if node.count("ruling_differing"):
            figures += f", {node.count('ruling_differing')} in RULINGS cells"
        if node.count("ties"):
            figures += f", {node.count('ties')} index ties"
        if node.asked_provider:
            figures += f"; executed by {_executed(node)}"
        lines += fit(figures, "      ")
    details = [f"{f}: onnxruntime's values here are not {node.asked_provider}'s"
               for f in node.fallbacks()]
    # A missing kernel's cause is onnxruntime's message, which the status already says: shown
    # with ``verbose`` only.
    if node.status != results.NO_KERNEL or verbose:
        details += [f"cause: {c.title}: {c.detail}" for c in node.causes]
    accuracy = accuracy_text(node)
    if accuracy:
        details.append(f"accuracy: {accuracy}")
    if node.message and node.status != results.NO_KERNEL:
        details.append(f"note: {node.message}")
    if node.nonfinite and verbose:
        details.append("non-finite inputs (information, not the verdict; --nonfinite judges "
                       f"them, ruling 20): {node.nonfinite}")
    ref = node.reference
    if ref is not None and ref.status != "agree":
        text = f"reference evaluator: {ref.status}"
        if ref.differing:
            text += f", {ref.differing} cell(s) differ from ortpool"
        if ref.message:
            text += f" ({first_line(ref.message)})"
        details.append(text)
        details += [f"  known defect: {d}" for d in ref.defects]
    for detail in details:
        lines += fit(detail, "      ")
    return lines


def _summary_parts(models: Sequence[ModelResult]) -> tuple[str, str, str]:
    """The verdict on the models, the nodes counted by status, the graph outputs."""
    nodes = [n for m in models for n in m.nodes]
    not_run = [m for m in models if m.outcome]
    failing = [m for m in models if not m.outcome and m.failing]
    total = _plural(len(models), "model")
    parts = []
    if not_run:  # a model not validated is no agreement: the verdict says so first
        tallies = _counted([m.outcome for m in not_run], results.MODEL_ORDER).lower()
        parts.append(f"{len(not_run)} of {total} not validated ({tallies})")
    if failing:
        # only sums beyond the accuracy limit: rounding, not semantics (ruling 17)
        accuracy_only = not any(
            m.run_differs
            or any(o.failing for o in m.outputs)
            or any(n.failing and n.status != results.INACCURATE for n in m.nodes)
            for m in failing
        )
        what = "differ in accuracy only" if accuracy_only else "differ"
        if len(failing) == 1 and len(models) == 1:
            what = what.replace("differ", "differs")
        parts.append(f"{len(failing)} {what}" if not_run else f"{len(failing)} of {total} {what}")
    if not parts:
        parts.append(f"all {total} agree" if len(models) > 1 else f"{total} agrees")
    e2e = sum(1 for m in models for o in m.outputs if o.failing)
    runs = sum(1 for m in models if m.run_differs)
    outputs = f"{e2e} graph output(s) differ end to end"
    if runs:
        outputs += f"; {runs} model(s) only ortpool's rewrite could run"
    counted = f"{_plural(len(nodes), 'pooling node')}: {_counted([n.status for n in nodes]) or '-'}"
    return ", ".join(parts), counted, outputs


def summary(models: Sequence[ModelResult]) -> str:
    """The run's verdict in one sentence: how many models differ, then the nodes by status and
    the graph outputs that differ end to end."""
    verdict, nodes, outputs = _summary_parts(models)
    return f"{verdict}: {nodes}; {outputs}"


def summary_lines(models: Sequence[ModelResult]) -> list[str]:
    """:func:`summary` in :data:`WIDTH` columns: the nodes, then the verdict with the outputs
    (the last line, where a reader looks)."""
    verdict, nodes, outputs = _summary_parts(models)
    return fit(nodes) + fit(f"{verdict}; {outputs}")


def information_lines(models: Sequence[ModelResult], flag: str = "--nonfinite") -> list[str]:
    """Ruling 20's information on the run, not counted in the verdict: how many nodes differ on
    NaN/inf inputs only (none: no line); ``flag``: how the caller asks for that domain
    (``nonfinite=True`` from Python)."""
    beyond = sum(1 for m in models for n in m.nodes if n.nonfinite)
    if not beyond:
        return []
    return fit(f"information: {beyond} node(s) differ on NaN/inf inputs only, not counted (the "
               f"finite domain, ruling 20; {flag} judges them)")
