"""The tables printed by ``ortpool bench`` and the JSON documents of ``--json``."""

from __future__ import annotations

import functools
import html
from collections.abc import Sequence
from statistics import geometric_mean
from typing import Any

from ortpool.model.inputs import PYTHON
from ortpool.model.timing import Stats
from ortpool.report import text

#: The variants of a benchmark case, as the table names them.
ORTPOOL = "ortpool"
NUMPY = "numpy"
FLOOR = "floor"

# the command's records (``bench.runner.CaseResult``, ``bench.usermodel.ModelBench``), read here
CaseResult = Any
ModelBench = Any


def builtin_name(opset: int) -> str:
    return f"builtin@{opset}"


def fmt_time(seconds: float | None) -> str:
    """3 significant figures in µs below 1 ms, else in ms: 8.12 µs, 0.183 ms -> 183 µs, 4.61 ms;
    ``-`` for none."""
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if seconds < 10:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def fmt_stats(stats: Stats) -> str:
    """Median ± half the interquartile range, as a percentage of the median."""
    pct = 100 * stats.spread / stats.median if stats.median else 0.0
    return f"{fmt_time(stats.median)} ±{pct:.0f}%"


def summary(results: Sequence[CaseResult]) -> dict[str, Any]:
    """The figures a reader looks for: geometric mean, worst ratio, fixed cost, vs reference."""
    shapes = [r for r in results if r.case.cnn]
    family = [r for r in results if r.case.family]
    out: dict[str, Any] = {
        "cnn_cases": [r.case.name for r in shapes],
        "geomean_ratio": geometric_mean([r.ratio for r in shapes]) if shapes else None,
    }
    if shapes:
        worst = max(shapes, key=lambda r: r.ratio)
        out["max_ratio"] = {"case": worst.case.name, "ratio": worst.ratio}
    if family:
        worst = max(family, key=lambda r: r.ratio)
        out["family_cases"] = [r.case.name for r in family]
        out["family_geomean_ratio"] = geometric_mean([r.ratio for r in family])
        out["family_max_ratio"] = {"case": worst.case.name, "ratio": worst.ratio}
    if floors := [r.floor_ratio for r in shapes if r.floor_ratio is not None]:
        out["geomean_floor_ratio"] = geometric_mean(floors)
    if fixed := [r for r in results if r.case.fixed_cost]:
        f = fixed[0]
        out["fixed_cost_extra_s"] = f.times[ORTPOOL].median - f.builtin.median
    # Over the CNN shapes: on the 4x4 call both sides are mostly per-call overhead.
    speedups = [(r.case.name, r.reference_speedup) for r in shapes if r.reference_speedup]
    if speedups:
        name, low = min(speedups, key=lambda p: p[1])
        out["min_reference_speedup"] = {"case": name, "speedup": low}
    out["all_agree"] = all(r.agrees for r in results)
    return out


def table(results: Sequence[CaseResult]) -> list[list[str]]:
    rows = [["case", "shape", "built-in (fastest opset)", "ortpool run", "ratio",
             "floor (no-op op)", "floor ratio", "numpy API", "built-in, other opsets",
             "onnx reference", "ref/ortpool", "plan (new shape)", "outputs"]]
    for r in results:
        fast = r.fastest_opset
        others = ", ".join(
            f"@{o} {fmt_time(r.times[builtin_name(o)].median)}" for o in r.case.opsets if o != fast)
        ref = r.reference_median
        rows.append([
            r.case.name, r.case.shape_text, f"{fmt_stats(r.builtin)} @{fast}",
            fmt_stats(r.times[ORTPOOL]), f"{r.ratio:.2f}",
            fmt_stats(r.times[FLOOR]) if FLOOR in r.times else "-",
            f"{r.floor_ratio:.2f}" if r.floor_ratio is not None else "-",
            fmt_stats(r.times[NUMPY]), others,
            fmt_time(ref) if ref is not None else r.reference_status,
            f"{r.reference_speedup:,.0f}x" if r.reference_speedup else "-",
            fmt_time(r.plan), r.agreement,
        ])
    if any(r.executed_by for r in results):
        # The built-in times are the executing provider's: a fallback is said, not hidden.
        rows[0].append("built-in executed by")
        for row, r in zip(rows[1:], results, strict=True):
            row.append(r.executed_by or "-")
    return rows


