"""The forkserver of ``ortpool validate``'s model processes (:mod:`.batch`): started as soon as
the command line names validate, so that its imports (:mod:`.batch_preload`) overlap the
command's own. Imports nothing heavy: the command line imports it before the command."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import tempfile
from typing import Any

#: what the forkserver imports once for all children
PRELOAD = ["ortpool.validate.batch_preload"]

#: The longest temporary folder under which multiprocessing can still make its AF_UNIX sockets.
SOCKET_ROOM = 64


def context() -> Any:
    """The multiprocessing context of the model processes."""
    # the forkserver listens on an AF_UNIX socket below the temporary folder: under a folder too
    # deep for one (107 bytes at most), the children are spawned instead
    room = len(os.fsencode(tempfile.gettempdir())) <= SOCKET_ROOM
    if "forkserver" in multiprocessing.get_all_start_methods() and room:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


def start() -> None:
    """Start the forkserver now (not while signals are held: it would inherit the mask)."""
    if context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


def stop() -> None:
    """End the forkserver at once: a refused command line needs none, and it would otherwise
    finish its imports (about half a second of a core) before it saw its parent gone."""
    from multiprocessing import forkserver

    # Private names, as there is no public way (Python 3.10 to 3.13): a stop() for the server
    # was proposed and rejected (python/cpython#81688); CPython's own tests call _stop(). Each is
    # looked up: without them the server ends with this process, once it has imported.
    server = forkserver._forkserver  # the process-wide one ensure_running() started
    pid = getattr(server, "_forkserver_pid", None)
    if pid is None or not hasattr(server, "_stop"):
        return
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    server._stop()  # reaps it, closes the pipe and removes the socket
