"""Property tests of LpPool, GlobalMaxPool, GlobalAveragePool, GlobalLpPool and MaxRoiPool against
the loop references in tests/support/reference_loops.py, every spec version, every example on both
kernel paths (numba and numpy: test_properties' ``on_each_path``).

* LpPool: ranks 1-3, every attribute of the version (SAME/VALID, pads beyond the kernel, strides,
  dilations and ceil_mode from 18), p float (version 1) or int, NaN/inf, N = 0; within 1 ulp of
  the float64 reference (ortpool sums |x|^p in float64 and rounds once).
* Global pools: ranks 1-3 with spatial sizes 0-6 and NaN/inf, and large planes (up to 70,000
  elements: lanes, tails and the compensated double path) of wide dynamic range; the average and
  the norm within 2 ulp of the exact result (math.fsum), ruling 13; GlobalMaxPool exact.
* MaxRoiPool: RoIs inside, across and outside the map, degenerate (x2 < x1), scales that make
  halves to round, NaN in X; batch indices and coordinates the ruling refuses; exact.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import event, given

from ortpool import kernels, versions
from tests.kernels.test_properties import (
    _decoded,
    _features,
    _session_run,
    budget,
    count_checks,
    element_type,
    inputs,
    outputs_or_error,
    pool_attrs,
)
from tests.support import reference_loops as ref
from tests.support.strategies import Picks, cells, picks, st  # st: built once per arguments


def _versions(op: str) -> list[int]:
    return list(versions.versions_of(op))


def assert_within_ulps(y: np.ndarray, expected: np.ndarray, ulps: float) -> None:
    """``y`` (of X's type) within ``ulps`` units in the last place of ``expected`` (float64,
    rounded to y's type); NaN and infinities exactly where ``expected`` has them."""
    assert y.shape == expected.shape
    with np.errstate(over="ignore"):
        rounded = expected.astype(y.dtype)  # beyond the type's range: infinity
    np.testing.assert_array_equal(np.isnan(y), np.isnan(rounded))
    np.testing.assert_array_equal(np.isposinf(y), np.isposinf(rounded))
    np.testing.assert_array_equal(np.isneginf(y), np.isneginf(rounded))
    finite = np.isfinite(rounded)
    want = expected[finite]
    got = y[finite].astype(np.float64)
    spacing = np.spacing(np.abs(want).astype(y.dtype)).astype(np.float64)
    np.testing.assert_array_less(np.abs(got - want), ulps * spacing + 1e-300)


def _decoded_p(attrs: dict) -> dict:
    out = _decoded({k: v for k, v in attrs.items() if k != "p"})
    if "p" in attrs:
        out["p"] = float(attrs["p"]) if isinstance(attrs["p"], str) else attrs["p"]
    return out


# ---------------------------------------------------------------- LpPool


@st.composite
def lp_example(draw, version: int, session: bool) -> tuple[np.ndarray, dict]:
    opv = versions.get("LpPool", version)
    pick = draw(picks())
    dtype = element_type(pick, opv, session)
    rank = pick.integer(1, 3)
    x = inputs(draw, pick, rank, dtype)
    attrs = pool_attrs(pick, opv, rank)
    if opv.attrs["p"].kind == "float":
        p = pick.choice([2.0, 1.0, 3.0, 0.5, 1.5, 4.0, 0.0, -1.0])
        if pick.boolean():
            attrs["p"] = repr(p) if pick.boolean() else p
        if pick.integer(0, 9) == 0:
            attrs.pop("kernel_shape")  # LpPool-1: optional in the schema, refused
    else:
        p = pick.choice([2, 1, 3, 4, 0, -2])
        if pick.boolean():
            attrs["p"] = p
    return x, attrs


def _check_lp(version: int, x: np.ndarray, attrs: dict, path: str) -> None:
    if "kernel_shape" in attrs:
        _features(x, {k: v for k, v in attrs.items() if k != "p"})
    decoded = _decoded_p(attrs)
    event(f"p {decoded.get('p', 2)}")

    def call():
        if path == "session":
            return _session_run("LpPool", version, attrs, [x])[0]
        return kernels.lp_pool(x, version=version, **attrs)

    ys, expected = outputs_or_error(lambda: ref.lp_pool(x, decoded), call)
    for y in ys:
        assert y.dtype == x.dtype
        # Within 1 ulp of the type; in double, the window's float64 sum (rulings 8, 12) may
        # err by one rounding per tap.
        taps = math.prod(decoded["kernel_shape"])
        assert_within_ulps(y, expected, 2 + taps if x.dtype == np.float64 else 1)
    count_checks("LpPool", version, path)


@pytest.mark.parametrize("version", _versions("LpPool"))
@budget(200)
@given(data=st.data())
def test_lp_pool_numpy(version, data):
    x, attrs = data.draw(lp_example(version, session=False))
    _check_lp(version, x, attrs, "numpy")


@pytest.mark.parametrize("version", _versions("LpPool"))
@budget(20)
@given(data=st.data())
def test_lp_pool_session(version, data):
    x, attrs = data.draw(lp_example(version, session=True))
    if "kernel_shape" not in attrs:  # a session refuses the node at creation: test_bad_inputs
        attrs["kernel_shape"] = [1] * (x.ndim - 2)
    _check_lp(version, x, attrs, "session")


# ---------------------------------------------------------------- global pools

GLOBAL_OPS = ("GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool")


def global_input(draw, pick: Picks, dtype: np.dtype) -> np.ndarray:
    """Small planes (sizes 0-6, specials, ties) or large ones of wide dynamic range; double
    planes are kept of moderate cancellation, where compensated summation is within 2 ulp."""
    if pick.integer(0, 2):
        rank = pick.integer(1, 3)
        x = inputs(draw, pick, rank, dtype)
        if pick.integer(0, 5) == 0:  # a spatial size 0: the empty window of ruling 5
            x = np.zeros((*x.shape[:2], 0, *x.shape[3:]), dtype)
        return x
    size = pick.choice([31, 255, 256, 257, 1023, 1024, 1025, 3000, 70000])
    seed = pick.integer(0, 255) * 256 + pick.integer(0, 255)
    rng = np.random.default_rng(seed)
    planes = pick.integer(1, 2)
    values = rng.standard_normal((1, planes, size)) * np.exp(rng.uniform(-8, 8, (1, planes, size)))
    if dtype == np.float64 or pick.boolean():
        values = values + rng.uniform(0.5, 2) * np.abs(values).mean()
    event(f"large plane {size}")
    return values.astype(dtype)


@st.composite
def global_example(draw, op: str, version: int, session: bool) -> tuple[np.ndarray, dict]:
    opv = versions.get(op, version)
    pick = draw(picks())
    dtype = element_type(pick, opv, session)
    attrs: dict = {}
    if "p" in opv.attrs and pick.boolean():
        if opv.attrs["p"].kind == "float":
            p = pick.choice([1.0, 3.0, 0.5, 2.5, 0.0])
            attrs["p"] = repr(p) if pick.boolean() else p
        else:
            attrs["p"] = pick.choice([1, 3, 4, -1])
    return global_input(draw, pick, dtype), attrs


def _check_global(op: str, version: int, x: np.ndarray, attrs: dict, path: str) -> None:
    event(f"dtype {x.dtype}, rank {x.ndim - 2}")
    if x.size == 0 and x.shape[0] > 0:
        event("spatial size 0" if 0 in x.shape[2:] else "N = 0")
    p = _decoded_p(attrs).get("p", 2)

    def call():
        if path == "session":
            return _session_run(op, version, attrs, [x])[0]
        return kernels.run_op(op, version, [x], attrs)[0]

    ys, expected = outputs_or_error(lambda: ref.global_pool(x, op, p), call)
    for y in ys:
        assert y.dtype == x.dtype
        if op == "GlobalMaxPool":
            np.testing.assert_array_equal(y, expected.astype(x.dtype))
        else:
            # ruling 13's 2 ulp; for p < 1 (version 1's float p) the root raises the sum to
            # 1/p and multiplies its rounding by 1/p (documented in docs/semantics.md).
            assert_within_ulps(y, expected, 2 if p >= 1 else 1 + 2 / p)
    count_checks(op, version, path)


_GLOBAL_VERSIONS = [(op, v) for op in GLOBAL_OPS for v in _versions(op)]


@pytest.mark.parametrize(("op", "version"), _GLOBAL_VERSIONS)
@budget(120)
@given(data=st.data())
def test_global_pool_numpy(op, version, data):
    x, attrs = data.draw(global_example(op, version, session=False))
    _check_global(op, version, x, attrs, "numpy")


@pytest.mark.parametrize(("op", "version"), _GLOBAL_VERSIONS)
@budget(15)
@given(data=st.data())
def test_global_pool_session(op, version, data):
    x, attrs = data.draw(global_example(op, version, session=True))
    _check_global(op, version, x, attrs, "session")


# ---------------------------------------------------------------- MaxRoiPool

#: float32 values, so that the float64 product with a float32 coordinate is exact.
SCALES = [1.0, 0.5, 0.25, 0.0625, float(np.float32(1 / 3)), 2.0, 0.0, -0.5]


@st.composite
def roi_example(draw, version: int, session: bool):
    opv = versions.get("MaxRoiPool", version)
    pick = draw(picks())
    dtype = element_type(pick, opv, session)
    n = pick.choice([1, 2, 1, 0])
    c = pick.integer(1, 2)
    h, w = pick.integer(1, 8), pick.integer(1, 8)
    special = [np.nan] if pick.integer(0, 3) == 0 else []
    values = draw(cells(n * c * h * w, [*map(float, range(-3, 4)), *special]))
    x = values.astype(dtype).reshape(n, c, h, w)
    scale = pick.choice(SCALES)
    count = pick.integer(0, 4)
    rois = []
    for _ in range(count):
        batch = pick.integer(0, max(0, n - 1))
        # Quarter-step coordinates: with scales 0.5/0.25 many products land on halves to round.
        roi = [float(batch), *(pick.integer(-12, 48) / 4 for _ in range(4))]
        trouble = pick.integer(0, 19)
        if trouble == 0:
            roi[0] = pick.choice([-1.0, float(n), 0.5])
        elif trouble == 1:
            roi[pick.integer(1, 4)] = pick.choice([np.nan, np.inf, -np.inf])
        rois.append(roi)
    rois_array = np.array(rois, np.float64).reshape(count, 5).astype(dtype)
    attrs: dict = {"pooled_shape": [pick.integer(1, 3), pick.integer(1, 3)]}
    if scale != 1.0 or pick.boolean():
        attrs["spatial_scale"] = repr(scale) if pick.boolean() else scale
    if pick.integer(0, 3) == 0:
        attrs["pooled_shape"] = ",".join(map(str, attrs["pooled_shape"]))
    return x, rois_array, attrs


def _check_roi(version: int, x, rois, attrs, path: str) -> None:
    event(f"dtype {x.dtype}, {rois.shape[0]} RoIs")
    decoded = dict(attrs)
    if isinstance(decoded["pooled_shape"], str):
        decoded["pooled_shape"] = [int(v) for v in decoded["pooled_shape"].split(",")]
    if isinstance(decoded.get("spatial_scale"), str):
        decoded["spatial_scale"] = float(decoded["spatial_scale"])

    def call():
        if path == "session":
            return _session_run("MaxRoiPool", version, attrs, [x, rois], n_inputs=2)[0]
        return kernels.max_roi_pool(x, rois, version=version, **attrs)

    ys, expected = outputs_or_error(lambda: ref.max_roi_pool(x, rois, decoded), call)
    if ys and (expected == 0).any():
        event("an empty bin (or a max of 0)")
    for y in ys:
        assert y.dtype == x.dtype
        np.testing.assert_array_equal(y, expected)
    count_checks("MaxRoiPool", version, path)


@pytest.mark.parametrize("version", _versions("MaxRoiPool"))
@budget(300)
@given(data=st.data())
def test_max_roi_pool_numpy(version, data):
    x, rois, attrs = data.draw(roi_example(version, session=False))
    _check_roi(version, x, rois, attrs, "numpy")


@pytest.mark.parametrize("version", _versions("MaxRoiPool"))
@budget(25)
@given(data=st.data())
def test_max_roi_pool_session(version, data):
    x, rois, attrs = data.draw(roi_example(version, session=True))
    _check_roi(version, x, rois, attrs, "session")


def test_round_half_away_matches_c():
    """ruling 14's rounding: C's round, not numpy's round-half-to-even."""
    from ortpool.kernels.roipool import round_half_away

    v = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, 2.4999999, -0.0, 7.0])
    assert round_half_away(v).tolist() == [1, 2, 3, -1, -3, 0, 2, 0, 7]
    assert [math.copysign(1, r) for r in round_half_away(np.array([-0.2]))] == [-1.0]
