"""Several models in one ``ortpool validate`` run, validated in worker child processes.

A model can end the process that validates it, hang, or make the validator raise: each is that
model's status (CRASHED, TIMED_OUT, COULD_NOT_RUN, the reason in one line) and the run goes on.
``jobs`` workers, forked from a forkserver that imported the validator (:mod:`.server`), each
validate model after model; one that ends (or must: :func:`_serve`) is replaced. Results come
back pickled through a pipe, handed out in the order given. No child outlives the run.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import os
import pickle
import select
import signal
import stat
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, TextIO

from ortpool.errors import OrtpoolError, warnings_as_lines
from ortpool.kernels import check_memory, memory_room, usable_cores
from ortpool.model.timing import Hold, set_quiet
from ortpool.options import CLI, label
from ortpool.options.timing import DEFAULT_TIMEOUT
from ortpool.report import record as results
from ortpool.report.progress import Progress
from ortpool.runtimes.base import die_with_parent, stop
from ortpool.staging import ENDING_SIGNALS, signals_held
from ortpool.validate import server

#: validates one model in the child: (path, options, strict_shapes, progress) -> ModelResult
Work = Callable[[str, Any, bool, Progress], results.ModelResult]

_TAKEN, _PROGRESS, _NOTE, _RETIRING, _RESULT = "taken", "progress", "note", "retiring", "result"
#: a worker about to time (the guard's price) asks for quiet, waits for _GO, says _LOUD after
_QUIET, _GO, _LOUD = "quiet", "go", "loud"
#: the messages that set one of :class:`_Child`'s flags: kind -> (flag, value)
_FLAGS = {_RETIRING: ("retiring", True), _TAKEN: ("taken", True), _LOUD: ("quiet", False)}


#: A run whose model files hold at most this many bytes in all, none referencing external data,
#: is validated one model per core by default: its workers stay small (the 32 bundled models:
#: 0.2 MB, a worker's peak 100 MB; a 40 MB detector's, 450 MB).
SMALL_RUN_BYTES = 256 << 20


def jobs_from(value: int | None, paths: Sequence[str]) -> int:
    """``--jobs`` (checked): N (0: the cores this process may use), at most the models. None
    (the default): one per core for a small run (:func:`small_run`), no more than the memory this
    process may still take holds at :data:`_RETIRE_BYTES` a worker (its cgroup's limit in a
    container, else MemAvailable and free swap: :func:`ortpool.kernels.memory_room`); else 1."""
    if value is None:
        if not small_run(paths):
            return 1
        room = memory_room()
        value = usable_cores() if room is None else min(usable_cores(), room // _RETIRE_BYTES)
    elif value == 0:
        value = usable_cores()
    return max(1, min(value, len(paths)))


def small_run(paths: Sequence[str], limit: int = SMALL_RUN_BYTES) -> bool:
    """Whether ``paths`` are regular files of at most ``limit`` bytes in all, none naming an
    external data location (a model's weights may be in another file: such a model is taken
    for a large one). Only regular files are read (a FIFO or a device is not: the worker reports
    it); one that cannot be read counts for nothing."""
    sizes = []
    for path in paths:
        try:
            info = os.stat(path)
        except (OSError, ValueError):  # gone, or a name the system refuses: its worker says so
            continue
        if not stat.S_ISREG(info.st_mode):
            return False
        sizes.append((path, info.st_size))
    if sum(size for _, size in sizes) > limit:
        return False
    # an external tensor names its file under the key "location": absent from the bytes, no
    # tensor of the model is external (present, it may be a docstring's word: then serially)
    return not any(_holds(path, b"location") for path, _ in sizes)


def _holds(path: str, word: bytes, chunk: int = 1 << 20) -> bool:
    # read, not mapped: a mapped file cut short by another process ends this one (SIGBUS)
    try:
        with open(path, "rb") as file:
            tail = b""
            while block := file.read(chunk):
                if word in tail + block:
                    return True
                tail = block[-len(word):]
    except OSError:
        return False
    return False


def validate_one(path: str, options: Any, strict_shapes: bool,
                 progress: Progress) -> results.ModelResult:
    """The default work of a child: one model through :func:`validator.validate_model`."""
    from ortpool.validate import validator

    return validator.validate_model(path, options, progress=progress,
                                    strict_shapes=strict_shapes, label=path)


def one_line(text: str) -> str:
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _reason(err: BaseException, path: str) -> str:
    """The error's message in one line, without the model's path in front (the report names it)."""
    text = one_line(str(err)) or type(err).__name__
    if not isinstance(err, OrtpoolError):
        text = f"{type(err).__name__}: {text}"
    return text.removeprefix(f"{path}: ")


#: seconds a child lives past its ``timeout`` before its own alarm ends it (the parent kills it
#: at the timeout)
_ALARM_GRACE = 5


def _bound_to_parent(conn: Connection, timeout: float | None, folder: str | None = None) -> None:
    """In a child: ignore SIGINT, die with the parent (its end of ``conn`` closed; the run's
    ``folder`` removed first), and end by SIGALRM (even inside native code) after ``timeout``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, set(ENDING_SIGNALS))
    if timeout:
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(math.ceil(timeout) + _ALARM_GRACE)
    die_with_parent(conn, folder)


