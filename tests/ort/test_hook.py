"""The registration and the result hook: idempotent registration, other packages' Python ops
(string and float) still working through our hook, C-contiguous results of the declared dtype,
and an exception in a foreign op that does not end the process.

Re-importing ortpool from scratch would give the other test modules a second OrtpoolError class,
so that part runs in a subprocess (``python tests/ort/test_hook.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnxruntime_extensions import PyCustomOpDef, _ocos, onnx_op

import ortpool
from ortpool import optypes
from ortpool.errors import OrtpoolError
from ortpool.ort import failures, hook, register
from tests import support

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

OTHER = "other.pkg"  # another package's custom domain


# Another package's Python ops, registered once for this process (registration is permanent).
@onnx_op(op_type=f"{OTHER}::ShoutT", inputs=[PyCustomOpDef.dt_string],
         outputs=[PyCustomOpDef.dt_string], attrs={"suffix": PyCustomOpDef.dt_string})
def shout(x, suffix):
    return np.array([s.upper() + suffix for s in x.reshape(-1)], dtype=object).reshape(x.shape)


@onnx_op(op_type=f"{OTHER}::ScaleT", inputs=[PyCustomOpDef.dt_float],
         outputs=[PyCustomOpDef.dt_float], attrs={"factor": PyCustomOpDef.dt_float})
def scale(x, factor):
    return x.astype(np.float64) * factor  # float64 for a float output: converted on the way out


@onnx_op(op_type=f"{OTHER}::BoomT", inputs=[PyCustomOpDef.dt_float],
         outputs=[PyCustomOpDef.dt_float])
def boom(x):
    raise RuntimeError(f"boom on shape {list(x.shape)}")


def _model(nodes, inputs, outputs) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 22), helper.make_opsetid(optypes.DOMAIN, 1),
        helper.make_opsetid(OTHER, 1)])
    model.ir_version = support.IR_VERSION
    return model


def _float(name):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, None)


def mixed_model() -> onnx.ModelProto:
    """X -> ortpool MaxPool_12 -> other.pkg ScaleT -> Y; S -> other.pkg ShoutT -> T."""
    pool = helper.make_node("MaxPool_12", ["X"], ["P"], domain=optypes.DOMAIN, name="pool",
                            auto_pad="NOTSET", ceil_mode=0, dilations="", kernel_shape="2,2",
                            pads="", storage_order=0, strides="2,2")
    sc = helper.make_node("ScaleT", ["P"], ["Y"], domain=OTHER, factor=0.5)
    sh = helper.make_node("ShoutT", ["S"], ["T"], domain=OTHER, suffix="!")
    return _model(
        [pool, sc, sh],
        [_float("X"), helper.make_tensor_value_info("S", TensorProto.STRING, None)],
        [_float("Y"), helper.make_tensor_value_info("T", TensorProto.STRING, None)],
    )


def boom_model() -> onnx.ModelProto:
    node = helper.make_node("BoomT", ["X"], ["Y"], domain=OTHER, name="foreign")
    return _model([node], [_float("X")], [_float("Y")])


X = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
S = np.array([["ab", "Cd"], ["", "xyz"]], dtype=object)


def check_mixed(session) -> None:
    y, t = session.run(None, {"X": X, "S": S})
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, np.array([[[[2.5, 3.5], [6.5, 7.5]]]], np.float32))
    assert t.tolist() == [["AB!", "CD!"], ["!", "XYZ!"]]


# ------------------------------------------------------------ registration


def test_register_is_idempotent():
    first = ortpool.register()
    second = ortpool.register()
    expected = sum(len(t.dtypes) for t in optypes.all_op_types())
    assert first == second == expected
    assert len(_ocos._ortpool_registered) == expected
    # Every registered kernel is dispatched by our hook.
    assert set(_ocos._ortpool_registered.values()) <= set(hook.OURS)
    check_mixed(ortpool.InferenceSession(mixed_model()))


def test_register_after_module_reload():
    import importlib

    importlib.reload(register)
    assert register.register() == ortpool.register()
    check_mixed(ortpool.InferenceSession(mixed_model()))


def test_plain_onnxruntime_session_with_session_options():
    session = ort.InferenceSession(mixed_model().SerializeToString(),
                                   sess_options=ortpool.session_options(),
                                   providers=["CPUExecutionProvider"])
    check_mixed(session)


def test_session_options_passed_back_to_ortpool_session():
    """Options from ``ortpool.session_options()`` handed to ``ortpool.InferenceSession`` (which
    prepares its options too): the library is loaded once, not twice (twice made onnxruntime
    refuse the session: "Conflicting with a registered kernel")."""
    options = ortpool.session_options()
    options.intra_op_num_threads = 1
    assert ortpool.session_options(options) is options
    check_mixed(ortpool.InferenceSession(mixed_model(), options))
    check_mixed(ortpool.InferenceSession(mixed_model(), options))
    assert options.get_session_config_entry("ortpool.custom_ops_library") == "1"


def test_session_options_holding_the_extensions_library_already_are_named():
    """Options on which the caller loaded onnxruntime-extensions' library (its documented
    idiom): onnxruntime's "Failed to add kernel for ArgSort ... Conflicting with a registered
    kernel" named nothing the caller did; the error now names the options and the call."""
    from onnxruntime_extensions import get_library_path

    options = ort.SessionOptions()
    options.register_custom_ops_library(get_library_path())
    with pytest.raises(OrtpoolError, match=r"^sess_options already holds onnxruntime-extensions"
                       r"' custom-op library \(register_custom_ops_library\(get_library_path"):
        ortpool.InferenceSession(mixed_model(), options)


