"""The HTML report: one self-contained page (inline CSS, inline PNG data URIs, no script, no
external resource) with the table per model and, for each differing node, a picture of where in
the tensor the differences sit."""

from __future__ import annotations

import base64
import datetime
import html
from collections.abc import Sequence
from typing import Any

from ortpool.validate import picture, results, terminal
from ortpool.validate.results import ModelResult, NodeResult

CSS = """
:root { --ink:#1f2933; --muted:#616e7c; --line:#d9e2ec; --bg:#f5f7fa; --red:#c62828;
  --amber:#b26a00; --green:#2e7d32; --blue:#1f5fa8; --violet:#583c8c; }
* { box-sizing:border-box; }
body { margin:0; font:14px/1.45 -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif;
  color:var(--ink); background:var(--bg); }
header { background:#102a43; color:#f0f4f8; padding:22px 36px; }
header h1 { margin:0 0 4px; font-size:22px; font-weight:600; }
header .sub { color:#bcccdc; font-size:13px; }
main { padding:20px 36px 40px; max-width:1500px; }
.verdict { display:inline-block; margin-top:12px; padding:6px 14px; border-radius:6px;
  font-weight:600; font-size:15px; }
.verdict.bad { background:#fde8e8; color:var(--red); }
.verdict.good { background:#e3f4e4; color:var(--green); }
section.model { background:#fff; border:1px solid var(--line); border-radius:8px;
  padding:18px 22px; margin:18px 0; box-shadow:0 1px 2px rgba(16,42,67,.06); }
section.model h2 { margin:0 0 4px; font-size:17px; word-break:break-all; }
.meta { color:var(--muted); font-size:12.5px; margin-bottom:12px; }
table { border-collapse:collapse; width:100%; font-size:13px; }
th { text-align:left; font-weight:600; color:var(--muted); border-bottom:2px solid var(--line);
  padding:6px 8px; white-space:nowrap; }
td { padding:6px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
tbody tr:nth-child(even) td { background:#fafbfc; }
td.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
td.mono, code { font-family:"DejaVu Sans Mono", Menlo, Consolas, monospace; font-size:12px; }
.badge { display:inline-block; padding:2px 8px; border-radius:10px; font-size:12px;
  font-weight:600; white-space:nowrap; }
.s-agree, .s-ties, .s-accuracy-note { background:#e3f4e4; color:var(--green); }
.s-inaccurate { background:#fde8e8; color:var(--amber); }
.s-differ, .s-ort-rejected, .s-ortpool-rejected, .s-could-not-run, .s-crashed, .s-timed-out {
  background:#fde8e8; color:var(--red); }
.s-rulings { background:#fff1dc; color:var(--amber); }
.s-no-kernel, .s-not-isolated, .s-both-rejected { background:#e6ecf5; color:var(--blue); }
ul.causes { margin:4px 0 0; padding-left:18px; }
ul.causes li { margin:2px 0; }
.cause-title { font-weight:600; }
.e2e { margin-top:12px; }
.e2e h3, .pictures h3 { font-size:14px; margin:16px 0 6px; }
figure { margin:10px 0 18px; padding:12px 14px; border:1px solid var(--line); border-radius:6px;
  background:#fcfdfe; }
figure img { display:block; image-rendering:pixelated; max-width:100%;
  border:1px solid var(--line); }
figcaption { margin-top:8px; color:var(--muted); font-size:12.5px; }
figcaption b { color:var(--ink); }
.legend { display:flex; flex-wrap:wrap; gap:14px; margin:6px 0 2px; font-size:12px;
  color:var(--muted); }
.legend span i { display:inline-block; width:12px; height:12px; border-radius:2px;
  vertical-align:-2px; margin-right:5px; border:1px solid rgba(0,0,0,.15); }
.notes { color:var(--muted); font-size:12.5px; margin:8px 0 0; padding-left:18px; }
footer { color:var(--muted); font-size:12px; padding:0 36px 30px; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _badge(status: str) -> str:
    return (
        f'<span class="badge s-{_e(status)}">{_e(terminal.STATUS_TEXT.get(status, status))}</span>'
    )


def _legend() -> str:
    items = "".join(
        f'<span><i style="background:rgb{color}"></i>{_e(label)}</span>'
        for color, label in picture.PALETTE.values()
    )
    return f'<div class="legend">{items}</div>'


def _node_row(node: NodeResult, with_ref: bool) -> str:
    row = terminal.node_row(node)
    causes = "".join(
        f'<li><span class="cause-title">{_e(c.title)}</span><br><span>{_e(c.detail)}</span></li>'
        for c in node.causes
    )
    extra = f'<ul class="causes">{causes}</ul>' if causes else ""
    accuracy = terminal.accuracy_text(node)
    if accuracy:
        extra += f'<div class="meta accuracy">accuracy: {_e(accuracy)}</div>'
    if node.message:
        extra += f'<div class="meta">{_e(node.message)}</div>'
    ref = ""
    if node.reference is not None:
        r = node.reference
        ref = _e(r.status) + (f" ({r.differing} cells)" if r.differing else "")
        if r.defects:
            ref += "<br><small>" + "<br>".join(_e(d) for d in r.defects) + "</small>"
    cells = [
        f'<td class="mono">{_e(row[0])}</td>',
        f"<td>{_e(row[1])}</td>",
        f'<td class="mono">{_e(row[2])}</td>',
        f'<td class="mono">{_e(row[3])}</td>',
        f'<td class="mono">{_e(row[4])}</td>',
        *(f'<td class="num">{_e(v)}</td>' for v in row[5:10]),
        f"<td>{_badge(node.status)}{extra}</td>",
    ]
    if with_ref:
        cells.append(f"<td>{ref}</td>")
    return f'<tr class="node-row" data-status="{_e(node.status)}">' + "".join(cells) + "</tr>"


def _picture(node: NodeResult) -> str:
    cats = picture.worst([c.categories for c in node.comparisons])
    if cats is None or cats.ndim < 3:
        return ""
    data, caption = picture.heatmap(cats)
    uri = "data:image/png;base64," + base64.b64encode(data).decode()
    title = (
        f"{node.name} — {node.op}-{node.spec_version}, {terminal.short_attributes(node.attributes)}"
    )
    return (
        f'<figure class="node-picture"><img class="node-picture" '
        f'alt="{_e("differences of " + node.name)}" '
        f'src="{uri}"><figcaption><b>{_e(title)}</b><br>{_e(caption)}</figcaption></figure>'
    )


def differing(node: NodeResult) -> bool:
    """Nodes that get a picture: some cell differs (ties alone do not count)."""
    return node.status in (results.DIFFER, results.INACCURATE, results.RULINGS) and any(
        c.categories is not None for c in node.comparisons
    )


def _model(model: ModelResult) -> str:
    if model.outcome:
        return (
            f'<section class="model" data-status="{_e(model.outcome)}"><h2>{_e(model.path)}</h2>'
            f'<div class="meta">{_badge(model.outcome)} {_e(model.error)}</div></section>'
        )
    inputs = ", ".join(f"{k} [{','.join(map(str, v))}]" for k, v in model.inputs.items())
    with_ref = any(n.reference is not None for n in model.nodes)
    head = "".join(f"<th>{_e(h)}</th>" for h in terminal.COLUMNS) + (
        "<th>reference</th>" if with_ref else ""
    )
    rows = "".join(_node_row(n, with_ref) for n in model.nodes)
    parts = [
        f'<section class="model"><h2>{_e(model.path)}</h2>',
        f'<div class="meta">opset {_e(model.opset)} · inputs {_e(inputs)} '
        f"({_e(model.input_source)})</div>",
    ]
    if model.open_dims:
        dims = ", ".join(d.text() for d in model.open_dims)
        parts.append(f'<div class="meta">open dims: {_e(dims)}</div>')
    if model.nodes:
        parts.append(
            f'<table class="nodes"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
        )
    parts.append(_end_to_end(model))
    figures = [_picture(n) for n in model.nodes if differing(n)]
    figures = [f for f in figures if f]
    if figures:
        parts.append('<div class="pictures"><h3>Where the differences sit</h3>' + _legend())
        parts.extend(figures)
        parts.append("</div>")
    if model.notes:
        parts.append(
            '<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in model.notes) + "</ul>"
        )
    parts.append("</section>")
    return "".join(parts)


def _end_to_end(model: ModelResult) -> str:
    """The end-to-end block: each graph output's comparison, or why there is none."""
    parts = ['<div class="e2e"><h3>End to end</h3>']
    if model.outputs:
        parts.append(
            '<table class="outputs"><thead><tr><th>output</th><th>onnxruntime</th>'
            "<th>ortpool</th><th>max abs</th><th>magnitude</th><th>allowed</th>"
            "<th>onnxruntime's own noise</th><th>differing</th><th>verdict</th></tr></thead><tbody>"
        )
        for out in model.outputs:
            c = out.comparison
            status = results.AGREE if c.agrees else results.DIFFER
            parts.append(
                f'<tr class="output-row"><td class="mono">{_e(c.name)}</td>'
                f'<td class="mono">{_e(list(c.builtin_shape))}</td>'
                f'<td class="mono">{_e(list(c.ortpool_shape))}</td>'
                f'<td class="num">{_e(terminal._num(c.max_abs))}</td>'
                f'<td class="num">{_e(terminal._num(out.tolerance.magnitude))}</td>'
                f'<td class="num">{_e(terminal._num(out.allowed))}</td>'
                f'<td class="num">{_e(terminal._num(out.noise))}</td>'
                f'<td class="num">{c.differing + c.only_in_one}</td><td>{_badge(status)}</td></tr>'
            )
        parts.append("</tbody></table>")
    else:
        verdict = _badge(results.DIFFER) + " " if model.run_differs else ""
        parts.append(f'<div class="meta">{verdict}{_e(model.end_to_end)}</div>')
    parts.append("</div>")
    return "".join(parts)