def _quiet_hold(tasks: Connection, send: Callable[[tuple[str, Any]], None]) -> Hold:
    """In a worker: the hold of its timing loops (:func:`ortpool.model.timing.set_quiet`). It
    asks the parent for quiet and waits until no other worker validates a model, its own alarm
    paused meanwhile (the wait is no time of its model: the parent's deadline waits too)."""

    @contextlib.contextmanager
    def hold() -> Iterator[None]:
        left = signal.alarm(0)
        send((_QUIET, None))
        try:
            tasks.recv()  # _GO: the parent sends a busy worker nothing else
        except (EOFError, OSError):  # the parent is gone
            os._exit(1)
        if left:
            signal.alarm(left)
        try:
            yield
        finally:
            send((_LOUD, None))

    return hold


def _serve(tasks: Connection, conn: Connection, work: Work, options: Any, strict_shapes: bool,
           folder: str, environment: dict[str, str], terminal: bool,
           timeout: float | None) -> None:
    """A worker child: models in through ``tasks`` ((path, output file), None to end), one at a
    time, each one's result out through ``conn``; its output goes to the model's file."""
    _bound_to_parent(conn, timeout, folder)  # SIGALRM ends it; armed again for each model
    warnings_as_lines("validate")  # as the parent's (ORTPOOL_KERNELS=bogus), not Python's
    # the forkserver's environment is the one it started with: take the run's
    kernels_choice = os.environ.get("ORTPOOL_KERNELS")
    os.environ.clear()
    os.environ.update(environment)
    # temporary files into the run's folder, which the parent removes (unless too deep for
    # multiprocessing's sockets)
    if len(os.fsencode(folder)) <= server.SOCKET_ROOM:
        os.environ["TMPDIR"] = tempfile.tempdir = folder
    if os.environ.get("ORTPOOL_KERNELS") != kernels_choice:
        from ortpool.kernels import set_backend

        set_backend(None)
    lock = threading.Lock()  # a compile note may come from a kernel thread

    def send(message: tuple[str, Any]) -> None:
        with lock:
            conn.send(message)

    def progress(done: int, total: int, label: str) -> None:
        # for the bar, and for a timeout to name the node the model was at
        send((_PROGRESS, (done, total, label)))

    set_quiet(_quiet_hold(tasks, send))
    if terminal:  # numba's compile note, on the command's terminal while the wait happens
        from ortpool.kernels import set_compile_relay

        set_compile_relay(lambda text: send((_NOTE, text)))
    while True:
        try:
            task = tasks.recv()
        except (EOFError, OSError):  # the parent is gone
            break
        if task is None:
            break
        path, output = task
        send((_TAKEN, None))  # from here on, a death is this model's
        try:
            fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        except OSError:  # the run's folder is gone: the parent ended before this model began
            os._exit(1)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        if timeout:  # SIGALRM's default action ends the process, even inside native code
            signal.alarm(math.ceil(timeout) + _ALARM_GRACE)
        message, sound = _validated(work, path, options, strict_shapes, progress)
        signal.alarm(0)
        # a fresh worker after a model whose failure may have left this process in any state,
        # or that made it large (the memory is not given back)
        retiring = not sound or _peak_bytes() > _RETIRE_BYTES
        if retiring:  # said first: the parent must not give this worker another model
            send((_RETIRING, None))
        send(message)
        if retiring:
            break
    conn.close()


