"""Comparing onnxruntime's outputs with ortpool's, cell by cell.

Each compared cell falls in one ``CAT_*`` category, growing with severity (the pictures paint the
worst): agree; a *tie* (another Index of an equal maximum); an *accuracy note* (within ruling
17's limit: it agrees); a *ruling* cell (a NaN or empty window: rulings 5, 6); an *inaccurate*
sum (beyond the limit, within rounding); a difference; a cell only one output has.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np

from ortpool.geometry import PoolGeometry
from ortpool.kernels import window_max
from ortpool.model.site import Site
from ortpool.tolerances import Accuracy, Tolerance
from ortpool.versions import GLOBAL_OPERATORS

CAT_AGREE, CAT_TIE, CAT_NOTE, CAT_RULING, CAT_INACCURATE, CAT_DIFFER, CAT_MISSING = range(7)
MAX_EXAMPLES = 5


@dataclasses.dataclass
class TensorComparison:
    """One output tensor compared: counts per category, errors, a few examples."""

    name: str
    dtype: str
    builtin_shape: tuple[int, ...]
    ortpool_shape: tuple[int, ...]
    tolerance: str
    compared: int = 0
    differing: int = 0
    ruling_differing: int = 0
    ties: int = 0
    #: sums (ruling 17): cells agreeing with an accuracy note / beyond the accuracy limit
    noted: int = 0
    inaccurate: int = 0
    only_in_one: int = 0
    #: of the differing cells, those in windows holding a NaN / no input element (the rulings'
    #: cells: what names a cause)
    in_nan_windows: int = 0
    in_empty_windows: int = 0
    max_abs: float | None = None
    max_rel: float | None = None
    examples: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    #: a sum's worst rounding against the exact result, in ulp and u*mean|x| (:func:`figures`)
    accuracy: dict[str, Any] | None = None
    #: per cell CAT_* over the union of both shapes (not serialised; drawn in the HTML report)
    categories: np.ndarray | None = dataclasses.field(default=None, repr=False, compare=False)
    #: shapes that differ only on spatial axes: onnxruntime's cell i is drawn over ortpool's
    #: cell i + offset (per spatial axis), the offset where most cells agree (:func:`align`),
    #: and ``aligned`` holds the categories so drawn (not serialised; for the HTML report)
    offset: tuple[int, ...] | None = dataclasses.field(default=None, repr=False)
    aligned: np.ndarray | None = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def shapes_differ(self) -> bool:
        return self.builtin_shape != self.ortpool_shape

    @property
    def agrees(self) -> bool:
        return not (self.shapes_differ or self.differing or self.inaccurate
                    or self.ruling_differing)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name not in ("categories", "offset", "aligned")}
        out["builtin_shape"] = list(self.builtin_shape)
        out["ortpool_shape"] = list(self.ortpool_shape)
        out["shapes_differ"] = self.shapes_differ
        return out


def _finite_or_none(value: float) -> float | None:
    return None if not math.isfinite(value) else float(value)


def _canvas(result: TensorComparison, a: np.ndarray, b: np.ndarray
            ) -> tuple[np.ndarray, tuple[Any, ...] | None]:
    """The categories over the union of both shapes (``result`` counts its cells) and the index
    of the cells both tensors have; None where the ranks differ: no cell is compared. The
    Ellipsis keeps ``t[...]`` of a 0-d array an array (a numpy scalar cannot be painted)."""
    if a.ndim != b.ndim:
        result.only_in_one = int(max(a.size, b.size))
        result.categories = np.full(b.shape, CAT_MISSING, np.int8)
        return result.categories, None
    shape = tuple(max(x, y) for x, y in zip(a.shape, b.shape, strict=True))
    cats = np.full(shape, CAT_MISSING if a.shape != b.shape else CAT_AGREE, np.int8)
    sl = (*(slice(0, min(x, y)) for x, y in zip(a.shape, b.shape, strict=True)), ...)
    result.compared = int(a[sl].size)
    result.only_in_one = int(cats.size - result.compared)
    return cats, sl


#: :func:`align` tries at most this many placements (a product over the spatial axes)
MAX_PLACEMENTS = 64


def _placements(builtin: tuple[int, ...], ours: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every offset that puts the smaller extent of each spatial axis inside the larger (all
    zeros, the comparison's own placement, first)."""
    ranges = [sorted(range(min(0, o - b), max(0, o - b) + 1), key=abs)
              for b, o in zip(builtin[2:], ours[2:], strict=True)]
    if math.prod(len(r) for r in ranges) > MAX_PLACEMENTS:
        return []
    return list(itertools.product(*ranges))


