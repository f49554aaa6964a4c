"""Naming why onnxruntime and ortpool differ, where the node's attributes and input show it.

Each recogniser looks at the node (its spec version, attributes and input shape) and, for the
data-dependent causes, at where the differences sit. A cause is named only when a difference
exists; a difference no recogniser explains is reported as unrecognised, never guessed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ortpool.attributes import PoolAttrs
from ortpool.check import status as st
from ortpool.geometry import effective_kernel, pool_geometry
from ortpool.tolerances import window_size
from ortpool.versions import GLOBAL_OPERATORS, WINDOW_OPERATORS

if TYPE_CHECKING:
    from ortpool.check.judge import Judgement
    from ortpool.model.site import Site

SAME_DILATION = "same-dilation"
NEGATIVE_SAME_PAD = "negative-same-pad"
CEIL_VALID = "ceil-valid"
END_PAD_WINDOW = "end-pad-window"
NAN = "nan"
EMPTY_WINDOW = "empty-window"
PADS_GE_KERNEL = "pads-ge-kernel"
WINDOW_BEYOND_INPUT = "window-beyond-input"
UNPOOL_OUTPUT_SHAPE = "unpool-output-shape"
GLOBAL_MAX_NAN = "global-max-nan"
ACCUMULATION = "accumulation"
NO_KERNEL = "no-kernel"
BUILT_CASE = "built-case"
UNRECOGNISED = "unrecognised"

#: code -> one-line title, in the order reports list them
TITLES: dict[str, str] = {
    SAME_DILATION: "SAME padding with dilation (onnxruntime pads for the undilated kernel)",
    NEGATIVE_SAME_PAD: "negative SAME pad (the total pad must be clamped at 0, not cropped)",
    CEIL_VALID: "ceil_mode with VALID (VALID ignores ceil_mode)",
    END_PAD_WINDOW: "window starting in the end pad (ceil mode's last window is dropped)",
    NAN: "NaN handling (a window holding a NaN gives NaN, index of the first NaN)",
    EMPTY_WINDOW: "empty windows (pads >= kernel: a window holds no input element)",
    PADS_GE_KERNEL: "pads >= kernel_shape (legal: the spec allows any pad >= 0)",
    WINDOW_BEYOND_INPUT: (
        "kernel longer than the padded input (the spec's formula gives no window on an axis)"
    ),
    UNPOOL_OUTPUT_SHAPE: "MaxUnpool with output_shape (indices address the output itself)",
    GLOBAL_MAX_NAN: "GlobalMaxPool with a NaN in a plane (NaN anywhere gives NaN)",
    ACCUMULATION: "accuracy: a sum rounded beyond the accuracy limit (ruling 17), not semantics",
    NO_KERNEL: "onnxruntime has no kernel for this op/version/type",
    BUILT_CASE: "on a built case of the input domain (rulings 18, 20)",
    UNRECOGNISED: "unrecognised",
}


#: A verdict's basis: the spec's written words (a formula or a sentence, quoted; a ruling may
#: restate them), or a ruling where the spec is silent or ambiguous.
SPEC_TEXT = "spec text"
RULING = "ruling"

_SAME_PAD = ("pad_shape[i] = (output_spatial_shape[i] - 1) * strides_spatial_shape[i] + "
             "((kernel_spatial_shape[i] - 1) * dilations[i] + 1) - input_spatial_shape[i]")
_VALID = ("VALID: output_spatial_shape[i] = ceil((input_spatial_shape[i] - "
          "((kernel_spatial_shape[i] - 1) * dilations[i] + 1) + 1) / strides_spatial_shape[i])")
_DROP = "Sliding windows that would start in the right padded region are ignored."
_PADS = "pads: ... the value represent the number of pixels added ... value >= 0"


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
    """The basis of a cause of ``code`` for a node of ``op``-``version`` (None: unknown)."""
    if code == END_PAD_WINDOW:  # the drop rule is in version 22's words alone (ruling 1)
        return Basis(SPEC_TEXT, 1, _DROP) if version >= 22 else Basis(RULING, 1)
    return _BASES.get(code)


_BASES: dict[str, Basis] = {
    SAME_DILATION: Basis(SPEC_TEXT, 2, _SAME_PAD),
    NEGATIVE_SAME_PAD: Basis(RULING, 2),
    CEIL_VALID: Basis(SPEC_TEXT, 3, _VALID),
    PADS_GE_KERNEL: Basis(SPEC_TEXT, 5, _PADS),
    EMPTY_WINDOW: Basis(RULING, 5),
    NAN: Basis(RULING, 6),
    WINDOW_BEYOND_INPUT: Basis(RULING, 19),
    UNPOOL_OUTPUT_SHAPE: Basis(RULING, 9),
    GLOBAL_MAX_NAN: Basis(RULING, 13),
    ACCUMULATION: Basis(RULING, 17),
    NO_KERNEL: Basis(SPEC_TEXT, 10, "the operator's schema lists the version and its types"),
}


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


def geometric_causes(op: str, attrs: PoolAttrs, spatial: Sequence[int]) -> list[Cause]:
    """Causes visible in the attributes and input shape alone (MaxPool, AveragePool, LpPool),
    one per kind, each on the first axis it shows on."""
    if op not in WINDOW_OPERATORS:
        return []
    checks = (
        _same_dilation,
        _negative_same_pad,
        _ceil_valid,
        _end_pad_window,
        _window_beyond_input,
        _pads_ge_kernel,
        _empty_window,
    )
    return [cause for cause in (check(attrs, spatial) for check in checks) if cause is not None]


def _same_dilation(attrs: PoolAttrs, spatial: Sequence[int]) -> Cause | None:
    if attrs.auto_pad not in ("SAME_UPPER", "SAME_LOWER") or all(d <= 1 for d in attrs.dilations):
        return None
    return Cause(
        SAME_DILATION,
        f"auto_pad={attrs.auto_pad} with dilations={list(attrs.dilations)}: the pads must "
        "cover the dilated kernel span (k-1)*d+1",
    )


def _negative_same_pad(attrs: PoolAttrs, spatial: Sequence[int]) -> Cause | None:
    if attrs.auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        return None
    for i, n in enumerate(spatial):
        k, s, d = attrs.kernel_shape[i], attrs.strides[i], attrs.dilations[i]
        out = -(-n // s)
        total = (out - 1) * s + effective_kernel(k, d) - n
        if total < 0:
            return Cause(
                NEGATIVE_SAME_PAD,
                f"axis {i}: total SAME pad (out-1)*s + ek - n = {total} "
                f"(n={n}, k={k}, s={s}, "
                f"d={d}) is clamped to 0",
            )
    return None


def _ceil_valid(attrs: PoolAttrs, spatial: Sequence[int]) -> Cause | None:
    if attrs.auto_pad != "VALID" or not attrs.ceil_mode:
        return None
    for i, n in enumerate(spatial):
        ek = effective_kernel(attrs.kernel_shape[i], attrs.dilations[i])
        s = attrs.strides[i]
        if n >= ek and (n - ek) % s:
            return Cause(
                CEIL_VALID,
                f"axis {i}: VALID gives floor((n-ek)/s)+1 = {(n - ek) // s + 1} windows; "
                f"ceil_mode would give {-(-(n - ek) // s) + 1}",
            )
    return None


def _end_pad_window(attrs: PoolAttrs, spatial: Sequence[int]) -> Cause | None:
    if attrs.auto_pad != "NOTSET" or not attrs.ceil_mode:
        return None
    for i, n in enumerate(spatial):
        k, s, d = attrs.kernel_shape[i], attrs.strides[i], attrs.dilations[i]
        pb, pe = attrs.pads[i], attrs.pads[i + attrs.rank]
        span = n + pb + pe - effective_kernel(k, d)
        if span < 0:
            continue
        out = -(-span // s) + 1
        if (out - 1) * s >= n + pb:
            return Cause(
                END_PAD_WINDOW,
                f"axis {i}: ceil mode's window {out - 1} would start at "
                f"{(out - 1) * s - pb} >= n={n}, inside the end pad: it is dropped "
                f"({out - 1} windows, not {out})",
            )
    return None


def _pads_ge_kernel(attrs: PoolAttrs, spatial: Sequence[int]) -> Cause | None:
    if attrs.auto_pad != "NOTSET":
        return None
    for i, k in enumerate(attrs.kernel_shape):
        pb, pe = attrs.pads[i], attrs.pads[i + attrs.rank]
        if max(pb, pe) >= k:
            return Cause(PADS_GE_KERNEL, f"axis {i}: pads ({pb}, {pe}) with kernel {k}")
    return None


def _empty_window(attrs: PoolAttrs, spatial: Sequence[int]) -> Cause | None:
    try:
        geom = pool_geometry(spatial, attrs)
    except ValueError:
        return None
    for i, g in enumerate(geom.axes):
        empty = g.empty_windows()
        if empty:
            return Cause(
                EMPTY_WINDOW,
                f"axis {i}: pads ({g.pb}, {g.pe}) >= kernel span leave "
                f"{empty} window(s) with no input element",
            )
    return None


def _window_beyond_input(attrs: PoolAttrs, spatial: Sequence[int]) -> Cause | None:
    """An axis where the kernel is longer than the padded input and ruling 1's (VALID: ruling
    3's) formula gives no window (ruling 19): a runtime that makes one differs. onnxruntime
    divides ``(n + pb + pe - ek) / s`` truncating toward zero, so on a 1x1 map a k=2, s=2 floor
    pool has one window there, where ``floor(-1/2) + 1 = 0``."""
    if attrs.auto_pad not in ("NOTSET", "VALID"):
        return None
    for i, n in enumerate(spatial):
        k, s, d = attrs.kernel_shape[i], attrs.strides[i], attrs.dilations[i]
        pb, pe = (
            (attrs.pads[i], attrs.pads[i + attrs.rank]) if attrs.auto_pad == "NOTSET" else (0, 0)
        )
        ek = effective_kernel(k, d)
        span = n + pb + pe - ek
        if span >= 0:
            continue
        ceil = bool(attrs.ceil_mode) and attrs.auto_pad == "NOTSET"
        formula = f"ceil({span}/{s}) + 1" if ceil else f"floor({span}/{s}) + 1"
        out = (-(-span // s) if ceil else span // s) + 1
        if out <= 0:
            return Cause(
                WINDOW_BEYOND_INPUT,
                f"axis {i}: kernel span {ek} > padded input {n} + {pb} + {pe}: {formula} = "
                f"{out}, no window (ruling 19): the spec's output is empty there",
            )
    return None


def recognise(
    op: str,
    attrs: PoolAttrs | None,
    spatial: Sequence[int],
    *,
    differs: bool,
    nan_cells: int = 0,
    empty_cells: int = 0,
    output_shape_input: bool = False,
    accumulation_cells: int = 0,
    window: int = 0,
) -> list[Cause]:
    """Causes for a node that differs (``differs``) or that onnxruntime rejected.

    ``nan_cells``/``empty_cells``: differing cells in NaN windows / empty windows;
    ``accumulation_cells``: cells of an average or a norm beyond the accuracy limit but within
    what a running sum over its ``window`` elements may lose (:mod:`ortpool.tolerances`).
    """
    if not differs:
        return []
    causes: list[Cause] = []
    if attrs is not None:
        causes = [
            c
            for c in geometric_causes(op, attrs, spatial)
            if c.code != EMPTY_WINDOW or empty_cells or nan_cells == 0
        ]
    if op in GLOBAL_OPERATORS and 0 in spatial and not any(c.code == EMPTY_WINDOW for c in causes):
        causes.append(
            Cause(
                EMPTY_WINDOW,
                f"spatial shape {list(spatial)}: the window, the whole plane, holds no element "
                "(rulings 5, 13: -inf for the max, NaN for the mean, 0 for the norm)",
            )
        )
    causes += _value_causes(op, nan_cells, accumulation_cells, window)
    if empty_cells and not any(c.code == EMPTY_WINDOW for c in causes):
        causes.append(Cause(EMPTY_WINDOW, f"{empty_cells} differing cell(s) in empty windows"))
    if op == "MaxUnpool" and output_shape_input:
        causes.append(
            Cause(
                UNPOOL_OUTPUT_SHAPE,
                "with output_shape, Y.flat[I[j]] = X.flat[j] over the output itself (ruling 9)",
            )
        )
    if not causes:
        causes.append(Cause(UNRECOGNISED, "no known cause matches this node"))
    return causes


def _value_causes(op: str, nan_cells: int, accumulation_cells: int, window: int) -> list[Cause]:
    """The causes the differing cells' values show: NaN in their windows, a sum's rounding."""
    causes = []
    if nan_cells and op == "GlobalMaxPool":
        causes.append(
            Cause(
                GLOBAL_MAX_NAN,
                f"{nan_cells} differing plane(s) hold a NaN (ruling 13: the result is NaN)",
            )
        )
    elif nan_cells:
        causes.append(Cause(NAN, f"{nan_cells} differing cell(s) in windows holding a NaN"))
    if accumulation_cells:
        causes.append(
            Cause(
                ACCUMULATION,
                f"{accumulation_cells} cell(s) off by more than the accuracy limit, within what "
                f"a running sum of {window} elements in the accumulation type loses: rounding, "
                "counted as a difference (ruling 17; --accuracy-limit)",
            )
        )
    return causes


def no_kernel(op: str, version: int, opset: int, dtype: str, message: str) -> Cause:
    return Cause(NO_KERNEL, f"{op}-{version} (opset {opset}) for element type {dtype}: {message}")


def of(site: Site, judgement: Judgement) -> list[Cause]:
    """Why ``site`` is judged as it is: the causes its attributes, its input and where the
    differing cells sit show (none where it agrees or nothing was compared); a difference found
    on a built case only says so (:data:`BUILT_CASE`)."""
    status = judgement.status
    if status in st.AGREEING or status in (st.NOT_COMPARED, st.BOTH_REJECTED):
        return []
    if status == st.NO_KERNEL:
        message = judgement.failure.removeprefix("onnxruntime refuses it: ")
        return with_bases([no_kernel(site.op, site.version, site.opset, site.elem or "?",
                                     message)], site)
    shape = judgement.shown_shapes[0] if judgement.shown_shapes else list(site.x_dims or [])
    spatial = [d for d in shape[2:] if isinstance(d, int)]
    attrs = site.attrs if isinstance(site.attrs, PoolAttrs) else None
    unpool_shape = site.op == "MaxUnpool" and site.n_inputs > 2
    if status in (st.ORT_REJECTED, st.ORTPOOL_REJECTED):
        causes = recognise(site.op, attrs, spatial, differs=True, output_shape_input=unpool_shape)
        if status == st.ORT_REJECTED and any(c.code == PADS_GE_KERNEL for c in causes):
            # the runtime refuses the attributes themselves; nothing else was computed
            causes = [c for c in causes if c.code in (PADS_GE_KERNEL, EMPTY_WINDOW)]
        return with_bases(causes, site)
    comps = judgement.comparisons
    causes = recognise(
        site.op, attrs, spatial,
        differs=status in (st.DIFFER, st.INACCURATE, st.RULINGS),
        nan_cells=sum(c.in_nan_windows for c in comps),
        empty_cells=sum(c.in_empty_windows for c in comps),
        output_shape_input=unpool_shape,
        # named only where rounding is the whole story: next to a wrong window or divisor, a
        # cell close to the spec's is no evidence of the runtime's summation
        accumulation_cells=sum(c.inaccurate for c in comps) if status == st.INACCURATE else 0,
        window=window_size(site.op, tuple(shape), site.attributes) if shape else 0,
    )
    if not judgement.shown_observed and status in st.FAILING and judgement.failure:
        causes = [c for c in causes if c.code != UNRECOGNISED]
        causes.append(Cause(BUILT_CASE, judgement.failure))
    return with_bases(causes, site)


def with_bases(causes: Sequence[Cause], site: Site) -> list[Cause]:
    """``causes`` each with its basis for ``site``'s op and version."""
    return [dataclasses.replace(c, basis=c.basis or basis_of(c.code, site.op, site.version))
            for c in causes]
