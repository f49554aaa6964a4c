"""The record of failures trapped in ops: bounded, without tracebacks, raised by the run that
caused them and logged only when nothing raises them; the placeholder a failed op returns."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import numpy as np
import onnxruntime as ort
import pytest

import ortpool
from ortpool.errors import OrtpoolError
from ortpool.ort import failures, hook
from tests import support


def _unpool_model():
    return support.ortpool_model("MaxUnpool", 11, {"kernel_shape": [2]}, np.float32, n_inputs=2,
                                 node_name="unpool")


BAD = {"X": np.ones((1, 2, 3), np.float32), "I": np.full((1, 2, 3), 50)}
MESSAGE = ("(MaxUnpool-11): index 50 in I is outside the output of shape [1, 2, 4] set by the "
           "attributes (valid: 0 to 7)")


@pytest.fixture(autouse=True)
def _empty_record():
    failures.clear()
    yield
    failures.clear()


def test_plain_session_failure_is_logged_kept_and_poisons_its_output(caplog):
    session = ort.InferenceSession(_unpool_model().SerializeToString(), ortpool.session_options(),
                                   providers=["CPUExecutionProvider"])
    with caplog.at_level(logging.ERROR, logger="ortpool"):
        (y,) = session.run(None, BAD)
    assert [r.getMessage() for r in caplog.records] == [f"MaxUnpool_11 failed: {MESSAGE}"]
    # The node's real output shape, NaN throughout: it fits an output allocated ahead and
    # shows in whatever reads it.
    assert y.shape == (1, 2, 4) and np.isnan(y).all()
    (kept,) = failures.recent()
    assert (kept.op_type, str(kept.error), kept.input_shapes) == (
        "MaxUnpool_11", MESSAGE, [(1, 2, 3), (1, 2, 3)])
    assert kept.error.__traceback__ is None


def test_a_raised_failure_is_not_logged_too(caplog):
    session = ortpool.InferenceSession(_unpool_model())
    with caplog.at_level(logging.DEBUG, logger="ortpool"), pytest.raises(OrtpoolError) as info:
        session.run(None, BAD)
    assert str(info.value) == (
        f"node 'unpool' {MESSAGE} [op type MaxUnpool_11, input shapes [1, 2, 3], [1, 2, 3]]")
    assert caplog.records == []
    assert failures.recent() == []  # claimed by the run


def test_the_record_keeps_the_last_failures_only():
    for i in range(failures.MAX_KEPT + 30):
        failures.record("Op", {}, [], ValueError(f"failure {i}"))
    kept = failures.recent()
    assert len(kept) == failures.MAX_KEPT
    assert [str(f.error) for f in kept[:2]] == ["failure 30", "failure 31"]
    assert str(kept[-1].error) == f"failure {failures.MAX_KEPT + 29}"


def test_a_run_claims_only_its_own_thread_and_its_own_nodes():
    failures.record("Before", {}, [], ValueError("before the run"))
    with failures.run_scope(lambda f: f.op_type == "Mine") as scope:
        failures.record("Other", {}, [], ValueError("on this thread"))
        claimed = scope.claim()
    assert [str(f.error) for f in claimed] == ["on this thread"]
    assert [str(f.error) for f in failures.recent()] == ["before the run"]


@pytest.mark.parametrize(
    ("dtype", "fill"), [(np.float32, "nan"), (np.float64, "nan"), (np.int64, -1),
                        (np.int8, -1), (np.uint8, 255)])
def test_poisoned_placeholder_has_the_shape_and_a_marked_value(dtype, fill):
    p = hook.poisoned((1, 2, 3), np.dtype(dtype), 3)
    assert p.shape == (1, 2, 3) and p.dtype == dtype and p.flags.c_contiguous
    if fill == "nan":
        assert np.isnan(p).all()
    else:
        assert (p == fill).all()


def test_poisoned_placeholder_is_empty_when_the_shape_is_unknown_or_huge():
    assert hook.poisoned(None, np.dtype(np.float32), 4).shape == (0, 0, 0, 0)
    huge = (1, 1, 2**20, 2**20)
    assert hook.poisoned(huge, np.dtype(np.float32), 4).shape == (0, 0, 0, 0)


def test_rss_stays_flat_over_failing_runs_of_a_plain_session():
    """2,000 failing runs with 32 KB inputs: kept with their tracebacks, the failures grew RSS
    by about 99 MiB per 1,000 runs."""
    script = textwrap.dedent(f"""
        import logging, sys
        sys.path.insert(0, {str(support.ROOT)!r})
        import numpy as np, onnxruntime as ort, ortpool
        from tests import support
        logging.getLogger("ortpool").setLevel(logging.CRITICAL)
        model = support.ortpool_model("MaxUnpool", 11, {{"kernel_shape": [2, 2]}}, np.float32,
                                      n_inputs=2)
        s = ort.InferenceSession(model.SerializeToString(), ortpool.session_options(),
                                 providers=["CPUExecutionProvider"])
        feeds = {{"X": np.ones((1, 8, 32, 32), np.float32),
                  "I": np.full((1, 8, 32, 32), 10**9)}}
        rss = lambda: int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
        for _ in range(200):
            s.run(None, feeds)
        before = rss()
        for _ in range(2000):
            s.run(None, feeds)
        print(rss() - before)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) < 8.0  # MiB over 2,000 runs


def run_with_a_none_feed() -> None:
    """In the child: an ortpool op fed None through ``ortpool.InferenceSession``; prints what
    the run raised (the process ended before, in onnxruntime-extensions)."""
    session = ortpool.InferenceSession(_unpool_model())
    try:
        session.run(None, {"X": None, "I": BAD["I"]})
    except TypeError as err:
        print(f"TypeError: {err}")
    print(session.run(None, BAD | {"I": np.zeros((1, 2, 3), np.int64)})[0].shape)


def test_a_none_fed_to_a_tensor_input_is_refused_not_a_dead_process():
    """``run(None, {"X": None})`` reached the op as an unconstructed value: onnxruntime-extensions
    threw std::runtime_error and terminate() ended the process; the session still runs after."""
    done = support.run_child(__name__, "run_with_a_none_feed", timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "TypeError: input_feed['X'] is None; input 'X' is a tensor: feed it an array",
        "(1, 2, 4)"]


def test_a_session_opens_a_model_whose_input_name_is_not_utf8():
    """The None check read the tensor inputs from onnxruntime's get_inputs(), which raises
    UnicodeDecodeError on such a name: the session was refused where onnxruntime opens it."""
    raw = _unpool_model().SerializeToString()
    assert raw.count(b'\n\x01X') >= 1
    model = raw.replace(b"\x01X", b"\x01\xff")  # the one-byte name X (inputs, node, value)
    ort.InferenceSession(model, ortpool.session_options(), providers=["CPUExecutionProvider"])
    session = ortpool.InferenceSession(model)  # refused with a UnicodeDecodeError before
    assert session.get_outputs()[0].name == "Y"
