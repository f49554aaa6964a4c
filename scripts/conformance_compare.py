"""Conformance reports of several runtimes, releases and providers side by side, and what
upgrading or changing provider changes.

The input is the documents ``ortpool conformance --json`` writes, one per column (a runtime's
release: onnxruntime by build and provider, OpenVINO's own runtime, tract, the onnx reference
evaluator), all over the same grid (same ortpool, seed and filters: the cases are then matched
by id). The output is a Markdown page: each runtime beyond onnxruntime's CPU provider in short,
the runtimes measured, the differing cases by basis (the spec's text, each ruling), the matrix
with a column per runtime, the causes by basis per runtime, the spec's words each cause breaks,
the missing kernels, per upgrade step of one onnxruntime build and provider the cases whose
verdict changed, and for every onnxruntime provider other than the CPU one the cases whose
verdict differs from the CPU provider's of the same build.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ortpool.check import causes
from ortpool.errors import OrtpoolError
from ortpool.report import record as results

ROOT = Path(__file__).resolve().parent.parent
RULINGS_PAGE = ROOT / "docs" / "rulings.md"

#: The grid axes a group of changed cases is described by (the rest is listed as values seen).
_GROUP_AXES = ("padding", "ceil_mode", "dilation", "count_include_pad", "indices", "data")
_GOOD = (results.AGREE, results.TIES, results.ACCURACY_NOTE)
#: The statuses counted by their basis (``matrix.DIFFERING``).
DIFFERING = (results.DIFFER, results.INACCURATE, results.ORTPOOL_REJECTED)
_PADDING = {"none": "no pads", "big-pads": "pads >= kernel"}
#: A case's verdict here when the provider asked for first did not execute it (the report says
#: which did, ``executed_by``): its values are another provider's.
FALLBACK = "fallback"
SPEC_TEXT = causes.SPEC_TEXT
#: The groups of a matrix cell, in the page's order, each with the statuses it counts; the two
#: differing groups count :data:`DIFFERING` cases by basis instead (the rows' ``bases``).
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("agree", _GOOD),
    ("spec text", ()),
    ("ruling", ()),
    ("RULINGS", (results.RULINGS,)),
    ("refused", (results.ORT_REJECTED,)),
    ("no kernel", (results.NO_KERNEL,)),
    ("crashed", (results.CRASHED,)),
    ("timed out", (results.TIMED_OUT,)),
    ("both refuse", (results.BOTH_REJECTED,)),
    ("fallback", (FALLBACK,)),
)
CPU = "CPUExecutionProvider"
#: The heading of the section quoting the spec's words (linked from the bases' table).
QUOTES = "The spec's words each cause breaks"
ONNXRUNTIME = "onnxruntime"
#: How the page names a runtime of ``--runtime`` (others: as the report does).
RUNTIME_NAMES = {"openvino": "OpenVINO", "tract": "tract", "reference": "onnx reference"}


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
        if "bases" not in document or any("bases" not in row for row in document["matrix"]):
            raise OrtpoolError(
                f"{str(path)!r} counts no difference by basis: it was written by an ortpool "
                "before the bases; run 'ortpool conformance --json' again"
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
                    f"the reports of {title(first)} and {title(other)} are not over the same "
                    f"grid: {what} {a!r} != {b!r}"
                )


# --- what a report measured -----------------------------------------------------------------


def _description(document: dict[str, Any]) -> dict[str, Any]:
    """The report's description of its runtime (older reports: the environment's)."""
    return document.get("runtime") or document["environment"].get("runtime") or {}


def runtime_name(document: dict[str, Any]) -> str:
    """The runtime judged: ``onnxruntime``, ``openvino``, ``tract``, ``reference``..."""
    return _description(document).get("runtime", ONNXRUNTIME)


def is_onnxruntime(document: dict[str, Any]) -> bool:
    return runtime_name(document) == ONNXRUNTIME


def release(document: dict[str, Any]) -> str:
    """The judged runtime's release (onnxruntime's, or the other runtime's own)."""
    if is_onnxruntime(document):
        return document["environment"]["onnxruntime"]
    return str(_description(document).get("release", "?"))


def _build(document: dict[str, Any]) -> str:
    return document["environment"].get("onnxruntime_build", ONNXRUNTIME)


