"""Naming why a runtime and the spec (ortpool's kernels) differ on a node, confirmed on the values.

A cause is named only where the runtime's outputs equal its reading (:mod:`ortpool.check.readings`)
or, for the cells the rulings decide, by what the runtime gives there; else the difference is
unrecognised, never guessed. Without outputs (a refusal, a crash, no kernel) the causes come from
the node's attributes and shape (:func:`geometric_causes`) and the runtime's words. Each cause
carries its :class:`Basis`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import ml_dtypes
import numpy as np

from ortpool.attributes import PoolAttrs
from ortpool.check import readings
from ortpool.check import status as st
from ortpool.check.compare import floating
from ortpool.geometry import pool_geometry
from ortpool.model.site import MAX_LIKE
from ortpool.tolerances import GLOBAL_SUMS, WINDOW_SUMS, window_size
from ortpool.versions import GLOBAL_OPERATORS, WINDOW_OPERATORS

if TYPE_CHECKING:
    from ortpool.check.judge import Judgement
    from ortpool.model.site import Site

SAME_DILATION = readings.SAME_DILATION
SAME_SIZE = readings.SAME_SIZE
NEGATIVE_SAME_PAD = "negative-same-pad"
CEIL_VALID = readings.CEIL_VALID
UNDILATED_SIZE = readings.UNDILATED_SIZE
END_PAD_WINDOW = readings.END_PAD_WINDOW
CEIL_PAD_SHIFT = readings.CEIL_PAD_SHIFT
NAN = "nan"
EMPTY_WINDOW = "empty-window"
NEG_INF_WINDOW = "neg-inf-window"
PADS_GE_KERNEL = "pads-ge-kernel"
WINDOW_BEYOND_INPUT = readings.WINDOW_BEYOND_INPUT
STORAGE_ORDER = readings.STORAGE_ORDER
LOWEST_MAX_INDEX = readings.LOWEST_MAX_INDEX
OVERHANG_DIVISOR = readings.OVERHANG_DIVISOR
AVERAGE_COUNTS_PADS = readings.AVERAGE_COUNTS_PADS
LP_RESCALE = readings.LP_RESCALE
DOUBLE_AS_FLOAT = readings.DOUBLE_AS_FLOAT
GLOBAL_NORM_MEAN = readings.GLOBAL_NORM_MEAN
GLOBAL_AXES = readings.GLOBAL_AXES
UNPOOL_OUTPUT_SHAPE = readings.UNPOOL_OUTPUT_SHAPE
GLOBAL_MAX_NAN = "global-max-nan"
ACCUMULATION = "accumulation"
INDEX_TIE = "index-tie"
CEIL_AUTO_PAD = "ceil-auto-pad"
ATTRIBUTE_TYPE = "attribute-type"
NO_KERNEL = "no-kernel"
CRASHED = "crashed"
TIMED_OUT = "timed-out"
BUILT_CASE = "built-case"
UNRECOGNISED = "unrecognised"

#: code -> one-line title, in the order reports list them
TITLES: dict[str, str] = {
    SAME_DILATION: "SAME padding with dilation (the runtime pads for the undilated kernel)",
    SAME_SIZE: "SAME output size (the spec's is ceil(n/s) windows)",
    NEGATIVE_SAME_PAD: "negative SAME pad (the total pad must be clamped at 0, not cropped)",
    CEIL_VALID: "ceil_mode with VALID (VALID ignores ceil_mode)",
    UNDILATED_SIZE: "VALID with dilation sized for the undilated kernel",
    END_PAD_WINDOW: "window starting in the end pad (ceil mode's last window is dropped)",
    CEIL_PAD_SHIFT: "ceil mode's windows shifted (the missing end padded at the start too)",
    NAN: "NaN handling (a window holding a NaN gives NaN, index of the first NaN)",
    EMPTY_WINDOW: "empty windows (a window holding no input element: -inf, NaN or 0)",
    PADS_GE_KERNEL: "pads >= kernel_shape (legal: the spec allows any pad >= 0)",
    WINDOW_BEYOND_INPUT: (
        "kernel longer than the padded input (the spec's formula gives no window on an axis)"
    ),
    STORAGE_ORDER: "storage_order=1 Indices in another layout (column-major offsets expected)",
    LOWEST_MAX_INDEX: "Index of a window whose maximum is the type's lowest value (outside it)",
    OVERHANG_DIVISOR: "count_include_pad counting the ceil overhang in the divisor",
    AVERAGE_COUNTS_PADS: "AveragePool-1 counting the pads in the divisor",
    LP_RESCALE: "LpPool border windows rescaled by kernel size / taps inside",
    DOUBLE_AS_FLOAT: "double computed in float32",
    GLOBAL_NORM_MEAN: "GlobalLpPool computed as a mean's root, not the Lp norm",
    GLOBAL_AXES: "a global pool over other axes than the spatial ones",
    UNPOOL_OUTPUT_SHAPE: "MaxUnpool with output_shape (indices address the output itself)",
    NEG_INF_WINDOW: "a window of -inf alone given another value than its max, -inf",
    GLOBAL_MAX_NAN: "GlobalMaxPool with a NaN in a plane (NaN anywhere gives NaN)",
    ACCUMULATION: "accuracy: a sum rounded beyond the accuracy limit (ruling 17), not semantics",
    INDEX_TIE: "an Index of another equal maximum (ties go to the first maximum)",
    CEIL_AUTO_PAD: "ceil_mode with auto_pad refused (the spec sizes it)",
    ATTRIBUTE_TYPE: "an attribute of the type its schema declares refused",
    NO_KERNEL: "the runtime has no kernel for this op/version/type",
    CRASHED: "the runtime's process died on the node",
    TIMED_OUT: "the runtime gave no answer in time",
    BUILT_CASE: "on a built case of the input domain (rulings 18, 20)",
    UNRECOGNISED: "unrecognised",
}


#: A verdict's basis: the spec's written words (a formula or a sentence, quoted; a ruling may
#: restate them), or a ruling where the spec is silent or ambiguous.
SPEC_TEXT = "spec text"
RULING = "ruling"

_SAME_PAD = ("pad_shape[i] = (output_spatial_shape[i] - 1) * strides_spatial_shape[i] + "
             "((kernel_spatial_shape[i] - 1) * dilations[i] + 1) - input_spatial_shape[i]")
_SAME_SIZE = ("SAME_UPPER or SAME_LOWER: output_spatial_shape[i] = "
              "ceil(input_spatial_shape[i] / strides_spatial_shape[i])")
_VALID = ("VALID: output_spatial_shape[i] = ceil((input_spatial_shape[i] - "
          "((kernel_spatial_shape[i] - 1) * dilations[i] + 1) + 1) / strides_spatial_shape[i])")
_VALID_OLD = ("VALID: output_spatial_shape[i] = ceil((input_spatial_shape[i] - "
              "kernel_spatial_shape[i] + 1) / strides_spatial_shape[i])")
_DROP = "Sliding windows that would start in the right padded region are ignored."
_PADS = "it can take any value greater than or equal to 0"
_PADS_BEGIN = "xi_begin the number of pixels added at the beginning of axis `i`"
_AUTO_CEIL = ("If you are using them currently, the output spatial shape will be following when "
              "ceil_mode is enabled")
_EXCLUDE_PAD = "The output of each pooling window is divided by the number of elements exclude pad."
_LP_NORM = "p value of the Lp norm used to pool over the input data."
_MAX = "max pooling consisting of computing the max on all values of a subset of the input tensor"
_GLOBAL_MAX = "applies max pooling across the values in the same channel"
_ROI_MAX = "apply max pooling across each RoI"
_GLOBAL_SHAPE = ("The first two dimensions of output shape are the same as the input (N x C), "
                 "while the other dimensions are all 1.")


@functools.lru_cache(maxsize=256)
def _schema_text(op: str, version: int) -> str:
    """The operator's written words at ``version`` (its doc, attributes' and outputs'), in one
    line; "" where onnx has no such schema."""
    import onnx.defs

    try:
        schema = onnx.defs.get_schema(op, version)
    except Exception:  # a version onnx does not know has no words to quote
        return ""
    parts = [schema.doc or ""]
    parts += [f"{name}: {a.description}" for name, a in schema.attributes.items()]
    parts += [o.description or "" for o in schema.outputs]
    return " ".join(" ".join(parts).split())


def spec_or_ruling(op: str, version: int, ruling: int, *quotes: str) -> Basis:
    """The spec's text, the first of ``quotes`` that ``op``-``version``'s words hold (whitespace
    aside; ruling ``ruling`` restating it); the ruling alone where they hold none."""
    for quote in quotes:
        if " ".join(quote.split()) in _schema_text(op, version):
            return Basis(SPEC_TEXT, ruling, quote)
    return Basis(RULING, ruling)


@dataclasses.dataclass(frozen=True)
class Basis:
    """What a difference is measured against: the spec's words (``quote``; ``ruling``, the ruling
    restating them, if one does) or ruling ``ruling`` alone (docs/rulings.md)."""

    kind: str  # SPEC_TEXT or RULING
    ruling: int | None = None
    quote: str = ""

    @property
    def label(self) -> str:
        """``spec text`` or ``ruling 6``: how reports count verdicts apart."""
        return SPEC_TEXT if self.kind == SPEC_TEXT else f"ruling {self.ruling}"

    def to_dict(self) -> dict[str, object]:
        return {"basis": self.label, "ruling": self.ruling, "quote": self.quote or None}


def basis_of(code: str, op: str = "", version: int = 0) -> Basis | None:
    """The basis of a cause of ``code`` for a node of ``op``-``version`` (None: unknown): the
    spec's words where that version's text holds them, else the ruling."""
    if code in _QUOTED:
        ruling, quotes = _QUOTED[code]
        return spec_or_ruling(op, version, ruling, *quotes)
    if code == DOUBLE_AS_FLOAT:  # a sum's accumulation type is ruling 8; a max's type is 10's
        return Basis(RULING, 8 if op in WINDOW_SUMS + GLOBAL_SUMS else 10)
    if code in (EMPTY_WINDOW, NAN) and op in GLOBAL_OPERATORS:
        return Basis(RULING, 13)
    return _BASES.get(code)


#: code -> (ruling, the spec's words that decide it where a version's text holds them)
_QUOTED: dict[str, tuple[int, tuple[str, ...]]] = {
    SAME_DILATION: (2, (_SAME_PAD,)), SAME_SIZE: (2, (_SAME_SIZE,)),
    CEIL_VALID: (3, (_VALID, _VALID_OLD)), UNDILATED_SIZE: (3, (_VALID,)),
    END_PAD_WINDOW: (1, (_DROP,)), CEIL_PAD_SHIFT: (1, (_PADS_BEGIN,)),
    PADS_GE_KERNEL: (5, (_PADS,)), AVERAGE_COUNTS_PADS: (8, (_EXCLUDE_PAD,)),
    GLOBAL_NORM_MEAN: (13, (_LP_NORM,)), GLOBAL_AXES: (13, (_GLOBAL_SHAPE,)),
    CEIL_AUTO_PAD: (3, (_AUTO_CEIL, _SAME_SIZE, _VALID, _VALID_OLD)),
    NEG_INF_WINDOW: (6, (_MAX, _GLOBAL_MAX, _ROI_MAX)),
}

#: code -> ruling, for the causes the spec's words do not decide
_BASES: dict[str, Basis] = {code: Basis(RULING, ruling) for code, ruling in (
    (NEGATIVE_SAME_PAD, 2), (EMPTY_WINDOW, 5), (NAN, 6), (LOWEST_MAX_INDEX, 6), (INDEX_TIE, 6),
    (STORAGE_ORDER, 7), (OVERHANG_DIVISOR, 8), (UNPOOL_OUTPUT_SHAPE, 9), (CRASHED, 11),
    (LP_RESCALE, 12), (GLOBAL_MAX_NAN, 13), (ACCUMULATION, 17), (WINDOW_BEYOND_INPUT, 19))}
_BASES[ATTRIBUTE_TYPE] = Basis(SPEC_TEXT, 12, "p - FLOAT (default is '2.0')")
_BASES[NO_KERNEL] = Basis(SPEC_TEXT, 10, "the operator's schema lists the version and its types")


@dataclasses.dataclass(frozen=True)
class Cause:
    code: str
    detail: str
    basis: Basis | None = None

    @property
    def title(self) -> str:
        return TITLES[self.code]

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"code": self.code, "title": self.title, "detail": self.detail}
        out.update(self.basis.to_dict() if self.basis else {"basis": None})
        return out


def verdict_basis(causes: Sequence[Cause]) -> Basis | None:
    """A node's basis: the spec's text if one of its causes rests on it, else the first
    ruling's; None where no cause says."""
    bases = [c.basis for c in causes if c.basis is not None]
    return next((b for b in bases if b.kind == SPEC_TEXT), bases[0] if bases else None)


