"""ortpool conformance: the grid, per-case verdicts against onnxruntime, the matrix and the CLI."""

from __future__ import annotations

import collections
import json

import numpy as np
import pytest

from ortpool import dtypes, versions
from ortpool.attributes import normalize
from ortpool.check import causes, grid
from ortpool.cli import main
from ortpool.conformance.run import run_conformance
from ortpool.errors import OrtpoolError
from ortpool.ort import runtime
from ortpool.report import record as results
from ortpool.report.matrix import cause_totals, matrix
from tests.support import runtime_defects
from tests.support.scripts import load_script

conformance_compare = load_script("conformance_compare")

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime


def test_grid_covers_every_version_and_its_attributes_only():
    cases = grid.cases()
    assert 500 <= len(cases) <= 8000
    keys = {(c.op, c.version) for c in cases}
    assert keys == {(v.op, v.version) for v in versions.all_versions()}
    for case in cases:
        opv = versions.get(case.op, case.version)
        assert case.dtype in opv.types
        # every generated node is legal for its version (so a difference is never our typo)
        normalize(opv, case.attributes, case.rank)
        if "dilations" not in opv.attrs:
            assert case.dilation == 1
        if "ceil_mode" not in opv.attrs:
            assert case.ceil_mode == 0
    ids = [c.id for c in cases]
    assert ids == list(range(len(cases)))


def test_grid_inputs_are_seeded():
    case = grid.cases(ops=["MaxPool"], versions_wanted=[12], dtypes_wanted=["float"])[5]
    a, b = grid.case_inputs(case, 0)[0], grid.case_inputs(case, 0)[0]
    assert (a == b).all()
    assert not (grid.case_inputs(case, 1)[0] == a).all()


@pytest.fixture(scope="module")
def maxpool12():
    cases = grid.cases(ops=["MaxPool"], versions_wanted=[12], dtypes_wanted=["float"], ranks=[1, 2])
    return run_conformance(cases)


def pick(found, **want):
    return [r for r in found if all(getattr(r.case, k) == v for k, v in want.items())]


def builtin(r) -> runtime_defects.Builtin:
    """The case run by onnxruntime's built-in directly, not through run_conformance."""
    feeds = grid.case_inputs(r.case, 0)
    site = r.case.site(feeds)
    return runtime_defects.builtin(site.op, site.opset, site.attributes, feeds, site.n_outputs)


def y_differs(r) -> bool:
    """Whether the built-in's Y differs from ortpool's kernels on the case, asked directly."""
    feeds = grid.case_inputs(r.case, 0)
    site = r.case.site(feeds)
    cells = runtime_defects.y_differs(
        site.op, site.opset, site.attributes, feeds, site.n_outputs
    )
    return cells > 0


def assert_verdicts(cases, cause: str | None) -> None:
    """Cases the built-in gets wrong differ (for ``cause`` when given); the others agree."""
    for r in cases:
        if y_differs(r):
            assert r.node.status == results.DIFFER
            assert cause is None or cause in [c.code for c in r.node.causes]
        else:
            assert r.node.status in (results.AGREE, results.TIES)


def test_same_with_dilation_differs_for_that_cause(maxpool12):
    same = pick(maxpool12, padding="SAME_UPPER", dilation=2, ceil_mode=0, data="random")
    # onnxruntime 1.21 to 1.32 get every one wrong
    runtime_defects.require(any(map(y_differs, same)), "pads SAME for the dilated kernel")
    assert_verdicts(same, causes.SAME_DILATION)
    for r in same:
        if r.node.status == results.DIFFER:
            assert [c.code for c in r.node.causes] == [causes.SAME_DILATION]
    undilated = pick(maxpool12, padding="SAME_UPPER", dilation=1, data="random")
    assert undilated
    assert_verdicts(undilated, None)
    assert all(causes.SAME_DILATION not in [c.code for c in r.node.causes] for r in undilated)


def test_ceil_with_valid(maxpool12):
    valid = pick(maxpool12, padding="VALID", ceil_mode=1, dilation=1, data="random")
    # onnxruntime 1.21 to 1.32 get every one wrong
    runtime_defects.require(any(map(y_differs, valid)), "sizes VALID without ceil_mode")
    assert_verdicts(valid, causes.CEIL_VALID)


