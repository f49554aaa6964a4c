"""A built wheel, installed into a fresh virtual environment, works on its own: the bundled models
come with it (``fix/`` included), and ``ortpool validate``, ``ortpool fix``, ``ortpool ops`` and
``ortpool conformance`` run from a folder outside the repository, as they do in the editable
installation.

The environment holds the wheel and exactly what its requirements with the ``cpu`` and ``fast``
extras resolve to (the CPU build of onnxruntime, numba), as a user's fresh environment would:
those distributions of this environment, hard-linked (tests/support/child_venv.py), then the
wheel installed by pip without dependencies, then checked to need nothing more. An undeclared
dependency is absent there, as it would be for the user. pip downloading and unpacking the same
359 MB again cost 12 s of CPU in every run; resolving the requirements against the package index
is the set-up's ``pip install -e '.[test]'`` (the same requirements, the same versions). The
wheel is built without build isolation by this environment's setuptools (the test extra's
floor is the build system's): the set-up's editable install already builds in isolation from
``[build-system]``. About 20 s in a run (build and install 4 s, conformance on its rank-2 float
slice 4 s).
"""

from __future__ import annotations

import email.parser
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ortpool import versions
from tests import support
from tests.support import child_venv

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"


def _env() -> dict[str, str]:
    """The environment without what would steer ortpool or Python to the repository."""
    drop = {"PYTHONPATH", "NUMBA_CACHE_DIR", "ORTPOOL_KERNELS", "VIRTUAL_ENV", "PYTHONHOME"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def _run(args: list, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=timeout)


def _requirements(wheel: Path) -> list[str]:
    """The wheel's Requires-Dist lines, as its METADATA states them."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        found = email.parser.BytesParser().parsebytes(archive.read(name))
    return found.get_all("Requires-Dist") or []


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel of this checkout installed; its folder."""
    work = tmp_path_factory.mktemp("wheel")
    # Built from a copy: the build leaves build/ and *.egg-info behind, and the numba caches in
    # __pycache__ have no place in it.
    source = work / "source"
    for folder in ("ortpool", "models"):  # models/ is installed as ortpool/models/
        shutil.copytree(ROOT / folder, source / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                  "-w", work / "dist", source], cwd=work)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (work / "dist").glob("ortpool-*.whl")
    env = work / "env"
    made = _run([sys.executable, "-m", "venv", "--without-pip", env], cwd=work)
    assert made.returncode == 0, made.stderr
    needed = child_venv.requirement_closure(_requirements(wheel), extras={"cpu", "fast"})
    child_venv.link_environment(env, needed)
    # No pip of its own (installing it costs 5 s of CPU): this environment's pip installs there.
    # --no-compile: byte-compiling proves nothing here.
    installed = _run([sys.executable, "-m", "pip", "--python", child_venv.python(env), "install",
                      "--disable-pip-version-check", "--no-compile", "--no-deps", wheel], cwd=work)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert child_venv.requirements_not_met(env) == {"missing": [], "unmet": []}
    return env


def test_the_environment_holds_what_the_wheel_declares_and_nothing_more(venv, tmp_path):
    python = child_venv.python(venv)
    code = ("import json\nfrom importlib import metadata\n"
            "print(json.dumps([d.metadata['Name'].lower() for d in metadata.distributions()]))")
    done = _run([python, "-c", code], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    names = {child_venv._name(name) for name in json.loads(done.stdout)}
    assert {"ortpool", "onnx", "onnxruntime", "onnxruntime-extensions", "numba", "numpy"} <= names
    # the test extra's distributions are this environment's, not the wheel's
    assert not names & {"pytest", "hypothesis", "ruff", "pytest-xdist", "setuptools"}, names
    missing = _run([python, "-c", "import hypothesis"], cwd=tmp_path)
    assert "No module named 'hypothesis'" in missing.stderr


def _ortpool(venv: Path) -> Path:
    return child_venv.python(venv).with_name("ortpool")


def _models_dir(venv: Path, cwd: Path) -> Path:
    """Where the installed package finds its bundled models."""
    code = "from ortpool.validate.validator import bundled_models_dir\nprint(bundled_models_dir())"
    done = _run([child_venv.python(venv), "-c", code], cwd=cwd)
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip())


