"""The terminal report: one table per model, causes under the node they explain."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ortpool.model import describe_dims
from ortpool.validate import results
from ortpool.validate.results import ModelResult, NodeResult, OutputResult

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
    results.NOT_ISOLATED: "not isolated",
    results.FIXED: "fixed",
    results.ORTPOOL_OP: "ortpool op",
    # a whole model's outcome when it was not validated
    results.COULD_NOT_RUN: "COULD NOT RUN",
    results.CRASHED: "CRASHED",
    results.TIMED_OUT: "TIMED OUT",
}
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


def model_report(model: ModelResult) -> list[str]:
    if model.outcome:
        return [f"model {model.path}: {STATUS_TEXT[model.outcome]}: {model.error}"]
    lines = [
        f"model {model.path}  (opset {model.opset}; inputs "
        + ", ".join(f"{k}:[{','.join(map(str, v))}]" for k, v in model.inputs.items())
        + f" {model.input_source})"
    ]
    lines += [f"  {line}" for line in describe_dims(model.open_dims, model.shape_hint)]
    placed = any(n.asked_provider for n in model.nodes)
    if model.nodes:
        rows = [node_row(n) + ([_executed(n)] if placed else []) for n in model.nodes]
        lines += table(rows, (*COLUMNS, "executed by") if placed else COLUMNS)
    for node in model.nodes:
        lines += _node_details(node)
    if model.nodes and any(n.reference for n in model.nodes):
        agree = sum(1 for n in model.nodes if n.reference and n.reference.status == "agree")
        lines.append(
            f"  reference evaluator agrees with ortpool on {agree} of "
            f"{sum(1 for n in model.nodes if n.reference)} node(s)"
        )
    if model.outputs:
        for out in model.outputs:
            c = out.comparison
            verdict = "agree" if c.agrees else f"DIFFER: {c.differing + c.only_in_one} cell(s)"
            lines.append(
                f"  end to end: output {c.name} {_shape([c.builtin_shape])} vs "
                f"{_shape([c.ortpool_shape])}: {verdict}{output_figures(out)}"
            )
    elif model.end_to_end:
        verdict = "DIFFERS: " if model.run_differs else ""
        lines.append(f"  end to end: {verdict}{model.end_to_end}")
    if model.guard_text:
        lines.append(f"  non-finite inputs: {model.guard_text}")
    for note in model.notes:
        lines.append(f"  note: {note}")
    return lines


def _node_details(node: NodeResult) -> list[str]:
    """The lines under the table on one node: fallbacks, causes, accuracy, note, reference."""
    lines: list[str] = []
    fallbacks = node.fallbacks()
    accuracy = accuracy_text(node)
    if (
        node.causes
        or node.message
        or fallbacks
        or accuracy
        or node.nonfinite
        or (node.reference and node.reference.status != "agree")
    ):
        lines.append(f"  {node.name} ({node.op}-{node.spec_version}, {node.location}):")
        if fallbacks:
            lines.append(
                f"      {'; '.join(fallbacks)}: onnxruntime's values here are not "
                f"{node.asked_provider}'s"
            )
        for cause in node.causes:
            lines.append(f"      cause: {cause.title}: {cause.detail}")
        if accuracy:
            lines.append(f"      accuracy: {accuracy}")
        if node.message and node.status != results.NO_KERNEL:
            lines.append(f"      note: {node.message}")
        if node.nonfinite:
            lines.append(
                "      non-finite inputs (information, not the verdict; --nonfinite judges "
                f"them, ruling 20): {node.nonfinite}"
            )
        ref = node.reference
        if ref is not None and ref.status != "agree":
            text = f"      reference evaluator: {ref.status}"
            if ref.differing:
                text += f", {ref.differing} cell(s) differ from ortpool"
            if ref.message:
                text += f" ({ref.message})"
            lines.append(text)
            for defect in ref.defects:
                lines.append(f"        known defect: {defect}")
    return lines


def summary(models: Sequence[ModelResult]) -> str:
    nodes = [n for m in models for n in m.nodes]
    counts: dict[str, int] = {}
    for n in nodes:
        counts[n.status] = counts.get(n.status, 0) + 1
    parts = [f"{counts[s]} {STATUS_TEXT[s]}" for s in results.ORDER if s in counts]
    e2e = sum(1 for m in models for o in m.outputs if o.failing)
    runs = sum(1 for m in models if m.run_differs)
    verdict = "all agree"
    if any(m.failing for m in models):
        # only sums beyond the accuracy limit: rounding, not semantics (RULINGS.md 17)
        accuracy_only = not any(
            m.run_differs
            or any(o.failing for o in m.outputs)
            or any(n.failing and n.status != results.INACCURATE for n in m.nodes)
            for m in models
        )
        verdict = "ACCURACY DIFFERENCES FOUND" if accuracy_only else "DIFFERENCES FOUND"
    models_text = f"{len(models)} model(s)"
    not_run = [m.outcome for m in models if m.outcome]
    if not_run:  # a model not validated is no agreement: the verdict says so first
        verdict = "NOT EVERY MODEL RAN" + (f"; {verdict}" if verdict != "all agree" else "")
        tallies = [f"{not_run.count(s)} {STATUS_TEXT[s].lower()}" for s in results.MODEL_ORDER]
        models_text += " (" + ", ".join(t for t in tallies if not t.startswith("0 ")) + ")"
    beyond = sum(1 for n in nodes if n.nonfinite)
    return (
        f"{verdict}: {models_text}, {len(nodes)} pooling node(s): "
        + (", ".join(parts) or "none")
        + f"; {e2e} graph output(s) differ end to end"
        + (f"; {runs} model(s) only ortpool's rewrite could run" if runs else "")
        + (f"; {beyond} node(s) differ on NaN/inf inputs only (information: --nonfinite)"
           if beyond else "")
    )
