"""ortpool.geometry: its docstrings' worked examples and ruling 1-3, 8, 9, worked by hand."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ortpool import geometry, kernels, versions
from ortpool.attributes import normalize
from ortpool.errors import OrtpoolError
from ortpool.geometry import AxisGeometry, explicit_output_size, same_pads


def attrs(op="MaxPool", version=12, **given):
    return normalize(versions.get(op, version), given)


# ------------------------------------------------------------ explicit pads (ruling 1)


@pytest.mark.parametrize(
    ("n", "k", "s", "d", "pb", "pe", "ceil", "out"),
    [
        (5, 2, 2, 1, 0, 0, False, 2),  # floor(3/2) + 1
        (5, 2, 2, 1, 0, 0, True, 3),  # ceil(3/2) + 1: the last window starts at 4 < 5
        (4, 2, 2, 1, 0, 1, True, 2),  # ceil(3/2) + 1 = 3, but window 3 starts at 4 >= 4: dropped
        (4, 2, 2, 1, 0, 1, False, 2),
        (7, 3, 2, 2, 0, 0, False, 2),  # dilated span 5: floor(2/2) + 1
        (7, 3, 2, 2, 0, 0, True, 2),  # ceil(2/2) + 1 = 2: nothing left over
        (1, 1, 1, 1, 0, 5, False, 6),  # pads >= kernel: five windows in the end pad only
        (1, 1, 1, 1, 0, 5, True, 5),  # the drop rule applies even though ceil added nothing
        (3, 3, 1, 1, 3, 3, False, 7),  # windows wholly in the begin pad are legal too
        # Ruling 19: a kernel longer than the padded input takes the same formulas.
        (1, 2, 2, 1, 0, 0, True, 1),  # ResNet-D's shortcut on a 1x1 map: ceil(-1/2) + 1
        (1, 2, 2, 1, 0, 0, False, 0),  # floor(-1/2) + 1 = 0: an empty axis
        (1, 3, 3, 1, 0, 0, True, 1),  # overhang 2 < stride 3: ceil(-2/3) + 1 = 1
        (1, 3, 2, 1, 0, 0, True, 0),  # overhang 2 = stride: ceil(-2/2) + 1 = 0, no window
        (1, 5, 2, 1, 0, 0, True, 0),  # ceil(-4/2) + 1 = -1: no window
        (2, 3, 3, 2, 1, 0, True, 1),  # span 5 over 3 padded positions: ceil(-2/3) + 1
        (0, 1, 2, 1, 0, 0, True, 0),  # ceil(-1/2) + 1 = 1, but window 0 starts at 0 >= 0: dropped
        (0, 2, 3, 1, 1, 0, True, 1),  # window 0 starts at 0 < n + pb = 1: kept, and empty
    ],
)
def test_explicit_output_size(n, k, s, d, pb, pe, ceil, out):
    assert geometry.explicit_output_size(n, k, s, d, pb, pe, ceil) == out


def test_kernel_longer_than_padded_input_is_not_an_error():
    """ruling 19 replaces the refusal: the formulas decide, 0 or below is an empty axis."""
    assert geometry.explicit_output_size(2, 5, 1, 1, 1, 1, False) == 0
    assert geometry.explicit_output_size(2, 5, 1, 1, 1, 1, True) == 0
    assert geometry.explicit_output_size(2, 5, 2, 1, 1, 1, True) == 1
    geom = geometry.pool_geometry(
        [1, 1], attrs(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    )
    assert geom.output_spatial == (1, 1)
    axis = geom.axes[0]
    # The one window starts at -pb = 0 and holds the input element; tap 1 is ceil overhang.
    assert [v.tolist() for v in axis.window_taps(np.arange(1))] == [[0], [1]]
    assert axis.counts(False).tolist() == [1] and axis.counts(True).tolist() == [1]
    assert axis.interior() == (1, 1) and axis.reading() == (0, 1) and axis.empty_windows() == 0


# ------------------------------------------------------------ SAME (ruling 2)


@pytest.mark.parametrize(
    ("n", "k", "s", "d", "upper", "expected"),
    [
        (5, 3, 1, 2, True, (5, 2, 2)),  # SAME with dilation: span 5, total 4 + 5 - 5 = 4
        (5, 3, 1, 2, False, (5, 2, 2)),
        (4, 3, 2, 1, True, (2, 0, 1)),  # odd total: UPPER puts it at the end
        (4, 3, 2, 1, False, (2, 1, 0)),  # LOWER at the beginning
        (5, 1, 3, 1, True, (2, 0, 0)),  # total 3 + 1 - 5 = -1: clamped, not a crop
        (5, 1, 3, 1, False, (2, 0, 0)),
        (4, 2, 1, 3, True, (4, 1, 2)),  # dilated span 4: total 3; kernel 2 would give 1 (ORT)
        (6, 1, 4, 1, True, (2, 0, 0)),  # total 4 + 1 - 6 = -1: clamped
    ],
)
def test_same_pads(n, k, s, d, upper, expected):
    assert geometry.same_pads(n, k, s, d, upper) == expected


# ------------------------------------------------------------ VALID (ruling 3)


@pytest.mark.parametrize(("n", "k", "s", "d", "out"), [(5, 2, 2, 1, 2), (5, 3, 1, 2, 1),
                                                        (6, 2, 3, 1, 2), (4, 4, 1, 1, 1)])
def test_valid_output_size_is_the_spec_ceil_formula(n, k, s, d, out):
    ek = (k - 1) * d + 1
    assert geometry.valid_output_size(n, k, s, d) == out == -(-(n - ek + 1) // s)


def test_valid_ignores_ceil_mode():
    """n=5, k=2, s=2: ORT and onnx shape inference say 3 with ceil_mode; the rulings say 2."""
    for ceil in (0, 1):
        geom = geometry.pool_geometry(
            [5], attrs(kernel_shape=[2], strides=[2], auto_pad="VALID", ceil_mode=ceil)
        )
        assert geom.output_spatial == (2,)
        assert geom.pads == (0, 0)


def test_valid_input_smaller_than_kernel_is_an_empty_axis():
    """rulings 3 and 19: ceil((5 - 7 + 1) / 1) = -1, so no window on axis 1."""
    geom = geometry.pool_geometry(
        [2, 5], attrs(kernel_shape=[1, 3], dilations=[1, 3], auto_pad="VALID")
    )
    assert geom.output_spatial == (2, 0)
    assert geometry.valid_output_size(1, 2, 2, 1) == 0


# ------------------------------------------------------------ pool_geometry


def test_pool_geometry_per_axis_and_effective_pads():
    geom = geometry.pool_geometry(
        [4, 5], attrs(kernel_shape=[3, 3], strides=[2, 1], dilations=[1, 2], auto_pad="SAME_LOWER")
    )
    assert geom.output_spatial == (2, 5)
    assert geom.pads == (1, 2, 0, 2)  # axis 0: total 1 at the beginning; axis 1: (2, 2)
    assert geom.axes[1] == AxisGeometry(n=5, k=3, s=1, d=2, pb=2, pe=2, out=5)


def test_pool_geometry_rank_mismatch():
    with pytest.raises(OrtpoolError, match="the input has 1 spatial axes but kernel_shape has 2"):
        geometry.pool_geometry([2], attrs(kernel_shape=[1, 3]))


def test_tap_range_docstring_example():
    axis = AxisGeometry(n=4, k=3, s=2, d=1, pb=1, pe=0, out=2)
    assert axis.tap_range(0) == (1, 2)  # tap 0 reads -1 (padding) and 1
    assert axis.tap_range(1) == (0, 2)  # reads 0 and 2
    assert axis.tap_range(2) == (0, 2)  # reads 1 and 3
    assert [axis.coordinate(j, 0) for j in range(2)] == [-1, 1]


def test_tap_range_window_wholly_in_padding():
    axis = AxisGeometry(n=1, k=1, s=1, d=1, pb=2, pe=2, out=5)
    assert axis.tap_range(0) == (2, 3)  # only output 2 reads the one input


# ------------------------------------------------------------ divisor counts (ruling 8)


def test_counts_with_and_without_pad():
    # n=5, k=3, s=2, pads (1, 1): windows [-1, 1], [1, 3], [3, 5].
    axis = AxisGeometry(n=5, k=3, s=2, d=1, pb=1, pe=1, out=3)
    assert axis.counts(include_pad=False).tolist() == [2, 3, 2]
    assert axis.counts(include_pad=True).tolist() == [3, 3, 3]


def test_counts_ceil_overhang_never_counts():
    # n=5, k=2, s=2, ceil: windows [0, 1], [2, 3], [4, 5]; 5 is beyond the (empty) end pad.
    axis = AxisGeometry(n=5, k=2, s=2, d=1, pb=0, pe=0, out=3)
    assert axis.counts(include_pad=False).tolist() == [2, 2, 1]
    assert axis.counts(include_pad=True).tolist() == [2, 2, 1]


def test_counts_empty_windows():
    axis = AxisGeometry(n=1, k=1, s=1, d=1, pb=2, pe=0, out=3)
    assert axis.counts(include_pad=False).tolist() == [0, 0, 1]
    assert axis.counts(include_pad=True).tolist() == [1, 1, 1]


# ------------------------------------------------------------ MaxUnpool size (ruling 9)


def test_unpool_output_spatial():
    a = normalize(versions.get("MaxUnpool", 11), {"kernel_shape": [2, 3], "strides": [2, 2],
                                                  "pads": [0, 1, 0, 1]})
    assert geometry.unpool_output_spatial([2, 3], a) == (4, 5)  # 1*2 + 2; 2*2 - 2 + 3


def test_unpool_output_spatial_negative():
    a = normalize(versions.get("MaxUnpool", 11), {"kernel_shape": [1], "pads": [1, 1]})
    with pytest.raises(OrtpoolError, match=r"spatial axis 0: the default output size "
                                           r"\(n-1\)\*s - pads \+ k = -1 is negative"):
        geometry.unpool_output_spatial([1], a)


# ------------------------------------------------------------ the drop rule at every version


@pytest.mark.parametrize(
    ("op", "version"),
    [(v.op, v.version) for v in versions.all_versions() if "ceil_mode" in v.attrs],
)
def test_ceil_drop_rule_at_every_version(op, version):
    """ruling 1: n=4, k=2, s=2, end pad 1, ceil: the third window would start in the end pad,
    so two outputs at every version with ceil_mode (onnx shape inference says 3 below 22)."""
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 4)
    attrs = {"kernel_shape": [2], "strides": [2], "pads": [0, 1], "ceil_mode": 1}
    (y,) = kernels.run_op(op, version, [x], attrs)
    # max, mean, and LpPool's default p = 2: sqrt(0 + 1), sqrt(4 + 9)
    expected = {"MaxPool": [1, 3], "AveragePool": [0.5, 2.5], "LpPool": [1, np.sqrt(13)]}[op]
    np.testing.assert_array_equal(y, np.array([[expected]], np.float32))


def test_index_multipliers_row_and_column_major():
    """ruling 7: (h, w) -> 4h + w row-major on a 3x4 plane, h + 3w column-major; 3-D
    column-major is d1 + D1*d2 + D1*D2*d3."""
    from ortpool.geometry import index_multipliers

    assert index_multipliers((3, 4), 0) == (4, 1)
    assert index_multipliers((3, 4), 1) == (1, 3)
    assert index_multipliers((2, 3, 5), 0) == (15, 5, 1)
    assert index_multipliers((2, 3, 5), 1) == (1, 2, 6)


# ------------------------------------------------------------ closed forms against loops


def test_closed_forms_of_the_docstrings():
    axis = AxisGeometry(n=4, k=3, s=2, d=1, pb=1, pe=1, out=2)
    assert [v.tolist() for v in axis.window_taps(np.arange(2))] == [[1, 0], [3, 3]]
    assert axis.interior() == (1, 2) and axis.full_tap() == 1
    padded = AxisGeometry(n=1, k=2, s=1, d=1, pb=3, pe=3, out=7)
    assert padded.reading() == (2, 4)
    assert AxisGeometry(n=3, k=3, s=1, d=1, pb=1, pe=1, out=3).taps_inside() == 7
    assert AxisGeometry(n=1, k=2, s=1, d=2, pb=1, pe=1, out=1).empty_windows() == 1
    assert AxisGeometry(n=4, k=10**9, s=1, d=1, pb=0, pe=10**9, out=5).tap_span() == (0, 4)
    assert AxisGeometry(n=1, k=4, s=2, d=1, pb=3, pe=3, out=2).tap_runs() == [(1, 2), (3, 4)]


def test_closed_forms_match_loops_over_every_tap():
    """Every per-axis form against its definition as a loop over outputs and taps, on 3000
    random small axes (every stride, dilation, pad and ceil mode combination of the range)."""
    rng = random.Random(7)
    checked = 0
    while checked < 3000:
        n, k, s, d = rng.randint(0, 9), rng.randint(1, 6), rng.randint(1, 4), rng.randint(1, 3)
        pb, pe, ceil = rng.randint(0, 8), rng.randint(0, 8), rng.random() < 0.5
        out = explicit_output_size(n, k, s, d, pb, pe, ceil)
        # The size by its definition: windows at 0, s, 2s, ... of the padded axis while they
        # fit (floor), or while the one before has not reached the end (ceil), then the last
        # dropped if it starts in the end pad; kernels longer than the padded input included.
        ek = (k - 1) * d + 1
        starts = [j for j in range(n + pb + pe + 1)
                  if (j - ceil) * s + ek <= n + pb + pe - ceil]
        if ceil and starts and starts[-1] * s >= n + pb:
            starts.pop()
        assert out == len(starts), (n, k, s, d, pb, pe, ceil)
        g = AxisGeometry(n=n, k=k, s=s, d=d, pb=pb, pe=pe, out=out)
        inside = [[t for t in range(k) if 0 <= j * s - pb + t * d < n] for j in range(out)]
        padded = [[t for t in range(k) if -pb <= j * s - pb + t * d < n + pe]
                  for j in range(out)]
        lo, hi = g.window_taps(np.arange(out))
        assert lo.tolist() == [ts[0] if ts else 0 for ts in inside]
        assert hi.tolist() == [ts[-1] + 1 if ts else 0 for ts in inside]
        assert g.counts(False).tolist() == [len(ts) for ts in inside]
        assert g.counts(True).tolist() == [len(ts) for ts in padded]
        full = [j for j in range(out) if len(inside[j]) == k]
        assert g.interior() == ((full[0], full[-1] + 1) if full else (out, out))
        every = [t for t in range(k) if all(t in ts for ts in inside)] if out and n else []
        assert g.full_tap() == (every[0] if every else -1)
        used = sorted({t for ts in inside for t in ts})
        assert [t for a, b in g.tap_runs() for t in range(a, b)] == used
        ta, tb = g.tap_span()
        assert all(ta <= t < tb for t in used)
        assert g.taps_inside() == sum(map(len, inside))
        assert g.empty_windows() == sum(1 for ts in inside if not ts)
        checked += 1


def test_int64_bounds_of_the_arithmetic():
    big = 2**63 - 1
    with pytest.raises(OrtpoolError) as info:
        explicit_output_size(4, 2, 1, 1, big, 0, False)
    assert str(info.value) == (
        f"the padded input 4 + {big} + 0 = {big + 4} does not fit in int64 (at most {big})"
    )
    with pytest.raises(OrtpoolError) as info:
        same_pads(4, 2**62, 1, 4, upper=True)
    assert str(info.value) == (
        f"the kernel span ({2**62} - 1) * 4 + 1 = {(2**62 - 1) * 4 + 1} does not fit in int64 "
        f"(at most {big})"
    )
    assert explicit_output_size(1, 1, 1, 1, big - 1, 0, False) == big
