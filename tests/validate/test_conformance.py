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
        (["conformance", "--ranks", "4"], "must name ranks among 1, 2, 3"),
        (["conformance", "--ops", "Conv"], "unknown pooling operator 'Conv'"),
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
    case keeps its own), so that what changes is known whatever this runtime measured."""
    other = json.loads(json.dumps(report))
    other["environment"]["onnxruntime"] = release
    for case in other["cases"]:
        if case["id"] in statuses:
            case["status"] = statuses[case["id"]]
            case["causes"] = [{"code": causes.SAME_DILATION}] if case["status"] == "differ" else []
    for row in other["matrix"]:
        row["statuses"] = dict(
            collections.Counter(c["status"] for c in other["cases"] if c["op"] == row["op"])
        )
    return other


def test_compare_lists_what_an_upgrade_changes(small_report):
    a, b, c = (case["id"] for case in small_report["cases"][:3])
    old = measured(small_report, "1.0.0", {a: results.DIFFER, b: results.AGREE, c: results.AGREE})
    new = measured(small_report, "9.9.9", {a: results.AGREE, b: results.DIFFER, c: "no-kernel"})
    page = conformance_compare.markdown([old, new])
    assert "## What upgrading from onnxruntime 1.0.0 to 9.9.9 changes" in page
    assert "3 case(s) change verdict: 1 now agree with the spec, 2 no longer do, 0 change " in page
    changes = page.split("changes\n", 1)[1]
    assert "| 1 (float; rank 1) | differ (same-dilation) | agree |" in changes
    assert "| 1 (float; rank 1) | agree | differ (same-dilation) |" in changes
    assert "| 1 (float; rank 1) | agree | no-kernel |" in changes
    (row,) = [line for line in page.splitlines() if line.startswith("| MaxPool-12 * |")]
    before = collections.Counter(case["status"] for case in old["cases"])
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    # agree / differ / RULINGS / ORT rejects / no kernel / fallback, per release
    assert cells[-2].split(" / ")[4:] == [str(before[results.NO_KERNEL]), "0"]
    assert cells[-1].split(" / ")[4:] == [str(before[results.NO_KERNEL] + 1), "0"]
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
        f"the reports of onnxruntime {this} and 9.9.9 are not over the same grid: settings "
    )
    stray = tmp_path / "v.json"
    stray.write_text(json.dumps({"tool": "ortpool validate"}))
    with pytest.raises(OrtpoolError, match="is not an 'ortpool conformance --json' report"):
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
            fell = case["status"]
    ov["matrix"][0]["statuses"] = dict(
        collections.Counter(x["status"] for x in ov["cases"] if x["id"] != c)
    )
    ov["matrix"][0]["fell_back"] = {"CPUExecutionProvider": 1}
    ov["matrix"][0]["fell_back_statuses"] = {fell: 1}
    page = conformance_compare.markdown([small_report, cpu, ov])
    title = ("## What the OpenVINOExecutionProvider changes against the CPU provider "
             "(onnxruntime-openvino 1.24.1)")
    assert title in page
    section = page.split(title, 1)[1]
    assert "3 case(s) have another verdict: 1 agree with the spec on 1.24.1-openvino OpenVINO " \
        "where the CPU provider does not, 1 the reverse, 1 fall back to the CPU provider" in section
    assert "| 1.24.1-openvino CPU | 1.24.1-openvino OpenVINO |" in section
    # no upgrade section between builds: 1.32's CPU build and the OpenVINO build's CPU provider
    assert page.count("## What upgrading") == 0
    (row,) = [line for line in page.splitlines() if line.startswith("| MaxPool-12 * |")]
    assert row.rstrip(" |").split(" / ")[-1] == "1"  # the fallback cell of the OpenVINO column
    assert "| providers | CPUExecutionProvider | CPUExecutionProvider | " \
        "OpenVINOExecutionProvider, CPUExecutionProvider |" in page
