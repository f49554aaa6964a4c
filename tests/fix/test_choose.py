"""ortpool fix's choice per node: left alone where the runtime is right, the fallback of a node
whose sizes are symbolic, the grid cases the runtime gets wrong, a model that does not run."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import ortpool
from ortpool import kernels
from ortpool.check import grid
from ortpool.fix import fix_with_report
from ortpool.ort.runtime import max_ir_version
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.report import fixes as report
from tests.support.fix import model_feeds, numpy_kernels, run_fixed, spec_outputs, unloadable_model
from tests.support.scripts import load_script

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

__all__ = ["numpy_kernels"]


def pool_model(op="MaxPool", dims=(1, 4, 9, 9), opset=13, outputs=("y",), **attrs):
    node = h.make_node(op, ["x"], list(outputs), name="pool", **attrs)
    graph = h.make_graph(
        [node],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, list(dims))],
        [h.make_tensor_value_info(o, T.FLOAT if o == "y" else T.INT64, None) for o in outputs],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def test_a_node_the_runtime_gets_right_is_left_exactly_as_it_was():
    # Right on finite inputs (onnxruntime drops NaN: tests/fix/test_nonfinite.py).
    model = pool_model(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    fixed, found = fix_with_report(model, nonfinite=False)
    (node,) = found.nodes
    assert node.realization == report.UNCHANGED and node.form == "unchanged"
    assert node.attempts[0].outcome == "proven"
    # the model's two runs, then the built cases through the node as written
    assert node.in_model["exact"] and node.in_model["sets"] > 2
    assert fixed.graph == model.graph
    assert found.exit_code() == 0
    assert found.to_dict()["summary"]["finite_inputs_only"] == ["pool"]


def test_symbolic_sizes_fall_back_with_the_reason():
    # SAME with stride 2 and dilation: its pads depend on the input size, which is symbolic.
    model = pool_model(
        dims=("N", 4, "H", "W"),
        kernel_shape=[3, 3],
        strides=[2, 2],
        dilations=[2, 2],
        auto_pad="SAME_UPPER",
    )
    fixed, found = fix_with_report(model)
    (node,) = found.nodes
    assert node.realization == report.ORTPOOL
    assert node.shapes.startswith("symbolic spatial sizes")
    reasons = {a.form: a.detail for a in node.attempts}
    assert reasons["explicit-pads"] == (
        "SAME pads depend on the input size, which is symbolic (a stride is not 1)"
    )
    assert "symbolic" in reasons["pad"]
    assert len(node.proof["shapes"]) > 3  # ortpool's op proven on sampled sizes
    # Stride 1: the total pad is ek - 1 whatever the size, so explicit pads serve every size.
    model = pool_model(
        dims=("N", 4, "H", "W"), kernel_shape=[3, 3], dilations=[2, 2], auto_pad="SAME_LOWER"
    )
    fixed, found = fix_with_report(model)
    (node,) = found.nodes
    assert (node.realization, node.form) == (report.FORM, "explicit-pads")
    # in the non-finite domain the max is also guarded (onnxruntime drops NaN)
    fixed, found = fix_with_report(model, nonfinite=True)
    (node,) = found.nodes
    # dilated: the summed guard needs AveragePool-19's dilations, so the pooled mask guards it
    assert (node.realization, node.form) == (report.FORM, "explicit-pads+nan-guard-mask")
    reasons = {a.form: a.detail for a in node.attempts}
    assert reasons["explicit-pads+nan-guard"].startswith("the window is dilated and AveragePool")
    for size in (5, 8, 13):
        feeds = {"x": np.arange(2 * 4 * size * size, dtype=np.float32).reshape(2, 4, size, size)}
        np.testing.assert_array_equal(run_fixed(fixed, feeds)[0], spec_outputs(model, feeds)[0])


def test_indices_that_are_used_keep_the_spec_indices():
    model = pool_model(outputs=("y", "i"), kernel_shape=[2, 2], pads=[2, 2, 2, 2])
    fixed, found = fix_with_report(model)
    (node,) = found.nodes
    assert node.realization == report.ORTPOOL  # a Pad would move Indices
    # The same node with its Indices unused: the Pad form, the Indices output dropped.
    del model.graph.output[1]
    assert fix_with_report(model)[1].nodes[0].form == "pad"  # the finite domain: no guard
    fixed, found = fix_with_report(model, nonfinite=True)
    assert (found.nodes[0].realization, found.nodes[0].form) == (report.FORM, "pad+nan-guard")
    pool = next(n for n in fixed.graph.node if n.name == "pool")
    assert len(pool.output) == 1  # into the guard, no Indices


def test_models_are_written_for_the_installed_runtime():
    model = pool_model(kernel_shape=[2, 2], auto_pad="VALID", ceil_mode=1, strides=[2, 2])
    newest = max_ir_version()  # asked of the installed onnxruntime (1.31 reads 13, 1.32 14)
    model.ir_version = newest + 1
    fixed, found = fix_with_report(model)
    assert fixed.ir_version == newest
    assert (f"IR version {newest + 1} lowered to {newest}, the newest the installed onnxruntime "
            "reads") in found.notes


def test_a_written_model_that_does_not_run_is_not_proven():
    """A node proven alone is not shipped when the written model does not run: here a node of a
    domain onnxruntime does not know reads the pool's output. (A local function holding
    ortpool's op fed by an If was such a model until the rewrite declared the call's outputs;
    tests/rewrite/test_op_outputs.py runs it now.)"""
    model = unloadable_model()
    _, found = fix_with_report(model)
    assert [n.name for n in found.nodes] == ["p"]
    (node,) = found.nodes
    assert node.realization == report.UNPROVEN
    assert node.reason.startswith("proven alone, but the written model could not be run")
    assert node.proof["exact"]
    assert found.exit_code() == 2 and found.exit_code(allow_unproven=True) == 1


def test_grid_cases_the_runtime_gets_wrong_are_fixed_and_checked():
    cases = [
        *grid.cases(["MaxPool"], [12], ["float", "uint8"], [2]),
        *grid.cases(["AveragePool"], [19], ["float", "double"], [1]),
        *grid.cases(["MaxUnpool"], [22], ["bfloat16"], [2]),
        *grid.cases(["LpPool"], [18], ["float"], [1, 2]),
        *grid.cases(["GlobalMaxPool", "GlobalLpPool"], [22], ["float", "bfloat16"], [1]),
        *grid.cases(["GlobalAveragePool"], [22], ["float"], [1]),
        *grid.cases(["MaxRoiPool"], [1, 22], ["float"], [2]),
    ]
    # One-node models of a few cells: one onnxruntime thread each, as `ortpool conformance` runs
    # its cases (a pool's workers spinning between runs cost a third of this test's CPU).
    one_thread = RuntimeSpec(intra_op_threads=1, inter_op_threads=1)
    outcomes = load_script("fix_grid").fix_grid(cases, runtime=one_thread)
    fixed = [o for o in outcomes if not o.agrees]
    assert len(fixed) > 80
    assert all(o.checked for o in fixed), [o.detail for o in fixed if not o.checked][:3]
    kinds = {o.realization for o in fixed} | {o.form for o in fixed}
    assert {report.FORM, report.ORTPOOL, "explicit-pads", "pad", "in-float", "reduce",
            "empty-plane"} <= kinds


def _lifts(op, opset, elem, attrs):
    """The runtime's refusal of ``op`` at ``opset`` for ``elem``, asked of it (None: it runs)."""
    from tests.support import runtime_defects

    x = np.zeros((1, 1, 5, 5), dtype=elem)
    got = runtime_defects.builtin(op, opset, attrs, [x])
    return got.error if got.no_kernel else None


