"""The terminal report of ``ortpool validate``: one line per model, then what does not agree
(``verbose``: everything), every count the record's (:mod:`.record`); the HTML report and the
notebook's view say the same sentences.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from math import prod
from typing import Any

from ortpool import versions
from ortpool.check.causes import SPEC_TEXT, Basis
from ortpool.check.compare import CAT_DIFFER, TensorComparison
from ortpool.model import describe_dims
from ortpool.report import record as results
from ortpool.report.record import ModelResult, NodeResult, OutputResult
from ortpool.report.text import MAX_LINES, first_line, fit, num, plural, safe, shape, tally, wrapped

__all__ = ["MAX_LINES", "first_line", "fit", "wrapped"]  # the commands print through these

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
    results.NO_KERNEL: "no onnxruntime kernel",
    results.NOT_COMPARED: "not compared",
    results.FIXED: "fixed",
    results.ORTPOOL_OP: "ortpool op",
    # a whole model's outcome when it was not validated
    results.COULD_NOT_RUN: "COULD NOT RUN",
    results.CRASHED: "CRASHED",
    results.TIMED_OUT: "TIMED OUT",
}


def status_text(status: str, runtime: str = "onnxruntime") -> str:
    """A status as the report names it for ``runtime``; an unknown one by its own name."""
    if runtime != "onnxruntime" and status in (results.NO_KERNEL, results.ORT_REJECTED):
        return f"no {runtime} kernel" if status == results.NO_KERNEL else \
            f"{runtime.upper()} REJECTS"
    return STATUS_TEXT.get(status, status)


def runtime_of(nodes: Sequence[NodeResult]) -> str:
    """The runtime that judged ``nodes`` (a run judges one): onnxruntime when none says."""
    return next((n.runtime for n in nodes), "onnxruntime")


def short_attributes(attrs: Mapping[str, Any]) -> str:
    """``k=3x3 s=2x2 p=1,1,1,1 d=2x2 SAME_UPPER ceil count_include_pad p^2``."""

    def xs(key: str, sep: str = "x") -> str:
        return sep.join(str(v) for v in attrs[key])

    parts = [f"k={xs('kernel_shape')}"] if "kernel_shape" in attrs else []
    for key, tag, default, sep in (("strides", "s", 1, "x"), ("pads", "p", 0, ","),
                                   ("dilations", "d", 1, "x")):
        if attrs.get(key) and any(v != default for v in attrs[key]):
            parts.append(f"{tag}={xs(key, sep)}")
    if attrs.get("auto_pad", "NOTSET") != "NOTSET":
        parts.append(str(attrs["auto_pad"]))
    parts += [flag.removesuffix("_mode") for flag in versions.flags() if attrs.get(flag)]
    if "p" in attrs:
        parts.append(f"p^{attrs['p']}")
    if "pooled_shape" in attrs:
        parts.append(f"bins={xs('pooled_shape')}")
    if "spatial_scale" in attrs:
        parts.append(f"scale={attrs['spatial_scale']:g}")
    return " ".join(parts)


def op_text(node: NodeResult) -> str:
    """``MaxPool-12``, ``AveragePool-22 double``."""
    return f"{node.op}-{node.spec_version}" + (
        f" {node.dtype}" if node.dtype not in ("float", "?") else "")


def attributes_text(node: NodeResult) -> str:
    extra = " +output_shape" if node.op == "MaxUnpool" and len(node.input_shapes) > 2 else ""
    return short_attributes(node.attributes) + extra


def cells_text(c: TensorComparison, verbose: bool = False, runtime: str = "onnxruntime",
               ties_differ: bool = False) -> str:
    """One compared output in words: ``91 of 98 cells differ, by up to 2.5``; ``ties_differ``:
    on a built case an index tie is a difference (ruling 6: the first maximum is asked)."""
    ours, theirs = shape(c.builtin_shape), shape(c.ortpool_shape)
    wrong = c.differing + c.inaccurate + c.ruling_differing
    if not c.shapes_differ:
        text = (f"{wrong} of {c.compared} cells differ" if wrong
                else f"all {c.compared} cells agree")
        if ties_differ and c.ties and not wrong:
            text = (f"{c.ties} of {c.compared} cells differ, each an index tie (another index of "
                    "an equal value; on a built case the first maximum is asked, ruling 6)")
    else:
        size_ort, size_spec = prod(c.builtin_shape), prod(c.ortpool_shape)
        if c.compared == size_spec:
            text = f"shapes differ: {runtime}'s {ours} has {c.only_in_one} cells the spec's " \
                   f"{theirs} has not"
        elif c.compared == size_ort:
            text = f"shapes differ: the spec's {theirs} has {c.only_in_one} cells {runtime}'s " \
                   f"{ours} has not"
        else:
            text = f"shapes differ: {runtime}'s {ours} and the spec's {theirs} share " \
                   f"{c.compared} cells, {c.only_in_one} are in one of them only"
        if c.compared:
            text += (f"; of the {c.compared} cells both have, {wrong} differ" if wrong
                     else f"; the {c.compared} cells both have agree")
    apart = ((c.inaccurate, "beyond the accuracy limit"),
             (c.ruling_differing, "in cells the rulings decide"))
    parts = [f"{n} {what}" for n, what in apart if n]
    text += f" ({', '.join(parts)})" if parts else ""
    if wrong and c.max_abs == 0:  # the magnitudes are of cells finite on both sides
        text += ", each with a NaN or an infinity on one side"
    elif wrong and c.max_abs is not None:
        text += (f", max abs {num(c.max_abs)}, max rel {num(c.max_rel)}" if verbose
                 else f", by up to {num(c.max_abs)}")
    if c.ties and not (ties_differ and not wrong):
        text += f"; {plural(c.ties, 'index tie')} (another index of an equal value)"
    if c.noted:
        text += f"; {c.noted} with an accuracy note"
    if c.offset and any(c.offset) and c.aligned is not None and not (c.aligned == CAT_DIFFER).any():
        moved = ", ".join(f"{o:+d}" for o in c.offset)
        text += f"; onnxruntime's cells are the spec's moved by ({moved}) cells"
    return text


def figures_text(node: NodeResult, verbose: bool = False) -> str:
    """What was compared on the node, output by output, on the set the report shows."""
    many = len(node.comparisons) > 1
    strict = bool(node.shown) and node.status == results.DIFFER  # a built case's ties count
    text = "; ".join((f"{c.name}: " if many else "") + cells_text(c, verbose, node.runtime, strict)
                     for c in node.comparisons)
    if node.shown_on:
        text = f"on {node.shown_on}: {text}"
    if node.asked_provider:
        text += f"; executed by {_executed(node)}"
    return text


def _executed(node: NodeResult) -> str:
    """``OpenVINO`` (alone and in the model), ``CPU/OpenVINO`` (alone/in the model)."""
    alone, inside = ("-" if p is None else p.removesuffix("ExecutionProvider")
                     for p in (node.executed_by, node.executed_in_model))
    return alone if inside in (alone, "-") else f"{alone}/{inside}"


def accuracy_text(node: NodeResult, verbose: bool = False) -> str:
    """A sum's rounding where :attr:`~.record.NodeResult.accuracy_shown`, else ""."""
    acc = node.accuracy
    if acc is None or not node.accuracy_shown:
        return ""
    units, ulps = acc["max_error_units"], acc["max_error_ulp"]
    if not verbose:
        where = {results.INACCURATE: "beyond the accuracy limit (ruling 17)",
                 results.ACCURACY_NOTE: "within the accuracy limit, with a note (ruling 17)"}
        return (f"Y is off the exact result by up to {num(ulps)} unit(s) in the last place, more "
                "than a pairwise sum would be; "
                + where.get(node.status, "within what agrees (ruling 17)"))
    what = acc["units"]
    text = f"Y off by up to {num(ulps)} ulp = {num(units)} {what}"
    if acc["half"]:
        return text + f" (half type: agrees within {acc['half_ulps']:g} ulp)"
    return text + (
        f" (pairwise bound {num(acc['pairwise_bound_units'])}, agrees within "
        f"{num(acc['agree_units'])}, note up to {num(acc['note_limit_units'])} = "
        f"{acc['note_limit']:g} of {what[2:]}; n={acc['n']})"
    )


