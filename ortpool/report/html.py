"""The HTML report: one self-contained page (inline CSS and PNGs, no script) with a table per
model and, for each differing node, a picture of where in the tensor the differences sit."""

from __future__ import annotations

import base64
import datetime
import html
import os
from collections.abc import Sequence
from typing import Any

from ortpool.check.compare import TensorComparison
from ortpool.report import picture, terminal
from ortpool.report import record as results
from ortpool.report.record import ModelResult, NodeResult
from ortpool.report.text import num, plural, safe, shape

#: what the page and a notebook's view share, scoped to ``.ortpool`` (a bare rule would restyle
#: the notebook's page); the cells' alignment by ``.ortpool.ortpool``, above JupyterLab's
SHARED_CSS = """
.ortpool { font:13px/1.45 -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif;
  color:#1f2933; }
.ortpool .scroll { overflow-x:auto; max-width:100%; }
.ortpool table { border-collapse:collapse; width:100%; }
.ortpool th { text-align:left; font-weight:600; color:#616e7c; white-space:nowrap;
  border-bottom:2px solid #d9e2ec; padding:5px 8px; }
.ortpool td { padding:5px 8px; border-bottom:1px solid #d9e2ec; vertical-align:top; }
.ortpool.ortpool td, .ortpool.ortpool th { text-align:left; }
.ortpool td.num, .ortpool td.shape { white-space:nowrap; font-variant-numeric:tabular-nums; }
.ortpool.ortpool td.num { text-align:right; }
.ortpool td.cells, .ortpool ul.why { min-width:16em; }
.ortpool td.path { overflow-wrap:anywhere; min-width:11em; }
.ortpool td.mono, .ortpool code { font-family:"DejaVu Sans Mono", Menlo, Consolas, monospace;
  font-size:12px; }
.ortpool code { overflow-wrap:anywhere; }
.ortpool ul.why { margin:0; padding-left:16px; }
.ortpool ul.findings { margin:0 0 12px; padding-left:18px; }
.ortpool ul.findings li { margin:4px 0; overflow-wrap:anywhere; }
.ortpool .cause, .ortpool .meta, .ortpool .count { color:#616e7c; font-size:12.5px; }
.ortpool .badge { display:inline-block; padding:2px 8px; border-radius:10px; font-size:12px;
  font-weight:600; white-space:nowrap; background:#e6ecf5; color:#1f5fa8; }
.ortpool .s-agree, .ortpool .s-ties, .ortpool .s-accuracy-note { background:#e3f4e4;
  color:#2e7d32; }
.ortpool .s-differ, .ortpool .s-ort-rejected, .ortpool .s-ortpool-rejected, .ortpool .s-crashed,
.ortpool .s-could-not-run, .ortpool .s-timed-out { background:#fde8e8; color:#c62828; }
.ortpool .s-inaccurate, .ortpool .s-rulings { background:#fff1dc; color:#b26a00; }
.ortpool details.agreeing > summary { cursor:pointer; color:#2e7d32; font-weight:600; }
@media (max-width: 700px) {
  /* the summary's rows stacked: a phone shows each model's nodes and causes without scrolling */
  .ortpool table.summary thead { display:none; }
  .ortpool table.summary tr, .ortpool table.summary td { display:block; border:0; padding:2px; }
  .ortpool table.summary tr { border-bottom:1px solid #d9e2ec; padding:6px 0; }
  /* a node's row stacked too, each cell under its heading's name: scrolled sideways, a row
     stood as tall as its wrapped cells text, a blank band beside it */
  .ortpool table.nodes thead { display:none; }
  .ortpool table.nodes tr { display:block; border-bottom:1px solid #d9e2ec; padding:6px 0; }
  .ortpool.ortpool table.nodes td { display:block; border:0; padding:1px 2px; text-align:left;
    white-space:normal; min-width:0; }
  .ortpool table.nodes td[data-h]::before { content:attr(data-h) ": "; color:#616e7c; }
}
"""