def test_big_pads(maxpool12):
    big = pick(maxpool12, padding="big-pads")
    refused = {r.case.id for r in big if builtin(r).error is not None}
    # onnxruntime 1.21 to 1.32 refuse every one
    runtime_defects.require(bool(refused), "runs pads >= kernel")
    for r in big:
        if r.case.id in refused:
            assert r.node.status == results.ORT_REJECTED
            assert r.node.causes[0].code == causes.PADS_GE_KERNEL
        else:
            assert r.node.status != results.ORT_REJECTED


def test_plain_padding_verdicts_match_a_direct_comparison(maxpool12):
    plain = pick(maxpool12, padding="none", data="random") + pick(
        maxpool12, padding="pads", data="random"
    )
    assert plain
    for r in plain:
        differs = y_differs(r)
        assert (r.node.status == results.DIFFER) == differs
        if not differs:
            assert r.node.status in (results.AGREE, results.TIES)


def test_matrix_counts_add_up(maxpool12):
    (row,) = matrix(maxpool12)
    assert row.key == "MaxPool-12" and row.cases == len(maxpool12)
    assert sum(row.statuses.values()) == len(maxpool12)
    totals = cause_totals(maxpool12)
    same = pick(maxpool12, dilation=2)
    expected = sum(
        1 for r in same if r.case.padding.startswith("SAME") and r.node.status == results.DIFFER
    )
    assert totals.get(causes.SAME_DILATION, (0, []))[0] == expected


