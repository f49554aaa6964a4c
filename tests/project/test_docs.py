"""The documentation: generated reference pages are current, every relative link resolves, and
no page sends the reader to a file the repository does not hold."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from ortpool.errors import OrtpoolError
from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]

_LINK = re.compile(r"(?<!\!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_IMAGE = re.compile(r"\!\[[^\]]*\]\(([^)\s]+)\)")
_INLINE_CODE = re.compile(r"`[^`]*`")


def _script(name: str):
    """scripts/NAME.py as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _gen_docs():
    return _script("gen_docs")


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks, inline code removed."""
    result = []
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            result.append((number, _INLINE_CODE.sub("", line)))
    return result


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a Markdown text (repeated headings get -1, -2, ...)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        match = re.match(r"#{1,6}\s+(.*)", line)
        if fenced or not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(path: Path, text: str) -> list[str]:
    """The relative links of ``text`` (a file at ``path``) whose file or #anchor is missing."""
    broken = []
    for number, line in prose_lines(text):
        for match in [*_LINK.finditer(line), *_IMAGE.finditer(line)]:
            target = match.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            resolved = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)}:{number}: {target}"
            if not resolved.exists():
                broken.append(f"{where} (no such file)")
            elif (
                anchor
                and resolved.suffix == ".md"
                and anchor not in anchors(resolved.read_text(encoding="utf-8"))
            ):
                broken.append(f"{where} (no heading #{anchor} in {resolved.name})")
    return broken


def test_generated_pages_are_current():
    stale = _gen_docs().stale(ROOT)
    assert not stale, f"generated pages out of date: {stale}; run python scripts/gen_docs.py"


def test_command_page_lists_every_option():
    gen_docs = _gen_docs()
    parser = gen_docs.command_parser("validate")
    page = gen_docs.command_page("validate")
    options = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    assert "--shape" in options and "--providers" in options
    missing = [o for o in options if f"`{o}" not in page and f", {o}" not in page]
    assert not missing
    assert "usage: ortpool validate" in page


def test_api_page_documents_every_public_name():
    import ortpool

    page = _gen_docs().api_page()
    for name in ortpool.__all__:
        if not name.startswith("__"):
            assert f"### `ortpool.{name}`" in page
    assert "0x" not in re.sub(r"0x[0-9a-f]{1,4}\b", "", page)  # no memory addresses


def test_relative_links_resolve():
    broken = [b for path in doc_files() for b in broken_links(path, path.read_text("utf-8"))]
    assert not broken, "\n".join(broken)


def test_link_checker_finds_broken_links(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "b.md").write_text("# A title, with `code`\n\n## 2. SAME_UPPER / x\n")
    page = tmp_path / "a.md"
    text = (
        "[ok](b.md#a-title-with-code) [ok](b.md#2-same_upper--x) [gone](c.md) "
        "[bad anchor](b.md#nope) [web](https://example.org/x) `[code](d.md)`\n"
        "```\n[fenced](e.md)\n```\n"
    )
    assert broken_links(page, text) == [
        "a.md:1: c.md (no such file)",
        "a.md:1: b.md#nope (no heading #nope in b.md)",
    ]


def test_no_page_cites_the_spec_file_users_cannot_open():
    # The generated pages repeat the code's help and docstrings: their citations are the
    # code's to mend (and gen_docs.py to rerun); every page written by hand is checked here.
    generated = set(_gen_docs().pages())
    citing = [
        f"{path.relative_to(ROOT).as_posix()}:{number}: {line.strip()}"
        for path in doc_files()
        if path.relative_to(ROOT).as_posix() not in generated
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "RULINGS.md" in line or "shared/spec" in line
    ]
    assert not citing, "cite docs/rulings.md ('ruling N') instead:\n" + "\n".join(citing)


