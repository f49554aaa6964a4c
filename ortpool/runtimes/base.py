"""The runtime seam: :class:`Runtime` runs a model in this process and sorts what goes wrong into
:data:`KINDS`; :class:`Worker` runs it in a spawned child that survives the runtime's aborts and
hangs (:data:`CRASHED`, :data:`TIMED_OUT`).

A feed that does not fit the model is the caller's error (ValueError, TypeError), raised before
the runtime sees it: tract ends its process on a missing feed, OpenVINO reads uninitialised memory.
"""

from __future__ import annotations

import abc
import contextlib
import importlib
import importlib.util
import math
import multiprocessing
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, ClassVar

import numpy as np
import onnx

from ortpool import dtypes

NO_KERNEL = "no-kernel"  # the runtime has no implementation of the op/version/type
REFUSED = "refused"  # the runtime refuses the model/attributes at load/compile time
RUN_FAILED = "run-failed"  # loaded, but the run raised
CRASHED = "crashed"  # the worker process died (signal/abort) on this case
TIMED_OUT = "timed-out"  # no answer within the time limit

KINDS = (NO_KERNEL, REFUSED, RUN_FAILED, CRASHED, TIMED_OUT)

#: the longest message a failure keeps (a runtime's text can run to pages)
MESSAGE_LIMIT = 400


def one_line(text: str, limit: int = MESSAGE_LIMIT) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


class RuntimeFailure(Exception):
    """A runtime could not run a model: ``kind`` (one of :data:`KINDS`), ``message`` (one line)
    and ``runtime`` (its name, or ""): ``tract: no-kernel: no implementation of LpPool``."""

    def __init__(self, kind: str, message: str, runtime: str = "") -> None:
        if kind not in KINDS:
            raise ValueError(f"failure kind {kind!r} is not one of {', '.join(KINDS)}")
        self.kind = kind
        self.message = one_line(message)
        self.runtime = runtime
        super().__init__(kind, self.message, runtime)  # the args pickle it back

    def __str__(self) -> str:
        prefix = f"{self.runtime}: " if self.runtime else ""
        return f"{prefix}{self.kind}: {self.message}"


class Runtime(abc.ABC):
    """A runtime that runs ONNX models (:func:`ortpool.runtimes.get`). An instance holds its
    options (plain values) and pickles, for :class:`Worker`'s child; ``self._cache`` (a loaded
    module, a core object) is not pickled."""

    name: ClassVar[str]
    #: the keyword options the constructor takes (:func:`ortpool.runtimes.get` checks them)
    OPTIONS: ClassVar[tuple[str, ...]] = ()
    #: the package that runs it (``pip install PACKAGE``)
    PACKAGE: ClassVar[str] = ""

    def __init__(self) -> None:
        self._cache: dict[str, Any] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    @classmethod
    def available(cls) -> str | None:
        """None when the runtime's package imports here, else an install hint."""
        found = importlib.util.find_spec(cls.PACKAGE) is not None
        return None if found else f"pip install {cls.PACKAGE}"

    @abc.abstractmethod
    def describe(self) -> dict[str, Any]:
        """JSON-able facts: ``runtime``, ``release``, ``device``, ``precision``, ..."""

    @abc.abstractmethod
    def title(self) -> str:
        """A report's heading, e.g. ``OpenVINO 2026.4.1 (CPU, f32)``."""

    @abc.abstractmethod
    def run(self, model: bytes, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """The model's outputs in its declared order and types, run in this process; else a
        :class:`RuntimeFailure` (:data:`NO_KERNEL`, :data:`REFUSED` or :data:`RUN_FAILED`)."""

    def prepare(self) -> None:
        """Import the runtime's package (a worker does, before its first case's clock starts); a
        ValueError with the install hint without it."""
        self._module()

    def failure(self, kind: str, message: str) -> RuntimeFailure:
        return RuntimeFailure(kind, message, self.name)

    def checked(self, model: bytes, feeds: Mapping[str, Any]) -> tuple[Signature, dict[str, Any]]:
        """The model's :func:`signature` and its feeds as :func:`check_feeds` returns them."""
        sig = signature(model, self.name)
        return sig, check_feeds(sig, feeds, self.name)

    def _module(self) -> Any:
        """:attr:`PACKAGE`, imported once."""
        if "module" not in self._cache:
            try:
                self._cache["module"] = importlib.import_module(self.PACKAGE)
            except ImportError:
                raise ValueError(f"{self.name} is not installed here: {self.available()}") from None
        return self._cache["module"]

    def __repr__(self) -> str:
        options = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.OPTIONS)
        return f"{type(self).__name__}({options})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(self, k) == getattr(other, k) for k in self.OPTIONS)

    def __hash__(self) -> int:
        return hash((type(self).__name__, *(getattr(self, k) for k in self.OPTIONS)))