def test_session_options_turn_spinning_off_unless_set():
    assert ortpool.session_options().get_session_config_entry(
        "session.intra_op.allow_spinning") == "0"
    base = ort.SessionOptions()
    base.add_session_config_entry("session.intra_op.allow_spinning", "1")
    assert ortpool.session_options(base).get_session_config_entry(
        "session.intra_op.allow_spinning") == "1"


# ------------------------------------------------------------ foreign ops


def test_foreign_ops_work_next_to_ours():
    check_mixed(ortpool.InferenceSession(mixed_model()))


def test_foreign_op_exception_is_raised_not_fatal():
    session = ortpool.InferenceSession(boom_model())
    with pytest.raises(OrtpoolError) as info:
        session.run(None, {"X": np.ones((2, 3), np.float32)})
    assert str(info.value) == (
        "(other.pkg::BoomT): RuntimeError: boom on shape [2, 3] [op type other.pkg::BoomT, "
        "input shapes [2, 3]]"
    )
    # The same process carries on: our ops and the other foreign ops still run.
    check_mixed(ortpool.InferenceSession(mixed_model()))


def test_foreign_op_exception_in_a_plain_session_is_recorded():
    """Through plain onnxruntime the failure cannot be raised; it is recorded for the thread
    (and logged), and the output is the empty placeholder, not garbage."""
    session = ort.InferenceSession(boom_model().SerializeToString(),
                                   sess_options=ortpool.session_options(),
                                   providers=["CPUExecutionProvider"])
    failures.take_thread()
    (y,) = session.run(None, {"X": np.ones((2, 3), np.float32)})
    assert y.size == 0
    (failure,) = failures.take_thread()
    assert failure.op_type == "other.pkg::BoomT"
    assert str(failure.error) == "boom on shape [2, 3]"


# ------------------------------------------------------------ the hook's results


@pytest.mark.parametrize(("op_type", "dtype"), [("MaxPool_12_Indices", "int8"),
                                                ("MaxPool_12_Indices", "double"),
                                                ("AveragePool_11", "float"),
                                                ("MaxPool_22", "uint8")])