#: the page's own layout
CSS = """
* { box-sizing:border-box; }
body { margin:0; font-size:14px; background:#f5f7fa; }
header { background:#102a43; color:#f0f4f8; padding:22px 36px; }
header h1 { margin:0 0 4px; font-size:22px; font-weight:600; }
header .sub { color:#bcccdc; font-size:13px; }
main { padding:20px 36px 40px; max-width:1500px; }
.verdict { display:inline-block; margin-top:12px; padding:6px 14px; border-radius:6px;
  font-weight:600; font-size:15px; background:#e3f4e4; color:#2e7d32; }
.verdict.bad { background:#fde8e8; color:#c62828; }
section.model, details.model { background:#fff; border:1px solid #d9e2ec; border-radius:8px;
  padding:18px 22px; margin:18px 0; }
section.model h2 { margin:0 0 4px; font-size:17px; word-break:break-all; }
details.model > summary { cursor:pointer; font-size:15px; font-weight:600; word-break:break-all; }
h3, h2.group { font-size:14px; margin:16px 0 6px; color:#616e7c; }
figure { margin:10px 0 18px; padding:12px 14px; border:1px solid #d9e2ec; border-radius:6px; }
figcaption, footer { margin-top:8px; color:#616e7c; font-size:12.5px; }
footer { padding:0 36px 30px; }
.legend { display:flex; flex-wrap:wrap; gap:14px; margin:6px 0; font-size:12px; }
.legend i { display:inline-block; width:12px; height:12px; vertical-align:-2px;
  margin-right:5px; border:1px solid rgba(0,0,0,.15); }
.tiles { display:flex; flex-wrap:wrap; gap:16px 22px; }
.tile { max-width:100%; }
.tile-title { font-size:11.5px; color:#616e7c; margin:0 0 2px 34px; }
.plot, .col, .yaxis, .xaxis { display:flex; max-width:100%; min-width:0; }
.col, .yaxis { flex-direction:column; }
.yaxis { justify-content:space-between; width:30px; padding:0 4px 17px 0; text-align:right; }
.xaxis { justify-content:space-between; height:17px; line-height:17px; }
.yaxis, .xaxis { font-size:10.5px; color:#616e7c; font-variant-numeric:tabular-nums; }
.col img { display:block; image-rendering:pixelated; max-width:100%; height:auto;
  border:1px solid #d9e2ec; }
@media (max-width: 700px) {
  header, main, footer { padding:12px; }
  header h1 { font-size:18px; }
  section.model, details.model, figure { padding:10px; }
}
"""


def _e(value: Any) -> str:
    """Text for the page: made safe (:func:`.text.safe`: valid UTF-8), then HTML-escaped."""
    return html.escape(safe(value), quote=True)


#: a name longer than this is cut on the page, whole in its tooltip (a huge name in a table
#: made the page slow to open)
NAME_LIMIT = 80
#: the tooltip's own limit: past it the JSON report has the name
TITLE_LIMIT = 2000


def attr(value: Any) -> str:
    """``value`` for an attribute, escaped, cut at :data:`TITLE_LIMIT` characters."""
    text = safe(value)
    if len(text) > TITLE_LIMIT:
        text = f"{text[:TITLE_LIMIT]}… ({len(text)} characters: the JSON report has them all)"
    return _e(text)


def name(value: Any, limit: int = NAME_LIMIT) -> str:
    """``value`` escaped, cut at ``limit`` characters, the whole of it in a tooltip."""
    text = safe(value)
    if len(text) <= limit:
        return _e(text)
    return f'<span title="{attr(text)}">{_e(text[: limit - 1])}…</span>'


def _badge(status: str, runtime: str = "onnxruntime") -> str:
    text = terminal.status_text(status, runtime)
    return f'<span class="badge s-{_e(status)}">{_e(text)}</span>'


def findings(model: ModelResult) -> str:
    """The nodes that do not agree, in the terminal report's words (above the table)."""
    items = []
    for node in [n for n in model.nodes if n.notable]:
        lines = [f"{c.title}: {c.detail}" for c in node.causes]
        lines += [f"basis: {terminal.basis_text(node.basis)}"] if node.basis else []
        accuracy = terminal.accuracy_text(node)
        lines += [f"accuracy: {accuracy}"] if accuracy else []
        lines += [node.message] if node.message and node.status != results.NO_KERNEL else []
        figures = terminal.figures_text(node) if node.comparisons else ""
        items.append(
            f'<li class="finding" data-node="{attr(node.name)}"><code>{name(node.name)}</code> '
            f"{_badge(node.status, node.runtime)} <span class=\"figures\">{_e(figures)}</span>"
            + "".join(f'<div class="cause">{_e(line)}</div>' for line in lines) + "</li>")
    return f'<ul class="findings">{"".join(items)}</ul>' if items else ""


#: the node table's headings, the reference evaluator's column last (only where it ran)
NODE_HEAD = ("node", "op", "status", "attributes", "onnxruntime", "spec (ortpool)", "cells",
             "max abs", "reference")