def _providers(document: dict[str, Any]) -> list[str]:
    """The onnxruntime providers asked for (reports before providers could be named: the CPU
    one); none for another runtime."""
    if not is_onnxruntime(document):
        return []
    return list(_description(document).get("providers") or [CPU])


def _provider(document: dict[str, Any]) -> str:
    """The onnxruntime provider asked for first ("" for another runtime)."""
    providers = _providers(document)
    return providers[0].split("(", 1)[0] if providers else ""


def _short(provider: str) -> str:
    return provider.removesuffix("ExecutionProvider")


def title(document: dict[str, Any]) -> str:
    """A report's column title: the runtime and release (``onnxruntime 1.32.0``, ``tract
    0.23.9``), with onnxruntime's build and provider when they are not the CPU build's CPU
    provider (``onnxruntime-openvino 1.24.1 OpenVINO``)."""
    if not is_onnxruntime(document):
        name = runtime_name(document)
        return f"{RUNTIME_NAMES.get(name, name)} {release(document)}"
    label = f"{_build(document)} {release(document)}"
    if _build(document) != ONNXRUNTIME or _provider(document) != CPU:
        label += " " + _short(_provider(document))
    return label


def heading(document: dict[str, Any]) -> tuple[str, str]:
    """:func:`title` in two lines: the runtime (onnxruntime's build), then the release and
    provider."""
    if not is_onnxruntime(document):
        name = runtime_name(document)
        return RUNTIME_NAMES.get(name, name), release(document)
    build = _build(document)
    return build, title(document).removeprefix(build + " ")


def is_cpu_onnxruntime(document: dict[str, Any]) -> bool:
    """onnxruntime on its CPU provider: the page's baseline columns (no "in short" of their own:
    the upgrade sections say what changes between them)."""
    return is_onnxruntime(document) and _provider(document) == CPU


