"""The onnx reference evaluator in a worker process with a time limit: ``validate --reference``
asks it for a third opinion, ``bench`` times it.

``onnx.reference.ReferenceEvaluator`` loops in Python and can take minutes on a real tensor, so it
runs in a spawned process (:mod:`ortpool.model.worker`) that is killed when a job exceeds the
limit; a thread could not be stopped. It runs onnx alone, never onnxruntime.
"""

from __future__ import annotations

import contextlib
import time
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from ortpool.model.worker import received, spawn

DEFAULT_TIMEOUT = 20.0

#: A job's answer: "ok" (the outputs, the seconds of each call), "refused" (the evaluator does
#: not take the model: e.g. no implementation of the operator), "error" (a call raised); and
#: what the parent sees of a worker that overran its limit or died.
_OK, _REFUSED, _ERROR, _TIMEOUT, _DIED = "ok", "refused", "error", "timeout", "died"


def _text(err: Exception) -> str:
    return f"{type(err).__name__}: {err}"


def _calls(
    evaluator: Any, feeds: dict[str, np.ndarray], budget: float | None
) -> tuple[list[np.ndarray], list[float]]:
    """One call, or with ``budget`` (seconds) more while they fit in a third of it, up to 5."""
    times: list[float] = []
    outputs: Any = None
    spent = 0.0
    while not times or (budget is not None and len(times) < 5 and spent + times[-1] < budget / 3):
        start = time.perf_counter()
        outputs = evaluator.run(None, feeds)
        times.append(time.perf_counter() - start)
        spent += times[-1]
    return [np.asarray(o) for o in outputs], times


def _serve(conn: Connection) -> None:
    """Worker loop: (model bytes, feeds, budget) in, (status, payload) out."""
    from onnx.reference import ReferenceEvaluator

    for model_bytes, feeds, budget in received(conn):
        try:
            evaluator = ReferenceEvaluator(model_bytes)
        except Exception as err:
            conn.send((_REFUSED, _text(err)))
            continue
        try:
            conn.send((_OK, _calls(evaluator, feeds, budget)))
        except Exception as err:
            conn.send((_ERROR, _text(err)))


class ReferenceWorker:
    """A reusable worker; a job that overruns ``timeout`` seconds (plus ``startup`` seconds for a
    fresh worker to import onnx and numpy) kills it, and the next job starts another."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT, startup: float = 5.0) -> None:
        self.timeout = timeout
        self.startup = startup
        self._process: Any = None
        self._conn: Connection | None = None

    def _job(
        self, model_bytes: bytes, feeds: dict[str, np.ndarray], budget: float | None
    ) -> tuple[str, Any]:
        """The worker's (status, payload), or ("timeout", None) when it overran the limit, or
        ("died", None); either way it is gone."""
        if self._process is None or not self._process.is_alive():
            self._process, self._conn = spawn(_serve)
        if self._conn is None:
            raise RuntimeError("the reference worker did not start")
        self._conn.send((model_bytes, feeds, budget))
        if not self._conn.poll(self.timeout + self.startup):
            self.close(kill=True)
            return _TIMEOUT, None
        try:
            return self._conn.recv()
        except EOFError:
            self.close(kill=True)
            return _DIED, None

    def run(self, model_bytes: bytes, feeds: dict[str, np.ndarray]) -> tuple[str, Any, float]:
        """("ok", outputs, seconds), ("error", text, seconds) or ("timeout", text, seconds)."""
        started = time.perf_counter()
        status, payload = self._job(model_bytes, feeds, None)
        seconds = time.perf_counter() - started
        if status == _OK:
            return "ok", payload[0], seconds
        if status == _TIMEOUT:
            return "timeout", f"did not finish within {self.timeout:g} s", seconds
        if status == _DIED:
            return "error", "the reference worker died", seconds
        return "error", payload, seconds

    def time(
        self, model_bytes: bytes, feeds: dict[str, np.ndarray]
    ) -> tuple[list[float], Any] | None:
        """Per-call times of ``ReferenceEvaluator(model).run`` (at least one call; more while
        they fit in a third of ``timeout``, up to 5) and its outputs; no times and the error's
        first line when the evaluator refuses the model; None when the first call does not
        finish within the limit or fails."""
        status, payload = self._job(model_bytes, feeds, self.timeout)
        if status == _OK:
            outputs, times = payload
            return times, outputs
        if status == _REFUSED:
            return [], payload.splitlines()[0]
        return None

    def close(self, kill: bool = False) -> None:
        if self._process is None:
            return
        if kill:
            self._process.kill()
        elif self._conn is not None:
            with contextlib.suppress(BrokenPipeError, OSError):
                self._conn.send(None)
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()
        self._process = None
        self._conn = None

    def __enter__(self) -> ReferenceWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def time_reference(
    model: bytes, feed: dict[str, np.ndarray], limit: float, startup: float = 10.0
) -> tuple[list[float], list[np.ndarray]] | None:
    """:meth:`ReferenceWorker.time` in a worker of its own, stopped at ``limit`` seconds (plus
    ``startup`` for the child to import onnx and numpy)."""
    with ReferenceWorker(limit, startup) as worker:
        return worker.time(model, feed)
