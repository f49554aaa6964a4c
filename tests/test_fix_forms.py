"""ortpool fix's forms: their arithmetic against ortpool's kernels on random shapes, and the worked
examples of their docstrings.

Each form is a plan of standard ops. Here every op of the plan is computed by numpy and ortpool's
own kernels (Pad by np.pad, the pool by the kernel with the plan's attributes), so the test checks
the form's derivation (pads from the dilated span, ceil overhang turned into end padding, the
kvol/count correction, the padding value) independently of any runtime; the runtime's side is
checked by tests/test_fix_models.py and the grid sample.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ortpool import kernels, versions
from ortpool.attributes import normalize
from ortpool.errors import OrtpoolError
from ortpool.fix import forms
from ortpool.fix.forms import NodeFacts
from ortpool.geometry import effective_kernel
from ortpool.validate.tolerances import tolerance_for


def facts_for(op, version, attrs, spatial, elem="float", indices_used=False, n_outputs=1):
    spec = versions.get(op, version)
    return NodeFacts(
        op=op,
        version=version,
        opset=version,
        attrs=normalize(spec, attrs, len(spatial)),
        elem=elem,
        spatial=tuple(spatial),
        n_outputs=n_outputs,
        indices_used=indices_used,
    )


def run_plan(plan: forms.Plan, facts: NodeFacts, original: dict, x: np.ndarray) -> np.ndarray:
    """The plan's ops, each computed by numpy or by ortpool's kernels."""
    pool = kernels.max_pool if facts.op == "MaxPool" else kernels.average_pool
    attrs = dict(plan.pool) if plan.pool is not None else dict(original)
    y = x.astype(np.float32) if plan.compute else x
    if plan.pad is not None:
        rank = len(plan.pad) // 2
        widths = [(0, 0), (0, 0)] + [(plan.pad[i], plan.pad[i + rank]) for i in range(rank)]
        y = np.pad(y, widths, constant_values=plan.pad_value)
    y = pool(y, version=facts.version, **attrs)
    if plan.scale is not None:
        with np.errstate(invalid="ignore"):
            y = (y * plan.scale.astype(y.dtype)).astype(y.dtype)
    return y.astype(x.dtype) if plan.compute else y


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
            if isinstance(plan, str):
                continue
            got = run_plan(plan, facts, attrs, x)
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
            if isinstance(plan, str):
                assert signed and elem != "uint8"  # -0.0 stands in for uint8's lowest 0 only
                continue
            plan = forms.in_float(plan, facts)
            got = run_plan(plan, facts, attrs, x)
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
        spatial=None,
    )
    assert "symbolic" in forms.explicit_pads(symbolic)


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
    assert reasons == ["it moves Indices, and this node's Indices are used (RULINGS.md 16)"]


def test_wrappers_say_why_they_do_not_apply():
    double = facts_for("AveragePool", 19, {"kernel_shape": [2]}, (4,), elem="double")
    assert forms.in_float(forms.unchanged(double), double) == (
        "double is not held exactly by float32"
    )
    ints = facts_for("MaxPool", 12, {"kernel_shape": [2]}, (4,), elem="int8")
    assert forms.nan_guarded(forms.unchanged(ints), ints) == "int8 has no NaN or -inf"
    assert forms.explicit_pads(ints) == "the pads are explicit already"
    with pytest.raises(OrtpoolError):
        forms.pad_node(facts_for("MaxPool", 12, {"kernel_shape": [5]}, (2,)))
