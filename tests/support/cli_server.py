"""``python -m ortpool ARGS`` children (or a test's own child function) forked from a server
that imported ortpool once.

A command run as a fresh ``python -m ortpool`` spends about 0.5 s of CPU importing numpy, onnx
and ortpool's command modules before it does anything; the suite starts a few hundred. This
server, started once per test process with the environment of a user's shell, imports them
once and forks one child per command: each child is still a process of its own (its exit status
or signal, its stdout and stderr, its working folder and environment, killed after its time
limit), as ``subprocess.run`` gives. onnxruntime is not imported by the server (a command that
needs it imports it, as a fresh process does; some tests check what a command does not import).

The server is single-threaded (a fork from a threaded process may inherit a held lock): it reads
one JSON request per line on stdin, forks, answers ``{"id", "pid"}`` and, when the child ends,
``{"id", "status"}`` (the exit status, or minus the signal) on stdout.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: What the server imports once. pytest too: a test's own child function lives in a test module,
#: which imports it (0.19 s of CPU a child: 8 of the 13 s test_stress's 42 children took).
PRELOAD = ("numpy", "onnx", "ortpool.cli", "ortpool.validate.cli", "ortpool.fix.cli", "pytest")


def _child(request: dict) -> None:
    """In the forked child: be ``python -m ortpool ARGS`` in the request's folder and env."""
    import atexit
    import runpy
    import traceback

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.stdin = open(os.devnull)  # noqa: SIM115 - the child's whole life
    for path, fd in ((request["out"], 1), (request["err"], 2)):
        opened = os.open(path, os.O_WRONLY | os.O_TRUNC)
        os.dup2(opened, fd)
        os.close(opened)
    # The server's stdout is its answer pipe: the child writes to fd 1 through a stream of its own.
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    code = 0
    try:
        if "call" in request:  # a test's own child: module.function(*args)
            import importlib

            module, function, args = request["call"]
            getattr(importlib.import_module(module), function)(*args)
        else:
            sys.argv = ["ortpool", *request["args"]]
            runpy.run_module("ortpool", run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code or 0
        else:  # sys.exit("message"): printed to stderr, status 1, as the interpreter does
            print(stop.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        atexit._run_exitfuncs()  # os._exit runs none
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def serve() -> None:
    for name in PRELOAD:
        __import__(name)
    answers = os.fdopen(os.dup(1), "w")
    running: dict[int, str] = {}
    pending = b""
    while True:
        ready, _, _ = select.select([0], [], [], 0.05 if running else None)
        if ready:
            data = os.read(0, 65536)
            if not data:
                break  # the test process is gone
            pending += data
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    answers.close()
                    _child(request)
                running[pid] = request["id"]
                answers.write(json.dumps({"id": request["id"], "pid": pid}) + "\n")
                answers.flush()
        while running:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            rid = running.pop(pid)
            answers.write(json.dumps({"id": rid, "status": os.waitstatus_to_exitcode(status)}))
            answers.write("\n")
            answers.flush()


class CliServer:
    """The test process's side: one server, requests from any thread."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from tests.support.cli_server import serve; serve()"],
            cwd=ROOT,
            env={**env, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.lock = threading.Lock()
        self.next_id = 0
        self.answers: dict[str, dict] = {}
        self.closed = False  # the server's answers ended (it died)
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            answer = json.loads(line)
            with self.changed:
                self.answers.setdefault(answer["id"], {}).update(answer)
                self.changed.notify_all()
        with self.changed:
            self.closed = True
            self.changed.notify_all()

    def _wait(self, rid: str, key: str, timeout: float | None) -> object:
        with self.changed:
            self.changed.wait_for(lambda: key in self.answers.get(rid, {}) or self.closed, timeout)
            if key not in self.answers.get(rid, {}):
                if self.closed:
                    raise RuntimeError(f"the command server ended ({self.process.poll()})")
                return None
            return self.answers[rid][key]

    def run(
        self,
        args: list[str],
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        call: tuple[str, str, list] | None = None,
    ) -> subprocess.CompletedProcess:
        """``python -m ortpool ARGS`` or, with ``call`` (module, function, arguments), that
        function in a child of its own."""
        import signal
        import tempfile

        command = [sys.executable, "-m", "ortpool", *args] if call is None else list(call)
        with tempfile.TemporaryDirectory(prefix="ortpool-cli-") as folder:
            out, err = Path(folder, "stdout"), Path(folder, "stderr")
            out.touch()
            err.touch()
            with self.lock:
                self.next_id += 1
                rid = str(self.next_id)
                request = {
                    "id": rid,
                    "args": args,
                    "cwd": str(cwd),
                    "env": dict(env),
                    "out": str(out),
                    "err": str(err),
                }
                if call is not None:
                    request["call"] = list(call)
                self.process.stdin.write(json.dumps(request) + "\n")
                self.process.stdin.flush()
            pid = self._wait(rid, "pid", 60)
            if pid is None:
                raise RuntimeError("the command server did not start the child in 60 s")
            status = self._wait(rid, "status", timeout)
            hung = status is None
            if hung:
                os.kill(pid, signal.SIGKILL)
                status = self._wait(rid, "status", 60)
            with self.changed:
                self.answers.pop(rid, None)
            stdout = out.read_text(errors="replace")
            stderr = err.read_text(errors="replace")
        if hung:
            raise subprocess.TimeoutExpired(command, timeout, output=stdout, stderr=stderr)
        return subprocess.CompletedProcess(command, status, stdout, stderr)