@dataclass(frozen=True)
class Port:
    """A graph input or output: name, element type name ("" when not known) and dims (None for
    an open dim; None for an undeclared shape)."""

    name: str
    dtype: str
    dims: tuple[int | None, ...] | None


@dataclass(frozen=True)
class Signature:
    """Inputs to feed, optional inputs (with an initializer: IR 3 weights) and outputs."""

    inputs: tuple[Port, ...]
    optional: tuple[Port, ...]
    outputs: tuple[Port, ...]


def _port(value: onnx.ValueInfoProto) -> Port:
    if value.type.WhichOneof("value") != "tensor_type":
        return Port(value.name, "", None)
    tensor = value.type.tensor_type
    dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim)
    return Port(value.name, dtypes.NAME_OF_CODE.get(tensor.elem_type, ""),
                dims if tensor.HasField("shape") else None)


def signature(model: bytes | onnx.ModelProto, runtime: str) -> Signature:
    """The ports of ``model``; a ValueError naming ``runtime`` when the bytes are no model."""
    if isinstance(model, onnx.ModelProto):
        proto = model
    elif isinstance(model, bytes | bytearray | memoryview):
        try:
            proto = onnx.ModelProto.FromString(bytes(model))
        except Exception as err:
            raise ValueError(f"{runtime}: the model bytes do not parse as an ONNX model: "
                             f"{one_line(str(err), 200)}") from None
    else:
        raise TypeError(f"{runtime}: the model is {type(model).__name__}, not bytes")
    graph = proto.graph
    weights = {t.name for t in graph.initializer}
    inputs = tuple(_port(v) for v in graph.input if v.name not in weights)
    optional = tuple(_port(v) for v in graph.input if v.name in weights)
    return Signature(inputs, optional, tuple(_port(v) for v in graph.output))


def _dims_text(dims: Sequence[int | None]) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def check_feeds(sig: Signature, feeds: Mapping[str, Any], runtime: str) -> dict[str, np.ndarray]:
    """``feeds`` as arrays in input order, each checked against its declared type and shape (a
    ValueError, or a TypeError for another type, naming ``runtime``, the input and the value)."""
    if not isinstance(feeds, Mapping):
        raise TypeError(f"{runtime}: feeds are {type(feeds).__name__}, not a dict of arrays")
    known = {p.name: p for p in (*sig.inputs, *sig.optional)}
    unknown = sorted(set(feeds) - set(known))
    if unknown:
        raise ValueError(f"{runtime}: feed {unknown[0]!r} is not an input of the model "
                         f"(inputs: {', '.join(p.name for p in sig.inputs) or 'none'})")
    missing = [p.name for p in sig.inputs if p.name not in feeds]
    if missing:
        raise ValueError(f"{runtime}: input {missing[0]!r} has no feed")
    arrays: dict[str, np.ndarray] = {}
    for port in (*sig.inputs, *sig.optional):
        if port.name not in feeds:
            continue
        array = np.asarray(feeds[port.name])
        if port.dtype:
            try:
                given = dtypes.name_of(array.dtype)
            except ValueError:
                given = str(array.dtype)
            if given != port.dtype:
                raise TypeError(f"{runtime}: input {port.name!r} is {given} where the model "
                                f"declares {port.dtype}")
        if port.dims is not None and (len(port.dims) != array.ndim or any(
                d is not None and d != n for d, n in zip(port.dims, array.shape, strict=True))):
            raise ValueError(f"{runtime}: input {port.name!r} has shape {_dims_text(array.shape)} "
                             f"where the model declares {_dims_text(port.dims)}")
        arrays[port.name] = array
    return arrays