def test_validate_with_no_argument_runs_the_bundled_models_as_the_checkout_does(venv, tmp_path):
    models = _models_dir(venv, tmp_path)
    assert models.is_relative_to(venv)
    assert sorted(p.name for p in models.glob("*.onnx")) == sorted(
        p.name for p in MODELS.glob("*.onnx")
    )
    # without the guard's timing (ruling 20), the one measured, not computed, figure of a report
    wheel = _run([_ortpool(venv), "validate", "--no-guard-cost"], cwd=tmp_path)
    checkout = support.run_cli("validate", "--no-guard-cost", cwd=tmp_path, env=_env())
    assert wheel.returncode in (0, 1), wheel.stderr
    assert wheel.returncode == checkout.returncode
    # The same report, but for where the models are (a longer path wraps the lines elsewhere:
    # compared without the white space)
    assert "".join(wheel.stdout.split()).replace(str(models), "<models>") == "".join(
        checkout.stdout.split()
    ).replace(str(MODELS), "<models>")
    joined = "".join(wheel.stdout.split()).replace(str(models), "<models>")
    for model in MODELS.glob("*.onnx"):
        assert f"<models>/{model.name}" in joined
    summary = " ".join(" ".join(wheel.stdout.splitlines()[-3:]).split())  # the closing lines
    count = len(list(MODELS.glob("*.onnx")))
    verdict = f" of {count} models differ" if wheel.returncode else f"{count} models"
    assert verdict in summary
    # Tiny tensors only: the run compiled no numba kernel (none cached in the fresh install).
    assert not list((models.parent / "kernels").rglob("*.nbi"))
    assert "compiling the numba kernel" not in wheel.stderr


def test_fix_runs_a_bundled_fix_model_from_the_wheel(venv, tmp_path):
    """models/fix/ is package data too, and ``ortpool fix`` works from the wheel."""
    models = _models_dir(venv, tmp_path) / "fix"
    names = sorted(p.name for p in models.glob("*.onnx"))
    assert names == sorted(p.name for p in (MODELS / "fix").glob("*.onnx"))
    assert "fix-valid-ceil.onnx" in names
    done = _run([_ortpool(venv), "fix", models / "fix-valid-ceil.onnx", "out.onnx", "-q"],
                cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert (tmp_path / "out.onnx").is_file()


def test_ops_prints_the_op_type_table(venv, tmp_path):
    wheel = _run([_ortpool(venv), "ops"], cwd=tmp_path)
    checkout = support.run_cli("ops", cwd=tmp_path, env=_env())
    assert (wheel.returncode, wheel.stderr) == (0, "")
    assert wheel.stdout == checkout.stdout
    assert re.search(r"^MaxPool_12_Indices +MaxPool-12 ", wheel.stdout, re.MULTILINE)


def test_conformance_sweeps_every_op_version(venv, tmp_path):
    # Every op version from the installed wheel; the grid's breadth (every dtype and rank) is
    # tests/validate/test_conformance.py's, on the checkout: rank 2 float is the one slice every
    # operator has (MaxRoiPool is 2-D), 621 cases in 3 s of CPU instead of 6862 in 15 s.
    done = _run([_ortpool(venv), "conformance", "--no-progress", "--ranks", "2", "--dtypes",
                 "float"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(
        r"ortpool conformance: onnxruntime \S+ on CPUExecutionProvider: built-in pooling "
        r"against the ONNX spec "
        r"\(onnxruntime-extensions \S+, onnx \S+, ortpool \S+\)", lines[0]
    )
    assert re.fullmatch(r"\d+ cases, seed 0, [\d.]+ s", lines[1])
    rows = {line.split()[0] for line in lines[2:] if line.strip()}
    assert {f"{v.op}-{v.version}" for v in versions.all_versions()} <= rows
