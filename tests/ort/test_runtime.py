"""ortpool.ort.runtime: the IR stamp every supported onnxruntime reads, the installed runtime's
IR limit, the versions reports name; and the rewrite's note on a model above that limit."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import onnxruntime_extensions
import pytest
from onnx import TensorProto, helper

import ortpool
from ortpool.ort import runtime

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
