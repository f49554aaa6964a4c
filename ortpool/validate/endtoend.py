"""The end-to-end verdict: each graph output of the ortpool-rewritten model against the built-in
run's, judged for what the pools changed.

Both runs use the same graph optimisation level, yet a deep network's outputs need not be
bit-identical: ortpool's AveragePool sums its taps in another order than onnxruntime's (each
within its tolerance of the spec), and with ``--optimize`` onnxruntime fuses and lays out the
convolutions around a custom op differently. Rounding that enters early grows through the
layers relative to the size of the sums that make a cell, so a cell near zero (large terms
cancelling) carries the noise of the output's largest values. An output's tolerance is
therefore scaled to its magnitude. A real difference changes a shape, a NaN or an infinity, or
values by far more than rounding does. A pool that agrees with an accuracy note (RULINGS.md 17:
exit code unchanged) rounds by more than that, up to 1e-4 of its mean|x|: the largest such
relative error is added to the outputs' rtol, so that a note never fails the run end to end.

When an output is not bit-identical, the model's own float noise is measured for information:
the built-in run at the other optimisation level. It is no allowance: onnxruntime's optimiser
can be what is wrong (it folds a Pad into the pool after it, a form its pool gets wrong:
RULINGS.md 16), and a bound taken from it would hide exactly that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ortpool import dtypes
from ortpool.check.compare import compare_values
from ortpool.tolerances import Tolerance, tolerance_for
from ortpool.validate import results


def magnitude(a: np.ndarray, b: np.ndarray) -> float:
    """The smaller of the two sides' largest finite ``|value|``: a side gone wrong by growing
    large does not widen the tolerance it is judged by."""
    sizes = []
    for side in (a, b):
        wide = np.abs(side.astype(np.float64))
        finite = wide[np.isfinite(wide)]
        sizes.append(float(finite.max()) if finite.size else 0.0)
    return min(sizes)


def note_allowance(nodes: Sequence[results.NodeResult]) -> float:
    """The largest error, relative to mean|x|, of the pools that agree with an accuracy note."""
    return max(
        (
            n.accuracy["max_error_units"] * n.accuracy["u"]
            for n in nodes
            if n.status == results.ACCURACY_NOTE and n.accuracy and n.accuracy["max_error_units"]
        ),
        default=0.0,
    )


def output_tolerance(
    dtype: str,
    a: np.ndarray,
    b: np.ndarray,
    atol: float | None,
    rtol: float | None,
    note_rtol: float = 0.0,
) -> Tolerance:
    """The per-type tolerance (``--atol``/``--rtol``) plus the accuracy notes' ``note_rtol``,
    relative to the output's magnitude; integer outputs (Indices) exact."""
    tol = tolerance_for("AveragePool", dtype, atol, rtol)
    if tol.exact:
        return tol
    if not note_rtol:
        return Tolerance(tol.atol, tol.rtol, magnitude=magnitude(a, b))
    return Tolerance(
        tol.atol,
        tol.rtol + note_rtol,
        magnitude=magnitude(a, b),
        formula=f"rtol {tol.rtol:g} + {note_rtol:.3g} for the accuracy notes (RULINGS 17)",
    )


def compare_outputs(
    names: Sequence[str],
    builtin: Sequence[np.ndarray],
    ours: Sequence[np.ndarray],
    atol: float | None = None,
    rtol: float | None = None,
    note_rtol: float = 0.0,
) -> list[results.OutputResult]:
    """Compare each graph output, built-in run against ortpool-rewritten run (``note_rtol``:
    :func:`note_allowance` of the model's nodes)."""
    found = []
    for name, a, b in zip(names, builtin, ours, strict=True):
        dtype = dtypes.name_of(a.dtype)
        tol = output_tolerance(dtype, a, b, atol, rtol, note_rtol)
        found.append(results.OutputResult(compare_values(name, dtype, a, b, tol), tol))
    return found


def measure_noise(
    outputs: Sequence[results.OutputResult],
    builtin: Sequence[np.ndarray],
    run_other_level: Callable[[], Sequence[np.ndarray]],
) -> None:
    """Set each float output's ``noise``: how far the built-in run moves at the other graph
    optimisation level. Only when some output is not bit-identical (else nothing to explain);
    left unset if that run fails."""
    if all(o.comparison.max_abs in (0, None) for o in outputs):
        return
    try:
        other = run_other_level()
    except Exception:  # information only: a model that runs at one level only has none
        return
    for out, a, b in zip(outputs, builtin, other, strict=True):
        if not out.tolerance.exact and a.shape == b.shape:
            with np.errstate(invalid="ignore"):
                diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            finite = diff[np.isfinite(diff)]
            out.noise = float(finite.max()) if finite.size else 0.0
