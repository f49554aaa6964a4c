"""Causes confirmed on the values, without any runtime: each test feeds ``causes.of`` a judgement
of a node whose "runtime outputs" are written out (most of them the very values a runtime gave
when measured: onnxruntime 1.32, OpenVINO 2026.4, tract 0.23.9, the onnx 1.23 reference), so
every recogniser is tested here whatever is installed. A cause is named when the outputs equal
its reading, and not when the values contradict it.
"""

from __future__ import annotations

import numpy as np
import pytest

from ortpool import dtypes, kernels
from ortpool.check import causes, readings
from ortpool.check import status as st
from ortpool.check.cases import FeedSet, spec_outputs
from ortpool.check.judge import Judgement, _record, compare_set
from ortpool.model.site import Site

LOWEST32 = float(np.finfo(np.float32).min)
SEVEN = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7)


def judged(op: str, version: int, attrs: dict, arrays: list[np.ndarray],
           got: list[np.ndarray] | None, n_outputs: int = 1) -> tuple[Site, Judgement]:
    """The judgement the engine makes of ``op``-``version`` on ``arrays`` (a case's own input,
    observed) when the runtime answers ``got``."""
    x = arrays[0]
    site = Site.alone(op, version, attrs, dtypes.name_of(x.dtype), x.shape, len(arrays),
                      n_outputs, strict=False)
    feed = FeedSet("the case's input", list(arrays), observed=True)
    feed.expected = spec_outputs(site, arrays)
    judgement = Judgement()
    assert got is not None
    status, comps, failure = compare_set(site, feed, [np.asarray(g) for g in got])
    _record(judgement, feed, status, comps, got)
    judgement.failure = failure
    return site, judgement


def named(op: str, version: int, attrs: dict, arrays: list[np.ndarray], got: list,
          n_outputs: int = 1) -> list[causes.Cause]:
    site, judgement = judged(op, version, attrs, arrays, [np.asarray(g) for g in got],
                             n_outputs)
    assert judgement.status not in st.AGREEING, judgement.status
    return causes.of(site, judgement)


def codes(found: list[causes.Cause]) -> list[str]:
    return [c.code for c in found]


# --- onnxruntime's departures ------------------------------------------------------------------


def test_same_with_dilation_is_named_where_the_runtime_pads_for_the_undilated_kernel() -> None:
    # onnxruntime 1.32: SAME_UPPER k3 d2 s1 on 1..7 gives 5 windows, pads (1, 1)
    found = named("MaxPool", 12, {"kernel_shape": [3], "strides": [1], "auto_pad": "SAME_UPPER",
                                  "dilations": [2]}, [SEVEN],
                  [np.array([[[4, 5, 6, 7, 6]]], np.float32)])
    assert codes(found) == [causes.SAME_DILATION]
    assert "pads [1, 1] instead of [2, 2]" in found[0].detail
    assert found[0].basis is not None and found[0].basis.kind == causes.SPEC_TEXT
    assert "dilations[i] + 1) - input_spatial_shape[i]" in found[0].basis.quote


def test_a_cause_the_values_contradict_is_not_named() -> None:
    # the same node, but the outputs fit no reading: SAME with dilation is not named, because
    # its reading gives other values (the attribute test alone would have named it)
    found = named("MaxPool", 12, {"kernel_shape": [3], "strides": [1], "auto_pad": "SAME_UPPER",
                                  "dilations": [2]}, [SEVEN],
                  [np.array([[[3, 4, 5, 6, 7, 6, 9]]], np.float32)])
    assert codes(found) == [causes.UNRECOGNISED]
    assert "contradict the readings same-dilation" in found[0].detail


def test_ceil_with_valid_is_named_on_the_ceil_size() -> None:
    found = named("MaxPool", 12, {"kernel_shape": [2], "strides": [2], "auto_pad": "VALID",
                                  "ceil_mode": 1}, [SEVEN],
                  [np.array([[[2, 4, 6, 7]]], np.float32)])
    assert codes(found) == [causes.CEIL_VALID]
    assert "[4] instead of [3]" in found[0].detail
    assert found[0].basis is not None and found[0].basis.ruling == 3


