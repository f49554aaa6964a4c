"""pytest set-up for the ortpool tests: a deterministic hypothesis profile, numba's compiles paid
once per run in one place, and the figures the property and backend tests report at the end of
the run (examples per op and version)."""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Byte-code caches for the checkout's sources, before anything of it is imported here: with
# PYTHONDONTWRITEBYTECODE=1 (set on the development machines) every process of a run compiled
# ortpool's and the tests' sources again: a collection took 8.2 s of CPU instead of 3.5, and a
# fresh child importing ortpool's commands 0.85 s instead of 0.6. A cache changes no behaviour;
# the run's processes (workers, children, the child venvs' runs) inherit the environment.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

# The reports fit the terminal's width (COLUMNS first, as shutil reads it): one width for the
# whole run and its children, whatever terminal runs the suite (a test that needs another width
# sets COLUMNS itself)
os.environ["COLUMNS"] = "100"

# imported after the switch above
import pytest
from hypothesis import HealthCheck, settings

from ortpool import versions
from tests import support

# CI: the same examples on every run (derandomize), no per-example deadline (the first call of a
# shape pays for geometry caches and session creation). ORTPOOL_HYPOTHESIS=thorough draws from a
# random seed; ORTPOOL_HYPOTHESIS_SCALE=10 multiplies every example budget
# (tests/kernels/test_properties.py).
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,  # no replay of examples saved by an earlier run: the same set every time
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile(
    "thorough",
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.load_profile(os.environ.get("ORTPOOL_HYPOTHESIS", "ci"))


# numba's compiles, once per run in one place. A cold cache costs 83-145 s of CPU by the host
# (the big kernels for float32 and float64 at 8-19 s each; int8 and uint8 run on the float32
# loops), which used to land inside whichever test first made a 64 KB call. Two children
# started before collection (one per core) compile every kernel into numba's on-disk cache with
# ortpool.kernels.warmup (the split: support.WARMUP_CHILDREN), while the tests that need no
# compiled kernel run; the first import of a compiled-kernel module in a test process (the main
# one, or each pytest-xdist worker) waits until both have written their exit status, then loads
# every kernel from the cache in milliseconds. Tests that need a cold cache set their own
# NUMBA_CACHE_DIR (test_compile_note).
_NUMBA_MODULES = frozenset(f"ortpool.kernels.{name}" for name in ("_numba", "_numba_family"))
#: Modules whose tests use the compiled kernels throughout, in this process or in the child
#: processes they start (which the import guard cannot hold): they run last and wait for the
#: warm-up before their first test, so that no child compiles a kernel again (paths under tests/).
_COMPILED_LAST = (
    "kernels/test_numba_cache.py",
    "kernels/test_limits.py",
    "ort/test_hook_failures.py",
    "validate/test_accuracy.py",
    "ort/test_backend_cases.py",
    "kernels/test_properties.py",
    "kernels/test_properties_lp_global_roi.py",
    "kernels/test_backend.py",
    "kernels/test_backend_lp_global_roi.py",
    "kernels/test_large_inputs.py",
    "kernels/test_ruling19.py",
    "fix/test_forms.py",
)
#: Modules whose one test runs for minutes in child processes (a child venv's pytest, a wheel
#: build): first, so that they overlap the rest of the run instead of ending it.
_LONG_FIRST = (
    "project/test_lowest_runtime.py",
    "project/test_openvino.py",
    "project/test_wheel.py",
)
#: Where the warm-up children write their exit status (inherited by pytest-xdist's workers).
_WARMUP_DIR_ENV = "ORTPOOL_TEST_WARMUP_DIR"
TESTS = Path(__file__).resolve().parent
WARMUP: dict[str, object] = {}


class _AfterWarmup(importlib.abc.MetaPathFinder):
    """Holds the first import of a compiled-kernel module until the warm-up children are done."""

    def find_spec(self, name, path=None, target=None):
        if name in _NUMBA_MODULES:
            wait_for_warmup()
        return None  # the ordinary finders import it


#: A child's command: run the rest of its arguments, then write their exit status to the file
#: argv[1].
_WARMUP_WRAPPER = (
    "import subprocess, sys\n"
    "code = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "open(sys.argv[1] + '.part', 'w').write(str(code))\n"
    "import os; os.replace(sys.argv[1] + '.part', sys.argv[1])\n"
)
#: What the wrapper runs: ortpool's warm-up for each (element types, kernels) of argv[1].
_WARMUP_STEPS = (
    "import json, sys\n"
    "from ortpool.kernels.warmup import warm_up\n"
    "for dtypes, kernels in json.loads(sys.argv[1]):\n"
    "    warm_up(dtypes, kernels)\n"
)


def _status_files() -> list[str]:
    folder = os.environ.get(_WARMUP_DIR_ENV)
    if not folder:
        return []
    return [os.path.join(folder, f"status-{i}") for i in range(len(support.WARMUP_CHILDREN))]


def wait_for_warmup() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _AfterWarmup)]
    files = _status_files()
    if not files or "waited" in WARMUP:
        return
    start = time.perf_counter()
    deadline = start + 900
    while not all(os.path.exists(f) for f in files) and time.perf_counter() < deadline:
        time.sleep(0.1)
    WARMUP["waited"] = time.perf_counter() - start
    codes = [int(Path(f).read_text() or 1) if os.path.exists(f) else -1 for f in files]
    WARMUP["returncode"] = max(codes, key=abs)


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config):
    if _is_worker(config):
        if _status_files():
            sys.meta_path.insert(0, _AfterWarmup())
        return
    os.environ.pop(_WARMUP_DIR_ENV, None)
    if os.environ.get("ORTPOOL_KERNELS", "").strip().lower() == "numpy":
        return
    # A quick run of a few files on a cold cache may prefer to compile only what it uses.
    if os.environ.get("ORTPOOL_TEST_WARMUP", "1") == "0":
        return
    if importlib.util.find_spec("numba") is None:
        return
    folder = tempfile.mkdtemp(prefix="ortpool-warmup-")
    os.environ[_WARMUP_DIR_ENV] = folder  # before pytest-xdist starts its workers
    env = {k: v for k, v in os.environ.items() if k != "ORTPOOL_KERNELS"}
    WARMUP["folder"] = folder
    WARMUP["children"] = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _WARMUP_WRAPPER,
                status,
                sys.executable,
                "-c",
                _WARMUP_STEPS,
                json.dumps(steps),
            ],
            env=env,
            # a group of its own: the wrapper and the warm-up it runs are stopped together
            start_new_session=True,
        )
        for status, steps in zip(_status_files(), support.WARMUP_CHILDREN, strict=True)
    ]
    sys.meta_path.insert(0, _AfterWarmup())