def test_hook_returns_contiguous_arrays_of_the_declared_dtype(op_type, dtype):
    np_dtype = {"float": np.float32, "double": np.float64}.get(dtype, dtype)
    k_id = _ocos._ortpool_registered[(op_type, dtype)]
    # A transposed, strided view: the kernel's natural result would not be C-contiguous.
    x = np.arange(2 * 3 * 8 * 6, dtype=np_dtype).reshape(2, 3, 8, 6)[:, :, ::2]
    x = x.transpose(0, 1, 3, 2)
    attrs = {"auto_pad": "NOTSET", "ceil_mode": 0, "dilations": "", "kernel_shape": "1,1",
             "pads": "", "storage_order": 0, "strides": "1,1", "count_include_pad": 0}
    spec = optypes.parse(op_type).spec
    result = hook.invoke(k_id, [x], {k: v for k, v in attrs.items() if k in spec.attrs})
    assert result[0] == k_id
    arrays = result[2::2]
    assert [tuple(s) for s in result[1::2]] == [a.shape for a in arrays]
    assert arrays[0].dtype == np.dtype(np_dtype)
    assert arrays[0].flags.c_contiguous
    np.testing.assert_array_equal(arrays[0], x)  # kernel 1x1: the identity
    if op_type.endswith("Indices"):
        assert arrays[1].dtype == np.int64 and arrays[1].flags.c_contiguous
        # Flat over the (N, C, 6, 4) input itself, row-major, whatever its memory layout.
        expected = np.arange(x.size).reshape(x.shape)
        np.testing.assert_array_equal(arrays[1], expected)


def test_hook_never_raises_even_for_a_broken_body():
    k_id = _ocos._ortpool_registered[("MaxPool_12", "float")]
    failures.take_thread()
    result = hook.invoke(k_id, [np.ones((1, 1, 2, 2), np.float32)], {"kernel_shape": "x"})
    assert result[0] == k_id and result[2].dtype == np.float32 and result[2].size == 0
    (failure,) = failures.take_thread()
    assert "kernel_shape='x'" in str(failure.error)


def test_session_outputs_have_the_declared_dtypes():
    for dtype in (np.int8, np.uint8, np.float64):
        model = support.ortpool_model("MaxPool", 22, {"kernel_shape": [2]}, dtype, n_outputs=2)
        y, i = ortpool.InferenceSession(model).run(None, {"X": np.arange(6, dtype=dtype)
                                                          .reshape(1, 2, 3)})
        assert y.dtype == dtype and i.dtype == np.int64
        np.testing.assert_array_equal(y, np.array([[[1, 2], [4, 5]]], dtype))
        np.testing.assert_array_equal(i, np.array([[[1, 2], [4, 5]]]))


# ------------------------------------------------------------ in a fresh process


def main() -> int:
    """Import ortpool twice over (a purge of sys.modules in between), register each time, run
    ours and others' ops, and let a foreign op raise: the process must end normally."""
    import importlib

    import ortpool as first

    first.register()
    check_mixed(first.InferenceSession(mixed_model()))
    for name in [m for m in sys.modules if m == "ortpool" or m.startswith("ortpool.")]:
        del sys.modules[name]
    again = importlib.import_module("ortpool")
    assert again is not first
    again.register()
    again.register()
    check_mixed(again.InferenceSession(mixed_model()))
    try:
        again.InferenceSession(boom_model()).run(None, {"X": np.ones((1,), np.float32)})
    except ValueError as err:
        print(f"RAISED: {err}")
    plain = ort.InferenceSession(boom_model().SerializeToString(),
                                 sess_options=again.session_options(),
                                 providers=["CPUExecutionProvider"])
    print(f"PLAIN: {plain.run(None, {'X': np.ones((1,), np.float32)})[0].shape}")
    print("SURVIVED")
    return 0


def test_fresh_process_reimport_and_foreign_failure():
    env = dict(os.environ, PYTHONPATH=str(support.ROOT))
    done = subprocess.run([sys.executable, os.path.abspath(__file__)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "RAISED: (other.pkg::BoomT): RuntimeError: boom on shape [1] [op type other.pkg::BoomT, "
        "input shapes [1]]",
        "PLAIN: (0,)",
        "SURVIVED",
    ]


if __name__ == "__main__":
    sys.exit(main())
