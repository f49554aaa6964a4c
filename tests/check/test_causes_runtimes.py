"""Each runtime's departures, measured: a small node of each judged by the engine on the runtime
installed here and its cause named from the runtime's own outputs (a runtime whose package is
absent is skipped). The figures of the whole grid are scripts/grid_causes.py's.

What each case shows was measured on onnxruntime 1.32, OpenVINO 2026.4.1 (CPU), tract 0.23.9
and onnx 1.23.2's reference evaluator; a later release that mends one fails its test, which is
the point: the finding no longer holds there.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from ortpool import dtypes, runtimes
from ortpool.check import causes
from ortpool.check.cases import FeedSet
from ortpool.check.judge import judge
from ortpool.model.site import Site
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.runtimes.base import Worker

SEVEN = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7)
#: a window of float32's lowest finite value (as ruling 18's built cases have) after another
LOWEST = np.array([[[5, 1, -3.4028235e38, -3.4028235e38]]], np.float32)
#: -inf alone: a max of -inf in every window
NEG_INF = np.full((1, 1, 7), -np.inf, np.float32)
RNG = np.random.default_rng(11)
PLANE = RNG.random((1, 2, 6, 7)).astype(np.float32)


def named(runtime: Any, op: str, version: int, attrs: dict, arrays: list[np.ndarray],
          n_outputs: int = 1) -> list[causes.Cause]:
    """The causes of ``op``-``version`` on ``arrays`` as judged on ``runtime``."""
    x = arrays[0]
    site = Site.alone(op, version, attrs, dtypes.name_of(x.dtype), x.shape, len(arrays),
                      n_outputs, strict=False)
    judgement = judge(site, [FeedSet("the case's input", list(arrays), observed=True)], runtime)
    return causes.of(site, judgement)


def codes(found: list[causes.Cause]) -> list[str]:
    return [c.code for c in found]


def worker(name: str, module: str) -> Iterator[Worker]:
    pytest.importorskip(module)
    with Worker(runtimes.get(name), 60) as started:
        yield started


@pytest.fixture(scope="module")
def openvino() -> Iterator[Worker]:
    yield from worker("openvino", "openvino")


@pytest.fixture(scope="module")
def tract() -> Iterator[Worker]:
    yield from worker("tract", "tract")


@pytest.fixture(scope="module")
def reference() -> Iterator[Worker]:
    yield from worker("reference", "onnx.reference")


ORT = RuntimeSpec(level="disable")


def test_onnxruntime() -> None:
    found = named(ORT, "MaxPool", 12, {"kernel_shape": [3], "strides": [1],
                                       "auto_pad": "SAME_UPPER", "dilations": [2]}, [SEVEN])
    assert codes(found) == [causes.SAME_DILATION]
    assert "pads [1, 1] instead of [2, 2]" in found[0].detail
    found = named(ORT, "AveragePool", 19, {"kernel_shape": [2], "strides": [2],
                                           "auto_pad": "VALID", "ceil_mode": 1}, [SEVEN])
    assert codes(found) == [causes.CEIL_VALID]
    x = SEVEN.copy()
    x[0, 0, [0, 3]] = np.nan
    # onnxruntime's MaxPool drops every NaN; with Indices (another kernel) it keeps the NaN
    # that is a window's first tap
    found = named(ORT, "MaxPool", 12, {"kernel_shape": [2], "strides": [1]}, [x])
    assert codes(found) == [causes.NAN] and "drops the NaN: its value" in found[0].detail
    found = named(ORT, "MaxPool", 12, {"kernel_shape": [2], "strides": [1]}, [x], n_outputs=2)
    assert codes(found) == [causes.NAN] and "keeps it in 2" in found[0].detail
    found = named(ORT, "MaxPool", 12, {"kernel_shape": [2], "strides": [3], "pads": [2, 2]},
                  [SEVEN])
    assert codes(found) == [causes.PADS_GE_KERNEL, causes.EMPTY_WINDOW]
    found = named(ORT, "GlobalMaxPool", 1, {}, [np.zeros((1, 2, 0), np.float32)])
    assert codes(found) == [causes.EMPTY_WINDOW]
    # a window of -inf alone: float32's lowest finite value in 1-D, in 2-D only in the windows
    # reaching into the pads of the last axis (its first and last columns here)
    attrs = {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}
    found = named(ORT, "MaxPool", 12, attrs, [NEG_INF])
    assert codes(found) == [causes.NEG_INF_WINDOW]
    assert found[0].detail == ("4 of the 4 cells of windows of -inf alone: the runtime gives "
                               "-3.4028235e+38 where their max is -inf")
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    found = named(ORT, "MaxPool", 12, attrs, [np.full((1, 1, 7, 7), -np.inf, np.float32)])
    assert codes(found) == [causes.NEG_INF_WINDOW] and found[0].detail.startswith("8 of the 16")


def test_openvino(openvino: Worker) -> None:
    found = named(openvino, "MaxPool", 22, {"kernel_shape": [2], "strides": [3], "pads": [1, 1],
                                            "ceil_mode": 1}, [SEVEN])
    assert codes(found) == [causes.END_PAD_WINDOW]
    assert found[0].basis is not None and found[0].basis.kind == causes.SPEC_TEXT
    found = named(openvino, "MaxPool", 12, {"kernel_shape": [3, 2], "strides": [2, 2],
                                            "storage_order": 1}, [PLANE], n_outputs=2)
    assert codes(found) == [causes.STORAGE_ORDER]
    found = named(openvino, "AveragePool", 19, {"kernel_shape": [3], "strides": [2],
                                                "pads": [0, 1], "ceil_mode": 1,
                                                "count_include_pad": 1}, [SEVEN])
    assert codes(found) == [causes.OVERHANG_DIVISOR]
    found = named(openvino, "LpPool", 18, {"kernel_shape": [2], "strides": [3],
                                           "auto_pad": "VALID", "ceil_mode": 1}, [SEVEN])
    assert sorted(codes(found)) == sorted([causes.CEIL_VALID, causes.LP_RESCALE])
    found = named(openvino, "AveragePool", 19, {"kernel_shape": [2], "strides": [3],
                                                "pads": [2, 2]}, [SEVEN])
    assert codes(found) == [causes.PADS_GE_KERNEL, causes.EMPTY_WINDOW]
    found = named(openvino, "AveragePool", 19, {"kernel_shape": [3], "strides": [1]},
                  [(np.random.default_rng(0).random((1, 1, 7)) * 1e8)])
    assert codes(found) == [causes.DOUBLE_AS_FLOAT]
    found = named(openvino, "MaxPool", 12, {"kernel_shape": [2], "strides": [2]}, [LOWEST],
                  n_outputs=2)
    assert codes(found) == [causes.LOWEST_MAX_INDEX]
    found = named(openvino, "MaxPool", 12, {"kernel_shape": [2], "strides": [2]}, [NEG_INF])
    assert codes(found) == [causes.NEG_INF_WINDOW] and found[0].detail.startswith("3 of the 3")
    found = named(openvino, "GlobalMaxPool", 1, {}, [NEG_INF])
    assert codes(found) == [causes.NEG_INF_WINDOW]
    found = named(openvino, "MaxUnpool", 11, {"kernel_shape": [2], "strides": [2]},
                  [SEVEN[..., :3], np.array([[[1, 3, 5]]], np.int64)])
    assert codes(found) == [causes.NO_KERNEL]


def test_tract(tract: Worker) -> None:
    found = named(tract, "GlobalLpPool", 2, {"p": 2}, [SEVEN])
    assert codes(found) == [causes.GLOBAL_NORM_MEAN]
    found = named(tract, "GlobalLpPool", 2, {}, [np.zeros((1, 2, 0), np.float32)])
    assert codes(found) == [causes.CRASHED, causes.EMPTY_WINDOW]
    assert "SIGABRT" in found[0].detail and "panicked at" in found[0].detail
    x = np.array([[[20, 7, 20, 13, 4, 12, 0], [19, 12, 10, 17, 8, 8, 0]]], np.uint8)
    found = named(tract, "MaxPool", 12, {"kernel_shape": [2], "strides": [3], "ceil_mode": 1},
                  [x], n_outputs=2)
    assert codes(found) == [causes.LOWEST_MAX_INDEX]
    # a float argmax starts at the lowest finite value: a window of it (of the built cases) is
    # indexed at its plane's first element too (it was a difference with no cause named)
    found = named(tract, "MaxPool", 12, {"kernel_shape": [2], "strides": [2]}, [LOWEST],
                  n_outputs=2)
    assert codes(found) == [causes.LOWEST_MAX_INDEX]
    found = named(tract, "MaxPool", 12, {"kernel_shape": [2], "strides": [2]}, [NEG_INF])
    assert codes(found) == [causes.NEG_INF_WINDOW] and found[0].detail.startswith("3 of the 3")
    found = named(tract, "GlobalMaxPool", 1, {}, [NEG_INF])
    assert codes(found) == [causes.NEG_INF_WINDOW]
    found = named(tract, "LpPool", 18, {"kernel_shape": [2]}, [SEVEN])
    assert codes(found) == [causes.NO_KERNEL]
    found = named(tract, "GlobalLpPool", 1, {"p": 1.0}, [SEVEN])
    assert codes(found) == [causes.ATTRIBUTE_TYPE]


def test_the_reference_evaluator(reference: Worker) -> None:
    found = named(reference, "MaxPool", 12, {"kernel_shape": [2], "strides": [3],
                                             "auto_pad": "SAME_LOWER"}, [SEVEN])
    assert codes(found) == [causes.SAME_SIZE]
    found = named(reference, "AveragePool", 1, {"kernel_shape": [3], "strides": [2],
                                                "pads": [1, 1]}, [SEVEN])
    assert codes(found) == [causes.AVERAGE_COUNTS_PADS]
    found = named(reference, "GlobalMaxPool", 1, {}, [np.concatenate([SEVEN, SEVEN - 3], 1)])
    assert codes(found) == [causes.GLOBAL_AXES]
    found = named(reference, "AveragePool", 19, {"kernel_shape": [2], "strides": [3],
                                                 "auto_pad": "SAME_UPPER", "ceil_mode": 1},
                  [SEVEN])
    assert codes(found) == [causes.CEIL_AUTO_PAD]
    found = named(reference, "LpPool", 18, {"kernel_shape": [3], "strides": [3], "pads": [1, 0],
                                            "ceil_mode": 1, "p": 1}, [SEVEN])
    assert codes(found) == [causes.LP_RESCALE]
    x = np.array([[[0.75, 0.75, -1.5, 1.5, 0, -0.5, 0.5]]], np.float32)
    found = named(reference, "AveragePool", 19, {"kernel_shape": [2], "strides": [3],
                                                 "ceil_mode": 1, "dilations": [2]}, [x])
    assert codes(found) == [causes.CEIL_PAD_SHIFT]
    found = named(reference, "AveragePool", 19, {"kernel_shape": [2], "strides": [1],
                                                 "auto_pad": "VALID", "dilations": [2]}, [SEVEN])
    assert codes(found) == [causes.UNDILATED_SIZE]
