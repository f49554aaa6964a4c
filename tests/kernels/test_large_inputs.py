"""Inputs large enough (>= 4 MB) for the kernels to split their planes across threads.

The property tests use small tensors, which never reach that path. Here each call is made with
ORTPOOL_THREADS=1 and with 4 threads: the results must be identical, and sampled planes must
match the loop reference (indices offset by their plane, ruling 7).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ortpool import kernels
from tests.support import reference_loops as ref


def _data(shape, dtype, seed, nan=False):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        x = rng.integers(-50, 50, shape).astype(dtype)  # ties in every window
        if nan:
            x.reshape(-1)[rng.choice(x.size, 200, replace=False)] = np.nan
            x.reshape(-1)[rng.choice(x.size, 200, replace=False)] = -np.inf
        return x
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape, dtype=dtype)


CASES = [
    # (id, op, version, shape, dtype, attrs, with_indices, sampled planes)
    ("maxpool12-indices-f32", "MaxPool", 12, (8, 16, 96, 96), np.float32,
     {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1,
      "storage_order": 1}, True, [(0, 0), (5, 9), (7, 15)]),
    ("maxpool22-int8-same-dilated", "MaxPool", 22, (8, 32, 128, 160), np.int8,
     {"kernel_shape": [2, 2], "strides": [2, 2], "dilations": [2, 2], "auto_pad": "SAME_UPPER"},
     True, [(0, 1), (6, 30)]),
    ("maxpool10-3d-f64", "MaxPool", 10, (2, 4, 32, 48, 48), np.float64,
     {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [0, 1, 1, 1, 0, 4]}, False,
     [(1, 2)]),
    ("avgpool19-f64-include-pad", "AveragePool", 19, (4, 16, 96, 96), np.float64,
     {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 2, 2], "ceil_mode": 1,
      "count_include_pad": 1, "dilations": [1, 2]}, False, [(0, 0), (3, 11)]),
    ("avgpool11-1d-f32-same-lower", "AveragePool", 11, (64, 64, 320), np.float32,
     {"kernel_shape": [5], "strides": [3], "auto_pad": "SAME_LOWER"}, False, [(0, 0), (63, 63)]),
]


def _call(op, version, x, attrs, with_indices):
    if op == "MaxPool":
        return kernels.max_pool(x, version=version, return_indices=with_indices, **attrs)
    return kernels.average_pool(x, version=version, **attrs)


@pytest.mark.parametrize(
    ("op", "version", "shape", "dtype", "attrs", "with_indices", "planes"),
    [pytest.param(*c[1:], id=c[0]) for c in CASES],
)
def test_threads_agree_and_planes_match_the_reference(
    monkeypatch, op, version, shape, dtype, attrs, with_indices, planes
):
    x = _data(shape, dtype, seed=sum(shape), nan=True)
    assert x.nbytes >= 4 << 20
    monkeypatch.setenv("ORTPOOL_THREADS", "1")
    one = _call(op, version, x, attrs, with_indices)
    monkeypatch.setenv("ORTPOOL_THREADS", "4")
    many = _call(op, version, x, attrs, with_indices)
    one, many = (one, many) if with_indices else ((one,), (many,))
    for a, b in zip(one, many, strict=True):
        assert a.dtype == b.dtype and a.flags.c_contiguous and b.flags.c_contiguous
        np.testing.assert_array_equal(a, b)

    plane_size = math.prod(shape[2:])
    for n, c in planes:
        piece = x[n : n + 1, c : c + 1]
        if op == "MaxPool":
            y_ref, i_ref = ref.max_pool(piece, attrs)
            np.testing.assert_array_equal(many[0][n, c], y_ref[0, 0])
            if with_indices:
                offset = (n * shape[1] + c) * plane_size
                expected = np.where(i_ref[0, 0] >= 0, i_ref[0, 0] + offset, -1)
                np.testing.assert_array_equal(many[1][n, c], expected)
        else:
            y_ref = ref.average_pool(piece, attrs)
            rtol = 1e-12 if dtype == np.float64 else 2e-6
            np.testing.assert_allclose(many[0][n, c], y_ref[0, 0], rtol=rtol)
            np.testing.assert_array_equal(np.isnan(many[0][n, c]), np.isnan(y_ref[0, 0]))


def test_large_max_unpool_round_trip(monkeypatch):
    """MaxPool -> MaxUnpool on a 4.7 MB input, with output_shape: every max lands back on its
    position, zeros elsewhere, with 1 and with 4 threads."""
    x = _data((8, 16, 96, 96), np.float32, seed=7)
    y, i = kernels.max_pool(x, version=12, return_indices=True, kernel_shape=[2, 2],
                            strides=[2, 2])
    results = []
    for threads in ("1", "4"):
        monkeypatch.setenv("ORTPOOL_THREADS", threads)
        results.append(kernels.max_unpool(y, i, np.array(x.shape), version=22,
                                          kernel_shape=[2, 2], strides=[2, 2]))
    np.testing.assert_array_equal(results[0], results[1])
    u = results[1]
    expected = np.zeros_like(x)
    expected.reshape(-1)[i.reshape(-1)] = y.reshape(-1)
    np.testing.assert_array_equal(u, expected)
    np.testing.assert_array_equal(u.reshape(-1)[i.reshape(-1)], x.reshape(-1)[i.reshape(-1)])
