"""The ways one pooling node can be computed with standard ops, as data: :class:`Plan`.

A plan is what ``ortpool fix`` may write in place of a node. It is built by a *form*, a pure
function of the node's site (:class:`Site`: operator, spec version, attributes, element
type, static spatial sizes); :mod:`ortpool.forms.emit` turns a plan into nodes and
:mod:`ortpool.forms.prove` decides whether the runtime computes it exactly. A form that does not
apply to a node returns :class:`~ortpool.report.outcomes.NotApplicable` with the reason instead.

Base forms, cheapest first:

* :func:`unchanged` -- the node as it is.
* :func:`explicit_pads` -- ``auto_pad`` SAME_*/VALID written as explicit pads, ``ceil_mode=0``
  (MaxPool, AveragePool, LpPool).
* :func:`pad_node` -- a ``Pad`` node in front of a pool that pads nothing (the general form).
* :func:`reduce` -- a global pool as the Reduce op over the spatial axes that computes the same.
* :func:`empty_plane` -- a global pool over an empty plane: the empty window's constant.
* :func:`power_average` -- a windowed LpPool as ``(kvol * AveragePool(|x|^p))^(1/p)``: any p,
  so a node of a version whose p no later version can write (LpPool-1's p=1.5) after a lift.

Wrappers around a base form:

* :func:`in_float` -- the node computed in float32 between two Casts (types without a kernel).
* :func:`in_double` -- a global average or norm summed in float64 and rounded once (ruling 13).
* :func:`nan_guarded` -- the max's NaN and -inf restored (needed in the non-finite domain only:
  ``--nonfinite``, ruling 20): by a summed flag (:data:`GUARD_SUM`, the cheaper, first) or by a
  pooled mask (:data:`GUARD_MASK`).

Every number here comes from :mod:`ortpool.geometry`, the arithmetic the kernels use.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ortpool import versions
from ortpool.attributes import PoolAttrs, standard_attributes
from ortpool.check.cases import lowest
from ortpool.dtypes import FLOATS
from ortpool.errors import OrtpoolError
from ortpool.geometry import PoolGeometry, effective_kernel, same_pads
from ortpool.model.site import MAX_LIKE, Site
from ortpool.report.outcomes import NotApplicable
from ortpool.tolerances import GLOBAL_SUMS
from ortpool.versions import GLOBAL_OPERATORS

UNCHANGED = "unchanged"
EXPLICIT_PADS = "explicit-pads"
PAD = "pad"
PAD_SIGNED_ZERO = "pad-signed-zero"
REDUCE = "reduce"
EMPTY_PLANE = "empty-plane"
POWER_AVERAGE = "power-average"
IN_FLOAT = "in-float"
IN_DOUBLE = "in-double"
NAN_GUARD = "nan-guard"
NAN_GUARD_MASK = "nan-guard-mask"
ORTPOOL = "ortpool"

#: The two ways a guard finds a window's NaN and -inf (:func:`nan_guarded`), cheapest first,
#: each with the name the report gives it.
GUARD_SUM = "sum"
GUARD_MASK = "mask"
GUARDS = {GUARD_SUM: NAN_GUARD, GUARD_MASK: NAN_GUARD_MASK}

#: Element types whose every value float32 holds exactly: a max computed in float32 and cast
#: back is the max itself; an average is accumulated in float32 anyway (ruling 8).
FLOAT_EXACT = ("float16", "bfloat16", "int8", "uint8")


@dataclasses.dataclass(frozen=True)
class Plan:
    """One realization of a node.

    ``pool``: attributes of the standard pool node written (None: the node's own, untouched);
    ``reduce``: instead of the pool, this Reduce op over the spatial axes (keepdims), with
    ``exponent`` for a norm summed as ``ReduceSum(|x|^p)^(1/p)`` and ``offset`` added last;
    ``pad``/``pad_value``: a Pad node in front (spatial pads, begins then ends);
    ``scale``: a constant (1, 1, *out) the pool's result is multiplied by;
    ``compute``: X (and the other inputs of X's type) cast to this type, and Y back;
    ``average``: instead of the pool, ``(kvol * AveragePool(|x|^exponent))^(1/exponent)`` with
    these AveragePool attributes (a windowed LpPool);
    ``nan_guard``: the max's NaN and -inf restored, by :data:`GUARD_SUM` or :data:`GUARD_MASK`
    (None: not guarded); ``ortpool``: the node becomes ortpool's
    op (needs ortpool at run time).
    ``keeps_indices``: the Indices output is the spec's; ``shape_free``: right for every input
    size (otherwise written for the static sizes only). ``why``: the derivation, for the report.
    """

    name: str
    pool: Mapping[str, Any] | None = None
    reduce: str | None = None
    exponent: float | None = None
    offset: float | None = None
    pad: tuple[int, ...] | None = None
    pad_value: float | int | None = None
    scale: np.ndarray | None = dataclasses.field(default=None, compare=False, repr=False)
    compute: str | None = None
    average: Mapping[str, Any] | None = None
    nan_guard: str | None = None
    ortpool: bool = False
    keeps_indices: bool = True
    shape_free: bool = True
    why: str = ""

    @property
    def changes_node(self) -> bool:
        return self.name != UNCHANGED

    @property
    def replaces_node(self) -> bool:
        """Whether other ops compute the node (a pinned node's version is then not written)."""
        return self.reduce is not None or self.average is not None or self.ortpool


Form = Callable[..., "Plan | NotApplicable"]


def unchanged(site: Site, compute: str | None = None) -> Plan:
    """The node as it is: right wherever the runtime already gives the spec's result."""
    return Plan(UNCHANGED, why="the node as it is")


def explicit_pads(site: Site, compute: str | None = None) -> Plan | NotApplicable:
    """``auto_pad`` SAME_UPPER/SAME_LOWER/VALID written as explicit pads, ``ceil_mode=0``.

    SAME (ruling 2): ``out = ceil(n/s)``, total pad ``max(0, (out-1)*s + ek - n)`` with the
    *dilated* span ``ek = (k-1)*d + 1``, the odd pixel at the end (UPPER) or the beginning
    (LOWER). Example: n=9, k=3, d=2, s=1, SAME_UPPER: ek=5, out=9, total 4 -> pads (2, 2)
    (onnxruntime pads for the undilated kernel, total 2, and reads every window one place off).
    With explicit pads the window starts are exact, so ``(out-1)*s + ek = n + pb + pe`` and
    ceil mode has nothing to round: ``ceil_mode=0`` says the same.

    VALID (ruling 3): pads 0, ``out = floor((n-ek)/s) + 1`` whatever ceil_mode says; so
    ``ceil_mode=0``. Example: n=8, k=3, s=2: floor(5/2)+1 = 3 windows (ceil mode would give 4,
    which onnxruntime does).

    No coordinate moves, so Indices stay the spec's. VALID is right for every size; SAME when
    every stride is 1 (the total is ``ek - 1`` whatever ``n``), otherwise for the static sizes.
    """
    if not site.windowed:
        return NotApplicable(f"{site.op} has no auto_pad")
    attrs = site.attrs
    assert isinstance(attrs, PoolAttrs)
    if attrs.auto_pad == "NOTSET":
        return NotApplicable("the pads are explicit already")
    shape_free = attrs.auto_pad == "VALID" or all(s == 1 for s in attrs.strides)
    if attrs.auto_pad == "VALID":
        pads = (0,) * (2 * attrs.rank)
        why = "VALID: pads 0 and ceil_mode 0 (VALID's size ignores ceil_mode)"
    else:
        sizes = site.spatial
        if sizes is None:
            if not shape_free:
                return NotApplicable(
                    "SAME pads depend on the input size, which is symbolic (a stride is not 1)"
                )
            # Stride 1: out = n and total = ek - 1 for any n; the kernel span itself serves as n.
            sizes = tuple(
                effective_kernel(k, d)
                for k, d in zip(attrs.kernel_shape, attrs.dilations, strict=True)
            )
        upper = attrs.auto_pad == "SAME_UPPER"
        per_axis = [
            same_pads(n, k, s, d, upper)[1:]
            for n, k, s, d in zip(sizes, attrs.kernel_shape, attrs.strides, attrs.dilations,
                                  strict=True)
        ]
        pads = tuple(p[0] for p in per_axis) + tuple(p[1] for p in per_axis)
        why = f"{attrs.auto_pad}: pads {list(pads)} from the dilated kernel span"
    written = dataclasses.replace(attrs, auto_pad="NOTSET", pads=pads, ceil_mode=0)
    return Plan(
        EXPLICIT_PADS,
        pool=standard_attributes(site.spec, written),
        shape_free=shape_free,
        why=why,
    )


def _pad_value(
    site: Site, compute: str, signed_zero: bool
) -> float | int | NotApplicable:
    """The constant the Pad writes, or the reason there is none for this variant."""
    if site.op == "MaxPool":
        value = lowest(site.elem)  # of the node's own type: a cast back must give it again
        if signed_zero:
            if value != 0 or compute not in FLOATS:
                return NotApplicable(
                    "a signed zero only stands in for a lowest value of 0 in a float type"
                )
            return -0.0
        return float(value) if compute in FLOATS else value
    if signed_zero:
        if compute not in FLOATS:
            return NotApplicable("a signed zero needs a float type")
        return -0.0
    return 0.0 if compute in FLOATS else 0


def pad_node(
    site: Site, *, signed_zero: bool = False, compute: str | None = None
) -> Plan | NotApplicable:
    """A ``Pad`` node before a pool that pads nothing, in floor mode: the general form.

    The Pad writes the spec's effective pads, ceil mode as end padding (:func:`_pad_amounts`).
    MaxPool: the Pad writes the lowest value of the type (-inf, or the integer minimum): it never
    wins over an input and is what an empty window gives (rulings 5, 6). Example: k=2, s=1,
    pads (2, 2) on n=3, which onnxruntime refuses (pads >= kernel): Pad 2+2 -> 7 positions,
    MaxPool k=2 -> 6 outputs, the first and last windows hold only padding -> -inf.

    LpPool: the Pad writes 0, which adds ``|0|^p = 0`` to a window's sum: the norm of a window
    is the norm of its taps inside the input, padding or not (ruling 12), so no correction.
    Example: [3, 4], k=2, pads (1, 1), p=2: Pad -> [0, 3, 4, 0] -> windows 3, 5, 4.

    AveragePool: the Pad writes 0, the pool divides by the kernel volume and the result is
    multiplied by ``kvol / count`` (:func:`_pad_amounts`).

    onnxruntime's PadFusion folds a Pad of constant 0 into the pool after it (back into pads >=
    kernel, which it refuses); ``signed_zero`` pads with -0.0 instead, which adds nothing to a
    sum and which a test of the constant's bytes does not take for 0. (An all-padding window
    then averages to -0.0, equal to the spec's 0.)

    The Pad moves coordinates, so Indices are not the spec's. Right for every size when the
    pads are explicit, ceil mode is off and no divisor needs correcting.
    """
    if not site.windowed:
        return NotApplicable(f"{site.op} is not a windowed pool")
    attrs = site.attrs
    assert isinstance(attrs, PoolAttrs)
    if site.op == "AveragePool" and "count_include_pad" not in site.spec.attrs:
        return NotApplicable(
            f"{site.spec.key} has no count_include_pad to divide by the kernel volume"
        )
    value = _pad_value(site, compute or site.elem, signed_zero)
    if isinstance(value, NotApplicable):
        return value
    amounts = _pad_amounts(site, attrs)
    if isinstance(amounts, NotApplicable):
        return amounts
    pads, scale, shape_free = amounts
    pool = dataclasses.replace(
        attrs,
        auto_pad="NOTSET",
        pads=(0,) * (2 * attrs.rank),
        ceil_mode=0,
        count_include_pad=1 if site.op == "AveragePool" else attrs.count_include_pad,
    )
    shown = "-0.0" if signed_zero else value
    why = f"Pad {list(pads)} with {shown}, then the pool in floor mode without pads"
    return Plan(
        PAD_SIGNED_ZERO if signed_zero else PAD,
        pool=standard_attributes(site.spec, pool),
        pad=pads,
        pad_value=value,
        scale=scale,
        keeps_indices=False,
        shape_free=shape_free,
        why=why if scale is None else f"{why}, times kvol/count",
    )


def _pad_amounts(
    site: Site, attrs: PoolAttrs
) -> tuple[tuple[int, ...], np.ndarray | None, bool] | NotApplicable:
    """The pads a Pad before the pool writes (begins, then ends), the ``kvol / count`` an
    average is multiplied by (None: 1 everywhere), and whether both hold for every size.

    Per axis the spec's effective pads ``(pb, pe)`` come from :mod:`ortpool.geometry` (SAME's
    dilated-span pads, VALID's zeros, explicit pads as written, any size: pads >= kernel are
    legal, ruling 5). Ceil mode becomes end padding: the pool runs in floor mode on
    ``n + pb + pe'`` with ``pe' = max(0, (out-1)*s + ek - n - pb)``, which gives exactly the
    spec's ``out``, drop rule included (ruling 1).

    AveragePool: the Pad writes 0 and the pool divides by the kernel volume
    (``count_include_pad=1``), which gives ``sum / kvol``; the spec divides by ``count``
    (ruling 8), so the result is multiplied by the constant ``kvol / count`` per output
    position (a count of 0 gives inf, and 0 * inf = NaN: the spec's 0/0). Example: n=5, k=2, s=2,
    ceil mode, no pads, count_include_pad=0: out = 3, pe' = 2*2 + 2 - 5 = 1; the third window
    sums x4 + 0 over 2 and is multiplied by 2/1: x4. A kernel longer than the padded input
    (ruling 19), a 1x1 map, k=2, s=2, ceil mode: out = 1, pe' = 0 + 2 - 1 = 1, one window
    over [x, 0] times 2/1 per axis: x, as the spec's one window (onnxruntime computes the node
    as it is right too). Where the spec has no window (floor mode there) no Pad helps: a pool
    that truncates its size toward zero, as onnxruntime's does, still makes one.
    """
    geom = site.geometry()
    fixed = attrs.auto_pad == "NOTSET" and not attrs.ceil_mode
    if geom is None:
        if not fixed:
            return NotApplicable(
                "the pads depend on the input size, which is symbolic (auto_pad or ceil_mode)"
            )
        if site.op == "AveragePool" and not attrs.count_include_pad and any(attrs.pads):
            return NotApplicable(
                "the divisor near the edges depends on the input size, which is symbolic"
            )
        return tuple(attrs.pads), None, True
    pads = tuple(a.pb for a in geom.axes) + tuple(
        max(0, (a.out - 1) * a.s + effective_kernel(a.k, a.d) - a.n - a.pb) for a in geom.axes
    )
    scale = None
    if site.op == "AveragePool":
        scale = _divisor_scale(geom, bool(attrs.count_include_pad))
    return pads, scale, fixed and scale is None


def _divisor_scale(geom: PoolGeometry, include_pad: bool) -> np.ndarray | None:
    """``kvol / count`` per output position, (1, 1, *out); None when it is 1 everywhere."""
    kvol = math.prod(a.k for a in geom.axes)
    count = np.ones((), np.float64)
    for axis, a in enumerate(geom.axes):
        per_axis = np.asarray(a.counts(include_pad), np.float64)
        count = count * per_axis.reshape((-1,) + (1,) * (len(geom.axes) - 1 - axis))
    if np.all(count == kvol):
        return None
    with np.errstate(divide="ignore"):
        scale = kvol / count
    return scale.reshape((1, 1, *scale.shape))


def pad_signed_zero(site: Site, compute: str | None = None) -> Plan | NotApplicable:
    """:func:`pad_node` with -0.0 as the constant (see there)."""
    return pad_node(site, signed_zero=True, compute=compute)


def _spatial_axes(site: Site) -> tuple[int, ...] | NotApplicable:
    rank = site.rank
    if rank is None:
        return NotApplicable("the rank of the input is not known")
    return tuple(range(2, 2 + rank))


def reduce(site: Site, compute: str | None = None) -> Plan | NotApplicable:
    """A global pool as the Reduce op over the spatial axes (``keepdims=1``): the same values.

    GlobalMaxPool is ``ReduceMax``, GlobalAveragePool ``ReduceMean``, GlobalLpPool ``ReduceL1``
    (p = 1), ``ReduceL2`` (p = 2) or, for another p, ``Pow(ReduceSum(Pow(Abs(x), p)), 1/p)``
    (rulings 12, 13). Example: GlobalLpPool p=3 on the plane [[1, 2], [2, 0]]:
    ``(1 + 8 + 8 + 0)^(1/3) = 17^(1/3) = 2.571...``. For every spatial size, with its own
    kernels (double included, where the global pools have none in onnxruntime), and empty
    planes by the Reduce ops' own rule (max -inf, mean 0/0, norm 0).
    """
    if site.op not in GLOBAL_OPERATORS:
        return NotApplicable(f"{site.op} is not a global pool")
    axes = _spatial_axes(site)
    if isinstance(axes, NotApplicable):
        return axes
    if site.op == "GlobalMaxPool":
        return Plan(REDUCE, reduce="ReduceMax", why="ReduceMax over the spatial axes")
    if site.op == "GlobalAveragePool":
        return Plan(REDUCE, reduce="ReduceMean", why="ReduceMean over the spatial axes")
    p = float(getattr(site.attrs, "p", 2))
    if p in (1.0, 2.0):
        op = "ReduceL1" if p == 1.0 else "ReduceL2"
        return Plan(REDUCE, reduce=op, why=f"{op} over the spatial axes (p={p:g})")
    return Plan(
        REDUCE,
        reduce="ReduceSum",
        exponent=p,
        why=f"ReduceSum of |x|^{p:g} over the spatial axes, to the power 1/{p:g}",
    )


def empty_plane(site: Site, compute: str | None = None) -> Plan | NotApplicable:
    """A global pool over a plane with no element: the empty window's value (rulings 5, 13)
    as ``ReduceSum`` (0 over nothing) plus a constant: -inf for the max, NaN for the mean (0/0),
    nothing for the norm. Example: X of shape (1, 2, 0, 7) -> Y (1, 2, 1, 1) of NaN for
    GlobalAveragePool, where onnxruntime refuses the node and its ReduceMean gives 0. For the
    static sizes only."""
    if site.op not in GLOBAL_OPERATORS:
        return NotApplicable(f"{site.op} is not a global pool")
    if site.spatial is None or 0 not in site.spatial:
        return NotApplicable("the plane is not statically empty")
    offset = {"GlobalMaxPool": -math.inf, "GlobalAveragePool": math.nan}.get(site.op)
    return Plan(
        EMPTY_PLANE,
        reduce="ReduceSum",
        offset=offset,
        shape_free=False,
        why=f"an empty plane: ReduceSum (0){'' if offset is None else f' + {offset}'}",
    )


def power_average(site: Site, compute: str | None = None) -> Plan | NotApplicable:
    """A windowed LpPool as ``(kvol * AveragePool(|x|^p, count_include_pad=1))^(1/p)``.

    The average pool with padding counted divides each window's sum of ``|x|^p`` by the kernel
    volume ``kvol``, padding adding 0 as it does to the norm (ruling 12); times ``kvol``
    and to the power ``1/p`` it is the norm, for any p (no Pow for p = 1). Example: [3, 4],
    k=2, p=2: |x|^2 = [9, 16], average 12.5, times 2 = 25, square root 5. Sums in the type
    (float32 for a half type, between Casts), which ruling 17's rule judges. For a node
    whose p no standard LpPool at the opset can write (LpPool-1's p=1.5 once the model is
    lifted past opset 1, where onnxruntime has no LpPool-1 kernel and no Cast).
    """
    if site.op != "LpPool" or not isinstance(site.attrs, PoolAttrs):
        return NotApplicable("only a windowed LpPool is a power of an average")
    attrs = site.attrs
    average = versions.resolve("AveragePool", site.opset)
    for name, value, neutral in (("ceil_mode", attrs.ceil_mode, 0),
                                 ("dilations", attrs.dilations, (1,) * attrs.rank)):
        if value != neutral and name not in average.attrs:
            return NotApplicable(f"{average.key} at ai.onnx opset {site.opset} has no {name}")
    if "count_include_pad" not in average.attrs:
        return NotApplicable(f"{average.key} cannot count padding as 0")
    written = dataclasses.replace(attrs, count_include_pad=1)
    p = float(attrs.p)
    return Plan(
        POWER_AVERAGE,
        average=standard_attributes(average, written),
        exponent=p,
        keeps_indices=False,
        why=f"(kvol * AveragePool(|x|^{p:g}))^(1/{p:g}), padding counted as 0",
    )


def in_float(plan: Plan, site: Site) -> Plan | NotApplicable:
    """``plan`` computed in float32 between a Cast of X and a Cast of Y back to the node's type.

    Exact for every type float32 holds exactly (float16, bfloat16, int8, uint8): a max moves one
    value, which the round trip gives back; an average is the float32 sum rounded once to the
    type, which is what ruling 8 asks. For a runtime without a kernel for the type
    (bfloat16 MaxPool-22, float16 MaxPool-1) or one that folds the type's own padding. Not for
    double: float32 would round it. (A Pad plan must be built for float32: its constant is the
    node type's lowest value written in float32, ``compute="float"``.)
    """
    if site.elem == "float":
        return NotApplicable("the node computes in float32 already")
    if site.elem not in FLOAT_EXACT:
        return NotApplicable(f"{site.elem} is not held exactly by float32")
    if "float" not in site.spec.types:
        return NotApplicable(f"{site.spec.key} does not take float")
    return dataclasses.replace(
        plan,
        name=IN_FLOAT if plan.name == UNCHANGED else f"{plan.name}+{IN_FLOAT}",
        compute="float",
        why=f"{plan.why}; computed in float32 between Casts",
    )


def in_double(plan: Plan, site: Site) -> Plan | NotApplicable:
    """A global average or norm of a float type summed in float64, rounded once to the type.

    ruling 13 asks for the exact mean (norm) within 2 ulp; a float32 running sum over a
    large plane loses far more (onnxruntime's GlobalAveragePool: 8.8e-4 relative at 1024x1024).
    Summed in float64 the error is at most about ``n * 2**-53`` relative (n = 2**20: 1.2e-10),
    so the one rounding to float32 is the result's only error that shows. Example: the mean of
    2**20 values 0.1f is 0.1f in float64 arithmetic, exactly rounded. Reduce plans only:
    onnxruntime has no float64 kernel for the global pools.
    """
    if site.op not in GLOBAL_OPERATORS or site.op == "GlobalMaxPool":
        return NotApplicable("only a global average or norm sums over the plane")
    if site.elem not in ("float", "float16", "bfloat16"):
        return NotApplicable(f"{site.elem} gains nothing in float64")
    if plan.reduce is None:
        return NotApplicable(
            "onnxruntime has no float64 global pool; the Reduce form computes in float64"
        )
    return dataclasses.replace(
        plan,
        name=f"{plan.name}+{IN_DOUBLE}",
        compute="double",
        why=f"{plan.why}; summed in float64 between Casts, rounded once",
    )


def nan_guarded(plan: Plan, site: Site, kind: str = GUARD_SUM) -> Plan | NotApplicable:
    """The max's non-finite windows made the spec's (rulings 5, 6, 13).

    A runtime may skip NaN (onnxruntime does unless it is the window's first tap; its
    GlobalMaxPool unless the whole plane is NaN) and may start its max at the type's lowest
    finite value (onnxruntime 1.31 and 1.32 give -3.4e38 for a window of -inf only). The pool's
    result is mended where a window holds a NaN (-> NaN) or only -inf or padding (-> -inf):

    * :data:`GUARD_SUM` (``nan-guard``, the cheaper: measured in scripts/guard_cost.py): the
      flag ``F = 0 where X is -inf, X + inf elsewhere`` (so NaN where X is NaN, +inf where X is
      finite or +inf; one ``Less`` against the lowest finite value, one ``Add``, one ``Where``)
      is *summed* over the same window by the average pool of the plan's geometry (the global
      pools: a sum over the plane), ``S``. A sum is NaN when a term is, +inf when a term is
      +inf and none NaN, and +0 when every term is +0 (padding adds 0): so ``Y + (-1 / S)`` is
      ``Y + NaN = NaN``, ``Y + (-0) = Y`` (bit for bit, -0.0 included), or ``Y + -inf = -inf``.
      Example: window [1, NaN, 3]: F = [inf, NaN, inf], S = NaN -> NaN, where onnxruntime
      gives 3; window [-inf, -inf]: F = [0, 0], S = 0, -1/S = -inf -> -3.4e38 + -inf = -inf.
      Five ops and one pool beside the node where the mask takes eight; not for MaxRoiPool (no
      average pool over its bins) nor for a dilated window where the opset's AveragePool has no
      ``dilations`` (before AveragePool-19).
    * :data:`GUARD_MASK` (``nan-guard-mask``): ``M = 3 where X is NaN, 1 where X is -inf, 2
      elsewhere`` pooled by the same plan, NaN where the pooled mask is 3, -inf where it is 1
      (only -inf) or below (only padding: an empty window's lowest value; MaxRoiPool's empty bin
      gives 0 in both and is kept), the pool's result elsewhere. Example: window [1, NaN, 3] ->
      mask [2, 3, 2] -> max 3 -> NaN; window [-inf, -inf] -> mask [1, 1] -> -inf.

    -inf is told by ``X < lowest finite value`` (exact, and there from opset 7: IsInf only
    from 10). Indices are not mended (the spec's is the first NaN's), so not for a node whose
    Indices are used.
    """
    if site.op not in MAX_LIKE:
        return NotApplicable(f"{site.op} does not take a max over input values")
    if site.elem not in FLOATS:
        return NotApplicable(f"{site.elem} has no NaN or -inf")
    if site.indices_read:
        return NotApplicable(
            "the guard does not mend Indices, and this node's Indices are used"
        )
    if kind == GUARD_SUM:
        if site.op == "MaxRoiPool":
            return NotApplicable("no average pool sums over MaxRoiPool's bins")
        dilations = (plan.pool or site.attributes).get("dilations") or ()
        dilated = plan.reduce is None and any(int(d) != 1 for d in dilations)
        if dilated and "dilations" not in versions.resolve("AveragePool", site.opset).attrs:
            return NotApplicable(
                    f"the window is dilated and AveragePool at ai.onnx opset {site.opset} "
                    "has no dilations"
                )
    name = GUARDS[kind]
    return dataclasses.replace(
        plan,
        name=name if plan.name == UNCHANGED else f"{plan.name}+{name}",
        nan_guard=kind,
        keeps_indices=False,
        why=f"{plan.why}; NaN and -inf windows mended by a "
        + ("summed flag" if kind == GUARD_SUM else "pooled mask"),
    )


def ortpool_op() -> Plan:
    """ortpool's own op: the spec by construction, but ortpool is needed at run time."""
    return Plan(ORTPOOL, ortpool=True, why="ortpool's op (no standard form is exact here)")


#: The base forms, cheapest first, by the name the report gives them, with the operators each
#: is listed for (None: every operator); a listed form may still not apply (it says why).
_WINDOWED = ("MaxPool", "AveragePool", "LpPool", "MaxUnpool")
BASE_FORMS: tuple[tuple[str, Form, tuple[str, ...] | None], ...] = (
    (UNCHANGED, unchanged, None),
    (EXPLICIT_PADS, explicit_pads, _WINDOWED),
    (PAD, pad_node, _WINDOWED),
    (PAD_SIGNED_ZERO, pad_signed_zero, _WINDOWED),
    (REDUCE, reduce, GLOBAL_OPERATORS),
    (EMPTY_PLANE, empty_plane, GLOBAL_OPERATORS),
    (POWER_AVERAGE, power_average, ("LpPool",)),
)
#: The compute wrappers after the node's own type, with the operators each is tried for.
Wrapper = Callable[[Plan, Site], "Plan | NotApplicable"]
COMPUTE_WRAPPERS: tuple[tuple[str, str, Wrapper, tuple], ...] = (
    (IN_FLOAT, "float", in_float, versions.OPERATORS),
    (IN_DOUBLE, "double", in_double, GLOBAL_SUMS),
)


def candidates(site: Site) -> list[tuple[str, Plan | NotApplicable]]:
    """Every plan for ``site``, cheapest first, each named; :class:`NotApplicable` (with the
    reason) where a form does not apply.

    Order: the base forms in the node's type, then in float32 (types without a kernel), then in
    float64 (global sums), then all of them again with each non-finite guard, the summed one
    first (max-like ops of a float type); ortpool's op last.
    """
    found: list[tuple[str, Plan | NotApplicable]] = []
    guards: list[str | None] = [None]
    if site.op in MAX_LIKE and site.elem in FLOATS:
        guards += list(GUARDS)
    computes = [None, *(w for w in COMPUTE_WRAPPERS if site.op in w[3])]
    bases = [(n, f) for n, f, ops in BASE_FORMS if ops is None or site.op in ops]
    for guard in guards:
        for wrapper in computes:
            for base_name, base in bases:
                wrappers = ([wrapper[0]] if wrapper else []) + ([GUARDS[guard]] if guard else [])
                name = "+".join(
                    wrappers if base_name == UNCHANGED and wrappers else [base_name, *wrappers]
                )
                try:
                    plan = base(site, compute=wrapper[1] if wrapper else None)
                except OrtpoolError as err:
                    plan = NotApplicable(err.detail)
                if isinstance(plan, Plan) and wrapper:
                    plan = wrapper[2](plan, site)
                if isinstance(plan, Plan) and guard:
                    plan = nan_guarded(plan, site, guard)
                if isinstance(plan, Plan) and not plan.keeps_indices and site.indices_read:
                    plan = NotApplicable(
                        "it moves Indices, and this node's Indices are used (ruling 16)"
                    )
                found.append((name, plan))
    if site.pinned:
        pinned = NotApplicable(
            f"at ai.onnx opset {site.opset} the node would be {site.op}-"
            f"{versions.resolve(site.op, site.opset).version}, not {site.spec.key}"
        )
        found = [(n, p if isinstance(p, NotApplicable) or p.replaces_node else pinned)
                 for n, p in found]
    found.append((ORTPOOL, ortpool_op()))
    return found
