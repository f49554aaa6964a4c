"""Conformance reports of several onnxruntime releases and providers side by side, and what
upgrading or changing provider changes.

The input is the documents ``ortpool conformance --json`` writes, one per runtime (build, release
and provider), oldest first, all over the same grid (same ortpool, seed and filters: the cases
are then matched by id). The output is a Markdown page: the runtimes measured, the matrix with a
column per runtime, the causes per runtime, per upgrade step of one build and provider the cases
whose verdict changed, and for every provider other than the CPU one the cases whose verdict
differs from the CPU provider's of the same build, grouped by what the cases have in common.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ortpool.check import causes
from ortpool.errors import OrtpoolError
from ortpool.report import record as results

#: The grid axes a group of changed cases is described by (the rest is listed as values seen).
_GROUP_AXES = ("padding", "ceil_mode", "dilation", "count_include_pad", "indices", "data")
_GOOD = (results.AGREE, results.TIES, results.ACCURACY_NOTE)
_PADDING = {"none": "no pads", "big-pads": "pads >= kernel"}
#: A case's verdict here when the provider asked for first did not execute it (the report says
#: which did, ``executed_by``): its values are another provider's.
FALLBACK = "fallback"
#: Matrix cell order: agree / differ / RULINGS / ORT rejects / no kernel.
_CELL = (
    ("agree", _GOOD),
    ("differ", (results.DIFFER, results.INACCURATE, results.ORTPOOL_REJECTED)),
    ("RULINGS", (results.RULINGS,)),
    ("ORT rejects", (results.ORT_REJECTED, results.BOTH_REJECTED)),
    ("no kernel", (results.NO_KERNEL,)),
    ("fallback", (FALLBACK,)),
)
CPU = "CPUExecutionProvider"


def load(paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    """The reports at ``paths``, checked to be conformance reports over one grid."""
    documents = []
    for path in paths:
        try:
            document = json.loads(Path(path).read_text())
        except (OSError, ValueError) as err:
            raise OrtpoolError(f"conformance report {str(path)!r} cannot be read: {err}") from None
        if document.get("tool") != "ortpool conformance":
            raise OrtpoolError(
                f"{str(path)!r} is not an 'ortpool conformance --json' report "
                f"(tool: {document.get('tool')!r})"
            )
        documents.append(document)
    check_same_grid(documents)
    return documents


def check_same_grid(documents: Sequence[dict[str, Any]]) -> None:
    """Cases are matched by id, which only means the same case within one grid."""
    if len(documents) < 2:
        raise OrtpoolError(f"comparing needs at least 2 reports, got {len(documents)}")
    first = documents[0]
    for other in documents[1:]:
        for what, a, b in (
            ("ortpool version", first["environment"]["ortpool"], other["environment"]["ortpool"]),
            ("settings", first["settings"], other["settings"]),
            ("cases", [c["id"] for c in first["cases"]], [c["id"] for c in other["cases"]]),
            ("rows", [r["op"] for r in first["matrix"]], [r["op"] for r in other["matrix"]]),
        ):
            if a != b:
                raise OrtpoolError(
                    f"the reports of onnxruntime {runtime(first)} and {runtime(other)} are not "
                    f"over the same grid: {what} {a!r} != {b!r}"
                )


def runtime(document: dict[str, Any]) -> str:
    """A report's column title: the release (``1.32.0``), with the build and the provider when
    they are not the CPU build's CPU provider (``1.24.1-openvino OpenVINO``)."""
    label = document["environment"]["onnxruntime"]
    build = _build(document)
    if build != "onnxruntime":
        label += "-" + build.removeprefix("onnxruntime-")
        return f"{label} {_provider(document).removesuffix('ExecutionProvider')}"
    if _provider(document) != CPU:
        label += " " + _provider(document).removesuffix("ExecutionProvider")
    return label


def _build(document: dict[str, Any]) -> str:
    return document["environment"].get("onnxruntime_build", "onnxruntime")


def _providers(document: dict[str, Any]) -> list[str]:
    """The providers asked for (reports before providers could be named: the CPU one)."""
    described = document.get("runtime") or document["environment"].get("runtime") or {}
    return list(described.get("providers") or [CPU])


def _provider(document: dict[str, Any]) -> str:
    """The provider asked for first."""
    return _providers(document)[0].split("(", 1)[0]