def align(builtin: np.ndarray, ours: np.ndarray) -> tuple[tuple[int, ...], np.ndarray] | None:
    """Where onnxruntime's output sits in ortpool's when their shapes differ on spatial axes only:
    the offset at which most cells are equal (floats within 1e-5 relative), and the categories
    on the union of both placed (so a picture does not paint a shifted plane red); None when N or
    C differ, or the placements exceed :data:`MAX_PLACEMENTS`."""
    if builtin.ndim != ours.ndim or builtin.ndim < 3 or builtin.shape[:2] != ours.shape[:2]:
        return None
    best, best_offset, best_same = -1, None, None
    for offset in _placements(builtin.shape, ours.shape):
        a_sl, b_sl = _placed(builtin.shape, ours.shape, offset)
        a, b = _wide(builtin[a_sl]), _wide(ours[b_sl])
        with np.errstate(invalid="ignore", over="ignore"):
            same = a == b
            if a.dtype.kind == "f":
                same |= (np.isnan(a) & np.isnan(b)) | np.isclose(a, b, rtol=1e-5, atol=0.0)
        score = int(same.sum())
        if score > best:
            best, best_offset, best_same = score, offset, same
    if best_offset is None or best_same is None:
        return None
    # the canvas: per spatial axis from the lower start to the higher end of the two placed
    start_b = [max(0, -o) for o in best_offset]  # ours' first cell on the canvas
    start_a = [sb + o for sb, o in zip(start_b, best_offset, strict=True)]
    extent = [max(sb + n_b, sa + n_a) for sb, sa, n_b, n_a
              in zip(start_b, start_a, ours.shape[2:], builtin.shape[2:], strict=True)]
    canvas = np.full((*ours.shape[:2], *extent), CAT_MISSING, np.int8)
    lo = [max(sa, sb) for sa, sb in zip(start_a, start_b, strict=True)]
    view = canvas[(slice(None), slice(None), *(slice(low, low + n) for low, n in
                                                zip(lo, best_same.shape[2:], strict=True)))]
    view[...] = np.where(best_same, CAT_AGREE, CAT_DIFFER)
    return best_offset, canvas


def _placed(builtin: tuple[int, ...], ours: tuple[int, ...], offset: tuple[int, ...]
            ) -> tuple[tuple[slice, ...], tuple[slice, ...]]:
    """The cells both outputs have when onnxruntime's cell i sits over ortpool's i + offset."""
    a_sl: list[slice] = [slice(None), slice(None)]
    b_sl: list[slice] = [slice(None), slice(None)]
    for n_a, n_b, o in zip(builtin[2:], ours[2:], offset, strict=True):
        first, last = max(0, -o), min(n_a, n_b - o)  # builtin cells with a partner
        a_sl.append(slice(first, last))
        b_sl.append(slice(first + o, last + o))
    return tuple(a_sl), tuple(b_sl)


def floating(a: np.ndarray) -> bool:
    return a.dtype.kind == "f" or a.dtype.name == "bfloat16"


def _wide(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) if floating(a) else a


def compare_values(name: str, dtype: str, builtin: np.ndarray, ours: np.ndarray,
                   tolerance: Tolerance, ruling: np.ndarray | None = None) -> TensorComparison:
    """Compare two value tensors; ``ruling`` marks (in ``ours``' shape) the cells rulings 5 and
    6 decide (docs/rulings.md)."""
    result = TensorComparison(name, dtype, tuple(builtin.shape), tuple(ours.shape),
                              tolerance.describe())
    cats, sl = _canvas(result, builtin, ours)
    if sl is None:
        return result
    if builtin.shape != ours.shape:
        found = align(builtin, ours)
        if found is not None:
            result.offset, result.aligned = found
    a, b = _wide(builtin[sl]), _wide(ours[sl])
    note = inaccurate = None
    with np.errstate(invalid="ignore", over="ignore"):
        same = a == b
        if a.dtype.kind == "f":
            same |= np.isnan(a) & np.isnan(b)
            diff = np.abs(a - b)
            if tolerance.accuracy is not None:
                note, inaccurate = _accuracy_classes(result, tolerance.accuracy, a, same, sl,
                                                     ruling)
                same |= note | inaccurate
            elif not tolerance.exact:
                # a finite cell against an infinite one is a difference, whatever the bound
                same |= np.isfinite(diff) & (diff <= tolerance.allowed(b, sl))
            finite = np.isfinite(a) & np.isfinite(b)
            if finite.any():
                result.max_abs = _finite_or_none(float(diff[finite].max()))
                nonzero = finite & (b != 0)
                if nonzero.any():
                    result.max_rel = _finite_or_none(
                        float((diff[nonzero] / np.abs(b[nonzero])).max()))
                else:
                    result.max_rel = 0.0 if result.max_abs == 0 else None
        else:
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            if diff.size:
                result.max_abs = float(diff.max())
    differ = ~same
    in_ruling = differ & (ruling[sl] if ruling is not None else False)
    result = _finish(result, cats, sl, differ & ~in_ruling, in_ruling, None, a, b)
    if note is not None and inaccurate is not None:
        view = cats[sl]
        view[note] = CAT_NOTE
        view[inaccurate] = CAT_INACCURATE
        if not result.examples:
            _examples(result, inaccurate if inaccurate.any() else note, a, b)
    return result


