"""The note that numba is compiling: logged for a real compile only (not for a load from numba's
cache), printed on stderr over the current line on a terminal, as a plain line into a pipe,
never on stdout."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parents[2]

# A MaxUnpool call above NUMBA_MIN_BYTES: its kernel (the scatter) compiles in under a second.
UNPOOL_TWICE = """
import logging, sys
import numpy as np
logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(name)s: %(message)s")
from ortpool import kernels
x = np.ones((1, 16, 32, 32), np.float32)
i = np.arange(x.size, dtype=np.int64).reshape(x.shape)
for _ in range(2):
    kernels.max_unpool(x, i, kernel_shape=[1, 1])
print("done")
"""


def _run(code: str, cache: Path, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(cache),
           "ORTPOOL_KERNELS": ""}
    return subprocess.run([sys.executable, "-c", code], env=env, timeout=300, text=True,
                          **kwargs)


def test_a_compile_is_logged_once_and_a_cache_load_not_at_all(tmp_path):
    first = _run(UNPOOL_TWICE, tmp_path, capture_output=True, check=True)
    assert first.stdout.splitlines()[0] == (
        "ortpool: compiling the numba kernel for float MaxUnpool (first use, under a second, "
        "cached on disk afterwards; `ortpool warmup` does it ahead of time)"
    )
    assert first.stdout.splitlines()[1].startswith(
        "ortpool: compiled the numba kernel for float MaxUnpool in "
    )
    assert first.stdout.splitlines()[2:] == ["done"]
    assert first.stderr == ""
    again = _run(UNPOOL_TWICE, tmp_path, capture_output=True, check=True)
    assert again.stdout == "done\n"


# Compile events as numba sends them, without the 10 s a real MaxPool compile takes.
ANNOUNCE = """
import numpy as np
from numba import types
from numba.core import event
from ortpool.kernels import _backend, _numba
assert _backend.backend() == "numba"  # installs the listener
for kernel in (_numba.max_planes, _numba.max_planes, _numba.scatter):
    data = {"dispatcher": kernel, "args": (types.float32[::1], types.int64)}
    event.broadcast(event.Event("numba:compile", event.EventStatus.START, data=data))
    event.broadcast(event.Event("numba:compile", event.EventStatus.END, data=data))
print("done")
"""


def test_the_note_goes_to_a_terminal_over_the_line_and_plain_into_a_pipe(tmp_path):
    main, child = pty.openpty()
    try:
        done = _run(ANNOUNCE, tmp_path, stdout=subprocess.PIPE, stderr=child, check=True)
        os.close(child)
        child = -1
        seen = b""
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the child end is closed: everything was read
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if child >= 0:
            os.close(child)
        os.close(main)
    assert done.stdout == "done\n"
    note = (
        "\r\x1b[Kortpool: compiling the numba kernel for float MaxPool (first use, 10-20 s on "
        "2 cores, cached on disk afterwards; `ortpool warmup` does it ahead of time)"
    )
    # One line per compile of the slow kernels (a terminal turns \n into \r\n); the scatter's
    # fraction of a second is not worth a line.
    assert seen.decode().split("\r\n") == [note, note, ""]
    # Not a terminal (a CI log, a service's stderr): the same line, plain, so a stall is
    # explained there too (it used to be silent).
    piped = _run(ANNOUNCE, tmp_path, capture_output=True, check=True)
    plain = note.removeprefix("\r\x1b[K")
    assert (piped.stdout, piped.stderr) == ("done\n", f"{plain}\n{plain}\n")


#: Each compiled kernel's note: (kernel, element type, the wait it names).
NOTES = [
    ("max_planes", "float64", "10-20 s on 2 cores"),
    ("average_planes", "float32", "10-20 s on 2 cores"),
    ("max_indices", "float32", "10-20 s on 2 cores"),
    ("plane_sums", "float64", "5-10 s on 2 cores"),
    ("scatter", "float32", "under a second"),
    ("roi_max", "float32", "under a second"),
]


@pytest.mark.parametrize(("kernel", "dtype", "wait"), NOTES)
def test_the_note_says_how_long_each_kernel_takes(kernel, dtype, wait):
    # The wait measured cold on the 2-core machine (_compile_note.KERNELS): a float64 MaxPool
    # took up to 21.7 s where the note said "about 10 s".
    from ortpool.kernels import _compile_note

    operator = _compile_note.KERNELS[kernel][1]
    onnx_name = {"float32": "float", "float64": "double"}[dtype]  # numba's names, ONNX's shown
    assert _compile_note.message(kernel, dtype) == (
        f"compiling the numba kernel for {onnx_name} {operator} (first use, {wait}, cached on "
        "disk afterwards; `ortpool warmup` does it ahead of time)"
    )
    # while the warm-up runs, the note does not send the user to the warm-up
    with _compile_note.warming_up():
        assert _compile_note.message(kernel, dtype) == (
            f"compiling the numba kernel for {onnx_name} {operator} ({wait}, cached on disk)"
        )


def test_every_kernel_has_its_note_and_the_quick_ones_stay_off_the_terminal():
    from ortpool.kernels import _compile_note

    assert sorted(kernel for kernel, _, _ in NOTES) == sorted(_compile_note.KERNELS)
    assert sorted(_compile_note.QUICK) == ["roi_max", "scatter"]
