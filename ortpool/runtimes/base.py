"""The runtime seam: one interface through which a model (one node or a whole graph) is run on
"the runtime", whichever it is, and the worker process every run goes through.

A :class:`Runtime` runs a model in the current process and sorts what goes wrong into the kinds a
report names: :data:`NO_KERNEL` (no implementation of the op, version or element type),
:data:`REFUSED` (the model or its attributes are refused when loaded or compiled),
:data:`RUN_FAILED` (loaded, and the run raised). A native runtime can also end its process (tract
aborts on some inputs) or never answer; :class:`Worker` runs each case in a spawned child that
survives for the next case, adding :data:`CRASHED` and :data:`TIMED_OUT`.

Errors: a feed that does not fit the model (missing, unknown, another element type or shape) is
the caller's: :class:`ValueError` or :class:`TypeError`, raised before the runtime sees it (tract
ends its process on a missing feed; OpenVINO runs on uninitialised memory). What the runtime says
of a fitting model is a :class:`RuntimeFailure`.
"""

from __future__ import annotations

import abc
import contextlib
import functools
import math
import multiprocessing
import os
import re
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
    """``text`` with its whitespace runs made single spaces, cut to ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


class RuntimeFailure(Exception):
    """A runtime could not run a model: ``kind`` (one of :data:`KINDS`), ``message`` (one line,
    no traceback) and ``runtime`` (its name, "" when not known). ``str()`` reads
    ``tract: no-kernel: no implementation of LpPool (node 'pool')``."""

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
    """A runtime that runs ONNX models: the implementations are in this package
    (:func:`ortpool.runtimes.get`); onnxruntime's is in :mod:`ortpool.ort`.

    An instance holds its options only (plain values), so it pickles: :class:`Worker` sends it to
    its child. What an implementation caches (a loaded module, a core object) lives in
    ``self._cache``, which is not pickled.
    """

    name: ClassVar[str]
    #: the keyword options the constructor takes (:func:`ortpool.runtimes.get` checks them)
    OPTIONS: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self._cache: dict[str, Any] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    @classmethod
    @abc.abstractmethod
    def available(cls) -> str | None:
        """None when the runtime's package imports here, else a one-line install hint."""

    @abc.abstractmethod
    def describe(self) -> dict[str, Any]:
        """What runs: ``{"runtime": name, "release": version, "device": ..., "precision": ...}``
        and any other JSON-able facts."""

    @abc.abstractmethod
    def title(self) -> str:
        """One line for a report's heading, e.g. ``OpenVINO 2026.4.1 (CPU, f32)``."""

    @abc.abstractmethod
    def run(self, model: bytes, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """The model's outputs in its declared order and element types, run in this process;
        a :class:`RuntimeFailure` of kind :data:`NO_KERNEL`, :data:`REFUSED` or
        :data:`RUN_FAILED` when the runtime cannot."""

    def prepare(self) -> None:
        """Import the runtime's package (a worker does this before its first case, so that a
        case's time limit does not pay for it); a ValueError with the install hint without it.
        Here: the install check alone."""
        if self.available() is not None:
            raise self.missing()

    def failure(self, kind: str, message: str) -> RuntimeFailure:
        return RuntimeFailure(kind, message, self.name)

    def missing(self) -> ValueError:
        """The error of a run on a machine without the runtime's package."""
        return ValueError(f"{self.name} is not installed here: {self.available()}")

    def __repr__(self) -> str:
        options = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.OPTIONS)
        return f"{type(self).__name__}({options})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(self, k) == getattr(other, k) for k in self.OPTIONS
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, *(getattr(self, k) for k in self.OPTIONS)))


# --- what a model takes and gives ----------------------------------------------------------


@dataclass(frozen=True)
class Port:
    """A graph input or output: its name, onnx element type name ("" when undeclared or not
    one ortpool handles) and dims (an int, or None for a symbolic or unset dim; None for an
    undeclared shape)."""

    name: str
    dtype: str
    dims: tuple[int | None, ...] | None


@dataclass(frozen=True)
class Signature:
    """A model's inputs to feed (graph inputs without an initializer), optional inputs (those
    with one: IR 3 models list their weights as inputs) and outputs, in graph order."""

    inputs: tuple[Port, ...]
    optional: tuple[Port, ...]
    outputs: tuple[Port, ...]


def _port(value: onnx.ValueInfoProto) -> Port:
    kind = value.type.WhichOneof("value")
    if kind != "tensor_type":
        return Port(value.name, "", None)
    tensor = value.type.tensor_type
    dtype = dtypes.NAME_OF_CODE.get(tensor.elem_type, "")
    if not tensor.HasField("shape"):
        return Port(value.name, dtype, None)
    dims = tuple(
        d.dim_value if d.WhichOneof("value") == "dim_value" else None for d in tensor.shape.dim
    )
    return Port(value.name, dtype, dims)


