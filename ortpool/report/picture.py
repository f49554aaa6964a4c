"""Pictures of where differences sit: per-cell categories (``CAT_*``) as one PNG tile per
channel, the batch and a depth folded in (written by hand: no imaging dependency)."""

from __future__ import annotations

import dataclasses
import struct
import zlib

import numpy as np

from ortpool.check.compare import (
    CAT_AGREE,
    CAT_DIFFER,
    CAT_INACCURATE,
    CAT_MISSING,
    CAT_NOTE,
    CAT_RULING,
    CAT_TIE,
    TensorComparison,
)

#: category -> RGB, and the legend text the HTML report shows
PALETTE: dict[int, tuple[tuple[int, int, int], str]] = {
    CAT_AGREE: ((226, 232, 240), "agree"),
    CAT_TIE: ((125, 170, 220), "index tie (equal values)"),
    CAT_NOTE: ((170, 214, 160), "agrees with an accuracy note (rounding)"),
    CAT_RULING: ((245, 166, 35), "differs in a RULINGS cell (NaN / empty window)"),
    CAT_INACCURATE: ((240, 120, 60), "inaccurate (rounding beyond the accuracy limit)"),
    CAT_DIFFER: ((214, 39, 40), "differs"),
    CAT_MISSING: ((88, 60, 140), "only in one output (shapes differ)"),
}
MAX_TILES = 32
TILE_TARGET = 140  # pixels along a tile's longer side, roughly


def png(rgb: np.ndarray) -> bytes:
    """Encode an (H, W, 3) uint8 array as a PNG file."""
    height, width, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[row].tobytes() for row in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def planes(categories: np.ndarray) -> np.ndarray:
    """(C, H, W) of the most severe category per cell: batch (and depth beyond 2-D) folded in."""
    folded = categories.max(axis=0)  # over the batch
    while folded.ndim > 3:
        folded = folded.max(axis=1)  # over leading spatial axes (depth)
    if folded.ndim == 2:  # 1-D spatial: a strip per channel
        folded = folded[:, None, :]
    return folded


@dataclasses.dataclass(frozen=True)
class Tile:
    """One channel's plane as a PNG, ``width`` x ``height`` pixels."""

    channel: int
    png: bytes
    width: int
    height: int


@dataclasses.dataclass(frozen=True)
class Axis:
    """A tile's axis: its name and the first and last index of the spec's output it spans."""

    name: str
    first: int
    last: int


def _scale(height: int, width: int) -> tuple[int, int]:
    """Pixels per cell (down, across): about :data:`TILE_TARGET` along the longer side."""
    scale = max(1, -(-TILE_TARGET // max(height, width)))
    return (max(scale, 12) if height == 1 else scale), scale


def tiles(categories: np.ndarray) -> tuple[list[Tile], str]:
    """A PNG per channel (those with differences first, at most :data:`MAX_TILES`), a caption."""
    planes_ = planes(categories)
    channels, height, width = planes_.shape
    severity = planes_.reshape(channels, -1).max(axis=1)
    order = sorted(range(channels), key=lambda c: (-int(severity[c] > CAT_NOTE), c))
    shown = order[:MAX_TILES]
    scale_h, scale_w = _scale(height, width)
    lut = np.zeros((max(PALETTE) + 1, 3), np.uint8)
    for cat, (color, _) in PALETTE.items():
        lut[cat] = color
    found = [Tile(c, png(lut[planes_[c]].repeat(scale_h, axis=0).repeat(scale_w, axis=1)),
                  width * scale_w, height * scale_h) for c in shown]
    spatial = categories.shape[2:]
    caption = f"{len(shown)} of {channels} channel(s), each over the spatial plane"
    if len(spatial) == 3:
        caption += f" (depth {spatial[0]} folded: a cell shows the worst over depth)"
    if categories.shape[0] > 1:
        caption += f"; batch {categories.shape[0]} folded"
    if len(shown) < channels:
        caption += "; channels with differences first"
    return found, caption + "."


def legend(c: TensorComparison) -> list[tuple[tuple[int, int, int], str, int]]:
    """(colour, label, count) of each category ``c`` counted some cell in, by its own fields."""
    counts = {
        CAT_DIFFER: c.differing, CAT_INACCURATE: c.inaccurate, CAT_RULING: c.ruling_differing,
        CAT_MISSING: c.only_in_one, CAT_NOTE: c.noted, CAT_TIE: c.ties,
    }
    return [(*PALETTE[k], n) for k, n in counts.items() if n]


def axes(shape: tuple[int, ...]) -> tuple[Axis, Axis]:
    """The (down, across) axes of the tiles of ``shape`` (N, C, spatial...)."""
    spatial = list(shape[2:]) or [1]
    names = {1: ["W"], 2: ["H", "W"], 3: ["D", "H", "W"]}.get(len(spatial))
    names = names or [f"axis {i + 2}" for i in range(len(spatial))]
    found = [Axis(name, 0, n - 1) for name, n in zip(names, spatial, strict=True)]
    if len(found) == 1:
        return Axis("", 0, 0), found[0]
    return found[-2], found[-1]
