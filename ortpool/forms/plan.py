"""The ways one pooling node can be computed with standard ops, as data: :class:`Plan`.

A *form* is a pure function of the node's :class:`Site` giving the plan ``ortpool fix`` may write
for it, or :class:`~ortpool.report.outcomes.NotApplicable` with the reason (:mod:`ortpool.forms.
emit` writes a plan, :mod:`ortpool.forms.prove` proves it): base forms, cheapest first, and the
wrappers :func:`in_float`, :func:`in_double` and :func:`nan_guarded` (docs/fix.md has the table).
Every number comes from :mod:`ortpool.geometry`, the arithmetic the kernels use.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
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
    """One realization of a node. ``pool``: the pool node's attributes (None: the node's own);
    ``reduce``: instead of the pool, this Reduce op over the spatial axes (keepdims), with
    ``exponent`` for ``ReduceSum(|x|^p)^(1/p)`` and ``offset`` added last; ``pad``/``pad_value``:
    a Pad in front (begins, then ends); ``scale``: a (1, 1, *out) constant the result is
    multiplied by; ``compute``: the inputs of X's type cast to it, Y back; ``average``: instead
    of the pool, ``(kvol * AveragePool(|x|^exponent))^(1/exponent)`` with these attributes;
    ``nan_guard``: :data:`GUARD_SUM` or :data:`GUARD_MASK`; ``ortpool``: ortpool's op;
    ``keeps_indices``: the Indices are the spec's; ``shape_free``: right for every input size;
    ``why``: the derivation, for the report."""

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
    """``auto_pad`` SAME_*/VALID written as explicit pads, ``ceil_mode=0``: SAME's from the
    *dilated* span (ruling 2), which the windows then fit exactly; VALID's 0 whatever ceil_mode
    says (ruling 3). Indices stay the spec's. Right for every size with VALID or every stride 1
    (SAME's total is then ``ek - 1``), else for the static sizes."""
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
                    "SAME pads depend on the input size, which is symbolic (a stride is not 1)")
            # stride 1: total = ek - 1 for any n, so the kernel span serves as n
            sizes = tuple(effective_kernel(k, d)
                          for k, d in zip(attrs.kernel_shape, attrs.dilations, strict=True))
        per_axis = [same_pads(n, k, s, d, attrs.auto_pad == "SAME_UPPER")[1:] for n, k, s, d
                    in zip(sizes, attrs.kernel_shape, attrs.strides, attrs.dilations, strict=True)]
        pads = tuple(p[0] for p in per_axis) + tuple(p[1] for p in per_axis)
        why = f"{attrs.auto_pad}: pads {list(pads)} from the dilated kernel span"
    written = dataclasses.replace(attrs, auto_pad="NOTSET", pads=pads, ceil_mode=0)
    return Plan(EXPLICIT_PADS, pool=standard_attributes(site.spec, written),
                shape_free=shape_free, why=why)


def _pad_value(site: Site, compute: str, signed_zero: bool) -> float | int | NotApplicable:
    """The constant the Pad writes, or the reason there is none for this variant."""
    # a max pads with the node's own type's lowest value: a cast back must give it again
    value = lowest(site.elem) if site.op == "MaxPool" else 0
    if not signed_zero:
        return float(value) if compute in FLOATS else value
    if site.op == "MaxPool" and (value != 0 or compute not in FLOATS):
        return NotApplicable("a signed zero only stands in for a lowest value of 0 in a float type")
    return -0.0 if compute in FLOATS else NotApplicable("a signed zero needs a float type")


def pad_node(site: Site, *, signed_zero: bool = False,
             compute: str | None = None) -> Plan | NotApplicable:
    """A ``Pad`` node (the spec's pads, ceil mode's overhang at the end: :func:`_pad_amounts`)
    before a pool that pads nothing, in floor mode: MaxPool padded with the type's lowest value
    (rulings 5, 6), LpPool with 0 (ruling 12), AveragePool with 0 and the result times
    ``kvol / count``. ``signed_zero`` pads with -0.0, which onnxruntime's PadFusion (testing the
    constant's bytes) does not fold back into the pool's pads. The Pad moves Indices."""
    if not site.windowed:
        return NotApplicable(f"{site.op} is not a windowed pool")
    attrs = site.attrs
    assert isinstance(attrs, PoolAttrs)
    if site.op == "AveragePool" and "count_include_pad" not in site.spec.attrs:
        return NotApplicable(
            f"{site.spec.key} has no count_include_pad to divide by the kernel volume")
    value = _pad_value(site, compute or site.elem, signed_zero)
    if isinstance(value, NotApplicable):
        return value
    amounts = _pad_amounts(site, attrs)
    if isinstance(amounts, NotApplicable):
        return amounts
    pads, scale, shape_free = amounts
    pool = dataclasses.replace(
        attrs, auto_pad="NOTSET", pads=(0,) * (2 * attrs.rank), ceil_mode=0,
        count_include_pad=1 if site.op == "AveragePool" else attrs.count_include_pad)
    why = (f"Pad {list(pads)} with {'-0.0' if signed_zero else value}, then the pool in floor "
           f"mode without pads{'' if scale is None else ', times kvol/count'}")
    return Plan(PAD_SIGNED_ZERO if signed_zero else PAD, pool=standard_attributes(site.spec, pool),
                pad=pads, pad_value=value, scale=scale, keeps_indices=False,
                shape_free=shape_free, why=why)


