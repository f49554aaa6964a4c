"""pytest set-up for the ortpool tests: a deterministic hypothesis profile and the figures the
property and backend tests report at the end of the run (examples per op and version)."""

from __future__ import annotations

import os

import support
from hypothesis import HealthCheck, settings

from ortpool import versions

# CI: the same examples on every run (derandomize), no per-example deadline (the first call of a
# shape pays for geometry caches and session creation). ORTPOOL_HYPOTHESIS=thorough draws from a
# random seed; ORTPOOL_HYPOTHESIS_SCALE=10 multiplies every example budget (tests/test_properties).
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


def pytest_terminal_summary(terminalreporter, exitstatus, config):
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
            f"total {len({r[1] for r in runs})} cases, {len(runs)} runs; pinned to RULINGS.md 9 "
            f"(deviation): {', '.join(pinned) or 'none'}"
        )
    if not support.EXAMPLES:
        return
    terminalreporter.section("ortpool: property examples checked against tests/reference_loops.py")
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