def _validated(work: Work, path: str, options: Any, strict_shapes: bool,
               progress: Progress) -> tuple[tuple[str, Any], bool]:
    """One model's message to the parent (its result, or why there is none), and whether the
    process is as sound as before (a refusal ortpool names leaves it so; any other failure may
    not)."""
    try:
        return (_RESULT, work(path, options, strict_shapes, progress).portable()), True
    except OrtpoolError as err:  # a refusal: the model could not be validated
        return (results.COULD_NOT_RUN, _reason(err, path)), True
    except (OSError, ValueError, MemoryError) as err:  # failures the validator names
        return (results.COULD_NOT_RUN, _reason(err, path)), False
    except Exception as err:  # a defect of the validator: the run goes on, the report says where
        where = traceback.extract_tb(err.__traceback__)[-1]
        traceback.print_exc()
        why = f"internal error: {_reason(err, path)} (at {where.filename}:{where.lineno})"
        return (results.CRASHED, why), False


#: seconds a worker has to take the model it is given before the model's --timeout starts (a
#: spawned one imports the validator and onnxruntime first: about 1.5 s)
_STARTUP = 60.0

#: a worker that has held more than this (peak resident bytes) validates no further model
_RETIRE_BYTES = 1 << 30


def _pickled_bytes(value: Any) -> int:
    """The bytes of ``value``'s pickle, its arrays' not copied to count them (out of band)."""
    buffers: list[pickle.PickleBuffer] = []
    size = len(pickle.dumps(value, protocol=5, buffer_callback=buffers.append))
    return size + sum(buffer.raw().nbytes for buffer in buffers)


def _peak_bytes() -> int:
    import resource  # POSIX, as the worker's alarm and poll are

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def _writer_open(conn: Connection) -> bool:
    """Whether the child still holds its end of ``conn``, whatever it sent (an unread message
    is no sign of death): no POLLHUP on ours."""
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    return not any(event & select.POLLHUP for _, event in poller.poll(0))