def _pad_amounts(site: Site, attrs: PoolAttrs
                 ) -> tuple[tuple[int, ...], np.ndarray | None, bool] | NotApplicable:
    """The Pad's pads (begins, ends), the ``kvol / count`` an average is multiplied by (None: 1)
    and whether both hold for every size. Ceil mode becomes the end pad ``pe' = max(0, (out-1)*s
    + ek - n - pb)``, the spec's ``out`` in floor mode (ruling 1); a count of 0 gives 0 * inf =
    NaN, the spec's 0/0 (ruling 8)."""
    geom = site.geometry()
    fixed = attrs.auto_pad == "NOTSET" and not attrs.ceil_mode
    if geom is None:
        if not fixed:
            return NotApplicable(
                "the pads depend on the input size, which is symbolic (auto_pad or ceil_mode)")
        if site.op == "AveragePool" and not attrs.count_include_pad and any(attrs.pads):
            return NotApplicable(
                "the divisor near the edges depends on the input size, which is symbolic")
        return tuple(attrs.pads), None, True
    pads = tuple(a.pb for a in geom.axes) + tuple(
        max(0, (a.out - 1) * a.s + effective_kernel(a.k, a.d) - a.n - a.pb) for a in geom.axes)
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


#: :func:`pad_node` with -0.0 as the constant (see there)
pad_signed_zero: Form = functools.partial(pad_node, signed_zero=True)


def reduce(site: Site, compute: str | None = None) -> Plan | NotApplicable:
    """A global pool as the Reduce op over the spatial axes, keepdims (``Pow(ReduceSum(Pow(Abs(x),
    p)), 1/p)`` for a p but 1 and 2; rulings 12, 13): every size, double included."""
    if site.op not in GLOBAL_OPERATORS:
        return NotApplicable(f"{site.op} is not a global pool")
    if site.rank is None:
        return NotApplicable("the rank of the input is not known")
    p = float(getattr(site.attrs, "p", 2))
    op = {"GlobalMaxPool": "ReduceMax", "GlobalAveragePool": "ReduceMean"}.get(site.op)
    if op is not None:
        return Plan(REDUCE, reduce=op, why=f"{op} over the spatial axes")
    if p in (1.0, 2.0):
        op = "ReduceL1" if p == 1.0 else "ReduceL2"
        return Plan(REDUCE, reduce=op, why=f"{op} over the spatial axes (p={p:g})")
    return Plan(REDUCE, reduce="ReduceSum", exponent=p,
                why=f"ReduceSum of |x|^{p:g} over the spatial axes, to the power 1/{p:g}")


def empty_plane(site: Site, compute: str | None = None) -> Plan | NotApplicable:
    """A global pool over a statically empty plane: the empty window's value (rulings 5, 13) as
    ``ReduceSum`` (0) plus -inf for the max, NaN for the mean, nothing for the norm (where
    onnxruntime refuses the node and its ReduceMean gives 0)."""
    if site.op not in GLOBAL_OPERATORS:
        return NotApplicable(f"{site.op} is not a global pool")
    if site.spatial is None or 0 not in site.spatial:
        return NotApplicable("the plane is not statically empty")
    offset = {"GlobalMaxPool": -math.inf, "GlobalAveragePool": math.nan}.get(site.op)
    return Plan(EMPTY_PLANE, reduce="ReduceSum", offset=offset, shape_free=False,
                why=f"an empty plane: ReduceSum (0){'' if offset is None else f' + {offset}'}")


def power_average(site: Site, compute: str | None = None) -> Plan | NotApplicable:
    """A windowed LpPool as ``(kvol * AveragePool(|x|^p, count_include_pad=1))^(1/p)``: padding
    adds 0 as it does to the norm (ruling 12), for any p, so for a p no standard LpPool at the
    opset can write (LpPool-1's p=1.5 once the model is lifted past opset 1)."""
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
    p = float(attrs.p)
    return Plan(POWER_AVERAGE, exponent=p, keeps_indices=False,
                average=standard_attributes(average, dataclasses.replace(attrs,
                                                                         count_include_pad=1)),
                why=f"(kvol * AveragePool(|x|^{p:g}))^(1/{p:g}), padding counted as 0")