def _negative_same_pad(attrs: PoolAttrs, spatial: Sequence[int]) -> str:
    if attrs.auto_pad not in readings.SAME:
        return ""
    for i, n, k, s, d, _, _, ek in readings.axes(attrs, spatial):
        total = (-(-n // s) - 1) * s + ek - n
        if total < 0:
            return (f"axis {i}: total SAME pad (out-1)*s + ek - n = {total} (n={n}, k={k}, s={s}, "
                    f"d={d}) is clamped to 0")
    return ""


def _ceil_valid(attrs: PoolAttrs, spatial: Sequence[int]) -> str:
    if attrs.auto_pad != "VALID" or not attrs.ceil_mode:
        return ""
    return next((readings.ceil_valid_words(i, (n - ek) // s + 1, -(-(n - ek) // s) + 1)
                 for i, n, _, s, _, _, _, ek in readings.axes(attrs, spatial)
                 if n >= ek and (n - ek) % s), "")


def _pads_ge_kernel(attrs: PoolAttrs, spatial: Sequence[int]) -> str:
    if attrs.auto_pad != "NOTSET":
        return ""
    for i, k in enumerate(attrs.kernel_shape):
        pb, pe = attrs.pads[i], attrs.pads[i + attrs.rank]
        if max(pb, pe) >= k:
            return f"axis {i}: pads ({pb}, {pe}) with kernel {k}"
    return ""


def _empty_window(attrs: PoolAttrs, spatial: Sequence[int]) -> str:
    try:
        geom = pool_geometry(spatial, attrs)
    except ValueError:
        return ""
    return next((f"axis {i}: pads ({g.pb}, {g.pe}) >= kernel span leave {g.empty_windows()} "
                 "window(s) with no input element"
                 for i, g in enumerate(geom.axes) if g.empty_windows()), "")


#: code -> its test on the attributes and input shape: the cause's detail, "" where absent
_GEOMETRIC: tuple[tuple[str, Callable[[PoolAttrs, Sequence[int]], str]], ...] = (
    (SAME_DILATION, lambda attrs, spatial: readings.dilated_same(attrs)),
    (NEGATIVE_SAME_PAD, _negative_same_pad),
    (CEIL_VALID, _ceil_valid),
    (END_PAD_WINDOW, lambda attrs, spatial: next(
        (f"axis {i}: ceil mode's window {j} would start at {t} >= n={spatial[i]}, inside the end "
         f"pad: it is dropped ({j} windows, not {j + 1})"
         for i, j, t in readings.end_pad_windows(attrs, spatial)), "")),
    (WINDOW_BEYOND_INPUT, lambda attrs, spatial: next(
        (words for _, words, _ in readings.beyond_input(attrs, spatial)), "")),
    (PADS_GE_KERNEL, _pads_ge_kernel),
    (EMPTY_WINDOW, _empty_window),
)


def geometric_causes(op: str, attrs: PoolAttrs, spatial: Sequence[int]) -> list[Cause]:
    """Causes visible in the attributes and input shape alone (MaxPool, AveragePool, LpPool),
    one per kind, each on the first axis it shows on."""
    if op not in WINDOW_OPERATORS:
        return []
    return [Cause(code, detail) for code, test in _GEOMETRIC if (detail := test(attrs, spatial))]


def _shape_causes(op: str, attrs: PoolAttrs | None, spatial: Sequence[int]) -> list[Cause]:
    """The geometric causes of a node, and an empty plane of a global pool."""
    causes = geometric_causes(op, attrs, spatial) if attrs is not None else []
    if op in GLOBAL_OPERATORS and 0 in spatial:
        causes.append(Cause(EMPTY_WINDOW, f"spatial shape {list(spatial)}: the window, the whole "
                            "plane, holds no element (rulings 5, 13: -inf for the max, NaN for "
                            "the mean, 0 for the norm)"))
    return causes


def recognise(op: str, attrs: PoolAttrs | None, spatial: Sequence[int], *, nan_cells: int = 0,
              empty_cells: int = 0, output_shape_input: bool = False,
              accumulation_cells: int = 0, window: int = 0) -> list[Cause]:
    """Causes for a node that differs or was rejected, where no output can be read, from its
    shape and the engine's counts of differing cells (in NaN / empty windows; sums beyond the
    accuracy limit within what a running sum of ``window`` elements may lose)."""
    causes = [c for c in _shape_causes(op, attrs, spatial) if c.code != EMPTY_WINDOW
              or empty_cells or nan_cells == 0 or op in GLOBAL_OPERATORS]
    causes += _counted(op, nan_cells, empty_cells, accumulation_cells, window, causes)
    if op == "MaxUnpool" and output_shape_input:
        causes.append(Cause(UNPOOL_OUTPUT_SHAPE, "with output_shape, Y.flat[I[j]] = X.flat[j] "
                            "over the output itself (ruling 9)"))
    return causes or [Cause(UNRECOGNISED, "no known cause matches this node")]


def _counted(op: str, nan_cells: int, empty_cells: int, accumulation_cells: int = 0,
             window: int = 0, found: Sequence[Cause] = ()) -> list[Cause]:
    """The causes the engine's counts of differing cells show: NaN in their windows, a sum's
    rounding, empty windows (where ``found`` names none)."""
    causes = []
    if nan_cells and op == "GlobalMaxPool":
        causes.append(Cause(GLOBAL_MAX_NAN, f"{nan_cells} differing plane(s) hold a NaN (ruling "
                            "13: the result is NaN)"))
    elif nan_cells:
        causes.append(Cause(NAN, f"{nan_cells} differing cell(s) in windows holding a NaN"))
    if accumulation_cells:
        causes.append(_accumulation(accumulation_cells, window))
    if empty_cells and all(c.code != EMPTY_WINDOW for c in found):
        causes.append(Cause(EMPTY_WINDOW, f"{empty_cells} differing cell(s) in empty windows"))
    return causes


def _accumulation(cells: int, window: int) -> Cause:
    return Cause(ACCUMULATION, f"{cells} cell(s) off by more than the accuracy limit, within "
                 f"what a running sum of {window} elements in the accumulation type loses: "
                 "rounding, counted as a difference (ruling 17; --accuracy-limit)")


def no_kernel(op: str, version: int, opset: int, dtype: str, message: str) -> Cause:
    return Cause(NO_KERNEL, f"{op}-{version} (opset {opset}) for element type {dtype}: {message}")


def _runtime_words(failure: str) -> str:
    """A failure's text without the engine's framing (``the run fails on ...: reference:
    no-kernel: ``): what the runtime said."""
    text = failure.removeprefix("onnxruntime refuses it: ")
    for kind in ("no-kernel: ", "refused: ", "run-failed: ", "crashed: ", "timed-out: "):
        if kind in text:
            return text.split(kind, 1)[1]
    return text.split(": ", 1)[1] if text.startswith("the run fails on") else text


def of(site: Site, judgement: Judgement) -> list[Cause]:
    """Why ``site`` is judged as it is (none where it agrees or nothing was compared): on the
    runtime's outputs where kept (:func:`value_causes`), else from its words and the node's
    attributes; :data:`BUILT_CASE` for a difference on a built case."""
    status = judgement.status
    if status in st.AGREEING or status in (st.NOT_COMPARED, st.BOTH_REJECTED):
        return []
    words = _runtime_words(judgement.failure)
    shape = judgement.shown_shapes[0] if judgement.shown_shapes else list(site.x_dims or [])
    spatial = [d for d in shape[2:] if isinstance(d, int)]
    attrs = site.attrs if isinstance(site.attrs, PoolAttrs) else None
    unpool_shape = site.op == "MaxUnpool" and site.n_inputs > 2
    if status == st.NO_KERNEL:
        causes = [no_kernel(site.op, site.version, site.opset, site.elem or "?", words)]
    elif status in (st.CRASHED, st.TIMED_OUT):  # and what sets the node's input apart
        causes = [Cause(CRASHED, f"{site.op}-{site.version} {site.elem or '?'} on X "
                        f"{shape or '?'}: {words}") if status == st.CRASHED
                  else Cause(TIMED_OUT, words),
                  *(c for c in _shape_causes(site.op, attrs, spatial)
                    if c.code in (EMPTY_WINDOW, PADS_GE_KERNEL, WINDOW_BEYOND_INPUT))]
    elif status == st.ORT_REJECTED:
        causes = refusal_causes(site, attrs, spatial, words)
    elif status == st.ORTPOOL_REJECTED:
        causes = recognise(site.op, attrs, spatial, output_shape_input=unpool_shape)
    else:
        comps = judgement.comparisons
        if judgement.shown_outputs is not None and judgement.shown_feed is not None \
                and judgement.shown_feed.expected:
            causes = value_causes(site, judgement)
        else:
            causes = recognise(
                site.op, attrs, spatial,
                nan_cells=sum(c.in_nan_windows for c in comps),
                empty_cells=sum(c.in_empty_windows for c in comps),
                output_shape_input=unpool_shape,
                # named only where rounding is the whole story: next to a wrong window or
                # divisor, a cell close to the spec's is no evidence of the runtime's summation
                accumulation_cells=sum(c.inaccurate for c in comps) if status == st.INACCURATE
                else 0,
                window=window_size(site.op, tuple(shape), site.attributes) if shape else 0)
        if not judgement.shown_observed and status in st.FAILING and judgement.failure:
            causes = [c for c in causes if c.code != UNRECOGNISED]
            causes.append(Cause(BUILT_CASE, judgement.failure))
    return with_bases(causes, site)


def refusal_causes(site: Site, attrs: PoolAttrs | None, spatial: Sequence[int],
                   words: str) -> list[Cause]:
    """Why a runtime refuses a node the spec accepts, from the node's attributes and the
    runtime's ``words``; unrecognised (with them) otherwise."""
    causes: list[Cause] = []
    if attrs is not None and site.op in WINDOW_OPERATORS:
        big = _pads_ge_kernel(attrs, spatial)
        if big:
            causes.append(Cause(PADS_GE_KERNEL, f"{big}: the runtime refuses them: {words}"))
            empty = _empty_window(attrs, spatial)  # what such pads make: windows of no element
            if empty:
                causes.append(Cause(EMPTY_WINDOW, empty))
        if attrs.ceil_mode and attrs.auto_pad != "NOTSET":
            valid = attrs.auto_pad == "VALID"
            quotes = (_AUTO_CEIL, _VALID, _VALID_OLD) if valid else (_AUTO_CEIL, _SAME_SIZE)
            causes.append(Cause(
                CEIL_AUTO_PAD,
                f"ceil_mode=1 with auto_pad={attrs.auto_pad}, which the spec sizes: the runtime "
                f"refuses it: {words}",
                spec_or_ruling(site.op, site.version, 3 if valid else 2, *quotes)))
    if site.op in GLOBAL_OPERATORS and 0 in spatial:
        causes.append(Cause(EMPTY_WINDOW, f"spatial shape {list(spatial)}: the window, the whole "
                            f"plane, holds no element, which the spec pools (rulings 5, 13); the "
                            f"runtime refuses it: {words}"))
    lowered = words.lower()
    if site.version == 1 and site.op in ("LpPool", "GlobalLpPool") and "p" in site.attributes \
            and "attribute" in lowered:
        causes.append(Cause(ATTRIBUTE_TYPE, f"p = {site.attributes['p']!r}, a FLOAT as "
                            f"{site.op}-1's schema declares it: the runtime refuses it: {words}"))
    elif not causes and any(w in lowered for w in ("datatype", "data type", "element type",
                                                   f"{site.elem}".lower())):
        # a type the schema lists, refused by name: the runtime has no kernel for it
        causes.append(no_kernel(site.op, site.version, site.opset, site.elem or "?", words))
    return causes or [Cause(UNRECOGNISED, f"the runtime refuses the node: {words}")]


def value_causes(site: Site, judgement: Judgement) -> list[Cause]:
    """The causes of a difference confirmed on the runtime's outputs on the shown set: each
    variant whose reading gives them (:func:`ortpool.check.readings.explain`), then the cells the
    rulings decide, by what the runtime gives there; unrecognised where no reading does."""
    feed, got = judgement.shown_feed, judgement.shown_outputs
    assert feed is not None and got is not None and feed.expected is not None
    arrays = feed.arrays
    x = arrays[0]
    sized = site.at(x.shape) if site.attrs is not None else site
    attrs = sized.attrs if isinstance(sized.attrs, PoolAttrs) else None
    status = judgement.shown_status or judgement.status
    comps = judgement.comparisons
    if status in (st.RULINGS, st.INACCURATE, st.ACCURACY_NOTE, st.TIES, st.AGREE):
        # the engine found the spec's reading up to the rulings' cells and rounding
        causes = _open_causes(sized, readings.spec_plan(sized), arrays, list(feed.expected), got)
        if not causes:  # no geometry to mark them: the engine's own counts
            causes = _counted(sized.op, sum(c.in_nan_windows for c in comps),
                              sum(c.in_empty_windows for c in comps))
        inaccurate = sum(c.inaccurate for c in comps)
        if inaccurate:
            causes.append(_accumulation(inaccurate, window_size(sized.op, tuple(x.shape),
                                                                sized.attributes)))
        if judgement.status in (st.DIFFER, st.INACCURATE) and status != st.INACCURATE:
            # a later set differs, whose outputs the judgement did not keep: what the node's
            # attributes show, untested on values (pads >= kernel is a refusal's: it ran)
            have = {c.code for c in causes} | {PADS_GE_KERNEL}
            causes += [c for c in _shape_causes(sized.op, attrs, list(x.shape[2:]))
                       if c.code not in have]
        return causes or [Cause(UNRECOGNISED, "the engine names no cell that differs")]
    ties = sum(c.ties for c in comps)
    if ties and all(c.agrees for c in comps):
        # a built set counts an Index of another equal maximum as a difference (ruling 18)
        return [Cause(INDEX_TIE, f"{ties} Index(es) point at another element equal to the "
                      "window's maximum, not its first maximum")]
    found = readings.explain(sized, arrays, got, readings.variants(sized, arrays))
    if not found.matched:
        tried = (f"; the values contradict the readings {', '.join(found.tried)}"
                 if found.tried else "; no known reading applies to this node")
        return [*(c for c in _shape_causes(sized.op, attrs, list(x.shape[2:]))
                  if c.code == NEGATIVE_SAME_PAD),
                Cause(UNRECOGNISED, f"{judgement.failure}{tried}")]
    causes: list[Cause] = []
    also = (f" (on this input the values fit {' or '.join(sorted(set(found.also)))} as well)"
            if found.also else "")
    for variant in found.variants:
        if all(c.code != variant.code for c in causes):
            causes.append(Cause(variant.code, variant.detail + also))
            also = ""
    assert found.plan is not None and found.outputs is not None
    masks = readings.masks(found.plan, arrays)
    added = None if masks is None else masks[2][0]
    y = np.asarray(got[0])
    if added is not None and added.shape == y.shape and added.any():
        # cells only the reading has (a kept end-pad window): what the runtime gives there
        causes = [dataclasses.replace(c, detail=f"{c.detail}; the runtime gives "
                                      f"{_values(y[added])} there")
                  if c.code == END_PAD_WINDOW else c for c in causes]
    # the spec's own outputs (no reading) where only the rulings' cells differ: on a built set
    return (causes + _open_causes(sized, found.plan, arrays, found.outputs, got, added)
            or [Cause(UNRECOGNISED, f"{judgement.failure}; no known reading applies")])


#: the value an empty window gives, per op (rulings 5, 13)
_EMPTY_VALUE = {"MaxPool": "-inf (the max of nothing)", "GlobalMaxPool": "-inf",
                "AveragePool": "NaN (0/0), or 0 with count_include_pad",
                "GlobalAveragePool": "NaN (0/0)", "LpPool": "0 (the norm of nothing)",
                "GlobalLpPool": "0 (the norm of nothing)"}


def _open_causes(site: Site, plan: readings.Plan, arrays: Sequence[np.ndarray],
                 want: Sequence[np.ndarray], got: Sequence[np.ndarray],
                 added: np.ndarray | None = None) -> list[Cause]:
    """The empty and NaN windows and those of -inf alone under ``plan`` (whose outputs are
    ``want``) where the runtime gives another value, with its values; cells only the reading has
    (``added``) excepted."""
    if not got or np.shape(got[0]) != want[0].shape:
        return []
    y, w = np.asarray(got[0]), want[0]
    causes = []
    lone = readings.neg_inf_windows(plan, arrays)
    if lone is not None and lone.shape == y.shape and (off := lone & (y != w)).any():
        causes.append(Cause(NEG_INF_WINDOW, f"{int(off.sum())} of the {int(lone.sum())} cells "
                            f"of windows of -inf alone: the runtime gives {_values(y[off])} where "
                            "their max is -inf"))
    masks = readings.masks(plan, arrays)
    if masks is None:
        return causes
    differ = ~readings.equal_values(y, w)
    if (len(want) > 1 and len(got) > 1 and site.indices_read
            and np.shape(got[1]) == want[1].shape == y.shape
            and readings.indices_cell_aligned(plan)):
        differ |= np.asarray(got[1]) != want[1]
    nan, empty = masks[0][0], masks[1][0]
    if nan.shape != differ.shape or empty.shape != differ.shape:
        return causes  # a reading that changes Y's axes (a global pool over others) marks none
    if added is not None and added.shape == differ.shape:
        differ &= ~added
    empty_off = differ & empty
    if empty_off.any():
        spec_value = _EMPTY_VALUE.get(site.op, "the ruling's")
        causes.append(Cause(
            EMPTY_WINDOW,
            f"{int(empty_off.sum())} cell(s) of windows holding no input element: the runtime "
            f"gives {_values(y[empty_off])} where the spec's is {spec_value}"))
    nan_off = differ & nan & ~empty
    if nan_off.any():
        code = GLOBAL_MAX_NAN if site.op == "GlobalMaxPool" else NAN
        causes.append(Cause(code, f"{int(nan_off.sum())} cell(s) of windows holding a NaN: "
                            f"{_nan_reading(plan, arrays, y, nan_off, nan & ~empty)}"))
    return causes


def _values(cells: np.ndarray, most: int = 3) -> str:
    """A few distinct values, in words (``-3.4028235e+38``, ``NaN``)."""
    found = sorted({(float(v) if np.isfinite(v) else str(v)) for v in
                    cells.astype(np.float64).reshape(-1)}, key=str)
    shown = ", ".join(f"{v:.8g}" if isinstance(v, float) else v for v in found[:most])
    return shown + (" ..." if len(found) > most else "")


def _nan_reading(plan: readings.Plan, arrays: Sequence[np.ndarray], y: np.ndarray,
                 cells: np.ndarray, windows: np.ndarray) -> str:
    """What the runtime does with a NaN, read on the differing ``cells`` of the NaN
    ``windows``: drops it (in every such window or in some), or gives something else."""
    alt = _nan_dropped(plan, arrays)
    if alt is not None and alt.shape == y.shape:
        same = readings.equal_values(y[cells], alt[cells])
        if plan.op not in MAX_LIKE:
            same |= readings.close(y[cells], alt[cells], arrays[0],
                                   window_size(plan.op, arrays[0].shape, plan.attributes))
        else:  # a window of NaNs alone: the max of nothing, which the runtime may give finite
            low = float(ml_dtypes.finfo(y.dtype).min)
            same |= (alt[cells] == -np.inf) & (y[cells].astype(np.float64) == low)
        kind = "max" if plan.op in MAX_LIKE else {
            "AveragePool": "mean", "GlobalAveragePool": "mean"}.get(plan.op, "norm")
        kept = 0
        if windows.shape == y.shape:
            kept = int((windows & np.isnan(y.astype(np.float64))).sum())
        if same.all() and not kept:
            return (f"the runtime drops the NaN: its value is the {kind} of the window's other "
                    "elements, where a NaN must give NaN")
        if same.any():
            total = int(same.sum()) + kept
            return (f"the runtime drops the NaN in {int(same.sum())} of {total} windows (the "
                    f"{kind} of the others) and keeps it in {kept}: where it sits decides")
    return f"the runtime gives {_values(y[cells])} where a NaN in the window gives NaN"


def _nan_dropped(plan: readings.Plan, arrays: Sequence[np.ndarray]) -> np.ndarray | None:
    """``plan``'s Y with X's NaNs left out of every window (a max's made -inf, a norm's 0, a
    mean's divisor less the NaNs); None where that cannot be computed."""
    x = arrays[0]
    if not floating(x):
        return None
    wide = x.astype(np.float64)
    nan = np.isnan(wide)
    single = dataclasses.replace(plan, n_outputs=1)
    try:
        if plan.op in (*MAX_LIKE, "LpPool", "GlobalLpPool"):
            fill = -np.inf if plan.op in MAX_LIKE else 0.0
            return readings.run(single, [np.where(nan, fill, wide).astype(x.dtype),
                                         *arrays[1:]])[0]
        if plan.op in ("AveragePool", "GlobalAveragePool"):
            zeros = np.where(nan, 0.0, wide).astype(x.dtype)
            mean0 = readings.run(single, [zeros, *arrays[1:]])[0].astype(np.float64)
            share = readings.run(single, [np.ones_like(x), *arrays[1:]])[0].astype(np.float64)
            inside = readings.count_taps(single, np.ones(x.shape, np.float64))
            nans = readings.count_taps(single, nan.astype(np.float64))
            with np.errstate(invalid="ignore", divide="ignore"):
                divisor = inside / share
                return mean0 * divisor / (divisor - nans)
    except Exception:  # a reading the kernels cannot compute: say what the runtime gives
        return None
    return None


def with_bases(causes: Sequence[Cause], site: Site) -> list[Cause]:
    """``causes`` each with its basis for ``site``'s op and version."""
    return [dataclasses.replace(c, basis=c.basis or basis_of(c.code, site.op, site.version))
            for c in causes]
