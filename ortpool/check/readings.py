"""Alternative readings: the spec's outputs recomputed under the reading a runtime seems to follow.

Each :class:`Variant` reads the operator otherwise than the spec (SAME's pads for the undilated
kernel, Indices transposed, a norm taken as a mean...), computed by ortpool's kernels. A runtime
follows a reading when its outputs equal it (max values and Indices bit for bit, ties equal;
sums within rounding: :func:`close`), but for the cells the rulings decide (:func:`masks`);
:func:`explain` keeps the smallest set of variants that does.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from ortpool import kernels
from ortpool.attributes import PoolAttrs, RoiAttrs
from ortpool.check.compare import family_ruling_cells, floating
from ortpool.geometry import effective_kernel, pool_geometry, same_pads
from ortpool.model.site import MAX_LIKE, Site
from ortpool.tolerances import GLOBAL_SUMS, WINDOW_SUMS, window_size
from ortpool.versions import GLOBAL_OPERATORS, WINDOW_OPERATORS

#: the attributes that place a window (what MaxPool-22 takes of any window op's)
WINDOW_KEYS = ("kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "dilations")
SAME = ("SAME_UPPER", "SAME_LOWER")

Outputs = list[np.ndarray]

#: the cause codes (ortpool.check.causes imports them from here: one spelling)
SAME_DILATION = "same-dilation"
SAME_SIZE = "same-size"
CEIL_VALID = "ceil-valid"
UNDILATED_SIZE = "undilated-size"
END_PAD_WINDOW = "end-pad-window"
CEIL_PAD_SHIFT = "ceil-pad-shift"
WINDOW_BEYOND_INPUT = "window-beyond-input"
STORAGE_ORDER = "storage-order-layout"
LOWEST_MAX_INDEX = "lowest-max-index"
OVERHANG_DIVISOR = "overhang-divisor"
AVERAGE_COUNTS_PADS = "average-counts-pads"
LP_RESCALE = "lp-rescale"
DOUBLE_AS_FLOAT = "double-as-float32"
GLOBAL_NORM_MEAN = "global-norm-mean"
GLOBAL_AXES = "global-axes"
UNPOOL_OUTPUT_SHAPE = "unpool-output-shape"


@dataclasses.dataclass(frozen=True)
class Plan:
    """A reading's computation: ``op``-``version``'s kernel (or ``kernel``) with ``attributes``
    on X cropped by ``crop`` (a negative pad), in ``compute_as`` (cast back), then ``post``."""

    op: str
    version: int
    attributes: dict[str, Any]
    n_outputs: int
    crop: tuple[tuple[int, int], ...] | None = None
    compute_as: str | None = None
    kernel: Callable[[Plan, Outputs], Outputs] | None = None
    post: tuple[Callable[[Outputs], Outputs], ...] = ()

    def but(self, **changes: Any) -> Plan:
        """This plan with ``changes``; ``attributes`` given as a dict are merged."""
        if "attributes" in changes:
            changes["attributes"] = {**self.attributes, **changes["attributes"]}
        return dataclasses.replace(self, **changes)

    def then(self, step: Callable[[Outputs], Outputs]) -> Plan:
        return dataclasses.replace(self, post=(*self.post, step))


@dataclasses.dataclass(frozen=True)
class Variant:
    """One reading: the cause it confirms, in words, and how it changes the spec's :class:`Plan`;
    variants of one ``slot`` exclude each other, ``stage`` orders a combination's changes."""

    code: str
    detail: str
    change: Callable[[Plan], Plan]
    slot: str
    stage: int = 0


def spec_plan(site: Site) -> Plan:
    """The spec's own computation of ``site``: its kernel at its version, as it stands."""
    return Plan(site.op, site.version, dict(site.attributes), site.n_outputs)


def run(plan: Plan, arrays: Sequence[np.ndarray]) -> Outputs:
    """The outputs ``plan`` computes on the node's inputs ``arrays`` (copies: a kernel may hand
    back a buffer it reuses)."""
    feeds = list(arrays)
    x = feeds[0]
    if plan.crop is not None:
        feeds[0] = x = _cropped(x, plan.crop)
    if plan.compute_as is not None:
        with np.errstate(over="ignore"):  # beyond its range a narrower type holds infinity
            feeds[0] = x.astype(plan.compute_as)
    if plan.kernel is not None:
        outs = plan.kernel(plan, feeds)
    else:
        outs = [np.array(o, copy=True) for o in kernels.run_op(
            plan.op, plan.version, feeds, plan.attributes, plan.n_outputs)]
    if plan.compute_as is not None:
        outs[0] = outs[0].astype(arrays[0].dtype)
    if plan.crop is not None and len(outs) > 1:
        outs[1] = _uncropped_indices(outs[1], x.shape, arrays[0].shape, plan.crop,
                                     _storage_order_of(plan))
    for step in plan.post:
        outs = step(outs)
    return outs


def _storage_order_of(plan: Plan) -> int:
    return int(plan.attributes.get("storage_order", 0) or 0)


