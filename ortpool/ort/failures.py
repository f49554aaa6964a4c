"""The record of errors trapped inside Python ops, until the run that caused them claims them.

An op cannot fail a run (anything thrown ends the process), so the hook records every error. A
run claims those recorded on its own thread, and (``ORT_PARALLEL``) those on no run's thread by
nodes its model holds. The record is bounded (:data:`MAX_KEPT`) and keeps no traceback; unclaimed
failures of plain sessions are logged at ERROR (:func:`recent`).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import itertools
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

log = logging.getLogger("ortpool")

#: Failures kept at most; plain sessions' failures are never claimed and age out.
MAX_KEPT = 64


@dataclasses.dataclass(frozen=True)
class OpFailure:
    """An exception trapped inside a Python op (no traceback: it holds the inputs)."""

    op_type: str
    attributes: dict[str, Any]
    input_shapes: list[tuple[int, ...]]
    error: BaseException
    thread: int = 0
    seq: int = 0


Matcher = Callable[[OpFailure], bool]


_lock = threading.Lock()
_kept: collections.deque[OpFailure] = collections.deque(maxlen=MAX_KEPT)
_seq = itertools.count()
_runs: dict[int, RunScope] = {}
_run_ids = itertools.count()


def _strip(err: BaseException) -> BaseException:
    """``err`` without its traceback and chained exceptions, whose frames hold the op's inputs
    (+71 MiB per 1,000 failing runs)."""
    err.__traceback__ = err.__context__ = err.__cause__ = None
    return err


def record(op_type: str, attributes: dict[str, Any], input_shapes: list[tuple[int, ...]],
           error: BaseException) -> OpFailure:
    """Keep a trapped failure for its run; log it if no run will raise it."""
    thread = threading.get_ident()
    with _lock:
        failure = OpFailure(op_type, dict(attributes), input_shapes, _strip(error), thread,
                            next(_seq))
        _kept.append(failure)
        raised = any(r.thread == thread for r in _runs.values()) or any(
            r.matches(failure) for r in _runs.values())
    if not raised:
        log.error("%s failed: %s", op_type, error)
    return failure


def _take(mine: list[OpFailure]) -> list[OpFailure]:
    """``mine`` removed from the record (the lock held)."""
    for failure in mine:
        _kept.remove(failure)
    return mine


@dataclasses.dataclass(frozen=True)
class RunScope:
    """A run in progress on ``thread`` since record ``start``; :meth:`claim` takes the failures
    it caused from the record."""

    run_id: int
    thread: int
    start: int
    matches: Matcher

    def claim(self) -> list[OpFailure]:
        """The failures of this run so far, oldest first, removed from the record."""
        with _lock:
            callers = {r.thread for i, r in _runs.items() if i != self.run_id}
            return _take([f for f in _kept if f.seq >= self.start and (
                f.thread == self.thread or (f.thread not in callers and self.matches(f)))])


@contextlib.contextmanager
def run_scope(matches: Matcher) -> Iterator[RunScope]:
    """``with run_scope(matcher) as scope: ...; scope.claim()``: a run in progress on this
    thread; ``matches`` tells which failures on other threads its model could have caused."""
    with _lock:
        scope = RunScope(next(_run_ids), threading.get_ident(), next(_seq), matches)
        _runs[scope.run_id] = scope
    try:
        yield scope
    finally:
        with _lock:
            _runs.pop(scope.run_id, None)


def recent() -> list[OpFailure]:
    """The failures kept (at most :data:`MAX_KEPT`, oldest first), claimed ones excluded."""
    with _lock:
        return list(_kept)


def take_thread() -> list[OpFailure]:
    """The kept failures recorded on this thread, oldest first; removes them."""
    thread = threading.get_ident()
    with _lock:
        return _take([f for f in _kept if f.thread == thread])


def clear() -> None:
    """Forget every kept failure."""
    with _lock:
        _kept.clear()

