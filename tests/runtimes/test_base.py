"""The runtime seam without any runtime: failures, the feed and output checks, the table of
runtimes, the last words of a dead worker. No optional package needed, no process started."""

from __future__ import annotations

import pickle

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ortpool import runtimes
from ortpool.runtimes import base
from ortpool.runtimes.base import (
    CRASHED,
    KINDS,
    NO_KERNEL,
    RUN_FAILED,
    RuntimeFailure,
    check_feeds,
    check_outputs,
    last_words,
    signature,
)
from tests.runtimes.cases import node


def test_the_five_kinds_are_the_interface_strings() -> None:
    assert KINDS == ("no-kernel", "refused", "run-failed", "crashed", "timed-out")
    assert KINDS[:3] == (runtimes.NO_KERNEL, runtimes.REFUSED, runtimes.RUN_FAILED)
    assert KINDS[3:] == (runtimes.CRASHED, runtimes.TIMED_OUT)


def test_a_failure_is_one_line_names_its_runtime_and_pickles() -> None:
    err = RuntimeFailure(NO_KERNEL, "no implementation\n  of LpPool\n\nStack backtrace:", "tract")
    assert err.kind == NO_KERNEL and err.runtime == "tract"
    assert err.message == "no implementation of LpPool Stack backtrace:"
    assert str(err) == "tract: no-kernel: no implementation of LpPool Stack backtrace:"
    back = pickle.loads(pickle.dumps(err))
    assert (back.kind, back.message, back.runtime, str(back)) == (
        err.kind,
        err.message,
        err.runtime,
        str(err),
    )
    assert len(RuntimeFailure(RUN_FAILED, "x" * 5000).message) == base.MESSAGE_LIMIT
    with pytest.raises(ValueError, match=r"failure kind 'broken' is not one of no-kernel, "):
        RuntimeFailure("broken", "text")


def _model(inputs, outputs, initializers=()) -> bytes:
    graph = helper.make_graph(
        [helper.make_node("Identity", ["X"], ["Y"])], "g", inputs, outputs, list(initializers)
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


X_DECLARED = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3])
Y_DECLARED = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)


def test_feeds_are_checked_against_the_model_before_any_runtime_sees_them() -> None:
    """tract ends its process on a missing feed and OpenVINO runs on uninitialised memory:
    the checks name the runtime, the input and the value."""
    sig = signature(_model([X_DECLARED], [Y_DECLARED]), "tract")
    ok = np.zeros((2, 3), np.float32)
    assert check_feeds(sig, {"X": ok}, "tract")["X"] is ok
    assert check_feeds(sig, {"X": np.zeros((7, 3), np.float32)}, "tract")  # N is free
    with pytest.raises(ValueError, match=r"^tract: input 'X' has no feed$"):
        check_feeds(sig, {}, "tract")
    with pytest.raises(ValueError, match=r"^tract: feed 'Z' is not an input of the model \(inp"):
        check_feeds(sig, {"X": ok, "Z": ok}, "tract")
    with pytest.raises(TypeError, match=r"^tract: input 'X' is double where the model declares"):
        check_feeds(sig, {"X": ok.astype(np.float64)}, "tract")
    with pytest.raises(ValueError, match=r"shape \[2,4\] where the model declares \[\?,3\]$"):
        check_feeds(sig, {"X": np.zeros((2, 4), np.float32)}, "tract")
    with pytest.raises(ValueError, match=r"shape \[3\] where the model declares \[\?,3\]$"):
        check_feeds(sig, {"X": np.zeros(3, np.float32)}, "tract")
    with pytest.raises(TypeError, match=r"^tract: feeds are list, not a dict of arrays$"):
        check_feeds(sig, [ok], "tract")  # type: ignore[arg-type]
    bf16 = signature(
        _model([helper.make_tensor_value_info("X", TensorProto.BFLOAT16, [2])], [Y_DECLARED]), "x"
    )
    assert check_feeds(bf16, {"X": np.zeros(2, ml_dtypes.bfloat16)}, "x")


def test_an_input_with_an_initializer_needs_no_feed() -> None:
    weight = helper.make_tensor("W", TensorProto.FLOAT, [1], [1.0])
    w_input = helper.make_tensor_value_info("W", TensorProto.FLOAT, [1])
    sig = signature(_model([X_DECLARED, w_input], [Y_DECLARED], [weight]), "reference")
    assert [p.name for p in sig.inputs] == ["X"] and [p.name for p in sig.optional] == ["W"]
    feeds = check_feeds(sig, {"X": np.zeros((1, 3), np.float32)}, "reference")
    assert list(feeds) == ["X"]


