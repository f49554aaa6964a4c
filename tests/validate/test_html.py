"""The HTML report: one self-contained page with the table and a picture per differing node,
rendered in a real headless Chromium when one is installed."""

from __future__ import annotations

import base64
import html
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from ortpool.check.compare import CAT_AGREE, CAT_DIFFER, CAT_MISSING, align
from ortpool.cli import main
from ortpool.report import picture
from tests.validate.test_validate import builtin_same_d2_shape, pool_model, save

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime


def decode_png(data: bytes) -> np.ndarray:
    """(H, W, channels) uint8 of an 8-bit RGB/RGBA PNG (what Chromium and ortpool write)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        crc = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])[0]
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color = header[:4]
    assert depth == 8 and color in (2, 6)
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    out = np.zeros((height, stride), np.int64)
    prev = np.zeros(stride, np.int64)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int64)
        if kind == 0:  # None
            cur = line
        elif kind == 1:  # Sub: each byte plus the one bpp to its left, a running sum mod 256
            cur = line.reshape(-1, bpp).cumsum(axis=0).reshape(-1) & 0xFF
        elif kind == 2:  # Up
            cur = (line + prev) & 0xFF
        else:  # Average and Paeth read the byte just decoded: one pass over plain ints
            cur = np.array(_unfilter(kind, line.tolist(), prev.tolist(), bpp), np.int64)
        out[y] = cur
        prev = cur
    return out.reshape(height, width, bpp).astype(np.uint8)


def _unfilter(kind: int, line: list[int], prev: list[int], bpp: int) -> list[int]:
    cur = [0] * len(line)
    for x, value in enumerate(line):
        a = cur[x - bpp] if x >= bpp else 0
        b = prev[x]
        if kind == 3:
            pred = (a + b) // 2
        else:
            c = prev[x - bpp] if x >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        cur[x] = (value + pred) & 0xFF
    return cur


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, str]:
    """Two models, the agreeing one given first: one node differs (SAME with dilation: the
    output is 8x10 for 10x12), the other model agrees everywhere."""
    builtin_same_d2_shape((1, 3, 10, 12))  # skips unless this onnxruntime has the defect
    folder = tmp_path_factory.mktemp("html")
    bad = save(pool_model(dilation=2), folder / "same_d2.onnx")
    good = save(pool_model(dilation=1), folder / "same_d1.onnx")
    page = folder / "report.html"
    assert main(["validate", good, bad, "--html", str(page), "--no-progress"]) == 1
    return page, page.read_text()


def test_page_is_self_contained(report):
    _, text = report
    assert text.startswith("<!DOCTYPE html>")
    assert "<script" not in text and "<link" not in text and "@import" not in text
    assert not re.search(r"""(src|href)\s*=\s*["'](?!data:|#)""", text)
    assert "url(" not in text
    sources = re.findall(r'src="([^"]+)"', text)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources)


def test_table_and_one_picture_per_differing_node(report):
    _, text = report
    rows = re.findall(r'<tr class="node-row" data-status="([a-z-]+)">', text)
    # two models, each with pool_same and avg: only pool_same of same_d2 differs
    assert rows == ["differ", "agree", "agree", "agree"]
    figures = re.findall(r'<figure class="node-picture"', text)
    assert len(figures) == 1
    assert "pool_same — MaxPool-12 Y, k=3x3 d=2x2 SAME_UPPER" in text
    assert "SAME padding with dilation" in text


