"""A test environment of its own, and marked tests run in it in a child process.

tests/project/test_lowest_runtime.py (the lowest onnxruntime release) and
tests/project/test_openvino.py (the OpenVINO build) each need an onnxruntime other than the main
environment's: every build and release installs the same module. Both build a venv at the
repository root, reuse it while what it was built from is unchanged (a JSON stamp inside it), and
run ``pytest -m MARK`` there with the numpy kernels (numba's first compile would cost minutes)
and a timeout.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure(
    venv: Path,
    stamp: Path,
    installs: Sequence[Sequence[str]],
    on_failure: Callable[[Sequence[str], str], None] | None = None,
) -> float | None:
    """Build ``venv`` with one ``pip install -q`` per entry of ``installs``, unless ``stamp``
    says it holds exactly those; the build's seconds, or None when it was reused. A failing
    install removes the venv and calls ``on_failure(arguments, stderr)`` (which may skip), or
    fails the test."""
    wanted: dict[str, Any] = {"pip": list(installs[0]), "python": sys.version}
    # The editable installation maps packages as pyproject.toml says when it is installed (the
    # top-level models/ is the package ortpool.models): a changed pyproject.toml rebuilds.
    wanted["pyproject"] = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if len(installs) > 1:
        wanted["then"] = [list(step) for step in installs[1:]]
    if stamp.is_file() and json.loads(stamp.read_text()) == wanted and python(venv).is_file():
        return None
    started = time.perf_counter()
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    for arguments in installs:
        done = subprocess.run(
            [str(python(venv)), "-m", "pip", "install", "-q", "--no-compile", *arguments],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if done.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            if on_failure is not None:
                on_failure(arguments, done.stderr)
            raise AssertionError(f"pip install {list(arguments)} failed:\n{done.stderr[-3000:]}")
    stamp.write_text(json.dumps(wanted, indent=2) + "\n")
    return time.perf_counter() - started


@dataclasses.dataclass
class ChildRun:
    """A finished ``pytest -m MARK`` in a child venv."""

    returncode: int
    stdout: str
    stderr: str
    counts: dict[str, int]
    seconds: float

    def failure(self) -> str:
        """The FAILED/ERROR lines, or the output's end when there are none."""
        failed = [line for line in self.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
        return "\n".join(failed) or self.stdout[-3000:] + self.stderr[-3000:]


def run_marked(
    venv: Path,
    mark: str,
    target: Path | Sequence[Path],
    report: Path,
    timeout: float,
    workers: str = "auto",
) -> ChildRun:
    """``pytest -m mark target...`` with ``venv``'s Python, the numpy kernels, no cache, a JUnit
    report at ``report`` (for the counts), within ``timeout`` seconds."""
    env = dict(os.environ, ORTPOOL_KERNELS="numpy")
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    started = time.perf_counter()
    done = subprocess.run(
        [
            str(python(venv)),
            "-m",
            "pytest",
            "-m",
            mark,
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={report}",
            # pytest-xdist's workers ("0": in the one process, for a handful of tests)
            "-n",
            workers,
            *map(str, [target] if isinstance(target, Path) else target),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    seconds = time.perf_counter() - started
    suite = ET.parse(report).getroot().find("testsuite")
    counts = {key: int(suite.get(key, 0)) for key in ("tests", "failures", "errors", "skipped")}
    return ChildRun(done.returncode, done.stdout, done.stderr, counts, seconds)
