"""ortpool.ort.runtime: the IR stamp every supported onnxruntime reads, the installed runtime's
IR limit, the versions reports name; and the rewrite's note on a model above that limit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import onnxruntime_extensions
import pytest
from onnx import TensorProto, helper

import ortpool
from ortpool.ort import runtime
from tests.support import CHILD_ENV

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime


def relu_model(ir_version: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"]),
            helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = ir_version
    return model


def loads(model: onnx.ModelProto) -> bool:
    try:
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception:  # onnxruntime's exception types differ between releases
        return False
    return True


def test_the_stamp_is_read_and_the_limit_is_exact():
    limit = runtime.max_ir_version()
    # measured: 1.21 and 1.22 read 10, 1.23 11, 1.24 to 1.31 13, 1.32 14
    assert limit >= runtime.IR_VERSION
    assert loads(relu_model(runtime.IR_VERSION))
    assert loads(relu_model(limit))
    assert not loads(relu_model(limit + 1))


def test_versions_name_the_imported_packages():
    found = runtime.versions()
    assert found["onnxruntime"] == ort.__version__
    assert found["onnxruntime_extensions"] == onnxruntime_extensions.__version__
    assert found["onnx"] == onnx.__version__ and found["numpy"] == np.__version__
    assert found["ortpool"] == ortpool.__version__


def test_rewrite_notes_a_model_the_installed_runtime_cannot_read():
    limit = runtime.max_ir_version()
    _, report = ortpool.rewrite.rewrite_with_report(relu_model(limit + 1))
    assert report.notes == [
        f"the model has IR version {limit + 1}; the installed onnxruntime {ort.__version__} "
        f"reads at most {limit}"
    ]
    for readable in (runtime.IR_VERSION, limit):
        _, report = ortpool.rewrite.rewrite_with_report(relu_model(readable))
        assert report.notes == []


def test_the_processes_started_after_a_session_read_models_with_the_users_protobuf():
    """onnxruntime-extensions sets PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python in the process's
    environment as it is imported: validate's model workers and the runtimes' workers started
    after it read models with protobuf's pure-Python reader (a model a worker calls unreadable
    where the command line reads it). Put back as the user had it: unset, or set."""
    env = {**CHILD_ENV, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", None)
    shown = "; print(os.environ.get('PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION'))"
    # (onnxruntime-extensions 0.15 sets it, 0.13 does not: either way the user's setting stays)
    for imported, chosen, left in (("ortpool.ort.session", None, None),
                                   ("ortpool.ort.session", "upb", "upb")):
        if chosen is not None:
            env["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = chosen
        done = subprocess.run([sys.executable, "-c", f"import os, {imported}{shown}"], env=env,
                              capture_output=True, text=True, timeout=120)
        assert (imported, done.returncode, done.stdout) == (imported, 0, f"{left}\n"), done.stderr


def test_a_session_leaves_no_file_of_onnxruntimes_telemetry(tmp_path):
    """onnxruntime 1.32 writes its telemetry's session id (``.ses``) into TMPDIR and a device
    id under ~/.cache/Microsoft when imported; through ortpool it is off, unless the user set
    ORT_DISABLE_TELEMETRY (kept as set)."""
    model = tmp_path / "m.onnx"
    onnx.save(relu_model(runtime.max_ir_version()), model)
    home = tmp_path / "home"
    home.mkdir()
    code = ("import os, ortpool, numpy as np\n"
            f"ortpool.InferenceSession({str(model)!r}).run(None, {{'x': np.ones((1, 1, 4), "
            "np.float32)})\nprint(os.environ.get('ORT_DISABLE_TELEMETRY'))")
    env = {**CHILD_ENV, "TMPDIR": str(home), "HOME": str(home),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    for chosen in (None, "0"):
        env.pop("ORT_DISABLE_TELEMETRY", None)
        if chosen is not None:
            env["ORT_DISABLE_TELEMETRY"] = chosen
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        if chosen is None:
            assert list(home.iterdir()) == []
        assert done.stdout == f"{chosen or 1}\n"
