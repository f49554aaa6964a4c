"""Helpers of the ortpool fix tests: the bundled fix models, feeds, the spec's outputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import ortpool
from ortpool.kernels import _backend
from ortpool.validate.validator import bundled_models_dir

ROOT = Path(__file__).resolve().parent.parent
FIX_MODELS = {p.stem: p for p in sorted((bundled_models_dir() / "fix").glob("*.onnx"))}


@pytest.fixture(autouse=True, scope="module")
def numpy_kernels():
    """The numpy kernels (bit-identical to numba's, tests/test_kernels_backend.py) spare these
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
