"""The HTML report: one self-contained page with the table and a picture per differing node,
rendered in a real headless Chromium when one is installed."""

from __future__ import annotations

import base64
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest

from ortpool.check.compare import CAT_AGREE, CAT_DIFFER, CAT_MISSING
from ortpool.cli import main
from ortpool.validate import picture
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
    out = np.zeros((height, stride), np.int32)
    prev = np.zeros(stride, np.int32)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int32)
        cur = np.zeros(stride, np.int32)
        for x in range(stride):
            a = cur[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if kind == 0:
                pred = 0
            elif kind == 1:
                pred = a
            elif kind == 2:
                pred = b
            elif kind == 3:
                pred = (a + b) // 2
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[x] = (line[x] + pred) & 0xFF
        out[y] = cur
        prev = cur
    return out.reshape(height, width, bpp).astype(np.uint8)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, str]:
    """Two models: one node differs (SAME with dilation), one agrees everywhere."""
    builtin_same_d2_shape((1, 3, 10, 12))  # skips unless this onnxruntime has the defect
    folder = tmp_path_factory.mktemp("html")
    bad = save(pool_model(dilation=2), folder / "same_d2.onnx")
    good = save(pool_model(dilation=1), folder / "same_d1.onnx")
    page = folder / "report.html"
    assert main(["validate", bad, good, "--html", str(page), "--no-progress"]) == 1
    return page, page.read_text()


def test_page_is_self_contained(report):
    _, text = report
    assert text.startswith("<!DOCTYPE html>")
    assert "<script" not in text and "<link" not in text and "@import" not in text
    assert not re.search(r"""(src|href)\s*=\s*["'](?!data:)""", text)
    assert "url(" not in text
    sources = re.findall(r'src="([^"]+)"', text)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources)


def test_table_and_one_picture_per_differing_node(report):
    _, text = report
    rows = re.findall(r'<tr class="node-row" data-status="([a-z-]+)">', text)
    # two models, each with pool_same and avg: only pool_same of same_d2 differs
    assert rows == ["differ", "agree", "agree", "agree"]
    figures = re.findall(r'<figure class="node-picture">', text)
    assert len(figures) == 1
    assert "pool_same — MaxPool-12, k=3x3 d=2x2 SAME_UPPER" in text
    assert "SAME padding with dilation" in text


def test_picture_shows_where_the_differences_sit(report):
    _, text = report
    uri = re.search(r'src="data:image/png;base64,([^"]+)"', text).group(1)
    image = decode_png(base64.b64decode(uri))
    colors = {tuple(int(v) for v in px) for px in image.reshape(-1, 3)}
    assert picture.PALETTE[CAT_DIFFER][0] in colors
    # onnxruntime's output is smaller (8x10 vs 10x12 on 1.21 to 1.32): cells only ortpool has
    assert picture.PALETTE[CAT_MISSING][0] in colors


def test_heatmap_tiles_place_each_cell():
    cats = np.zeros((1, 2, 2, 3), np.int8)
    cats[0, 1, 1, 2] = CAT_DIFFER
    data, caption = picture.heatmap(cats)
    image = decode_png(data)
    # channel 1 (the one with a difference) is drawn first, at the top left
    scale = picture.TILE_TARGET // 3
    gap = picture.GAP
    cell = image[gap + 1 * scale + scale // 2, gap + 2 * scale + scale // 2]
    assert tuple(cell) == picture.PALETTE[CAT_DIFFER][0]
    first = image[gap + scale // 2, gap + scale // 2]
    assert tuple(first) == picture.PALETTE[CAT_AGREE][0]
    assert caption.startswith("2 of 2 channel(s)") and "1 differs" in caption


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
    assert 'data-loaded="1/1"' in dom
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
    assert picture.PALETTE[CAT_DIFFER][0] in colors  # the picture is painted
