"""The family's kernels beyond the property tests: both kernel paths bit for bit on tensors large
enough for lanes, tails, thread splits and the compiled passes; ruling 13's accuracy on
large planes; worked examples of rulings 12 and 14."""

from __future__ import annotations

import numpy as np
import pytest

from ortpool import kernels
from ortpool.kernels import _parallel, globalpool
from tests.kernels.test_backend import GEOMETRIES, _assert_same, _data, paths  # noqa: F401

pytest.importorskip("numba")


@pytest.mark.parametrize(("spatial", "attrs"), [pytest.param(*g[1:], id=g[0]) for g in GEOMETRIES])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", [1, 2, 3])
def test_lp_pool_bit_identical(paths, spatial, attrs, dtype, p):  # noqa: F811
    x = _data((2, 3, *spatial), dtype, seed=len(spatial) + p)
    _assert_same(*paths(lambda: kernels.lp_pool(x, version=22, p=p, **attrs)))


@pytest.mark.parametrize("size", [1, 7, 49, 255, 256, 257, 1025, 4099, 70001])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_global_pools_bit_identical(paths, size, dtype):  # noqa: F811
    rng = np.random.default_rng(size)
    x = (rng.standard_normal((2, 3, size)) * np.exp(rng.uniform(-6, 6, (2, 3, size))))
    x[1, 0, size // 2] = np.nan
    x[1, 1, 0] = -np.inf
    x[1, 2, -1] = np.inf
    x = x.astype(dtype)
    for call in (
        lambda: kernels.global_average_pool(x),
        lambda: kernels.global_max_pool(x, version=1),
        lambda: kernels.global_lp_pool(x),
        lambda: kernels.global_lp_pool(x, version=1, p=1.0),
        lambda: kernels.global_lp_pool(x, p=3),
    ):
        _assert_same(*paths(call), zero_sign=False)


@pytest.mark.parametrize("threads", [1, 2])
def test_large_global_and_lp_calls_split_bit_identical(paths, threads):  # noqa: F811
    _parallel.set_thread_count(threads)
    try:
        x = _data((1, 64, 96, 96), np.float32, seed=3)
        assert x.nbytes >= _parallel.MIN_PARALLEL_BYTES
        _assert_same(*paths(lambda: kernels.global_average_pool(x)))
        _assert_same(*paths(lambda: kernels.global_lp_pool(x)))
        _assert_same(*paths(lambda: kernels.lp_pool(x, kernel_shape=[3, 3], strides=[2, 2])))
        rois = _rois(300, 96, 96, scale=1.0, seed=4)
        _assert_same(*paths(lambda: kernels.max_roi_pool(x, rois, pooled_shape=[7, 7])),
                     zero_sign=False)
    finally:
        _parallel.set_thread_count(None)


def _rois(count: int, height: int, width: int, scale: float, seed: int) -> np.ndarray:
    """RoIs of every kind: inside, across the border, outside, degenerate (x2 < x1)."""
    rng = np.random.default_rng(seed)
    corners = rng.uniform(-0.2, 1.2, (count, 4)) * [width, height, width, height] / scale
    return np.concatenate([np.zeros((count, 1)), corners], axis=1).astype(np.float32)


def test_max_roi_pool_bit_identical(paths):  # noqa: F811
    x = _data((2, 5, 38, 50), np.float32, seed=9)
    rois = _rois(64, 38, 50, scale=0.0625, seed=1)
    rois[::3, 0] = 1
    for pooled in ([7, 7], [3, 5], [1, 1], [40, 60]):
        _assert_same(
            *paths(lambda pooled=pooled: kernels.max_roi_pool(x, rois, pooled_shape=pooled,
                                                              spatial_scale=0.0625)),
            zero_sign=False,
        )


def test_global_average_pool_within_2_ulp_on_a_large_map():
    """ruling 13 on a 2048x2048 float32 plane: uniform values are multiples of 2**-24, so
    the exact sum is an integer sum (no rounding anywhere)."""
    x = np.random.default_rng(0).random((1, 1, 2048, 2048), dtype=np.float32)
    exact = int((x.astype(np.float64) * 2.0**24).astype(np.int64).sum()) / 2.0**24 / x.size
    got = float(kernels.global_average_pool(x).reshape(-1)[0])
    assert abs(got - exact) <= 2 * float(np.spacing(np.float32(exact)))


def test_compensated_double_sum_keeps_what_cancels():
    """1e16 + 1 - 1e16 is 0 in a plain double sum; compensated, the ones survive. Each lane
    reads 1e16, 1, -1e16, 1 down its rows (1024 rows of 4 of each value)."""
    plane = np.repeat([1e16, 1.0, -1e16, 1.0], 1024)
    x = plane.reshape(1, 1, -1)
    assert kernels.global_average_pool(x).reshape(-1)[0] == 2048 / 4096
    assert kernels.global_lp_pool(x, p=1).reshape(-1)[0] == 2e16 * 1024 + 2048
    assert globalpool.plane_sums(plane.reshape(1, -1), compensated=False)[0] == 1024


def test_lanes_worked_example():
    """49 elements: 32 lanes, one row and a tail of 17; 262144: 256 lanes of 1024 rows."""
    assert globalpool.lane_count(49, 256) == 32
    assert globalpool.lane_count(262144, 256) == 256
    assert globalpool.lane_count(5, 1024) == 4
    assert globalpool.lane_count(0, 256) == 1


def test_lp_pool_worked_example():
    """ruling 12: absolute values, padding adds nothing, an empty window is 0, the ceil
    overhang window is not rescaled (onnx.reference gives 19.5 for the last one, the spec 13)."""
    x = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7)
    y = kernels.lp_pool(x, version=18, kernel_shape=[3], strides=[3], pads=[1, 0], p=1,
                        ceil_mode=1)
    np.testing.assert_array_equal(y.reshape(-1), [1 + 2, 3 + 4 + 5, 6 + 7])
    y = kernels.lp_pool(-x, version=22, kernel_shape=[2], strides=[2], pads=[0, 3], p=2)
    np.testing.assert_allclose(y.reshape(-1), np.sqrt([1 + 4, 9 + 16, 25 + 36, 49, 0]),
                               rtol=1e-7)


def test_max_roi_pool_worked_example():
    """ruling 14: corners 2.5 -> 3 (half away from zero), roi 3..6 x 0..4 (4 x 5), 2 x 2
    bins: rows [0, 3) and [2, 5), columns [3, 5) and [5, 7); one RoI wholly outside: zeros."""
    x = np.arange(56, dtype=np.float32).reshape(1, 1, 7, 8)
    rois = np.array([[0, 2.5, 0, 6, 4], [0, 20, 20, 30, 30]], np.float32)
    y = kernels.max_roi_pool(x, rois, pooled_shape=[2, 2])
    assert y.shape == (2, 1, 2, 2)
    np.testing.assert_array_equal(y[0, 0], [[x[0, 0, 2, 4], x[0, 0, 2, 6]],
                                            [x[0, 0, 4, 4], x[0, 0, 4, 6]]])
    np.testing.assert_array_equal(y[1], 0)
