"""How close is close enough: exact for max-like values and Indices (a max is one of the inputs,
so a difference is another choice, not rounding); ruling 17's accuracy rule for sums; per element
type defaults (``--atol``/``--rtol``) for graph outputs; :func:`ulp` of a value in any float type.

A sum is measured against the exact result in units of ``u * m`` (docs/rulings.md, ruling 17):
a cell **agrees**, has an **accuracy note**, is **inaccurate** (within the ``n`` units a running
sum may lose) or **differs** beyond.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

#: dtype -> (atol, rtol) of graph outputs (relative to their magnitude: ortpool.validate.endtoend)
DEFAULTS: dict[str, tuple[float, float]] = {
    "float": (1e-6, 1e-5), "double": (1e-12, 1e-10), "float16": (1e-3, 2e-3),
    "bfloat16": (1e-2, 1.6e-2),
}
#: (mantissa bits, smallest normal exponent) per element type: the ulp of a value.
_FORMAT: dict[str, tuple[int, int]] = {"float": (23, -126), "double": (52, -1022),
                                       "float16": (10, -14), "bfloat16": (7, -126)}
#: Unit roundoff (half an ulp of 1) per element type.
UNIT_ROUNDOFF: dict[str, float] = {name: 2.0 ** -(bits + 1) for name, (bits, _) in _FORMAT.items()}
#: The type a sum of each element type is accumulated in (ruling 8).
ACCUMULATION: dict[str, str] = {name: "double" if name == "double" else "float" for name in _FORMAT}
HALF = ("float16", "bfloat16")
#: Ops whose values are sums: judged by the accuracy rule.
WINDOW_SUMS = ("AveragePool", "LpPool")
GLOBAL_SUMS = ("GlobalAveragePool", "GlobalLpPool")
NORMS = ("LpPool", "GlobalLpPool")
MAX_LIKE = ("MaxPool", "MaxUnpool", "GlobalMaxPool", "MaxRoiPool")


@dataclasses.dataclass(frozen=True)
class AccuracyRule:
    """Ruling 17's thresholds (--accuracy-agree-factor, --accuracy-limit, --half-ulps)."""

    #: a sum agrees within this many times the pairwise bound (log2 n + 1) * u * mean|x|
    agree_factor: float = 4.0
    #: beyond it, an accuracy note up to this fraction of mean|x|, per accumulation type
    limits: tuple[tuple[str, float], ...] = (("float", 1e-4), ("double", 1e-12))
    #: half types: agree within this many ulp of the output type
    half_ulps: float = 1.0
    #: when given (``--atol``, ``--rtol``), they widen a sum's agree band
    atol: float | None = None
    rtol: float | None = None

    def __post_init__(self) -> None:
        for name, value in (("agree_factor", self.agree_factor), ("half_ulps", self.half_ulps),
                            *(("limit " + k, v) for k, v in self.limits)):
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"accuracy rule: {name}={value} must be finite and >= 0")

    def limit(self, accumulation: str) -> float:
        """The note limit, a fraction of mean|x|, for sums accumulated in ``accumulation``."""
        return dict(self.limits).get(accumulation, 0.0)

    def with_limits(self, limits: Mapping[str, float]) -> AccuracyRule:
        merged = {**dict(self.limits), **limits}
        return dataclasses.replace(self, limits=tuple(sorted(merged.items())))

    def to_dict(self) -> dict[str, Any]:
        # atol and rtol are settings of their own in every report
        return {"agree_factor": self.agree_factor, "limits": dict(self.limits),
                "half_ulps": self.half_ulps}


DEFAULT_RULE = AccuracyRule()


def pairwise_bound(n: int) -> float:
    """(log2 n + 1): a pairwise sum's worst error over ``n`` terms, in units of u*mean|x|."""
    return math.log2(n) + 1 if n > 1 else 1.0


@dataclasses.dataclass(frozen=True)
class Accuracy:
    """Per output cell of a sum: the exact result and the bounds of ruling 17's classes
    (absolute, in the output's units), and what states an error in units and ulp."""

    exact: np.ndarray
    unit: np.ndarray  # u * mean|x| (for a norm, u * y / p), in the output's units
    ulp: np.ndarray  # ulp of the output type at the exact value
    agree: np.ndarray
    note: np.ndarray
    rounding: np.ndarray
    n: int
    u: float
    half: bool
    rule: AccuracyRule
    measure: str  # "mean|x|" or "mean|x|^p"
    accumulation: str  # the accumulation type: "float" or "double"

    @property
    def pairwise(self) -> float:
        return pairwise_bound(self.n)

    def describe(self) -> str:
        u = f"u=2^{round(math.log2(self.u))}"
        if self.half:
            return (f"within {self.rule.half_ulps:g} ulp of the exact result (summed in float32, "
                    f"rounded once; n={self.n})")
        limit = self.rule.limit(self.accumulation)
        return (f"agree within {self.rule.agree_factor:g}x(log2 n+1)*u*{self.measure} = "
                f"{self.rule.agree_factor * self.pairwise:.3g} u*{self.measure} (n={self.n}, {u}); "
                f"accuracy note up to {limit:g} of {self.measure}")


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """A cell passes when ``|a - b| <= atol + rtol * max(|b|, magnitude)`` (a graph output's own
    scale: a cell near zero is often a cancellation); for a sum, ruling 17's classes decide."""

    atol: float
    rtol: float
    exact: bool = False
    magnitude: float = 0.0
    #: Per output cell, the allowance added to ``atol + rtol * |y|`` (or None): a sum's agree band
    slack: np.ndarray | None = dataclasses.field(default=None, compare=False, repr=False)
    #: How the allowance was formed, for the reports ("" when there is none).
    formula: str = ""
    #: A sum's exact result and classes (ruling 17), or None.
    accuracy: Accuracy | None = dataclasses.field(default=None, compare=False, repr=False)

    def describe(self) -> str:
        if self.exact:
            return "exact"
        if self.accuracy is not None and not (self.atol or self.rtol):
            return self.formula
        text = f"atol={self.atol:g} rtol={self.rtol:g}"
        if self.magnitude:
            text += f" of magnitude {self.magnitude:.3g}"
        return f"{text} + {self.formula}" if self.formula else text

    def allowed(self, reference: np.ndarray, where: tuple[slice, ...] = ()) -> np.ndarray:
        """The largest |difference| accepted per cell around ``reference`` (ours, at ``where``)."""
        bound = self.atol + self.rtol * np.maximum(np.abs(reference), self.magnitude)
        return bound + self.slack[where] if self.slack is not None else bound