def in_float(plan: Plan, site: Site) -> Plan | NotApplicable:
    """``plan`` in float32 between Casts, for a type float32 holds exactly (a max moves a value;
    an average is the float32 sum rounded once, ruling 8) and a runtime without its kernel."""
    if site.elem == "float":
        return NotApplicable("the node computes in float32 already")
    if site.elem not in FLOAT_EXACT:
        return NotApplicable(f"{site.elem} is not held exactly by float32")
    if "float" not in site.spec.types:
        return NotApplicable(f"{site.spec.key} does not take float")
    return _wrapped(plan, IN_FLOAT, "computed in float32 between Casts", compute="float")


def in_double(plan: Plan, site: Site) -> Plan | NotApplicable:
    """A global average or norm summed in float64 (a Reduce plan), rounded once: ruling 13's 2
    ulp, which a float32 running sum misses (onnxruntime: 8.8e-4 relative at 1024x1024)."""
    if site.op not in GLOBAL_OPERATORS or site.op == "GlobalMaxPool":
        return NotApplicable("only a global average or norm sums over the plane")
    if site.elem not in ("float", "float16", "bfloat16"):
        return NotApplicable(f"{site.elem} gains nothing in float64")
    if plan.reduce is None:
        return NotApplicable(
            "onnxruntime has no float64 global pool; the Reduce form computes in float64")
    return _wrapped(plan, IN_DOUBLE, "summed in float64 between Casts, rounded once",
                    compute="double")


def _wrapped(plan: Plan, name: str, why: str, **changes: Any) -> Plan:
    """``plan`` in the wrapper ``name`` (the wrapper's name alone around the node as it is)."""
    return dataclasses.replace(plan, name=name if plan.name == UNCHANGED else f"{plan.name}+{name}",
                               why=f"{plan.why}; {why}", **changes)


def nan_guarded(plan: Plan, site: Site, kind: str = GUARD_SUM) -> Plan | NotApplicable:
    """The max's non-finite windows made the spec's (rulings 5, 6, 13) where a runtime skips NaN
    or gives -3.4e38 for -inf only: by a summed flag (:data:`GUARD_SUM`, the cheaper:
    scripts/guard_cost.py) or a pooled mask (:data:`GUARD_MASK`). Indices are not mended."""
    if site.op not in MAX_LIKE:
        return NotApplicable(f"{site.op} does not take a max over input values")
    if site.elem not in FLOATS:
        return NotApplicable(f"{site.elem} has no NaN or -inf")
    if site.indices_read:
        return NotApplicable("the guard does not mend Indices, and this node's Indices are used")
    if kind == GUARD_SUM and site.op == "MaxRoiPool":
        return NotApplicable("no average pool sums over MaxRoiPool's bins")
    dilations = (plan.pool or site.attributes).get("dilations") or ()
    if (kind == GUARD_SUM and plan.reduce is None and any(int(d) != 1 for d in dilations)
            and "dilations" not in versions.resolve("AveragePool", site.opset).attrs):
        return NotApplicable(f"the window is dilated and AveragePool at ai.onnx opset "
                             f"{site.opset} has no dilations")
    return _wrapped(plan, GUARDS[kind], why="NaN and -inf windows mended by a "
                    + ("summed flag" if kind == GUARD_SUM else "pooled mask"),
                    nan_guard=kind, keeps_indices=False)


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
    """Every plan for ``site``, named, cheapest first (:class:`NotApplicable` where a form does
    not apply): the base forms in each compute type, again with each guard; ortpool's op last."""
    found: list[tuple[str, Plan | NotApplicable]] = []
    guards: list[str | None] = [None]
    if site.op in MAX_LIKE and site.elem in FLOATS:
        guards += list(GUARDS)
    computes = [None, *(w for w in COMPUTE_WRAPPERS if site.op in w[3])]
    bases = [(n, f) for n, f, ops in BASE_FORMS if ops is None or site.op in ops]
    for guard, wrapper, (base_name, base) in itertools.product(guards, computes, bases):
        wrappers = ([wrapper[0]] if wrapper else []) + ([GUARDS[guard]] if guard else [])
        name = "+".join(wrappers if base_name == UNCHANGED and wrappers
                        else [base_name, *wrappers])
        try:
            plan = base(site, compute=wrapper[1] if wrapper else None)
        except OrtpoolError as err:
            plan = NotApplicable(err.detail)
        if isinstance(plan, Plan) and wrapper:
            plan = wrapper[2](plan, site)
        if isinstance(plan, Plan) and guard:
            plan = nan_guarded(plan, site, guard)
        if isinstance(plan, Plan) and not plan.keeps_indices and site.indices_read:
            plan = NotApplicable("it moves Indices, and this node's Indices are used (ruling 16)")
        found.append((name, plan))
    if site.pinned:
        pinned = NotApplicable(
            f"at ai.onnx opset {site.opset} the node would be {site.op}-"
            f"{versions.resolve(site.op, site.opset).version}, not {site.spec.key}")
        found = [(n, p if isinstance(p, NotApplicable) or p.replaces_node else pinned)
                 for n, p in found]
    found.append((ORTPOOL, ortpool_op()))
    return found