def _with_fallback(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with the verdict :data:`FALLBACK` for every case the first provider did not
    execute, and those cases counted under it in the matrix rows (the report keeps them apart,
    ``fell_back``, with the values' own verdict)."""
    asked = _provider(document)
    out = dict(document)
    out["cases"] = [
        {**case, "status": FALLBACK}
        if asked and case.get("executed_by") not in (None, "?", asked)
        else case
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


# --- counting -------------------------------------------------------------------------------


def cell(row: dict[str, Any]) -> dict[str, int]:
    """A matrix row's cases per group of :data:`GROUPS` (the differing ones by basis); they add
    up to the row's cases, or the report holds a status the page does not know."""
    statuses = Counter(row["statuses"])
    bases = row.get("bases", {})
    counts = {name: sum(statuses[s] for s in group) for name, group in GROUPS}
    counts["spec text"] = bases.get(SPEC_TEXT, 0)
    counts["ruling"] = sum(n for basis, n in bases.items() if basis != SPEC_TEXT)
    known = {s for _, group in GROUPS for s in group} | set(DIFFERING)
    unknown = sorted(set(statuses) - known)
    if unknown or sum(counts.values()) != sum(statuses.values()):
        raise OrtpoolError(
            f"{row['op']}-{row['version']}: the statuses {dict(statuses)} and the bases "
            f"{bases} do not add up (statuses the page does not know: {unknown})"
        )
    return counts


def totals(document: dict[str, Any]) -> dict[str, int]:
    """The whole grid's cases per group of :data:`GROUPS` (fallback counted: call it on a
    document :func:`_with_fallback` made)."""
    total: Counter = Counter()
    for row in document["matrix"]:
        total.update(cell(row))
    return {name: total[name] for name, _ in GROUPS}


def basis_totals(document: dict[str, Any]) -> dict[str, int]:
    """The differing cases by basis over the grid (``spec text``, ``ruling N``...)."""
    total: Counter = Counter()
    for row in document["matrix"]:
        total.update(row.get("bases", {}))
    return results.ordered_bases(total)


def case_basis(case: dict[str, Any]) -> str:
    """A case's verdict basis as the reports count it (``causes.verdict_basis``): the spec's
    text if one of its causes rests on it, else the first cause's ruling."""
    bases = [c["basis"] for c in case["causes"] if c.get("basis")]
    if SPEC_TEXT in bases:
        return SPEC_TEXT
    return bases[0] if bases else results.UNNAMED


def shown_groups(documents: Sequence[dict[str, Any]]) -> list[str]:
    """The groups some column has a case in (agree and the two bases always)."""
    seen = Counter()
    for document in documents:
        seen.update(totals(document))
    return [name for name, _ in GROUPS if seen[name] or name in ("agree", "spec text", "ruling")]


def _rows(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The matrix rows of ``document`` by op-version."""
    return {f"{row['op']}-{row['version']}": row for row in document["matrix"]}


# --- the rulings ----------------------------------------------------------------------------


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading (tests/project/test_docs.py checks the links)."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def rulings_index(path: Path = RULINGS_PAGE) -> dict[int, tuple[str, str]]:
    """Ruling number -> (title, anchor) from docs/rulings.md's ``## N. Title`` headings."""
    found = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            match = re.match(r"## (\d+)\. (.*)", line)
            if match:
                found[int(match.group(1))] = (match.group(2).strip(), slug(line[3:]))
    return found


def _ruling_number(basis: str) -> int | None:
    return int(basis.split()[-1]) if basis.startswith("ruling ") else None


def basis_link(basis: str, rulings: dict[int, tuple[str, str]], named: bool = False) -> str:
    """``ruling 5`` linked to its heading in rulings.md (with its title when ``named``)."""
    number = _ruling_number(basis)
    if number is None or number not in rulings:
        return basis
    heading, anchor = rulings[number]
    link = f"[{basis}](rulings.md#{anchor})"
    return f"{link}: {heading.replace('`', '')}" if named else link


# --- the page -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Finding:
    """A finding written for one runtime's releases (``applies``), stated under its "in short"
    with whether the report's figures bear it out: ``check`` gives (its verdict, the figures),
    the verdict one of :data:`VERDICTS`."""

    text: str
    applies: Callable[[dict[str, Any]], bool]
    check: Callable[[dict[str, Any], Sequence[dict[str, Any]]], tuple[str, str]]


HOLDS, IN_PART, NOT = "holds", "holds in part", "does not hold"
#: A finding's verdicts, as the page words them.
VERDICTS = {HOLDS: "holds", IN_PART: "**holds in part**", NOT: "**does not hold**"}


def markdown(
    documents: Sequence[dict[str, Any]],
    preamble: str = "",
    findings: Sequence[Finding] = (),
    rulings: dict[int, tuple[str, str]] | None = None,
) -> str:
    check_same_grid(documents)
    documents = [_with_fallback(d) for d in documents]
    rulings = rulings_index() if rulings is None else rulings
    lines = ["# Pooling against the ONNX spec, runtime by runtime and release by release", ""]
    if preamble:
        lines += [preamble, ""]
    lines += in_short(documents, findings, rulings)
    lines += _versions(documents)
    lines += _bases(documents, rulings)
    lines += _matrix(documents)
    lines += _causes(documents, rulings)
    lines += _quotes(documents)
    lines += _no_kernel(documents)
    for render, heading, old, new in _pairs(documents):
        lines += render(heading, old, new)
    return "\n".join(lines).rstrip() + "\n"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _versions(documents: Sequence[dict[str, Any]]) -> list[str]:
    def described(document: dict[str, Any], key: str) -> str:
        value = _description(document).get(key)
        return "-" if value is None else str(value)

    rows = [
        ["runtime", *(RUNTIME_NAMES.get(runtime_name(d), runtime_name(d)) for d in documents)],
        ["release", *map(release, documents)],
        ["onnxruntime build", *(_build(d) if is_onnxruntime(d) else "-" for d in documents)],
        ["providers", *(", ".join(_providers(d)) or "-" for d in documents)],
        ["device", *(described(d, "device") for d in documents)],
        ["precision", *(described(d, "precision") for d in documents)],
        ["case timeout (s)", *(described(d, "case_timeout") for d in documents)],
    ]
    for key in ("onnx", "onnxruntime_extensions", "ortpool", "numpy", "python"):
        rows.append([key.replace("_", "-"), *(d["environment"].get(key, "?") for d in documents)])
    rows.append(
        ["cases (seed)", *(f"{len(d['cases'])} ({d['settings']['seed']})" for d in documents)]
    )
    return [
        "## Measured on",
        "",
        "onnxruntime-extensions, onnx, numpy and python: the environment each grid ran in (the "
        "onnx reference evaluator is that onnx's).",
        "",
        *_table(["", *map(title, documents)], rows),
        "",
    ]


def _bases(documents: Sequence[dict[str, Any]], rulings: dict[int, tuple[str, str]]) -> list[str]:
    """The grid's totals per column, the differing cases split by basis."""
    by = [basis_totals(d) for d in documents]
    keys = list(results.ordered_bases(Counter(k for b in by for k in b)))
    counts = [totals(d) for d in documents]
    shown = shown_groups(documents)
    rows = [["cases", *(str(len(d["cases"])) for d in documents)]]
    rows.append(["agree", *(str(c["agree"]) for c in counts)])
    rows.append(
        [
            "**differ**",
            *(f"**{c['spec text'] + c['ruling']}**" for c in counts),
        ]
    )
    for key in keys:
        label = "spec text" if key == SPEC_TEXT else basis_link(key, rulings, named=True)
        rows.append([f"&nbsp;&nbsp;{label}", *(str(b.get(key, 0)) for b in by)])
    for name in shown:
        if name not in ("agree", "spec text", "ruling"):
            rows.append([name, *(str(c[name]) for c in counts)])
    return [
        "## Differing cases by basis",
        "",
        "The cases each runtime gets wrong, by what they break: the spec's written words (a "
        "formula or a sentence of that op version's text, quoted under "
        f"[the spec's words](#{slug(QUOTES)})) or a ruling, where the "
        "spec is silent or ambiguous (its number links to it); then the cases that differ only "
        "in cells the spec gives no value (RULINGS), are refused though the spec defines them, "
        "have no kernel, crash the runtime's process or time out (each counted apart).",
        "",
        *_table(["", *map(title, documents)], rows),
        "",
    ]


def _matrix(documents: Sequence[dict[str, Any]]) -> list[str]:
    shown = shown_groups(documents)
    rows = []
    matrices = [_rows(d) for d in documents]
    for key, entry in matrices[0].items():
        cells = []
        for matrix in matrices:
            counts = cell(matrix[key])
            cells.append(" / ".join(str(counts[name]) for name in shown))
        marker = "" if len(set(cells)) == 1 else " *"
        rows.append([key + marker, str(entry["cases"]), *cells])
    legend = " / ".join(shown)
    absent = [name for name, _ in GROUPS if name not in shown]
    none = (
        f" No column has a case {', '.join(absent)}: those counts are left out." if absent else ""
    )
    return [
        "## The matrix",
        "",
        f"Cases per op and spec version: {legend}. spec text and ruling split the differing "
        "cases by basis; RULINGS, cases differing only in cells the spec gives no value (NaN in "
        "a window, empty windows); refused, cases the runtime refuses that the spec defines; "
        "both refuse, cases the spec refuses too; fallback, cases the onnxruntime provider "
        "asked for did not take (onnxruntime ran them on the CPU provider, read from the "
        "session profile: those values are not the provider's, so they are counted nowhere "
        f"else). `*`: the runtimes differ on that row.{none}",
        "",
        *_table(["op-version", "cases", *map(title, documents)], rows),
        "",
    ]


def _titles(documents: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Cause code -> title as the reports word it (the code's own where no report has it)."""
    found = dict(causes.TITLES)
    for document in documents:
        for case in document["cases"]:
            for cause in case["causes"]:
                found.setdefault(cause["code"], cause.get("title") or cause["code"])
    return found


def _causes(documents: Sequence[dict[str, Any]], rulings: dict[int, tuple[str, str]]) -> list[str]:
    titles = _titles(documents)
    rows = []
    for code in titles:
        per = [d["causes"].get(code, {}).get("bases", {}) for d in documents]
        for basis in results.ordered_bases(Counter(k for p in per for k in p)):
            counts = [str(p.get(basis, 0)) for p in per]
            rows.append(
                [f"`{code}`", titles[code], basis_link(basis, rulings), *counts]
            )
    return [
        "## Causes",
        "",
        "Cases per cause and basis, whatever their verdict (a case can have several causes; a "
        "cause's basis can differ between op versions, where one version's text holds the "
        "words another's lacks). A cause is named only where the runtime's values equal the "
        "spec's recomputed under the reading it stands for, or, where no value can be read "
        "(refused, crashed, no kernel), from the node's attributes and shape; `unrecognised`: "
        "a difference no known reading explains.",
        "",
        *_table(["cause", "meaning", "basis", *map(title, documents)], rows),
        "",
    ]


def _where(keys: Iterable[str]) -> str:
    """``MaxPool-10/11/12, AveragePool-19`` from op-version keys: the operators in their first
    order, the versions in theirs."""
    by: dict[str, list[str]] = {}
    for key in keys:
        op, _, version = key.rpartition("-")
        if version not in by.setdefault(op, []):
            by[op].append(version)
    return ", ".join(
        f"{op}-{'/'.join(sorted(versions, key=int))}" for op, versions in by.items()
    )


def _quotes(documents: Sequence[dict[str, Any]]) -> list[str]:
    """Each cause resting on the spec's text, with the words it breaks and where."""
    where: dict[tuple[str, str], list[str]] = {}
    for document in documents:
        for case in document["cases"]:
            if case["status"] == FALLBACK:
                continue
            for cause in case["causes"]:
                if cause.get("basis") == SPEC_TEXT and cause.get("quote"):
                    keys = where.setdefault((cause["code"], cause["quote"]), [])
                    key = f"{case['op']}-{case['version']}"
                    if key not in keys:
                        keys.append(key)
    lines = [
        f"## {QUOTES}",
        "",
        "For each cause on the spec-text basis, the words of the op version's text it breaks, "
        "and where (on any runtime above).",
        "",
    ]
    order = list(_titles(documents))
    for (code, quote), keys in sorted(where.items(), key=lambda kv: order.index(kv[0][0])):
        lines.append(f"- `{code}` ({_where(keys)}): \"{quote}\"")
    if not where:
        lines.append("No cause of any column rests on the spec's text.")
    return [*lines, ""]


def _no_kernel(documents: Sequence[dict[str, Any]]) -> list[str]:
    rows = []
    matrices = [_rows(d) for d in documents]
    for key in matrices[0]:
        cells = []
        for matrix in matrices:
            row = matrix[key]
            types = ", ".join(sorted(row["no_kernel_types"])) or "-"
            if row["statuses"].get(results.NO_KERNEL, 0) == row["cases"]:
                types = f"all ({types})"
            cells.append(types)
        if any(c != "-" for c in cells):
            rows.append([key, *cells])
    return [
        "## Element types without a kernel",
        "",
        "all: no case of the row runs (the runtime has no kernel for the op version).",
        "",
        *_table(["op-version", *map(title, documents)], rows),
        "",
    ]


# --- each runtime in short ------------------------------------------------------------------


def _plural(n: int, word: str = "case") -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _named(found: Sequence[dict[str, Any]], basis: str | None = None, limit: int = 6) -> str:
    """The causes of ``found`` (on ``basis`` alone if given) with their cases and where, most
    cases first: ``same-size 120 (MaxPool-10/11), ...``."""
    counts: Counter = Counter()
    where: dict[str, list[str]] = defaultdict(list)
    for case in found:
        for cause in case["causes"]:
            if cause["code"] == causes.NO_KERNEL or (basis and cause.get("basis") != basis):
                continue
            counts[cause["code"]] += 1
            key = f"{case['op']}-{case['version']}"
            if key not in where[cause["code"]]:
                where[cause["code"]].append(key)
    if not counts:
        return "no cause named"
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    parts = [f"`{code}` {n} in {_where(where[code])}" for code, n in ranked[:limit]]
    if len(ranked) > limit:
        parts.append(f"{len(ranked) - limit} more causes")
    return "; ".join(parts)


def summarise(
    cases: Sequence[dict[str, Any]],
    hit: Callable[[dict[str, Any]], bool],
    among: Callable[[dict[str, Any]], bool] = lambda case: True,
) -> str:
    """The cases ``hit`` picks in few words: the operators all of whose cases ``among`` it
    picks, then the element types all of whose remaining cases it picks, then per type the
    operators, then the op versions, then a count of the rest."""
    left = [c for c in cases if among(c)]
    parts = []

    def take(
        key: Callable[[dict[str, Any]], tuple[str, str]], alone: bool, several: bool = False
    ) -> None:
        """Groups by ``key`` (type, name) all of whose cases are picked (over ``several``
        operators), named alone or per type."""
        nonlocal left
        groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for case in left:
            groups[key(case)].append(case)
        whole = [
            k
            for k, group in groups.items()
            if all(map(hit, group)) and (not several or len({c["op"] for c in group}) > 1)
        ]
        if not whole:
            return
        if alone:
            parts.append(", ".join(name for _, name in whole))
        else:
            per: dict[str, list[str]] = defaultdict(list)
            for dtype, name in whole:
                per[dtype].append(name)
            parts.extend(f"{dtype} {', '.join(names)}" for dtype, names in per.items())
        left = [c for c in left if key(c) not in whole]

    take(lambda c: ("", c["op"]), alone=True)
    take(lambda c: ("", f"{c['dtype']} (any operator)"), alone=True, several=True)
    take(lambda c: (c["dtype"], c["op"]), alone=False)
    take(lambda c: (c["dtype"], f"{c['op']}-{c['version']}"), alone=False)
    rest = [c for c in left if hit(c)]
    if rest:
        keys = [f"{c['op']}-{c['version']}" for c in rest]
        parts.append(f"{_plural(len(rest))} more in {_where(keys)}")
    return "; ".join(parts)


def _shared(found: Sequence[dict[str, Any]]) -> str:
    """The grid values every case of ``found`` has, beyond op and version."""
    shared = []
    for axis in ("dtype", "rank", "data"):
        values = {str(c[axis]) for c in found}
        if len(values) == 1:
            shared.append(f"{axis}={values.pop()}")
    return ", ".join(shared)


def in_short(
    documents: Sequence[dict[str, Any]],
    findings: Sequence[Finding],
    rulings: dict[int, tuple[str, str]],
) -> list[str]:
    """A paragraph per column beyond onnxruntime's CPU provider, written from its figures, and
    the findings written for its release, each checked against them."""
    lines = []
    for document in documents:
        if is_cpu_onnxruntime(document):
            continue
        lines += [_paragraph(document, documents, rulings), ""]
        mine = [f for f in findings if f.applies(document)]
        if mine:
            lines += [
                f"Findings written for {title(document)}, checked against these figures:",
                "",
            ]
            for finding in mine:
                verdict, figures = finding.check(document, documents)
                lines.append(f"- {VERDICTS[verdict]}: {finding.text} ({figures})")
            lines.append("")
    if not lines:
        return []
    return ["## Each runtime in short", "", *lines]


def _paragraph(
    document: dict[str, Any],
    documents: Sequence[dict[str, Any]],
    rulings: dict[int, tuple[str, str]],
) -> str:
    cases = document["cases"]
    total = totals(document)
    by = basis_totals(document)
    differing = [c for c in cases if c["status"] in DIFFERING]
    words = [f"**{title(document)}, in short** ({len(cases)} cases): {total['agree']} agree."]
    spec = [c for c in differing if case_basis(c) == SPEC_TEXT]
    if spec:
        words.append(
            f"It breaks the spec's text in {_plural(len(spec))} ({_named(spec, SPEC_TEXT)})."
        )
    ruled = [k for k in by if k != SPEC_TEXT]
    if ruled:
        parts = []
        for key in ruled:
            found = [c for c in differing if case_basis(c) == key]
            parts.append(f"{basis_link(key, rulings)} {len(found)}: {_named(found, key, 3)}")
        count = sum(by[k] for k in ruled)
        words.append(f"It departs from the rulings in {_plural(count)} ({'; '.join(parts)}).")
    if not spec and not ruled:
        words.append("No case differs.")
    if total["RULINGS"]:
        only = [c for c in cases if c["status"] == results.RULINGS]
        words.append(
            f"{_plural(total['RULINGS'])} differ only in cells the spec gives no value "
            f"({_named(only, None, 3)})."
        )
    if total["refused"]:
        refused = [c for c in cases if c["status"] == results.ORT_REJECTED]
        words.append(
            f"It refuses {_plural(total['refused'])} the spec defines ({_named(refused, None, 4)})."
        )
    if total["no kernel"]:
        none = summarise(cases, lambda c: c["status"] == results.NO_KERNEL)
        words.append(f"It has no kernel for {_plural(total['no kernel'])}: {none}.")
    for name, status, verb in (
        ("crashed", results.CRASHED, "Its process died on"),
        ("timed out", results.TIMED_OUT, "It gave no answer in time on"),
    ):
        if total[name]:
            found = [c for c in cases if c["status"] == status]
            keys = [f"{c['op']}-{c['version']}" for c in found]
            shared = _shared(found)
            words.append(
                f"{verb} {_plural(total[name])} ({_where(keys)}"
                + (f"; all {shared}" if shared else "")
                + ")."
            )
    if total["fallback"]:
        ran = (results.NO_KERNEL, results.ORT_REJECTED, results.BOTH_REJECTED)
        fell = summarise(cases, lambda c: c["status"] == FALLBACK, lambda c: c["status"] not in ran)
        words.append(
            f"onnxruntime ran {_plural(total['fallback'])} on another provider (fallback): "
            f"{fell}."
        )
    base = _baseline(document, documents)
    if base is not None:
        words.append(
            f"Against {title(base)} (the section below lists each group): "
            + _against(base, document)
            + "."
        )
    return " ".join(words)


def _baseline(document: dict[str, Any], documents: Sequence[dict[str, Any]]) -> dict | None:
    """The CPU provider of the same onnxruntime build and release, for another provider."""
    if not is_onnxruntime(document) or _provider(document) == CPU:
        return None
    for other in documents:
        same = (_build(other), release(other)) == (_build(document), release(document))
        if same and _provider(other) == CPU:
            return other
    return None


def _against(cpu: dict[str, Any], other: dict[str, Any]) -> str:
    right = wrong = 0
    for before, after in zip(cpu["cases"], other["cases"], strict=True):
        if after["status"] == FALLBACK or before["status"] == after["status"]:
            continue
        right += before["status"] not in _GOOD and after["status"] in _GOOD
        wrong += before["status"] in _GOOD and after["status"] not in _GOOD
    return (
        f"{_plural(right)} agree with the spec here but not on the CPU provider, "
        f"{_plural(wrong)} the reverse"
    )


# --- what an upgrade or another provider changes --------------------------------------------


def _pairs(documents: Sequence[dict[str, Any]]):
    """(render, title, old, new) for each comparison the page makes: an upgrade step within one
    onnxruntime build and provider; each other provider against the CPU provider of its build
    and release."""
    for index, new in enumerate(documents):
        if not is_onnxruntime(new):
            continue
        for old in reversed(documents[:index]):
            if is_onnxruntime(old) and (_build(old), _provider(old)) == (
                _build(new),
                _provider(new),
            ):
                heading = (
                    f"What upgrading {_build(new)} from {release(old)} to {release(new)} changes"
                )
                if _provider(new) != CPU:
                    heading += f" on the {_short(_provider(new))} provider"
                yield _upgrade, heading, old, new
                break
        base = _baseline(new, documents)
        if base is not None:
            heading = (
                f"What the {_provider(new)} changes against the CPU provider "
                f"({_build(new)} {release(new)})"
            )
            yield _provider_changes, heading, base, new


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


def _upgrade(heading: str, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
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
    heading = f"## {heading}"
    if not groups:
        return [heading, "", "Nothing: every case has the same verdict on both.", ""]
    rows = []
    for key, pairs in groups.items():
        cases = [before for before, _ in pairs]
        features = _features(dict(zip(_GROUP_AXES, key[1:-2], strict=True)))
        dtypes = ", ".join(sorted({c["dtype"] for c in cases}))
        ranks = ", ".join(str(r) for r in sorted({c["rank"] for c in cases}))
        rows.append([key[0], features, f"{len(cases)} ({dtypes}; rank {ranks})", key[-2], key[-1]])
    return [
        heading,
        "",
        f"{changed} case(s) change verdict: {fixed} now agree with the spec, {broken} no longer "
        f"do, {changed - fixed - broken} change otherwise.",
        "",
        *_table(["op-version", "case", "cases (types; ranks)", title(old), title(new)], rows),
        "",
    ]


#: What a group of cases on two providers may have in common, besides op and types.
_SHARED_AXES = ("rank", "storage_order", *_GROUP_AXES)


def _provider_changes(heading: str, cpu: dict[str, Any], other: dict[str, Any]) -> list[str]:
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
        return [f"## {heading}", "", "Nothing: every case has the same verdict on both.", ""]
    total = _change_totals(groups)
    rows = [
        _group_row(op, before, after, found)
        for (op, before, after, *_), found in sorted(groups.items(), key=lambda kv: -len(kv[1]))
    ]
    changed = sum(total.values())
    return [
        f"## {heading}",
        "",
        f"{changed} case(s) have another verdict: {total['right']} agree with the spec on "
        f"{title(other)} where the CPU provider does not, {total['wrong']} the reverse, "
        f"{total['fallback']} fall back to the CPU provider (not {_provider(other)}'s result), "
        f"{total['other']} change otherwise. Grouped per operator and pair of verdicts; "
        "'shared' lists the grid values every case of the group has.",
        "",
        *_table(["op (versions)", "cases", "types", "shared", title(cpu), title(other)], rows),
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