def test_one_window_where_the_kernel_is_longer_than_the_padded_input() -> None:
    # a 1x1 map into k2 s2 floor: ruling 19's formula gives no window; onnxruntime one
    x = np.array([[[5.0]]], np.float32)
    found = named("AveragePool", 19, {"kernel_shape": [2], "strides": [2]}, [x],
                  [np.array([[[5.0]]], np.float32)])
    assert codes(found) == [causes.WINDOW_BEYOND_INPUT]
    assert found[0].basis == causes.Basis(causes.RULING, 19)


def test_nan_dropped_by_the_max_unless_it_is_the_first_tap() -> None:
    # onnxruntime: of (nan, 2), (2, 3), (3, nan), (nan, 5) ... the NaN survives where it is
    # the window's first tap only
    x = SEVEN.copy()
    x[0, 0, [0, 3]] = np.nan
    found = named("MaxPool", 12, {"kernel_shape": [2], "strides": [1]}, [x],
                  [np.array([[[np.nan, 3, 3, np.nan, 6, 7]]], np.float32)])
    assert codes(found) == [causes.NAN]
    assert "drops the NaN in 1 of 3 windows" in found[0].detail
    assert found[0].basis == causes.Basis(causes.RULING, 6)
    # OpenVINO and tract drop every one: the max of the others
    found = named("MaxPool", 12, {"kernel_shape": [2], "strides": [1]}, [x],
                  [np.array([[[2, 3, 3, 5, 6, 7]]], np.float32)])
    assert "drops the NaN: its value is the max of the window's other" in found[0].detail


def test_global_max_nan() -> None:
    x = SEVEN.copy()
    x[0, 0, 2] = np.nan
    found = named("GlobalMaxPool", 1, {}, [x], [np.array([[[7.0]]], np.float32)])
    assert codes(found) == [causes.GLOBAL_MAX_NAN]
    assert found[0].basis == causes.Basis(causes.RULING, 13)


def test_a_sum_off_by_rounding_beyond_the_limit_is_accumulation() -> None:
    # a 256x256 mean off by 1e-3 relative: beyond the accuracy limit (1e-4), within what a
    # running float32 sum of 65536 terms can lose (65536 * 2^-24 = 3.9e-3)
    x = np.random.default_rng(3).random((1, 1, 256, 256)).astype(np.float32)
    off = np.float32(x.astype(np.float64).mean() * (1 + 1e-3))
    site, judgement = judged("GlobalAveragePool", 1, {}, [x],
                             [np.array(off, np.float32).reshape(1, 1, 1, 1)])
    assert judgement.status == st.INACCURATE
    found = causes.of(site, judgement)
    assert codes(found) == [causes.ACCUMULATION]
    assert found[0].basis == causes.Basis(causes.RULING, 17)


def test_unpool_into_the_default_shape_then_extended() -> None:
    # the reference: MaxUnpool with output_shape 5x5 scatters into the default 4x4 and pads
    source = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    values, indices = kernels.max_pool(source, version=12, return_indices=True,
                                       kernel_shape=[2, 2], strides=[2, 2])
    default = np.zeros(16, np.float32)
    default[indices.reshape(-1)] = values.reshape(-1)
    got = np.pad(default.reshape(1, 1, 4, 4), [(0, 0), (0, 0), (0, 1), (0, 1)])
    shape = np.array([1, 1, 5, 5], np.int64)
    found = named("MaxUnpool", 11, {"kernel_shape": [2, 2], "strides": [2, 2]},
                  [values, indices, shape], [got])
    assert codes(found) == [causes.UNPOOL_OUTPUT_SHAPE]
    assert found[0].basis == causes.Basis(causes.RULING, 9)


def test_an_index_tie_on_a_built_set_is_named() -> None:
    # a built set (ruling 18) counts another equal maximum's Index as a difference
    x = np.array([[[1, 3, 3, 2]]], np.float32)
    site = Site.alone("MaxPool", 12, {"kernel_shape": [3], "strides": [1]}, "float", x.shape,
                      1, 2, strict=False)
    feed = FeedSet("ties", [x])
    feed.expected = spec_outputs(site, [x])
    got = [feed.expected[0], np.array([[[2, 2]]], np.int64)]
    judgement = Judgement()
    status, comps, failure = compare_set(site, feed, got)
    _record(judgement, feed, status, comps, got)
    judgement.failure = failure
    found = causes.of(site, judgement)
    assert causes.INDEX_TIE in codes(found)


