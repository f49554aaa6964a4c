"""The tests marked ``onnxruntime`` once more, on the lowest onnxruntime ortpool declares.

The README's set-up installs the newest release, but a user's runtime is any release of the
declared range, and releases differ (docs/conformance.md). This test builds ``.venv-lowest`` at
the repository root with the floors of ortpool's onnxruntime and onnxruntime-extensions
requirements, read from its installed metadata (so the floor declared is the floor tested), and
runs the marked tests there in a child process. The child uses the numpy kernels: the parent
already compares both kernel paths, and numba's first compile would cost minutes there. The
environment is reused while its requirement list is unchanged (about 5 s to build, the main
environment's other distributions linked into it; the tests 60 s alone on an idle machine,
120-150 s beside the rest of the suite, at a lower priority).
``ORTPOOL_LOWEST=skip`` skips it for a quick local run; CI never sets it.
"""

from __future__ import annotations

import json
import os
import subprocess
from importlib.metadata import requires
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from tests import support
from tests.support import child_venv

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-lowest"
STAMP = VENV / "ortpool-lowest.json"
RUNTIME = ("onnxruntime", "onnxruntime-extensions")
#: Left out of the child: it runs the numpy kernels (numba would compile them again in a
#: child that starts before the warm-up ends) and no linter.
NOT_NEEDED = {"numba", "llvmlite", "ruff"}


def _requirements() -> list[Requirement]:
    return [Requirement(text) for text in requires("ortpool") or []]


def _in(req: Requirement, extra: str | None) -> bool:
    """Whether ``req`` is a base requirement (``extra`` None) or one of that extra."""
    if req.marker is None:
        return extra is None
    return extra is not None and req.marker.evaluate({"extra": extra})


def floors() -> dict[str, str]:
    """onnxruntime (the ``cpu`` extra's: no build is a base requirement, so that ortpool installs
    beside any) and onnxruntime-extensions -> the lowest version ortpool admits."""
    found = {}
    for req in _requirements():
        if req.name in RUNTIME and (_in(req, None) or _in(req, "cpu")):
            lows = [spec.version for spec in req.specifier if spec.operator == ">="]
            assert len(lows) == 1, f"{req} must state one lower bound (>=) to be tested"
            found[req.name] = lows[0]
    assert set(found) == set(RUNTIME), f"ortpool's requirements name no floor for {RUNTIME}"
    return {name: found[name] for name in RUNTIME}


def ensure_venv() -> float | None:
    """Build .venv-lowest unless it holds exactly these requirements; the build's seconds, or
    None when it was reused. The main environment's other distributions are linked into it
    (tests/support/child_venv.py): the floors and what they need besides are installed."""
    pins = [f"{name}=={version}" for name, version in floors().items()]
    return child_venv.ensure(VENV, STAMP, pins, leave_out={*RUNTIME, *NOT_NEEDED})


def installed_runtime() -> dict[str, str]:
    code = (
        "import json, onnxruntime, onnxruntime_extensions\n"
        "print(json.dumps({'onnxruntime': onnxruntime.__version__, "
        "'onnxruntime-extensions': onnxruntime_extensions.__version__}))"
    )
    done = subprocess.run(
        [str(child_venv.python(VENV)), "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.skipif(os.environ.get("ORTPOOL_LOWEST") == "skip", reason="ORTPOOL_LOWEST=skip")
def test_onnxruntime_tests_pass_on_the_lowest_declared_release(tmp_path, request):
    build_seconds = ensure_venv()
    versions = installed_runtime()
    for name, floor in floors().items():
        assert Version(versions[name]) == Version(floor), (name, versions[name], floor)
    # The modules that hold marked tests, as this run collected them: the child collects only
    # those (the others' imports and collection cost it seconds and select nothing). Run on
    # its own, this module collected no marked test: the child then collects all of tests/.
    marked = [item for item in request.session.items if item.get_closest_marker("onnxruntime")]
    targets = sorted({item.path for item in marked}) or ROOT / "tests"
    # One process: two workers each collect and import everything again, and the run shares the
    # two cores with the rest of the suite anyway (88 s of CPU in one process, 134 s in two).
    run = child_venv.run_marked(
        VENV, "onnxruntime", targets, tmp_path / "lowest.xml", 1200, workers="0"
    )
    counts = run.counts
    if marked:  # every marked test ran there too (a module failing to import would lose some)
        assert counts["tests"] == len(marked), (counts, len(marked))
    support.LOWEST_RUN.update(
        versions=versions, counts=counts, seconds=run.seconds, build_seconds=build_seconds
    )
    assert run.returncode == 0, run.failure()
    assert counts["tests"] - counts["skipped"] > 0