@dataclasses.dataclass
class _Child:
    """A worker child as the parent sees it, and the model it is validating (``index`` None:
    idle)."""

    process: Any
    tasks: Connection
    conn: Connection | None
    index: int | None = None
    path: str = ""
    output: Path = Path()
    started: float = 0.0
    limit: float | None = None  # --timeout (the deadline moves on by the waits for quiet)
    flag: str = "--timeout"  # how the caller spells it (timeout, from Python)
    deadline: float | None = None
    progress: tuple[int, int, str] = (0, 0, "")
    message: tuple[str, Any] | None = None
    ended: str = ""  # why the child ended without a result
    retiring: bool = False  # it ends after this model
    taken: bool = False  # it has read the model it was given
    asked_quiet: float | None = None  # since when it waits to time its model alone
    quiet: bool = False  # it times its model alone: no other worker validates one
    served: int = 0  # models it has finished
    notes: list[str] = dataclasses.field(default_factory=list)  # to show at once

    def give(self, index: int, path: str, output: Path, timeout: float | None,
             flag: str) -> None:
        """Start a model on this (idle) child; OSError if the child is gone. Its clock starts
        once the child has taken the model (:meth:`drain`): a fresh spawned child imports the
        validator first, which is no time of the model's; it has :data:`_STARTUP` s for that."""
        self.tasks.send((path, str(output)))
        self.index, self.path, self.output = index, path, output
        self.started, self.limit, self.flag = time.monotonic(), timeout, flag
        self.deadline = self.started + timeout + _STARTUP if timeout else None
        self.progress, self.message, self.ended, self.taken = (0, 0, ""), None, "", False
        self.asked_quiet, self.quiet = None, False

    def drain(self) -> None:
        while self.conn is not None and self.message is None and self.conn.poll():
            try:
                kind, payload = self.conn.recv()
            except (EOFError, OSError):  # the child is gone (maybe halfway through a message)
                self._close()
                return
            if kind == _TAKEN:  # the model's clock starts
                self.started = time.monotonic()
                self.deadline = self.started + self.limit if self.limit else None
            if kind in _FLAGS:
                setattr(self, *_FLAGS[kind])
            elif kind == _PROGRESS:
                self.progress = payload
            elif kind == _NOTE:
                self.notes.append(payload)
            elif kind == _QUIET:
                self.asked_quiet = time.monotonic()
            else:
                self.message = (kind, payload)

    def _close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        self.tasks.close()

    def update(self, now: float) -> bool:
        """Read what the child sent; whether its model is done (a result, dead, out of time).
        Its pipe says whether it is alive, not its process (:meth:`kill`)."""
        self.drain()
        if self.message is not None:
            return True
        if self.conn is None:  # the end of its pipe: its messages are all in
            self.kill()
            self.ended = _death(self.process.exitcode)
            return True
        if self.deadline is not None and now >= self.deadline and self.asked_quiet is None:
            self.kill()
            self.message = (results.TIMED_OUT, self._timed_out())
            return True
        return False

    def _timed_out(self) -> str:
        text = f"no result within {self.limit:g} s ({self.flag}); killed"
        done, total, label = self.progress
        if total and label:
            text += f" while at node {label!r} ({done + 1} of {total})"
        return text

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        elif self.conn is not None and _writer_open(self.conn):
            # alive, its forkserver gone (multiprocessing then says ended, code 255): by its pid
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.join()
        self._close()

    def result(self) -> tuple[results.ModelResult, str]:
        """The model's result and its child's output (for stderr); the child is idle again."""
        text = _tail(self.output)
        path, message, self.index = self.path, self.message, None
        self.served += 1
        if message is not None and message[0] == _RESULT:
            result = message[1]
            result.path = path
            return result, text
        if message is not None:
            outcome, reason = message
        else:
            outcome, reason = results.CRASHED, self.ended
            last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
            if last:
                reason += f"; its last words: {one_line(last)[:300]}"
        return results.ModelResult(path=path, outcome=outcome, error=reason), text


def _tail(path: Path, limit: int = 1 << 20) -> str:
    """What a child printed: its last ``limit`` bytes (a runaway log must not fill the memory)."""
    try:
        with open(path, "rb") as file:
            size = file.seek(0, os.SEEK_END)
            file.seek(max(0, size - limit))
            data = file.read()
    except OSError:
        return ""
    text = data.decode(errors="replace")
    return f"[... the first {size - limit} bytes left out]\n{text}" if size > limit else text


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        sig = signal.Signals(-exitcode)
        what = signal.strsignal(sig) or sig.name
        return f"the process validating it died of {sig.name} ({what})"
    return f"the process validating it exited with code {exitcode} and no result"


def run_models(paths: Sequence[str], options: Any, *, jobs: int = 1,
               timeout: float | None = DEFAULT_TIMEOUT, strict_shapes: bool | None = None,
               progress: Progress | None = None,
               on_result: Callable[[results.ModelResult], None] | None = None,
               stderr: TextIO | None = None, work: Work = validate_one,
               style: str = CLI) -> list[results.ModelResult]:
    """Validate every model of ``paths`` in child processes, up to ``jobs`` at once.

    Returns one result per path, in the order given; ``on_result`` gets each as soon as it can
    (after the output its child printed, passed on to ``stderr``). ``strict_shapes`` (default: a
    single model) makes a ``--shape`` naming an input the model lacks an error; ``style``: the
    caller's (``python``: its messages name ``timeout``, not ``--timeout``). A script that
    calls this needs the ``if __name__ == "__main__":`` guard (the children import it).
    """
    stream = stderr if stderr is not None else sys.stderr
    server.start()  # not while signals are held (start_children): the server would inherit them
    with tempfile.TemporaryDirectory(prefix="ortpool-validate-") as folder:
        run = _Run(paths, options, work, jobs, timeout,
                   len(paths) == 1 if strict_shapes is None else strict_shapes, folder, progress,
                   on_result, stream, bool(getattr(stream, "isatty", lambda: False)()), style)
        try:
            while run.todo or run.busy:
                run.start_children()
                if not run.todo:  # nothing left to give the idle ones: their memory back now
                    run.stop_children()
                if run.busy:
                    run.grant_quiet()
                    run.wait()
                    run.collect()
                    run.show()
                run.emit()
            run.stop_children()
        finally:
            for child in run.children:  # interrupted: no child outlives the run
                child.kill()
    return run.found


