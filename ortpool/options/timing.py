"""How long and how often (``repeat``, ``min_sample_ms``, ``timeout``, ``jobs``,
``reference_timeout``): each flag declared once and each value checked by one function."""

from __future__ import annotations

import argparse
from typing import Any

from ortpool import values
from ortpool.options import CLI, label

#: seconds the onnx reference evaluator may take on one node of validate (``--reference``)
NODE_REFERENCE_TIMEOUT = 20.0
#: seconds a model may take by default (``--timeout``; 0: no limit): a hang must end, a first
#: numba compile takes ~40 s
DEFAULT_TIMEOUT = 900.0
#: models validated at once by default (``--jobs``): None, one per core for a small run, else one
#: (``ortpool.validate.batch.jobs_from``: onnxruntime already spreads a large model over the
#: cores, and each child holds a whole model)
DEFAULT_JOBS = None
#: the most timed rounds taken: a million rounds of a 5 ms sample are two hours
MAX_REPEAT = 1_000_000
#: the longest sample, in ms: a longer one only slows the run
MAX_SAMPLE_MS = 1000.0


def add_jobs(parser: argparse.ArgumentParser) -> None:
    """``-j/--jobs`` and ``--timeout`` of a command that runs each model in a child process."""
    parser.add_argument(
        "-j", "--jobs", type=values.integer, default=DEFAULT_JOBS, metavar="N",
        help="validate up to N models at once, each in its own process (0: one per core; "
        "default: one per core for models of at most 256 MiB in all without external data, "
        "else 1); the report is the same for any N")
    parser.add_argument(
        "--timeout", type=values.real, default=DEFAULT_TIMEOUT, metavar="SECONDS",
        help=f"time limit per model ({DEFAULT_TIMEOUT:g}; 0: none): a model over it is killed "
        "and reported as timed out")


def add_reference_timeout(parser: argparse.ArgumentParser, default: float, what: str) -> None:
    """``--reference-timeout SECONDS``; ``what`` ends its help (what the limit applies to)."""
    parser.add_argument(
        "--reference-timeout", type=values.real, default=default, metavar="SECONDS",
        help=f"time limit of the onnx reference evaluator {what} (default {default:g})")


def add_repeat(parser: argparse.ArgumentParser, repeat: int, min_sample_ms: float) -> None:
    """``--repeat N`` and ``--min-sample-ms MS`` of a command that times."""
    parser.add_argument(
        "--repeat", type=values.integer, default=repeat, metavar="N",
        help="timed rounds (per case, or of MODEL); every variant is sampled once per round "
        f"(default {repeat})")
    parser.add_argument(
        "--min-sample-ms", type=values.real, default=min_sample_ms, metavar="MS",
        help=f"each sample repeats the call until it lasts this long (default {min_sample_ms:g})")


def jobs(value: Any, style: str = CLI) -> int | None:
    """``jobs``: models at once, 0 for one per core, None for the default (by the run's size)."""
    if value is None:
        return None
    return values.count(label("jobs", style), value, 0, 4096, "0: one per core")


def timeout(value: Any, style: str = CLI) -> float | None:
    """``timeout``: seconds per model, or None (0, the shell's spelling, too) for no limit."""
    if value is None:  # the API's default was None: a caller's no limit stays one
        return None
    return values.seconds(label("timeout", style), value, zero="0: no limit") or None


def reference_timeout(value: Any, style: str = CLI, *, zero: str = "") -> float:
    """``reference_timeout``: seconds; 0 only where ``zero`` says what it means."""
    return values.seconds(label("reference_timeout", style), value, zero=zero)


def repeat(value: Any, style: str = CLI) -> int:
    """``repeat``: timed rounds, at least one."""
    return values.count(label("repeat", style), value, 1, MAX_REPEAT)


def min_sample(value: Any, style: str = CLI) -> float:
    """``min_sample_ms`` in seconds."""
    return values.amount(label("min_sample_ms", style), value, 0, MAX_SAMPLE_MS) / 1000
