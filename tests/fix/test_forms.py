"""ortpool fix's forms: their arithmetic against ortpool's kernels on random shapes, and the worked
examples of their docstrings.

Each form is a plan of standard ops. Here every op of the plan is computed by numpy and ortpool's
own kernels (Pad by np.pad, the pool by the kernel with the plan's attributes), so the test checks
the form's derivation (pads from the dilated span, ceil overhang turned into end padding, the
kvol/count correction, the padding value) independently of any runtime; the runtime's side is
checked by tests/fix/test_models.py and the grid sample.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import onnx
import pytest

from ortpool import kernels, versions
from ortpool.check import cases as inputs
from ortpool.check.compare import compare_values
from ortpool.forms import lift
from ortpool.forms import plan as forms
from ortpool.geometry import effective_kernel
from ortpool.model.site import Site
from ortpool.tolerances import node_tolerance, tolerance_for


def facts_for(op, version, attrs, spatial, elem="float", indices_used=False, n_outputs=1):
    spec = versions.get(op, version)
    return Site.alone(op, version, attrs, elem, (1, 1, *spatial), spec.min_inputs, n_outputs,
                      indices_read=indices_used)


def _reduce(plan: forms.Plan, x: np.ndarray) -> np.ndarray:
    """``plan.reduce`` over the spatial axes as numpy computes it (in x's type)."""
    axes = tuple(range(2, x.ndim))
    with np.errstate(invalid="ignore", over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of an empty plane
        if plan.reduce == "ReduceMax":
            y = np.max(x, axis=axes, keepdims=True, initial=-np.inf)
        elif plan.reduce == "ReduceMean":
            y = np.mean(x, axis=axes, keepdims=True)
        elif plan.reduce == "ReduceL1":
            y = np.sum(np.abs(x), axis=axes, keepdims=True)
        elif plan.reduce == "ReduceL2":
            y = np.sqrt(np.sum(x * x, axis=axes, keepdims=True))
        else:
            terms = np.abs(x) ** plan.exponent if plan.exponent is not None else x
            y = np.sum(terms, axis=axes, keepdims=True)
            if plan.exponent is not None:
                y = y ** (1.0 / plan.exponent)
        if plan.offset is not None:
            y = y + plan.offset
    return y.astype(x.dtype)


def run_plan(plan, facts, feeds, pool=None):
    """The plan's ops, each computed by numpy or by ortpool's kernels; ``pool(x, *others,
    **attributes)`` stands in for the runtime's pool (default: ortpool's kernel)."""
    attrs = dict(plan.pool) if plan.pool is not None else dict(facts.attributes)
    typed = facts.spec.typed_inputs
    wide = {"float": np.float32, "double": np.float64}.get(plan.compute)
    xs = [a.astype(wide) if wide and typed[i] else a for i, a in enumerate(feeds)]

    def core(x):
        if plan.reduce is not None:
            return _reduce(plan, x)
        if pool is not None:
            return pool(x, *xs[1:], **attrs)
        return kernels.run_op(facts.op, facts.version, [x, *xs[1:]], attrs)[0]

    def padded(x, value):
        if plan.pad is None:
            return x
        rank = len(plan.pad) // 2
        widths = [(0, 0), (0, 0)] + [(plan.pad[i], plan.pad[i + rank]) for i in range(rank)]
        return np.pad(x, widths, constant_values=value)

    x = xs[0]
    y = core(padded(x, plan.pad_value))
    if plan.scale is not None:
        with np.errstate(invalid="ignore"):
            y = (y * plan.scale.astype(y.dtype)).astype(y.dtype)
    if plan.nan_guard == forms.GUARD_SUM:  # as ortpool.forms.emit._guard_sum writes it
        source = padded(x, plan.pad_value)
        with np.errstate(invalid="ignore"):
            flag = np.where(source == -np.inf, 0.0, source + np.inf).astype(x.dtype)
        if plan.reduce is not None or facts.op == "GlobalMaxPool":
            summed = np.sum(flag, axis=tuple(range(2, flag.ndim)), keepdims=True)
        else:
            window = {k: v for k, v in attrs.items() if k not in ("storage_order",)}
            summed = kernels.run_op("AveragePool", 19, [flag],
                                    {**window, "count_include_pad": 1})[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            y = (y + (-1.0 / summed)).astype(y.dtype)
    elif plan.nan_guard:  # as ortpool.forms.emit._guard_mask writes it
        mask = np.where(np.isnan(x), 3.0, np.where(x == -np.inf, 1.0, 2.0)).astype(x.dtype)
        pooled = core(padded(mask, -np.inf))
        low = pooled < 1.5
        if facts.op == "MaxRoiPool":
            low &= pooled > 0.5
        y = np.where(pooled > 2.5, np.nan, np.where(low, -np.inf, y)).astype(y.dtype)
    return y.astype(feeds[0].dtype) if plan.compute else y


def random_node(rng: np.random.Generator):
    op = ["MaxPool", "AveragePool"][rng.integers(2)]
    version = 19 if op == "AveragePool" else 12
    rank = int(rng.integers(1, 4))
    k = rng.integers(1, 4, rank)
    s = rng.integers(1, 4, rank)
    d = rng.integers(1, 3, rank)
    attrs = {"kernel_shape": k.tolist(), "strides": s.tolist(), "dilations": d.tolist()}
    mode = ["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"][rng.integers(4)]
    ek = [effective_kernel(int(a), int(b)) for a, b in zip(k, d, strict=True)]
    if mode == "NOTSET":
        attrs["pads"] = rng.integers(0, 4, 2 * rank).tolist()  # often >= kernel
    else:
        attrs["auto_pad"] = mode
    attrs["ceil_mode"] = int(rng.integers(2))
    if op == "AveragePool":
        attrs["count_include_pad"] = int(rng.integers(2))
    spatial = [int(e + rng.integers(0, 7)) for e in ek]
    return op, version, attrs, spatial


def test_every_form_computes_the_spec_on_random_shapes():
    rng = np.random.default_rng(2024)
    checked = {forms.EXPLICIT_PADS: 0, forms.PAD: 0, forms.PAD_SIGNED_ZERO: 0}
    for _ in range(400):
        op, version, attrs, spatial = random_node(rng)
        facts = facts_for(op, version, attrs, spatial)
        x = (np.round(rng.normal(0, 2, size=(2, 2, *spatial)) * 4) / 4).astype(np.float32)
        want = (kernels.max_pool if op == "MaxPool" else kernels.average_pool)(
            x, version=version, **attrs
        )
        tol = tolerance_for(op, "float")
        for form in (forms.explicit_pads, forms.pad_node, forms.pad_signed_zero):
            plan = form(facts)
            if isinstance(plan, forms.NotApplicable):
                continue
            got = run_plan(plan, facts, [x])
            assert got.shape == want.shape, (plan.name, attrs, spatial)
            np.testing.assert_allclose(
                got, want, rtol=tol.rtol, atol=tol.atol, err_msg=f"{plan.name} {attrs} {spatial}"
            )
            checked[plan.name] += 1
    assert min(checked.values()) > 40, checked


def test_in_float_gives_back_every_value_of_the_narrow_types():
    rng = np.random.default_rng(7)
    for elem, make in (
        ("uint8", lambda s: rng.integers(0, 256, s).astype(np.uint8)),
        ("int8", lambda s: rng.integers(-128, 128, s).astype(np.int8)),
        ("float16", lambda s: rng.normal(0, 1000, s).astype(np.float16)),
    ):
        attrs = {"kernel_shape": [2, 2], "pads": [2, 1, 2, 1], "ceil_mode": 1, "strides": [2, 2]}
        facts = facts_for("MaxPool", 12, attrs, (7, 6), elem=elem)
        x = make((1, 3, 7, 6))
        for signed in (False, True):
            plan = forms.pad_node(facts, signed_zero=signed, compute="float")
            if isinstance(plan, forms.NotApplicable):
                assert signed and elem != "uint8"  # -0.0 stands in for uint8's lowest 0 only
                continue
            plan = forms.in_float(plan, facts)
            got = run_plan(plan, facts, [x])
            assert got.dtype == x.dtype
            np.testing.assert_array_equal(got, kernels.max_pool(x, version=12, **attrs))


def test_explicit_pads_worked_examples():
    # n=9, k=3, d=2, s=1, SAME_UPPER: ek=5, total 4 -> (2, 2); shape-free (stride 1)
    facts = facts_for(
        "MaxPool", 12, {"kernel_shape": [3], "dilations": [2], "auto_pad": "SAME_UPPER"}, (9,)
    )
    plan = forms.explicit_pads(facts)
    assert plan.pool == {"kernel_shape": [3], "dilations": [2], "pads": [2, 2]}
    assert plan.shape_free and plan.keeps_indices
    # VALID with ceil_mode: ceil_mode dropped, nothing else written
    facts = facts_for(
        "AveragePool",
        11,
        {"kernel_shape": [3], "strides": [2], "auto_pad": "VALID", "ceil_mode": 1},
        (8,),
    )
    assert forms.explicit_pads(facts).pool == {"kernel_shape": [3], "strides": [2]}
    # SAME with stride 2 on a symbolic size: not writable for every size
    symbolic = dataclasses.replace(
        facts_for("MaxPool", 12, {"kernel_shape": [3], "strides": [2], "auto_pad": "SAME_UPPER"},
                  (9,)),
        x_dims=(1, 1, None),
    )
    assert "symbolic" in forms.explicit_pads(symbolic).reason


def test_pad_form_worked_examples():
    # MaxPool k=2, s=1, pads (2, 2) on n=3: Pad 2+2 with -inf, 6 outputs, first and last empty
    facts = facts_for("MaxPool", 12, {"kernel_shape": [2], "pads": [2, 2]}, (3,))
    plan = forms.pad_node(facts)
    assert (plan.pad, plan.pad_value, plan.pool) == ((2, 2), -np.inf, {"kernel_shape": [2]})
    assert not plan.keeps_indices and plan.scale is None
    # AveragePool n=5, k=2, s=2, ceil mode, count_include_pad=0: pe' = 1, last window x4/2*2/1
    facts = facts_for(
        "AveragePool", 19, {"kernel_shape": [2], "strides": [2], "ceil_mode": 1}, (5,)
    )
    plan = forms.pad_node(facts)
    assert plan.pad == (0, 1) and plan.pad_value == 0.0
    assert plan.pool == {"kernel_shape": [2], "strides": [2], "count_include_pad": 1}
    np.testing.assert_array_equal(plan.scale, [[[1.0, 1.0, 2.0]]])
    signed = forms.pad_signed_zero(facts)
    assert np.signbit(signed.pad_value) and signed.name == forms.PAD_SIGNED_ZERO
    # count 0 (count_include_pad=0, a window of padding only): kvol/0 = inf, 0*inf = NaN
    facts = facts_for("AveragePool", 19, {"kernel_shape": [2], "pads": [3, 0]}, (2,))
    assert np.isinf(forms.pad_node(facts).scale[0, 0, 0])


def test_no_candidate_moves_indices_that_are_used():
    facts = facts_for(
        "MaxPool",
        12,
        {"kernel_shape": [2, 2], "pads": [2, 2, 2, 2]},
        (5, 5),
        indices_used=True,
        n_outputs=2,
    )
    offered = [p for _, p in forms.candidates(facts) if isinstance(p, forms.Plan)]
    assert [p.name for p in offered] == [forms.UNCHANGED, forms.ORTPOOL]
    reasons = [p for name, p in forms.candidates(facts) if name == forms.PAD]
    assert reasons == [
        forms.NotApplicable("it moves Indices, and this node's Indices are used (ruling 16)")
    ]


def test_wrappers_say_why_they_do_not_apply():
    double = facts_for("AveragePool", 19, {"kernel_shape": [2]}, (4,), elem="double")
    assert forms.in_float(forms.unchanged(double), double) == forms.NotApplicable(
        "double is not held exactly by float32"
    )
    ints = facts_for("MaxPool", 12, {"kernel_shape": [2]}, (4,), elem="int8")
    assert forms.nan_guarded(forms.unchanged(ints), ints) == forms.NotApplicable(
        "int8 has no NaN or -inf"
    )
    assert forms.explicit_pads(ints) == forms.NotApplicable("the pads are explicit already")
    # ruling 19: k=5 on 2 in floor mode has no window, and the Pad form's pool none either.
    empty = facts_for("MaxPool", 12, {"kernel_shape": [5]}, (2,))
    plan = forms.pad_node(empty)
    assert plan.pad == (0, 2)
    assert run_plan(plan, empty, [np.ones((1, 1, 2), np.float32)]).shape == (1, 1, 0)


# The rest of the family ----------------------------------------------------------------------


def random_lp_node(rng: np.random.Generator):
    version = [11, 18, 22][rng.integers(3)]
    rank = int(rng.integers(1, 4))
    k = rng.integers(1, 4, rank)
    s = rng.integers(1, 4, rank)
    d = rng.integers(1, 3, rank) if version >= 18 else np.ones(rank, int)
    attrs = {"kernel_shape": k.tolist(), "strides": s.tolist(), "p": int(rng.integers(1, 4))}
    if version >= 18:
        attrs["dilations"] = d.tolist()
        attrs["ceil_mode"] = int(rng.integers(2))
    mode = ["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"][rng.integers(4)]
    if mode == "NOTSET":
        attrs["pads"] = rng.integers(0, 4, 2 * rank).tolist()
    else:
        attrs["auto_pad"] = mode
    ek = [effective_kernel(int(a), int(b)) for a, b in zip(k, d, strict=True)]
    return version, attrs, [int(e + rng.integers(0, 7)) for e in ek]


def assert_within(got, want, facts, x, label):
    tol = node_tolerance(facts.op, facts.version, facts.elem, x, want, facts.attributes)
    assert got.shape == want.shape and got.dtype == want.dtype, label
    comp = compare_values("Y", facts.elem, got, want, tol)
    assert not (comp.differing or comp.inaccurate), (label, comp.examples[:2])


def test_lppool_forms_compute_the_spec_on_random_shapes():
    """explicit-pads, pad (0 adds |0|^p = 0) and pad-signed-zero against ortpool's LpPool."""
    rng = np.random.default_rng(18)
    checked = {forms.EXPLICIT_PADS: 0, forms.PAD: 0, forms.PAD_SIGNED_ZERO: 0}
    for _ in range(150):
        version, attrs, spatial = random_lp_node(rng)
        facts = facts_for("LpPool", version, attrs, spatial)
        x = (np.round(rng.normal(0, 2, size=(2, 2, *spatial)) * 4) / 4).astype(np.float32)
        want = kernels.lp_pool(x, version=version, **attrs)
        for form in (forms.explicit_pads, forms.pad_node, forms.pad_signed_zero):
            plan = form(facts)
            if isinstance(plan, forms.NotApplicable):
                continue
            assert plan.scale is None  # no divisor to correct for a norm
            assert_within(run_plan(plan, facts, [x]), want, facts, x, (plan.name, attrs))
            checked[plan.name] += 1
    assert min(checked.values()) > 20, checked


GLOBAL_CASES = [
    ("GlobalMaxPool", 22, {}),
    ("GlobalAveragePool", 22, {}),
    ("GlobalLpPool", 22, {"p": 1}),
    ("GlobalLpPool", 22, {"p": 2}),
    ("GlobalLpPool", 22, {"p": 3}),
    ("GlobalLpPool", 1, {"p": 2.5}),
]


@pytest.mark.parametrize(("op", "version", "attrs"), GLOBAL_CASES,
                         ids=[f"{o}-{v}-{a}" for o, v, a in GLOBAL_CASES])
def test_global_forms_compute_the_spec_on_random_shapes(op, version, attrs):
    """reduce, reduce+in-double and (on empty planes) empty-plane against ortpool's kernels."""
    rng = np.random.default_rng(13)
    seen = set()
    for _ in range(30):
        rank = int(rng.integers(1, 4))
        spatial = [int(v) for v in rng.integers(1, 6, rank)]
        if rng.random() < 0.25:
            spatial[rng.integers(rank)] = 0  # an empty plane
        facts = facts_for(op, version, attrs, spatial)
        x = (rng.normal(0, 2, size=(2, 3, *spatial))).astype(np.float32)
        want = kernels.run_op(op, version, [x], attrs)[0]
        plans = [forms.reduce(facts), forms.empty_plane(facts)]
        plans.append(forms.in_double(plans[0], facts))
        for plan in plans:
            if isinstance(plan, forms.NotApplicable):
                continue
            got = run_plan(plan, facts, [x])
            if 0 in spatial and plan.name == forms.REDUCE and op != "GlobalLpPool":
                continue  # the Reduce ops' own empty answers are the runtime's to prove
            assert_within(got, want, facts, x, (plan.name, spatial))
            seen.add(plan.name)
    assert {forms.REDUCE, forms.EMPTY_PLANE} <= seen


def test_in_double_rounds_a_large_mean_once():
    """A float32 running sum over 1024x1024 values loses digits (onnxruntime's GlobalAveragePool,
    microsoft/onnxruntime#12043); summed in float64 and rounded once it is within ruling 13's
    2 ulp of the exact mean."""
    x = np.random.default_rng(0).random((1, 1, 1024, 1024)).astype(np.float32)
    facts = facts_for("GlobalAveragePool", 1, {}, (1024, 1024))
    want = kernels.global_average_pool(x, version=1)
    plan = forms.in_double(forms.reduce(facts), facts)
    assert (plan.name, plan.compute, plan.reduce) == ("reduce+in-double", "double", "ReduceMean")
    assert_within(run_plan(plan, facts, [x]), want, facts, x, plan.name)
    running = np.cumsum(x.reshape(-1), dtype=np.float32)[-1] / np.float32(x.size)
    running = running.reshape(want.shape)
    # ruling 17: the running sum is off by 245 u*mean|x| (1.5e-5 relative), beyond 4x the
    # pairwise bound (84), within the note limit (1678): an accuracy note, which in_double avoids
    tol = node_tolerance("GlobalAveragePool", 1, "float", x, want, {})
    rounded_once = compare_values("Y", "float", run_plan(plan, facts, [x]), want, tol)
    noted = compare_values("Y", "float", running, want, tol)
    assert (rounded_once.noted, noted.noted, noted.inaccurate, noted.differing) == (0, 1, 0, 0)
    assert noted.accuracy["max_error_units"] == pytest.approx(244.89, abs=0.01)


def _drops_nonfinite(op, version):
    """A pool as onnxruntime computes it: NaN skipped, a window of -inf only giving the lowest
    finite value."""
    lowest_finite = np.finfo(np.float32).min

    def pool(x, *others, **attributes):
        y = kernels.run_op(op, version, [np.where(np.isnan(x), -np.inf, x), *others],
                           attributes)[0]
        return np.where(y == -np.inf, lowest_finite, y).astype(y.dtype)

    return pool


@pytest.mark.parametrize("op", ["MaxPool", "GlobalMaxPool", "MaxRoiPool"])
def test_nan_guard_mends_a_pool_that_drops_nan_and_inf(op):
    rng = np.random.default_rng(6)
    mended = summed = 0
    for _ in range(40):
        if op == "MaxPool":
            _, version, attrs, spatial = random_node(rng)
            while _ != "MaxPool":
                _, version, attrs, spatial = random_node(rng)
        elif op == "GlobalMaxPool":
            version, attrs, spatial = 22, {}, [int(v) for v in rng.integers(1, 6, 2)]
        else:
            version, attrs, spatial = 1, {"pooled_shape": [2, 3], "spatial_scale": 0.5}, [6, 7]
        facts = facts_for(op, version, attrs, spatial)
        x = rng.normal(0, 2, size=(2, 2, *spatial)).astype(np.float32)
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, max(1, flat.size // 8), replace=False)] = np.nan
        x[:, :, : spatial[0] // 2 + 1] = -np.inf  # windows and bins of -inf only
        feeds = [x]
        if op == "MaxRoiPool":
            feeds.append(inputs._rois(rng, x.shape, "float", 0.5))
        want = kernels.run_op(op, version, feeds, attrs)[0]
        defective = _drops_nonfinite(op, version)
        plans = [forms.unchanged(facts)]
        if op == "MaxPool":
            plans += [p for p in (forms.pad_node(facts),) if not isinstance(p, forms.NotApplicable)]
        for plan in plans:
            alone = run_plan(plan, facts, feeds, pool=defective)
            for kind in forms.GUARDS:
                guard = forms.nan_guarded(plan, facts, kind)
                if isinstance(guard, forms.NotApplicable):
                    assert kind == forms.GUARD_SUM, guard
                    dilated = ("the window is dilated and AveragePool at ai.onnx opset 12 has "
                               "no dilations")
                    assert guard.reason == (
                        "no average pool sums over MaxRoiPool's bins" if op == "MaxRoiPool"
                        else dilated
                    )
                    continue
                summed += kind == forms.GUARD_SUM
                guarded = run_plan(guard, facts, feeds, pool=defective)
                np.testing.assert_array_equal(guarded, want, err_msg=f"{guard.name} {attrs}")
            mended += not np.array_equal(alone, want, equal_nan=True)
    assert mended > 10
    assert summed > 10 if op != "MaxRoiPool" else summed == 0


def test_family_worked_examples():
    # LpPool [3, 4], k=2, pads (1, 1), p=2: Pad -> [0, 3, 4, 0] -> 3, 5, 4
    facts = facts_for("LpPool", 18, {"kernel_shape": [2], "pads": [1, 1], "p": 2}, (2,))
    plan = forms.pad_node(facts)
    assert (plan.pad, plan.pad_value, plan.pool) == ((1, 1), 0.0, {"kernel_shape": [2]})
    x = np.array([[[3.0, 4.0]]], np.float32)
    np.testing.assert_allclose(run_plan(plan, facts, [x]), [[[3.0, 5.0, 4.0]]])
    # GlobalLpPool p=3 on [[1, 2], [2, 0]]: (1 + 8 + 8)^(1/3)
    facts = facts_for("GlobalLpPool", 22, {"p": 3}, (2, 2))
    plan = forms.reduce(facts)
    assert (plan.reduce, plan.exponent) == ("ReduceSum", 3.0)
    got = run_plan(plan, facts, [np.array([[[[1, 2], [2, 0]]]], np.float32)])
    np.testing.assert_allclose(got, [[[[17 ** (1 / 3)]]]], rtol=1e-6)
    assert forms.reduce(facts_for("GlobalLpPool", 22, {"p": 2}, (2, 2))).reduce == "ReduceL2"
    # an empty plane: NaN for the mean, -inf for the max, 0 for the norm
    for op, value in (("GlobalAveragePool", np.nan), ("GlobalMaxPool", -np.inf),
                      ("GlobalLpPool", 0.0)):
        facts = facts_for(op, 22, {}, (0, 7))
        got = run_plan(forms.empty_plane(facts), facts, [np.zeros((1, 2, 0, 7), np.float32)])
        np.testing.assert_array_equal(got, np.full((1, 2, 1, 1), value, np.float32))
    assert forms.empty_plane(facts_for("GlobalMaxPool", 22, {}, (3, 7))) == forms.NotApplicable(
        "the plane is not statically empty"
    )
    assert forms.in_double(forms.reduce(facts), facts_for("GlobalMaxPool", 22, {}, (3, 3))) == (
        forms.NotApplicable("only a global average or norm sums over the plane")
    )


# The opset lift ------------------------------------------------------------------------------


def one_node(op, opset, elem=onnx.TensorProto.FLOAT16, **attrs):
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node(op, ["x"], ["y"], name="n", **attrs)],
        "g",
        [onnx.helper.make_tensor_value_info("x", elem, [1, 1, 5, 5])],
        [onnx.helper.make_tensor_value_info("y", elem, [1, 1, 4, 4])],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
    model.ir_version = 3
    return model


def test_reemission_worked_examples():
    node = onnx.helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2])
    assert lift.reemission(node, versions.get("AveragePool", 1),
                           versions.get("AveragePool", 7), "float") == ""
    node = onnx.helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2], p=2.5)
    assert lift.reemission(node, versions.get("LpPool", 1), versions.get("LpPool", 2),
                           "float") == "p=2.5 is not a whole number (LpPool-2 takes an int)"
    node = onnx.helper.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2])
    assert lift.reemission(node, versions.get("MaxUnpool", 9), versions.get("MaxUnpool", 11),
                           "float") == "MaxUnpool's versions differ in meaning"


