"""Every name the scripts (and the tests) import from ortpool exists: a script is run by hand,
long after the module it reads has moved (scripts/guard_cost.py read ``ortpool.fix.sites``,
scripts/real_models_experiment.py ``ortpool.bench.timing``, both gone)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _missing(path: Path, root: Path = ROOT) -> list[str]:
    missing = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            wanted = [(a.name, None) for a in node.names if a.name.split(".")[0] == "ortpool"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                node.module.split(".")[0] == "ortpool":
            wanted = [(node.module, a.name) for a in node.names]
        else:
            continue
        for module, name in wanted:
            try:
                found = importlib.import_module(module)
            except ImportError:
                missing.append(f"{path.relative_to(root)}:{node.lineno}: no module {module}")
                continue
            if name is not None and not hasattr(found, name):
                try:
                    importlib.import_module(f"{module}.{name}")
                except ImportError:
                    missing.append(f"{path.relative_to(root)}:{node.lineno}: no {name} in {module}")
    return missing


def test_the_scripts_and_tests_import_only_what_ortpool_has():
    files = sorted((ROOT / "scripts").glob("*.py")) + sorted((ROOT / "tests").rglob("*.py"))
    assert len(files) > 100
    assert [m for f in files for m in _missing(f)] == []


def test_a_stale_import_is_found(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("from ortpool.fix.sites import find_sites\nfrom ortpool.model import nope\n"
                      "from ortpool.model import timing\n")
    assert _missing(script, tmp_path) == ["s.py:1: no module ortpool.fix.sites",
                                "s.py:2: no nope in ortpool.model"]
