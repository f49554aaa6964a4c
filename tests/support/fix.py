"""Helpers of the ortpool fix tests: the bundled fix models, feeds, the spec's outputs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest

import ortpool
from ortpool import kernels, versions
from ortpool.kernels import _backend
from ortpool.validate.validator import bundled_models_dir

ROOT = Path(__file__).resolve().parents[2]
FIX_MODELS = {p.stem: p for p in sorted((bundled_models_dir() / "fix").glob("*.onnx"))}


@pytest.fixture(autouse=True, scope="module")
def numpy_kernels():
    """The numpy kernels (bit-identical to numba's, tests/kernels/test_backend.py) spare these
    tests numba's first compile of every op and type."""
    _backend.set_backend("numpy")
    yield
    _backend.set_backend(None)


def model_feeds(model: onnx.ModelProto, seed: int = 0, **fixed) -> dict[str, np.ndarray]:
    """Quarter steps for float inputs (exact sums), booleans as given."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for info in model.graph.input:
        if info.name in fixed:
            feeds[info.name] = np.asarray(fixed[info.name])
            continue
        tensor = info.type.tensor_type
        shape = [d.dim_value or 1 for d in tensor.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        feeds[info.name] = (np.round(rng.normal(0, 1.5, shape) * 4) / 4).astype(dtype)
    return feeds


def spec_outputs(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    """The model with every pooling node as ortpool's op: the spec's outputs. Local functions
    are inlined first (onnxruntime cannot infer the output type of a function holding a custom
    op)."""
    import onnx.inliner

    spec = ortpool.rewrite(onnx.inliner.inline_local_functions(model))
    return [np.asarray(a) for a in ortpool.InferenceSession(spec).run(None, feeds)]


def run_fixed(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    """The fixed model as a user runs it: plain onnxruntime unless it holds an ortpool op."""
    if any(n.domain == "ortpool" for n in ortpool.ort.session.iter_nodes(model)):
        return [np.asarray(a) for a in ortpool.InferenceSession(model).run(None, feeds)]
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(a) for a in session.run(None, feeds)]


def find_node(model: onnx.ModelProto, name: str) -> tuple[onnx.NodeProto, int]:
    """The node named ``name`` anywhere in ``model`` (graph, subgraphs, functions) and the
    ai.onnx opset that governs it."""
    from ortpool.model.scopes import model_scopes

    for scope in model_scopes(model):
        for node in scope.nodes:
            if node.name == name:
                return node, scope.opset or 0
    raise KeyError(name)


def builtin_defect(
    node: onnx.NodeProto,
    opset: int,
    shape: list[int],
    elem: str,
    nan: bool = False,
    others: Sequence[np.ndarray] = (),
) -> str | None:
    """What onnxruntime's built-in gets wrong with ``node`` alone on a seeded input of ``shape``
    and ``elem`` (NaN sprinkled with ``nan``; uniform [0, 1) for a global average, where a float32
    running sum loses digits) and ``others`` (MaxRoiPool's rois): its refusal, or the differing
    cells; None when it gives the spec's result. Asked of the installed runtime directly
    (tests/support/runtime_defects.py), so a test expecting a node to be rewritten knows the runtime
    has the defect."""
    from ortpool import dtypes, tolerances
    from tests.support import runtime_defects

    rng = np.random.default_rng(0)
    if node.op_type in tolerances.GLOBAL_SUMS:
        x = rng.random(shape).astype(dtypes.NUMPY[elem])
    else:
        x = (np.round(rng.normal(0, 1.5, shape) * 4) / 4).astype(dtypes.NUMPY[elem])
    if nan:
        x.reshape(-1)[::5] = np.nan
    feeds = [x, *others]
    attrs = runtime_defects.support.onnx_attrs(node)
    n_outputs = len([o for o in node.output if o])
    got = runtime_defects.builtin(node.op_type, opset, attrs, feeds, n_outputs)
    if got.outputs is None:
        return f"onnxruntime refuses it: {got.error}"
    want = kernels.run_op(node.op_type, versions.resolve(node.op_type, opset).version, feeds,
                          attrs, n_outputs)[0]
    if node.op_type in tolerances.WINDOW_SUMS + tolerances.GLOBAL_SUMS:
        from ortpool.check.compare import compare_values

        tol = tolerances.node_tolerance(
            node.op_type, versions.resolve(node.op_type, opset).version, elem, x, want, attrs
        )
        if want.shape != got.outputs[0].shape:
            return "Y has another shape"
        # ruling 17: an accuracy note is no defect; beyond the limit, or semantics, is
        comp = compare_values("Y", elem, got.outputs[0], want, tol)
        cells = comp.differing + comp.inaccurate
    else:
        cells = runtime_defects.differing_cells(got.outputs[0], want, False)
    return f"{cells} cells of Y differ" if cells else None


def pad_fusion_folds(opset: int = 19) -> bool:
    """Whether onnxruntime's optimizer folds a ``Pad`` of 0 into the AveragePool after it (the
    pads then >= kernel, which it refuses): asked by running the pair at the default level."""
    import onnxruntime as ort
    from onnx import TensorProto as T
    from onnx import helper as h

    nodes = [
        h.make_node("Pad", ["x", "pads"], ["padded"], mode="constant"),
        h.make_node("AveragePool", ["padded"], ["y"], kernel_shape=[2, 2]),
    ]
    pads = onnx.numpy_helper.from_array(np.array([0, 0, 2, 2, 0, 0, 2, 2], np.int64), "pads")
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 3, 3])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)], [pads])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 10
    x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    want = kernels.average_pool(np.pad(x, [(0, 0), (0, 0), (2, 2), (2, 2)]), kernel_shape=[2, 2])
    try:
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        (got,) = session.run(None, {"x": x})
    except Exception:  # onnxruntime's exception types differ between releases
        return True
    return not np.array_equal(got, want)


def max_pool_keeps_minus_inf(shape: Sequence[int], opset: int = 19) -> bool:
    """Whether onnxruntime's MaxPool (k=2, s=2, default optimization level) gives -inf for windows
    of -inf only on an input of ``shape``: the `pad` form's all-padding windows are such windows
    (a Pad of -inf before the pool). 1.32's NCHWc MaxPool gives -3.4e38 there (the lowest finite
    float), so that form needs the NaN guard on it."""
    import onnxruntime as ort
    from onnx import TensorProto as T
    from onnx import helper as h

    node = h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, list(shape))],
                         [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 10
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"x": np.full(shape, -np.inf, np.float32)})
    return bool(np.isneginf(got).all())


def unloadable_model() -> onnx.ModelProto:
    """A MaxPool onnxruntime gets wrong (VALID with ceil_mode) whose output feeds a node of a
    domain onnxruntime does not know: the pool can be proven alone, but no written model runs."""
    from onnx import TensorProto as T
    from onnx import helper as h

    graph = h.make_graph(
        [
            h.make_node("MaxPool", ["x"], ["a"], name="p", kernel_shape=[3, 3], strides=[2, 2],
                        auto_pad="VALID", ceil_mode=1),
            h.make_node("Mystery", ["a"], ["y"], name="q", domain="com.example"),
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 6, 6])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    imports = [h.make_opsetid("", 19), h.make_opsetid("com.example", 1)]
    model = h.make_model(graph, opset_imports=imports)
    model.ir_version = 10  # what every supported onnxruntime reads
    return model