def check_outputs(sig: Signature, outputs: Sequence[np.ndarray], runtime: str) -> list[np.ndarray]:
    """The outputs, one per declared output in its declared type, else :data:`RUN_FAILED` (not
    cast: that would hide what the runtime did)."""
    if len(outputs) != len(sig.outputs):
        raise RuntimeFailure(RUN_FAILED, f"{len(outputs)} outputs came back where the model "
                             f"declares {len(sig.outputs)}", runtime)
    settled = [np.asarray(value) for value in outputs]
    for port, array in zip(sig.outputs, settled, strict=True):
        if port.dtype and dtypes.NUMPY[port.dtype] != array.dtype:
            raise RuntimeFailure(RUN_FAILED, f"output {port.name!r} came back as {array.dtype} "
                                 f"where the model declares {port.dtype}", runtime)
    return settled


#: seconds a fresh worker has to import its runtime (openvino: about 1.5 s) before a case's clock
DEFAULT_STARTUP = 60.0
#: how much of a dead worker's standard error is read for its last words
_STDERR_TAIL = 64 * 1024

_READY, _OK, _FAILED, _ERROR = "ready", "ok", "failed", "error"
_RERAISED = {"TypeError": TypeError, "ValueError": ValueError}


def _reply_for(err: Exception) -> tuple[str, ...]:
    """A failure as the child sends it: a ValueError or TypeError is the caller's (a feed that
    does not fit, a missing package), anything else not sorted by the runtime a failed run."""
    if isinstance(err, RuntimeFailure):
        return (_FAILED, err.kind, err.message)
    for name, cls in _RERAISED.items():
        if isinstance(err, cls):
            return (_ERROR, name, str(err))
    return (_FAILED, RUN_FAILED, f"{type(err).__name__}: {one_line(str(err))}")


@contextlib.contextmanager
def main_kept_out() -> Iterator[None]:
    """Children started meanwhile run ortpool's code alone: spawn imports the caller's main module
    in each child (running a script's top level again without the ``__main__`` guard; failing on
    ``python -``), so it is kept out of their preparation while they start."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved = {k: main.__dict__.pop(k) for k in ("__file__",) if k in main.__dict__}
    spec = getattr(main, "__spec__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.update(saved)
        main.__spec__ = spec


@contextlib.contextmanager
def _interrupt_held() -> Iterator[None]:
    """Ctrl-C held back while a child starts: the child starts ignoring SIGINT (exec keeps an
    ignored signal ignored), so the signal the whole process group gets does not end it in a
    traceback as it imports; one that came meanwhile reaches this process after. Main thread
    only, and a handler Python can put back (elsewhere the child ignores it once it runs
    :func:`_serve`)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
            signal, "pthread_sigmask") or signal.getsignal(signal.SIGINT) is None:
        yield
        return
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def stop(process: Any, conn: Connection | None) -> None:
    """End a child process: asked through ``conn`` (None sent; no ``conn``: killed at once),
    killed if it has not ended within 5 s."""
    if conn is None:
        process.kill()
    else:
        with contextlib.suppress(OSError):
            conn.send(None)
    process.join(timeout=5)
    if process.is_alive():
        process.kill()
        process.join(timeout=5)


