"""The onnx reference evaluator as a third opinion, in a worker process with a time limit.

``onnx.reference.ReferenceEvaluator`` loops in Python and can take minutes on a real tensor, so
it runs in a worker process that is killed when a node exceeds the limit
(:class:`ortpool.model.reference.ReferenceWorker`). Its answers are compared with ortpool's;
where it differs for a reason of its own, the defect is labelled:

* it pads windows with NaN and drops NaNs before reducing, so a NaN *input* is ignored too
  (ruling 6 says NaN propagates);
* MaxUnpool with ``output_shape`` scatters into the inferred shape and zero-extends it, instead of
  addressing the requested output (ruling 9);
* LpPool in ceil mode rescales the windows that hang over the end by k / (taps inside)
  (ruling 12: padding contributes nothing), and refuses ceil_mode with auto_pad;
* it has no GlobalLpPool and no MaxRoiPool at all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ortpool.report.record import ReferenceResult
from ortpool.tolerances import Tolerance

NAN_DEFECT = "reference ignores NaN inputs (it pads with NaN and drops NaNs before reducing)"
UNPOOL_DEFECT = "reference MaxUnpool zero-extends to output_shape instead of addressing it"
CEIL_AUTO_PAD_DEFECT = "reference refuses ceil_mode with auto_pad (the spec allows it)"
LP_CEIL_DEFECT = (
    "reference rescales LpPool's ceil-mode windows that hang over the end by k / (taps inside) "
    "([1..7], k3 s3 pads (1, 0), p=1: 19.5 where the spec gives 13)"
)
NO_IMPLEMENTATION_DEFECT = "reference has no implementation of this operator"


def error_defects(op: str, n_inputs: int, message: str) -> list[str]:
    """Known defects behind a reference evaluator failure."""
    if op == "MaxUnpool" and n_inputs > 2 and "out of bounds" in message:
        return [UNPOOL_DEFECT]
    if "ceil_mode is not supported with auto_pad" in message:
        return [CEIL_AUTO_PAD_DEFECT]
    if "No registered implementation for operator" in message:
        return [NO_IMPLEMENTATION_DEFECT]
    return []


def _same(a: np.ndarray, b: np.ndarray, tolerance: Tolerance) -> np.ndarray:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    bound = tolerance.allowed(b64)
    with np.errstate(invalid="ignore"):
        return (a64 == b64) | (np.isnan(a64) & np.isnan(b64)) | (np.abs(a64 - b64) <= bound)


def judge(
    op: str,
    feeds: Sequence[np.ndarray],
    reference: Sequence[np.ndarray],
    ours: Sequence[np.ndarray],
    nan_cells: np.ndarray | None,
    tolerance: Tolerance,
    ceil_mode: bool = False,
) -> ReferenceResult:
    """Compare the reference's outputs with ortpool's within ``tolerance`` (Y's, its window
    allowance included: :mod:`ortpool.tolerances`; the allowance is Y's alone) and
    label the reference's known defects."""
    differing = 0
    on_nan = 0
    # Indices have no window allowance; their atol and rtol are Y's (0 for the max-like ops).
    others = dataclasses.replace(tolerance, slack=None)
    for position, (ref, mine) in enumerate(zip(reference, ours, strict=False)):
        if ref.shape != mine.shape:
            differing += max(ref.size, mine.size)
            continue
        differ = ~_same(ref, mine, tolerance if position == 0 else others)
        differing += int(differ.sum())
        if nan_cells is not None and nan_cells.shape == differ.shape:
            on_nan += int((differ & nan_cells).sum())
    if differing == 0:
        return ReferenceResult("agree")
    defects = []
    if on_nan:
        defects.append(NAN_DEFECT)
    if op == "MaxUnpool" and len(feeds) > 2:
        defects.append(UNPOOL_DEFECT)
    lp_ceil = op == "LpPool" and ceil_mode
    if lp_ceil:
        defects.append(LP_CEIL_DEFECT)
    explained = (on_nan == differing) or (op == "MaxUnpool" and len(feeds) > 2) or lp_ceil
    return ReferenceResult(
        "differ",
        "differences explained by its known defects" if explained else "",
        differing=differing,
        defects=defects,
    )
