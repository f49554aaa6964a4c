"""ortpool fix on the bundled models of models/fix: every node proven, the realization
each defect class gets, the fixed model equal to the spec end to end, names and other nodes kept,
and a fixed model without ortpool ops running on onnxruntime alone."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from ortpool import versions
from ortpool.fix import fix_with_report
from ortpool.model import fixmarks
from ortpool.report import fixes as report
from ortpool.report import record as results
from ortpool.report.outcomes import Outcome
from ortpool.tolerances import tolerance_for
from ortpool.validate.validator import validate_model
from tests.support.fix import (
    FIX_MODELS,
    builtin_defect,
    find_node,
    max_pool_keeps_minus_inf,
    model_feeds,
    numpy_kernels,
    pad_fusion_folds,
    run_fixed,
    spec_outputs,
)

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

__all__ = ["numpy_kernels"]

#: model -> node -> (realization, form) ortpool fix gives on onnxruntime 1.21 to 1.32 (a node
#: the installed runtime computes right alone is expected unchanged instead: see expected())
EXPECTED = {
    "fix-same-dilated": {
        "maxpool_same_dilated": (report.FORM, "explicit-pads"),
        "averagepool_same_dilated": (report.FORM, "explicit-pads"),
    },
    "fix-valid-ceil": {
        "maxpool_valid_ceil": (report.FORM, "explicit-pads"),
        "averagepool_valid_ceil": (report.FORM, "explicit-pads"),
    },
    "fix-pads-ge-kernel": {
        "maxpool_big_pads": (report.FORM, "pad"),
        "averagepool_big_pads": (report.FORM, "pad-signed-zero"),
    },
    "fix-nan": {
        "maxpool_stem": (report.FORM, "nan-guard"),
        "globalmaxpool_head": (report.FORM, "nan-guard"),
    },
    "fix-no-kernel": {
        "maxpool_bfloat16": (report.FORM, "in-float"),
        "averagepool_double": (report.ORTPOOL, "ortpool"),
    },
    # AveragePool-1 has no kernel; at opset 7 the same node is AveragePool-7 (ortpool.forms.lift)
    "fix-averagepool-1": {"averagepool_v1": (report.FORM, "opset-lift")},
    "fix-branches": {
        "if_maxpool_big_pads": (report.FORM, "pad"),
        "if_averagepool_valid_ceil": (report.FORM, "explicit-pads"),
        "fn_maxpool_same_dilated": (report.FORM, "explicit-pads"),
    },
    "fix-lppool": {
        "lppool_same_dilated": (report.FORM, "explicit-pads"),
        "lppool_valid_ceil": (report.FORM, "explicit-pads"),
        "lppool_big_pads": (report.FORM, "pad"),
        "globallppool_head": (report.FORM, "reduce"),
    },
    "fix-global-large": {
        "maxroipool_v22": (report.ORTPOOL, "ortpool"),
        "globalaveragepool_plane": (report.FORM, "reduce"),
        "globalaveragepool_rois": (report.UNCHANGED, "unchanged"),
    },
}


def test_every_bundled_fix_model_is_listed():
    assert set(FIX_MODELS) == set(EXPECTED)


@pytest.fixture(scope="module")
def fixed_models():
    done = {}
    for name, path in FIX_MODELS.items():
        done[name] = fix_with_report(path, nonfinite=name == "fix-nan")
    return done


def expected(name: str, found: report.FixReport) -> dict[str, tuple[str, str]]:
    """EXPECTED[name], except that a node the installed onnxruntime computes right alone (asked
    of it directly) is expected unchanged, and a Pad of -0.0 is needed only where the runtime's
    optimizer folds a Pad of 0 back into the pool (1.21 to 1.31 do, 1.32 does not)."""
    model = onnx.load(FIX_MODELS[name])
    wanted = dict(EXPECTED[name])
    for node in found.nodes:
        if wanted.get(node.name, (report.UNCHANGED,))[0] == report.UNCHANGED:
            continue
        source, opset = find_node(model, node.name)
        if wanted[node.name][1] == "pad-signed-zero" and not pad_fusion_folds(opset):
            wanted[node.name] = (report.FORM, "pad")
        shape = node.proof["shapes"][0]
        # NaN and -inf are proven by default (ruling 18): the pad form's all-padding windows
        # are windows of -inf only, which some releases' MaxPool turns into -3.4e38
        if (source.op_type == "MaxPool" and wanted[node.name][1] == "pad"
                and not max_pool_keeps_minus_inf(_padded(shape, source), opset)):
            wanted[node.name] = (report.FORM, "pad+nan-guard")
        others = [onnx.numpy_helper.to_array(t) for t in model.graph.initializer
                  if t.name in source.input[1:]]
        if builtin_defect(source, opset, shape, node.elem, nan=name == "fix-nan",
                          others=others) is None:
            wanted[node.name] = (report.UNCHANGED, "unchanged")
    return wanted


def _padded(shape: list[int], node: onnx.NodeProto) -> list[int]:
    """The input shape after the pad form's Pad (the node's pads added to its spatial axes)."""
    pads = next(list(a.ints) for a in node.attribute if a.name == "pads")
    rank = len(shape) - 2
    return shape[:2] + [shape[2 + i] + pads[i] + pads[rank + i] for i in range(rank)]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bundled_model_is_fixed_and_proven(name, fixed_models):
    _, found = fixed_models[name]
    got = {n.name: (n.realization, n.form) for n in found.nodes}
    assert got == expected(name, found)
    assert not found.unproven
    for node in found.nodes:
        assert node.proof["exact"], node.describe()
        if node.location == "main graph":
            assert node.in_model is not None and node.in_model["exact"], node.describe()
    ortpool_ops = any(n.realization == report.ORTPOOL for n in found.nodes)
    assert found.exit_code() == (1 if ortpool_ops else 0)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixed_model_gives_the_spec_end_to_end(name, fixed_models):
    fixed, _ = fixed_models[name]
    source = onnx.load(FIX_MODELS[name])
    for use_max in (True, False):
        feeds = model_feeds(source, seed=3, use_max=np.array(use_max))
        feeds = {k: v for k, v in feeds.items() if k in {i.name for i in source.graph.input}}
        if name == "fix-nan":
            feeds["image"].reshape(-1)[::7] = np.nan
        want, got = spec_outputs(source, feeds), run_fixed(fixed, feeds)
        for a, b in zip(got, want, strict=True):
            tol = tolerance_for("AveragePool", "float")
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=tol.rtol, atol=tol.atol)
        if "use_max" not in feeds:
            break


@pytest.mark.parametrize("nonfinite", [False, True])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_fixed_model_fixed_again_comes_out_unchanged(name, nonfinite):
    """`ortpool fix --nonfinite` of its own output saw the guard's AveragePool as a pooling node
    (left unchanged) and wrapped the guarded pool in a second guard, slower, the first guard then
    'fixed' by validate. Each form fix wrote is now judged as it stands, as validate judges it:
    exact, it stays as written (the model byte for byte) and is reported as its form."""
    fixed, first = fix_with_report(FIX_MODELS[name], nonfinite=nonfinite)
    again, second = fix_with_report(fixed, nonfinite=nonfinite)
    assert again.SerializeToString() == fixed.SerializeToString()
    recorded, _ = fixmarks.read(fixed)
    forms = {f.name: f.form for f in recorded.values()}
    assert {n.name: n.form for n in second.nodes if n.realization == report.FORM} == forms
    assert sorted(n for n in second.notes if "earlier fix" in n) == sorted(
        f"node {f.name!r} ({f.scope}): form {f.form}, as an earlier fix wrote it, is exact as "
        "it stands: kept" for f in recorded.values())
    # an ortpool op stays one; a node the opset lift realized is the node it is now
    assert [n.name for n in second.needs_ortpool] == [n.name for n in first.needs_ortpool]
    assert second.exit_code() == first.exit_code()


def test_only_pooling_nodes_change_and_names_stay(fixed_models):
    for name, (fixed, _) in fixed_models.items():
        source = onnx.load(FIX_MODELS[name])
        kept = {n.name: n for n in fixed.graph.node}
        for node in source.graph.node:
            if node.op_type in (*versions.OPERATORS, "If"):
                assert node.name in kept  # the pool (or If holding pools) keeps its name
            else:
                assert kept[node.name] == node, (name, node.name)
        assert list(fixed.graph.initializer) == list(source.graph.initializer)
        assert [i.name for i in fixed.graph.input] == [i.name for i in source.graph.input]
        assert [o.name for o in fixed.graph.output] == [o.name for o in source.graph.output]


def test_the_fold_is_caught_and_another_form_chosen(fixed_models):
    """PadFusion folds Pad(0) back into the AveragePool (pads >= kernel: refused); with
    optimizations off the same Pad form is exact and chosen."""
    if not pad_fusion_folds():
        pytest.skip(f"onnxruntime {ort.__version__} does not fold a Pad of 0 into AveragePool")
    _, found = fixed_models["fix-pads-ge-kernel"]
    node = next(n for n in found.nodes if n.name == "averagepool_big_pads")
    outcomes = {a.form: a.outcome for a in node.attempts}
    assert outcomes["unchanged"] == Outcome.NOT_EXACT
    assert outcomes["pad"] == Outcome.FOLDED
    assert outcomes["pad-signed-zero"] == Outcome.PROVEN
    _, plain = fix_with_report(FIX_MODELS["fix-pads-ge-kernel"], opt_level="disable")
    node = next(n for n in plain.nodes if n.name == "averagepool_big_pads")
    assert node.form == "pad"


def test_symbolic_sizes_in_a_function_get_a_size_free_form(fixed_models):
    _, found = fixed_models["fix-branches"]
    node = next(n for n in found.nodes if n.name == "fn_maxpool_same_dilated")
    assert node.shapes.startswith("symbolic spatial sizes")
    assert len(node.proof["shapes"]) > 3  # proven on sampled sizes


BLOCKED = r"""
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("ortpool", "onnxruntime_extensions", "numba"):
            raise ImportError(f"{name} is not installed here")