def die_with_parent(conn: Connection, folder: str | None = None) -> None:
    """In the child: end at once (SIGKILL) when the parent's end of ``conn`` closes, even in the
    middle of a run (a parent killed, or a validate worker killed at its --timeout, would leave
    a long case running on its own). The runtimes release the GIL while they compute. ``folder``
    (the parent's temporary one) is removed first: a parent killed outright removes nothing."""
    import select

    if not hasattr(select, "poll"):  # not POSIX: the child ends at its next job instead
        return
    poller = select.poll()
    poller.register(conn.fileno(), 0)  # POLLERR, POLLHUP and POLLNVAL are always reported

    def watch() -> None:
        for _, event in poller.poll():
            if event & select.POLLNVAL:  # our end closed: the child is ending anyway
                return
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
            os.kill(os.getpid(), signal.SIGKILL)  # the parent is gone

    threading.Thread(target=watch, name="ortpool parent watch", daemon=True).start()


def _serve(runtime: Runtime, stderr_path: str, conn: Connection) -> None:
    """The child: standard error to ``stderr_path`` (a native runtime's last words before it
    aborts), the runtime prepared, then (model, feeds) jobs until told to stop."""
    die_with_parent(conn)
    # Ctrl-C reaches the whole process group: the parent ends the child, not the signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    fd = os.open(stderr_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.dup2(fd, 2)
    os.close(fd)
    # the parent reads it through its own descriptor: with no name, nothing is left behind
    # when this process or the parent's ends without a word (a closed pipe, a kill)
    with contextlib.suppress(OSError):
        os.unlink(stderr_path)
    try:
        runtime.prepare()
    except Exception as err:
        conn.send(_reply_for(err))
        return
    conn.send((_READY,))
    while True:
        try:
            job = conn.recv()
        except EOFError:  # the parent's end of the pipe closed
            return
        if job is None:
            return
        model, feeds = job
        try:
            reply: tuple[Any, ...] = (_OK, runtime.run(model, feeds))
        except Exception as err:
            reply = _reply_for(err)
        try:
            conn.send(reply)
        except Exception as err:  # an output that does not pickle
            conn.send((_FAILED, RUN_FAILED, f"the outputs could not be sent back: {err}"))


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


_PANIC = re.compile(r"panicked at (?P<where>\S+?):?\s*$")


def last_words(text: str) -> str:
    """A dying process's standard error in one line: a Rust panic's place and message
    (``panicked at core/src/x.rs:1:2: attempt to divide by zero``), else its last line that is
    not a backtrace or a note."""
    lines = [line.strip() for line in text.splitlines()]
    for i, line in enumerate(lines):
        if "panicked at" in line:
            where = _PANIC.search(line)
            said = lines[i + 1] if i + 1 < len(lines) else ""
            head = f"panicked at {where.group('where')}" if where else line
            return one_line(f"{head}: {said}" if said else head, 300)
    for line in reversed(lines):
        if line and not line.startswith(("note:", "stack backtrace", "at ")) and not re.match(
                r"^\d+:", line):
            return one_line(line, 300)
    return ""