def test_a_lift_keeps_every_node_or_says_which_changes():
    model = one_node("LpPool", 1, kernel_shape=[2, 2], p=3.0)
    assert lift.blocked(model, 6, {"n": "float16"}) == ""
    lifted, done = lift.lifted(model, 6)
    assert done == ["'n' LpPool-1 as LpPool-2, p=3 as an int"]
    assert lifted.opset_import[0].version == 6
    (p,) = [a for a in lifted.graph.node[0].attribute if a.name == "p"]
    assert (p.type, p.i) == (onnx.AttributeProto.INT, 3)
    onnx.checker.check_model(lifted)
    assert model.opset_import[0].version == 1  # the source is not changed
    # A Relu beside it is Relu-1 at opset 1 and Relu-6 at 6: not a change of notation.
    model.graph.node.append(onnx.helper.make_node("Relu", ["y"], ["z"], name="relu"))
    assert lift.blocked(model, 6, {}) == "node 'relu' (Relu) is version 1 at opset 1 and 6 at 6"


def test_a_global_pool_its_next_version_cannot_take_is_pinned_for_a_replacing_form():
    """GlobalLpPool-1 with p=1.5: GlobalLpPool-2 takes no such p, but a Reduce form replaces the
    node, so the model may still be lifted (Abs and Pow have kernels from opset 6): the node keeps
    version 1, and only forms that replace it are offered."""
    model = one_node("GlobalLpPool", 1, elem=onnx.TensorProto.FLOAT, p=1.5)
    assert lift.blocked(model, 6, {}) == (
        "node 'n': p=1.5 is not a whole number (GlobalLpPool-2 takes an int)"
    )
    pinned: dict[str, int] = {}
    assert lift.blocked(model, 6, {}, pinned) == "" and pinned == {"n": 1}
    lifted, done = lift.lifted(model, 6, pinned)
    assert done == ["'n' kept as GlobalLpPool-1 (replaced by a form)"]
    assert lifted.graph.node[0].attribute[0].f == 1.5
    facts = dataclasses.replace(
        facts_for("GlobalLpPool", 1, {"p": 1.5}, (5, 5)), opset=6, pinned=True
    )
    offered = [p.name for _, p in forms.candidates(facts) if isinstance(p, forms.Plan)]
    assert offered == ["reduce", "reduce+in-double", forms.ORTPOOL]
    reasons = dict(forms.candidates(facts))
    assert reasons["unchanged"] == forms.NotApplicable(
        "at ai.onnx opset 6 the node would be GlobalLpPool-2, not GlobalLpPool-1"
    )
