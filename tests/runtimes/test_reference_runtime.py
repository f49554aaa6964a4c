"""The onnx reference evaluator (installed with onnx, never skipped): exact MaxPool, the ops it
has no implementation of, what it refuses and what fails inside it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ortpool import runtimes
from ortpool.runtimes import NO_KERNEL, REFUSED, RUN_FAILED, RuntimeFailure
from tests.runtimes.cases import maxpool_case, node

X7 = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7)
ROIS = np.zeros((1, 5), np.float32)


@pytest.fixture(scope="module")
def runtime() -> runtimes.Runtime:
    return runtimes.get("reference")


def test_maxpool_equals_the_spec_exactly(runtime) -> None:
    model, feeds, want = maxpool_case()
    (y,) = runtime.run(model, feeds)
    assert y.dtype == want.dtype and y.shape == want.shape == (1, 2, 5, 5)
    np.testing.assert_array_equal(y, want)
    import onnx

    facts = runtime.describe()
    assert facts["release"] == onnx.__version__ and json.loads(json.dumps(facts)) == facts
    assert runtime.title() == f"onnx {onnx.__version__} reference evaluator"


@pytest.mark.parametrize(
    ("op", "opset", "attributes", "feeds"),
    [
        ("GlobalLpPool", 2, {"p": 2}, [X7]),
        (
            "MaxRoiPool",
            1,
            {"pooled_shape": [1, 1]},
            [X7.reshape(1, 1, 7, 1), ROIS],
        ),
    ],
)
def test_ops_without_an_implementation_have_no_kernel(runtime, op, opset, attributes, feeds):
    model, fed = node(op, opset, attributes, *feeds)
    with pytest.raises(RuntimeFailure) as caught:
        runtime.run(model, fed)
    assert caught.value.kind == NO_KERNEL
    assert str(caught.value) == f"reference: no-kernel: no implementation of {op}"


def test_its_own_checks_refuse_and_numpys_errors_fail_the_run(runtime) -> None:
    """A kernel longer than the input: its shape code raises ("output shape cannot be null or
    negative"): refused. uint8 MaxPool with pads and Indices: an IndexError in its loop."""
    model, feeds = node("MaxPool", 12, {"kernel_shape": [9]}, X7)
    with pytest.raises(RuntimeFailure) as caught:
        runtime.run(model, feeds)
    assert caught.value.kind == REFUSED
    assert caught.value.message.startswith("output shape cannot be null or negative")
    x = np.zeros((1, 1, 7), np.uint8)
    model, feeds = node("MaxPool", 12, {"kernel_shape": [2], "pads": [1, 1]}, x, n_outputs=2)
    with pytest.raises(RuntimeFailure) as caught:
        runtime.run(model, feeds)
    assert caught.value.kind == RUN_FAILED
    assert caught.value.message == "IndexError: index 6 is out of bounds for axis 2 with size 6"


def test_in_a_worker_with_a_time_limit(runtime) -> None:
    """A pool it loops over in Python for half a minute is a time-out; the next case runs."""
    big = np.zeros((1, 16, 256, 256), np.float32)
    slow_model, slow_feeds = node("AveragePool", 19, {"kernel_shape": [3, 3]}, big)
    model, feeds, want = maxpool_case()
    with runtimes.Worker(runtime, timeout=1.0) as worker:
        with pytest.raises(RuntimeFailure, match=r"^reference: timed-out: the worker took longer"):
            worker.run(slow_model, slow_feeds)
        worker.timeout = 30.0  # a margin for the next case on a loaded machine
        np.testing.assert_array_equal(worker.run(model, feeds)[0], want)
        assert worker.started == 2


def test_timed_for_bench_in_a_worker_of_its_own() -> None:
    """``time_reference``: the calls' times and outputs; a refusal is no times and the
    evaluator's first line (for the benchmark's table)."""
    from ortpool.runtimes.reference_runtime import time_reference

    model, feeds, want = maxpool_case()
    times, outputs = time_reference(model, feeds, limit=60.0)
    assert 1 <= len(times) <= 5 and all(isinstance(t, float) for t in times)
    np.testing.assert_array_equal(outputs[0], want)
    roi, fed = node("MaxRoiPool", 1, {"pooled_shape": [1, 1]}, X7.reshape(1, 1, 7, 1), ROIS)
    refused = time_reference(roi, fed, limit=60.0)
    assert refused is not None and refused[0] == []
    assert refused[1].startswith("RuntimeImplementationError: No registered implementation for "
                                 "operator 'MaxRoiPool'")
