"""MaxRoiPool, every spec version: Caffe's RoIPool, as onnxruntime implements it (ruling 14), in
exact integer arithmetic: with the corners rounded half away from zero and ``roi_h = max(y2 - y1 +
1, 1)``, bin ``ph`` covers rows ``[floor(ph * roi_h / pooled_h) + y1, ceil((ph + 1) * roi_h /
pooled_h) + y1)`` clipped to ``[0, H]``, columns likewise; an empty bin gives 0."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from ortpool.errors import OrtpoolError
from ortpool.kernels import _backend, _buffers, _calls, _limits, _parallel
from ortpool.kernels._calls import checked, dtype_name, located

#: Scaled RoI corners beyond this are refused: no map is that large (int64 bins: corner_limit).
MAX_CORNER = 1 << 40


def corner_limit(pooled: tuple[int, int]) -> int:
    """The largest |scaled corner| whose bins stay exact in int64 (``i * span < 2**62``)."""
    return min(MAX_CORNER, (1 << 61) // max(1, *pooled) - 1)


@dataclasses.dataclass(frozen=True)
class RoiBins:
    """Per RoI: its plane, and per output row/column the ``[start, end)`` it covers, clipped."""

    batch: np.ndarray  # (R,) int64
    h_start: np.ndarray  # (R, pooled_h) int64
    h_end: np.ndarray
    w_start: np.ndarray  # (R, pooled_w) int64
    w_end: np.ndarray


def round_half_away(v: np.ndarray) -> np.ndarray:
    """C's ``round``: halves away from zero (numpy's rounds them to even), exactly."""
    whole = np.trunc(v)
    return whole + np.sign(v) * (np.abs(v - whole) >= 0.5)


def _bin_edges(start: np.ndarray, end: np.ndarray, pooled: int, limit: int):
    """Each bin's ``[start, end)`` (the module docstring), ``size = max(end - start + 1, 1)``."""
    i, size = np.arange(pooled, dtype=np.int64), np.maximum(end - start + 1, 1)
    lo = (i * size[:, None]) // pooled + start[:, None]
    hi = -((-(i + 1) * size[:, None]) // pooled) + start[:, None]
    return np.clip(lo, 0, limit), np.clip(hi, 0, limit)


def roi_bins(
    rois: np.ndarray, pooled: tuple[int, int], spatial_scale: float, x_shape: tuple[int, ...]
) -> RoiBins:
    """Every RoI's bins (ruling 14); an OrtpoolError for a RoI naming no plane or not finite."""
    n, _, height, width = x_shape
    r64 = rois.astype(np.float64)
    if not np.isfinite(r64).all():
        at = np.argwhere(~np.isfinite(r64))[0]
        raise OrtpoolError(f"rois[{at[0]}] = {_roi_text(r64[at[0]])} has a non-finite value "
                           f"at column {at[1]}")
    batch = r64[:, 0]
    bad = (batch != np.floor(batch)) | (batch < 0) | (batch >= n)
    if bad.any():
        at = int(np.argmax(bad))
        raise OrtpoolError(f"rois[{at}] = {_roi_text(r64[at])} has batch index "
                           f"{_num(batch[at])}; X has {n} plane(s) in its batch, so it must be an "
                           f"integer in [0, {n})")
    # float64 products: exact for float32 and narrower coordinates (24 + 24 bits < 53).
    corners = round_half_away(r64[:, 1:] * spatial_scale)
    limit = corner_limit(pooled)
    if (np.abs(corners) > limit).any():
        at = int(np.argmax((np.abs(corners) > limit).any(axis=1)))
        bound = "2**40" if limit == MAX_CORNER else f"{limit} (pooled_shape {list(pooled)})"
        raise OrtpoolError(f"rois[{at}] = {_roi_text(r64[at])} scaled by spatial_scale="
                           f"{spatial_scale!r} lies beyond +-{bound}: no feature map is that large")
    x1, y1, x2, y2 = (corners[:, i].astype(np.int64) for i in range(4))
    h_start, h_end = _bin_edges(y1, y2, pooled[0], height)
    w_start, w_end = _bin_edges(x1, x2, pooled[1], width)
    return RoiBins(batch.astype(np.int64), h_start, h_end, w_start, w_end)


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _roi_text(row: np.ndarray) -> str:
    return "[" + ", ".join(_num(v) for v in row) + "]"


def _check_rois(x: np.ndarray, rois: Any) -> None:
    if not isinstance(rois, np.ndarray):
        raise OrtpoolError(f"input rois must be a numpy array, got {type(rois).__name__}")
    if rois.dtype != x.dtype:
        raise OrtpoolError(f"input rois has element type {dtype_name(rois.dtype)}; it must be "
                           f"X's ({dtype_name(x.dtype)})")
    if rois.ndim != 2 or rois.shape[1] != 5:
        raise OrtpoolError(f"input rois has shape {list(rois.shape)}; it must be (num_rois, 5): "
                           "[batch_index, x1, y1, x2, y2] per RoI")


def max_roi_pool(
    x: np.ndarray, rois: np.ndarray, *, version: int = 22, **attributes: Any
) -> np.ndarray:
    """MaxRoiPool of spec version ``version``: Y of shape (num_rois, C, pooled_h, pooled_w)."""
    key, runner = _calls.lookup(("MaxRoiPool", version), x, attributes)
    with located("MaxRoiPool", version):
        if runner is None:
            attrs = checked("MaxRoiPool", version, x, attributes)
            run = functools.partial(_run, attrs.pooled_shape, attrs.spatial_scale)
            runner = _calls.remember(key, run)
        _check_rois(x, rois)
        return runner(x, rois)


def _run(
    pooled: tuple[int, int], spatial_scale: float, x: np.ndarray, rois: np.ndarray
) -> np.ndarray:
    # Before the bins, which are as long as the output's rows and columns.
    _limits.check_array("the output Y", (rois.shape[0], x.shape[1], *pooled), x.dtype)
    bins = roi_bins(rois, pooled, spatial_scale, x.shape)
    # read-only, as every compiled loop's input (the numpy path only reads it too)
    work_x = _buffers.read_only(x if x.dtype in (np.float32, np.float64) else
                                x.astype(np.float32))
    y = _buffers.output((rois.shape[0], x.shape[1], *pooled), work_x.dtype)
    roi_max = _backend.loop("roi_max", work_x.dtype, work_x.nbytes)

    def work(lo: int, hi: int) -> None:
        if roi_max is not None:
            roi_max(work_x, y[lo:hi], bins.batch[lo:hi], bins.h_start[lo:hi], bins.h_end[lo:hi],
                    bins.w_start[lo:hi], bins.w_end[lo:hi])
            return
        for r in range(lo, hi):
            _roi_numpy(work_x[bins.batch[r]], y[r], bins, r)

    # Work: each RoI reads its region of every channel; splitting pays for many RoIs.
    _parallel.split(rois.shape[0], [(0, rois.shape[0])], work, y.nbytes * 16)
    return y if y.dtype == x.dtype else y.astype(x.dtype)


def _roi_numpy(plane: np.ndarray, out: np.ndarray, bins: RoiBins, r: int) -> None:
    """One RoI over every channel: each distinct row span's max, then each column span's (a RoI
    far larger than the map has millions of bins sharing a few spans)."""
    hs, he, ws, we = bins.h_start[r], bins.h_end[r], bins.w_start[r], bins.w_end[r]
    out.fill(0)
    rows, cols = np.flatnonzero(hs < he), np.flatnonzero(ws < we)
    if rows.size == 0 or cols.size == 0:
        return
    w_lo, w_hi = int(ws[cols].min()), int(we[cols].max())
    row_spans, row_of = _runs(hs[rows], he[rows])
    col_spans, col_of = _runs(ws[cols], we[cols])
    # (row spans, C, columns), then (row spans, C, column spans)
    row_max = np.stack([np.maximum.reduce(plane[:, a:b, w_lo:w_hi], axis=1) for a, b in row_spans])
    cell = np.stack(
        [np.maximum.reduce(row_max[:, :, a - w_lo : b - w_lo], axis=2) for a, b in col_spans],
        axis=-1,
    )
    out[:, rows[:, None], cols[None, :]] = cell[row_of][:, :, col_of].transpose(1, 0, 2)


def _runs(start: np.ndarray, end: np.ndarray) -> tuple[list[tuple[int, int]], np.ndarray]:
    """The spans of consecutive equal (start, end) pairs, and each pair's span index."""
    new = np.ones(start.shape[0], bool)
    new[1:] = (start[1:] != start[:-1]) | (end[1:] != end[:-1])
    first = np.flatnonzero(new)
    return [(int(start[i]), int(end[i])) for i in first], np.cumsum(new) - 1