def render(rows: list[list[str]], markdown: bool = False, width: int | None = None) -> str:
    """The rows as a text table (:func:`.text.grid_lines`, cut to ``width``) or Markdown."""
    return "\n".join(text.markdown(rows) if markdown else text.grid_lines(rows, width))


#: the full table's columns a terminal shows (the rest are in --markdown and --json), with the
#: shorter headers they get there
SHORT_COLUMNS = {"case": "case", "shape": "shape", "built-in (fastest opset)": "built-in @opset",
                 "ortpool run": "ortpool", "ratio": "ratio", "floor ratio": "floor",
                 "outputs": "outputs", "built-in executed by": "built-in ran on"}


def short_table(rows: list[list[str]]) -> list[list[str]]:
    """The columns of :func:`table` a terminal of 100 columns shows, with short headers."""
    keep = [i for i, name in enumerate(rows[0]) if name in SHORT_COLUMNS]
    short = [[SHORT_COLUMNS[rows[0][i]] for i in keep]]
    return short + [[row[i] for i in keep] for row in rows[1:]]


#: each line wrapped at the terminal's width, continuation lines indented by two spaces
wrap = functools.partial(text.wrapped, more=2)


def notebook_view(rows: list[list[str]], summary: Sequence[str]) -> str:
    """:func:`table`'s rows as an HTML table (a notebook wraps a wide ``<pre>`` into noise),
    the figures right-aligned, then the summary's lines."""
    def cell(tag: str, value: str) -> str:
        numeric = value[:1].isdigit() or value == "-"
        align = "right" if numeric and tag == "td" else "left"
        # inline: a notebook's own style right-aligns every cell
        return f"<{tag} style='text-align:{align};white-space:nowrap'>" \
               f"{html.escape(text.safe(value))}</{tag}>"

    head = "".join(cell("th", h) for h in rows[0])
    body = "".join("<tr>" + "".join(cell("td", v) for v in row) + "</tr>" for row in rows[1:])
    lines = "".join(f"<p style='margin:2px 0'>{html.escape(text.safe(line))}</p>"
                    for line in summary)
    return (f"<div style='overflow-x:auto'><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table></div><div style='text-align:left'>{lines}</div>")


def summary_lines(info: dict[str, Any]) -> list[str]:
    lines = []
    if info.get("geomean_ratio") is not None:
        worst = info["max_ratio"]
        lines.append(f"geometric mean ortpool/built-in over {len(info['cnn_cases'])} CNN shapes: "
                     f"{info['geomean_ratio']:.2f} (worst {worst['ratio']:.2f}, {worst['case']})")
    if info.get("family_geomean_ratio") is not None:
        worst = info["family_max_ratio"]
        lines.append(
            f"geometric mean ortpool/built-in over {len(info['family_cases'])} shapes of LpPool, "
            f"the global pools and MaxRoiPool: {info['family_geomean_ratio']:.2f} "
            f"(worst {worst['ratio']:.2f}, {worst['case']})")
    if info.get("geomean_floor_ratio") is not None:
        lines.append(f"marshalling floor (a Python op that returns prepared results) / built-in, "
                     f"geometric mean: {info['geomean_floor_ratio']:.2f} (no kernel goes below it)")
    if "fixed_cost_extra_s" in info:
        lines.append(
            f"fixed cost per call above built-in: {info['fixed_cost_extra_s'] * 1e6:+.1f} µs")
    if "min_reference_speedup" in info:
        ref = info["min_reference_speedup"]
        lines.append(f"vs onnx reference evaluator over the CNN shapes it finished: at least "
                     f"{ref['speedup']:,.0f}x faster ({ref['case']})")
    lines.append(
        "outputs agree on every case" if info["all_agree"] else "OUTPUTS DISAGREE (see table)")
    return lines