def output_text(out: OutputResult, verbose: bool = False, runtime: str = "onnxruntime") -> str:
    """A graph output end to end: ``output y [1,2,7,7] agrees (identical)``; ``verbose``: against
    its magnitude and onnxruntime's own noise."""
    c = out.comparison
    if c.agrees:
        text = f"output {c.name} {shape(c.builtin_shape)} agrees"
        if c.max_abs == 0 or c.max_abs is None:
            return text + (" (identical)" if c.max_abs == 0 else "")
        text += " (exact)" if out.tolerance.exact else " within its tolerance"
    else:
        text = f"output {c.name} differs: {cells_text(c, runtime=runtime)}"
    if verbose and not out.tolerance.exact and c.max_abs:
        text += (f"; max abs {num(c.max_abs)} = {num(out.relative)} of magnitude "
                 f"{num(out.tolerance.magnitude)} (allowed {num(out.allowed)})")
        if out.noise is not None:
            text += f"; {runtime}'s own noise {num(out.noise)}"
    elif not out.tolerance.exact and c.max_abs:
        text += f" (by up to {num(c.max_abs)}; the tolerance allows {num(out.allowed)})" \
            if c.agrees else f" (the tolerance allows {num(out.allowed)})"
    return text


def display_path(path: str) -> str:
    """A model's path as the report shows it: relative to the working folder when inside it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith("..") else relative


def counted(statuses: Sequence[str], known: Sequence[str] = results.ORDER,
            runtime: str = "onnxruntime") -> str:
    """``5 agree, 2 DIFFERS``: statuses counted in ``known``'s order (others after, by name)."""
    counts = Counter(statuses)
    order = [s for s in known if s in counts] + sorted(set(counts) - set(known))
    return ", ".join(f"{counts[s]} {status_text(s, runtime)}" for s in order)


