"""Every bundled model: rewrite -> run with ortpool -> the built-in result where onnxruntime is
right; the named cases where it is not; and restore(rewrite(m)) == m up to filled-in defaults."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import ortpool
from ortpool import versions
from ortpool.validate.validator import bundled_models_dir
from tests.support import runtime_defects
from tests.support.rewrite import assert_same_up_to_defaults, feeds

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

MODELS = {p.stem: p for p in sorted(bundled_models_dir().glob("*.onnx"))}
#: Models whose built-in run is not the spec result on onnxruntime 1.21 to 1.32; each is tested
#: on its own below, against a hand computation.
ORT_WRONG = {"cnn", "ort-defect-same-dilated", "ort-defect-valid-ceil"}
#: onnxruntime has no kernel for AveragePool-1: the same node at opset 7 (count_include_pad=0
#: is version 1's behaviour) stands in. It has no AveragePool-22 and no double AveragePool at all:
#: that model is checked by hand (test_averagepool_22_double).
EQUIVALENT_OPSET = {"averagepool-1": 7}
#: The same for the rest of the family (LpPool-1, GlobalLpPool-1 and -22, MaxRoiPool-22): each
#: bundled model of theirs is checked against the loop reference in
#: tests/rewrite/test_lp_global_roi.py.
NO_BUILTIN = {"averagepool-22", "lppool-1", "globallppool-1", "globallppool-22", "maxroipool-22"}
#: Sums (in another order than onnxruntime's): compared within a few float32 ulps.
AVERAGED = ("averagepool", "lppool", "globalaveragepool")


def builtin(model: onnx.ModelProto, feed: dict) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feed)


def ours(model: onnx.ModelProto, feed: dict) -> list[np.ndarray]:
    return ortpool.InferenceSession(model).run(None, feed)


def assert_outputs(expected: list[np.ndarray], got: list[np.ndarray], averaged: bool) -> None:
    assert len(expected) == len(got)
    for e, g in zip(expected, got, strict=True):
        assert (e.dtype, e.shape) == (g.dtype, g.shape)
        if averaged and e.dtype.kind == "f":
            # a sum in another order: a few float32 ulps
            np.testing.assert_allclose(g, e, rtol=2e-6, atol=1e-7)
        else:
            np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("name", sorted(set(MODELS) - ORT_WRONG - NO_BUILTIN))
def test_bundled_model_matches_builtin(name: str) -> None:
    model = onnx.load(MODELS[name])
    rewritten, report = ortpool.rewrite.rewrite_with_report(model)
    pools = [n for n in model.graph.node if n.op_type in versions.OPERATORS]
    assert len(report.changed) == len(pools) and not report.left_alone
    assert all(
        n.domain == "ortpool" for n in rewritten.graph.node if n.name in {p.name for p in pools}
    )
    feed = feeds(model)
    reference = model
    if name in EQUIVALENT_OPSET:
        reference = onnx.ModelProto()
        reference.CopyFrom(model)
        reference.opset_import[0].version = EQUIVALENT_OPSET[name]
    assert_outputs(builtin(reference, feed), ours(rewritten, feed),
                   any(name.startswith(a) for a in AVERAGED))


def test_averagepool_22_double() -> None:
    """kernel 3, stride 2, ceil mode on 16: 8 windows; the last holds rows 14-15 only."""
    model = onnx.load(MODELS["averagepool-22"])
    feed = feeds(model)
    x = feed["X"]
    expected = np.array(
        [
            [
                [
                    [x[0, c, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3].mean() for j in range(8)]
                    for i in range(8)
                ]
                for c in range(3)
            ]
        ]
    )
    (got,) = ours(ortpool.rewrite(model), feed)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)  # summation order


def _naive_max_same_dilated(x: np.ndarray, k: int, d: int) -> np.ndarray:
    """SAME_UPPER, stride 1, by ruling 2: total pad (n-1) + (k-1)*d + 1 - n = (k-1)*d."""
    total = (k - 1) * d
    pb = total // 2
    n, m = x.shape[2:]
    out = np.full_like(x, -np.inf)
    for i in range(n):
        for j in range(m):
            for a in range(k):
                for b in range(k):
                    r, c = i - pb + a * d, j - pb + b * d
                    if 0 <= r < n and 0 <= c < m:
                        out[:, :, i, j] = np.maximum(out[:, :, i, j], x[:, :, r, c])
    return out


def test_same_with_dilation() -> None:
    model = onnx.load(MODELS["ort-defect-same-dilated"])
    feed = feeds(model)
    expected = _naive_max_same_dilated(feed["X"], k=3, d=2)
    (got,) = ours(ortpool.rewrite(model), feed)
    np.testing.assert_array_equal(got, expected)


def test_same_with_dilation_builtin_is_wrong() -> None:
    """onnxruntime 1.21 to 1.32 size and pad SAME for the undilated kernel: 7x7, not 9x9."""
    model = onnx.load(MODELS["ort-defect-same-dilated"])
    (theirs,) = builtin(model, feeds(model))
    runtime_defects.require(theirs.shape != (1, 2, 9, 9), "pads SAME for the dilated kernel")
    assert theirs.shape == (1, 2, 7, 7)


def test_valid_with_ceil() -> None:
    """VALID ignores ceil_mode: floor((8 - 3) / 2) + 1 = 3; onnxruntime 1.21 to 1.32 give 4."""
    model = onnx.load(MODELS["ort-defect-valid-ceil"])
    feed = feeds(model)
    x = feed["X"].astype(np.float64)
    expected = np.array(
        [
            [
                [
                    [x[b, c, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3].mean() for j in range(3)]
                    for i in range(3)
                ]
                for c in range(2)
            ]
            for b in range(1)
        ]
    )
    (got,) = ours(ortpool.rewrite(model), feed)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    (theirs,) = builtin(model, feed)
    runtime_defects.require(theirs.shape != expected.shape, "sizes VALID without ceil_mode")
    assert theirs.shape == (1, 2, 4, 4)
    np.testing.assert_allclose(theirs[:, :, :3, :3], expected, rtol=1e-6)


@pytest.mark.parametrize("use_max", [True, False])
def test_cnn(use_max: bool) -> None:
    model = onnx.load(MODELS["cnn"])
    rewritten, report = ortpool.rewrite.rewrite_with_report(model)
    assert report.counts() == {"AveragePool-11": 3, "MaxPool-12": 4, "MaxUnpool-11": 1}
    assert {n.name: n.cast for n in report.nodes if n.cast} == {
        "maxpool_half": "float16",
        "averagepool_half": "float16",
    }
    feed = feeds(model, use_max=np.array(use_max))
    head, half = ours(rewritten, feed)
    ref_head, ref_half = builtin(model, feed)
    np.testing.assert_array_equal(head, ref_head)  # the If branch taken is exact
    # float16 path, by hand in float64 and rounded once to float16 (rulings 8, 10)
    x = feed["image"].astype(np.float16)
    pooled = x.reshape(1, 3, 8, 2, 8, 2).max(axis=(3, 5)).astype(np.float64)
    padded = np.pad(pooled, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=np.nan)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
    expected = np.nanmean(windows, axis=(-2, -1)).astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(half, expected)
    # onnxruntime 1.21 to 1.32 have no float16 AveragePool on CPU: they compute it in float32
    # and drop the float16 rounding, so the built-in is only close (a measured fact, not pinned)
    np.testing.assert_allclose(ref_half, expected, atol=1e-3)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_round_trip(name: str) -> None:
    model = onnx.load(MODELS[name])
    rewritten = ortpool.rewrite(model)
    assert rewritten != model
    back, report = ortpool.rewrite.restore_with_report(rewritten)
    assert len(report.changed) == len(report.nodes) > 0
    assert_same_up_to_defaults(model, back)
    # The bundled models state no default explicitly, so the round trip is exact.
    assert back == model