def render(models: Sequence[ModelResult], settings: dict[str, Any]) -> str:
    from ortpool.validate.jsonreport import environment

    env = environment()
    bad = any(m.failing or m.outcome for m in models)
    verdict = terminal.summary(models)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    level = settings.get("opt_level") or ("all" if settings.get("optimize") else "disable")
    sub = (
        f"{env.get('onnxruntime_build', 'onnxruntime')} {env['onnxruntime']} · onnx "
        f"{env['onnx']} · ortpool {env['ortpool']} · "
        f"providers {', '.join(settings.get('providers') or ['CPUExecutionProvider'])} · "
        f"graph optimisations {level} · {stamp}"
    )
    body = "".join(_model(m) for m in models)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>ortpool validate: {_e(verdict)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>ortpool validate — onnxruntime built-in pooling vs the ONNX spec</h1>"
        f'<div class="sub">{_e(sub)}</div>'
        f'<div class="verdict {"bad" if bad else "good"}">{_e(verdict)}</div></header>'
        f"<main>{body}</main>"
        "<footer>MaxPool values and Indices are compared exactly. Averages and norms are sums: "
        "their rounding against the exact result is accuracy, not semantics (RULINGS.md 17): "
        "within the agree band they agree, up to the accuracy limit they agree with a note, "
        "beyond it they are counted as inaccurate. Index ties (a different index pointing at "
        "an equal value) and cells whose "
        "result the spec leaves to ortpool's RULINGS.md (a NaN in the window, an empty window) "
        "are counted apart from plain differences.</footer></body></html>\n"
    )