def model_line(model: ModelResult, verbose: bool = False) -> str:
    """One line for a model: its status, its path, its nodes counted and its outputs' verdict."""
    name = safe(display_path(model.path))
    if model.outcome:
        why = first_line(model.error)
        if why.startswith(model.path):  # the reason names the model already
            return f"{status_text(model.outcome)}  {name}{why.removeprefix(model.path)}"
        return f"{status_text(model.outcome)}  {name}: {why}"
    nodes = plural(len(model.nodes), "node")
    if model.nodes:
        nodes += f": {counted([n.status for n in model.nodes], runtime=runtime_of(model.nodes))}"
    bad, count = model.outputs_differing, len(model.outputs)
    if count == 1:
        outputs = "its output differs" if bad else "its output agrees"
    elif count:
        outputs = f"{bad} of {count} outputs differ" if bad else f"{count} outputs agree"
    elif model.run_differs:
        outputs = "only ortpool's rewrite runs"
    else:
        outputs = "outputs not compared"
    return (f"{status_text(model.status):<7}  {name}  opset {model.opset}, {nodes}; {outputs}"
            f"{_nonfinite_tail(model, verbose)}")


def _nonfinite_tail(model: ModelResult, verbose: bool) -> str:
    """How many nodes differ on NaN/inf inputs only (ruling 20), and the guard's cost."""
    if not (beyond := len(model.nonfinite_nodes)):
        return ""
    cost = ""
    if ratio := (model.guard_cost or {}).get("ratio"):
        cost = f", guarding them x{ratio:.2f}" if verbose else \
            f", guarding them takes {ratio:.2f} times as long"
    return f"; on NaN/inf only {beyond} differ{cost}"