def _accuracy_classes(result: TensorComparison, acc: Accuracy, a: np.ndarray, same: np.ndarray,
                      sl: tuple[Any, ...], ruling: np.ndarray | None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Ruling 17 on a sum's cells ``a``: ``same`` gains those within the agree band; (note cells,
    inaccurate cells), the worst error in ``result.accuracy``; the rest differ."""
    exact = acc.exact[sl]
    err = np.abs(a - exact)
    finite = np.isfinite(err)
    same |= finite & (err <= acc.agree[sl])
    note = ~same & finite & (err <= acc.note[sl])
    inaccurate = ~same & ~note & finite & (err <= acc.rounding[sl])
    if ruling is not None:  # a NaN or empty window: ruling 5/6 decide, not rounding
        note &= ~ruling[sl]
        inaccurate &= ~ruling[sl]
    result.noted, result.inaccurate = int(note.sum()), int(inaccurate.sum())
    measured = finite & ~(ruling[sl] if ruling is not None else False)
    result.accuracy = figures(acc, err, measured, sl)
    return note, inaccurate


def figures(acc: Accuracy, err: np.ndarray, measured: np.ndarray, sl: tuple[Any, ...]) -> dict:
    """The worst cell's rounding: in ulp of the output type and in units of u*mean|x|, beside
    the pairwise bound, the agree band and the note limit (the same units)."""
    unit, cell_ulp = acc.unit[sl], acc.ulp[sl]
    with np.errstate(divide="ignore", invalid="ignore"):
        units = np.where(err == 0, 0.0, err / unit)
        ulps = err / cell_ulp
    units = np.where(measured, units, 0.0)
    worst = int(np.argmax(units)) if units.size else 0
    at = [int(i) for i in np.unravel_index(worst, units.shape)] if units.size else []
    out: dict[str, Any] = {
        "units": "u*" + acc.measure,
        "u": acc.u,
        "n": acc.n,
        "max_error_units": _finite_or_none(units.reshape(-1)[worst]) if units.size else 0.0,
        "max_error_ulp": _finite_or_none(np.where(measured, ulps, 0.0).max()) if ulps.size else 0.0,
        "at": at,
        "pairwise_bound_units": acc.pairwise,
        "agree_units": acc.rule.agree_factor * acc.pairwise,
        "note_limit": acc.rule.limit(acc.accumulation),
        "half_ulps": acc.rule.half_ulps if acc.half else None,
        "half": acc.half,
    }
    out["note_limit_units"] = out["note_limit"] / acc.u
    return out


def compare_indices(builtin: np.ndarray, ours: np.ndarray, x: np.ndarray,
                    ruling: np.ndarray | None = None,
                    column_major: bool = False) -> TensorComparison:
    """Compare Indices exactly; a differing index pointing at an input equal to ours is a tie.
    ``column_major``: the Indices of ``storage_order=1`` (ruling 7), each plane's spatial axes
    flattened last axis first, so a tie is read at the cell the index names there."""
    result = TensorComparison("Indices", "int64", tuple(builtin.shape), tuple(ours.shape), "exact")
    cats, sl = _canvas(result, builtin, ours)
    if sl is None:
        return result
    a, b = builtin[sl].astype(np.int64), ours[sl].astype(np.int64)
    differ = a != b
    flat = (x.transpose(0, 1, *range(x.ndim - 1, 1, -1)) if column_major else x).reshape(-1)
    valid = (a >= 0) & (a < flat.size) & (b >= 0) & (b < flat.size)
    tie = np.zeros_like(differ)
    if differ.any():
        tie = differ & valid & (flat[np.where(valid, a, 0)] == flat[np.where(valid, b, 0)])
        result.max_abs = float(np.abs(a - b)[differ].max())
    in_ruling = differ & (ruling[sl] if ruling is not None else False)
    tie &= ~in_ruling
    result.ties = int(tie.sum())
    return _finish(result, cats, sl, differ & ~tie & ~in_ruling, in_ruling, tie, a, b)


def _finish(result: TensorComparison, cats: np.ndarray, sl: tuple[slice, ...], plain: np.ndarray,
            in_ruling: np.ndarray, tie: np.ndarray | None, a: np.ndarray,
            b: np.ndarray) -> TensorComparison:
    """Count the differing cells, paint each compared cell's category on the canvas (a tie,
    a cell docs/rulings.md decides, a plain difference, else agreement) and keep a few examples."""
    result.differing = int(plain.sum())
    result.ruling_differing = int(in_ruling.sum())
    view = cats[sl]
    view[...] = CAT_AGREE
    if tie is not None:
        view[tie] = CAT_TIE
    view[in_ruling] = CAT_RULING
    view[plain] = CAT_DIFFER
    result.categories = cats
    _examples(result, plain if plain.any() else in_ruling, a, b)
    return result


def _examples(result: TensorComparison, mask: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    for pos in np.argwhere(mask)[:MAX_EXAMPLES]:
        key = tuple(int(p) for p in pos)
        result.examples.append({"at": list(key), "onnxruntime": _scalar(a[key]),
                                "ortpool": _scalar(b[key])})


def _scalar(value: Any) -> Any:
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def ruling_cells(x: np.ndarray, geom: PoolGeometry) -> tuple[np.ndarray, np.ndarray]:
    """(windows whose in-input taps include a NaN, windows of no input element: rulings 6, 5),
    each of the pooling output's shape."""
    n, c = x.shape[:2]
    out_shape = (n, c, *geom.output_spatial)
    empty = np.zeros((), bool)
    for a, g in enumerate(geom.axes):
        zero = g.counts(False) == 0
        empty = empty | zero.reshape((-1,) + (1,) * (len(geom.axes) - 1 - a))
    empty = np.broadcast_to(empty, out_shape)
    if floating(x):
        nan_in = np.isnan(x)
        if nan_in.any():
            nan = window_max(nan_in.astype(np.float32), geom) > 0
            return nan, empty
    return np.zeros(out_shape, bool), empty


