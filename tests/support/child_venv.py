"""A test environment of its own, and marked tests run in it in a child process.

tests/project/test_lowest_runtime.py (the lowest onnxruntime release) and
tests/project/test_openvino.py (the OpenVINO build) each need an onnxruntime other than the main
environment's: every build and release installs the same module. Both build a venv at the
repository root, reuse it while what it was built from is unchanged (a JSON stamp inside it), and
run ``pytest -m MARK`` there with the numpy kernels (numba's first compile would cost minutes)
and a timeout.

The venv holds the main environment's distributions but those left out (the onnxruntime build,
numba), hard-linked file by file (copied across file systems): the same files pip would unpack
again for the same versions, in a fraction of a second instead of 15 s of CPU. Then pip installs
the pinned ones (the runtime under test) and whatever their requirements need that the venv
lacks, each without dependencies, so that pip never removes a linked file; a requirement a
linked version does not meet fails the build, naming both.

tests/project/test_wheel.py links only what the wheel's requirements resolve to here
(:func:`requirement_closure`), so that an undeclared dependency is missing there as it would
be for a user.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Collection, Iterable, Sequence
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _name(text: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", text).lower()


def _site_packages(venv: Path) -> Path:
    done = subprocess.run(
        [str(python(venv)), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, timeout=60, check=True,
    )
    return Path(done.stdout.strip())


def _link(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError as err:
        if err.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
            raise
        shutil.copy2(source, target)


def _editable_here(dist: metadata.Distribution) -> bool:
    """Whether ``dist`` is an editable installation of this checkout (linking it is right)."""
    text = dist.read_text("direct_url.json")
    if not text:
        return False
    found = json.loads(text)
    return bool(found.get("dir_info", {}).get("editable")) and found.get("url") == ROOT.as_uri()


def linked_distributions(leave_out: Collection[str]) -> list[metadata.Distribution]:
    """The running environment's distributions to link: all but ``leave_out`` (and ortpool when
    it is not this checkout's editable installation)."""
    site = Path(sysconfig.get_paths()["purelib"])
    left = {_name(n) for n in leave_out}
    chosen = []
    for dist in metadata.distributions(path=[str(site)]):
        name = _name(dist.metadata["Name"])
        if name in left or (name == "ortpool" and not _editable_here(dist)):
            continue
        chosen.append(dist)
    return sorted(chosen, key=lambda d: _name(d.metadata["Name"]))


def requirement_closure(
    requirements: Iterable[str], extras: Collection[str] = ()
) -> list[metadata.Distribution]:
    """The running environment's distributions that ``requirements`` need, theirs included, as
    pip would resolve them there (``extras``: those asked of the project whose requirements these
    are); nothing else. A requirement this environment does not meet fails, naming it."""
    site = Path(sysconfig.get_paths()["purelib"])
    installed = {_name(d.metadata["Name"]): d for d in metadata.distributions(path=[str(site)])}
    asked: dict[str, set[str]] = {}  # each chosen distribution: the extras asked of it
    todo = [(Requirement(text), frozenset(extras)) for text in requirements]
    while todo:
        req, of_extras = todo.pop()
        if req.marker is not None and not any(
            req.marker.evaluate({"extra": extra}) for extra in (of_extras or {""})
        ):
            continue
        name = _name(req.name)
        dist = installed.get(name)
        if dist is None:
            raise AssertionError(f"{req} is not installed in {site}")
        if not req.specifier.contains(dist.version, prereleases=True):
            raise AssertionError(f"{req} is not met in {site}: {dist.version} is installed")
        if name in asked and set(req.extras) <= asked[name]:
            continue
        asked.setdefault(name, set()).update(req.extras)
        todo += [(Requirement(text), frozenset(asked[name])) for text in dist.requires or ()]
    return [installed[name] for name in sorted(asked)]


def link_environment(venv: Path, dists: Sequence[metadata.Distribution]) -> int:
    """Hard-link the files of ``dists`` that live in the site-packages folder into ``venv``'s
    (their byte-code caches too, valid there: same source, same time stamp), and write their
    console scripts for ``venv``'s Python; the number of files."""
    site = Path(sysconfig.get_paths()["purelib"])
    target = _site_packages(venv)
    count = 0
    tops: set[str] = set()
    for dist in dists:
        for file in dist.files or ():
            path = Path(os.path.normpath(site / file))
            if not path.is_relative_to(site):
                continue  # a script in bin/: written below for this venv's Python
            relative = path.relative_to(site)
            if not (target / relative).exists() and path.is_file():
                _link(path, target / relative)
                count += 1
            if len(relative.parts) > 1:
                tops.add(relative.parts[0])
    for top in tops:  # the __pycache__ folders are in no RECORD
        for cache in (site / top).rglob("__pycache__"):
            for pyc in cache.glob("*.pyc"):
                destination = target / pyc.relative_to(site)
                if destination.parent.parent.is_dir() and not destination.exists():
                    _link(pyc, destination)
                    count += 1
    for dist in dists:
        for entry in dist.entry_points.select(group="console_scripts"):
            module, _, attribute = entry.value.partition(":")
            script = venv / "bin" / entry.name
            script.write_text(
                f"#!{python(venv)}\nimport sys\nfrom {module} import {attribute.strip()}\n"
                f"sys.exit({attribute.strip()}())\n"
            )
            script.chmod(0o755)
    return count