def signature(model: bytes | onnx.ModelProto, runtime: str) -> Signature:
    """The inputs and outputs of ``model`` (serialized or not); a ValueError naming
    ``runtime`` when the bytes are not a model."""
    if isinstance(model, onnx.ModelProto):
        proto = model
    elif isinstance(model, bytes | bytearray | memoryview):
        try:
            proto = onnx.ModelProto.FromString(bytes(model))
        except Exception as err:
            raise ValueError(
                f"{runtime}: the model bytes do not parse as an ONNX model: "
                f"{one_line(str(err), 200)}"
            ) from None
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
    """``feeds`` as numpy arrays in the model's input order, each checked against its declared
    element type and shape: a ValueError for a missing, unknown or misshapen feed, a TypeError for
    another element type, each naming ``runtime``, the input and the value."""
    if not isinstance(feeds, Mapping):
        raise TypeError(f"{runtime}: feeds are {type(feeds).__name__}, not a dict of arrays")
    known = {p.name: p for p in (*sig.inputs, *sig.optional)}
    unknown = sorted(set(feeds) - set(known))
    if unknown:
        raise ValueError(
            f"{runtime}: feed {unknown[0]!r} is not an input of the model "
            f"(inputs: {', '.join(p.name for p in sig.inputs) or 'none'})"
        )
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
                raise TypeError(
                    f"{runtime}: input {port.name!r} is {given} where the model declares "
                    f"{port.dtype}"
                )
        if port.dims is not None and (
            len(port.dims) != array.ndim
            or any(d is not None and d != n for d, n in zip(port.dims, array.shape, strict=True))
        ):
            raise ValueError(
                f"{runtime}: input {port.name!r} has shape {_dims_text(array.shape)} where the "
                f"model declares {_dims_text(port.dims)}"
            )
        arrays[port.name] = array
    return arrays


def check_outputs(sig: Signature, outputs: Sequence[np.ndarray], runtime: str) -> list[np.ndarray]:
    """The runtime's outputs, one per declared output in its declared element type: a
    :class:`RuntimeFailure` (:data:`RUN_FAILED`) naming the output otherwise (a runtime that
    answers in another type is not cast: that would hide what it did)."""
    if len(outputs) != len(sig.outputs):
        raise RuntimeFailure(
            RUN_FAILED,
            f"{len(outputs)} outputs came back where the model declares {len(sig.outputs)}",
            runtime,
        )
    settled = []
    for port, value in zip(sig.outputs, outputs, strict=True):
        array = np.asarray(value)
        if port.dtype and dtypes.NUMPY[port.dtype] != array.dtype:
            raise RuntimeFailure(
                RUN_FAILED,
                f"output {port.name!r} came back as {array.dtype} where the model declares "
                f"{port.dtype}",
                runtime,
            )
        settled.append(array)
    return settled


# --- the worker ------------------------------------------------------------------------------

#: the time a fresh worker has to import the runtime (numpy, onnx and e.g. openvino: about 1.5 s
#: on the test machines) before its first case starts the case's own clock
DEFAULT_STARTUP = 60.0

#: how much of a dead worker's standard error is read for its last words
_STDERR_TAIL = 64 * 1024

_READY, _OK, _FAILED, _ERROR = "ready", "ok", "failed", "error"
_RERAISED = {"ValueError": ValueError, "TypeError": TypeError}


def _reply_for(err: Exception) -> tuple[str, ...]:
    """A failure as the child sends it: a ValueError or TypeError (subclasses too) escaping
    :meth:`Runtime.run` is the caller's (a feed that does not fit, a missing package: each
    runtime sorts its own exceptions into kinds), anything else a failed run."""
    if isinstance(err, RuntimeFailure):
        return (_FAILED, err.kind, err.message)
    if isinstance(err, TypeError):
        return (_ERROR, "TypeError", str(err))
    if isinstance(err, ValueError):
        return (_ERROR, "ValueError", str(err))
    return (_FAILED, RUN_FAILED, f"{type(err).__name__}: {one_line(str(err))}")


@contextlib.contextmanager
def main_kept_out() -> Iterator[None]:
    """Children started meanwhile run ortpool's code alone: the caller's main module, which
    multiprocessing's spawn imports in each child (running a script's top level, and its call
    of ortpool, again unless the script has the ``__main__`` guard; failing on ``python -``
    whose main is stdin), is kept out of their preparation while they start."""
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


def _spawn(runtime: Runtime, stderr_path: str) -> tuple[Any, Connection]:
    """A daemon child serving ``runtime`` on its end of a pipe, and the parent's end (the child's
    is closed here, so a dead child reads as EOF). It imports no more of ortpool than the
    runtime needs (``ortpool.model``'s package imports the kernels: about 0.4 s of a child's
    start, measured with -X importtime)."""
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    serve = functools.partial(_serve, runtime, stderr_path)
    process = ctx.Process(target=serve, args=(child,), daemon=True)
    with main_kept_out():
        process.start()
    child.close()
    return process, parent


def _jobs(conn: Connection) -> Iterator[Any]:
    """The jobs a child is sent, until None or the parent's end of the pipe closes."""
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        yield job


