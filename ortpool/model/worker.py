"""A spawned worker process and the jobs it is sent: the pattern of the onnx reference
evaluator's worker (:mod:`ortpool.model.reference`) and onnxruntime's provider worker
(:mod:`ortpool.ort.ortrun`).

Spawned, not forked: a worker imports onnx (and onnxruntime) afresh, so a provider or an
evaluator that ends its process leaves the parent's state untouched. A worker ignores SIGINT
(Ctrl-C reaches the whole process group, and its traceback would reach the terminal): its parent
ends it, on its way out (daemon processes are terminated at exit) or when a job overruns.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any


def received(conn: Connection) -> Iterator[Any]:
    """The jobs a worker process is sent, until None or the parent's end of the pipe closes."""
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        yield job


def _serve(serve: Callable[[Connection], None], conn: Connection) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(conn)


def spawn(serve: Callable[[Connection], None]) -> tuple[Any, Connection]:
    """A daemon process running ``serve`` on its end of a pipe; the process and the parent's
    end (the child's end is closed here, so a dead child reads as EOF)."""
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    process = ctx.Process(target=_serve, args=(serve, child), daemon=True)
    process.start()
    child.close()
    return process, parent
