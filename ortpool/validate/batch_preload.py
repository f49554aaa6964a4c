"""Imported by the forkserver of ``ortpool validate``'s model processes (:mod:`.batch`), never
by anything else: the validator and onnxruntime imported once, so that every worker is forked
with them. Imports only: a validation run here (a warm-up) would cost the first model more than
it saves it (0.18 s more on the bundled models, measured), as the worker's first model pays the
same first-time costs."""

import atexit
import contextlib
import gc
import os
from multiprocessing import forkserver

import ortpool.validate.validator  # noqa: F401
from ortpool.errors import OrtpoolError
from ortpool.ort import runtime

_PARENT = os.getppid()


@atexit.register
def _leave_nothing() -> None:
    """The server ends once its parent is gone. One killed outright (SIGKILL) did not remove
    the socket it reaches the server by, nor multiprocessing's folder holding it: done here (the
    folder only if nothing else is left in it)."""
    if os.getppid() == _PARENT:  # stopped by its parent, which removes them (server.stop)
        return
    # no public name for the server's address: the attribute main() sets (see server.stop)
    address = getattr(forkserver._forkserver, "_forkserver_address", None)
    with contextlib.suppress(OSError, TypeError, ValueError):  # gone, or an abstract socket
        os.unlink(address)
        os.rmdir(os.path.dirname(address))


with contextlib.suppress(OrtpoolError):  # none installed: each model says so, not the server
    runtime.require()
# kept out of the collector's passes: a worker's would write to (copy) the server's heap
gc.freeze()