def pytest_collection_modifyitems(session, config, items):
    def rank(item) -> int:
        name = _tests_path(item)
        if name in _LONG_FIRST:
            return _LONG_FIRST.index(name) - len(_LONG_FIRST)
        return _COMPILED_LAST.index(name) + 1 if name in _COMPILED_LAST else 0

    items.sort(key=rank)  # stable: the order within each module is kept


def _tests_path(item) -> str:
    path = item.path.resolve()
    return path.relative_to(TESTS).as_posix() if path.is_relative_to(TESTS) else ""


def pytest_runtest_setup(item):
    if _tests_path(item) in _COMPILED_LAST:
        wait_for_warmup()


def _figures() -> dict:
    """What this process gathered for the summary (sent from a worker to the main process)."""
    return {
        "warmup": {k: WARMUP[k] for k in ("waited", "returncode") if k in WARMUP},
        "lowest": dict(support.LOWEST_RUN),
        "backend": [list(r) for r in support.BACKEND_RUNS],
        "examples": [[op, v, path, n] for (op, v, path), n in support.EXAMPLES.items()],
    }


def _merge(figures: dict) -> None:
    if "waited" in figures["warmup"]:
        WARMUP["waited"] = max(WARMUP.get("waited", 0.0), figures["warmup"]["waited"])
        WARMUP["returncode"] = figures["warmup"]["returncode"]
    support.LOWEST_RUN.update(figures["lowest"])
    support.BACKEND_RUNS.extend(tuple(r) for r in figures["backend"])
    for op, v, path, n in figures["examples"]:
        support.EXAMPLES[(op, v, path)] += n


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist: a worker finished; take its figures for the summary."""
    figures = getattr(node, "workeroutput", {}).get("ortpool")
    if figures:
        _merge(json.loads(figures))


def pytest_sessionfinish(session, exitstatus):
    if _is_worker(session.config):
        session.config.workeroutput["ortpool"] = json.dumps(_figures())
        return
    for child in WARMUP.pop("children", ()):
        # A short run ends before the compiles do: the warm-up (the wrapper's child) would
        # otherwise outlive the run, compiling on cores the next run needs.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    if "folder" in WARMUP:
        shutil.rmtree(WARMUP.pop("folder"), ignore_errors=True)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if "returncode" in WARMUP:
        terminalreporter.section(
            "ortpool: numba's compiles (two warm-up children, started with the run)"
        )
        terminalreporter.write_line(
            f"exit {WARMUP['returncode']}; the first compiled-kernel import waited "
            f"{WARMUP['waited']:.1f} s for it"
        )
    if support.LOWEST_RUN:
        run = support.LOWEST_RUN
        counts = run["counts"]
        passed = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
        built = run["build_seconds"]
        terminalreporter.section("ortpool: tests marked onnxruntime on the lowest declared release")
        terminalreporter.write_line(
            f"onnxruntime {run['versions']['onnxruntime']}, onnxruntime-extensions "
            f"{run['versions']['onnxruntime-extensions']}: {passed} passed, {counts['skipped']} "
            f"skipped, {counts['failures']} failed, {counts['errors']} errors in "
            f"{run['seconds']:.0f} s (.venv-lowest "
            + ("reused)" if built is None else f"built in {built:.0f} s)")
        )
    if support.BACKEND_RUNS:
        runs = support.BACKEND_RUNS
        terminalreporter.section("ortpool: onnx backend cases through ortpool ops (passing)")
        for op in versions.OPERATORS:
            mine = [r for r in runs if r[0] == op]
            if not mine:
                continue
            cases = {r[1] for r in mine}
            older = sum(1 for r in mine if not r[3])
            terminalreporter.write_line(
                f"{op:<17} {len(cases):3d} cases at their own version, {older:4d} runs stamped "
                "at older versions"
            )
        pinned = sorted({r[1] for r in runs if r[4]})
        terminalreporter.write_line(
            f"total {len({r[1] for r in runs})} cases, {len(runs)} runs; pinned to ruling 9 "
            f"(deviation): {', '.join(pinned) or 'none'}"
        )
    if not support.EXAMPLES:
        return
    terminalreporter.section(
        "ortpool: property examples checked against tests/support/reference_loops.py"
    )
    keys = sorted({(op, v) for op, v, _ in support.EXAMPLES})
    total = 0
    for op, version in keys:
        numpy_n = support.EXAMPLES[(op, version, "numpy")]
        session_n = support.EXAMPLES[(op, version, "session")]
        total += numpy_n + session_n
        terminalreporter.write_line(
            f"{op + '-' + str(version):<22} numpy API {numpy_n:5d}   ORT session {session_n:5d}"
        )
    verdict = "all agreeing" if exitstatus == 0 else "counted only where they agreed"
    terminalreporter.write_line(f"total {total} examples, {verdict}")
