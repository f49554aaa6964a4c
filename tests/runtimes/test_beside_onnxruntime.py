"""The runtimes' extras installed beside onnxruntime's CPU build (the test extra installs both):
each keeps working in one process, in either order, with onnxruntime's sessions and ortpool's
ops (issue 35)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("openvino")
pytest.importorskip("tract")

#: onnxruntime, OpenVINO and tract in one process, imported in the given order, each running
#: MaxPool-12 k3 s1 p1 and ortpool's op through onnxruntime; every output the spec's.
PROGRAM = """
import importlib, sys
import numpy as np
for name in sys.argv[1:]:
    importlib.import_module(name)
import ortpool
from ortpool import kernels, runtimes
from ortpool.model.singlenode import alone_model, feed_dict
from tests.support.judging import site_of
x = np.random.default_rng(0).normal(size=(1, 2, 5, 5)).astype(np.float32)
attrs = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
want = kernels.run_op("MaxPool", 12, [x], attrs, 1)[0]
model = alone_model(site_of("MaxPool", 12, attrs, [x]), [x])
import onnxruntime
got = {"onnxruntime": onnxruntime.InferenceSession(model.SerializeToString()).run(
    None, feed_dict([x]))[0]}
got["ortpool"] = ortpool.InferenceSession(ortpool.rewrite(model)).run(None, feed_dict([x]))[0]
for name in ("openvino", "tract"):
    got[name] = runtimes.get(name).run(model.SerializeToString(), feed_dict([x]))[0]
assert all(np.array_equal(y, want) for y in got.values()), {k: v.shape for k, v in got.items()}
print(sorted(got))
"""


@pytest.mark.parametrize("order", [["onnxruntime", "openvino", "tract"],
                                   ["tract", "openvino", "onnxruntime"]])
def test_each_runtime_keeps_working_beside_onnxruntime(order):
    done = subprocess.run([sys.executable, "-c", PROGRAM, *order], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["['onnxruntime',", "'openvino',", "'ortpool',", "'tract']"]