def family_ruling_cells(op: str, feeds: list[np.ndarray],
                        attrs: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`ruling_cells` for the global pools (the window is the plane) and MaxRoiPool (the
    window is a bin); None for the other operators."""
    x = feeds[0]
    nan_in = np.isnan(x) if floating(x) else np.zeros(x.shape, bool)
    if op in GLOBAL_OPERATORS:
        axes = tuple(range(2, x.ndim))
        nan = nan_in.any(axis=axes, keepdims=True)
        empty = np.full(nan.shape, math.prod(x.shape[2:]) == 0)
        return nan, empty
    if op == "MaxRoiPool":
        from ortpool.kernels import max_roi_pool
        from ortpool.kernels.roipool import roi_bins

        rois = feeds[1].astype(np.float32)
        pooled, scale = attrs.pooled_shape, attrs.spatial_scale
        nan = max_roi_pool(nan_in.astype(np.float32), rois, pooled_shape=list(pooled),
                           spatial_scale=scale) > 0
        bins = roi_bins(rois, pooled, scale, x.shape)
        rows = bins.h_start >= bins.h_end  # (R, ph)
        cols = bins.w_start >= bins.w_end  # (R, pw)
        empty = rows[:, None, :, None] | cols[:, None, None, :]
        return nan, np.broadcast_to(empty, nan.shape)
    return None


def ruling_masks(site: Site, arrays: list[np.ndarray]
                 ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(windows holding a NaN, empty windows) of the spec's output of ``site`` on ``arrays``
    (X, and MaxRoiPool's rois), or Nones."""
    x = arrays[0]
    try:
        if site.windowed:
            geometry = site.at(x.shape).geometry()
            return ruling_cells(x, geometry) if geometry is not None else (None, None)
        if site.attrs is not None:
            return family_ruling_cells(site.op, list(arrays), site.attrs) or (None, None)
    except (ValueError, IndexError):
        pass
    return None, None