def _with_fallback(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with the verdict :data:`FALLBACK` for every case the first provider did not
    execute, and those cases counted under it in the matrix rows (the report keeps them apart,
    ``fell_back``, with the values' own verdict)."""
    asked = _provider(document)
    out = dict(document)
    out["cases"] = [
        {**case, "status": FALLBACK} if case.get("executed_by") not in (None, "?", asked) else case
        for case in document["cases"]
    ]
    out["matrix"] = [
        {
            **row,
            "statuses": {
                **row["statuses"],
                FALLBACK: sum(row.get("fell_back", {}).values()) + row["statuses"].get(FALLBACK, 0),
            },
        }
        for row in document["matrix"]
    ]
    return out


def _pairs(documents: Sequence[dict[str, Any]]):
    """(title, old, new) for each comparison the page makes: an upgrade step within one build
    and provider; each other provider against the CPU provider of its build and release."""
    for index, new in enumerate(documents):
        for old in reversed(documents[:index]):
            if (_build(old), _provider(old)) == (_build(new), _provider(new)):
                title = f"What upgrading from onnxruntime {runtime(old)} to {runtime(new)} changes"
                yield _upgrade, title, old, new
                break
        if _provider(new) == CPU:
            continue
        for old in documents:
            same = (_build(old), old["environment"]["onnxruntime"])
            if same == (_build(new), new["environment"]["onnxruntime"]) and _provider(old) == CPU:
                title = (
                    f"What the {_provider(new)} changes against the CPU provider "
                    f"({_build(new)} {new['environment']['onnxruntime']})"
                )
                yield _provider_changes, title, old, new
                break


def markdown(documents: Sequence[dict[str, Any]], preamble: str = "") -> str:
    check_same_grid(documents)
    documents = [_with_fallback(d) for d in documents]
    lines = ["# onnxruntime's pooling against the ONNX spec, release by release and provider", ""]
    if preamble:
        lines += [preamble, ""]
    lines += _versions(documents)
    lines += _matrix(documents)
    lines += _causes(documents)
    lines += _no_kernel(documents)
    for render, title, old, new in _pairs(documents):
        lines += render(title, old, new)
    return "\n".join(lines).rstrip() + "\n"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _versions(documents: Sequence[dict[str, Any]]) -> list[str]:
    keys = ("onnxruntime", "onnxruntime_extensions", "onnx", "ortpool", "numpy", "python")
    rows = [["build", *map(_build, documents)]]
    rows += [
        [key.replace("_", "-"), *(d["environment"].get(key, "?") for d in documents)]
        for key in keys
    ]
    rows.append(
        [
            "providers",
            *(", ".join(_providers(d)) for d in documents),
        ]
    )
    rows.append(
        ["cases (seed)", *(f"{len(d['cases'])} ({d['settings']['seed']})" for d in documents)]
    )
    return ["## Measured on", "", *_table(["", *map(runtime, documents)], rows), ""]


def _rows(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The matrix rows of ``document`` by op-version."""
    return {f"{row['op']}-{row['version']}": row for row in document["matrix"]}


def _matrix(documents: Sequence[dict[str, Any]]) -> list[str]:
    rows = []
    matrices = [_rows(d) for d in documents]
    for key, entry in matrices[0].items():
        cells = []
        for matrix in matrices:
            statuses = Counter(matrix[key]["statuses"])
            cells.append(" / ".join(str(sum(statuses[s] for s in group)) for _, group in _CELL))
        marker = "" if len(set(cells)) == 1 else " *"
        rows.append([key + marker, str(entry["cases"]), *cells])
    legend = " / ".join(name for name, _ in _CELL)
    return [
        "## The matrix",
        "",
        f"Cases per op and spec version: {legend}. `*`: the runtimes differ on that row. "
        "fallback: the provider asked for did not take the node and onnxruntime ran it on the "
        "CPU provider (read from the session profile); those values are not the provider's, "
        "so they are counted nowhere else.",
        "",
        *_table(["op-version", "cases", *map(runtime, documents)], rows),
        "",
    ]


def _causes(documents: Sequence[dict[str, Any]]) -> list[str]:
    rows = []
    for code, title in causes.TITLES.items():
        counts = [str(d["causes"].get(code, {}).get("cases", 0)) for d in documents]
        if any(c != "0" for c in counts):
            rows.append([f"`{code}`", title, *counts])
    return [
        "## Causes",
        "",
        "Cases per cause (a case can have several).",
        "",
        *_table(["cause", "meaning", *map(runtime, documents)], rows),
        "",
    ]


def _no_kernel(documents: Sequence[dict[str, Any]]) -> list[str]:
    rows = []
    matrices = [_rows(d) for d in documents]
    for key in matrices[0]:
        cells = [", ".join(m[key]["no_kernel_types"]) or "-" for m in matrices]
        if any(c != "-" for c in cells):
            rows.append([key, *cells])
    return [
        "## Element types without an onnxruntime kernel",
        "",
        *_table(["op-version", *map(runtime, documents)], rows),
        "",
    ]


def _features(case: dict[str, Any]) -> str:
    """What a group of cases has in common, defaults left out: ``pads, ceil_mode=1, Indices``."""
    parts = [_PADDING.get(case["padding"], case["padding"])]
    parts += [f"{axis}={case[axis]}" for axis in ("ceil_mode", "count_include_pad") if case[axis]]
    if case["dilation"] > 1:
        parts.append(f"dilation={case['dilation']}")
    if case["indices"]:
        parts.append("Indices")
    if case["data"] != "random":
        parts.append(f"data={case['data']}")
    return ", ".join(parts)


def _verdict(case: dict[str, Any]) -> str:
    if case["status"] == FALLBACK:
        return f"fallback ({case.get('executed_by') or '?'})"
    named = [c["code"] for c in case["causes"] if c["code"] != causes.NO_KERNEL]
    return case["status"] + (f" ({', '.join(named)})" if named else "")


def _upgrade(title: str, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    groups: dict[tuple, list[tuple[dict, dict]]] = defaultdict(list)
    for before, after in zip(old["cases"], new["cases"], strict=True):
        if before["status"] == after["status"]:
            continue
        key = (
            f"{before['op']}-{before['version']}",
            *(before[axis] for axis in _GROUP_AXES),
            _verdict(before),
            _verdict(after),
        )
        groups[key].append((before, after))
    fixed = sum(
        len(pairs)
        for pairs in groups.values()
        if pairs[0][0]["status"] not in _GOOD and pairs[0][1]["status"] in _GOOD
    )
    broken = sum(
        len(pairs)
        for pairs in groups.values()
        if pairs[0][0]["status"] in _GOOD and pairs[0][1]["status"] not in _GOOD
    )
    changed = sum(len(pairs) for pairs in groups.values())
    title = f"## {title}"
    if not groups:
        return [title, "", "Nothing: every case has the same verdict on both.", ""]
    rows = []
    for key, pairs in groups.items():
        cases = [before for before, _ in pairs]
        features = _features(dict(zip(_GROUP_AXES, key[1:-2], strict=True)))
        dtypes = ", ".join(sorted({c["dtype"] for c in cases}))
        ranks = ", ".join(str(r) for r in sorted({c["rank"] for c in cases}))
        rows.append([key[0], features, f"{len(cases)} ({dtypes}; rank {ranks})", key[-2], key[-1]])
    return [
        title,
        "",
        f"{changed} case(s) change verdict: {fixed} now agree with the spec, {broken} no longer "
        f"do, {changed - fixed - broken} change otherwise.",
        "",
        *_table(["op-version", "case", "cases (types; ranks)", runtime(old), runtime(new)], rows),
        "",
    ]


#: What a group of cases on two providers may have in common, besides op and types.
_SHARED_AXES = ("rank", "storage_order", *_GROUP_AXES)


def _provider_changes(title: str, cpu: dict[str, Any], other: dict[str, Any]) -> list[str]:
    """The cases whose verdict on another provider is not the CPU provider's, per operator and
    pair of verdicts, with what all the cases of a group have in common: a provider is another
    implementation, so the changes are too many to list case by case."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for before, after in zip(cpu["cases"], other["cases"], strict=True):
        if before["status"] != after["status"]:
            # Indices and their layout are computed apart from Y's values: split on them.
            key = (
                before["op"],
                before["status"],
                after["status"],
                after["indices"],
                after["storage_order"],
            )
            groups[key].append(after)
    if not groups:
        return [f"## {title}", "", "Nothing: every case has the same verdict on both.", ""]
    total = _change_totals(groups)
    rows = [
        _group_row(op, before, after, found)
        for (op, before, after, *_), found in sorted(groups.items(), key=lambda kv: -len(kv[1]))
    ]
    changed = sum(total.values())
    return [
        f"## {title}",
        "",
        f"{changed} case(s) have another verdict: {total['right']} agree with the spec on "
        f"{runtime(other)} where the CPU provider does not, {total['wrong']} the reverse, "
        f"{total['fallback']} fall back to the CPU provider (not {_provider(other)}'s result), "
        f"{total['other']} change otherwise. Grouped per operator and pair of verdicts; "
        "'shared' lists the grid values every case of the group has.",
        "",
        *_table(["op (versions)", "cases", "types", "shared", runtime(cpu), runtime(other)], rows),
        "",
    ]


def _change_totals(groups: dict[tuple, list[dict]]) -> Counter:
    """How many changed cases now agree with the spec ("right"), no longer do ("wrong"), fell
    back to the CPU provider, or change otherwise."""
    total: Counter = Counter()
    for (_, before, after, *_), found in groups.items():
        if after == FALLBACK:
            total["fallback"] += len(found)
        elif before not in _GOOD and after in _GOOD:
            total["right"] += len(found)
        elif before in _GOOD and after not in _GOOD:
            total["wrong"] += len(found)
        else:
            total["other"] += len(found)
    return total


def _group_row(op: str, before: str, after: str, found: list[dict]) -> list[str]:
    """One group's line: versions, count, types, the grid values every case shares, verdicts."""
    shared = []
    for axis in _SHARED_AXES:
        values = {c[axis] for c in found}
        if len(values) == 1:
            shared.append(f"{axis}={values.pop()}")
    spec_versions = ", ".join(str(v) for v in sorted({c["version"] for c in found}))
    dtypes = ", ".join(sorted({c["dtype"] for c in found}))
    return [
        f"{op} ({spec_versions})",
        str(len(found)),
        dtypes,
        ", ".join(shared) or "-",
        before,
        after,
    ]