def summary(models: Sequence[ModelResult]) -> str:
    """The report's summary as an HTML fragment (a notebook shows it for a
    :class:`~ortpool.validate.api.ValidationReport`): the verdict, then one row per model, the
    ones that do not agree first: status, nodes, nodes that differ, outputs that differ."""
    order = {s: i for i, s in enumerate(results.MODEL_ORDER)}
    ranked = sorted(models, key=lambda m: order.get(m.status, -1))  # unknown statuses first
    rows = "".join(
        f"<tr><td><code>{_e(m.path)}</code></td><td>{_badge(m.status)}</td>"
        f'<td class="num">{len(m.nodes)}</td>'
        f'<td class="num">{sum(1 for n in m.nodes if n.failing)}</td>'
        f'<td class="num">{sum(1 for o in m.outputs if o.failing)}</td>'
        f"<td>{_e(terminal.first_line(m.error))}</td></tr>"
        for m in ranked
    )
    bad = any(m.failing or m.outcome for m in models)
    return (
        f'<div class="ortpool-summary"><p class="verdict {"bad" if bad else "good"}">'
        f"{_e(terminal.summary(models))}</p><table><thead><tr><th>model</th><th>status</th>"
        "<th>nodes</th><th>nodes differing</th><th>outputs differing</th><th>error</th></tr>"
        f"</thead><tbody>{rows}</tbody></table></div>"
    )
