"""The import graph read from the source: imports only go down the layer order, no module cycle,
onnxruntime imported in ``ortpool/ort/`` alone (docs/architecture.md, issue 19).

Every import is read with :mod:`ast`, at module level and inside functions (a function-level import
is still a dependency: it only hides a cycle from the interpreter, not from the reader), relative
imports resolved, ``from package import name`` counted as an import of the submodule when ``name``
is one. A failure prints each offending import as ``file:line  from -> to`` with both layers.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "ortpool"

# The layer order, lowest first; a module may import its own layer or any lower one. The first
# matching prefix decides (longest first), so a package's per-command ``cli*`` modules can sit in
# the command-line layer while the package itself sits lower. The commands are siblings of one
# tier (COMMANDS): none may import another, whatever their order here. docs/architecture.md
# shows the same table; this is the one the test enforces.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("spec", (
        "ortpool.errors", "ortpool.versions", "ortpool.attributes", "ortpool.geometry",
        "ortpool.dtypes", "ortpool.optypes", "ortpool.lazy", "ortpool.values",
    )),
    ("kernels", ("ortpool.kernels",)),
    # tolerances.py is ruling 17's accuracy rule: it asks the kernels for the exact result.
    ("model", ("ortpool.model", "ortpool.modelfile", "ortpool.staging", "ortpool.tolerances")),
    # the runtimes other than onnxruntime (OpenVINO's own, tract, the ONNX reference evaluator),
    # each run in a worker that survives its crash: none imports onnxruntime
    ("runtimes", ("ortpool.runtimes",)),
    ("ort", ("ortpool.ort",)),
    # the engine that judges a node: validate's verdict, fix's proofs, conformance's cases
    ("check", ("ortpool.check",)),
    # one record per node and per model, and every view of it (terminal, JSON, HTML, notebook)
    ("report", ("ortpool.report",)),
    # each option group parsed, checked and built once, for the shell and for Python (below the
    # transforms too: rewrite's Python API checks its arguments with it)
    ("options", ("ortpool.options",)),
    # the model transforms: rewrite's retargeting and fix's forms
    ("transforms", ("ortpool.rewrite", "ortpool.forms")),
    ("validate", ("ortpool.validate",)),
    ("fix", ("ortpool.fix",)),
    ("bench", ("ortpool.bench",)),
    ("conformance", ("ortpool.conformance",)),
    ("cli", (
        "ortpool.cli", "ortpool.__main__", "ortpool.ops_cli", "ortpool.warmup_cli",
        "ortpool.rewrite.cli", "ortpool.validate.cli", "ortpool.conformance.cli",
        "ortpool.fix.cli", "ortpool.bench.cli",
    )),
    # The package's own __init__ re-exports the public API of every layer.
    ("api", ("ortpool.__init__",)),
)  # fmt: skip

#: The commands: one tier, no command importing another.
COMMANDS = ("validate", "fix", "bench", "conformance")

RANK = {name: i for i, (name, _) in enumerate(LAYERS)}
for _command in COMMANDS:
    RANK[_command] = RANK[COMMANDS[0]]

# Packages allowed to import onnxruntime / onnxruntime_extensions.
ORT_HOME = "ortpool.ort"
ORT_MODULES = ("onnxruntime", "onnxruntime_extensions")

# Imports against the order not fixed yet: (importer, imported) -> why it stays for now. The test
# fails on any violation not listed here, and on any entry here that no longer occurs.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}

# Modules importing onnxruntime outside ort/, not moved yet: module -> why.
ALLOWED_ORT: dict[str, str] = {}

# Another package's private modules (``ortpool.kernels._backend`` from outside ``kernels/``) used
# without a public name yet: (importer, imported) -> why.
ALLOWED_PRIVATE: dict[tuple[str, str], str] = {}

# Cycles not broken yet, each as the sorted tuple of its modules -> why.
ALLOWED_CYCLES: dict[tuple[str, ...], str] = {}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1 and parts[:-1] != ["ortpool"]:
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def layer_of(module: str) -> str:
    best, best_len = "", -1
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = name, len(prefix)
    if not best:
        raise AssertionError(
            f"{module} is in no layer: add it to LAYERS in tests/project/test_layers.py"
        )
    return best


def _imports(module: str, path: Path, known: set[str]):
    """Yield (line, imported module) for every import in ``path``, ortpool or not."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    package = module.removesuffix(".__init__") if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield node.lineno, sub if sub in known else target