def model_report(model: ModelResult, verbose: bool = False) -> list[str]:
    """:func:`model_line`, then what does not agree or differs (``verbose``: everything)."""
    lines = fit(model_line(model, verbose))
    if model.outcome:
        return lines
    if verbose:
        inputs = ", ".join(f"{k}:{shape(v)}" for k, v in model.inputs.items())
        lines += fit(f"inputs {inputs or '-'} ({model.input_source})", "  ")
    for line in describe_dims(model.open_dims, model.shape_hint):
        lines += fit(line, "  ")
    for node in model.nodes:
        # a node another provider executed is shown: its verdict is not the asked provider's
        if verbose or node.notable or node.fallbacks():
            lines += node_lines(node, verbose)
    if referred := [n for n in model.nodes if n.reference]:
        agree = sum(1 for n in referred if n.reference and n.reference.status == "agree")
        lines.append(f"  reference evaluator agrees with ortpool on {agree} of "
                     f"{plural(len(referred), 'node')}")
    for out in model.outputs:
        if verbose or out.failing:
            lines += fit(f"end to end: {output_text(out, verbose, runtime_of(model.nodes))}", "  ")
    if not model.outputs and model.end_to_end and (verbose or model.run_differs):
        verdict = "DIFFERS: " if model.run_differs else ""
        lines += fit(f"end to end: {verdict}{model.end_to_end}", "  ")
    if verbose and model.guard_text:  # each node's case is under its node
        lines += fit(f"non-finite inputs: {model.guard_detail or model.guard_text}", "  ")
    for note in model.notes:
        if verbose or _worth_noting(note, model):
            lines += fit(f"note: {note}", "  ")
    return lines


def _worth_noting(note: str, model: ModelResult) -> bool:
    """Not the capture's note (every model has one), nor a failed run a missing kernel says."""
    if note.startswith("node inputs captured from"):
        return False
    return not (note.startswith("onnxruntime could not run the model")
                and any(n.status == results.NO_KERNEL for n in model.nodes))


def node_lines(node: NodeResult, verbose: bool = False) -> list[str]:
    """A node's line (name, operator, attributes, status), its figures, and what explains it."""
    attrs = attributes_text(node)
    head = f"{safe(node.name)}  {op_text(node)}" + (f"  {attrs}" if attrs else "")
    lines = fit(f"{head}  {status_text(node.status, node.runtime)}", "  ")
    if node.comparisons and (verbose or node.status not in results.AGREEING):
        lines += fit(figures_text(node, verbose), "      ")
    details = [f"{f}: onnxruntime's values here are not {node.asked_provider}'s"
               for f in node.fallbacks()]
    # A missing kernel's cause is onnxruntime's message, which the status already says: shown
    # with ``verbose`` only.
    if node.status != results.NO_KERNEL or verbose:
        details += [f"cause: {c.title}: {c.detail}" for c in node.causes]
    if node.basis is not None:
        details.append(f"basis: {basis_text(node.basis)}")
    if accuracy := accuracy_text(node, verbose):
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
            verb = "differs" if ref.differing == 1 else "differ"
            text += f", {plural(ref.differing, 'cell')} {verb} from ortpool"
        if ref.message:
            text += f" ({first_line(ref.message)})"
        details.append(text)
        details += [f"  cause: {c.title}: {c.detail}" for c in ref.causes]
        if ref.basis is not None:
            details.append(f"  basis: {basis_text(ref.basis)}")
    for detail in details:
        lines += fit(detail, "      ")
    return lines


