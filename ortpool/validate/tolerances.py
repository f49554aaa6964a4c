"""How close is close enough: per element type defaults, overridable with --atol/--rtol.

MaxPool values and Indices are compared exactly whatever the tolerances say: a max is one of the
inputs, so any difference is a different choice, not rounding. AveragePool sums in a different
order than onnxruntime, so it gets a tolerance a few units in the last place of the type.
"""

from __future__ import annotations

import dataclasses

import numpy as np

#: dtype -> (atol, rtol)
DEFAULTS: dict[str, tuple[float, float]] = {
    "float": (1e-6, 1e-5),
    "double": (1e-12, 1e-10),
    "float16": (1e-3, 2e-3),
    "bfloat16": (1e-2, 1.6e-2),
}


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

    def bound(self, b: np.ndarray) -> np.ndarray:
        """The largest difference allowed for each cell of ``b``."""
        return self.atol + self.rtol * np.maximum(np.abs(b), self.magnitude)

    def describe(self) -> str:
        if self.exact:
            return "exact"
        text = f"atol={self.atol:g} rtol={self.rtol:g}"
        return text + (f" of magnitude {self.magnitude:.3g}" if self.magnitude else "")


def tolerance_for(
    op: str, dtype: str, atol: float | None = None, rtol: float | None = None
) -> Tolerance:
    """The tolerance for ``op``'s values of element type ``dtype``.

    Integers and every MaxPool/MaxUnpool value are exact: both only move input values around.
    """
    if op in ("MaxPool", "MaxUnpool") or dtype not in DEFAULTS:
        return Tolerance(0.0, 0.0, exact=True)
    d_atol, d_rtol = DEFAULTS[dtype]
    return Tolerance(d_atol if atol is None else atol, d_rtol if rtol is None else rtol)