@functools.cache  # the source is read once per run
def _edges():
    mods = _modules()
    known = set(mods)
    edges = []  # (importer, line, imported)
    for module, path in mods.items():
        for line, target in _imports(module, path, known):
            edges.append((module, line, target))
    return mods, edges


def _where(mods: dict[str, Path], module: str, line: int) -> str:
    return f"{mods[module].relative_to(ROOT.parent)}:{line}"


def _resolve(target: str, known: set[str]) -> str | None:
    """The ortpool module an import names (its longest known prefix), None outside ortpool."""
    while target:
        if target in known:
            return target
        target = target.rpartition(".")[0]
    return None


@functools.cache
def _internal_graph():
    mods, edges = _edges()
    known = set(mods)
    graph: dict[str, dict[str, int]] = {m: {} for m in mods}
    for src, line, target in edges:
        dst = _resolve(target, known) if target.startswith("ortpool") else None
        if dst and dst != src and dst != "ortpool.__init__":
            graph[src].setdefault(dst, line)
    return mods, graph


def upward_imports() -> list[tuple[str, int, str]]:
    """Imports of a higher layer, and of another command's package (a sibling)."""
    _, graph = _internal_graph()
    found = []
    for src, targets in graph.items():
        for dst, line in targets.items():
            a, b = layer_of(src), layer_of(dst)
            if RANK[b] > RANK[a] or (a != b and a in COMMANDS and b in COMMANDS):
                found.append((src, line, dst))
    return found


