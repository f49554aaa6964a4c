"""tests/support/child_venv.py: the lowest release's and OpenVINO's venvs hold the main
environment's distributions as hard links, and pip adds only what they lack, never removing a
linked file."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

import pytest

from tests.support import child_venv


def _venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True,
                   timeout=120)
    return path


def _dists(*names: str) -> list[metadata.Distribution]:
    site = sysconfig.get_paths()["purelib"]
    return [next(metadata.distributions(name=n, path=[site])) for n in names]


def test_linked_files_are_the_main_environments_and_import_there(tmp_path):
    venv = _venv(tmp_path / "venv")
    count = child_venv.link_environment(venv, _dists("packaging", "pluggy"))
    assert count > 20
    main = Path(sysconfig.get_paths()["purelib"]) / "packaging" / "version.py"
    linked = child_venv._site_packages(venv) / "packaging" / "version.py"
    if main.stat().st_dev == linked.stat().st_dev:  # the same file system: a hard link
        assert os.path.samefile(main, linked)
    assert linked.read_bytes() == main.read_bytes()
    done = subprocess.run(
        [str(child_venv.python(venv)), "-c",
         "import packaging.version, pluggy; print(packaging.version.__file__)"],
        capture_output=True, text=True, timeout=60, check=True,
    )
    assert Path(done.stdout.strip()) == linked
    # Nothing but what was linked: numpy is in the main environment, not here.
    missing = subprocess.run([str(child_venv.python(venv)), "-c", "import numpy"],
                             capture_output=True, text=True, timeout=60)
    assert "No module named 'numpy'" in missing.stderr


def test_what_a_linked_distribution_needs_is_named_with_its_specifier(tmp_path):
    venv = _venv(tmp_path / "venv")
    child_venv.link_environment(venv, _dists("pytest", "packaging"))
    found = child_venv.requirements_not_met(venv)
    names = {text.split("<")[0].split(">")[0].split("=")[0] for text in found["missing"]}
    assert {"iniconfig", "pluggy", "pygments"} <= names, found
    assert "packaging" not in names
    assert found["unmet"] == []
    # A distribution whose requirement the linked version does not meet: named, with both.
    fake = child_venv._site_packages(venv) / "fake-1.0.dist-info"
    fake.mkdir()
    (fake / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fake\nVersion: 1.0\nRequires-Dist: packaging<1\n"
    )
    version = metadata.version("packaging")
    assert child_venv.requirements_not_met(venv)["unmet"] == [
        f"fake 1.0 needs packaging<1, has {version}"
    ]


def test_a_failing_install_removes_the_venv_and_reports_pips_words(tmp_path):
    venv, stamp = tmp_path / "venv", tmp_path / "venv" / "stamp.json"
    seen = []

    def on_failure(arguments, stderr):
        seen.append((list(arguments), stderr))
        pytest.skip("reported")

    with pytest.raises(pytest.skip.Exception, match="reported"):
        child_venv.ensure(venv, stamp, [str(tmp_path / "no-such-1.0-py3-none-any.whl")],
                          leave_out={"onnxruntime", "numba", "llvmlite", "ruff"},
                          on_failure=on_failure)
    assert not venv.exists()
    (arguments, stderr), = seen
    assert arguments[0].endswith("no-such-1.0-py3-none-any.whl")
    assert "no-such-1.0-py3-none-any.whl" in stderr


def test_requirement_closure_is_what_pip_would_resolve_here_and_no_more():
    def names(*requirements, extras=()):
        found = child_venv.requirement_closure(requirements, extras)
        return {child_venv._name(d.metadata["Name"]) for d in found}

    plain = names("ortpool")
    assert {"ortpool", "onnx", "numpy", "onnxruntime-extensions", "protobuf"} <= plain
    assert not plain & {"onnxruntime", "numba", "pytest", "hypothesis"}  # extras not asked
    # an extra asked of a requirement, or of the project whose requirements these are
    for chosen in (names("ortpool[cpu,fast]"),
                   names("numba<0.69; extra == 'fast'", "numpy", extras={"fast"})):
        assert {"numba", "llvmlite", "numpy"} <= chosen
    assert names("numba; extra == 'fast'") == set()
    assert "llvmlite" in names("numba") and "numba" not in names("llvmlite")
    version = metadata.version("numpy")
    unmet = rf"^numpy<1 is not met in .*: {re.escape(version)} is installed$"
    with pytest.raises(AssertionError, match=unmet):
        child_venv.requirement_closure(["numpy<1"])
    with pytest.raises(AssertionError, match=r"^no-such-distribution is not installed in "):
        child_venv.requirement_closure(["no-such-distribution"])