def test_conformance_picture_splits_each_row_by_its_verdicts():
    def report(described: dict, statuses: dict[str, int], bases: dict[str, int],
               fell_back: int = 0, release: str = "1.32.0") -> dict:
        row = {"op": "MaxPool", "version": 12, "cases": sum(statuses.values()) + fell_back}
        row |= {"statuses": statuses, "bases": bases,
                "fell_back": {"CPUExecutionProvider": fell_back} if fell_back else {}}
        return {"environment": {"onnxruntime": release}, "runtime": described, "cases": [],
                "matrix": [row]}

    documents = [
        report({}, {"agree": 2, "differ": 2}, {"spec text": 1, "ruling 7": 1}, release="1.21.0"),
        report({"runtime": "tract", "release": "0.23.9"}, {"agree": 2, "crashed": 2}, {}),
        report({"providers": ["OpenVINOExecutionProvider"]}, {"agree": 2}, {}, 2),
    ]
    picture = load_script("conformance_doc").svg(documents)
    assert picture == load_script("conformance_doc").svg(documents)  # the same bytes each time
    assert picture.startswith("<svg ") and picture.endswith("</svg>\n")
    # 150 pixels per cell, columns 154 apart from x=170: 2 of 4 agree, 1 breaks the spec's
    # text, 1 a ruling; then 2 agree, 2 crashed; then 2 agree, 2 fell back.
    for x, width, colour in (
        ("170.00", "75.00", "#3c9a4a"), ("245.00", "37.50", "#d7372f"),
        ("282.50", "37.50", "#f07c2a"), ("324.00", "75.00", "#3c9a4a"),
        ("399.00", "75.00", "#222222"), ("478.00", "75.00", "#3c9a4a"),
        ("553.00", "75.00", "#4a8fd6"),
    ):
        assert f'<rect x="{x}" y="54" width="{width}" height="14" fill="{colour}"/>' in picture
    assert "<title>MaxPool-12, onnxruntime 1.21.0: agree 2, spec text 1, ruling 1</title>" \
        in picture
    assert ">tract</text>" in picture and ">0.23.9</text>" in picture
    assert ">1.32.0 OpenVINO</text>" in picture
    # the legend names the groups some column has, and only those
    assert ">differ: break the spec's text</text>" in picture
    assert ">crashed</text>" in picture and ">timed out</text>" not in picture


def test_conformance_doc_arguments_name_a_runtime_or_providers(tmp_path):
    doc = load_script("conformance_doc")
    source = doc.Source.parse(".venv/bin/python@tract")
    assert (source.python, source.runtime, source.providers) == (".venv/bin/python", "tract", "")
    assert source.argv(tmp_path / "r.json")[3:] == [
        "conformance", "--json", str(tmp_path / "r.json"), "--no-progress", "--runtime", "tract"]
    openvino = doc.Source.parse(".venv-openvino/bin/python:openvino,cpu")
    assert openvino.argv(tmp_path / "r.json")[-2:] == ["--providers", "openvino,cpu"]
    assert doc.Source.parse("kept/01.json").report == "kept/01.json"
    with pytest.raises(OrtpoolError, match="providers are onnxruntime's"):
        doc.Source.parse("python:cpu@tract")
    # a kept report stands for its argument only if it judged that runtime and provider
    tract = {"environment": {"onnxruntime": "1.32.0"}, "runtime": {"runtime": "tract",
                                                                   "release": "0.23.9"}}
    on_cpu = {"environment": {"onnxruntime": "1.24.1"},
              "runtime": {"providers": ["CPUExecutionProvider"]}}
    source.check(tract, tmp_path / "01.json")
    openvino.check({**on_cpu, "runtime": {"providers": ["OpenVINOExecutionProvider"]}},
                   tmp_path / "02.json")
    with pytest.raises(OrtpoolError, match=re.escape("of tract 0.23.9, not of 'python'")):
        doc.Source.parse("python").check(tract, tmp_path / "01.json")
    with pytest.raises(OrtpoolError, match=re.escape("onnxruntime 1.24.1, not of '.venv-openvino")):
        openvino.check(on_cpu, tmp_path / "02.json")


def test_readme_stays_a_front_page():
    # Issue 29: what ortpool is, install, the workflow, commands, links; the rest lives in docs/.
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; move detail to docs/"
    # .ci/run and the users run these exactly as written.
    for command in (
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' "
        "&& python -m compileall -q ortpool && ortpool warmup",
        ". .venv/bin/activate && ortpool validate",
        ". .venv/bin/activate && python -m pytest",
    ):
        assert command in lines


def test_every_install_line_installs_from_the_repository():
    """ortpool is not on the package index: an install line names the clone (``.``, a wheel
    built from it) or a package the index has (onnxruntime's builds), never ``ortpool`` by name
    (issue 34: the README's first line found nothing)."""
    import re

    # (within the pip command: what follows ``&&`` or ``;`` is another command)
    by_name = re.compile(r"pip install [^`\n&;]*\bortpool\b(?!-\*)")
    found = [f"{page.relative_to(ROOT)}:{n}: {line.strip()}"
             for page in doc_files() for n, line in enumerate(page.read_text().splitlines(), 1)
             if by_name.search(line)]
    assert found == []