def cycles() -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan)."""
    _, graph = _internal_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(tuple(sorted(comp)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def ort_imports() -> list[tuple[str, int, str]]:
    _, edges = _edges()
    return [
        (src, line, target)
        for src, line, target in edges
        if target.split(".")[0] in ORT_MODULES
        and not (src == ORT_HOME or src.startswith(ORT_HOME + "."))
    ]


def test_every_module_has_a_layer() -> None:
    for module in _modules():
        layer_of(module)


def _check_edges(
    found: list[tuple[str, int, str]], allowed: dict, key: Callable[[str, str], object], what: str
) -> None:
    """Fail on each import in ``found`` whose ``key(src, dst)`` is not in ``allowed``, printed as
    ``file:line  src (layer) -> dst (layer)``, and on each ``allowed`` entry no longer found."""
    mods, _ = _edges()
    new = [
        f"{_where(mods, s, line)}  {s} ({layer_of(s)}) -> {d}"
        + (f" ({layer_of(d)})" if d.startswith("ortpool") else "")
        for s, line, d in found
        if key(s, d) not in allowed
    ]
    stale = sorted(set(allowed) - {key(s, d) for s, _, d in found})
    assert not new, f"{what}:\n" + "\n".join(new)
    assert not stale, f"allowlisted, no longer found (remove them from the allowlist): {stale}"


def _pair(src: str, dst: str) -> tuple[str, str]:
    return src, dst


def test_imports_only_go_down_the_layers() -> None:
    _check_edges(upward_imports(), ALLOWED_UPWARD, _pair, "imports against the layer order")


def test_no_import_cycle() -> None:
    mods, graph = _internal_graph()
    found = cycles()
    lines = []
    for comp in found:
        if comp in ALLOWED_CYCLES:
            continue
        members = set(comp)
        lines.append(f"cycle {' <-> '.join(comp)}:")
        for src in comp:
            for dst, line in graph[src].items():
                if dst in members:
                    lines.append(
                        f"  {_where(mods, src, line)}  {src} ({layer_of(src)})"
                        f" -> {dst} ({layer_of(dst)})"
                    )
    stale = sorted(set(ALLOWED_CYCLES) - set(found))
    assert not lines, "import cycles:\n" + "\n".join(lines)
    assert not stale, f"allowlisted cycles that no longer occur (remove them): {stale}"


def test_onnxruntime_imported_only_in_ort() -> None:
    _check_edges(
        ort_imports(), ALLOWED_ORT, lambda s, _: s, "onnxruntime imported outside ortpool/ort/"
    )


def private_imports() -> list[tuple[str, int, str]]:
    """Imports of a ``_module`` of another package (its own package may use it)."""
    _, graph = _internal_graph()
    found = []
    for src, targets in graph.items():
        for dst, line in targets.items():
            package, _, name = dst.rpartition(".")
            if (
                name.startswith("_")
                and not name.startswith("__")
                and not (src == package or src.startswith(package + "."))
            ):
                found.append((src, line, dst))
    return found


def test_private_modules_stay_in_their_package() -> None:
    _check_edges(
        private_imports(), ALLOWED_PRIVATE, _pair, "private modules of another package imported"
    )


def test_the_checker_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    """The reader itself: an import inside a function and ``from . import x`` both count."""
    pkg = tmp_path / "ortpool" / "kernels"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from . import b\n    return b\n")
    (pkg / "b.py").write_text("from .a import f\n")
    known = {"ortpool.kernels", "ortpool.kernels.a", "ortpool.kernels.b"}
    assert list(_imports("ortpool.kernels.a", pkg / "a.py", known)) == [(2, "ortpool.kernels.b")]
    assert list(_imports("ortpool.kernels.b", pkg / "b.py", known)) == [(1, "ortpool.kernels.a")]


#: The packages whose public names their ``__init__`` lists (issue 19), each with names that
#: must be among them (what other packages import from it).
PUBLIC: dict[str, tuple[str, ...]] = {
    "ortpool.ort": ("RuntimeSpec", "open_session", "InferenceSession", "INSTALL_HINT", "stamp"),
    "ortpool.model": ("InputSpec", "resolve", "Site", "find_sites", "model_scopes", "write_file"),
    "ortpool.rewrite": ("rewrite", "restore", "rewrite_file", "Selection"),
    "ortpool.check": ("Judgement", "judge", "proof_sets", "compare_values"),
    "ortpool.validate": ("validate_model", "validate_models"),
    "ortpool.options": ("accuracy", "domain", "files", "inputs", "reports", "runtime", "timing"),
    "ortpool.bench": ("CASES", "Settings", "run_case", "select"),
}


def test_each_package_lists_its_public_names_and_each_resolves() -> None:
    """Every name of a package's ``__all__`` is there (a lazy one once asked for, a listed
    submodule once imported), and none is private."""
    import importlib

    for package, required in PUBLIC.items():
        module = importlib.import_module(package)
        names = list(module.__all__)
        assert set(required) <= set(names), (package, sorted(set(required) - set(names)))
        assert len(names) == len(set(names)), package
        for name in names:
            assert not name.startswith("_"), (package, name)
            if f"{package}.{name}" in _modules():
                importlib.import_module(f"{package}.{name}")
            assert getattr(module, name) is not None, (package, name)
    import ortpool.ort

    with pytest.raises(AttributeError, match=r"^module 'ortpool\.ort' has no attribute 'nope'$"):
        ortpool.ort.nope  # noqa: B018


def test_one_way_to_open_a_session() -> None:
    """Every onnxruntime session ortpool makes goes through ``ort.opening.open_session``: the one
    ``onnxruntime.InferenceSession(...)`` call is ``ort.runtime.create``, and only
    ``open_session`` calls that (issue 28: validate's runs, fix's proofs, bench's timing and the
    guard's price open their sessions alike, with the same options and providers)."""
    made, created = [], []
    for module, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            owner = node.func.value
            name = owner.id if isinstance(owner, ast.Name) else ""
            if node.func.attr == "InferenceSession" and name in ("ort", "onnxruntime"):
                made.append(module)
            if node.func.attr == "create" and name == "runtime":
                created.append(module)
    assert made == ["ortpool.ort.runtime"]
    assert created == ["ortpool.ort.opening"]


def _architecture_table() -> list[tuple[str, list[str]]]:
    """The layer table of docs/architecture.md: (layer, the module paths its row names)."""
    text = (ROOT.parent / "docs" / "architecture.md").read_text()
    section = text.split("## Layers, as the import graph checks them", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].isdigit():
            rows.append((cells[1], re.findall(r"`([\w/]+(?:\.py|/))`", cells[2])))
    return rows


def test_the_architecture_page_draws_the_layers_the_test_enforces() -> None:
    """The page's table lists the layers of LAYERS in order (the commands as one tier), and each
    module or package a row names exists and sits in that row's layer."""
    rows = _architecture_table()
    tiers = [name for name, _ in LAYERS if name not in COMMANDS[1:]]
    expected = ["commands" if name == COMMANDS[0] else name for name in tiers]
    assert [name for name, _ in rows] == expected
    mods = _modules()
    for layer, paths in rows:
        assert paths, f"the row of layer {layer!r} names no module"
        for path in paths:
            target = ROOT / path.removeprefix("ortpool/")
            assert target.exists(), f"docs/architecture.md, layer {layer!r}: no ortpool/{path}"
            module = _module_name(target / "__init__.py" if target.is_dir() else target)
            assert module in mods, (layer, path)
            want = set(COMMANDS) if layer == "commands" else {layer}
            assert layer_of(module) in want, (layer, path, layer_of(module))
