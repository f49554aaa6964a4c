"""Conformance reports of several onnxruntime releases side by side, and what upgrading changes.

The input is the documents ``ortpool conformance --json`` writes, one per runtime, oldest first,
all over the same grid (same ortpool, seed and filters: the cases are then matched by id). The
output is a Markdown page: the versions measured, the matrix with a column per runtime, the
causes per runtime, and per upgrade step the cases whose verdict changed, grouped by what the
cases have in common.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ortpool.errors import OrtpoolError
from ortpool.validate import causes, results

#: The grid axes a group of changed cases is described by (the rest is listed as values seen).
_GROUP_AXES = ("padding", "ceil_mode", "dilation", "count_include_pad", "indices", "data")
_GOOD = (results.AGREE, results.TIES, results.ACCURACY_NOTE)
_PADDING = {"none": "no pads", "big-pads": "pads >= kernel"}
#: Matrix cell order: agree / differ / RULINGS / ORT rejects / no kernel.
_CELL = (
    ("agree", _GOOD),
    ("differ", (results.DIFFER, results.INACCURATE, results.ORTPOOL_REJECTED)),
    ("RULINGS", (results.RULINGS,)),
    ("ORT rejects", (results.ORT_REJECTED, results.BOTH_REJECTED)),
    ("no kernel", (results.NO_KERNEL,)),
)


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
    return document["environment"]["onnxruntime"]


def markdown(documents: Sequence[dict[str, Any]], preamble: str = "") -> str:
    check_same_grid(documents)
    lines = ["# onnxruntime's pooling against the ONNX spec, release by release", ""]
    if preamble:
        lines += [preamble, ""]
    lines += _versions(documents)
    lines += _matrix(documents)
    lines += _causes(documents)
    lines += _no_kernel(documents)
    for old, new in itertools.pairwise(documents):
        lines += _upgrade(old, new)
    return "\n".join(lines).rstrip() + "\n"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _versions(documents: Sequence[dict[str, Any]]) -> list[str]:
    keys = ("onnxruntime", "onnxruntime_extensions", "onnx", "ortpool", "numpy", "python")
    rows = [
        [key.replace("_", "-"), *(d["environment"].get(key, "?") for d in documents)]
        for key in keys
    ]
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
        f"Cases per op and spec version: {legend}. `*`: the releases differ on that row.",
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
    named = [c["code"] for c in case["causes"] if c["code"] != causes.NO_KERNEL]
    return case["status"] + (f" ({', '.join(named)})" if named else "")


def _upgrade(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
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
    title = f"## What upgrading from onnxruntime {runtime(old)} to {runtime(new)} changes"
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