def test_cli_matrix_and_json(tmp_path, capsys):
    report = tmp_path / "c.json"
    code = main(
        [
            "conformance",
            "--ops",
            "AveragePool",
            "--versions",
            "1,7",
            "--ranks",
            "1",
            "--json",
            str(report),
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    env = runtime.versions()
    # The matrix names the build, its version and the provider it measured.
    assert out.splitlines()[0] == (
        f"ortpool conformance: {env['onnxruntime_build']} {env['onnxruntime']} on "
        "CPUExecutionProvider: built-in pooling against the ONNX "
        f"spec (onnxruntime-extensions {env['onnxruntime_extensions']}, onnx {env['onnx']}, "
        f"ortpool {env['ortpool']})"
    )
    # onnxruntime 1.21 to 1.32: AveragePool-1 for none of its types, AveragePool-7 not for double
    lacking = {
        version: [
            dtype
            for dtype in versions.get("AveragePool", version).types
            if runtime_defects.builtin(
                "AveragePool", version, {"kernel_shape": [2]},
                [np.zeros((1, 1, 4), dtypes.NUMPY[dtype])],
            ).no_kernel
        ]
        for version in (1, 7)
    }
    assert ("onnxruntime has no kernel for:" in out) == any(lacking.values())
    for version, types in lacking.items():
        if types:
            assert f"  AveragePool-{version}: {', '.join(sorted(types))}" in out
    doc = json.loads(report.read_text())
    assert doc["environment"]["onnxruntime_extensions"] == env["onnxruntime_extensions"]
    rows = {(m["op"], m["version"]): m for m in doc["matrix"]}
    assert rows[("AveragePool", 1)]["no_kernel_types"] == sorted(lacking[1])
    assert len(doc["cases"]) == sum(m["cases"] for m in doc["matrix"])
    first = doc["cases"][0]
    assert {"op", "version", "dtype", "rank", "padding", "status", "causes"} <= set(first)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # named as flags, not as the Python keywords ("ranks [4]", "ops: ...")
        (["conformance", "--ranks", "4"], "error: --ranks [4] must name ranks among 1, 2, 3"),
        (["conformance", "--ops", "Conv"], "error: --ops: unknown pooling operator 'Conv'"),
        (["conformance", "--versions", "x"], "comma-separated integers"),
        (["conformance", "--ops", "MaxPool", "--versions", "7"], "select no case"),
        # a provider this build does not have: named, with what it has, before any case runs
        (["conformance", "--providers", "NoSuchExecutionProvider"],
         "--providers: NoSuchExecutionProvider is not available in this onnxruntime"),
    ],
)
def test_cli_bad_arguments_exit_2(capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.fixture(scope="module")
def small_report(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("conf") / "c.json"
    argv = ["conformance", "--ops", "MaxPool", "--versions", "12", "--dtypes", "float",
            "--ranks", "1", "--json", str(path), "--no-progress"]
    assert main(argv) == 0
    return json.loads(path.read_text())


def measured(report: dict, release: str, statuses: dict[int, str]) -> dict:
    """``report`` as if measured on onnxruntime ``release``, with case id -> status (any other
    case keeps its own), so that what changes is known whatever this runtime measured; the rows
    counted again (a difference's basis: the spec's text, as same-dilation's is at version 12)."""
    other = json.loads(json.dumps(report))
    other["environment"]["onnxruntime"] = release
    for case in other["cases"]:
        if case["id"] in statuses:
            case["status"] = statuses[case["id"]]
            case["causes"] = (
                [{"code": causes.SAME_DILATION, "basis": causes.SPEC_TEXT}]
                if case["status"] == "differ"
                else []
            )
    for row in other["matrix"]:
        mine = [c for c in other["cases"] if c["op"] == row["op"]]
        row["statuses"] = dict(collections.Counter(c["status"] for c in mine))
        row["bases"] = dict(collections.Counter(
            conformance_compare.case_basis(c) for c in mine
            if c["status"] in conformance_compare.DIFFERING
        ))
    return other


def cells(page: str, key: str) -> list[dict[str, int]]:
    """The matrix row ``key`` of a page: per column, its counts by the legend's groups."""
    (legend,) = [line for line in page.splitlines() if line.startswith("Cases per op and spec")]
    groups = legend.split(": ", 1)[1].split(". ", 1)[0].split(" / ")
    (row,) = [line for line in page.splitlines() if line.startswith(f"| {key}")]
    found = [cell.strip() for cell in row.strip("| ").split(" | ")[2:]]
    return [dict(zip(groups, map(int, cell.split(" / ")), strict=True)) for cell in found]


def test_compare_lists_what_an_upgrade_changes(small_report):
    a, b, c = (case["id"] for case in small_report["cases"][:3])
    old = measured(small_report, "1.0.0", {a: results.DIFFER, b: results.AGREE, c: results.AGREE})
    new = measured(small_report, "9.9.9", {a: results.AGREE, b: results.DIFFER, c: "no-kernel"})
    page = conformance_compare.markdown([old, new])
    assert "## What upgrading onnxruntime from 1.0.0 to 9.9.9 changes" in page
    assert "3 case(s) change verdict: 1 now agree with the spec, 2 no longer do, 0 change " in page
    changes = page.split("changes\n", 1)[1]
    assert "| 1 (float; rank 1) | differ (same-dilation) | agree |" in changes
    assert "| 1 (float; rank 1) | agree | differ (same-dilation) |" in changes
    assert "| 1 (float; rank 1) | agree | no-kernel |" in changes
    before = collections.Counter(case["status"] for case in old["cases"])
    # the no kernel count of each release, and no fallback column (no provider but the CPU's)
    was, now = cells(page, "MaxPool-12 *")
    assert (was["no kernel"], now["no kernel"]) == (before["no-kernel"], before["no-kernel"] + 1)
    assert "fallback" not in was
    assert sum(was.values()) == sum(now.values()) == len(old["cases"])
    same = conformance_compare.markdown([old, measured(old, "9.9.9", {})])
    assert "Nothing: every case has the same verdict on both." in same
    assert "| MaxPool-12 * |" not in same


def test_compare_refuses_reports_over_different_grids(small_report, tmp_path):
    other = measured(small_report, "9.9.9", {})
    other["settings"]["seed"] = 1
    this = runtime.versions()["onnxruntime"]
    with pytest.raises(OrtpoolError) as err:
        conformance_compare.markdown([small_report, other])
    assert str(err.value).startswith(
        f"the reports of onnxruntime {this} and onnxruntime 9.9.9 are not over the same grid: "
        "settings "
    )
    stray = tmp_path / "v.json"
    stray.write_text(json.dumps({"tool": "ortpool validate"}))
    with pytest.raises(OrtpoolError, match="is not an 'ortpool conformance --json' report"):
        conformance_compare.load([stray, stray])
    # a report written before the differences were counted by basis cannot be split by it
    older = json.loads(json.dumps(small_report))
    del older["bases"]
    stray.write_text(json.dumps(older))
    with pytest.raises(OrtpoolError, match="counts no difference by basis"):
        conformance_compare.load([stray, stray])


def _on(report: dict, build: str, providers: list[str]) -> dict:
    other = json.loads(json.dumps(report))
    other["environment"]["onnxruntime_build"] = build
    other["runtime"] = {**other.get("runtime", {}), "providers": providers}
    return other


def test_compare_sets_another_provider_beside_its_builds_cpu_provider(small_report):
    a, b, c = (case["id"] for case in small_report["cases"][:3])
    cpu = _on(measured(small_report, "1.24.1", {a: results.AGREE, b: results.DIFFER}),
              "onnxruntime-openvino", ["CPUExecutionProvider"])
    ov = _on(measured(small_report, "1.24.1", {a: results.DIFFER, b: results.AGREE}),
             "onnxruntime-openvino", ["OpenVINOExecutionProvider", "CPUExecutionProvider"])
    for case in ov["cases"]:
        if case["id"] == c:  # the CPU provider ran it: whatever its values, not OpenVINO's
            case["executed_by"] = "CPUExecutionProvider"
            fell = case
    ov["matrix"][0]["statuses"] = dict(
        collections.Counter(x["status"] for x in ov["cases"] if x["id"] != c)
    )
    if fell["status"] in conformance_compare.DIFFERING:
        ov["matrix"][0]["bases"][conformance_compare.case_basis(fell)] -= 1
    ov["matrix"][0]["fell_back"] = {"CPUExecutionProvider": 1}
    ov["matrix"][0]["fell_back_statuses"] = {fell["status"]: 1}
    page = conformance_compare.markdown([small_report, cpu, ov])
    title = ("## What the OpenVINOExecutionProvider changes against the CPU provider "
             "(onnxruntime-openvino 1.24.1)")
    assert title in page
    section = page.split(title, 1)[1]
    assert "3 case(s) have another verdict: 1 agree with the spec on onnxruntime-openvino " \
        "1.24.1 OpenVINO where the CPU provider does not, 1 the reverse, 1 fall back to the " \
        "CPU provider" in section
    assert "| onnxruntime-openvino 1.24.1 CPU | onnxruntime-openvino 1.24.1 OpenVINO |" in section
    # no upgrade section between builds: 1.32's CPU build and the OpenVINO build's CPU provider
    assert page.count("## What upgrading") == 0
    *_, on_openvino = cells(page, "MaxPool-12 *")
    assert on_openvino["fallback"] == 1
    assert "| providers | CPUExecutionProvider | CPUExecutionProvider | " \
        "OpenVINOExecutionProvider, CPUExecutionProvider |" in page
    # the provider has its paragraph, with what it changes against its build's CPU provider
    assert "**onnxruntime-openvino 1.24.1 OpenVINO, in short**" in page
    assert "1 case agree with the spec here but not on the CPU provider, 1 case the reverse" \
        in page


# --- two runtimes, by hand: the basis split and the cause rows ------------------------------


def _case(id_: int, op: str, version: int, status: str, *named: tuple[str, str], **grid) -> dict:
    """A report's case: ``named`` its causes as (code, basis)."""
    return {
        "id": id_, "op": op, "version": version, "dtype": "float", "rank": 2, "padding": "pads",
        "ceil_mode": 0, "dilation": 1, "count_include_pad": 0, "storage_order": 0,
        "indices": False, "data": "random", "attributes": {}, "status": status,
        "causes": [
            {"code": code, "title": causes.TITLES[code], "detail": "", "basis": basis,
             "ruling": None, "quote": "it can take any value greater than or equal to 0"
             if code == causes.PADS_GE_KERNEL else None}
            for code, basis in named
        ],
        "builtin_shapes": [], "executed_by": None, **grid,
    }


def _report(runtime_described: dict, cases: list[dict]) -> dict:
    """A conformance report of ``cases``, counted as ortpool counts them (matrix rows, bases,
    causes): the page is built from these fields alone."""
    rows: dict[tuple[str, int], dict] = {}
    found: dict[str, dict] = {}
    for case in cases:
        row = rows.setdefault((case["op"], case["version"]), {
            "op": case["op"], "version": case["version"], "cases": 0, "statuses": {},
            "causes": {}, "bases": {}, "no_kernel_types": [], "fell_back": {},
            "fell_back_statuses": {}})
        row["cases"] += 1
        row["statuses"][case["status"]] = row["statuses"].get(case["status"], 0) + 1
        if case["status"] in conformance_compare.DIFFERING:
            basis = conformance_compare.case_basis(case)
            row["bases"][basis] = row["bases"].get(basis, 0) + 1
        if case["status"] == "no-kernel" and case["dtype"] not in row["no_kernel_types"]:
            row["no_kernel_types"].append(case["dtype"])
        for cause in case["causes"]:
            entry = found.setdefault(cause["code"], {"cases": 0, "where": [], "bases": {}})
            entry["cases"] += 1
            entry["bases"][cause["basis"]] = entry["bases"].get(cause["basis"], 0) + 1
    bases: collections.Counter = collections.Counter()
    for row in rows.values():
        bases.update(row["bases"])
    return {
        "tool": "ortpool conformance",
        "environment": {"ortpool": "0.1.0", "onnxruntime": "1.32.0", "onnx": "1.23.2"},
        "settings": {"seed": 0},
        "runtime": runtime_described,
        "matrix": list(rows.values()),
        "bases": dict(bases),
        "causes": found,
        "cases": cases,
    }


TEXT, R1, R5, R6, R11 = causes.SPEC_TEXT, "ruling 1", "ruling 5", "ruling 6", "ruling 11"


@pytest.fixture
def two_runtimes() -> list[dict]:
    """onnxruntime 1.32.0 and tract 0.23.9 over one grid of six cases."""
    ort = _report({"onnxruntime": "1.32.0", "build": "onnxruntime",
                   "providers": ["CPUExecutionProvider"]}, [
        _case(0, "MaxPool", 12, "agree"),
        _case(1, "MaxPool", 12, "differ", (causes.SAME_DILATION, TEXT)),
        _case(2, "MaxPool", 12, "ort-rejected", (causes.PADS_GE_KERNEL, TEXT),
              (causes.EMPTY_WINDOW, R5), padding="big-pads"),
        _case(3, "MaxPool", 12, "agree"),
        _case(4, "LpPool", 18, "no-kernel", (causes.NO_KERNEL, TEXT), dtype="double"),
        _case(5, "LpPool", 18, "agree"),
    ])
    tract = _report({"runtime": "tract", "release": "0.23.9", "device": "CPU",
                     "precision": "the model's element types", "case_timeout": 60.0}, [
        _case(0, "MaxPool", 12, "agree"),
        _case(1, "MaxPool", 12, "agree"),
        _case(2, "MaxPool", 12, "differ", (causes.LOWEST_MAX_INDEX, R6), padding="big-pads"),
        _case(3, "MaxPool", 12, "differ", (causes.END_PAD_WINDOW, R1), ceil_mode=1),
        _case(4, "LpPool", 18, "no-kernel", (causes.NO_KERNEL, TEXT), dtype="double"),
        _case(5, "LpPool", 18, "crashed", (causes.CRASHED, R11), data="zero-size"),
    ])
    return [ort, tract]


def test_compare_splits_each_runtime_by_basis_and_names_its_causes(two_runtimes):
    rulings = {1: ("Output size", "1-output-size"), 5: ("Pads", "5-pads"),
               6: ("NaN", "6-nan"), 11: ("Errors", "11-errors")}
    page = conformance_compare.markdown(two_runtimes, rulings=rulings)
    assert page.startswith("# Pooling against the ONNX spec, runtime by runtime")
    lines = page.splitlines()
    assert "|  | onnxruntime 1.32.0 | tract 0.23.9 |" in lines
    # the differing cases by basis: one row per basis, each ruling linked to its heading
    bases = page.split("## Differing cases by basis", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in bases.splitlines() if line.startswith("| ")][1:]  # no header
    assert rows == [
        "| cases | 6 | 6 |",
        "| agree | 3 | 2 |",
        "| **differ** | **1** | **2** |",
        "| &nbsp;&nbsp;spec text | 1 | 0 |",
        "| &nbsp;&nbsp;[ruling 1](rulings.md#1-output-size): Output size | 0 | 1 |",
        "| &nbsp;&nbsp;[ruling 6](rulings.md#6-nan): NaN | 0 | 1 |",
        "| refused | 1 | 0 |",
        "| no kernel | 1 | 1 |",
        "| crashed | 0 | 1 |",
    ]
    # the matrix: a column per runtime, the groups no column has left out and said so
    assert cells(page, "MaxPool-12 *") == [
        {"agree": 2, "spec text": 1, "ruling": 0, "refused": 1, "no kernel": 0, "crashed": 0},
        {"agree": 2, "spec text": 0, "ruling": 2, "refused": 0, "no kernel": 0, "crashed": 0},
    ]
    assert cells(page, "LpPool-18 *")[1]["crashed"] == 1
    assert "No column has a case RULINGS, timed out, both refuse, fallback" in page
    # the causes: a row per cause and basis, with the runtime's cases
    table = page.split("## Causes", 1)[1].split("\n## ", 1)[0]
    assert [line.split(" | ")[0::2] for line in table.splitlines() if line.startswith("| `")] == [
        ["| `same-dilation`", "spec text", "0 |"],
        ["| `end-pad-window`", "[ruling 1](rulings.md#1-output-size)", "1 |"],
        ["| `empty-window`", "[ruling 5](rulings.md#5-pads)", "0 |"],
        ["| `pads-ge-kernel`", "spec text", "0 |"],
        ["| `lowest-max-index`", "[ruling 6](rulings.md#6-nan)", "1 |"],
        ["| `no-kernel`", "spec text", "1 |"],
        ["| `crashed`", "[ruling 11](rulings.md#11-errors)", "1 |"],
    ]
    assert f"| `same-dilation` | {causes.TITLES[causes.SAME_DILATION]} | spec text | 1 | 0 |" \
        in lines
    assert ("- `pads-ge-kernel` (MaxPool-12): \"it can take any value greater than or equal to "
            "0\"") in lines
    # tract in short, from its figures; onnxruntime's CPU provider has no paragraph of its own
    (short,) = [line for line in lines if "in short**" in line]
    assert short.startswith("**tract 0.23.9, in short** (6 cases): 2 agree. It departs from the "
                            "rulings in 2 cases ([ruling 1](rulings.md#1-output-size) 1: "
                            "`end-pad-window` 1 in MaxPool-12; [ruling 6](rulings.md#6-nan) 1: "
                            "`lowest-max-index` 1 in MaxPool-12).")
    assert short.endswith("It has no kernel for 1 case: double LpPool. Its process died on 1 "
                          "case (LpPool-18; all dtype=float, rank=2, data=zero-size).")


def test_compare_checks_the_findings_written_for_a_release(two_runtimes):
    doc = load_script("conformance_doc")
    tract = doc._is("tract", "0.23")
    findings = [
        doc.counted("it crashes on zero-size planes", tract, lambda c: c["data"] == "zero-size",
                    doc._status("crashed"), "zero-size cases", every=True),
        doc.counted("its windows in the end pad are kept", tract, doc._op("MaxPool"),
                    doc._cause(causes.END_PAD_WINDOW), "MaxPool cases", every=True,
                    detail=doc._per("ceil_mode", lambda c: c["ceil_mode"])),
        doc.counted("it has no MaxPool", tract, doc._op("MaxPool"), doc._status("no-kernel"),
                    "MaxPool cases"),
        doc.counted("never shown", doc._is("tract", "0.24"), doc._op("MaxPool"),
                    doc._status("agree"), "MaxPool cases"),
    ]
    page = conformance_compare.markdown(two_runtimes, findings=findings, rulings={})
    assert "Findings written for tract 0.23.9, checked against these figures:" in page
    assert "- holds: it crashes on zero-size planes (1 of the 1 zero-size cases)" in page
    assert ("- **holds in part**: its windows in the end pad are kept (1 of the 4 MaxPool cases; "
            "by ceil_mode, 0 0 of 3, 1 1 of 1)") in page
    assert "- **does not hold**: it has no MaxPool (0 of the 4 MaxPool cases)" in page
    assert "never shown" not in page


def test_a_rank_named_twice_counts_its_cases_once():
    """ranks=[1, 1] (--ranks 1,1) ran every case of rank 1 twice: the matrix counted each cell,
    each difference and the total twice. A filter is a set of values, in the order given."""
    from ortpool.conformance.api import selected

    once, _ = selected("GlobalMaxPool", [1], ["float"], [1], 0, False, "python")
    twice, settings = selected("GlobalMaxPool", [1], ["float"], [1, 1], 0, False, "python")
    assert (len(twice), settings["ranks"]) == (len(once), [1])
