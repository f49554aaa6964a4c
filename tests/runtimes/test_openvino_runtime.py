"""OpenVINO's own runtime (the ``openvino`` package; skipped without it): exact MaxPool, its
missing MaxUnpool, what its ONNX frontend refuses, the pinned f32 precision, bfloat16 through
its float16-bits API."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from ortpool import kernels, runtimes
from ortpool.runtimes import NO_KERNEL, REFUSED, RuntimeFailure
from tests import support
from tests.runtimes.cases import maxpool_case, node

openvino = pytest.importorskip("openvino")


@pytest.fixture(scope="module")
def runtime() -> runtimes.Runtime:
    return runtimes.get("openvino")


def test_maxpool_equals_the_spec_exactly(runtime) -> None:
    model, feeds, want = maxpool_case()
    (y,) = runtime.run(model, feeds)
    assert y.dtype == want.dtype and y.shape == want.shape == (1, 2, 5, 5)
    np.testing.assert_array_equal(y, want)


def test_maxunpool_has_no_kernel(runtime) -> None:
    x = np.ones((1, 1, 2, 2), np.float32)
    indices = np.array([0, 3, 8, 15], np.int64).reshape(1, 1, 2, 2)
    model, feeds = node("MaxUnpool", 11, {"kernel_shape": [2, 2], "strides": [2, 2]}, x, indices)
    with pytest.raises(RuntimeFailure) as caught:
        runtime.run(model, feeds)
    assert caught.value.kind == NO_KERNEL and caught.value.runtime == "openvino"
    assert caught.value.message == "no conversion rule for MaxUnpool-11"
    assert "\n" not in str(caught.value)


def test_averagepool_pads_reaching_past_the_kernel_are_refused(runtime) -> None:
    """The spec computes it (a window wholly in the padding: nan without count_include_pad);
    OpenVINO's shape inference refuses it when the model is read."""
    x = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7)
    model, feeds = node("AveragePool", 19, {"kernel_shape": [2], "pads": [2, 2]}, x)
    with pytest.raises(RuntimeFailure) as caught:
        runtime.run(model, feeds)
    assert caught.value.kind == REFUSED
    assert caught.value.message.startswith(
        "AveragePool-19 (node 'node'): Kernel after dilation is sometimes entirely in the padding"
    )
    assert "\n" not in caught.value.message and "Exception from" not in caught.value.message


def test_a_missing_feed_is_an_error_not_a_run_on_garbage(runtime) -> None:
    model, _ = node("MaxPool", 12, {"kernel_shape": [2]}, np.ones((1, 1, 7), np.float32))
    with pytest.raises(ValueError, match=r"^openvino: input 'X' has no feed$"):
        runtime.run(model, {})


def test_the_precision_is_f32_unless_asked(runtime) -> None:
    facts = runtime.describe()
    assert json.loads(json.dumps(facts)) == facts
    assert facts["runtime"] == "openvino" and facts["device"] == "CPU"
    assert facts["precision"] == "f32" and facts["precision_asked"] == "f32"
    assert facts["release"] == openvino.__version__.split("-")[0]
    assert runtime.title() == f"OpenVINO {facts['release']} (CPU, f32)"
    asked = runtimes.get("openvino", precision="bf16").describe()
    assert asked["precision_asked"] == "bf16"
    assert asked["precision"] in ("bf16", "f32")  # f32 where the CPU has no bf16 instructions
    with pytest.raises(ValueError, match=r"^openvino: device 'NPU7' is not available here \(av"):
        runtimes.get("openvino", device="NPU7").describe()


@pytest.mark.parametrize("device", ["AUTO", "HETERO:CPU", "MULTI:CPU", "CPU.7"])
def test_a_device_whose_facts_cannot_be_asked_is_refused_not_a_traceback(device) -> None:
    """``--runtime-option device=AUTO`` (and the other devices that stand for others, or a CPU
    id its plugin lacks) passed the device check, then ended the command in OpenVINO's
    RuntimeError as the report's device name and precision were asked of it."""
    with pytest.raises(ValueError, match=rf"^openvino: device {re.escape(repr(device))}(:| is)"):
        runtimes.get("openvino", device=device).describe()


def test_bfloat16_goes_in_and_comes_back_as_values_not_float16_bits(runtime) -> None:
    x = np.array([1, 3, 2.5, 7, 1.1, -4, 5], np.float32).astype(ml_dtypes.bfloat16)
    x = x.reshape(1, 1, 7)
    model, feeds = node("MaxPool", 22, {"kernel_shape": [2]}, x)
    (y,) = runtime.run(model, feeds)
    (want,) = kernels.run_op("MaxPool", 22, [x], {"kernel_shape": [2]}, 1)
    assert y.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(y.astype(np.float32), want.astype(np.float32))


def test_in_a_worker_too(runtime) -> None:
    model, feeds, want = maxpool_case()
    with runtimes.Worker(runtime, timeout=60) as worker:
        np.testing.assert_array_equal(worker.run(model, feeds)[0], want)


def test_it_writes_nothing_in_the_users_home_and_keeps_convert_model(tmp_path) -> None:
    """``import openvino`` imports its model converter, which writes ~/intel/stats and a client
    id there and sends a usage event: ortpool's import of the runtime (the caller's process and
    the worker's) leaves it out, and ``openvino.convert_model`` imports it when called."""
    home = tmp_path / "home"
    home.mkdir()
    code = (
        "import os, sys, ortpool\n"
        "report = ortpool.validate('models/maxpool-1.onnx', runtime='openvino')\n"
        "import openvino\n"
        "print(report.exit_code, 'openvino.tools.ovc' in sys.modules,\n"
        "      openvino.convert_model.__name__, os.listdir(os.environ['HOME']))\n"
        "import openvino.tools.ovc\n"  # the user's own import still works
        "print(openvino.tools.ovc.convert_model.__name__)\n"
    )
    env = {**support.CHILD_ENV, "HOME": str(home)}
    env.pop("CI", None)  # openvino sends nothing in a CI job: the test is of a user's machine
    done = subprocess.run([sys.executable, "-c", code], cwd=support.ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    # nothing in the home until the user imports the converter (which then writes there)
    assert done.stdout.splitlines() == ["0 False _convert_model []", "convert_model"]
