"""Running models in onnxruntime's built-in kernels, failures sorted into kinds: "no kernel for
this op/version/type" is an answer, told apart from a node onnxruntime rejects and a failed run."""

from __future__ import annotations

import atexit
import dataclasses
import functools
import shutil
import threading
from collections.abc import Mapping
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
import onnx

from ortpool.ort import runtime_spec
from ortpool.ort.opening import open_session
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.runtimes.base import jobs, spawn, stop

NO_KERNEL = "no-kernel"
REJECTED = "rejected"
RUN_FAILED = "run-failed"


@dataclasses.dataclass(frozen=True)
class OrtFailure(Exception):
    """onnxruntime could not create or run a session; ``kind`` says which way."""

    kind: str  # NO_KERNEL, REJECTED or RUN_FAILED
    message: str

    def __str__(self) -> str:
        return self.message


def _strip_source_location(text: str) -> str:
    """Drop onnxruntime's ``/onnxruntime_src/...:88 Class::Method(...) [with ...]`` prefix."""
    start = text.find("/onnxruntime_src/")
    if start < 0:
        return text
    with_at = text.find("[with ", start)
    if with_at < 0:
        return text
    depth = 0
    for i in range(with_at, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return text[:start] + text[i + 1 :].lstrip()
    return text


def classify(err: Exception, stage: str) -> OrtFailure:
    """Sort an onnxruntime exception: :data:`NO_KERNEL`, :data:`REJECTED`, :data:`RUN_FAILED`."""
    text = str(err).replace("\n", " ")
    short = _strip_source_location(text)
    for marker in ("NOT_IMPLEMENTED : ", "INVALID_GRAPH : ", "FAIL : ", "INVALID_ARGUMENT : "):
        if marker in short:
            short = short.split(marker, 1)[1]
    short = short.strip()
    if "NOT_IMPLEMENTED" in text or "Could not find an implementation" in text:
        return OrtFailure(NO_KERNEL, short)
    if "InsertedPrecisionFreeCast" in text:
        # No float16 kernel, and the Cast onnxruntime inserts to fall back to float is invalid at
        # this opset: in effect, no kernel for the type.
        return OrtFailure(NO_KERNEL,
                          "no kernel for this element type (the fallback Cast "
                          "onnxruntime inserts is invalid at this opset)")
    return OrtFailure(REJECTED if stage == "load" else RUN_FAILED, short)


@functools.cache
def known_version(op: str) -> int:
    """The newest spec version of ai.onnx ``op`` onnxruntime's own schemas know (0: none): a
    newer one it reads as that one, refusing what the newer adds, with no kernel of its own."""
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

    return max((s.since_version for s in ort_c.get_all_operator_schema()
                if s.name == op and s.domain == ""), default=0)


def builtin_session(model: onnx.ModelProto | bytes, runtime: RuntimeSpec,
                    threads: int | None = None, profile_dir: str | None = None) -> Any:
    """A plain onnxruntime session (built-in kernels) on ``runtime``; failures raised as
    :class:`OrtFailure`."""
    data = model if isinstance(model, bytes) else model.SerializeToString()
    try:
        return open_session(runtime, data, threads=threads, profile_dir=profile_dir,
                            ortpool_ops=False)
    except Exception as err:
        raise classify(err, "load") from None


def run_session(session: Any, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    try:
        return [np.asarray(a) for a in session.run(None, dict(feeds))]
    except Exception as err:
        raise classify(err, "run") from None


def run_builtin(model: onnx.ModelProto | bytes, feeds: Mapping[str, np.ndarray],
                runtime: RuntimeSpec, threads: int | None = None) -> list[np.ndarray]:
    """Create a built-in session and run it once (in a worker off the CPU provider:
    :func:`run_placed`)."""
    if runtime.provider_names != [runtime_spec.CPU]:
        return run_placed(model, feeds, runtime, threads)[0]
    return run_session(builtin_session(model, runtime, threads), feeds)


def run_placed(model: onnx.ModelProto | bytes, feeds: Mapping[str, np.ndarray],
               runtime: RuntimeSpec,
               threads: int | None = None) -> tuple[list[np.ndarray], dict[str, str]]:
    """:func:`run_builtin`, and which provider executed each node (node name -> provider; none
    on the CPU provider alone, where nothing can fall back). Off it, the run is profiled
    (:func:`ortpool.ort.runtime_spec.placement`) in a worker process: a provider may end its
    process (OpenVINO's aborts on MaxPool 2x2/2 of 9x9 then MaxUnpool), one result, not the end
    of the validation."""
    if runtime.provider_names == [runtime_spec.CPU]:
        return run_builtin(model, feeds, runtime, threads), {}
    data = model if isinstance(model, bytes) else model.SerializeToString()
    # the worker has no process-wide pool of its own (bench shares one in this process)
    alone = dataclasses.replace(runtime, shared_pool=False)
    return _worker().run(data, dict(feeds), alone, threads)


def _placed_here(data: bytes, feeds: Mapping[str, np.ndarray], runtime: RuntimeSpec,
                 threads: int | None) -> tuple[list[np.ndarray], dict[str, str]]:
    folder = runtime_spec.profile_dir()
    try:
        session = builtin_session(data, runtime, threads, profile_dir=folder)
        outputs = run_session(session, feeds)
        return outputs, runtime_spec.placement(session, onnx.load_from_string(data))
    finally:  # read or not (a refused model, a failing run), the profile goes now
        shutil.rmtree(folder, ignore_errors=True)


def _serve(conn: Connection) -> None:
    """Worker loop: (model, feeds, runtime, threads) in; ("ok", outputs, placement) or
    ("failed", kind, message) out."""
    for job in jobs(conn):
        try:
            conn.send(("ok", *_placed_here(*job)))
        except OrtFailure as err:
            conn.send(("failed", err.kind, err.message))
        except Exception as err:
            conn.send(("failed", RUN_FAILED, f"{type(err).__name__}: {err}"))


class _Worker:
    """A process that runs built-in sessions off the CPU provider, started on first use and again
    after a provider ended it."""

    def __init__(self) -> None:
        self._process: Any = None
        self._conn: Connection | None = None
        self._lock = threading.Lock()

    def run(self, data: bytes, feeds: dict[str, np.ndarray], runtime: RuntimeSpec,
            threads: int | None) -> tuple[list[np.ndarray], dict[str, str]]:
        with self._lock:
            if self._process is None or not self._process.is_alive():
                self._process, self._conn = spawn(_serve)
            try:
                self._conn.send((data, feeds, runtime, threads))  # type: ignore[union-attr]
                reply = self._conn.recv()  # type: ignore[union-attr]
            except (EOFError, OSError):
                self._process.join(timeout=5)
                code = self._process.exitcode
                self._process = self._conn = None
                how = f"signal {-code}" if code is not None and code < 0 else f"exit {code}"
                raise OrtFailure(RUN_FAILED,
                                 f"onnxruntime ended its process ({how}) running on "
                                 f"{', '.join(runtime.provider_names)}") from None
        if reply[0] == "ok":
            return reply[1], reply[2]
        raise OrtFailure(reply[1], reply[2])

    def close(self) -> None:
        if self._process is not None and self._conn is not None:
            stop(self._process, self._conn)
        self._process = self._conn = None


@functools.cache
def _worker() -> _Worker:
    worker = _Worker()
    atexit.register(worker.close)
    return worker