def _node_row(node: NodeResult, with_ref: bool) -> str:
    ref = ""
    if node.reference is not None:
        r = node.reference
        ref = _e(r.status) + (f" ({r.differing} cells)" if r.differing else "")
        if r.causes:
            ref += "<br><small>" + "<br>".join(_e(f"{c.title}: {c.detail}") for c in r.causes)
            ref += "</small>"
    cells = [
        ("mono", name(node.name)),
        ("", _e(terminal.op_text(node))),
        ("", _badge(node.status, node.runtime)),
        ("mono", _e(terminal.attributes_text(node))),
        ("mono shape", _e(" ".join(map(shape, node.builtin_shapes)) or "-")),
        ("mono shape", _e(" ".join(map(shape, node.ortpool_shapes)) or "-")),
        ("cells", _e(terminal.figures_text(node)) if node.comparisons else "-"),
        ("num", _e(num(node.max_abs))),
        *([("", ref)] if with_ref else []),
    ]
    # each cell names its heading: a narrow screen shows the row stacked, the headings hidden
    tds = "".join(f'<td class="{kind}" data-h="{h}">{value}</td>'
                  for h, (kind, value) in zip(NODE_HEAD, cells, strict=False))
    return f'<tr class="node-row" data-status="{_e(node.status)}">{tds}</tr>'


def _axis_labels(axis: picture.Axis) -> str:
    if not axis.name:
        return "<span></span><span></span><span></span>"
    return f"<span>{axis.first}</span><b>{_e(axis.name)}</b><span>{axis.last}</span>"


def _picture(node: NodeResult, c: TensorComparison) -> str:
    """Where one output of the node differs, a tile per channel, the counts the comparison's."""
    cats = c.categories
    if cats is None or cats.ndim < 3:
        return ""
    found, caption = picture.tiles(cats)
    down, across = picture.axes(cats.shape)
    counts = "".join(
        f'<span data-category="{_e(label)}"><i style="background:rgb{color}"></i>'
        f'<b class="count">{count}</b> {_e(label)}</span>'
        for color, label, count in picture.legend(c))
    title = f"{node.name} — {node.op}-{node.spec_version} {c.name}, " \
            f"{terminal.short_attributes(node.attributes)}"
    tiles = "".join(
        f'<div class="tile" data-channel="{t.channel}"><div class="tile-title">channel '
        f'{t.channel}</div><div class="plot"><div class="yaxis">{_axis_labels(down)}</div>'
        f'<div class="col"><img class="tile-image" alt="channel {t.channel}" width="{t.width}" '
        f'height="{t.height}" src="data:image/png;base64,{base64.b64encode(t.png).decode()}">'
        f'<div class="xaxis">{_axis_labels(across)}</div></div></div></div>'
        for t in found)
    return (
        f'<figure class="node-picture" data-node="{attr(node.name)}" data-output="{attr(c.name)}">'
        f'<div class="legend">{counts}</div><div class="tiles">{tiles}</div>'
        f"<figcaption><b>{name(title, 2 * NAME_LIMIT)}</b><br>{_e(caption)}</figcaption></figure>"
    )


def differing(node: NodeResult) -> list[TensorComparison]:
    """The outputs of a node that get a picture: some cell differs (not ties alone)."""
    if node.status not in (results.DIFFER, results.INACCURATE, results.RULINGS):
        return []
    return [c for c in node.comparisons if c.categories is not None and not c.agrees]


def anchor(index: int) -> str:
    """The id of the ``index``-th (0-based) model's section."""
    return f"model-{index + 1}"


def bad(model: ModelResult) -> bool:
    """A model the reader must look at: it differs, or it could not be validated."""
    return bool(model.outcome) or model.failing


def triage(models: Sequence[ModelResult]) -> tuple[list[tuple[int, ModelResult]], ...]:
    """(index, model) of the failing models, and of the others, each in the run's order."""
    return tuple([(i, m) for i, m in enumerate(models) if bad(m) == failing]
                 for failing in (True, False))


def table(head: Sequence[str], rows: str, kind: str = "") -> str:
    """A table in a wrapper that scrolls sideways inside its card on a narrow screen."""
    heads = "".join(f"<th>{_e(h)}</th>" for h in head)
    opening = f'<table class="{kind}">' if kind else "<table>"
    return (f'<div class="scroll">{opening}<thead><tr>{heads}</tr></thead>'
            f"<tbody>{rows}</tbody></table></div>")