sys.meta_path.insert(0, Block())
import numpy as np, onnxruntime as ort
data = np.load(sys.argv[2])
session = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
got = session.run(None, {"image": data["image"]})
np.testing.assert_array_equal(got[0], data["want"])
print("ok", got[0].shape)
"""


def test_a_fixed_model_runs_on_onnxruntime_alone(fixed_models, tmp_path):
    fixed, found = fixed_models["fix-pads-ge-kernel"]
    assert not found.needs_ortpool
    path = tmp_path / "fixed.onnx"
    onnx.save(fixed, path)
    source = onnx.load(FIX_MODELS["fix-pads-ge-kernel"])
    feeds = model_feeds(source, seed=5)
    want = run_fixed(fixed, feeds)[0]
    np.testing.assert_allclose(want, spec_outputs(source, feeds)[0], rtol=1e-5, atol=1e-6)
    np.savez(tmp_path / "data.npz", image=feeds["image"], want=want)
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED, str(path), str(tmp_path / "data.npz")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ok")


@pytest.mark.parametrize("name", ["fix-nan", "fix-branches", "fix-no-kernel"])
def test_validate_reads_the_fixed_model(name, fixed_models):
    """Each node fix wrote as a form is one 'fixed' node with its form, each ortpool op is
    ortpool's, the forms' own pools are no nodes to validate, and the model agrees."""
    fixed, found = fixed_models[name]
    recorded, notes = fixmarks.read(fixed)
    forms = {n.name: n.form for n in found.nodes if n.realization == report.FORM}
    assert ({f.name: f.form for f in recorded.values()}, notes) == (forms, [])
    result = validate_model(fixed, label=name)
    statuses = {n.name: n.status for n in result.nodes}
    assert {k for k, v in statuses.items() if v == results.FIXED} == set(forms)
    assert {k for k, v in statuses.items() if v == results.ORTPOOL_OP} == {
        n.name for n in found.nodes if n.realization == report.ORTPOOL}
    for node in result.nodes:
        assert not node.name.startswith("ortpool_fix/"), node.name
        if node.status == results.FIXED:
            assert node.message.startswith(f"fixed: form {forms[node.name]} ")
    assert result.status == results.AGREE and result.end_to_end == "compared", result.notes


def test_validate_reads_a_fixed_model_edited_after_fixing(fixed_models):
    """A renamed inserted node: the record no longer matches, so it is noted and the pools are
    validated as they stand (the guard's summing pool, renamed, among them)."""
    fixed, _ = fixed_models["fix-nan"]
    edited = onnx.ModelProto()
    edited.CopyFrom(fixed)
    mask = next(n for n in edited.graph.node if n.name == "ortpool_fix/flag_sum/maxpool_stem")
    mask.name = "user_pool"
    result = validate_model(edited, label="edited")
    assert {n.name: n.status for n in result.nodes} == {
        "maxpool_stem": results.AGREE, "user_pool": results.AGREE,
        "globalmaxpool_head": results.FIXED,
    }
    assert ("fix's record of node 'maxpool_stem' (form nan-guard) no longer matches the model "
            "(node 'ortpool_fix/flag_sum/maxpool_stem' is gone, edited after fixing?): its "
            "nodes are validated as they stand") in result.notes
