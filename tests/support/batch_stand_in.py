"""A stand-in for validating one model, for tests/validate/test_batch.py: imported by the
runner's child processes, so it imports no pytest and no test module (only the package
tests.support on the way, whose imports are ortpool's and onnx's)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from ortpool.errors import OrtpoolError
from ortpool.report import record as results

#: how long a "busy" model is mid-model, and a "timed" model's timing loop: at least its rounds
#: times its sample, whatever the machine's speed (each call sleeps)
BUSY_SECONDS = 2.5
TIMED_ROUNDS, TIMED_SAMPLE = 16, 0.1

LAST_WORDS = "terminate called after throwing an instance of 'Ort::Exception'\n  what():  boom"


def work(path: str, options, strict_shapes: bool, progress) -> results.ModelResult:
    """What a child does with each stand-in "model": its name says what happens."""
    name = Path(path).name
    progress(0, 3, "first")
    if name.startswith("slow"):  # finishes after the models given after it
        time.sleep(0.5)
    if name == "abort":  # what std::terminate does: its message on stderr, then SIGABRT
        print(LAST_WORDS, file=sys.stderr, flush=True)
        os.abort()
    if name == "hang":
        progress(1, 3, "pool_1")
        time.sleep(600)
    if name == "refused":
        raise OrtpoolError(f"{path}: input 'x' has a symbolic dim and no --shape")
    if name == "bug":
        raise TypeError("unsupported operand")
    if name.startswith("big"):  # more than a worker may hold before it retires
        held = b"x" * (batch_retire_bytes() + (1 << 20))
        del held
    if name.startswith("note"):  # numba's compile note, made in a model's process
        from ortpool.kernels import _compile_note

        _compile_note.announce("compiling a kernel (stand-in)")
    if name.startswith("busy"):  # mid-model for a while: when, on the wall clock
        start = time.time()
        time.sleep(BUSY_SECONDS)
        print(f"{name} busy from {start!r} to {time.time()!r}", file=sys.stderr)
    if name.startswith("timed"):  # a timing loop, as the guard's price runs one
        from ortpool.model import timing

        calls: list[float] = []
        def call() -> None:
            calls.append(time.time())
            time.sleep(0.002)

        timing.interleaved({"a": call}, repeat=TIMED_ROUNDS, min_sample=TIMED_SAMPLE, warmup=1,
                           warmup_time=0.0)
        print(f"{name} timed from {calls[0]!r} to {calls[-1]!r}", file=sys.stderr)
        if name.endswith("hang"):  # then hangs: past its --timeout, the wait for quiet aside
            progress(1, 3, "pool_1")
            time.sleep(600)
    print(f"chatter of {name} in process {os.getpid()}", file=sys.stderr)
    return results.ModelResult(path="", opset=int(options))


def batch_retire_bytes() -> int:
    from ortpool.validate import batch

    return batch._RETIRE_BYTES


class Held:
    """Stand-in options that hold an array of ``nbytes`` (as the --inputs arrays are held): the
    opset 3 for :func:`work`."""

    def __init__(self, nbytes: int) -> None:
        import numpy as np

        self.array = np.ones(nbytes, np.uint8)

    def __int__(self) -> int:
        return 3