def _uncropped_indices(indices: np.ndarray, cropped: Sequence[int], whole: Sequence[int],
                       crop: Sequence[tuple[int, int]], storage_order: int) -> np.ndarray:
    """Indices computed on a cropped X as offsets into the whole X (in the layout of
    ``storage_order``): what a runtime that read the whole X gives."""
    inner, outer = tuple(cropped[2:]), tuple(whole[2:])
    begins = [b for b, _ in crop]
    if storage_order:
        inner, outer, begins = inner[::-1], outer[::-1], begins[::-1]
    plane_in, plane_out = math.prod(inner), math.prod(outer)
    valid = indices >= 0
    plane, offset = np.divmod(np.where(valid, indices, 0), max(plane_in, 1))
    coords = np.unravel_index(offset, inner) if plane_in else ()
    moved = np.ravel_multi_index(tuple(c + b for c, b in zip(coords, begins, strict=True)),
                                 outer) if plane_in else offset
    return np.where(valid, plane * plane_out + moved, indices).astype(indices.dtype)


def _cropped(x: np.ndarray, crop: Sequence[tuple[int, int]]) -> np.ndarray:
    return x[(slice(None), slice(None), *(slice(a, x.shape[2 + i] - b)
                                         for i, (a, b) in enumerate(crop)))]


def masks(plan: Plan, arrays: Sequence[np.ndarray]) -> tuple[Outputs, Outputs, Outputs] | None:
    """The windows holding a NaN, windows of no input element (rulings 5, 6, 13, 14 decide them)
    and cells a step of ``plan`` adds (a kept end-pad window), each as ``plan`` lays out [Y,
    Indices]; None where none."""
    x = arrays[0] if plan.crop is None else _cropped(arrays[0], plan.crop)
    if plan.op in GLOBAL_OPERATORS:
        nan, empty = family_ruling_cells(plan.op, [x], None)
    elif plan.op == "MaxRoiPool":  # a window is a bin
        roi = RoiAttrs(tuple(plan.attributes["pooled_shape"]),
                       float(plan.attributes.get("spatial_scale", 1.0)))
        nan, empty = family_ruling_cells(plan.op, [x, *arrays[1:]], roi)
    elif plan.op in WINDOW_OPERATORS:
        nan_in = np.isnan(x) if floating(x) else np.zeros(x.shape, bool)
        attrs = _window_attrs(plan)
        try:
            empty = kernels.max_pool(np.ones(x.shape, np.float32), version=22, **attrs) == -np.inf
            nan = kernels.max_pool(nan_in.astype(np.float32), version=22, **attrs) > 0
        except Exception:  # a reading the kernels refuse marks nothing
            return None
        empty = np.array(empty, copy=True)
        nan = np.array(nan, copy=True) & ~empty
    else:
        return None
    found: list[Outputs] = []
    for mask, fresh in ((nan, False), (empty, True), (np.zeros_like(empty), True)):
        outs: Outputs = [mask, mask.copy()]
        for step in plan.post:
            outs = step(outs) if fresh else _keep_closed(step, outs)
        found.append([np.asarray(o, bool) for o in outs])
    return found[0], found[1], found[2]


def neg_inf_windows(plan: Plan, arrays: Sequence[np.ndarray]) -> np.ndarray | None:
    """Per cell of ``plan``'s Y, whether its window holds -inf alone (a max; None for another
    op): the runtimes give the type's lowest finite value there in some windows or all, so
    those cells are read apart, as a NaN's are."""
    x = arrays[0]
    if plan.op not in MAX_LIKE or not floating(x) or not (x == -np.inf).any():
        return None
    single = dataclasses.replace(plan, n_outputs=1)
    try:  # a window's max of 0 where -inf is 0 and all else 1: -inf alone; of ones: not empty
        some = run(single, [(x != -np.inf).astype(x.dtype), *arrays[1:]])[0]
        full = run(single, [np.ones_like(x), *arrays[1:]])[0]
    except Exception:  # a reading the kernels refuse marks nothing
        return None
    return (some == 0) & (full == 1)


def _keep_closed(step: Callable[[Outputs], Outputs], outs: Outputs) -> Outputs:
    """``step`` on a NaN mask: cells a step adds (a kept end-pad window) are empty windows,
    marked in the empty mask alone."""
    kept = []
    for before, after in zip(outs, step(outs), strict=True):
        if after.shape != before.shape and after.ndim == before.ndim and all(
                a >= b for a, b in zip(after.shape, before.shape, strict=True)):
            grown = np.zeros(after.shape, bool)
            grown[tuple(slice(0, n) for n in before.shape)] = before
            after = grown
        kept.append(after)
    return kept


