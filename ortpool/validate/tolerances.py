"""How close is close enough: per element type defaults, overridable with --atol/--rtol, and for
averages and norms an allowance that grows with the window size.

Max-like values (MaxPool, MaxUnpool, GlobalMaxPool, MaxRoiPool) and Indices are compared exactly
whatever the tolerances say: a max is one of the inputs, so any difference is a different
choice, not rounding. Averages and norms are sums, which two correct implementations round
differently; how differently depends on how many elements a window sums (``n``):

* AveragePool and LpPool: RULINGS.md 8 lets a window be summed in the element type (at least
  float32), one rounding per tap, so

      |runtime - ortpool| <= atol + rtol * |y| + (n - 1) * u * s

* GlobalAveragePool and GlobalLpPool: RULINGS.md 13 asks for 2 ulp of the exact result; a pairwise
  sum in the element type errs by at most about ``ceil(log2 n) * u * s``, so

      |runtime - ortpool| <= atol + rtol * |y| + ceil(log2 n) * u * s,   atol 0, rtol 2u by default

  and a difference beyond that yet within a running sum's bound ``(n - 1) * u * s`` is named as
  the runtime's accumulation (:data:`ortpool.validate.causes.ACCUMULATION`).

``u`` is the unit roundoff of the element type (float 2**-24, double 2**-53, float16 2**-11,
bfloat16 2**-8); ``s`` the mean of |x| over the window for averages (the scale of the terms, so
that cancellation is allowed for), |y| for norms (their terms are never negative); ``y`` is
ortpool's value. For onnxruntime's GlobalAveragePool over 1024x1024 uniform [0, 1) values:
n = 2**20, the allowance is about (2 + 20) * 2**-24 * 0.5 = 6.6e-7, well below what a float32
running sum may lose there (2**20 * 2**-24 * 0.5 = 0.03).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

#: dtype -> (atol, rtol)
DEFAULTS: dict[str, tuple[float, float]] = {
    "float": (1e-6, 1e-5),
    "double": (1e-12, 1e-10),
    "float16": (1e-3, 2e-3),
    "bfloat16": (1e-2, 1.6e-2),
}
#: Unit roundoff (half an ulp of 1) per element type.
UNIT_ROUNDOFF: dict[str, float] = {
    "float": 2.0**-24,
    "double": 2.0**-53,
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
}
#: Ops whose values are sums: compared within a tolerance, growing with the window.
WINDOW_SUMS = ("AveragePool", "LpPool")
GLOBAL_SUMS = ("GlobalAveragePool", "GlobalLpPool")
NORMS = ("LpPool", "GlobalLpPool")


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """A cell passes when ``|a - b| <= atol + rtol * max(|b|, magnitude)``.

    ``magnitude`` (graph outputs only, :mod:`.endtoend`) is the output's own scale: rounding
    after many layers is relative to the size of the sums that produced a cell, not to the cell,
    and a cell near zero is often the cancellation of large terms.
    """

    atol: float
    rtol: float
    exact: bool = False
    magnitude: float = 0.0
    #: Per output cell, the window allowance added to ``atol + rtol * |y|`` (or None).
    slack: np.ndarray | None = dataclasses.field(default=None, compare=False, repr=False)
    #: How the allowance was formed, for the reports ("" when there is none).
    formula: str = ""

    def describe(self) -> str:
        if self.exact:
            return "exact"
        text = f"atol={self.atol:g} rtol={self.rtol:g}"
        if self.magnitude:
            text += f" of magnitude {self.magnitude:.3g}"
        return f"{text} + {self.formula}" if self.formula else text

    def allowed(self, reference: np.ndarray, where: tuple[slice, ...] = ()) -> np.ndarray:
        """The largest |difference| accepted per cell, around ``reference``: ortpool's values
        at ``where`` (the cells both outputs have)."""
        bound = self.atol + self.rtol * np.maximum(np.abs(reference), self.magnitude)
        return bound + self.slack[where] if self.slack is not None else bound


def tolerance_for(
    op: str, dtype: str, atol: float | None = None, rtol: float | None = None
) -> Tolerance:
    """The tolerance for ``op``'s values of element type ``dtype`` (without the window
    allowance: see :func:`with_window`).

    Integers and every max-like value are exact: they only move input values around.
    """
    if op in ("MaxPool", "MaxUnpool", "GlobalMaxPool", "MaxRoiPool") or dtype not in DEFAULTS:
        return Tolerance(0.0, 0.0, exact=True)
    d_atol, d_rtol = DEFAULTS[dtype]
    if op in GLOBAL_SUMS:
        d_atol, d_rtol = 0.0, 2 * UNIT_ROUNDOFF[dtype]
    return Tolerance(d_atol if atol is None else atol, d_rtol if rtol is None else rtol)


def window_size(op: str, x_shape: tuple[int, ...], attributes: Mapping[str, Any]) -> int:
    """``n``: the elements a window sums (the kernel's taps; a whole plane for global ops)."""
    if op in GLOBAL_SUMS:
        return max(1, math.prod(x_shape[2:]))
    kernel = attributes.get("kernel_shape") or ()
    if isinstance(kernel, str | bytes):
        kernel = [int(v) for v in (kernel.decode() if isinstance(kernel, bytes) else kernel)
                  .split(",") if v.strip()]
    return max(1, math.prod(int(k) for k in kernel))


def scale(op: str, version: int, x: np.ndarray, y: np.ndarray,
          attributes: Mapping[str, Any]) -> np.ndarray:
    """``s`` per output cell: the window's mean |x| (averages), |y| (norms); finite, >= 0."""
    from ortpool import kernels

    if op in NORMS:
        s = np.abs(y.astype(np.float64))
    else:
        a = np.abs(x.astype(np.float64))
        if op == "GlobalAveragePool":
            s = kernels.global_average_pool(a, version=22)
        else:
            s = kernels.average_pool(a, version=version, **attributes)
    return np.nan_to_num(s, nan=0.0, posinf=0.0)


def with_window(
    tol: Tolerance,
    op: str,
    version: int,
    dtype: str,
    x: np.ndarray,
    y: np.ndarray,
    attributes: Mapping[str, Any],
) -> Tolerance:
    """``tol`` plus the window allowance of an average or a norm (the module docstring)."""
    if tol.exact or op not in WINDOW_SUMS + GLOBAL_SUMS or dtype not in UNIT_ROUNDOFF:
        return tol
    n = window_size(op, tuple(x.shape), attributes)
    u = UNIT_ROUNDOFF[dtype]
    s = scale(op, version, x, y, attributes)
    what = "|y|" if op in NORMS else "mean|x|"
    if op in GLOBAL_SUMS:
        factor = math.ceil(math.log2(n)) if n > 1 else 0
        formula = f"ceil(log2 n)*u*{what} (n={n}, u=2^{round(math.log2(u))})"
    else:
        factor = n - 1
        formula = f"(n-1)*u*{what} (n={n}, u=2^{round(math.log2(u))})"
    return dataclasses.replace(tol, slack=factor * u * s, formula=formula)


def running_sum_bound(op: str, dtype: str, x: np.ndarray, y: np.ndarray, version: int,
                      attributes: Mapping[str, Any]) -> np.ndarray:
    """Per cell, ``(n - 1) * u * s``: what a running sum in the element type may lose."""
    n = window_size(op, tuple(x.shape), attributes)
    return (n - 1) * UNIT_ROUNDOFF[dtype] * scale(op, version, x, y, attributes)
