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


@dataclasses.dataclass(frozen=True)
class Cause:
    code: str
    detail: str

    @property
    def title(self) -> str:
        return TITLES[self.code]

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "title": self.title, "detail": self.detail}


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
        return [no_kernel(site.op, site.version, site.opset, site.elem or "?", message)]
    shape = judgement.shown_shapes[0] if judgement.shown_shapes else list(site.x_dims or [])
    spatial = [d for d in shape[2:] if isinstance(d, int)]
    attrs = site.attrs if isinstance(site.attrs, PoolAttrs) else None
    unpool_shape = site.op == "MaxUnpool" and site.n_inputs > 2
    if status in (st.ORT_REJECTED, st.ORTPOOL_REJECTED):
        causes = recognise(site.op, attrs, spatial, differs=True, output_shape_input=unpool_shape)
        if status == st.ORT_REJECTED and any(c.code == PADS_GE_KERNEL for c in causes):
            # the runtime refuses the attributes themselves; nothing else was computed
            causes = [c for c in causes if c.code in (PADS_GE_KERNEL, EMPTY_WINDOW)]
        return causes
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
    return causes
