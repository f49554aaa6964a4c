"""Bad inputs of LpPool, the global pools and MaxRoiPool: a clear OrtpoolError naming the node,
the op version and the value, and the process lives on (ruling 11). As in test_bad_inputs,
one subprocess also runs every case and must exit 0. And ruling 15: float attributes cross
the op boundary exactly."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import ortpool
from ortpool import kernels
from ortpool.errors import OrtpoolError
from tests import support
from tests.ort.test_bad_inputs import (
    RunCase,
    check_create_case,
    check_run_case,
    raise_each,
    run_child,
)

F32 = np.float32


def _roi(attrs=None, version=22):
    return support.ortpool_model("MaxRoiPool", version, attrs or {"pooled_shape": [2, 2]}, F32,
                                 n_inputs=2, node_name="roi1")


X = np.arange(32, dtype=F32).reshape(2, 1, 4, 4)
GOOD_ROI = {"X": X, "rois": np.array([[1, 0, 0, 3, 3]], F32)}

RUN_CASES = [
    RunCase(
        "RoI batch index beyond N",
        _roi,
        {"X": X, "rois": np.array([[0, 0, 0, 1, 1], [2, 0, 0, 1, 1]], F32)},
        "node 'roi1' (MaxRoiPool-22): rois[1] = [2, 0, 0, 1, 1] has batch index 2; X has 2 "
        "plane(s) in its batch, so it must be an integer in [0, 2)",
        GOOD_ROI,
    ),
    RunCase(
        "RoI batch index not an integer",
        lambda: _roi(version=1),
        {"X": X, "rois": np.array([[0.5, 0, 0, 1, 1]], F32)},
        "node 'roi1' (MaxRoiPool-1): rois[0] = [0.5, 0, 0, 1, 1] has batch index 0.5; X has 2 "
        "plane(s) in its batch, so it must be an integer in [0, 2)",
        GOOD_ROI,
    ),
    RunCase(
        "RoI batch index negative",
        _roi,
        {"X": X, "rois": np.array([[-1, 0, 0, 1, 1]], F32)},
        "node 'roi1' (MaxRoiPool-22): rois[0] = [-1, 0, 0, 1, 1] has batch index -1; X has 2 "
        "plane(s) in its batch, so it must be an integer in [0, 2)",
        GOOD_ROI,
    ),
    RunCase(
        "RoI coordinate NaN",
        _roi,
        {"X": X, "rois": np.array([[0, 0, np.nan, 1, 1]], F32)},
        "node 'roi1' (MaxRoiPool-22): rois[0] = [0, 0, nan, 1, 1] has a non-finite value at "
        "column 2",
        GOOD_ROI,
    ),
    RunCase(
        "RoI coordinate infinite",
        _roi,
        {"X": X, "rois": np.array([[0, 0, 0, np.inf, 1]], F32)},
        "node 'roi1' (MaxRoiPool-22): rois[0] = [0, 0, 0, inf, 1] has a non-finite value at "
        "column 3",
        GOOD_ROI,
    ),
    RunCase(
        "RoI coordinate beyond any map",
        _roi,
        {"X": X, "rois": np.array([[0, 0, 0, 1e20, 1]], F32)},
        "node 'roi1' (MaxRoiPool-22): rois[0] = [0, 0, 0, 100000002004087734272, 1] scaled by "
        "spatial_scale=1.0 lies beyond +-2**40: no feature map is that large",
        GOOD_ROI,
    ),
    RunCase(
        "rois of the wrong shape",
        _roi,
        {"X": X, "rois": np.array([[0, 0, 1, 1]], F32)},
        "node 'roi1' (MaxRoiPool-22): input rois has shape [1, 4]; it must be (num_rois, 5): "
        "[batch_index, x1, y1, x2, y2] per RoI",
        GOOD_ROI,
    ),
    RunCase(
        "MaxRoiPool on a 3-D input",
        _roi,
        {"X": np.ones((1, 1, 4), F32), "rois": np.array([[0, 0, 0, 1, 1]], F32)},
        "node 'roi1' (MaxRoiPool-22): the input has 1 spatial axes; MaxRoiPool takes "
        "N x C x H x W",
        GOOD_ROI,
    ),
    RunCase(
        "global pool without a spatial axis",
        lambda: support.ortpool_model("GlobalAveragePool", 1, {}, F32, node_name="gap1"),
        {"X": np.ones((1, 4), F32)},
        "node 'gap1' (GlobalAveragePool-1): input X has shape [1, 4]; pooling needs "
        "(N, C, D1, ...) with at least one spatial axis",
        {"X": np.ones((1, 4, 1), F32)},
    ),
]


def _raw(op_type: str, attributes: dict, n_inputs: int = 1):
    node = support.raw_ortpool_node(op_type, attributes, n_inputs, 1, name="bad")
    return support.one_node_model(node, [F32] * n_inputs, [F32])


LP2 = {"auto_pad": "NOTSET", "kernel_shape": "2", "p": 2, "pads": "", "strides": ""}
LP1 = {**LP2, "p": "2.0"}
ROI = {"pooled_shape": "2,2", "spatial_scale": "1.0"}
CREATE_CASES = [
    ("p zero", lambda: _raw("LpPool_2", {**LP2, "p": 0}),
     "node 'bad' (LpPool-2): p=0 must be > 0 (the Lp norm needs p > 0)"),
    ("p negative float", lambda: _raw("LpPool_1", {**LP1, "p": "-1.5"}),
     "node 'bad' (LpPool-1): p=-1.5 must be a finite number > 0 (the Lp norm needs p > 0)"),
    ("p NaN", lambda: _raw("GlobalLpPool_1", {"p": "nan"}),
     "node 'bad' (GlobalLpPool-1): p=nan must be a finite number > 0 (the Lp norm needs p > 0)"),
    ("p negative int", lambda: _raw("GlobalLpPool_22", {"p": -2}),
     "node 'bad' (GlobalLpPool-22): p=-2 must be > 0 (the Lp norm needs p > 0)"),
    ("p as a float attribute", lambda: _raw("LpPool_1", {**LP1, "p": 2.0}),
     "node 'bad' (LpPool-1): attribute 'p' must be a string in the ortpool encoding, got FLOAT"),
    ("LpPool-1 with an empty kernel", lambda: _raw("LpPool_1", {**LP1, "kernel_shape": ""}),
     "node 'bad' (LpPool-1): kernel_shape='' must name at least one spatial axis"),
    ("pooled_shape of one value", lambda: _raw("MaxRoiPool_1", {**ROI, "pooled_shape": "7"}, 2),
     "node 'bad' (MaxRoiPool-1): pooled_shape='7' must have 2 values (height, width)"),
    ("spatial_scale not a number",
     lambda: _raw("MaxRoiPool_22", {**ROI, "spatial_scale": "1/16"}, 2),
     "node 'bad' (MaxRoiPool-22): spatial_scale='1/16' is not a decimal number"),
    ("an attribute a global pool lacks", lambda: _raw("GlobalMaxPool_22", {"p": 2}),
     "node 'bad' (GlobalMaxPool-22): attribute 'p' does not exist in this version (it has no "
     "attributes)"),
]


@pytest.mark.parametrize("case", RUN_CASES, ids=lambda c: c.name)
def test_bad_input_at_run(case):
    check_run_case(case)


@pytest.mark.parametrize(("name", "model", "message"), CREATE_CASES,
                         ids=[c[0] for c in CREATE_CASES])
def test_bad_node_at_session_creation(name, model, message):
    check_create_case(model, message)


def test_float_attributes_cross_exactly():
    """ruling 15. spatial_scale = float32(1/3) = 0.3333333432674408 puts x = 1.5 at
    0.50000001, which rounds to 1; printed with 6 digits (0.333333) it would be 0.4999995 and
    round to 0. GlobalLpPool-1's p = 0.1234567 likewise arrives whole."""
    scale = float(np.float32(1 / 3))
    x = np.arange(36, dtype=F32).reshape(1, 1, 6, 6)
    rois = np.array([[0, 1.5, 1.5, 4.5, 4.5]], F32)
    model = _roi({"pooled_shape": [1, 1], "spatial_scale": scale})
    assert [a.s for a in model.graph.node[0].attribute if a.name == "spatial_scale"] == [
        b"0.3333333432674408"
    ]
    (y,) = ortpool.InferenceSession(model).run(None, {"X": x, "rois": rois})
    assert y.reshape(-1).tolist() == [x[0, 0, 2, 2]]  # corners (1, 1)-(2, 2) -> max at (2, 2)
    six_digits = kernels.max_roi_pool(x, rois, pooled_shape=[1, 1], spatial_scale=0.333333)
    assert six_digits.reshape(-1).tolist() == [x[0, 0, 1, 1]]  # corners (0, 0)-(1, 1)

    planes = np.random.default_rng(0).random((1, 2, 5, 5)).astype(F32) + 1
    lp = support.ortpool_model("GlobalLpPool", 1, {"p": 0.1234567}, F32)
    (got,) = ortpool.InferenceSession(lp).run(None, {"X": planes})
    np.testing.assert_array_equal(got, kernels.global_lp_pool(planes, version=1, p=0.1234567))
    assert not np.array_equal(got, kernels.global_lp_pool(planes, version=1, p=0.123457))