# --- OpenVINO's ------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [12, 22])
def test_the_end_pad_window_kept(version: int) -> None:
    # OpenVINO 2026.4: x = 1..7, k2 s3 pads (1, 1) ceil gives 4 windows, the last in the pad
    found = named("MaxPool", version, {"kernel_shape": [2], "strides": [3], "pads": [1, 1],
                                       "ceil_mode": 1}, [SEVEN],
                  [np.array([[[1, 4, 7, LOWEST32]]], np.float32)])
    assert codes(found) == [causes.END_PAD_WINDOW]
    assert "window 3 starts at 8 >= n = 7" in found[0].detail
    assert "the runtime gives -3.4028235e+38 there" in found[0].detail
    basis = found[0].basis
    assert basis is not None
    if version == 22:  # the drop rule is in version 22's words
        assert basis.kind == causes.SPEC_TEXT and "right padded region" in basis.quote
    else:
        assert basis == causes.Basis(causes.RULING, 1)


def test_storage_order_indices_transposed() -> None:
    x = np.random.default_rng(1).random((1, 1, 6, 7)).astype(np.float32)
    attrs = {"kernel_shape": [3, 2], "strides": [2, 3], "storage_order": 1}
    y = kernels.max_pool(x, version=12, kernel_shape=[3, 2], strides=[2, 3])
    # OpenVINO's Indices on this input (measured): the row-major offsets, transposed
    got_indices = np.array([1, 29, 3, 24], np.int64).reshape(1, 1, 2, 2)
    found = named("MaxPool", 12, attrs, [x], [y, got_indices], n_outputs=2)
    assert codes(found) == [causes.STORAGE_ORDER]
    assert found[0].basis == causes.Basis(causes.RULING, 7)


def test_end_pad_window_and_transposed_indices_together() -> None:
    # two departures in one node: the reading of both, and neither alone, gives the outputs
    x = np.random.default_rng(5).random((1, 2, 6, 7)).astype(np.float32)
    attrs = {"kernel_shape": [3, 2], "strides": [2, 3], "pads": [0, 1, 2, 1], "ceil_mode": 1,
             "storage_order": 1}
    # what a runtime keeping the window gives, computed another way: the windows of a floor
    # pool whose end pad reaches the kept window (it holds pads only), row-major Indices
    kept_y, kept_i = kernels.max_pool(x, version=12, return_indices=True, kernel_shape=[3, 2],
                                      strides=[2, 3], pads=[0, 1, 3, 3])
    spec_y = kernels.max_pool(x, version=12, kernel_shape=[3, 2], strides=[2, 3],
                              pads=[0, 1, 2, 1], ceil_mode=1)
    # one more window on each axis: both have a ceil window starting in the end pad
    assert kept_y.shape[2:] == (spec_y.shape[2] + 1, spec_y.shape[3] + 1)
    y = np.where(np.isneginf(kept_y), LOWEST32, kept_y).astype(np.float32)
    indices = np.where(kept_i < 0, 0, kept_i).transpose(0, 1, 3, 2)
    found = named("MaxPool", 12, attrs, [x], [y, indices], n_outputs=2)
    assert sorted(codes(found)) == sorted([causes.END_PAD_WINDOW, causes.STORAGE_ORDER])


def test_the_ceil_overhang_counted_in_the_divisor() -> None:
    found = named("AveragePool", 19, {"kernel_shape": [3], "strides": [2], "pads": [0, 1],
                                      "ceil_mode": 1, "count_include_pad": 1}, [SEVEN],
                  [np.array([[[2, 4, 6, 7 / 3]]], np.float32)])
    assert codes(found) == [causes.OVERHANG_DIVISOR]
    assert found[0].basis == causes.Basis(causes.RULING, 8)


def test_double_computed_in_float32() -> None:
    x = (np.random.default_rng(0).random((1, 1, 7)) * 1e8).astype(np.float64)
    # OpenVINO's output on this input (measured)
    got = np.array([[[31590730., 10909596., 29025712., 58085116., 77755392.]]])
    found = named("AveragePool", 19, {"kernel_shape": [3], "strides": [1]}, [x], [got])
    assert codes(found) == [causes.DOUBLE_AS_FLOAT]
    assert found[0].basis == causes.Basis(causes.RULING, 8)