def test_tiles_place_each_cell_channels_with_differences_first():
    cats = np.zeros((1, 2, 2, 3), np.int8)
    cats[0, 1, 1, 2] = CAT_DIFFER
    found, caption = picture.tiles(cats)
    assert [t.channel for t in found] == [1, 0]
    scale = -(-picture.TILE_TARGET // 3)
    assert (found[0].width, found[0].height) == (3 * scale, 2 * scale)
    image = decode_png(found[0].png)
    middle = scale // 2
    assert tuple(image[scale + middle, 2 * scale + middle]) == picture.PALETTE[CAT_DIFFER][0]
    assert tuple(image[middle, middle]) == picture.PALETTE[CAT_AGREE][0]
    assert caption.startswith("2 of 2 channel(s)")


class Page(HTMLParser):
    """What the structure test reads of the report: ids, links, sources, summary rows, the
    model sections (and which are ``<details>``), figures with their tiles."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []
        self.sources: list[str] = []
        self.summary: list[tuple[str, str]] = []  # (status, href)
        self.sections: list[tuple[str, str, str]] = []  # (tag, id, status)
        self.figures: list[dict[str, str | None]] = []
        self.tiles: list[str] = []
        self.urls: list[str] = []
        self._row: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if "id" in found:
            self.ids.append(found["id"] or "")
        for value in found.values():
            if value and re.search(r"(https?:)?//", value) and not value.startswith("data:"):
                self.urls.append(value)
        if tag == "tr" and found.get("class") == "summary-row":
            self._row = found.get("data-status")
        if tag == "a" and "href" in found:
            self.links.append(found["href"] or "")
            if self._row is not None:
                self.summary.append((self._row, found["href"] or ""))
                self._row = None
        if "src" in found:
            self.sources.append(found["src"] or "")
        ident = found.get("id") or ""
        if tag in ("section", "details") and ident.startswith("model-"):
            self.sections.append((tag, ident, found.get("data-status") or ""))
        if tag == "figure":
            self.figures.append(found)
        if tag == "img" and found.get("class") == "tile-image":
            self.tiles.append(found["src"] or "")


def test_structure_summary_first_links_details_and_no_external_resource(report):
    _, text = report
    page = Page()
    page.feed(text)
    # the summary table: the failing model first although it was given second
    assert [status for status, _ in page.summary] == ["differ", "agree"]
    assert [href for _, href in page.summary] == ["#model-2", "#model-1"]
    # every link resolves to an element of the page, and ids are unique
    assert page.links and all(h.startswith("#") and h[1:] in page.ids for h in page.links)
    assert len(page.ids) == len(set(page.ids))
    # the failing model is an open section, the agreeing one collapsed
    assert page.sections == [("section", "model-2", "differ"), ("details", "model-1", "agree")]
    # no external resource: every source is an inline PNG, no URL in any attribute
    assert page.sources and all(s.startswith("data:image/png;base64,") for s in page.sources)
    assert page.urls == []
    assert text.index('id="summary"') < text.index('id="model-2"') < text.index('id="model-1"')
    # the summary names the models without the folder they share; the sections in full
    assert '">same_d2.onnx</a>' in text and '">same_d1.onnx</a>' in text
    assert f"<h2>{report[0].parent / 'same_d2.onnx'} " in text
    # every table scrolls inside its card on a narrow screen
    assert text.count("<table") == text.count('<div class="scroll"><table')
    assert "@media (max-width: 700px)" in text
    # there a node's row is stacked, each cell under its heading's name (scrolled sideways, a
    # row stood as tall as its wrapped cells text beside a blank band)
    assert "table.nodes td[data-h]::before { content:attr(data-h)" in text
    for table in re.findall(r'<table class="nodes">.*?</table>', text):
        heads = re.findall(r"<th>([^<]*)</th>", table)
        rows = re.findall(r'<tr class="node-row".*?</tr>', table)
        assert heads[:3] == ["node", "op", "status"] and rows
        assert all(re.findall(r'<td class="[^"]*" data-h="([^"]*)">', r) == heads for r in rows)


def test_summary_puts_models_that_could_not_run_first_and_renders_any_status_by_name():
    from ortpool.report import html
    from ortpool.report import record as results

    fine = results.ModelResult(path="models/fine.onnx")
    fine.nodes.append(results.NodeResult("p", "MaxPool", 12, 12, "float", {}, [[1, 1, 4, 4]],
                                         "fixed", sets=1))  # a status this module does not know
    broken = results.ModelResult(path="models/broken.onnx", outcome=results.COULD_NOT_RUN,
                                 error="onnxruntime: " + "x" * 200)
    page = Page()
    fragment = html.summary([fine, broken])
    page.feed(fragment)
    assert page.summary == [("could-not-run", "#model-2"), ("agree", "#model-1")]
    assert '">broken.onnx</a>' in fragment  # the shared folder left out
    # the long error cut in the cell, whole in its tooltip
    assert f'title="onnxruntime: {"x" * 200}"' in fragment and "x" * 200 + "<" not in fragment
    section = html.render([fine, broken], {})
    assert '<span class="badge s-fixed">fixed</span>' in section
    assert section.index('id="model-2"') < section.index('id="model-1"')


def test_shape_difference_is_drawn_at_the_same_index_as_it_is_counted(report):
    """onnxruntime's 8x10 against the spec's 10x12: the cells are drawn where the comparison
    counts them (the same index), the legend's counts are the comparison's, and that
    onnxruntime's cells are the spec's moved by one cell is said in words."""
    _, text = report
    page = Page()
    page.feed(text)
    (figure,) = page.figures
    assert figure["data-node"] == "pool_same" and figure["data-output"] == "Y"
    assert "onnxruntime's cells are the spec's moved by (+1, +1) cells" in html.unescape(text)
    assert len(page.tiles) == 3  # a tile per channel
    image = decode_png(base64.b64decode(page.tiles[0].removeprefix("data:image/png;base64,")))
    height, width = image.shape[:2]
    cell_h, cell_w = height // 10, width // 12
    cells = image[cell_h // 2 :: cell_h, cell_w // 2 :: cell_w][:10, :12]
    missing = np.all(cells == picture.PALETTE[CAT_MISSING][0], axis=-1)
    # the rows and columns past onnxruntime's 8x10 are the spec's only
    assert missing[8:, :].all() and missing[:, 10:].all() and not missing[:8, :10].any()
    legend = dict(re.findall(r'data-category="([^"]+)"><i [^>]*></i><b class="count">(\d+)</b>',
                             text))
    assert legend["only in one output (shapes differ)"] == str(3 * (10 * 12 - 8 * 10))
    assert '<div class="yaxis"><span>0</span><b>H</b><span>9</span></div>' in text
    assert '<div class="xaxis"><span>0</span><b>W</b><span>11</span></div>' in text


def test_align_finds_the_shift_and_keeps_real_differences():
    ours = np.arange(48, dtype=np.float32).reshape(1, 1, 6, 8)
    theirs = ours[:, :, 1:5, 1:7].copy()
    theirs[0, 0, 2, 3] = -1.0  # a real difference inside the common region
    offset, cats = align(theirs, ours)
    assert offset == (1, 1) and cats.shape == (1, 1, 6, 8)
    assert cats[0, 0, 3, 4] == CAT_DIFFER
    assert int((cats == CAT_DIFFER).sum()) == 1
    assert int((cats == CAT_MISSING).sum()) == 48 - 24
    # onnxruntime's output larger: the canvas starts at its first cell, one before ortpool's
    offset, cats = align(ours, theirs)
    assert offset == (-1, -1) and cats.shape == (1, 1, 6, 8)
    # channels that differ are not aligned
    assert align(ours[:, :, :4], np.zeros((1, 2, 6, 8), np.float32)) is None


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_renders_in_headless_chromium(report, tmp_path):
    page, text = report
    # A probe copy: the report itself has no script; the copy counts rows and loaded images.
    probe = tmp_path / "probe.html"
    script = (
        "<script>window.addEventListener('load', () => {"
        "const imgs = [...document.images];"
        "document.body.setAttribute('data-loaded', imgs.filter(i => i.complete && "
        "i.naturalWidth > 0).length + '/' + imgs.length);"
        "document.body.setAttribute('data-rows', document.querySelectorAll('tr.node-row').length);"
        "});</script>"
    )
    probe.write_text(text.replace("</body>", script + "</body>"))
    common = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(
        [*common, "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert 'data-loaded="3/3"' in dom  # a tile per channel of the differing node
    assert 'data-rows="4"' in dom
    shot = tmp_path / "shot.png"
    subprocess.run(
        [*common, f"--screenshot={shot}", "--window-size=1400,1000", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    image = decode_png(shot.read_bytes())[..., :3]
    assert image.shape[:2] == (1000, 1400)
    colors = {tuple(int(v) for v in px) for px in image[::7, ::7].reshape(-1, 3)}
    assert len(colors) > 20  # not blank: text, badges, the heatmap
    assert (253, 232, 232) in colors  # the summary's DIFFERS badge, above the fold