def _verdict(models: Sequence[ModelResult]) -> str:
    """``2 of 32 models differ, 24 agree, 6 not compared (no onnxruntime kernel)``."""
    total = plural(len(models), "model")
    not_run = [m for m in models if m.outcome]
    failing = [m for m in models if m.status == results.DIFFER]
    unseen = [m for m in models if m.status == results.NOT_COMPARED]
    parts = []
    if not_run:  # a model not validated is no agreement: the verdict says so first
        tallies = counted([m.outcome for m in not_run], results.MODEL_ORDER).lower()
        parts.append(f"{len(not_run)} of {total} not validated ({tallies})")
    if failing:
        # only sums beyond the accuracy limit: rounding, not semantics (ruling 17)
        accuracy_only = not any(
            m.run_differs or m.outputs_differing
            or any(n.failing and n.status != results.INACCURATE for n in m.nodes) for m in failing)
        what = "differ in accuracy only" if accuracy_only else "differ"
        if len(failing) == 1 and len(models) == 1:
            what = what.replace("differ", "differs")
        parts.append(f"{len(failing)} {what}" if not_run else f"{len(failing)} of {total} {what}")
    if unseen:  # exit 0, counted apart: nothing said they agree (docs/validate.md)
        why = sorted({status_text(n.status, n.runtime) for m in unseen for n in m.nodes
                      if n.status not in results.AGREEING} or {"no output compared"})
        agree = len(models) - len(not_run) - len(failing) - len(unseen)
        if agree:
            parts.append(f"{agree} agree" if parts else f"{total}: {agree} agree")
        nobody = f"{len(unseen)} not compared ({', '.join(why)})"
        parts.append(nobody if parts else f"{total} not compared ({', '.join(why)})"
                     if len(models) == 1 else f"{total}: {nobody}")
    if not parts:
        parts.append(f"all {total} agree" if len(models) > 1 else f"{total} agrees")
    return ", ".join(parts)


def _outputs(models: Sequence[ModelResult]) -> str:
    text = f"{sum(m.outputs_differing for m in models)} graph output(s) differ end to end"
    runs = sum(1 for m in models if m.run_differs)
    return text + (f"; {runs} model(s) only ortpool's rewrite could run" if runs else "")


def basis_text(basis: Basis) -> str:
    """A basis in words: the spec's, quoted, or the ruling the verdict rests on."""
    if basis.kind == SPEC_TEXT:
        restated = f" (ruling {basis.ruling} restates it)" if basis.ruling else ""
        return f'the spec\'s text, "{basis.quote}"{restated}'
    return (f"ruling {basis.ruling} (docs/rulings.md): the spec is silent or ambiguous here, "
            "the ruling reads it")


def bases_text(nodes: Sequence[NodeResult]) -> str:
    """``by basis: spec text 2, ruling 7 1`` for the differing nodes ("" for none)."""
    counts = results.bases(nodes)
    return f"by basis: {tally(counts)}" if counts else ""


def _nodes(models: Sequence[ModelResult]) -> str:
    nodes = results.all_nodes(models)
    counts = counted([n.status for n in nodes], runtime=runtime_of(nodes))
    line = f"{plural(len(nodes), 'pooling node')}: {counts or '-'}"
    by = bases_text(nodes)
    return f"{line} ({by})" if by else line


def summary(models: Sequence[ModelResult]) -> str:
    """The run's verdict in one sentence: models, nodes by status, outputs that differ."""
    return f"{_verdict(models)}: {_nodes(models)}; {_outputs(models)}"


def summary_lines(models: Sequence[ModelResult]) -> list[str]:
    """The nodes by status, then the verdict (the last line, where a reader looks)."""
    return fit(_nodes(models)) + fit(f"{_verdict(models)}; {_outputs(models)}")


def information_lines(models: Sequence[ModelResult], flag: str = "--nonfinite") -> list[str]:
    """How many nodes differ on NaN/inf inputs only (ruling 20: not in the verdict); ``flag``:
    how the caller asks for that domain."""
    beyond = sum(len(m.nonfinite_nodes) for m in models)
    if not beyond:
        return []
    verb = "differs" if beyond == 1 else "differ"
    return fit(f"information: {plural(beyond, 'node')} {verb} on NaN/inf inputs only, not "
               f"counted (the finite domain, ruling 20; {flag} judges them)")


def report(models: Sequence[ModelResult], verbose: bool = False,
           flag: str = "--nonfinite") -> list[str]:
    """The whole report as the command prints it: each model's lines, then the run's."""
    lines = [line for m in models for line in model_report(m, verbose)]
    return [*lines, "", *information_lines(models, flag), *summary_lines(models)]