class Worker(contextlib.AbstractContextManager):
    """Runs :meth:`Runtime.run` in a spawned child process that outlives what it runs.

    A case that ends the child raises :data:`CRASHED` (the signal or exit code, the child's last
    words); one slower than ``timeout`` seconds (None: no limit) raises :data:`TIMED_OUT` and kills
    it. The next :meth:`run` then starts a fresh child, which has ``startup`` seconds to import its
    runtime. A ValueError or TypeError in the child is raised again here. Thread-safe; a context
    manager.
    """

    def __init__(self, runtime: Runtime, timeout: float | None,
                 startup: float = DEFAULT_STARTUP) -> None:
        if not isinstance(runtime, Runtime):
            raise TypeError(f"Worker needs a Runtime, not {type(runtime).__name__}")
        for label, value in (("timeout", timeout), ("startup", startup)):
            if value is None and label == "timeout":
                continue  # no limit: a caller whose own caller limits the whole run
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if not number or not 0 < value < math.inf:
                raise ValueError(f"{runtime.name} worker: {label}={value!r} is not a positive "
                                 "number of seconds")
        self.runtime = runtime
        self.timeout = None if timeout is None else float(timeout)
        self.startup = float(startup)
        #: how many children were started (the first, and one after each crash or time-out)
        self.started = 0
        self._process: Any = None
        self._conn: Connection | None = None
        self._stderr: str | None = None
        self._log: int | None = None  # the parent's descriptor of the child's standard error
        self._lock = threading.Lock()

    def _start(self) -> None:
        self._log, self._stderr = tempfile.mkstemp(prefix=f"ortpool-{self.runtime.name}-",
                                                   suffix=".log")
        # Spawned, not forked: the child imports its runtime afresh, and one that ends its
        # process leaves the parent untouched. Its end of the pipe is closed here, so a dead
        # child reads as EOF.
        ctx = multiprocessing.get_context("spawn")
        conn, child = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(self.runtime, self._stderr, child), daemon=True)
        with main_kept_out(), _interrupt_held():
            process.start()
        child.close()
        self._process, self._conn = process, conn
        self.started += 1
        reply = self._answer(self.startup, "start")
        if reply[0] != _READY:
            self._stop(kill=False)
            raise self._error(reply)

    def _answer(self, limit: float | None, doing: str) -> tuple[Any, ...]:
        """The child's next reply within ``limit`` seconds; a crash or a time-out raised."""
        conn = self._conn  # set by _start
        try:
            ready = conn.poll(limit)
        except (EOFError, OSError):
            ready = True  # recv below meets the end
        if not ready:
            self._stop(kill=True)
            what = "to start" if doing == "start" else "to answer"
            raise RuntimeFailure(TIMED_OUT,
                                 f"the worker took longer than {limit:g} s {what}; it was stopped",
                                 self.runtime.name)
        try:
            return conn.recv()
        except (EOFError, OSError):
            raise self._crashed(doing) from None

    def _crashed(self, doing: str) -> RuntimeFailure:
        process = self._process
        process.join(timeout=5)
        code = process.exitcode
        words = self._last_words()
        self._stop(kill=True)
        if code is None:
            how = "closed its pipe"
        elif code < 0:
            how = f"was killed by {_signal_name(-code)}"
        else:
            how = f"exited with code {code}"
        while_ = "while starting" if doing == "start" else "on this case"
        said = f": {words}" if words else ""
        return RuntimeFailure(CRASHED, f"the worker {how} {while_}{said}", self.runtime.name)

    def _last_words(self) -> str:
        log: int = self._log  # type: ignore[assignment]  # set by _start
        try:
            tail = os.pread(log, _STDERR_TAIL, max(0, os.fstat(log).st_size - _STDERR_TAIL))
        except OSError:
            return ""
        return last_words(tail.decode("utf-8", "replace"))

    def _stop(self, kill: bool) -> None:
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if process is not None:
            stop(process, None if kill else conn)
        if conn is not None:
            conn.close()
        if self._stderr is not None:  # a child that ended before it took the name away
            with contextlib.suppress(OSError):
                os.unlink(self._stderr)
            self._stderr = None
        if self._log is not None:
            os.close(self._log)
            self._log = None

    def _error(self, reply: tuple[Any, ...]) -> Exception:
        if reply[0] == _ERROR:
            return _RERAISED[reply[1]](reply[2])
        return RuntimeFailure(reply[1], reply[2], self.runtime.name)

    def run(self, model: bytes, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """``self.runtime.run(model, feeds)`` in the child; see the class for what it raises."""
        with self._lock:
            if self._process is None or not self._process.is_alive():
                self._stop(kill=True)  # a dead child's pipe and log
                self._start()
            with contextlib.suppress(OSError):  # this case's last words only
                os.ftruncate(self._log, 0)  # type: ignore[arg-type]  # set by _start
            try:
                self._conn.send((model, dict(feeds)))
            except (BrokenPipeError, EOFError, OSError):
                raise self._crashed("run") from None
            reply = self._answer(self.timeout, "run")
        if reply[0] == _OK:
            return reply[1]
        raise self._error(reply)

    def close(self) -> None:
        """Stop the child (asked to, killed if it does not within 5 s)."""
        with self._lock:
            self._stop(kill=False)

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._stop(kill=True)

