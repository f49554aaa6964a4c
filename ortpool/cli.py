"""The ``ortpool`` command line: a thin dispatcher over one module per subcommand, imported only
when that subcommand runs (``ortpool rewrite`` never imports onnxruntime). A subcommand (a
module, or ``module:NAME``) provides ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from ortpool import __version__
from ortpool.errors import OrtpoolError, safe, warnings_as_lines
from ortpool.staging import ENDING_SIGNALS

#: subcommand -> module implementing it (``module:NAME``: an object of that module)
COMMANDS: dict[str, str] = {  # in the order ``ortpool --help`` lists them: a user's path first
    "validate": "ortpool.validate.cli",
    "fix": "ortpool.fix.cli",
    "bench": "ortpool.bench.cli",
    "conformance": "ortpool.conformance.cli",
    "rewrite": "ortpool.rewrite.cli:REWRITE",
    "restore": "ortpool.rewrite.cli:RESTORE",
    "ops": "ortpool.ops_cli",
    "warmup": "ortpool.warmup_cli",
}

#: subcommand -> its line in ``ortpool --help`` (the listing imports no command's module; each
#: module's ``HELP`` is its own ``--help``'s description)
SUMMARIES: dict[str, str] = {
    "validate": "compare onnxruntime's built-in pooling with the spec on models",
    "fix": "rewrite pooling nodes into forms onnxruntime computes exactly",
    "bench": "time a model against its fixed form, or the bundled pool cases",
    "conformance": "sweep a generated grid of pooling cases through onnxruntime",
    "rewrite": "replace standard pooling nodes by ortpool's spec-exact op types",
    "restore": "turn ortpool's op types back into standard pooling nodes",
    "ops": "list ortpool's op types, their inputs, types and attributes",
    "warmup": "compile the numba kernels ahead of time (container builds)",
}

USAGE_ERROR = 2

#: subcommand -> a module whose ``start()`` runs before the subcommand's module is imported (the
#: imports overlap what it starts) and whose ``stop()`` undoes it when the command line is refused
EARLY: dict[str, str] = {"validate": "ortpool.validate.server"}

#: Commands that are not latency-critical: their kernels never wait for numba to compile (the
#: numpy plans give the same bits), see :func:`ortpool.kernels.prefer_loaded`.
NO_COMPILE = frozenset({"validate", "fix", "conformance"})


def _command(name: str) -> Any:
    """The object implementing subcommand ``name``, its module imported now."""
    module_name, _, attribute = COMMANDS[name].partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attribute) if attribute else module


class Interrupted(BaseException):
    """SIGINT, SIGTERM or SIGHUP arrived: raised where the command was, so every ``finally`` on
    the way out runs; a BaseException, so no ``except Exception`` takes it for a failure."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _interrupt(signum: int, frame: object) -> None:
    # The first signal ends the command; a second one (Ctrl-C pressed again, a supervisor's
    # SIGTERM after SIGINT) must not cut the cleanup short, so all are ignored from now on.
    for sig in ENDING_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    raise Interrupted(signum)


@contextlib.contextmanager
def _signals_end_the_command():
    """SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` while the command runs (main thread
    only); a SIGHUP the command was started ignoring (``nohup``) stays ignored."""
    hangup = getattr(signal, "SIGHUP", None)
    caught = [sig for sig in ENDING_SIGNALS
              if sig != hangup or signal.getsignal(sig) != signal.SIG_IGN]
    try:
        previous = {sig: signal.signal(sig, _interrupt) for sig in caught}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _closed_streams_to_devnull() -> None:
    """A standard stream the command was started without (``>&-``, ``2>&-``, ``<&-``: Python
    makes it None) is opened on the null device: its output is discarded, and the descriptor is
    not taken by the next file or pipe opened (a child's protocol pipe read as its stdout)."""
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        try:
            null = os.open(os.devnull, os.O_RDWR)
        except OSError:  # no null device: nothing better to do
            continue
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        os.set_inheritable(fd, True)  # the children's standard stream too
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, closefd=False))  # noqa: SIM115  # for the process


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` names; its exit code. Interrupted by SIGINT, SIGTERM or SIGHUP (a
    closed terminal), it cleans up and returns 128 + the signal (130, 143, 129) without a word; a
    closed stdout (``| head``) ends it quietly with 141, as SIGPIPE would."""
    _closed_streams_to_devnull()
    try:
        with _signals_end_the_command():
            code = _main(argv)
            sys.stdout.flush()  # here, not at exit: a closed pipe is then caught below
            return code
    except Interrupted as stop:
        return 128 + stop.signum
    except KeyboardInterrupt:  # a SIGINT before the handler was set, or raised by hand
        return 128 + signal.SIGINT
    except BrokenPipeError:
        # What Python's documentation advises: the reader is gone, so the rest of the output
        # goes nowhere (a flush at exit would fail again and print a traceback).
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 128 + signal.SIGPIPE


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="ortpool",
        description="Spec-exact ONNX pooling for onnxruntime: validate onnxruntime's built-in "
        "pooling against the spec, fix models to compute it exactly, rewrite them to ortpool's "
        "op types, benchmark.",
        epilog="'ortpool COMMAND --help' gives a command's options.")
    parser.add_argument("--version", action="version", version=f"ortpool {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if not a.startswith("-")), None)
    early = None
    if chosen in EARLY and not {"-h", "--help", "--version"} & set(argv):
        early = importlib.import_module(EARLY[chosen])
        early.start()
    chosen_parser = parser
    for name in COMMANDS:
        if name == chosen:
            command = _command(name)
            chosen_parser = sub.add_parser(name, help=SUMMARIES[name], description=command.HELP)
            command.add_arguments(chosen_parser)
        else:
            # Listed for --help without importing the module (and its dependencies).
            sub.add_parser(name, help=SUMMARIES[name], add_help=False)
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # argparse says it in the top parser's words and usage, not the command's
            chosen_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit:  # refused (exit 2)
        if early is not None:
            early.stop()
        raise
    if args.command is None:
        parser.print_help()
        return USAGE_ERROR
    from ortpool.kernels import prefer_loaded

    try:
        command = _command(args.command)
        with (prefer_loaded() if args.command in NO_COMPILE else contextlib.nullcontext(),
              warnings.catch_warnings()):  # Python's own restored after (main run in-process)
            warnings_as_lines(args.command)
            return int(command.run(args))
    except ModuleNotFoundError as err:
        # ortpool requires no onnxruntime build (it would replace the user's): a command that
        # needs one and finds none says in one line what to install.
        if (err.name or "").split(".")[0] != "onnxruntime":
            raise
        from ortpool.ort import INSTALL_HINT

        print(f"ortpool {args.command}: error: {INSTALL_HINT}", file=sys.stderr)
        return USAGE_ERROR
    except BrokenPipeError:
        raise  # not an error of the command: its reader is gone (main ends quietly)
    except (OrtpoolError, OSError) as err:
        # a message quotes paths and the model's names (a newline or an escape sequence in
        # them would break the line or clear the screen): printed as their escapes
        print(f"ortpool {args.command}: error: {safe(err)}", file=sys.stderr)
        return USAGE_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