def test_a_node_no_form_can_run_at_its_opset_gets_the_opset_lifted():
    """float16 MaxPool-1 at opset 1: onnxruntime has no float16 kernel and no Cast below opset 6,
    so nothing runs it there; at opset 6, where MaxPool is still version 1, it does. AveragePool-1
    has no kernel at all; at opset 7 it is AveragePool-7, whose default divisor is version 1's."""
    for op, opset, elem, target in (
        ("MaxPool", 1, np.float16, 6),
        ("AveragePool", 1, np.float32, 7),
    ):
        attrs = {"kernel_shape": [2, 2], "pads": [1, 0, 1, 0]}
        refusal = _lifts(op, opset, elem, attrs)
        if refusal is None:
            pytest.skip(f"onnxruntime runs {op}-{opset} for {np.dtype(elem).name} as it is")
        model = pool_model(op, dims=(1, 2, 5, 5), opset=opset, **attrs)
        code = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(elem))
        model.graph.input[0].type.tensor_type.elem_type = code
        model.graph.output[0].type.tensor_type.elem_type = code
        fixed, found = fix_with_report(model, nonfinite=False)  # no guard: IsNaN needs 9
        (node,) = found.nodes
        assert (node.realization, node.form, node.version) == (report.FORM, "opset-lift", 1)
        assert found.notes[0].startswith(f"ai.onnx opset lifted from 1 to {target}, where every "
                                         "node keeps its meaning")
        assert fixed.opset_import[0].version == target
        x = np.random.default_rng(1).normal(size=(1, 2, 5, 5)).astype(elem)
        want = kernels.run_op(op, 1, [x], attrs)[0]  # ortpool's op cannot run here either
        np.testing.assert_allclose(run_fixed(fixed, {"x": x})[0], want, rtol=2e-3, atol=1e-3)
        # Told not to lift, the opset stays and so does the node's problem.
        kept, kept_report = fix_with_report(model, lift_opset=False)
        assert kept.opset_import[0].version == 1
        assert kept_report.notes[-1] == ("the ai.onnx opset 1 was kept (lift_opset=False): a "
                                         "lift may realize more nodes")
        assert kept_report.unproven or kept_report.needs_ortpool


def test_the_fixed_cnn_in_validate_terms():
    """The bundled cnn model: every node left alone or fixed, and the fixed model equal to the
    spec end to end (its float16 path included)."""
    from ortpool.validate.validator import bundled_models_dir

    model = onnx.load(bundled_models_dir() / "cnn.onnx")
    fixed, found = fix_with_report(model)
    assert not found.unproven
    for use_max in (True, False):
        feeds = model_feeds(model, seed=1, use_max=np.array(use_max))
        want, got = spec_outputs(model, feeds), run_fixed(fixed, feeds)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    assert ortpool.fix is not None and callable(ortpool.fix)