def test_bytes_that_are_no_model_are_the_callers_error() -> None:
    with pytest.raises(ValueError, match=r"^openvino: the model bytes do not parse as an ONNX"):
        signature(b"\x08\x07garbage", "openvino")
    with pytest.raises(TypeError, match=r"^openvino: the model is str, not bytes$"):
        signature("model.onnx", "openvino")  # type: ignore[arg-type]
    assert signature(onnx.ModelProto(), "openvino").inputs == ()


def test_outputs_must_come_back_in_their_declared_types_and_number() -> None:
    model, _ = node("MaxPool", 12, {"kernel_shape": [2]}, np.zeros((1, 1, 4), np.float32))
    sig = signature(model, "openvino")
    y = np.zeros((1, 1, 3), np.float32)
    assert check_outputs(sig, [y], "openvino")[0] is y
    with pytest.raises(RuntimeFailure, match=r"output 'Y' came back as float64 where the model"):
        check_outputs(sig, [y.astype(np.float64)], "openvino")
    with pytest.raises(RuntimeFailure, match=r"2 outputs came back where the model declares 1"):
        check_outputs(sig, [y, y], "openvino")


def test_a_dead_workers_last_words_are_its_panic_or_last_line() -> None:
    panic = (
        "\nthread '<unnamed>' (10412) panicked at core/src/ops/cnn/patches.rs:111:51:\n"
        "called `Option::unwrap()` on a `None` value\n"
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
        "thread '<unnamed>' (10412) panicked at library/core/src/panicking.rs:225:5:\n"
        "panic in a function that cannot unwind\nstack backtrace:\n   0: 0x7f - std\n"
    )
    assert last_words(panic) == (
        "panicked at core/src/ops/cnn/patches.rs:111:51: "
        "called `Option::unwrap()` on a `None` value"
    )
    assert last_words("warming up\nSegmentation fault in kernel\n   0: frame\n") == (
        "Segmentation fault in kernel"
    )
    assert last_words("") == ""


def test_get_names_the_known_runtimes_and_checks_options(monkeypatch) -> None:
    assert runtimes.names() == ["openvino", "reference", "tract"]
    with pytest.raises(ValueError, match=r"^unknown runtime 'tvm': the runtimes are openvino, ref"):
        runtimes.get("tvm")
    with pytest.raises(TypeError, match=r"^runtime 'tract' takes no option 'device' \(its options"):
        runtimes.get("tract", device="CPU")
    with pytest.raises(TypeError, match=r"takes no option 'threads' \(its options: device, prec"):
        runtimes.get("openvino", threads=2)
    monkeypatch.setattr(runtimes.Tract, "available", classmethod(lambda cls: "pip install tract"))
    with pytest.raises(ValueError, match=r"^runtime 'tract' is not installed here: pip ins"):
        runtimes.get("tract")
    assert runtimes.install_hint("tract") == "pip install tract"
    assert runtimes.install_hint("reference") is None
    assert isinstance(runtimes.get("reference"), runtimes.Reference)
    with pytest.raises(ValueError, match=r"^unknown runtime 'tvm'"):
        runtimes.install_hint("tvm")


def test_openvino_options_are_checked_and_every_runtime_pickles() -> None:
    """Built without their packages: a Worker sends the object to its child."""
    with pytest.raises(ValueError, match=r"^openvino: precision='fp32' is not one of f32, bf16"):
        runtimes.OpenVINO(precision="fp32")
    with pytest.raises(ValueError, match=r"^openvino: device='' is not a device name"):
        runtimes.OpenVINO(device="")
    for made in (runtimes.OpenVINO(precision="bf16"), runtimes.Tract(), runtimes.Reference()):
        made._cache["module"] = object()  # a cache never travels
        back = pickle.loads(pickle.dumps(made))
        assert back == made and back._cache == {}
    assert repr(runtimes.OpenVINO()) == "OpenVINO(device='CPU', precision='f32')"


def test_a_worker_needs_a_runtime_and_positive_times() -> None:
    with pytest.raises(TypeError, match=r"^Worker needs a Runtime, not str$"):
        runtimes.Worker("tract", 5)  # type: ignore[arg-type]
    for bad in (0, -1, float("nan"), float("inf"), True, "5"):
        with pytest.raises(ValueError, match=r"^reference worker: timeout=.* is not a positive"):
            runtimes.Worker(runtimes.Reference(), bad)  # type: ignore[arg-type]
    assert CRASHED in KINDS
