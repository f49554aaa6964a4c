"""``validate`` and ``conformance`` on LpPool, the global pools and MaxRoiPool: the causes named
(SAME with dilation and VALID with ceil_mode for LpPool, GlobalMaxPool's NaN, the accumulation of
a large global average, the empty plane), the tolerance that grows with the window, the rows of
the conformance grid. Measured with the installed onnxruntime (1.31.1 when written)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ortpool.check import causes, grid
from ortpool.conformance.run import run_conformance
from ortpool.report import record as results
from ortpool.report.matrix import matrix
from ortpool.tolerances import node_tolerance, tolerance_for
from tests.support.judging import run_node, site_of


def _run(op, opset, attrs, feeds, n_inputs=1):
    return run_node(op, opset, attrs, feeds[:n_inputs])


def test_sum_tolerances_follow_the_accuracy_rule():
    """The agree band of ruling 17 in the output's units: 4 x (log2 n + 1) * u * mean|x|
    (|y| / p for a norm); --atol/--rtol are 0 for sums unless given. (The measured cases are in
    tests/validate/test_accuracy.py.)"""
    x = np.full((1, 2, 4, 8), -0.5, np.float32)
    y = np.full((1, 2, 1, 1), -0.5, np.float32)
    tol = node_tolerance("GlobalAveragePool", 22, "float", x, y, {})
    np.testing.assert_array_equal(tol.slack, np.full(y.shape, 4 * 6 * 2**-24 * 0.5))  # log2 32
    window = node_tolerance("AveragePool", 22, "float", x, x[..., :2, :4],
                            {"kernel_shape": [3, 3], "strides": [2, 2]})
    assert (window.atol, window.rtol) == (0.0, 0.0)
    np.testing.assert_allclose(window.slack, np.full((1, 2, 1, 3), 4 * (math.log2(9) + 1)
                                                     * 2**-24 * 0.5), rtol=1e-15)
    norm = node_tolerance("GlobalLpPool", 2, "double", x, np.full((1, 2, 1, 1), 3.0), {})
    np.testing.assert_array_equal(norm.slack, np.full((1, 2, 1, 1), 4 * 6 * 2**-53 * 3.0 / 2))
    assert tolerance_for("MaxRoiPool", "float").exact
    assert tolerance_for("GlobalMaxPool", "double").exact


def test_global_max_pool_nan_is_a_rulings_cell():
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    x[0, 0, 1, 1] = np.nan
    node = _run("GlobalMaxPool", 22, {}, [x])
    assert node.status == results.RULINGS
    assert [c.code for c in node.causes] == [causes.GLOBAL_MAX_NAN]
    assert node.comparisons[0].examples == [
        {"at": [0, 0, 0, 0], "onnxruntime": 11.0, "ortpool": "nan"}
    ]


def test_empty_plane_rejected_by_onnxruntime():
    node = _run("GlobalAveragePool", 22, {}, [np.zeros((1, 2, 0, 3), np.float32)])
    assert node.status == results.ORT_REJECTED
    assert [c.code for c in node.causes] == [causes.EMPTY_WINDOW]
    assert "Only N can be zero" in node.message


def test_lppool_same_with_dilation_and_missing_kernels():
    x = np.random.default_rng(1).standard_normal((1, 2, 9, 9)).astype(np.float32)
    node = _run("LpPool", 18, {"kernel_shape": [3, 3], "dilations": [2, 2],
                               "auto_pad": "SAME_UPPER", "p": 3}, [x])
    assert node.status == results.DIFFER
    assert [c.code for c in node.causes] == [causes.SAME_DILATION]
    for op, opset, attrs, feeds in [
        ("LpPool", 1, {"kernel_shape": [2, 2], "p": 2.0}, [x]),
        ("GlobalLpPool", 22, {}, [x]),
        ("MaxRoiPool", 22, {"pooled_shape": [2, 2]}, [x, np.array([[0, 0, 0, 4, 4]], np.float32)]),
        ("GlobalAveragePool", 22, {}, [x.astype(np.float64)]),
    ]:
        node = _run(op, opset, attrs, feeds, n_inputs=len(feeds))
        assert node.status == results.NO_KERNEL, (op, opset)


# ------------------------------------------------------------ conformance rows


@pytest.fixture(scope="module")
def family():
    ops = ["LpPool", "GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool", "MaxRoiPool"]
    return run_conformance(grid.cases(ops=ops, ranks=[1, 2]))


def _pick(found, **want):
    return [r for r in found if all(getattr(r.case, k) == v for k, v in want.items())]


def test_every_new_version_has_rows(family):
    rows = {row.key for row in matrix(family)}
    assert rows == {f"{op}-{v}" for op, v in [
        ("LpPool", 1), ("LpPool", 2), ("LpPool", 11), ("LpPool", 18), ("LpPool", 22),
        ("GlobalMaxPool", 1), ("GlobalMaxPool", 22), ("GlobalAveragePool", 1),
        ("GlobalAveragePool", 22), ("GlobalLpPool", 1), ("GlobalLpPool", 2),
        ("GlobalLpPool", 22), ("MaxRoiPool", 1), ("MaxRoiPool", 22)]}


def test_lppool_rows(family):
    lp18 = _pick(family, op="LpPool", version=18, dtype="float")
    for r in _pick(lp18, padding="SAME_UPPER", dilation=2, ceil_mode=0):
        assert r.node.status == results.DIFFER
        assert [c.code for c in r.node.causes] == [causes.SAME_DILATION]
    for r in _pick(lp18, padding="VALID", ceil_mode=1):
        assert r.node.status == results.DIFFER
        assert causes.CEIL_VALID in [c.code for c in r.node.causes]
    plain = _pick(lp18, padding="none") + _pick(lp18, padding="pads")
    assert plain and all(r.node.status == results.AGREE for r in plain)
    for r in _pick(family, op="LpPool", padding="big-pads", dtype="float"):
        if r.case.version == 1:  # no LpPool-1 kernel at all
            assert r.node.status == results.NO_KERNEL
            continue
        assert r.node.status == results.ORT_REJECTED
        assert r.node.causes[0].code == causes.PADS_GE_KERNEL


def test_global_and_roi_rows(family):
    # onnxruntime keeps or drops a NaN depending on where it sits (its SIMD lanes): the grid's
    # NaN at the first of 7 elements is dropped, so that case differs; the others may agree.
    nan_cases = _pick(family, op="GlobalMaxPool", data="nan", dtype="float")
    assert any(r.node.status == results.RULINGS for r in nan_cases)
    for r in nan_cases:
        assert r.node.status in (results.RULINGS, results.AGREE)
        if r.node.status == results.RULINGS:
            assert [c.code for c in r.node.causes] == [causes.GLOBAL_MAX_NAN]
    for r in _pick(family, data="zero-size", dtype="float"):
        if r.node.status != results.NO_KERNEL:
            assert r.node.status == results.ORT_REJECTED
            assert [c.code for c in r.node.causes] == [causes.EMPTY_WINDOW]
    (norm,) = _pick(family, op="GlobalLpPool", version=2, data="large", dtype="float")
    assert norm.node.status == results.INACCURATE  # rounding beyond the limit (ruling 17)
    assert [c.code for c in norm.node.causes] == [causes.ACCUMULATION]
    rois = _pick(family, op="MaxRoiPool", version=1, dtype="float")
    assert {r.case.data: r.node.status for r in rois} == {
        "rois": results.AGREE, "rois-across": results.AGREE, "nan": results.RULINGS
    }
    assert all(r.node.status == results.NO_KERNEL for r in _pick(family, op="MaxRoiPool",
                                                                   version=22))
    unrecognised = [r for r in family if any(c.code == causes.UNRECOGNISED
                                             for c in r.node.causes)]
    assert unrecognised == []


def test_reference_defects_of_the_family(tmp_path):
    """--reference: onnx.reference's LpPool rescales the ceil overhang (the worked example of the
    issue: 19.5 where the spec gives 13) and has no GlobalLpPool or MaxRoiPool."""
    from ortpool.validate import validator as reference

    x = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7)
    attrs = {"kernel_shape": [3], "strides": [3], "pads": [1, 0], "p": 1, "ceil_mode": 1}
    node = run_node("LpPool", 22, attrs, [x])
    ours = node.judgement.captured.expected
    assert ours[0].reshape(-1).tolist() == [3.0, 12.0, 13.0]
    from ortpool import runtimes
    from ortpool.check.cases import FeedSet
    from ortpool.runtimes.base import Worker

    with Worker(runtimes.get("reference"), timeout=60) as worker:
        site = site_of("LpPool", 22, attrs, [x])
        judged = reference.reference(worker, site, FeedSet("x", [x], observed=True))
        assert (judged.status, judged.differing, judged.message) == (
            "differ", 1, "Y differs in 1 of 3 cells (on x, X [1, 1, 7]; e.g. at [0, 0, 2]: 19.5 "
            "instead of 13.0)")
        assert [(c.code, c.basis.label) for c in judged.causes] == [("lp-rescale", "ruling 12")]
        site = site_of("GlobalLpPool", 2, {}, [x])
        judged = reference.reference(worker, site, FeedSet("x", [x], observed=True))
    assert judged.status == "error"
    assert [(c.code, c.detail, c.basis.label) for c in judged.causes] == [
        ("no-kernel", "GlobalLpPool-2 (opset 2) for element type float: no implementation of "
         "GlobalLpPool", "spec text")]