_UNIT = {"float64": 2.0**-53, "float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}


def close(got: np.ndarray, want: np.ndarray, x: np.ndarray, window: int,
          unit: float | None = None) -> np.ndarray:
    """Per cell, whether a sum ``got`` is ``want`` up to rounding: 2 ulp, or what a running sum
    of ``window`` terms of unit roundoff ``unit`` may lose, ``window * unit * (|want| + max|x|)``
    (other semantics are further off than that on the grid's inputs)."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    u = unit if unit is not None else _UNIT.get(want.dtype.name, 2.0**-24)
    finite_x = np.abs(x.astype(np.float64))
    finite_x = finite_x[np.isfinite(finite_x)]
    scale = float(finite_x.max()) if finite_x.size else 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        bound = np.maximum(2 * (np.abs(w) * 2 * u), window * u * (np.abs(w) + scale))
        return (g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= bound)


def equal_values(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Per cell, bit for bit equality of max values (NaN equal to NaN)."""
    if floating(want):
        g, w = got.astype(np.float64), want.astype(np.float64)
        return (g == w) | (np.isnan(g) & np.isnan(w))
    return got == want


def equal_indices(got: np.ndarray, want: np.ndarray, x: np.ndarray, storage_order: int
                  ) -> np.ndarray:
    """Per cell, whether Index ``got`` is ``want`` or a tie (another position of X holding the
    same value), positions read in the layout of ``storage_order`` (ruling 7)."""
    same = got == want
    if same.all():
        return same
    wide = x.astype(np.float64)
    if storage_order and x.ndim > 3:  # the spatial offset column-major
        wide = wide.transpose(0, 1, *range(x.ndim - 1, 1, -1))
    flat = wide.reshape(-1)
    valid = (got >= 0) & (got < flat.size) & (want >= 0) & (want < flat.size)
    return same | (valid & equal_values(flat[np.where(valid, got, 0)],
                                        flat[np.where(valid, want, 0)]))


def _matches(site: Site, plan: Plan, arrays: Sequence[np.ndarray], want: Outputs,
             got: Sequence[np.ndarray], unit: float | None = None) -> bool:
    """Whether the runtime's outputs ``got`` are ``want``, ``plan``'s outputs on ``arrays``, in
    every cell but the open ones (:func:`masks`, in ``plan``'s layout of Y and of Indices)."""
    read = site.indices_read and len(want) > 1
    if len(got) < (2 if read else 1):
        return False
    y, w = np.asarray(got[0]), want[0]
    if y.shape != w.shape:
        return False
    found = masks(plan, arrays)
    if site.op in WINDOW_SUMS + GLOBAL_SUMS and floating(w):
        same = close(y, w, arrays[0], window_size(plan.op, arrays[0].shape, plan.attributes), unit)
    else:
        same = equal_values(y, w)
    if found is not None and (found[0][0] | found[1][0]).shape == same.shape:
        same = same | found[0][0] | found[1][0]
    lone = neg_inf_windows(plan, arrays)
    if lone is not None and lone.shape == same.shape:
        same = same | lone
    if not read:
        return bool(same.all())
    i, wi = np.asarray(got[1]), want[1]
    if i.shape != wi.shape:
        return False
    same_i = equal_indices(i.astype(np.int64), wi.astype(np.int64), arrays[0],
                           _storage_order_of(plan))
    if found is not None and len(found[0]) > 1 and (
            found[0][1] | found[1][1]).shape == same_i.shape:
        same_i = same_i | found[0][1] | found[1][1]
    return bool(same.all() and same_i.all())


def count_taps(plan: Plan, indicator: np.ndarray) -> np.ndarray:
    """Per window of ``plan``, the sum of ``indicator`` (0/1, X's shape) over its taps inside
    the input; for a global pool over the plane."""
    if plan.op in GLOBAL_OPERATORS:
        return indicator.sum(axis=tuple(range(2, indicator.ndim)), keepdims=True)
    if plan.crop is not None:
        indicator = _cropped(indicator, plan.crop)
    counts = _taps(plan, indicator)
    for step in plan.post:
        counts = step([counts, counts])[0]
    return counts


@dataclasses.dataclass
class Explanation:
    """The smallest set of ``variants`` whose reading (``plan``: ``outputs``) gives the runtime's;
    else ``matched`` False, ``tried`` the codes contradicted. ``also``: other readings that fit."""

    matched: bool
    variants: list[Variant]
    tried: list[str]
    plan: Plan | None = None
    outputs: Outputs | None = None
    also: list[str] = dataclasses.field(default_factory=list)


def explain(site: Site, arrays: Sequence[np.ndarray], got: Sequence[np.ndarray],
            candidates: Sequence[Variant], most: int = 3) -> Explanation:
    """The smallest combination of ``candidates`` (one to ``most``) whose reading of ``site`` on
    ``arrays`` gives the runtime's outputs ``got``; one of them must change the spec's outputs.
    None where the spec's own outputs give them (a built set differs in the rulings' cells)."""
    base = spec_plan(site)
    try:
        spec_out = run(base, arrays)
    except Exception:  # the spec refuses the input: nothing to read otherwise
        return Explanation(False, [], [])
    if _matches(site, base, arrays, spec_out, got):
        return Explanation(True, [], [], base, spec_out)
    computable, changing = [], set()
    for variant in candidates:
        outs = _reading(base, arrays, [variant])[1]
        if outs is not None:
            computable.append(variant)
            if not _same_outputs(outs, spec_out):
                changing.add(id(variant))
    for size in range(1, min(most, len(computable)) + 1):
        first: Explanation | None = None
        for combo in itertools.combinations(computable, size):
            # one that changes nothing alone may matter with another (a rescale of the border
            # windows VALID has none of, until ceil makes one), but one at least must change
            if len({v.slot for v in combo}) < size or not any(id(v) in changing for v in combo):
                continue
            plan, outs = _reading(base, arrays, combo)
            if outs is None or not _matches(site, plan, arrays, outs, got,
                                            _UNIT.get(plan.compute_as)):
                continue
            # each member must be needed: without it the reading's outputs are other ones
            if size > 1 and any(_same_outputs(_reading(base, arrays, [w for w in combo if w
                                                                      is not v])[1] or [], outs)
                                for v in combo):
                continue
            if first is None:
                first = Explanation(True, list(combo), [], plan, outs)
            elif {v.code for v in combo} != {v.code for v in first.variants}:
                # said, not counted: the first in the candidates' order is named
                first.also.append(" + ".join(v.code for v in combo))
        if first is not None:
            return first
    return Explanation(False, [], sorted({v.code for v in computable if id(v) in changing}))


def _reading(base: Plan, arrays: Sequence[np.ndarray], combo: Sequence[Variant]
             ) -> tuple[Plan, Outputs | None]:
    """``combo``'s reading and its outputs (None: the kernels cannot compute it)."""
    plan = base
    for variant in sorted(combo, key=lambda v: v.stage):
        plan = variant.change(plan)
    try:
        return plan, run(plan, arrays)
    except Exception:  # a reading the kernels cannot compute is no reading
        return plan, None


def _same_outputs(a: Outputs, b: Outputs) -> bool:
    return len(a) == len(b) and all(x.shape == y.shape and bool(equal_values(x, y).all())
                                    for x, y in zip(a, b, strict=True))


def variants(site: Site, arrays: Sequence[np.ndarray]) -> list[Variant]:
    """Every reading of ``site`` on ``arrays`` a runtime is known to follow where it applies:
    the candidates :func:`explain` tries."""
    x = arrays[0]
    spatial = tuple(int(n) for n in x.shape[2:])
    found: list[Variant] = []
    attrs = site.at(x.shape).attrs if site.attrs is not None else None
    if site.op in WINDOW_OPERATORS and isinstance(attrs, PoolAttrs):
        for make in (_same_dilation, _same_size, _ceil_valid, _undilated_size, _end_pad_window,
                     _ceil_pad_shift, _window_beyond_input, _storage_order, _lowest_max_index,
                     _overhang_divisor, _average_counts_pads, _lp_rescale):
            found += make(site, attrs, spatial)
    if site.op == "GlobalLpPool":
        found += _global_norm_mean(site)
    if site.op in GLOBAL_OPERATORS and x.ndim != 4:
        found += _global_axes(site, x.ndim)
    if site.op == "MaxUnpool" and len(arrays) > 2:
        found += _unpool_default_then_extend(site, arrays)
    if x.dtype == np.float64 and site.op != "MaxUnpool":
        found.append(Variant(
            DOUBLE_AS_FLOAT,
            "the runtime computes the double node in float32: its output equals the spec's on "
            "X rounded to float32, computed in float32",
            lambda plan: plan.but(compute_as="float32"), "precision"))
    return found


def axes(attrs: PoolAttrs, spatial: Sequence[int]
         ) -> Iterator[tuple[int, int, int, int, int, int, int, int]]:
    """Per spatial axis ``(i, n, k, s, d, pb, pe, ek)``: the pads as written (0 unless
    auto_pad is NOTSET), ``ek`` the dilated kernel span."""
    for i, n in enumerate(spatial):
        k, s, d = attrs.kernel_shape[i], attrs.strides[i], attrs.dilations[i]
        pb, pe = ((attrs.pads[i], attrs.pads[i + attrs.rank]) if attrs.auto_pad == "NOTSET"
                  else (0, 0))
        yield i, n, k, s, d, pb, pe, effective_kernel(k, d)


def dilated_same(attrs: PoolAttrs) -> str:
    """SAME with dilation, in words ("": not that): the geometric cause, and what the
    reading's words start with."""
    if attrs.auto_pad not in SAME or all(d <= 1 for d in attrs.dilations):
        return ""
    return (f"auto_pad={attrs.auto_pad} with dilations={list(attrs.dilations)}: the pads must "
            "cover the dilated kernel span (k-1)*d+1")


def ceil_valid_words(axis: int, valid: int, ceil: int) -> str:
    return (f"axis {axis}: VALID gives floor((n-ek)/s)+1 = {valid} windows; ceil_mode would "
            f"give {ceil}")


def end_pad_windows(attrs: PoolAttrs, spatial: Sequence[int]) -> list[tuple[int, int, int]]:
    """ceil mode's last windows that start in the end pad (the spec drops them): (axis, the
    window, where it starts)."""
    if attrs.auto_pad != "NOTSET" or not attrs.ceil_mode:
        return []
    found = []
    for i, n, _, s, _, pb, pe, ek in axes(attrs, spatial):
        span = n + pb + pe - ek
        out = -(-span // s) + 1
        if span >= 0 and (out - 1) * s >= n + pb:
            found.append((i, out - 1, (out - 1) * s - pb))
    return found


def beyond_input(attrs: PoolAttrs, spatial: Sequence[int]) -> list[tuple[int, str, bool]]:
    """Axes where a kernel longer than the padded input gets no window (ruling 19): (axis, in
    words, whether a quotient truncated toward zero, as onnxruntime divides, gives one)."""
    if attrs.auto_pad not in ("NOTSET", "VALID"):
        return []
    ceil = bool(attrs.ceil_mode) and attrs.auto_pad == "NOTSET"
    found = []
    for i, n, _, s, _, pb, pe, ek in axes(attrs, spatial):
        span = n + pb + pe - ek
        out = (-(-span // s) if ceil else span // s) + 1
        if span < 0 and out <= 0:
            found.append((i, f"axis {i}: kernel span {ek} > padded input {n} + {pb} + {pe}: "
                          f"{'ceil' if ceil else 'floor'}({span}/{s}) + 1 = {out}, no window "
                          "(ruling 19): the spec's output is empty there", int(span / s) + 1 > 0))
    return found


def _explicit(site: Site, pads: Sequence[int], ceil: int | None = None) -> dict[str, Any]:
    """Attributes placing the windows by explicit ``pads``, ceil_mode set to ``ceil`` where
    given and the version has it."""
    out: dict[str, Any] = {"auto_pad": "NOTSET", "pads": [int(p) for p in pads]}
    if ceil is not None and "ceil_mode" in site.spec.attrs:
        out["ceil_mode"] = ceil
    return out


def _pads_text(pads: Sequence[int]) -> str:
    return str([int(p) for p in pads])


def _same_dilation(site: Site, attrs: PoolAttrs, spatial: Sequence[int]) -> list[Variant]:
    """SAME's pads computed for the undilated kernel (onnxruntime, which sizes the output by
    them; the reference, which keeps ceil(n/s) windows, those past the padded end 0)."""
    words = dilated_same(attrs)
    if not words:
        return []
    ends = [same_pads(n, attrs.kernel_shape[i], attrs.strides[i], 1,
                      attrs.auto_pad == "SAME_UPPER")[1:] for i, n in enumerate(spatial)]
    pads = [b for b, _ in ends] + [e for _, e in ends]
    words += ("; the runtime computes them for the undilated kernel: its output equals the "
              f"spec's with pads {_pads_text(pads)} instead of "
              f"{_pads_text(pool_geometry(spatial, attrs).pads)}")
    explicit = _explicit(site, pads)  # ceil_mode stays: onnxruntime sizes the pads by it
    sizes = [-(-n // s) for n, s in zip(spatial, attrs.strides, strict=True)]
    return [
        Variant(SAME_DILATION, words, lambda plan: plan.but(attributes=explicit), "window"),
        Variant(SAME_DILATION, words + f", {sizes} windows as SAME has, those past the padded "
                "end 0", lambda plan: plan.but(attributes=explicit).then(_zero_extend(sizes)),
                "window"),
    ]


def _zero_extend(sizes: Sequence[int]) -> Callable[[Outputs], Outputs]:
    """Y (and Indices) padded at the end of each spatial axis to ``sizes`` with zeros (the
    cells a runtime allocates and never writes; masks with False: compared)."""

    def step(outs: Outputs) -> Outputs:
        return [np.pad(a, [(0, 0), (0, 0), *((0, max(0, s - n)) for s, n in
                                              zip(sizes, a.shape[2:], strict=True))])
                for a in outs]

    return step


def _same_size(site: Site, attrs: PoolAttrs, spatial: Sequence[int]) -> list[Variant]:
    """SAME_LOWER sized floor(n/s) with UPPER's split of the (then possibly negative) pad, a
    negative pad cropping X (the ONNX reference's MaxPool)."""
    if attrs.auto_pad != "SAME_LOWER":
        return []
    crop, pads, sizes = [], [0] * (2 * len(spatial)), []
    for i, n, _, s, _, _, _, ek in axes(attrs, spatial):
        out = n // s
        total = (out - 1) * s + ek - n
        b = total // 2
        e = total - b
        crop.append((max(0, -b), max(0, -e)))
        pads[i], pads[i + len(spatial)] = max(0, b), max(0, e)
        sizes.append(out)
    spec_sizes = [-(-n // s) for n, s in zip(spatial, attrs.strides, strict=True)]
    if sizes == spec_sizes:
        return []
    words = (f"the runtime sizes SAME_LOWER floor(n/s): {sizes} windows where the spec's "
             f"ceil(n/s) gives {spec_sizes}, placed as SAME_UPPER's pads would be")
    explicit = _explicit(site, pads, 0)
    return [Variant(SAME_SIZE, words,
                    lambda plan: plan.but(attributes=explicit, crop=tuple(crop)), "window")]


def _ceil_valid(site: Site, attrs: PoolAttrs, spatial: Sequence[int]) -> list[Variant]:
    """VALID with ceil_mode sized by ceil: the last window hangs past the input."""
    if attrs.auto_pad != "VALID" or not attrs.ceil_mode:
        return []
    explicit = _explicit(site, [0] * (2 * len(spatial)), 1)
    sizes = [max(0, -(-(n - effective_kernel(k, d)) // s) + 1) for n, k, s, d in
             zip(spatial, attrs.kernel_shape, attrs.strides, attrs.dilations, strict=True)]
    spec = list(pool_geometry(spatial, attrs).output_spatial)
    axis = next((i for i, (a, b) in enumerate(zip(sizes, spec, strict=True)) if a != b), 0)
    return [Variant(CEIL_VALID, f"{ceil_valid_words(axis, spec[axis], sizes[axis])}: the "
                    f"runtime applies ceil_mode to VALID, its output equals the spec's with "
                    f"ceil's sizes {sizes} instead of {spec} (the last window hangs past the "
                    "input)", lambda plan: plan.but(attributes=explicit), "window")]


def _undilated_size(site: Site, attrs: PoolAttrs, spatial: Sequence[int]) -> list[Variant]:
    """VALID with dilation sized for the undilated kernel, floor((n - k)/s) + 1 windows, those
    the dilated span does not fit 0 (the ONNX reference's sums)."""
    if attrs.auto_pad != "VALID" or all(d <= 1 for d in attrs.dilations):
        return []
    sizes = [max(0, (n - k) // s + 1) for n, k, s in
             zip(spatial, attrs.kernel_shape, attrs.strides, strict=True)]
    spec = list(pool_geometry(spatial, attrs).output_spatial)
    if sizes == spec:
        return []
    words = (f"the runtime sizes VALID for the undilated kernel: {sizes} windows where the "
             f"dilated span fits {spec}; the windows past the input are 0")
    return [Variant(UNDILATED_SIZE, words, lambda plan: plan.then(_zero_extend(sizes)), "end",
                    stage=2)]


def _end_pad_window(site: Site, attrs: PoolAttrs, spatial: Sequence[int]) -> list[Variant]:
    """ceil mode's last window kept where it starts in the end pad (the spec drops it): one
    more window on those axes, holding no input element."""
    found = end_pad_windows(attrs, spatial)
    if not found:
        return []
    where = "; ".join(f"axis {i}: window {j} starts at {t} >= n = {spatial[i]}"
                      for i, j, t in found)
    words = (f"the runtime keeps ceil mode's last window, which starts in the end pad ({where}): "
             "its output equals the spec's with that window kept (it holds no input element)")

    def step(outs: Outputs) -> Outputs:  # the window's cell: open in a mask, NaN, Index -1
        done = []
        for a in outs:
            for axis, _, _ in found:
                widths = [(0, 0)] * a.ndim
                widths[2 + axis] = (0, 1)
                if a.dtype == bool:
                    a = np.pad(a, widths, constant_values=True)
                elif floating(a):
                    a = np.pad(a.astype(np.float64), widths,
                               constant_values=np.nan).astype(a.dtype)
                else:
                    a = np.pad(a, widths, constant_values=-1)
            done.append(a)
        return done

    return [Variant(END_PAD_WINDOW, words, lambda plan: plan.then(step), "end", stage=2)]


def _ceil_pad_shift(site: Site, attrs: PoolAttrs, spatial: Sequence[int]) -> list[Variant]:
    """ceil mode's missing end padded half at the start: every window starts ``extra // 2``
    earlier (the ONNX reference's sums), taps past ``n + pe`` cut."""
    if attrs.auto_pad != "NOTSET" or not attrs.ceil_mode:
        return []
    try:
        geom = pool_geometry(spatial, attrs)
    except Exception:  # a node the spec refuses has no windows to move
        return []
    crop, pads, shifts = [], list(attrs.pads), []
    for i, g in enumerate(geom.axes):
        extra = (g.out - 1) * g.s + effective_kernel(g.k, g.d) - (g.n + g.pb + g.pe)
        front = max(0, extra) // 2
        shifts.append(front)
        pads[i] = g.pb + front
        crop.append((0, max(0, front - g.pe)))
        pads[i + len(spatial)] = max(0, g.pe - front)
    if not any(shifts):
        return []
    words = (f"the runtime pads ceil mode's missing end half at the start: its windows start "
             f"{shifts} earlier than the pads {_pads_text(attrs.pads)} place them (its output "
             f"equals the spec's with pads {_pads_text(pads)})")
    return [Variant(CEIL_PAD_SHIFT, words,
                    lambda plan: plan.but(attributes={"pads": pads}, crop=tuple(crop)),
                    "window")]


def _window_beyond_input(site: Site, attrs: PoolAttrs, spatial: Sequence[int]) -> list[Variant]:
    """One window where ruling 19's formula gives none: onnxruntime truncates the negative
    quotient toward zero."""
    found = [(i, words) for i, words, truncated in beyond_input(attrs, spatial) if truncated]
    if not found:
        return []
    pads = list(attrs.pads) if attrs.auto_pad == "NOTSET" else [0] * (2 * len(spatial))
    words = (f"{found[0][1]}; the runtime makes one window on axes {[i for i, _ in found]} (it "
             "truncates the negative quotient toward zero): its output equals the spec's in "
             "ceil mode")
    return [Variant(WINDOW_BEYOND_INPUT, words, lambda plan: plan.but(
        attributes=_explicit(site, pads, 1)), "window")]


def _storage_order(site: Site, attrs: PoolAttrs, spatial: Sequence[int]) -> list[Variant]:
    """storage_order=1 Indices as the row-major offset, written transposed (OpenVINO), or
    simply row-major."""
    if site.op != "MaxPool" or not site.indices_read or not attrs.storage_order:
        return []
    row = {"storage_order": 0}
    out = [Variant(STORAGE_ORDER, "the runtime writes storage_order=1 Indices as the row-major "
                   "offset, its spatial axes transposed: its Indices equal the spec's "
                   "storage_order=0 Indices with the spatial axes reversed",
                   lambda plan: plan.but(attributes=row).then(_transpose_indices), "order",
                   stage=4)]
    if len(spatial) > 1:
        out.append(Variant(STORAGE_ORDER, "the runtime ignores storage_order=1: its Indices "
                           "are the row-major offsets", lambda plan: plan.but(attributes=row),
                           "order", stage=4))
    return out


def indices_cell_aligned(plan: Plan) -> bool:
    """Whether ``plan``'s Indices cell i belongs to Y's cell i (not written transposed)."""
    return _transpose_indices not in plan.post


def _transpose_indices(outs: Outputs) -> Outputs:
    if len(outs) < 2:
        return outs
    i = outs[1]
    return [outs[0], i.transpose(0, 1, *range(i.ndim - 1, 1, -1))]


def _lowest_max_index(site: Site, attrs: PoolAttrs, spatial: Sequence[int]) -> list[Variant]:
    """A window whose maximum is the type's lowest value indexed at its plane's first element:
    a running argmax started there that only a greater value moves (tract)."""
    if site.op != "MaxPool" or not site.indices_read:
        return []

    def step(outs: Outputs) -> Outputs:
        if len(outs) < 2 or outs[0].dtype == bool:
            return outs
        y, i = outs
        # a float argmax starts at the lowest finite value (tract, OpenVINO): -inf is below it
        low = ml_dtypes.finfo(y.dtype).min if floating(y) else np.iinfo(y.dtype).min
        starts = np.arange(y.shape[0] * y.shape[1]).reshape(
            *y.shape[:2], *([1] * (y.ndim - 2))) * math.prod(spatial)
        return [y, np.where(y.astype(np.float64) <= low, starts, i).astype(i.dtype)]

    return [Variant(LOWEST_MAX_INDEX, "where a window's maximum is the type's lowest value, the "
                    "runtime's Index is its plane's first element (an argmax started there that "
                    "no greater value moved), not the window's first maximum",
                    # before a transposition: it reads Y's cell of each Index
                    lambda plan: plan.then(step), "index", stage=3)]


def _overhang_divisor(site: Site, attrs: PoolAttrs, spatial: Sequence[int]) -> list[Variant]:
    """count_include_pad dividing by the whole kernel, the ceil overhang's taps counted too
    (ruling 8 counts the padded input only)."""
    if site.op != "AveragePool" or not attrs.count_include_pad:
        return []
    full = math.prod(attrs.kernel_shape)

    def kernel(plan: Plan, feeds: Outputs) -> Outputs:  # each window's sum over the input / full
        x = feeds[0]
        mean = kernels.average_pool(x.astype(np.float64), version=22,
                                    **{**_window_attrs(plan), "count_include_pad": 0})
        count = _taps(plan, np.ones(x.shape, np.float64))
        with np.errstate(invalid="ignore"):
            return [np.where(count > 0, mean * count / full, 0.0).astype(x.dtype)]

    return [Variant(OVERHANG_DIVISOR, f"the runtime divides every window by the kernel's {full} "
                    "taps, the ceil overhang past the end pad counted too",
                    lambda plan: plan.but(kernel=kernel), "divisor", stage=1)]


def _average_counts_pads(site: Site, attrs: PoolAttrs, spatial: Sequence[int]) -> list[Variant]:
    """AveragePool-1 (which has no count_include_pad) counting the pads in the divisor."""
    if site.op != "AveragePool" or site.version != 1 or attrs.count_include_pad:
        return []
    if attrs.auto_pad == "VALID" or (attrs.auto_pad == "NOTSET" and not any(attrs.pads)):
        return []
    return [Variant(AVERAGE_COUNTS_PADS, "the runtime counts the pads in AveragePool-1's "
                    "divisor: its output equals the spec's with count_include_pad=1",
                    lambda plan: plan.but(version=7, attributes={"count_include_pad": 1}),
                    "divisor", stage=1)]


def _window_attrs(plan: Plan) -> dict[str, Any]:
    """``plan``'s window-placing attributes (the helper kernels run at version 22: it has all)."""
    return {k: v for k, v in plan.attributes.items() if k in WINDOW_KEYS}


def _taps(plan: Plan, values: np.ndarray) -> np.ndarray:
    """Per window of ``plan``, the sum of ``values`` over its taps inside the input."""
    return kernels.lp_pool(values, version=22, p=1, **_window_attrs(plan))


def _lp_rescale(site: Site, attrs: PoolAttrs, spatial: Sequence[int]) -> list[Variant]:
    """LpPool's sum of |x|^p scaled by kernel size / taps inside the padded input (or the input)
    before the root (the ONNX reference, after PyTorch; ruling 12)."""
    if site.op != "LpPool":
        return []
    full = math.prod(attrs.kernel_shape)
    p = attrs.p

    def kernel(plan: Plan, feeds: Outputs, padded: bool) -> Outputs:
        x = feeds[0]
        powered = np.abs(x.astype(np.float64)) ** float(p)
        ones = np.ones(x.shape, np.float64)
        sums, count = _taps(plan, powered), _taps(plan, ones)
        if padded:  # taps inside [-pb, n + pe): the inside count over cip=1's mean of ones
            share = kernels.average_pool(ones, version=22, count_include_pad=1,
                                         **_window_attrs(plan))
            with np.errstate(invalid="ignore", divide="ignore"):
                count = np.where(share > 0, count / share, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            y = np.where(count > 0, (sums * full / count) ** (1.0 / float(p)), 0.0)
        return [y.astype(x.dtype)]

    return [Variant(
        LP_RESCALE, f"the runtime scales each window's sum of |x|^{p} by the kernel's {full} "
        f"taps over its taps inside {'the padded input' if padded else 'the input'} before the "
        "root (a mean times the kernel size): windows at the borders come out larger",
        lambda plan, padded=padded: plan.but(kernel=functools.partial(kernel, padded=padded)),
        "divisor", stage=1) for padded in (True, False)]


def _global_norm_mean(site: Site) -> list[Variant]:
    """GlobalLpPool as (mean |x|^p)^(1/p); second reading, without the absolute value (tract:
    p = 1 gives the plane's signed mean)."""
    p = float(site.attributes.get("p", 2))

    def kernel(plan: Plan, feeds: Outputs, signed: bool) -> Outputs:
        x = feeds[0]
        wide = x.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            terms = np.power(wide if signed else np.abs(wide), p)
            mean = terms.mean(axis=tuple(range(2, x.ndim)), keepdims=True)
            return [np.power(mean, 1.0 / p).astype(x.dtype)]

    return [Variant(
        GLOBAL_NORM_MEAN, f"the runtime computes (mean {'x' if signed else '|x|'}^{p:g})^(1/{p:g})"
        f" over the plane, not the Lp norm (sum |x|^{p:g})^(1/{p:g})" + (
            ", the signs of x kept" if signed
            else f": its output is the spec's divided by (plane size)^(1/{p:g})"),
        lambda plan, signed=signed: plan.but(kernel=functools.partial(kernel, signed=signed)),
        "divisor", stage=1) for signed in (False, True)]


def _global_axes(site: Site, ndim: int) -> list[Variant]:
    """A global pool over the last two axes whatever the rank (the reference's GlobalMaxPool):
    at rank 1 the channels are pooled too, at rank 3 the first spatial axis is not."""
    if site.op != "GlobalMaxPool":
        return []
    spatial = ndim - 2

    def kernel(plan: Plan, feeds: Outputs) -> Outputs:
        y = feeds[0].max(axis=tuple(range(spatial, spatial + 2)))
        return [np.expand_dims(y, tuple(range(-spatial, 0)))]

    return [Variant(GLOBAL_AXES, f"the runtime reduces axes {[spatial, spatial + 1]} of the "
                    f"rank-{ndim} input, not its spatial axes {list(range(2, ndim))}: its output "
                    "has another shape", lambda plan: plan.but(kernel=kernel), "divisor",
                    stage=1)]


def _unpool_default_then_extend(site: Site, arrays: Sequence[np.ndarray]) -> list[Variant]:
    """MaxUnpool with output_shape: the scatter into the default shape, zero-extended to
    output_shape afterwards (the ONNX backend test's and the reference's reading)."""
    shape = [int(v) for v in np.asarray(arrays[2]).reshape(-1)]

    def kernel(plan: Plan, feeds: Outputs) -> Outputs:
        default = kernels.max_unpool(feeds[0], feeds[1], None, version=plan.version,
                                     **plan.attributes)
        widths = [(0, max(0, s - n)) for s, n in zip(shape, default.shape, strict=True)]
        return [np.pad(default, widths)[tuple(slice(0, s) for s in shape)]]

    return [Variant(UNPOOL_OUTPUT_SHAPE, f"the runtime scatters into MaxUnpool's default shape "
                    f"and zero-extends it to output_shape {shape} afterwards, so the indices "
                    "address the default shape, not the output itself",
                    lambda plan: plan.but(kernel=kernel), "window", stage=1)]