@dataclasses.dataclass
class _Run:
    """One :func:`run_models` call: the models to start, running, finished and handed out, and
    the worker children (each validates one model at a time, model after model; one that dies,
    hangs or grows large is replaced by a fresh one forked from the server)."""

    paths: Sequence[str]
    options: Any
    work: Work
    jobs: int
    timeout: float | None
    strict_shapes: bool
    folder: str
    progress: Progress | None
    on_result: Callable[[results.ModelResult], None] | None
    stream: TextIO
    terminal: bool
    style: str = CLI  # the caller's: its options' names in the messages
    ctx: Any = dataclasses.field(default_factory=server.context)
    environment: dict[str, str] = dataclasses.field(default_factory=lambda: dict(os.environ))
    todo: collections.deque = dataclasses.field(init=False)
    children: list[_Child] = dataclasses.field(default_factory=list)
    finished: dict[int, tuple[results.ModelResult, str]] = dataclasses.field(default_factory=dict)
    found: list[results.ModelResult] = dataclasses.field(default_factory=list)
    restarted: set[int] = dataclasses.field(default_factory=set)  # models the server died for
    copied: int = dataclasses.field(init=False)  # the bytes of the options' pickle

    def __post_init__(self) -> None:
        self.todo = collections.deque(enumerate(self.paths))
        self.copied = _pickled_bytes(self.options)

    @property
    def busy(self) -> list[_Child]:
        return [c for c in self.children if c.index is not None]

    def start_children(self) -> None:
        """Give models to idle children, starting children up to ``jobs``; none while one waits
        to time its model alone or does (:meth:`grant_quiet`)."""
        while self.todo and not any(c.quiet or c.asked_quiet is not None for c in self.busy):
            idle = next((c for c in self.children if c.index is None), None)
            if idle is None and len(self.children) >= max(1, self.jobs):
                return
            index, path = self.todo.popleft()
            fresh = idle is None
            try:  # made again if a cleaner of the temporary folder took it (each model's output
                # goes there: a child that cannot open it ends, and the model seemed to crash)
                os.makedirs(self.folder, mode=0o700, exist_ok=True)
            except OSError as err:
                why = f"the run's temporary folder cannot be made again: {one_line(str(err))}"
                failed = results.ModelResult(path=path, outcome=results.COULD_NOT_RUN, error=why)
                self.finished[index] = (failed, "")
                continue
            try:
                with signals_held():  # started and recorded, so killed on the way out
                    if idle is None:
                        idle = self._start()
                        self.children.append(idle)
                    idle.give(index, path, Path(self.folder) / f"{index}.out", self.timeout,
                              label("timeout", self.style))
            except (OSError, EOFError, OrtpoolError) as err:
                if idle is not None:
                    self.children.remove(idle)
                    idle.kill()
                if not fresh:  # the idle child had ended (it retired): the model goes to another
                    self.todo.appendleft((index, path))
                    continue
                if isinstance(err, EOFError) and index not in self.restarted:
                    # the server died as it forked (killed: the out-of-memory killer may pick
                    # it): ended for good, so that the next start makes a fresh one; once
                    self.restarted.add(index)
                    server.stop()
                    self.todo.appendleft((index, path))
                    continue
                # no process to be had (EAGAIN, no memory, no room for the options): this model
                why = f"could not start a process for it: {one_line(str(err))}"
                failed = results.ModelResult(path=path, outcome=results.COULD_NOT_RUN, error=why)
                self.finished[index] = (failed, "")

    def _start(self) -> _Child:
        # multiprocessing pickles a worker's arguments as it starts it: the arrays' bytes, the
        # pickle, and the worker's copy (of the --inputs arrays: read, they fit; not thrice)
        check_memory("the model's options (the --inputs arrays among them), copied for its "
                     "process and twice while they are handed over", 3 * self.copied)
        receive, send = self.ctx.Pipe(duplex=False)
        task_in, task_out = self.ctx.Pipe(duplex=False)
        process = self.ctx.Process(
            target=_serve,
            args=(task_in, send, self.work, self.options, self.strict_shapes, self.folder,
                  self.environment, self.terminal, self.timeout),
            name="ortpool validate")
        process.start()
        send.close()  # the child's ends: once the child is gone, the parent reads EOF
        task_in.close()
        return _Child(process, task_out, receive)

    def grant_quiet(self) -> None:
        """The child that asked first times its model alone once every other busy child waits
        too (none validates a model): it is told to go, and the time it waited is added to its
        deadline. The others wait on, their deadlines with them."""
        busy = self.busy
        waiting = [c for c in busy if c.asked_quiet is not None]
        if not waiting or len(waiting) < len(busy) or any(c.quiet for c in busy):
            return
        child = min(waiting, key=lambda c: c.asked_quiet)
        try:
            child.tasks.send(_GO)
        except OSError:  # it is gone: update() says so
            return
        if child.deadline is not None:
            child.deadline += time.monotonic() - child.asked_quiet
        child.asked_quiet, child.quiet = None, True

    def wait(self) -> None:
        """Until a child sends, ends (its pipe's end: not its process's sentinel, which the death
        of its forkserver makes ready too) or reaches its deadline (one waiting for quiet has
        none)."""
        busy = self.busy
        deadlines = [c.deadline for c in busy if c.deadline is not None and c.asked_quiet is None]
        # at most an hour per wait: one wait of --timeout 1e7 s overflows poll's milliseconds
        limit = min(max(0.0, min(deadlines) - time.monotonic()), 3600.0) if deadlines else 3600.0
        wait([c.conn for c in busy if c.conn is not None], timeout=limit)

    def collect(self) -> None:
        """Each child's news: its notes passed on, its model's result once it is done; a child
        that ended (crashed, killed, retired) is let go."""
        now = time.monotonic()
        for child in self.busy:
            done = child.update(now)
            for note in child.notes:
                self._write(f"ortpool: {child.path}: {note}\n")
            child.notes.clear()
            if done and child.message is None and not child.taken and child.served:
                # a worker that ended while idle (killed from outside) before it read the
                # model: the model is not the cause, a fresh worker takes it
                self.todo.appendleft((child.index, child.path))
                child.index = None
            elif done:
                index = child.index  # (result() makes the child idle)
                self.finished[index] = child.result()
        for child in [c for c in self.children if c.index is None]:
            if child.retiring or child.conn is None or not child.process.is_alive():
                if child.retiring:  # it ends on its own
                    child.process.join(5.0)
                child.kill()
                self.children.remove(child)

    def stop_children(self) -> None:
        """Every idle child asked to end (killed if it has not within 5 s)."""
        for child in [c for c in self.children if c.index is None]:
            stop(child.process, child.tasks)
            child.kill()  # (ended: its pipes)
            self.children.remove(child)

    def emit(self) -> None:
        """Hand out the finished results that are next in the order given."""
        while len(self.found) in self.finished:
            result, text = self.finished.pop(len(self.found))
            if text:
                self._write(text if text.endswith("\n") else text + "\n")
            self.found.append(result)
            if self.on_result is not None:
                self.on_result(result)

    def _write(self, text: str) -> None:
        if self.progress is not None and hasattr(self.progress, "close"):
            self.progress.close()
        self.stream.write(text)
        self.stream.flush()

    def show(self) -> None:
        """The progress: a lone model's nodes, else the models done."""
        if self.progress is None:
            return
        busy = sorted(self.busy, key=lambda c: c.index)
        if len(self.paths) == 1:
            for child in busy:
                self.progress(*child.progress)
            return
        label = ""
        if busy:
            child = busy[0]
            label = Path(child.path).name
            if child.progress[1]:
                label += f" {child.progress[0]}/{child.progress[1]}"
        self.progress(len(self.found) + len(self.finished), len(self.paths), label)
