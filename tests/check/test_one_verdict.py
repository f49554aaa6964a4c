"""Ruling 20's promise, as a property: for a random pooling node, what ``validate`` calls agree
in a domain ``fix`` leaves unchanged in that domain, and what ``fix`` rewrites ``validate`` has
called a difference there. Both commands go through their whole Python calls
(:func:`ortpool.validate.validator.validate_model`, :func:`ortpool.fix.fix_with_report`) on the
same single-node model at the same runtime (level all, the level a model runs at), all eight
operators, every spec version, float, double and float16 (and int8/uint8 where MaxPool takes
them), in both domains.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.printer
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from ortpool import versions
from ortpool.fix import fix_with_report
from ortpool.geometry import effective_kernel
from ortpool.ort import RuntimeSpec
from ortpool.validate.validator import ValidateOptions, validate_model

#: validate's statuses that mean "onnxruntime computes the spec here" (ties and accuracy notes
#: are information); every other status of a judged node is a difference
AGREEING = ("agree", "ties", "accuracy-note")
CODES = {"float": TensorProto.FLOAT, "double": TensorProto.DOUBLE,
         "float16": TensorProto.FLOAT16, "int8": TensorProto.INT8, "uint8": TensorProto.UINT8}
OPS = ("MaxPool", "AveragePool", "MaxUnpool", "LpPool", "GlobalMaxPool", "GlobalAveragePool",
       "GlobalLpPool", "MaxRoiPool")


@st.composite
def pooling_models(draw):
    """A model of one pooling node (MaxUnpool: after the MaxPool that gives its indices;
    MaxRoiPool: its RoIs a constant), static shapes, at the opset of the node's version."""
    op = draw(st.sampled_from(OPS))
    version = draw(st.sampled_from(versions.versions_of(op)))
    opv = versions.get(op, version)
    # float16 below opset 6 runs nowhere (onnxruntime has no Cast there): fix lifts such a
    # model (tests/fix/test_forms.py), validate cannot run it; not this property's case
    elem = draw(st.sampled_from([t for t in opv.types if t in CODES
                                 and (t != "float16" or version >= 6)]))
    rank = 2 if op == "MaxRoiPool" else draw(st.integers(1, 3))
    attrs: dict = {}
    window = op in ("MaxPool", "AveragePool", "LpPool", "MaxUnpool")
    if window:
        k = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
        attrs["kernel_shape"] = k
        attrs["strides"] = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
        d = [1] * rank
        if "dilations" in opv.attrs and draw(st.booleans()):
            d = draw(st.lists(st.integers(1, 2), min_size=rank, max_size=rank))
            attrs["dilations"] = d
        mode = draw(st.sampled_from(["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]))
        if mode != "NOTSET" and "auto_pad" in opv.attrs:
            attrs["auto_pad"] = mode
        else:
            attrs["pads"] = draw(st.lists(st.integers(0, 2), min_size=2 * rank,
                                          max_size=2 * rank))
        if "ceil_mode" in opv.attrs:
            attrs["ceil_mode"] = draw(st.integers(0, 1))
        if "count_include_pad" in opv.attrs:
            attrs["count_include_pad"] = draw(st.integers(0, 1))
        spatial = [effective_kernel(a, b) + draw(st.integers(0, 4))
                   for a, b in zip(k, d, strict=True)]
    else:
        spatial = draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank))
    if op in ("LpPool", "GlobalLpPool"):
        attrs["p"] = draw(st.sampled_from([1, 2, 3])) if version > 1 else draw(
            st.sampled_from([1.0, 2.0, 3.0]))
    if op == "MaxRoiPool":
        attrs["pooled_shape"] = draw(st.lists(st.integers(1, 3), min_size=2, max_size=2))
        attrs["spatial_scale"] = draw(st.sampled_from([1.0, 0.5]))
        spatial = [max(s, 2) for s in spatial]
    shape = [draw(st.integers(1, 2)), draw(st.integers(1, 3)), *spatial]
    code = CODES[elem]
    nodes, inits, inputs = [], [], ["x"]
    if op == "MaxUnpool":
        # MaxPool's indices address its input: the unpooled output is that input's shape when
        # the windows tile it (kernel = stride, no pads, the size a multiple of the kernel)
        unpool = {"kernel_shape": attrs["kernel_shape"], "strides": attrs["kernel_shape"]}
        shape[2:] = [k * draw(st.integers(1, 3)) for k in attrs["kernel_shape"]]
        nodes.append(helper.make_node("MaxPool", ["x"], ["m", "i"], name="source", **unpool))
        inputs, attrs = ["m", "i"], unpool
    if op == "MaxRoiPool":
        scale = 1 / attrs["spatial_scale"]
        rois = np.array([[0, 0, 0, (shape[3] - 1) * scale, (shape[2] - 1) * scale],
                         [shape[0] - 1, 1, 0, 2 * scale, 1]], dtype=np.float64)
        np_type = helper.tensor_dtype_to_np_dtype(code)
        inits.append(numpy_helper.from_array(rois.astype(np_type), "rois"))
        inputs.append("rois")
    nodes.append(helper.make_node(op, inputs, ["y"], name="pool", **attrs))
    graph = helper.make_graph(nodes, "one", [helper.make_tensor_value_info("x", code, shape)],
                              [helper.make_tensor_value_info("y", code, None)], inits)
    opset = max(version, 9) if op == "MaxUnpool" else version
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model


def _verdicts(model, nonfinite: bool) -> list[tuple[str, str, str]]:
    """(node, validate's status, fix's realization) for every node validate judged."""
    runtime = RuntimeSpec(level="all")
    checked = validate_model(model, ValidateOptions(runtime=runtime, nonfinite=nonfinite))
    _, report = fix_with_report(model, opt_level="all", nonfinite=nonfinite, lift_opset=False)
    fixed = {n.name: n.realization for n in report.nodes}
    return [(n.name, n.status, fixed.get(n.name, "?")) for n in checked.nodes
            if n.status != "not-isolated"]


@pytest.mark.parametrize("nonfinite", [False, True], ids=["finite", "nonfinite"])
@settings(max_examples=100)
@given(model=pooling_models())
def test_validate_agrees_exactly_where_fix_leaves_the_node(model, nonfinite):
    for name, status, realization in _verdicts(model, nonfinite):
        assert (status in AGREEING) == (realization == "unchanged"), (
            name, status, realization, onnx.printer.to_text(model.graph))
