"""The worker process against a runtime that misbehaves on purpose: it hangs, aborts, is killed,
raises. Each misdeed is one result, and the next case runs in a fresh child.

The stub runtime is defined at module level: the worker pickles it to its spawned child, which
imports this module to read it back.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from ortpool.errors import OrtpoolError
from ortpool.runtimes import (
    CRASHED,
    NO_KERNEL,
    RUN_FAILED,
    TIMED_OUT,
    Runtime,
    RuntimeFailure,
    Worker,
)
from tests.support import run_child


class Stub(Runtime):
    """Does what the model bytes say: b"echo" gives its feeds back, b"sleep" sleeps for a minute,
    b"abort" prints a Rust-like panic and aborts, b"exit" exits with 3, b"no-kernel" raises that
    failure, b"value" a ValueError, b"ortpool" an OrtpoolError, b"key" a KeyError, b"pid" gives
    its process id."""

    name = "stub"
    OPTIONS = ("fail_prepare",)

    def __init__(self, fail_prepare: bool = False) -> None:
        super().__init__()
        self.fail_prepare = fail_prepare

    @classmethod
    def available(cls) -> str | None:
        return None

    def prepare(self) -> None:
        if self.fail_prepare:
            raise ValueError("stub is not installed here: pip install stub")

    def describe(self) -> dict[str, Any]:
        return {"runtime": self.name, "release": "0", "device": "none", "precision": "none"}

    def title(self) -> str:
        return "stub"

    def run(self, model: bytes, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        if model == b"sleep":
            time.sleep(60)
        if model == b"abort":
            sys.stderr.write("thread 'main' panicked at src/stub.rs:7:9:\nstub gave up\n")
            sys.stderr.flush()
            os.abort()
        if model == b"exit":
            os._exit(3)
        if model == b"no-kernel":
            raise self.failure(NO_KERNEL, "no implementation of\nStub")
        if model == b"value":
            raise ValueError("stub: input 'X' has no feed")
        if model == b"ortpool":
            raise OrtpoolError("pads='1,x': not integers", node="pool", op="MaxPool", version=12)
        if model == b"key":
            raise KeyError("X")
        if model == b"pid":
            return [np.array(os.getpid())]
        return [np.asarray(v) for v in feeds.values()]


X = {"X": np.arange(6, dtype=np.float32).reshape(2, 3)}


def _echo_works(worker: Worker) -> None:
    (y,) = worker.run(b"echo", X)
    np.testing.assert_array_equal(y, X["X"])


def test_a_hang_times_out_and_the_next_case_runs_in_a_fresh_child() -> None:
    """What the runtime raises comes back as such, the child alive; a hang is a time-out that
    kills it."""
    with Worker(Stub(), timeout=30.0) as worker:
        _echo_works(worker)
        first = worker.run(b"pid", {})[0]
        with pytest.raises(RuntimeFailure) as caught:
            worker.run(b"no-kernel", X)
        assert (caught.value.kind, caught.value.message) == (NO_KERNEL, "no implementation of Stub")
        with pytest.raises(ValueError, match=r"^stub: input 'X' has no feed$"):
            worker.run(b"value", X)
        with pytest.raises(ValueError, match=r"^node 'pool' \(MaxPool-12\): pads='1,x': not"):
            worker.run(b"ortpool", X)  # a subclass comes back as its ValueError
        with pytest.raises(RuntimeFailure, match=r"^stub: run-failed: KeyError: 'X'$") as caught:
            worker.run(b"key", X)
        assert caught.value.kind == RUN_FAILED
        assert worker.run(b"pid", {})[0] == first and worker.started == 1

        worker.timeout = 1.0  # the quick cases above keep a margin on a loaded machine
        start = time.perf_counter()
        with pytest.raises(RuntimeFailure) as caught:
            worker.run(b"sleep", X)
        assert time.perf_counter() - start < 10
        assert caught.value.kind == TIMED_OUT and caught.value.runtime == "stub"
        assert caught.value.message == "the worker took longer than 1 s to answer; it was stopped"
        worker.timeout = 30.0
        _echo_works(worker)
        assert worker.run(b"pid", {})[0] != first
        assert worker.started == 2
    assert worker._process is None  # closed: the child was told to stop


def test_an_abort_and_an_exit_are_crashes_and_the_worker_goes_on() -> None:
    with Worker(Stub(), timeout=30.0) as worker:
        with pytest.raises(RuntimeFailure) as caught:
            worker.run(b"abort", X)
        assert caught.value.kind == CRASHED
        assert str(caught.value) == (
            "stub: crashed: the worker was killed by SIGABRT on this case: "
            "panicked at src/stub.rs:7:9: stub gave up"
        )
        with pytest.raises(RuntimeFailure, match=r"^stub: crashed: the worker exited with code 3 "):
            worker.run(b"exit", X)  # and not the first child's last words
        assert str(caught.value).count("panicked") == 1
        _echo_works(worker)
        assert worker.started == 3


def test_a_runtime_that_cannot_start_says_why() -> None:
    with Worker(Stub(fail_prepare=True), timeout=5.0) as worker:
        with pytest.raises(ValueError, match=r"^stub is not installed here: pip install stub$"):
            worker.run(b"echo", X)
        assert worker.started == 1 and worker._process is None


def _abandoned_worker(folder: str) -> None:
    """In a child: a worker started and used, then this process ends without closing it (as a
    validate worker child does: multiprocessing's children run no atexit)."""
    import tempfile

    tempfile.tempdir = folder
    worker = Worker(Stub(), timeout=30.0)
    _echo_works(worker)
    os._exit(0)


def test_a_workers_log_has_no_name_once_its_child_runs(tmp_path, monkeypatch) -> None:
    """The child's standard error is read through the parent's descriptor, its name taken away
    once the child holds it: a parent that ends without closing the worker (a closed pipe, a
    kill) leaves no file, and last words still come back."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    with Worker(Stub(), timeout=30.0) as worker:
        _echo_works(worker)
        assert list(tmp_path.iterdir()) == []
        with pytest.raises(RuntimeFailure, match=r"SIGABRT on this case: panicked at src/stub"):
            worker.run(b"abort", X)
        assert list(tmp_path.iterdir()) == []
    abandoned = tmp_path / "abandoned"
    abandoned.mkdir()
    done = run_child(__name__, "_abandoned_worker", str(abandoned), timeout=60)
    assert done.returncode == 0, done.stderr
    assert list(abandoned.iterdir()) == []


def _killed_mid_case() -> None:
    """In a child: a worker's child set on a long case, then this process killed (as a validate
    worker is at its --timeout); prints the worker child's process id first."""
    import signal
    import threading

    worker = Worker(Stub(), timeout=None)
    pid = int(worker.run(b"pid", {})[0])
    threading.Thread(target=worker.run, args=(b"sleep", X), daemon=True).start()
    time.sleep(0.5)  # the case sent
    print(pid, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_a_workers_child_ends_with_its_parent_even_mid_case() -> None:
    """A parent killed while its worker's child runs a case (a validate worker killed at its
    --timeout, a command killed) leaves no process behind computing on for nobody."""
    done = run_child(__name__, "_killed_mid_case", timeout=60)
    assert done.returncode != 0 and done.stdout.strip(), done.stderr
    pid = int(done.stdout.split()[-1])
    deadline = time.monotonic() + 20
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(pid), f"the worker's child {pid} outlived its parent"


def _interrupted_as_it_starts() -> None:
    """In a child: a worker whose child gets SIGINT as soon as it is started (Ctrl-C reaches the
    whole process group, and the child takes a second to import its runtime); prints how many
    children the worker started."""
    import signal
    from multiprocessing.process import BaseProcess

    start = BaseProcess.start

    def start_then_interrupt(process: BaseProcess) -> None:
        start(process)
        os.kill(process.pid, signal.SIGINT)

    BaseProcess.start = start_then_interrupt  # type: ignore[method-assign]
    with Worker(Stub(), timeout=30.0) as worker:
        _echo_works(worker)
        print(worker.started, flush=True)


def test_ctrl_c_as_a_workers_child_starts_is_no_traceback() -> None:
    """``ortpool conformance --runtime tract`` interrupted in its first second printed the
    worker child's KeyboardInterrupt traceback (or "Fatal Python error: init_import_site"): the
    child, still importing, had not yet set SIGINT aside. It starts with SIGINT ignored."""
    done = run_child(__name__, "_interrupted_as_it_starts", timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "1\n", "")
