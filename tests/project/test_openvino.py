"""ortpool beside another execution provider: the tests marked ``openvino``, run in
``.venv-openvino`` (onnxruntime-openvino, whose OpenVINO provider runs on a plain CPU).

Every onnxruntime build installs the same ``onnxruntime`` module, so the OpenVINO build cannot
sit beside the CPU build of the main environment: :func:`test_openvino_tests_pass_in_their_own_venv`
builds ``.venv-openvino`` at the repository root (reused while its requirement list is
unchanged) and runs the marked tests there in a child process with a timeout. In an
environment without the OpenVINO provider the marked tests skip themselves.
``ORTPOOL_OPENVINO=skip`` skips the child run; so does a package index that cannot be reached.

The marked tests: a rewritten ResNet-like model (symbolic batch, and symbolic spatial dims) runs
with the OpenVINO provider taking every node but ortpool's; ``validate`` judges every bundled
model on the provider, the rewritten models running there (an If's branch pools aside, for the
one reason documented); a conformance case on which the providers differ gets the verdict each
provider's own run gives (asked of the runtime, as tests/support/runtime_defects.py does, never
written down).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

import ortpool
from tests.support import child_venv
from tests.support.cnn_builders import resnet_like

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-openvino"
STAMP = VENV / "ortpool-openvino.json"
BUILD = "onnxruntime-openvino==1.24.1"
OPENVINO = "OpenVINOExecutionProvider"
CPU = "CPUExecutionProvider"
#: Left out of the child: the main environment's onnxruntime build (the one pinned here is the
#: child's: every build installs the same module), numba (the child runs the numpy kernels) and
#: the linter.
LEFT_OUT = {"onnxruntime", "onnxruntime-openvino", "numba", "llvmlite", "ruff"}
#: pip's words for an index it cannot reach or a build it does not offer.
UNREACHABLE = (
    "No matching distribution",
    "Could not find a version",
    "NewConnectionError",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "ProxyError",
)


def _openvino_available() -> bool:
    try:
        import onnxruntime
    except ImportError:
        return False
    return OPENVINO in onnxruntime.get_available_providers()


needs_openvino = pytest.mark.skipif(
    not _openvino_available(),
    reason="the installed onnxruntime has no OpenVINOExecutionProvider; "
    "test_openvino_tests_pass_in_their_own_venv runs these in .venv-openvino",
)


# --- the harness: runs in the main environment ---------------------------------------------


def _unreachable(arguments, stderr: str) -> None:
    if any(marker in stderr for marker in UNREACHABLE):
        pytest.skip(f"the package index offers no {BUILD} here: {stderr.strip().splitlines()[-1]}")


def ensure_venv() -> float | None:
    """Build .venv-openvino unless it holds exactly these requirements; the build's seconds, or
    None when reused: the main environment's distributions but its onnxruntime build and numba
    linked into it (tests/support/child_venv.py), then the OpenVINO build and what it needs."""
    return child_venv.ensure(VENV, STAMP, [BUILD], leave_out=LEFT_OUT, on_failure=_unreachable)


@pytest.mark.skipif(os.environ.get("ORTPOOL_OPENVINO") == "skip", reason="ORTPOOL_OPENVINO=skip")
def test_openvino_tests_pass_in_their_own_venv(tmp_path):
    if _openvino_available():
        pytest.skip("this environment has the OpenVINO provider: the marked tests ran here")
    build_seconds = ensure_venv()
    # this file's marked tests and those of the modules that own what they check
    targets = [Path(__file__), ROOT / "tests" / "ort" / "test_runtime_spec.py"]
    run = child_venv.run_marked(
        VENV, "openvino", targets, tmp_path / "openvino.xml", 300, workers="0"
    )
    print(f"openvino child: {run.counts}, {run.seconds:.1f} s, build {build_seconds}")
    assert run.returncode == 0, run.failure()
    # A marked test skips itself without the OpenVINO provider: none may skip in the child.
    assert run.counts["skipped"] == 0 and run.counts["tests"] >= 7, run.counts


# --- the provider-dependent tests: run where the OpenVINO provider is ----------------------


def _profiled(model: onnx.ModelProto, providers: list[str], feeds):
    """Run ``model`` through ortpool.InferenceSession on ``providers``; (outputs, node name ->
    the provider that executed it)."""
    import onnxruntime as ort

    from ortpool.ort.runtime_spec import placement, profile_dir

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.enable_profiling = True
    # a folder of its own: reading the profile removes the file and its folder; a session that
    # fails to load has written its profile there already (every run of the suite left one)
    folder = profile_dir()
    options.profile_file_prefix = os.path.join(folder, "profile")
    try:
        session = ortpool.InferenceSession(model, options, providers=providers)
        outputs = session.run(None, feeds)
        return outputs, placement(session, model)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _dynamic(model: onnx.ModelProto, spatial: bool) -> onnx.ModelProto:
    """``model`` as exporters write it with dynamic axes: a symbolic batch (and H, W)."""
    names = ["batch", None, "height", "width"] if spatial else ["batch"]
    for value in (model.graph.input[0], model.graph.output[0]):
        for dim, name in zip(value.type.tensor_type.shape.dim, names, strict=False):
            if name:
                dim.dim_param = name
    return model


@pytest.mark.openvino
@needs_openvino
@pytest.mark.parametrize("spatial", [False, True], ids=["batch", "batch-and-spatial"])
def test_rewritten_resnet_runs_with_openvino_taking_all_but_ortpool(spatial):
    model = _dynamic(resnet_like(size=32, widths=(8, 16), blocks=1), spatial)
    rewritten = ortpool.rewrite(model)
    assert ortpool.restore(rewritten) == model
    declared = {v.name: v for v in rewritten.graph.value_info}
    pool = next(n for n in rewritten.graph.node if n.op_type.startswith("MaxPool"))
    dims = [d.dim_value or d.dim_param for d in declared[pool.output[0]].type.tensor_type.shape.dim]
    # 32 -> stem conv /2 -> 16 -> MaxPool 3x3/2 pads 1 -> 8; unknown spatial sizes get names
    assert dims == (
        ["batch", 8, f"{pool.output[0]}:2", f"{pool.output[0]}:3"]
        if spatial
        else ["batch", 8, 8, 8]
    )
    for batch, size in ((2, 32), (3, 40 if spatial else 32)):
        x = np.random.default_rng(batch).normal(size=(batch, 3, size, size)).astype(np.float32)
        ours, placed = _profiled(rewritten, [OPENVINO, CPU], {"image": x})
        cpu = ortpool.InferenceSession(rewritten).run(None, {"image": x})
        np.testing.assert_allclose(ours[0], cpu[0], rtol=1e-3, atol=1e-4)
        assert ours[0].shape == (batch, 100)
        by_op: dict[str, set[str]] = {}
        for node in rewritten.graph.node:
            by_op.setdefault(node.domain or node.op_type, set()).add(placed[node.name])
        assert by_op.pop("ortpool") == {CPU}  # a Python op runs on the CPU provider only
        assert by_op.pop("Add") <= {OPENVINO, CPU}
        # Every other node compiled by OpenVINO: the Convs before and after ortpool's ops
        # included. (OpenVINO leaves a cluster under three nodes to the CPU provider: the Add
        # of a block's output and its ortpool AveragePool.)
        assert set().union(*by_op.values()) == {OPENVINO}, by_op
        print(
            spatial,
            batch,
            {n.name: placed[n.name] for n in rewritten.graph.node if n.op_type == "Add"},
        )


def _bundled() -> list[Path]:
    from ortpool.validate.validator import bundled_models

    return bundled_models()


@pytest.mark.openvino
@needs_openvino
def test_rewritten_pools_in_an_if_branch_keep_openvino_out():
    """onnxruntime-openvino 1.24.1 takes an If whole, branches included, and cannot translate
    an ortpool op inside (docs/rewrite.md); with the branch pools left built-in the rewritten
    model runs there. (Every other bundled model rewritten runs there: the validate test.)"""
    from ortpool.model import inputs
    from ortpool.model.scopes import is_pool, model_scopes

    model = onnx.load(ROOT / "models" / "cnn.onnx")
    feeds = inputs.resolve(model).feeds
    with pytest.raises(Exception, match="does not support the following ONNX operations: ortpool"):
        _profiled(ortpool.rewrite(model), [OPENVINO, CPU], feeds)
    inner = [
        n.name for s in model_scopes(model) if s.key != ("graph",) for n in s.nodes if is_pool(n)
    ]
    assert inner == ["if_else_averagepool", "if_then_maxpool"]
    rewritten = ortpool.rewrite(model, exclude=inner)
    got, placed = _profiled(rewritten, [OPENVINO, CPU], feeds)
    expected = ortpool.InferenceSession(rewritten).run(None, feeds)
    assert placed["conv"] == OPENVINO and placed["maxunpool"] == CPU
    assert [a.shape for a in got] == [a.shape for a in expected] == [(1, 8, 4, 4), (1, 3, 8, 8)]
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-4, atol=1e-5)


@pytest.mark.openvino
@needs_openvino
def test_validate_judges_every_bundled_model_on_openvino():
    from ortpool.errors import OrtpoolError
    from ortpool.ort.runtime_spec import ISOLATED_LEVEL, RuntimeSpec, parse_providers
    from ortpool.validate.validator import ValidateOptions, validate_model

    runtime = RuntimeSpec(parse_providers([OPENVINO, CPU]), level=ISOLATED_LEVEL)
    judged, refused = {}, {}
    for path in _bundled():
        try:
            result = validate_model(path, ValidateOptions(runtime=runtime))
        except OrtpoolError as err:
            refused[path.name] = str(err)
            continue
        judged[path.name] = result
        # the rewritten model ran on OpenVINO first (the end-to-end half of validate)
        assert "the ortpool-rewritten model failed" not in result.end_to_end, path.name
    assert len(judged) + len(refused) == len(_bundled())
    # cnn.onnx: onnxruntime's own MaxUnpool (output_shape from Shape) leaves its output of
    # unknown rank, and OpenVINO cannot compile the Conv subgraph after it: the model is not
    # runnable on this provider as written.
    assert set(refused) <= {"cnn.onnx"}, refused
    executed = {n.executed_by for r in judged.values() for n in r.nodes}
    assert OPENVINO in executed and CPU in executed  # double and 1-D pools fall back
    same = judged["ort-defect-same-dilated.onnx"].nodes[0]
    assert same.executed_by == OPENVINO


def _one_node(case, feeds, providers: list[str]):
    """The case's built-in node run directly in onnxruntime on ``providers`` (no ortpool.validate:
    its verdicts are what is checked): (Y, the provider that executed the node)."""
    import onnxruntime as ort

    from ortpool.model.singlenode import alone_model, feed_dict
    from ortpool.ort.runtime_spec import placement, profile_dir

    model = alone_model(case.site(feeds), feeds)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(profile_dir(), "case")
    session = ort.InferenceSession(model.SerializeToString(), options, providers=providers)
    y = session.run(None, feed_dict(feeds))[0]
    return y, placement(session, model).get(model.graph.node[0].name)


@pytest.mark.openvino
@needs_openvino
def test_conformance_row_differs_between_cpu_and_openvino_as_measured():
    from ortpool import kernels
    from ortpool.check import grid
    from ortpool.conformance import run as conformance
    from ortpool.ort.runtime_spec import ISOLATED_LEVEL, RuntimeSpec, parse_providers

    chosen = [
        c
        for c in grid.cases(["MaxPool"], [12], ["float"], [2])
        if c.padding == "SAME_UPPER" and c.dilation == 2 and not c.indices and c.data == "random"
    ]
    assert chosen, "the grid has no MaxPool-12 SAME_UPPER dilation-2 case"
    case = chosen[0]
    feeds = grid.case_inputs(case, 0)
    spec_y = kernels.max_pool(feeds[0], version=12, **case.attributes)
    expected = {}
    for name in (CPU, OPENVINO):
        y, executed = _one_node(case, feeds, [name, CPU] if name != CPU else [CPU])
        if executed not in (None, name):
            expected[name] = conformance.FALLBACK
        elif y.shape == spec_y.shape and np.array_equal(y, spec_y):
            expected[name] = "agree"
        else:
            expected[name] = "differ"
    if expected[CPU] == expected[OPENVINO]:
        pytest.skip(
            f"this runtime gives both providers the verdict {expected[CPU]}: nothing "
            "differs to check"
        )
    for name in (CPU, OPENVINO):
        providers = [name, CPU] if name != CPU else [CPU]
        runtime = RuntimeSpec(parse_providers(providers), level=ISOLATED_LEVEL)
        (found,) = conformance.run_conformance([case], 0, runtime)
        assert found.to_dict()["status"] == expected[name], (name, found.node.message)