def _model_body(model: ModelResult) -> str:
    if model.outcome:
        return f'<div class="meta">{_badge(model.outcome)} {name(model.error, 5000)}</div>'
    inputs = ", ".join(f"{safe(k)} {shape(v)}" for k, v in model.inputs.items())
    with_ref = any(n.reference is not None for n in model.nodes)
    head = NODE_HEAD if with_ref else NODE_HEAD[:-1]
    parts = [f'<div class="meta">opset {_e(model.opset)} · inputs {name(inputs, 200)} '
             f"({_e(model.input_source)})</div>"]
    if model.open_dims:
        dims = ", ".join(d.text() for d in model.open_dims)
        parts.append(f'<div class="meta">open dims: {_e(dims)}</div>')
    parts.append(findings(model))
    if model.nodes:
        parts.append(table(head, "".join(_node_row(n, with_ref) for n in model.nodes), "nodes"))
    parts.append(_end_to_end(model))
    if beyond := model.nonfinite_nodes:  # ruling 20: information, not the verdict
        items = "".join(f"<li><code>{name(n.name)}</code>: {_e(n.nonfinite)}</li>"
                        for n in beyond)
        price = f"<p>{_e(model.guard_text)}</p>" if model.guard_text else ""
        parts.append('<div class="nonfinite"><h3>On NaN and infinite inputs only (information: not '
                     "counted, --nonfinite judges them; ruling 20)</h3>"
                     f'<ul class="notes">{items}</ul>{price}</div>')
    if figures := "".join(_picture(n, c) for n in model.nodes for c in differing(n)):
        parts.append(f'<div class="pictures"><h3>Where the differences sit</h3>{figures}</div>')
    if model.notes:
        parts.append(
            '<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in model.notes) + "</ul>")
    return "".join(parts)


def _model(index: int, model: ModelResult) -> str:
    """A failing model as an open section; an agreeing one collapsed (``<details>``)."""
    tag, head = ("section", "h2") if bad(model) else ("details", "summary")
    title = f"{name(model.path, 2 * NAME_LIMIT)} {_badge(model.status)}"
    return (f'<{tag} class="model" id="{anchor(index)}" data-status="{_e(model.status)}">'
            f"<{head}>{title}</{head}>{_model_body(model)}</{tag}>")


def _end_to_end(model: ModelResult) -> str:
    """The end-to-end block: each graph output's comparison in words, or why there is none."""
    if model.outputs:
        runtime = terminal.runtime_of(model.nodes)
        rows = "".join(
            f'<tr class="output-row"><td class="mono">{name(o.comparison.name)}</td>'
            f"<td>{_badge(results.DIFFER if o.failing else results.AGREE)}</td>"
            f'<td class="cells">{_e(terminal.output_text(o, True, runtime))}</td></tr>'
            for o in model.outputs)
        block = table(["output", "verdict", "cells"], rows, "outputs")
    else:
        verdict = _badge(results.DIFFER) + " " if model.run_differs else ""
        block = f'<div class="meta">{verdict}{_e(model.end_to_end)}</div>'
    return f'<div class="e2e"><h3>End to end</h3>{block}</div>'


def _why(model: ModelResult) -> str:
    """The summary's cell for a model: the nodes that differ, each with its first cause."""
    if model.outcome:
        return name(model.error, 120)
    failing = [n for n in model.nodes if n.status not in results.AGREEING]
    if not failing:
        return _e(f"{len(model.nodes)} of {len(model.nodes)} agree")
    items = "".join(
        f"<li><code>{name(n.name, 40)}</code> {_e(terminal.status_text(n.status, n.runtime))}"
        + (f": {_e(n.causes[0].title)}" if n.causes else "") + "</li>"
        for n in failing[:4])
    more = f"<li>… and {len(failing) - 4} more</li>" if len(failing) > 4 else ""
    return f'<ul class="why">{items}{more}</ul>'


def _outputs_differing(model: ModelResult) -> str:
    if model.outcome:
        return "-"
    if model.outputs:
        failing = model.outputs_differing
        return f"{failing} of {len(model.outputs)} differ" if failing else "agree"
    # "not compared: onnxruntime could not run the model: <its message>": the message in the
    # tooltip
    return name(model.end_to_end, len(": ".join(model.end_to_end.split(": ")[:2])) + 1)


def _short_paths(paths: Sequence[str]) -> list[str]:
    """The paths without the folder they all share (a narrow first column)."""
    folders = [p.rpartition("/")[0] for p in paths]
    common = os.path.commonpath(folders) if len(paths) > 1 and all(folders) else ""
    if not common or not all(f == common or f.startswith(common + "/") for f in folders):
        return list(paths)
    return [p[len(common) + 1 :] for p in paths]


def summary(models: Sequence[ModelResult], links: bool = True, after: str = "") -> str:
    """The summary table, an HTML fragment with its own style (the page's top, a notebook's
    view), the failing models first; ``links``: names lead to the page's sections; ``after``:
    more of the fragment, in its style."""
    names = _short_paths([m.path for m in models])
    head = ["model", "status", "nodes that do not agree", "end to end"]

    def cell(i: int, m: ModelResult) -> str:
        shown = name(names[i], 60)
        return f'<a href="#{anchor(i)}" title="{attr(m.path)}">{shown}</a>' if links else shown

    def rows(chosen: list[tuple[int, ModelResult]]) -> str:
        return "".join(
            f'<tr class="summary-row" data-status="{_e(m.status)}"><td class="path">'
            f"{cell(i, m)}</td><td>{_badge(m.status)}</td><td>{_why(m)}</td>"
            f'<td class="e2e-cell">{_outputs_differing(m)}</td></tr>'
            for i, m in chosen)

    failing, others = triage(models)
    parts = [f'<div class="ortpool ortpool-summary"><style>{SHARED_CSS}</style>']
    if failing:
        by = terminal.bases_text(results.all_nodes(models))
        parts.append(
            f'<p class="count">{len(failing)} of {plural(len(models), "model")} differ or could '
            "not be validated" + (f"; the differing nodes {_e(by)}" if by else "") + "</p>"
            + table(head, rows(failing), "summary"))
    if others:
        counts = terminal.counted([m.status for _, m in others], results.MODEL_ORDER)
        parts.append(f'<details class="agreeing"{"" if failing else " open"}><summary>'
                     f"{_e(plural(len(others), 'model'))}: {_e(counts)}</summary>"
                     f"{table(head, rows(others), 'summary')}</details>")
    parts.append(f"{after}</div>")
    return "".join(parts)


def render(models: Sequence[ModelResult], settings: dict[str, Any]) -> str:
    """The whole page: verdict, summary, the failing models, then the others collapsed."""
    env = results.environment()
    verdict = terminal.summary(models)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    level = settings.get("opt_level") or ("all" if settings.get("optimize") else "disable")
    judged = sorted({m.runtime for m in models if m.runtime}) or [
        f"{env.get('onnxruntime_build', 'onnxruntime')} {env['onnxruntime']}"]
    sub = (f"{' · '.join(judged)} · onnx {env['onnx']} · ortpool {env['ortpool']} · "
           f"providers {', '.join(settings.get('providers') or ['CPUExecutionProvider'])} · "
           f"graph optimisations {level} · {stamp}")
    failing, agreeing = ([_model(i, m) for i, m in group] for group in triage(models))
    body = [f'<section class="model summary" id="summary"><h2>Summary</h2>{summary(models)}'
            "</section>"]
    if failing:
        body.append(f'<h2 class="group">{plural(len(failing), "model")} to look at</h2>')
        body.extend(failing)
    if agreeing:
        body.append(f'<h2 class="group">{plural(len(agreeing), "model")} that agree or were '
                    "not compared (collapsed: click to open)</h2>")
        body.extend(agreeing)
    # the shared style comes with the summary (a <style> in the body applies to the page)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>ortpool validate: {_e(verdict)}</title><style>{CSS}</style></head><body '
        'class="ortpool">'
        f"<header><h1>ortpool validate — onnxruntime built-in pooling vs the ONNX spec</h1>"
        f'<div class="sub">{_e(sub)}</div>'
        f'<div class="verdict {"bad" if failing else "good"}">{_e(verdict)}</div></header>'
        f"<main>{''.join(body)}</main>"
        "<footer>MaxPool values and Indices are compared exactly. Averages and norms are sums: "
        "their rounding against the exact result is accuracy, not semantics (ruling 17): "
        "within the agree band they agree, up to the accuracy limit they agree with a note, "
        "beyond it they are counted as inaccurate. Index ties (a different index pointing at "
        "an equal value) and cells whose result the spec leaves to ortpool's rulings "
        "(docs/rulings.md: a NaN in the window, an empty window) are counted apart from plain "
        "differences.</footer></body></html>\n"
    )