@pytest.mark.filterwarnings("error")
def test_double_beyond_float32s_range_is_judged_without_a_warning() -> None:
    """A double X holding its lowest finite value (as ruling 18's built cases do) on a runtime
    that computes in float32 (OpenVINO): NaN windows were found on X cast to float32, which
    overflowed, and `ortpool validate` printed "warning: overflow encountered in cast"."""
    x = np.array([[[np.finfo(np.float64).min, 0.1, 0.7]]])
    got = [np.array([[[0.1, 0.7]]], np.float32).astype(np.float64)]  # its max in float32
    found = named("MaxPool", 12, {"kernel_shape": [2], "strides": [1]}, [x], got)
    assert codes(found) == [causes.DOUBLE_AS_FLOAT]


def test_pads_past_the_kernel_that_a_runtime_runs_are_no_refusal() -> None:
    """OpenVINO and tract run MaxPool k2 pads (3, 3) and give the lowest finite value in the
    windows of no input element: on the model's input the rulings' cells, on a built set (shown
    later, its outputs not kept) a difference. The node was named `pads-ge-kernel`, the cause of
    a refusal, and judged on the spec's text where ruling 5 decides."""
    attrs = {"kernel_shape": [2], "strides": [1], "pads": [3, 3]}
    (want,) = kernels.run_op("MaxPool", 12, [SEVEN], attrs)
    got = [np.where(want == -np.inf, np.float32(LOWEST32), want)]
    site, judgement = judged("MaxPool", 12, attrs, [SEVEN], got)
    assert judgement.status == st.RULINGS
    built = FeedSet("lowest", [SEVEN])
    built.expected = spec_outputs(site, [SEVEN])
    status, comps, judgement.failure = compare_set(site, built, got)
    _record(judgement, built, status, comps, got)
    assert judgement.status == st.DIFFER
    found = causes.of(site, judgement)
    assert codes(found) == [causes.EMPTY_WINDOW]
    assert causes.verdict_basis(found) == causes.Basis(causes.RULING, 5)


def test_a_window_of_neg_inf_alone_given_the_lowest_finite_value() -> None:
    """OpenVINO and tract give float32's lowest finite value where a window holds -inf alone
    (its max is -inf), onnxruntime in some windows (2-D: those reaching into the pads or the
    ceil overhang of the last axis): it was a difference with no cause and no basis."""
    x = np.array([[[-np.inf, -np.inf, 3, -np.inf, -np.inf]]], np.float32)
    attrs = {"kernel_shape": [2], "strides": [1]}
    found = named("MaxPool", 12, attrs, [x],
                  [np.array([[[LOWEST32, 3, 3, LOWEST32]]], np.float32)])
    assert codes(found) == [causes.NEG_INF_WINDOW]
    assert found[0].detail == ("2 of the 2 cells of windows of -inf alone: the runtime gives "
                               "-3.4028235e+38 where their max is -inf")
    assert found[0].basis == causes.Basis(causes.SPEC_TEXT, 6, "max pooling consisting of "
                                          "computing the max on all values of a subset of the "
                                          "input tensor")
    found = named("MaxPool", 12, attrs, [x],
                  [np.array([[[LOWEST32, 3, 3, -np.inf]]], np.float32)])
    assert codes(found) == [causes.NEG_INF_WINDOW] and found[0].detail.startswith("1 of the 2")
    # whatever the runtime gives there, said
    found = named("MaxPool", 12, attrs, [x], [np.array([[[0, 3, 3, -np.inf]]], np.float32)])
    assert "gives 0 where their max is -inf" in found[0].detail
    lone = np.full((1, 2, 3), -np.inf, np.float32)
    found = named("GlobalMaxPool", 1, {}, [lone], [np.full((1, 2, 1), LOWEST32, np.float32)])
    assert codes(found) == [causes.NEG_INF_WINDOW]
    assert found[0].basis is not None and found[0].basis.quote == (
        "applies max pooling across the values in the same channel")
    rois = np.array([[0, 0, 0, 1, 1]], np.float32)
    found = named("MaxRoiPool", 1, {"pooled_shape": [1, 1]}, [lone.reshape(1, 2, 3, 1), rois],
                  [np.full((1, 2, 1, 1), LOWEST32, np.float32)])
    assert codes(found) == [causes.NEG_INF_WINDOW]
    assert found[0].basis is not None
    assert found[0].basis.quote == "apply max pooling across each RoI"


