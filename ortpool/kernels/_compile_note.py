"""One line when numba actually compiles one of ortpool's kernels (never for a load from its disk
cache): a first compile stalls the call for 8-11 s, which without a word reads as a hang. The note
goes to the ``ortpool`` logger and, when logging is not configured, to stderr (docs/kernels.md)."""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator

from ortpool.dtypes import NUMPY_SPELLING

log = logging.getLogger("ortpool")

_lock = threading.Lock()
_installed = False
#: Where the note goes instead of stderr (``validate``'s model processes hand it to the command).
relay: Callable[[str], None] | None = None


def set_relay(send: Callable[[str], None] | None) -> None:
    """Hand the note to ``send`` instead of this process's stderr (None: back to stderr)."""
    global relay
    relay = send


# A first compile's duration (measured cold per kernel and element type, fast and slow hosts).
_WINDOW_LOOPS = "10-20 s on 2 cores"
_UNDER_A_SECOND = "under a second"

#: The compiled kernels by name: their module, the operator the note names, the first compile.
_NUMBA, _FAMILY = "ortpool.kernels._numba", "ortpool.kernels._numba_family"
KERNELS: dict[str, tuple[str, str, str]] = {
    "max_planes": (_NUMBA, "MaxPool", _WINDOW_LOOPS),
    "max_indices": (_NUMBA, "MaxPool with Indices", _WINDOW_LOOPS),
    "average_planes": (_NUMBA, "AveragePool", _WINDOW_LOOPS),
    "scatter": (_NUMBA, "MaxUnpool", _UNDER_A_SECOND),
    "plane_sums": (_FAMILY, "GlobalAveragePool/GlobalLpPool", "5-10 s on 2 cores"),
    "roi_max": (_FAMILY, "MaxRoiPool", _UNDER_A_SECOND),
}
#: The kernels that compile in under a second: worth a log line, not a note on the terminal.
QUICK = frozenset(name for name, (_, _, wait) in KERNELS.items() if wait == _UNDER_A_SECOND)


#: True while :func:`ortpool.kernels.warmup.warm_up` runs (the note then names no warm-up).
_warming = False


@contextlib.contextmanager
def warming_up() -> Iterator[None]:
    """The notes made inside say what compiles, not that a warm-up would avoid it."""
    global _warming
    before, _warming = _warming, True
    try:
        yield
    finally:
        _warming = before


def message(kernel: str, dtype: str) -> str:
    _, operator, wait = KERNELS[kernel]
    dtype = NUMPY_SPELLING.get(dtype, dtype)  # numba's float32 is ONNX's float
    if _warming:
        return f"compiling the numba kernel for {dtype} {operator} ({wait}, cached on disk)"
    return (f"compiling the numba kernel for {dtype} {operator} (first use, {wait}, cached on disk "
            "afterwards; `ortpool warmup` does it ahead of time)")


def announce(text: str, terminal: bool = True) -> None:
    """``text`` to the logger, and with ``terminal`` to the relay or stderr when logging is not
    configured: over the current line on a terminal, else as a plain line."""
    log.info(text)
    if not terminal or log.hasHandlers():
        return
    if relay is not None:
        relay(text)
        return
    stream = sys.stderr
    # On a terminal a progress bar may be drawn on the current line: clear it first.
    clear = "\r\033[K" if getattr(stream, "isatty", lambda: False)() else ""
    stream.write(f"{clear}ortpool: {text}\n")
    stream.flush()


def install() -> None:
    """Listen to numba's compile events (once per process)."""
    global _installed
    with _lock:
        if _installed:
            return
        from numba.core import event

        class Listener(event.Listener):
            """Notes the start of a kernel's compile and logs how long it took."""

            def __init__(self) -> None:
                self.started: dict[int, float] = {}

            @staticmethod
            def _kernel(ev: event.Event) -> tuple[str, str] | None:
                data = ev.data or {}
                func = getattr(data.get("dispatcher"), "py_func", None)
                known = KERNELS.get(getattr(func, "__name__", None))
                if known is None or func.__module__ != known[0] or not data.get("args"):
                    return None
                return func.__name__, str(data["args"][0].dtype)

            def on_start(self, ev: event.Event) -> None:
                found = self._kernel(ev)
                if found is not None:
                    self.started[id(ev.data["dispatcher"])] = time.perf_counter()
                    announce(message(*found), terminal=found[0] not in QUICK)

            def on_end(self, ev: event.Event) -> None:
                found = self._kernel(ev)
                start = self.started.pop(id(ev.data["dispatcher"]), None) if found else None
                if start is not None:
                    log.info("compiled the numba kernel for %s %s in %.1f s",
                             NUMPY_SPELLING.get(found[1], found[1]),
                             KERNELS[found[0]][1], time.perf_counter() - start)

        event.register("numba:compile", Listener())
        _installed = True
