"""ortpool conformance: the grid, per-case verdicts against onnxruntime, the matrix and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
import runtime_defects

from ortpool import versions
from ortpool.attributes import normalize
from ortpool.cli import main
from ortpool.ort import runtime
from ortpool.validate import causes, dtypes, grid, results
from ortpool.validate.conformance import cause_totals, matrix, run_conformance

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
    spec = r.case.spec()
    feeds = grid.case_inputs(r.case, 0)
    return runtime_defects.builtin(spec.op, spec.opset, spec.attributes, feeds, spec.n_outputs)


def y_differs(r) -> bool:
    """Whether the built-in's Y differs from ortpool's kernels on the case, asked directly."""
    got = builtin(r)
    assert got.outputs is not None, got.error
    spec = r.case.spec()
    ours = runtime_defects.spec(spec.op, spec.opset, spec.attributes, grid.case_inputs(r.case, 0))
    return runtime_defects.differing_cells(got.outputs[0], ours[0], spec.op == "AveragePool") > 0


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
    assert out.splitlines()[0] == (
        f"ortpool conformance: onnxruntime {env['onnxruntime']} built-in pooling against the ONNX "
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
        (["conformance", "--ops", "LpPool"], "unknown pooling operator 'LpPool'"),
        (["conformance", "--versions", "x"], "comma-separated integers"),
        (["conformance", "--ops", "MaxPool", "--versions", "7"], "select no case"),
    ],
)
def test_cli_bad_arguments_exit_2(capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err