def main() -> int:
    """Every case in this process; 0 when each raised as expected and the process lived."""
    failures = raise_each(RUN_CASES, CREATE_CASES)
    print("SURVIVED")
    return 1 if failures else 0


def test_the_process_lives():
    lines, raised = run_child(__file__)
    assert raised == [c.message for c in RUN_CASES] + [c[2] for c in CREATE_CASES]
    assert lines[-1] == "SURVIVED"


if __name__ == "__main__":
    sys.exit(main())


def test_roi_corners_bound_shrinks_with_large_pooled_shapes():
    """Bins are computed as ``i * span`` in int64: with pooled sizes above 2**21 the corner bound
    drops below 2**40 so that no product can wrap (a wrapped bin would read the wrong rows)."""
    from ortpool.kernels.roipool import MAX_CORNER, corner_limit

    assert corner_limit((7, 7)) == MAX_CORNER == 2**40
    assert corner_limit((2**22, 1)) == 2**39 - 1
    assert corner_limit((2**30, 1)) == 2**31 - 1
    x = np.zeros((1, 1, 2, 2), F32)
    inside = np.array([[0, 0, 0, 2.0**38, 1]], F32)
    y = kernels.max_roi_pool(x, inside, pooled_shape=[2**22, 1])
    assert y.shape == (1, 1, 2**22, 1)
    beyond = np.array([[0, 0, 0, 2.0**39, 1]], F32)
    with pytest.raises(OrtpoolError) as info:
        kernels.max_roi_pool(x, beyond, pooled_shape=[2**22, 1])
    assert str(info.value) == (
        "(MaxRoiPool-22): rois[0] = [0, 0, 0, 549755813888, 1] scaled by spatial_scale=1.0 lies "
        "beyond +-549755813887 (pooled_shape [4194304, 1]): no feature map is that large"
    )
