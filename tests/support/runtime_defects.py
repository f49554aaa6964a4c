"""Asking the installed onnxruntime whether it has a defect before a test relies on it.

onnxruntime's pooling changes between releases (docs/conformance.md), so no test takes a defect
for granted. A test runs its case through onnxruntime's built-in here, directly, compares with
ortpool's kernels (their numpy API: not ortpool.validate, whose verdicts are what the tests
check), and skips with the reason when this runtime computes the case to the spec.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

from ortpool import kernels, versions
from tests import support

VERSION = ort.__version__
NAMES = ("X", "I", "output_shape")


@dataclasses.dataclass
class Builtin:
    """What onnxruntime's built-in made of a node: its outputs, or the error it raised."""

    outputs: list[np.ndarray] | None
    error: str | None

    @property
    def no_kernel(self) -> bool:
        # Without a float16 kernel onnxruntime inserts a Cast to float, which is invalid below
        # opset 6 (Cast-1 takes a string): no kernel for the type either way.
        markers = ("Could not find an implementation", "InsertedPrecisionFreeCast")
        return self.error is not None and any(m in self.error for m in markers)


def builtin(
    op: str, opset: int, attrs: Mapping[str, Any], feeds: Sequence[np.ndarray], n_outputs: int = 1
) -> Builtin:
    node = helper.make_node(op, list(NAMES[: len(feeds)]), ["Y", "Indices"][:n_outputs], **attrs)
    x_type = feeds[0].dtype
    model = support.one_node_model(
        node, [a.dtype for a in feeds], [x_type, np.int64][:n_outputs], opset=opset
    )
    # Optimisations off, as ortpool validate runs the built-in: with them onnxruntime may wrap
    # the node in Casts of its own (float16 AveragePool-1 then fails as an invalid graph).
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        outputs = session.run(None, dict(zip(NAMES, feeds, strict=False)))
    except Exception as err:  # onnxruntime's exception types differ between releases
        return Builtin(None, str(err))
    return Builtin(list(outputs), None)


def spec(
    op: str, opset: int, attrs: Mapping[str, Any], feeds: Sequence[np.ndarray], n_outputs: int = 1
) -> list[np.ndarray]:
    """ortpool's kernels on the node: the spec's result."""
    version = versions.resolve(op, opset).version
    if op == "MaxPool":
        result = kernels.max_pool(
            feeds[0], version=version, return_indices=n_outputs == 2, **attrs
        )
        return list(result) if n_outputs == 2 else [result]
    if op == "AveragePool":
        return [kernels.average_pool(feeds[0], version=version, **attrs)]
    shape = feeds[2] if len(feeds) > 2 else None
    return [kernels.max_unpool(feeds[0], feeds[1], shape, version=version, **attrs)]


def differing_cells(theirs: np.ndarray, ours: np.ndarray, average: bool) -> int:
    """Cells of Y that differ (NaN equals NaN); every cell when the shapes differ."""
    if theirs.shape != ours.shape:
        return max(theirs.size, ours.size)
    if average:
        close = np.isclose(theirs, ours, rtol=1e-5, atol=1e-6, equal_nan=True)
    else:
        close = (theirs == ours) | (np.isnan(theirs) & np.isnan(ours))
    return int((~close).sum())


def y_differs(
    op: str,
    opset: int,
    attrs: Mapping[str, Any],
    feeds: Sequence[np.ndarray],
    n_outputs: int = 1,
) -> int:
    """Differing cells of Y between the built-in and the spec; 0 when they agree or when
    onnxruntime refuses the node (:func:`builtin` tells those apart). ``n_outputs`` as the
    test's node has it: onnxruntime runs MaxPool with Indices by other code (1.21 handles NaN
    differently there)."""
    got = builtin(op, opset, attrs, feeds, n_outputs)
    if got.outputs is None:
        return 0
    ours = spec(op, opset, attrs, feeds, n_outputs)[0]
    return differing_cells(got.outputs[0], ours, op == "AveragePool")


def require(present: bool, absent: str) -> None:
    """Skip the calling test unless the defect it needs is ``present``; ``absent`` says what
    this onnxruntime does instead ("pads SAME for the dilated kernel")."""
    if not present:
        pytest.skip(f"onnxruntime {VERSION} {absent}: no such defect to test")


#: The bundled models made to show an onnxruntime defect -> the cause ``ortpool validate`` names.
DEFECT_MODELS = {
    "ort-defect-same-dilated": "SAME padding with dilation",
    "ort-defect-valid-ceil": "ceil_mode with VALID",
}


def node_differs(model: onnx.ModelProto) -> int:
    """Differing cells of Y between the built-in and the spec for the first node of a one-pool
    model (on a seeded input of the model's input shape)."""
    node = model.graph.node[0]
    dims = model.graph.input[0].type.tensor_type.shape.dim
    x = np.round(np.random.default_rng(0).normal(size=[d.dim_value for d in dims]) * 4) / 4
    return y_differs(node.op_type, model.opset_import[0].version, support.onnx_attrs(node),
                     [x.astype(np.float32)])
