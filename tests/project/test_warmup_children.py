"""The suite's own hygiene: tests/conftest.py starts two numba warm-up children with every run
(the compiles overlap the first tests); a run that ends before their compiles do stops them,
the wrapper and the warm-up it runs alike, so nothing keeps compiling on the cores the next
run needs."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time

import pytest

from tests.support import CHILD_ENV, ROOT


def _commands_naming(text: str) -> list[str]:
    """The command lines of this machine's processes whose command line or environment holds
    ``text``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                line = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().decode(errors="replace")
        except OSError:  # ended meanwhile, or another user's
            continue
        if text in line or text in environ:
            found.append(line)
    return found


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is not installed")
def test_a_short_run_leaves_no_warm_up_process_behind(tmp_path):
    # an empty numba cache: the warm-up compiles for tens of seconds, far longer than the run
    env = {**CHILD_ENV, "TMPDIR": str(tmp_path), "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
           "ORTPOOL_TEST_WARMUP": "1"}
    env.pop("ORTPOOL_KERNELS", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
         "tests/spec/test_geometry.py::test_kernel_longer_than_padded_input_is_not_an_error"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    # the warm-up children carry the run's TMPDIR (and its numba cache) in their environment;
    # give a killed process the moment the kernel takes to reap it
    deadline = time.monotonic() + 5
    while _commands_naming(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _commands_naming(str(tmp_path)) == []