def test_a_built_set_differing_in_the_rulings_cells_alone_names_them() -> None:
    """--nonfinite's built sets: where only windows holding a NaN (or -inf alone) differ, those
    cells name the cause and its basis; it was `built-case` alone, no basis named."""
    x = np.array([[[2, np.nan, 3, 4]]], np.float32)
    attrs = {"kernel_shape": [2], "strides": [2]}
    site = Site.alone("MaxPool", 12, attrs, "float", x.shape, strict=False)
    built = FeedSet("built cases 1/1 (NaN at tap 1)", [x])
    built.expected = spec_outputs(site, [x])
    got = [np.array([[[2, 4]]], np.float32)]
    judgement = Judgement()
    status, comps, judgement.failure = compare_set(site, built, got)
    _record(judgement, built, status, comps, got)
    assert judgement.status == st.DIFFER
    found = causes.of(site, judgement)
    assert codes(found) == [causes.NAN, causes.BUILT_CASE]
    assert causes.verdict_basis(found) == causes.Basis(causes.RULING, 6)
    # a MaxRoiPool bin holding a NaN (OpenVINO drops it)
    x = np.array([[[[2, np.nan], [3, 4]]]], np.float32)
    rois = np.array([[0, 0, 0, 1, 1]], np.float32)
    site = Site.alone("MaxRoiPool", 1, {"pooled_shape": [1, 1]}, "float", x.shape, 2,
                      strict=False)
    built = FeedSet("built cases 1/1 (NaN at tap (0, 1))", [x, rois])
    built.expected = spec_outputs(site, [x, rois])
    got = [np.array([[[[4]]]], np.float32)]
    judgement = Judgement()
    status, comps, judgement.failure = compare_set(site, built, got)
    _record(judgement, built, status, comps, got)
    found = causes.of(site, judgement)
    assert codes(found) == [causes.NAN, causes.BUILT_CASE]
    assert "drops the NaN: its value is the max of the window's other" in found[0].detail


def test_empty_windows_named_with_the_value_the_runtime_gives() -> None:
    found = named("MaxPool", 12, {"kernel_shape": [2], "strides": [3], "pads": [2, 2]},
                  [SEVEN], [np.array([[[LOWEST32, 3, 6, LOWEST32]]], np.float32)])
    assert codes(found) == [causes.EMPTY_WINDOW]
    assert "gives -3.4028235e+38 where the spec's is -inf" in found[0].detail
    assert found[0].basis == causes.Basis(causes.RULING, 5)


# --- tract's -----------------------------------------------------------------------------------


def test_global_norm_as_a_mean() -> None:
    found = named("GlobalLpPool", 2, {"p": 2}, [SEVEN],
                  [np.array([[[np.sqrt(140 / 7)]]], np.float32)])
    assert codes(found) == [causes.GLOBAL_NORM_MEAN]
    assert found[0].basis is not None and found[0].basis.kind == causes.SPEC_TEXT
    assert found[0].basis.quote == "p value of the Lp norm used to pool over the input data."
    # p = 1: tract's is the plane's signed mean
    x = np.array([[[1.0, -2.0, 3.0]]], np.float32)
    found = named("GlobalLpPool", 2, {"p": 1}, [x], [np.array([[[2 / 3]]], np.float32)])
    assert codes(found) == [causes.GLOBAL_NORM_MEAN]
    assert "signs of x kept" in found[0].detail


def test_an_index_outside_the_window_where_its_maximum_is_the_lowest_value() -> None:
    # tract 0.23.9 on uint8: a window whose max is 0 gets its plane's first index
    x = np.array([[[20, 7, 20, 13, 4, 12, 0], [19, 12, 10, 17, 8, 8, 0]]], np.uint8)
    found = named("MaxPool", 12, {"kernel_shape": [2], "strides": [3], "ceil_mode": 1}, [x],
                  [np.array([[[20, 13, 0], [19, 17, 0]]], np.uint8),
                   np.array([[[0, 3, 0], [7, 10, 7]]], np.int64)], n_outputs=2)
    assert codes(found) == [causes.LOWEST_MAX_INDEX]
    assert found[0].basis == causes.Basis(causes.RULING, 6)


def test_a_crash_names_what_aborted_and_the_empty_plane() -> None:
    site = Site.alone("GlobalLpPool", 2, {}, "float", (1, 2, 0), strict=False)
    judgement = Judgement(status=st.CRASHED, failure=(
        "the run fails on the case's input: tract: crashed: the worker was killed by SIGABRT "
        "on this case: panicked at core/src/ops/nn/reduce.rs:261:34: attempt to divide by zero"),
        shown_shapes=[[1, 2, 0]])
    found = causes.of(site, judgement)
    assert codes(found) == [causes.CRASHED, causes.EMPTY_WINDOW]
    assert "panicked at core/src/ops/nn/reduce.rs:261:34" in found[0].detail
    assert found[0].basis == causes.Basis(causes.RULING, 11)
    assert found[1].basis == causes.Basis(causes.RULING, 13)