def tolerance_for(
    op: str, dtype: str, atol: float | None = None, rtol: float | None = None
) -> Tolerance:
    """The per-type tolerance for ``op``'s values of element type ``dtype`` (graph outputs use
    it as "AveragePool"'s): exact for integers and max-like values, which only move inputs."""
    if op in MAX_LIKE or dtype not in DEFAULTS:
        return Tolerance(0.0, 0.0, exact=True)
    d_atol, d_rtol = DEFAULTS[dtype]
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


def ulp(values: np.ndarray, dtype: str) -> np.ndarray:
    """The ulp of ``dtype`` at each of ``values`` (float64; subnormals' ulp below the normals)."""
    bits, emin = _FORMAT[dtype]
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.floor(np.log2(np.abs(values.astype(np.float64))))
    exponent = np.where(np.isfinite(exponent), np.maximum(exponent, emin), emin)
    return np.exp2(exponent - bits)


def _exact(op: str, version: int, dtype: str, x: np.ndarray, y: np.ndarray,
           attributes: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(exact result, mean|x| or mean|x|^p) per cell, float64."""
    from ortpool import kernels

    if dtype == "double":
        exact = y.astype(np.float64)  # ortpool's own, summed pairwise or compensated
    else:
        exact = kernels.run_op(op, version, [x.astype(np.float64)], attributes)[0]
        with np.errstate(over="ignore"):
            rounded = exact.astype(np.float32 if dtype == "float" else y.dtype).astype(np.float64)
        # a result the output type cannot hold is its infinity (the spec's value, rounded)
        exact = np.where(np.isfinite(rounded) | ~np.isfinite(exact), exact, rounded)
    if op in NORMS:
        # an error dy in the norm y is p * dy / (u * y) units of u * mean|x|^p
        return exact, np.abs(exact) / float(attributes.get("p", 2))
    a = np.abs(x.astype(np.float64))
    if op == "GlobalAveragePool":
        return exact, kernels.global_average_pool(a, version=22)
    return exact, kernels.run_op(op, version, [a], attributes)[0]


def node_tolerance(
    op: str, version: int, dtype: str, x: np.ndarray, y: np.ndarray, attributes: Mapping[str, Any],
    atol: float | None = None, rtol: float | None = None, rule: AccuracyRule = DEFAULT_RULE,
) -> Tolerance:
    """The tolerance of a node's Y (``y`` ortpool's output on ``x``): see the module docstring."""
    if op not in WINDOW_SUMS + GLOBAL_SUMS or dtype not in UNIT_ROUNDOFF:
        return tolerance_for(op, dtype, atol, rtol)
    accumulation = ACCUMULATION[dtype]
    u = UNIT_ROUNDOFF[accumulation]
    n = window_size(op, tuple(x.shape), attributes)
    exact, scale = _exact(op, version, dtype, x, y, attributes)
    scale = np.nan_to_num(scale, nan=0.0, posinf=0.0)
    unit = u * scale
    cell_ulp = ulp(exact, dtype)
    base = (atol or 0.0) + (rtol or 0.0) * np.nan_to_num(np.abs(exact), nan=0.0, posinf=0.0)
    half = dtype in HALF
    pairwise = pairwise_bound(n)
    if half:
        agree = base + rule.half_ulps * cell_ulp
        note = agree
        rounding = np.maximum(agree, n * UNIT_ROUNDOFF[dtype] * scale + cell_ulp)
    else:
        # at least one ulp of the output: a faithfully rounded result is rounding wherever the
        # bound in u*mean|x| falls below the type's spacing (subnormal results)
        agree = np.maximum(base + rule.agree_factor * pairwise * unit, cell_ulp)
        note = np.maximum(agree, rule.limit(accumulation) * scale)
        rounding = np.maximum(note, n * unit)
    accuracy = Accuracy(exact, unit, cell_ulp, agree, note, rounding, n, u, half, rule,
                        "mean|x|^p" if op in NORMS else "mean|x|", accumulation)
    return Tolerance(atol or 0.0, rtol or 0.0, slack=agree - base, formula=accuracy.describe(),
                     accuracy=accuracy)