def machine_lines(machine: dict[str, Any]) -> list[str]:
    v = machine["versions"]
    cores = f"{machine['logical_cores']} logical"
    if machine.get("physical_cores"):
        cores += f", {machine['physical_cores']} physical"
    if machine.get("usable_cores") not in (None, machine["logical_cores"]):
        cores += f", {machine['usable_cores']} usable"
    env = ", ".join(f"{k}={val}" for k, val in machine["thread_env"].items()) or "none set"
    return [
        f"machine: {machine['cpu']} ({cores} cores), {machine['platform']}",
        f"threads: onnxruntime intra-op {machine['ort_intra_op_threads']}, "
        f"{machine['ort_thread_pool']}; ortpool kernels "
        f"{machine.get('ortpool_kernels', 'numpy')}, {machine['ortpool_kernel_threads']} "
        f"threads; numpy BLAS {machine['numpy_blas']}; thread env: {env}",
        f"versions: ortpool {v['ortpool']}, onnxruntime {v['onnxruntime']}, "
        f"onnxruntime-extensions {v['onnxruntime_extensions']}, onnx {v['onnx']}, "
        f"numpy {v['numpy']}, Python {machine['python']}",
    ]


LEGEND = (
    "times: median per call ± half the interquartile range, all variants interleaved in the same "
    "rounds. ratio = ortpool run / fastest built-in. 'ortpool' is session.run of the ortpool "
    "node; 'floor' is session.run of a Python op that does no work over the fastest built-in "
    "(the op boundary alone: extensions' copies in and out, the hook). --markdown adds 'numpy "
    "API' (the kernel called directly, no session), the other opsets, the onnx reference "
    "evaluator and 'plan (new shape)' (what a call of a shape not seen before adds); --json "
    "holds every figure."
)


def settings_dict(settings: Any, reference: bool) -> dict[str, Any]:
    """A run's JSON settings (``reference``: with the reference evaluator's limit)."""
    found = {"repeat": settings.repeat, "min_sample_s": settings.min_sample,
             "intra_op_threads": settings.runtime.intra_op_threads, "seed": settings.seed,
             "shared_pool": settings.shared_pool, "runtime": settings.runtime.describe()}
    if reference:
        found["reference_limit_s"] = settings.reference_limit
    return found


def document(results: Sequence[CaseResult], machine: dict[str, Any], settings: Any) -> dict:
    """The JSON document of a run: machine, settings, per-case figures, summary."""
    own = ("name", "title", "op", "attributes", "indices", "fixed_cost", "long_axis")
    cases = [{
        **{k: getattr(r.case, k) for k in own}, "shape": list(r.case.shape), "plan_s": r.plan,
        "ortpool_opset": r.ortpool_opset, "fastest_builtin_opset": r.fastest_opset,
        "ratio": r.ratio, "floor_ratio": r.floor_ratio,
        "times": {name: stats.as_dict() for name, stats in r.times.items()},
        "outputs_agree": r.agrees, "agreement": r.agreement, "max_abs_diff": r.max_abs_diff,
        "builtin_executed_by": r.executed_by,
        "reference": {"status": r.reference_status, "times_s": r.reference,
                      "median_s": r.reference_median, "speedup": r.reference_speedup},
    } for r in results]
    return {"machine": machine, "settings": settings_dict(settings, reference=True),
            "cases": cases, "summary": summary(results)}