def test_a_time_out_is_named() -> None:
    site = Site.alone("MaxPool", 12, {"kernel_shape": [2]}, "float", (1, 1, 7), strict=False)
    judgement = Judgement(status=st.TIMED_OUT, failure=(
        "the run fails on the case's input: tract: timed-out: the worker took longer than 30 s "
        "to answer; it was stopped"))
    found = causes.of(site, judgement)
    assert codes(found) == [causes.TIMED_OUT]
    assert "longer than 30 s" in found[0].detail


# --- the reference evaluator's -----------------------------------------------------------------


def test_same_lower_sized_floor() -> None:
    found = named("MaxPool", 12, {"kernel_shape": [2], "strides": [3], "auto_pad": "SAME_LOWER"},
                  [SEVEN], [np.array([[[3, 6]]], np.float32)])
    assert codes(found) == [causes.SAME_SIZE]
    assert found[0].basis is not None and found[0].basis.kind == causes.SPEC_TEXT
    assert "ceil(input_spatial_shape[i] / strides_spatial_shape[i])" in found[0].basis.quote


def test_average_pool_1_counting_the_pads() -> None:
    found = named("AveragePool", 1, {"kernel_shape": [3], "strides": [2], "pads": [1, 1]},
                  [SEVEN], [np.array([[[1, 3, 5, 13 / 3]]], np.float32)])
    assert codes(found) == [causes.AVERAGE_COUNTS_PADS]
    assert found[0].basis is not None and found[0].basis.quote == causes._EXCLUDE_PAD


def test_lp_pool_rescaled_at_the_border() -> None:
    found = named("LpPool", 18, {"kernel_shape": [3], "strides": [3], "pads": [1, 0],
                                 "ceil_mode": 1, "p": 1}, [SEVEN],
                  [np.array([[[3, 12, 19.5]]], np.float32)])
    assert codes(found) == [causes.LP_RESCALE]
    assert found[0].basis == causes.Basis(causes.RULING, 12)


def test_ceil_windows_shifted_by_the_missing_end() -> None:
    x = np.array([[[0.75, 0.75, -1.5, 1.5, 0, -0.5, 0.5]]], np.float32)
    found = named("AveragePool", 19, {"kernel_shape": [2], "strides": [3], "ceil_mode": 1,
                                      "dilations": [2]}, [x],
                  [np.array([[[0.75, -0.75, -0.5]]], np.float32)])
    assert codes(found) == [causes.CEIL_PAD_SHIFT]
    assert "start [1] earlier" in found[0].detail


def test_valid_sized_for_the_undilated_kernel() -> None:
    found = named("AveragePool", 19, {"kernel_shape": [2], "strides": [1], "auto_pad": "VALID",
                                      "dilations": [2]}, [SEVEN],
                  [np.array([[[2, 3, 4, 5, 6, 0]]], np.float32)])
    assert codes(found) == [causes.UNDILATED_SIZE]


def test_a_global_pool_over_the_wrong_axes() -> None:
    x = np.array([[[1, 5, 2], [7, 0, 3]]], np.float32)
    found = named("GlobalMaxPool", 1, {}, [x], [np.array([[7.0]], np.float32)])
    assert codes(found) == [causes.GLOBAL_AXES]
    assert found[0].basis is not None and found[0].basis.quote == causes._GLOBAL_SHAPE


def test_two_readings_the_values_fit_are_said() -> None:
    # the reference's SAME_LOWER (floor(n/s) windows) and SAME's undilated pads give the same
    # values on this input: the first is named, the other said in its detail
    x = np.array([[[1.25, -1.5, 1, -3.5, 2.25, -0.75, -1.5]]], np.float32)
    found = named("MaxPool", 10, {"kernel_shape": [2], "strides": [3], "auto_pad": "SAME_LOWER",
                                  "dilations": [2]}, [x],
                  [np.array([[[-1.5, 2.25]]], np.float32)])
    assert len(found) == 1
    assert "fit same-size as well" in found[0].detail


# --- refusals and missing kernels ------------------------------------------------------------


