"""ortpool conformance: the grid, per-case verdicts against onnxruntime, the matrix and the CLI."""

from __future__ import annotations

import json

import pytest

from ortpool import versions
from ortpool.attributes import normalize
from ortpool.cli import main
from ortpool.validate import causes, grid, results
from ortpool.validate.conformance import cause_totals, matrix, run_conformance


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


def test_same_with_dilation_differs_for_that_cause(maxpool12):
    for r in pick(maxpool12, padding="SAME_UPPER", dilation=2, ceil_mode=0):
        assert r.node.status == results.DIFFER
        assert [c.code for c in r.node.causes] == [causes.SAME_DILATION]
    for r in pick(maxpool12, padding="SAME_UPPER", dilation=1):
        assert r.node.status in (results.AGREE, results.TIES)


def test_ceil_with_valid_and_big_pads(maxpool12):
    for r in pick(maxpool12, padding="VALID", ceil_mode=1, dilation=1):
        assert r.node.status == results.DIFFER
        assert causes.CEIL_VALID in [c.code for c in r.node.causes]
    for r in pick(maxpool12, padding="big-pads"):
        assert r.node.status == results.ORT_REJECTED
        assert r.node.causes[0].code == causes.PADS_GE_KERNEL


def test_plain_padding_agrees(maxpool12):
    plain = pick(maxpool12, padding="none", data="random") + pick(
        maxpool12, padding="pads", data="random"
    )
    assert plain and all(r.node.status in (results.AGREE, results.TIES) for r in plain)


def test_matrix_counts_add_up(maxpool12):
    (row,) = matrix(maxpool12)
    assert row.key == "MaxPool-12" and row.cases == len(maxpool12)
    assert sum(row.statuses.values()) == len(maxpool12)
    totals = cause_totals(maxpool12)
    same = pick(maxpool12, dilation=2)
    expected = sum(
        1 for r in same if r.case.padding.startswith("SAME") and r.node.status == results.DIFFER
    )
    assert totals[causes.SAME_DILATION][0] == expected


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
    assert "onnxruntime has no kernel for:" in out
    assert "  AveragePool-1: double, float, float16" in out
    assert "  AveragePool-7: double" in out
    doc = json.loads(report.read_text())
    rows = {(m["op"], m["version"]): m for m in doc["matrix"]}
    assert rows[("AveragePool", 1)]["statuses"] == {"no-kernel": rows[("AveragePool", 1)]["cases"]}
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
    ],
)
def test_cli_bad_arguments_exit_2(capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err