def _serve(runtime: Runtime, stderr_path: str, conn: Connection) -> None:
    """The child: its standard error to ``stderr_path`` (what a native runtime prints before it
    aborts is read from there), the runtime prepared, then (model, feeds) jobs until told to
    stop; ("ok", outputs), ("failed", kind, message) or ("error", type, message) out."""
    # Ctrl-C reaches the whole process group: the parent ends the child, not the signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    fd = os.open(stderr_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        runtime.prepare()
    except Exception as err:
        conn.send(_reply_for(err))
        return
    conn.send((_READY,))
    for model, feeds in _jobs(conn):
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
    """What a dying process said last on its standard error, in one line: a Rust panic's place
    and message (``panicked at core/src/x.rs:1:2: attempt to divide by zero``), else its last
    line that is not a backtrace or a note."""
    lines = [line.strip() for line in text.splitlines()]
    for i, line in enumerate(lines):
        if "panicked at" in line:
            where = _PANIC.search(line)
            said = lines[i + 1] if i + 1 < len(lines) else ""
            head = f"panicked at {where.group('where')}" if where else line
            return one_line(f"{head}: {said}" if said else head, 300)
    for line in reversed(lines):
        if (
            line
            and not line.startswith(("note:", "stack backtrace", "at "))
            and not re.match(r"^\d+:", line)
        ):
            return one_line(line, 300)
    return ""


class Worker:
    """Runs :meth:`Runtime.run` in a spawned child process that outlives what it runs.

    A case that ends the child (a signal, an abort, an exit) raises :data:`CRASHED` with the
    signal or exit code and the child's last words; one that takes longer than ``timeout``
    seconds raises :data:`TIMED_OUT` and kills the child. Either way the next :meth:`run` starts a
    fresh child, which has ``startup`` seconds to import its runtime before the case's clock
    starts. A ValueError or TypeError in the child (a feed that does not fit the model, a missing
    package) is raised again here as such. Thread-safe (one case at a time); a context manager.
    """

    def __init__(self, runtime: Runtime, timeout: float, startup: float = DEFAULT_STARTUP) -> None:
        if not isinstance(runtime, Runtime):
            raise TypeError(f"Worker needs a Runtime, not {type(runtime).__name__}")
        for label, value in (("timeout", timeout), ("startup", startup)):
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not 0 < value < math.inf
            ):
                raise ValueError(
                    f"{runtime.name} worker: {label}={value!r} is not a positive number of seconds"
                )
        self.runtime = runtime
        self.timeout = float(timeout)
        self.startup = float(startup)
        #: how many children were started (the first, and one after each crash or time-out)
        self.started = 0
        self._process: Any = None
        self._conn: Connection | None = None
        self._stderr: str | None = None
        self._lock = threading.Lock()

    # the child ----------------------------------------------------------------------------

    def _start(self) -> None:
        fd, self._stderr = tempfile.mkstemp(prefix=f"ortpool-{self.runtime.name}-", suffix=".log")
        os.close(fd)
        self._process, self._conn = _spawn(self.runtime, self._stderr)
        self.started += 1
        reply = self._answer(self.startup, "start")
        if reply[0] != _READY:
            self._stop(kill=False)
            raise self._error(reply)

    def _answer(self, limit: float, doing: str) -> tuple[Any, ...]:
        """The child's next reply within ``limit`` seconds; a crash or a time-out raised (the
        child gone either way)."""
        conn = self._conn
        if conn is None:  # pragma: no cover - _start sets it
            raise RuntimeFailure(CRASHED, "the worker is not running", self.runtime.name)
        try:
            ready = conn.poll(limit)
        except (EOFError, OSError):
            ready = True  # recv below meets the end
        if not ready:
            self._stop(kill=True)
            what = "to start" if doing == "start" else "to answer"
            raise RuntimeFailure(
                TIMED_OUT,
                f"the worker took longer than {limit:g} s {what}; it was stopped",
                self.runtime.name,
            )
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
        if self._stderr is None:
            return ""
        try:
            with open(self._stderr, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - _STDERR_TAIL))
                return last_words(f.read().decode("utf-8", "replace"))
        except OSError:
            return ""

    def _stop(self, kill: bool) -> None:
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if process is not None:
            if kill:
                process.kill()
            elif conn is not None:
                with contextlib.suppress(OSError):
                    conn.send(None)
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join(timeout=5)
        if conn is not None:
            conn.close()
        if self._stderr is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._stderr)
            self._stderr = None

    def _error(self, reply: tuple[Any, ...]) -> Exception:
        if reply[0] == _ERROR:
            return _RERAISED[reply[1]](reply[2])
        return RuntimeFailure(reply[1], reply[2], self.runtime.name)

    # the caller's side --------------------------------------------------------------------

    def run(self, model: bytes, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """``self.runtime.run(model, feeds)`` in the child; see the class for what it raises."""
        with self._lock:
            if self._process is None or not self._process.is_alive():
                if self._process is not None:
                    self._stop(kill=True)
                self._start()
            if self._stderr is not None:  # this case's last words only
                with contextlib.suppress(OSError):
                    os.truncate(self._stderr, 0)
            try:
                self._conn.send((model, dict(feeds)))  # type: ignore[union-attr]
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

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._stop(kill=True)