#: Run by the venv's Python: the requirements of its distributions it does not meet, as
#: ``{"missing": [...], "unmet": [...]}`` (extras' requirements aside: nothing asks for them).
_CHECK = """
import json, re
from importlib import metadata
from packaging.requirements import Requirement
missing, unmet = [], []
for dist in metadata.distributions():
    for text in dist.requires or ():
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        try:
            version = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            missing.append(f"{req.name}{req.specifier}")
            continue
        if not req.specifier.contains(version, prereleases=True):
            unmet.append(f"{dist.metadata['Name']} {dist.version} needs {req}, has {version}")
print(json.dumps({"missing": sorted(set(missing)), "unmet": sorted(set(unmet))}))
"""


def requirements_not_met(venv: Path) -> dict[str, list[str]]:
    """What ``venv``'s distributions require and it lacks: ``{"missing": [name+specifier...],
    "unmet": ["X 1.0 needs Y<2, has 3.0"...]}`` (asked of its own Python)."""
    done = subprocess.run([str(python(venv)), "-c", _CHECK], capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(done.stdout)


def _pip(venv: Path, arguments: Sequence[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(python(venv)), "-m", "pip", "install", "-q", "--no-compile", "--no-deps", *arguments],
        capture_output=True, text=True, timeout=900, check=False,
    )


def ensure(
    venv: Path,
    stamp: Path,
    pins: Sequence[str],
    leave_out: Collection[str],
    on_failure: Callable[[Sequence[str], str], None] | None = None,
) -> float | None:
    """Build ``venv``: the running environment's distributions but ``leave_out``, linked; then
    ``pins`` installed and the requirements they bring, each without dependencies. Unless
    ``stamp`` says it holds exactly that; the build's seconds, or None when it was reused. A
    failing install removes the venv and calls ``on_failure(arguments, stderr)`` (which may
    skip), or fails the test."""
    dists = linked_distributions(leave_out)
    wanted = {
        "pins": list(pins),
        "leave_out": sorted(leave_out),
        "python": sys.version,
        "linked": [f"{d.metadata['Name']}=={d.version}" for d in dists],
        # The editable installation maps packages as pyproject.toml says when it is installed (the
        # top-level models/ is the package ortpool.models): a changed pyproject.toml rebuilds.
        "pyproject": hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest(),
    }
    if stamp.is_file() and json.loads(stamp.read_text()) == wanted and python(venv).is_file():
        return None
    started = time.perf_counter()
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    link_environment(venv, dists)
    if not any(_name(d.metadata["Name"]) == "ortpool" for d in dists):
        pins = [*pins, "-e", str(ROOT)]
    step = list(pins)
    for _round in range(6):
        done = _pip(venv, step)
        if done.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            if on_failure is not None:
                on_failure(step, done.stderr)
            raise AssertionError(f"pip install {step} failed:\n{done.stderr[-3000:]}")
        found = requirements_not_met(venv)
        if found["unmet"]:
            shutil.rmtree(venv, ignore_errors=True)
            raise AssertionError(
                f"{venv.name}: {'; '.join(found['unmet'])} (a linked distribution: install "
                "versions that meet these in the main environment)"
            )
        step = found["missing"]
        if not step:
            break
    else:
        shutil.rmtree(venv, ignore_errors=True)
        raise AssertionError(f"{venv.name}: requirements still missing after six rounds: {step}")
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


#: The marked tests' child runs at a lower CPU priority where ``nice`` exists. Its test only waits
#: for it, while the other worker and the numba warm-up's two children want both cores: five
#: processes taking turns on two cores cost more CPU than the same work with fewer at a time
#: (each evicts the others' caches), and the warm-up gates the tests of the compiled kernels.
#: At niceness 10 the child takes what the others leave (all of a core once they are done);
#: docs/testing.md has the measured effect.
NICE = ["nice", "-n", "10"] if shutil.which("nice") else []


def run_marked(
    venv: Path,
    mark: str,
    target: Path | Sequence[Path],
    report: Path,
    timeout: float,
    workers: str = "auto",
) -> ChildRun:
    """``pytest -m mark target...`` with ``venv``'s Python, the numpy kernels, no cache, a JUnit
    report at ``report`` (for the counts), within ``timeout`` seconds, at a lower priority
    (:data:`NICE`)."""
    env = dict(os.environ, ORTPOOL_KERNELS="numpy")
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    started = time.perf_counter()
    done = subprocess.run(
        [
            *NICE,
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