def model_tables(result: ModelBench, markdown: bool = False) -> list[str]:
    """The lines of ``ortpool bench MODEL [FIXED]``: whole-model times with their ratios to the
    original (the control's among them), then each pooling node's time from the profiles (and
    the providers that executed it, when another than the CPU provider alone did)."""
    from ortpool.ort.timed import FIXED, ORIGINAL

    def table_text(rows: list[list[str]]) -> str:
        return render(rows, markdown=markdown, width=None if markdown else text.width())

    rows = [["session.run", "median ± IQR/2", "/ original, per round"]]
    for name, stats in result.times.items():
        ratio = result.ratios.get(name)
        per_round = "1" if ratio is None else f"{ratio.median:.2f} ±{ratio.spread:.2f}"
        rows.append([name, fmt_stats(stats), per_round])
    lines = [*table_text(rows).splitlines(), ""]
    original = result.profiles[ORIGINAL]
    fixed = result.profiles.get(FIXED)
    if result.nodes:
        header = ["pooling node", "op", "original"]
        if fixed is not None:
            header += ["fixed", "fixed nodes", "fixed/original"]
        rows = [header]
        for node in result.nodes:
            row = [node.name, node.op, fmt_time(node.original)]
            if fixed is not None:
                ratio = "-" if node.ratio is None else f"{node.ratio:.2f}"
                row += [fmt_time(node.fixed), str(node.fixed_nodes), ratio]
            rows.append(row)
        if any(set(n.providers) - {"CPUExecutionProvider"} for n in result.nodes):
            rows[0].append("ran on")
            for row, node in zip(rows[1:], result.nodes, strict=True):
                row.append(", ".join(p.removesuffix("ExecutionProvider")
                                     for p in node.providers) or "-")
        for label, mine, theirs in (
            ("all pooling nodes", original.pooling, fixed.pooling if fixed else None),
            ("whole run", original.run, fixed.run if fixed else None),
        ):
            row = [label, "", fmt_time(mine)]
            if fixed is not None:
                both = mine and theirs is not None
                row += [fmt_time(theirs), "", f"{theirs / mine:.2f}" if both else "-"]
            rows.append(row + [""] * (len(rows[0]) - len(row)))
        lines.append(
            f"kernel time per run, onnxruntime's profile (median of {original.runs} profiled "
            "runs of a session of its own):")
        lines += [*table_text(rows).splitlines(), ""]
    lines += wrap(model_verdict(result))
    return lines


def model_verdict(result: ModelBench) -> list[str]:
    """The sentence a reader looks for: what the fixed model costs, against the noise."""
    from ortpool.ort.timed import CONTROL, FIXED

    control = result.ratios.get(CONTROL)
    fixed = result.ratios.get(FIXED)
    lines = [
        "times: median per call ± half the interquartile range over the rounds, every session "
        "sampled once per round in turn; '/ original' is the ratio in each round, its median "
        f"± half its interquartile range. '{CONTROL}' is a second session of the original model "
        "(the control): its ratio shows how far two identical sessions drift on this machine."
    ]
    if fixed is not None and control is not None:
        # the middle halves of the per-round ratios: overlapping, the two are not told apart
        overlap = fixed.low <= control.high and control.low <= fixed.high
        label = "repeat=" if result.inputs.style == PYTHON else "--repeat"
        lines.append(
            f"fixed / original: {fixed.median:.2f} (±{fixed.spread:.2f}); control "
            f"{control.median:.2f} (±{control.spread:.2f}): "
            + (
                "their middle halves overlap, so this machine's noise is as large as the "
                f"difference (more rounds with {label}, or a quieter machine, can tell them "
                "apart; the profile's kernel times above are steadier)."
                if overlap
                else f"the fixed model takes {fixed.median:.2f}x the original's time."))
    lines.extend(result.notes)
    return lines


def model_document(result: ModelBench, machine: dict[str, Any], settings: Any) -> dict:
    """The JSON document of ``ortpool bench MODEL [FIXED]``: machine, settings, every figure."""
    return {"machine": machine, "settings": settings_dict(settings, reference=False),
            **result.to_dict()}
