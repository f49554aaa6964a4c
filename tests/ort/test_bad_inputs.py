"""Bad inputs: each raises a clear error naming the node, the op version and the offending value,
and the process lives on (ruling 11).

The run-time cases reach the kernel inside onnxruntime, where an escaping exception would abort
the process (exit 134) and take pytest with it; so besides running them here, one subprocess runs
them all (``python tests/ort/test_bad_inputs.py``) and must exit 0 having printed every message.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Callable

import numpy as np
import onnx
import pytest

import ortpool
from ortpool import optypes, versions
from ortpool.attributes import full_attributes, normalize
from ortpool.errors import OrtpoolError
from tests import support

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

F32 = np.float32


@dataclasses.dataclass
class RunCase:
    """A valid model fed an input its op cannot accept: fails in ``run``."""

    name: str
    model: Callable[[], onnx.ModelProto]
    feed: dict[str, np.ndarray]
    message: str  # the whole OrtpoolError text up to the "[op type ..." suffix
    good: dict[str, np.ndarray]  # a feed the same session then runs fine


def _unpool(n_inputs=2):
    return support.ortpool_model(
        "MaxUnpool", 11, {"kernel_shape": [2, 2], "strides": [2, 2]}, F32, n_inputs=n_inputs,
        node_name="unpool1",
    )


def _maxpool(attrs, version=12, n_outputs=1):
    return support.ortpool_model("MaxPool", version, attrs, F32, n_outputs=n_outputs,
                                 node_name="pool1")


X22 = np.arange(4, dtype=F32).reshape(1, 1, 2, 2)
GOOD_UNPOOL = {"X": X22, "I": np.array([0, 3, 9, 15]).reshape(1, 1, 2, 2)}
GOOD_UNPOOL_SHAPE = {**GOOD_UNPOOL, "output_shape": np.array([1, 1, 4, 4])}

RUN_CASES = [
    RunCase(
        "index out of range",
        _unpool,
        {"X": X22, "I": np.array([0, 1, 2, 99]).reshape(1, 1, 2, 2)},
        "node 'unpool1' (MaxUnpool-11): index 99 in I is outside the output of shape "
        "[1, 1, 4, 4] set by the attributes (valid: 0 to 15)",
        GOOD_UNPOOL,
    ),
    RunCase(
        "negative index",
        _unpool,
        {"X": X22, "I": np.array([0, -1, 2, 3]).reshape(1, 1, 2, 2)},
        "node 'unpool1' (MaxUnpool-11): index -1 in I is outside the output of shape "
        "[1, 1, 4, 4] set by the attributes (valid: 0 to 15)",
        GOOD_UNPOOL,
    ),
    RunCase(
        "output_shape too small",
        lambda: _unpool(3),
        {"X": X22, "I": np.array([0, 3, 9, 15]).reshape(1, 1, 2, 2),
         "output_shape": np.array([1, 1, 3, 3])},
        "node 'unpool1' (MaxUnpool-11): index 15 in I is outside the output of shape "
        "[1, 1, 3, 3] set by output_shape (valid: 0 to 8)",
        GOOD_UNPOOL_SHAPE,
    ),
    RunCase(
        "output_shape of the wrong rank",
        lambda: _unpool(3),
        {"X": X22, "I": np.array([0, 3, 9, 15]).reshape(1, 1, 2, 2),
         "output_shape": np.array([4, 4])},
        "node 'unpool1' (MaxUnpool-11): output_shape=[4, 4] must be a 1-D int64 tensor of 4 "
        "values (the rank of X)",
        GOOD_UNPOOL_SHAPE,
    ),
    RunCase(
        "indices shape differs from X",
        _unpool,
        {"X": X22, "I": np.array([0, 1, 2]).reshape(1, 1, 3)},
        "node 'unpool1' (MaxUnpool-11): input I has shape [1, 1, 3] but X has shape "
        "[1, 1, 2, 2]",
        GOOD_UNPOOL,
    ),
    RunCase(
        "index into an empty default output",
        lambda: support.ortpool_model("MaxUnpool", 11, {"kernel_shape": [2], "pads": [1, 1]},
                                      F32, n_inputs=2, node_name="unpool1"),
        {"X": np.ones((1, 1, 1), F32), "I": np.zeros((1, 1, 1), np.int64)},
        "node 'unpool1' (MaxUnpool-11): index 0 in I is outside the output of shape [1, 1, 0] "
        "set by the attributes (it is empty: no index is valid)",
        {"X": np.ones((1, 1, 2), F32), "I": np.zeros((1, 1, 2), np.int64)},
    ),
    RunCase(
        "input without a spatial axis",
        lambda: _maxpool({"kernel_shape": [2]}),
        {"X": np.ones((1, 4), F32)},
        "node 'pool1' (MaxPool-12): input X has shape [1, 4]; pooling needs (N, C, D1, ...) "
        "with at least one spatial axis",
        {"X": np.ones((1, 1, 5), F32)},
    ),
    RunCase(
        "input rank differs from the kernel's",
        lambda: _maxpool({"kernel_shape": [2]}),
        {"X": np.ones((1, 1, 3, 3), F32)},
        "node 'pool1' (MaxPool-12): kernel_shape='2' has 1 axes but the input has 2 spatial axes",
        {"X": np.ones((1, 1, 5), F32)},
    ),
]


def _raw_model(op_type: str, attributes: dict, n_inputs=1, n_outputs=1, x_dtype=F32):
    node = support.raw_ortpool_node(op_type, attributes, n_inputs, n_outputs, name="bad")
    return support.one_node_model(node, [x_dtype, np.int64, np.int64][:n_inputs],
                                  [x_dtype, np.int64][:n_outputs])


def _good(op, version, attrs):
    opv = versions.get(op, version)
    return full_attributes(opv, normalize(opv, attrs))


def _with(base: dict, **changes) -> dict:
    out = dict(base)
    for k, v in changes.items():
        if v is None:
            out.pop(k)
        else:
            out[k] = v
    return out


M12 = _good("MaxPool", 12, {"kernel_shape": [3, 3]})

#: Hand-written nodes that must fail when the session is created: (name, model, message).
CREATE_CASES = [
    ("malformed list string", lambda: _raw_model("MaxPool_12", _with(M12, pads="1,x")),
     "node 'bad' (MaxPool-12): pads='1,x' is not a comma-separated list of integers"),
    ("pads beyond int64", lambda: _raw_model("MaxPool_12", _with(M12, pads="9" * 20 + ",0,0,0")),
     "node 'bad' (MaxPool-12): pads='99999999999999999999,0,0,0' holds a value beyond int64 "
     "(ONNX attributes are int64: -9223372036854775808 to 9223372036854775807)"),
    ("negative pads", lambda: _raw_model("MaxPool_12", _with(M12, pads="-1,0,0,0")),
     "node 'bad' (MaxPool-12): pads='-1,0,0,0' must all be >= 0"),
    ("negative strides", lambda: _raw_model("MaxPool_12", _with(M12, strides="-2,1")),
     "node 'bad' (MaxPool-12): strides='-2,1' must all be >= 1"),
    ("zero kernel", lambda: _raw_model("MaxPool_12", _with(M12, kernel_shape="0,3")),
     "node 'bad' (MaxPool-12): kernel_shape='0,3' must all be >= 1"),
    ("wrong list length", lambda: _raw_model("MaxPool_12", _with(M12, dilations="1,1,1")),
     "node 'bad' (MaxPool-12): dilations='1,1,1' has 3 values; a kernel of rank 2 needs 2"),
    ("bad auto_pad", lambda: _raw_model("MaxPool_12", _with(M12, auto_pad="SAME")),
     "node 'bad' (MaxPool-12): auto_pad='SAME' must be one of NOTSET, SAME_UPPER, SAME_LOWER, "
     "VALID"),
    ("negative flag", lambda: _raw_model("MaxPool_12", _with(M12, ceil_mode=-1)),
     "node 'bad' (MaxPool-12): ceil_mode=-1 must be 0 or 1"),
    ("pads with auto_pad", lambda: _raw_model(
        "MaxPool_12", _with(M12, auto_pad="SAME_UPPER", pads="1,1,1,1")),
     "node 'bad' (MaxPool-12): pads='1,1,1,1' cannot be used with auto_pad='SAME_UPPER'"),
    ("unknown op type", lambda: _raw_model("MaxPool_13", M12),
     "node 'bad': 'MaxPool_13' is not an ortpool op type; expected "
     "<Op>_<version>[_Indices|_OutputShape] with a spec version of MaxPool, AveragePool, "
     "MaxUnpool, LpPool, GlobalMaxPool, GlobalAveragePool, GlobalLpPool, MaxRoiPool "
     "(e.g. MaxPool_12)"),
    ("missing attribute", lambda: _raw_model("MaxPool_12", _with(M12, dilations=None)),
     "node 'bad' (MaxPool-12): attribute 'dilations' is missing; an ortpool node carries every "
     "attribute of its version (auto_pad, ceil_mode, dilations, kernel_shape, pads, "
     "storage_order, strides)"),
    ("attribute of the wrong kind", lambda: _raw_model("MaxPool_12", _with(M12, ceil_mode="0")),
     "node 'bad' (MaxPool-12): attribute 'ceil_mode' must be an int in the ortpool encoding, "
     "got STRING"),
    ("attribute the version lacks", lambda: _raw_model(
        "MaxPool_8", _with(_good("MaxPool", 8, {"kernel_shape": [3]}), dilations="1")),
     "node 'bad' (MaxPool-8): attribute 'dilations' does not exist in this version (it has "
     "auto_pad, kernel_shape, pads, storage_order, strides)"),
    ("wrong arity", lambda: _raw_model("MaxPool_12", M12, n_outputs=2),
     "node 'bad' (MaxPool-12): MaxPool_12 takes 1 inputs and 1 outputs, the node has 1 and 2"),
]


# ------------------------------------------------------------ in process


@pytest.mark.parametrize("case", RUN_CASES, ids=lambda c: c.name)
def test_bad_input_at_run(case):
    check_run_case(case)


def check_run_case(case: RunCase) -> None:
    """The run fails with the case's whole message, names the op type, and the session then
    runs a good feed (the failure does not leak into the next run)."""
    model = case.model()
    session = ortpool.InferenceSession(model)
    with pytest.raises(OrtpoolError) as info:
        session.run(None, case.feed)
    text = str(info.value)
    assert text.split(" [op type ")[0] == case.message
    assert info.value.node is not None and info.value.version is not None
    op_type = model.graph.node[0].op_type
    assert f"[op type {op_type}, input shapes " in text
    # The session is still usable, and the failure does not leak into the next run.
    outputs = session.run(None, case.good)
    assert outputs[0].size > 0


def check_create_case(model: Callable[[], onnx.ModelProto], message: str) -> None:
    """Creating a session of ``model()`` fails with exactly ``message``."""
    with pytest.raises(OrtpoolError) as info:
        ortpool.InferenceSession(model())
    assert str(info.value) == message


@pytest.mark.parametrize(("name", "model", "message"), CREATE_CASES,
                         ids=[c[0] for c in CREATE_CASES])
def test_bad_node_at_session_creation(name, model, message):
    check_create_case(model, message)


def test_bad_node_in_a_subgraph_is_found():
    inner = support.raw_ortpool_node("MaxPool_12", _with(M12, pads="1,x"), name="inner")
    then = onnx.helper.make_graph([inner], "then", [],
                                  [onnx.helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT,
                                                                      None)])
    node = onnx.helper.make_node("If", ["cond"], ["Y"], then_branch=then, else_branch=then)
    graph = onnx.helper.make_graph(
        [node], "g",
        [onnx.helper.make_tensor_value_info("cond", onnx.TensorProto.BOOL, []),
         onnx.helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, None)],
        [onnx.helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 22),
                                                         onnx.helper.make_opsetid("ortpool", 1)])
    model.ir_version = support.IR_VERSION
    with pytest.raises(OrtpoolError, match=r"node 'inner' \(MaxPool-12\): pads='1,x'"):
        ortpool.InferenceSession(model)


def test_float16_reaching_an_ortpool_op_fails_at_creation():
    """float16 cannot enter a Python op (it would abort the process); no kernel is registered
    for it, so onnxruntime refuses the graph at session creation, and ortpool restates that
    refusal naming the node, the version and the way out."""
    model = support.ortpool_model("MaxPool", 12, {"kernel_shape": [2]}, np.float16)
    assert "float16" not in optypes.parse("MaxPool_12").dtypes
    with pytest.raises(OrtpoolError) as info:
        ortpool.InferenceSession(model)
    assert str(info.value) == (
        "node 'pool' (MaxPool-12): MaxPool_12 cannot take tensor(float16) for 'X': it carries "
        "only float, double, int8, uint8; a Python op cannot take float16 or bfloat16, so wrap "
        "it in Cast to float32 and back (ortpool rewrite does this)"
    )
    assert "tensor(float16)" in str(info.value.__cause__)


def test_numpy_api_errors_name_the_version_and_value():
    with pytest.raises(OrtpoolError) as info:
        from ortpool import kernels

        kernels.max_unpool(X22, np.array([0, 1, 2, 16]).reshape(1, 1, 2, 2), version=9,
                           kernel_shape=[2, 2], strides=[2, 2])
    assert str(info.value) == (
        "(MaxUnpool-9): index 16 in I is outside the output of shape [1, 1, 4, 4] set by the "
        "attributes (valid: 0 to 15)"
    )


# ------------------------------------------------------------ in a subprocess


def raise_each(run_cases, create_cases) -> int:
    """Run every case in this process and print each error ("RAISED: ...") or "NO ERROR: name";
    the number of cases that did not raise."""
    failures = 0
    for case in run_cases:
        session = ortpool.InferenceSession(case.model())
        try:
            session.run(None, case.feed)
            print(f"NO ERROR: {case.name}")
            failures += 1
        except OrtpoolError as err:
            print(f"RAISED: {err}")
    for name, model, _ in create_cases:
        try:
            ortpool.InferenceSession(model())
            print(f"NO ERROR: {name}")
            failures += 1
        except OrtpoolError as err:
            print(f"RAISED: {err}")
    return failures


def run_child(path: str) -> tuple[list[str], list[str]]:
    """Run the test module ``path`` as a script (its ``main``): its output lines and the error
    messages it printed, without the "[op type ..." suffix. The child must exit 0."""
    env = dict(os.environ, PYTHONPATH=str(support.ROOT))
    done = subprocess.run(
        [sys.executable, os.path.abspath(path)], capture_output=True, text=True, timeout=180,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    raised = [line.removeprefix("RAISED: ").split(" [op type ")[0] for line in lines
              if line.startswith("RAISED: ")]
    return lines, raised


def main() -> int:
    """Run every bad case in this process, print each error, return 0 if all raised as expected."""
    failures = raise_each(RUN_CASES, CREATE_CASES)
    try:
        ortpool.InferenceSession(support.ortpool_model("MaxPool", 12, {"kernel_shape": [2]},
                                                       np.float16))
        print("NO ERROR: float16")
        failures += 1
    except OrtpoolError as err:  # onnxruntime's InvalidGraph, restated
        print(f"RAISED: {str(err).splitlines()[0]}")
    print("SURVIVED")
    return 1 if failures else 0


def test_the_process_lives():
    lines, raised = run_child(__file__)
    assert raised[: len(RUN_CASES)] == [c.message for c in RUN_CASES]
    assert raised[len(RUN_CASES): len(RUN_CASES) + len(CREATE_CASES)] == [
        c[2] for c in CREATE_CASES
    ]
    assert "tensor(float16)" in raised[-1]
    assert lines[-1] == "SURVIVED"


if __name__ == "__main__":
    sys.exit(main())