def refused(op: str, version: int, attrs: dict, shape: tuple, words: str,
            elem: str = "float") -> list[causes.Cause]:
    site = Site.alone(op, version, attrs, elem, shape, strict=False)
    judgement = Judgement(status=st.ORT_REJECTED,
                          failure=f"the run fails on the case's input: rt: refused: {words}")
    return causes.of(site, judgement)


def test_refusals_of_what_the_spec_allows() -> None:
    found = refused("AveragePool", 19, {"kernel_shape": [2], "strides": [3], "pads": [2, 2]},
                    (1, 1, 7), "Kernel after dilation is sometimes entirely in the padding area")
    assert codes(found) == [causes.PADS_GE_KERNEL, causes.EMPTY_WINDOW]
    assert "entirely in the padding area" in found[0].detail
    assert found[0].basis is not None and found[0].basis.kind == causes.SPEC_TEXT
    found = refused("AveragePool", 19, {"kernel_shape": [2], "auto_pad": "SAME_UPPER",
                                        "ceil_mode": 1}, (1, 1, 7),
                    "AssertionError: ceil_mode is not supported with auto_pad")
    assert codes(found) == [causes.CEIL_AUTO_PAD]
    assert found[0].basis is not None and found[0].basis.quote == causes._AUTO_CEIL
    found = refused("GlobalLpPool", 1, {"p": 1.0}, (1, 1, 7),
                    "attribute 'p': expected int, got 1")
    assert codes(found) == [causes.ATTRIBUTE_TYPE]
    found = refused("MaxRoiPool", 22, {"pooled_shape": [2, 2]}, (1, 1, 6, 7),
                    "MaxRoiPool operator only supports float16, float32, and float64 datatypes.",
                    elem="bfloat16")
    assert codes(found) == [causes.NO_KERNEL]
    found = refused("MaxPool", 12, {"kernel_shape": [2]}, (1, 1, 7), "something else")
    assert codes(found) == [causes.UNRECOGNISED]
    assert "something else" in found[0].detail


def test_no_kernel_keeps_the_runtimes_words() -> None:
    site = Site.alone("LpPool", 18, {"kernel_shape": [2]}, "float", (1, 1, 7), strict=False)
    judgement = Judgement(status=st.NO_KERNEL, failure=(
        "the run fails on the case's input: tract: no-kernel: no implementation of LpPool"))
    found = causes.of(site, judgement)
    assert codes(found) == [causes.NO_KERNEL]
    assert found[0].detail.endswith(": no implementation of LpPool")


# --- bases -------------------------------------------------------------------------------------


def test_a_basis_quotes_the_words_of_the_version_that_has_them() -> None:
    drop = causes._DROP
    assert causes.basis_of(causes.END_PAD_WINDOW, "MaxPool", 22).quote == drop
    assert causes.basis_of(causes.END_PAD_WINDOW, "AveragePool", 22).quote == drop
    # LpPool-22's text has no drop rule, nor MaxPool-12's: ruling 1 decides there
    assert causes.basis_of(causes.END_PAD_WINDOW, "LpPool", 22) == causes.Basis(causes.RULING, 1)
    assert causes.basis_of(causes.END_PAD_WINDOW, "MaxPool", 12) == causes.Basis(causes.RULING, 1)
    # AveragePool-1's divisor sentence is gone from version 7 (count_include_pad says it)
    assert causes.basis_of(causes.AVERAGE_COUNTS_PADS, "AveragePool", 1).kind == causes.SPEC_TEXT
    assert causes.basis_of(causes.DOUBLE_AS_FLOAT, "MaxPool", 12) == causes.Basis(causes.RULING,
                                                                                 10)
    assert causes.spec_or_ruling("MaxPool", 22, 1, causes._DROP).kind == causes.SPEC_TEXT


def test_every_code_has_a_title() -> None:
    for code in [v for k, v in vars(readings).items() if k.isupper() and isinstance(v, str)
                 and "-" in v]:
        assert code in causes.TITLES, code


def test_the_judgement_keeps_the_runtimes_outputs_out_of_its_json() -> None:
    _, judgement = judged("MaxPool", 12, {"kernel_shape": [2], "strides": [2],
                                          "auto_pad": "VALID", "ceil_mode": 1}, [SEVEN],
                          [np.array([[[2, 4, 6, 7]]], np.float32)])
    assert judgement.shown_outputs is not None and judgement.shown_feed is not None
    out = judgement.to_dict()
    assert "shown_outputs" not in out and "shown_feed" not in out
