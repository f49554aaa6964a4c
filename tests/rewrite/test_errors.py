"""Every invalid-node case: the exact message, and --skip-invalid leaving the node built-in."""

from __future__ import annotations

import pytest
from onnx import helper as h

import ortpool
from ortpool import OrtpoolError
from tests.support.rewrite import one_node_model

CASES = {
    "attribute not in the version": (
        h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2], dilations=[1, 1]),
        8,
        "node 'p' (MaxPool-8): attribute 'dilations' does not exist in this version "
        "(it has auto_pad, kernel_shape, pads, storage_order, strides)",
    ),
    "wrong attribute type (int as string)": (
        h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2], ceil_mode="1"),
        12,
        "node 'p' (MaxPool-12): attribute 'ceil_mode' must be of type INT, got STRING",
    ),
    "wrong attribute type (list as int)": (
        h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=3),
        12,
        "node 'p' (MaxPool-12): attribute 'kernel_shape' must be of type INTS, got INT",
    ),
    "pads with auto_pad": (
        h.make_node(
            "AveragePool",
            ["x"],
            ["y"],
            name="p",
            kernel_shape=[2, 2],
            auto_pad="SAME_UPPER",
            pads=[1, 1, 1, 1],
        ),
        11,
        "node 'p' (AveragePool-11): pads='1,1,1,1' cannot be used with auto_pad='SAME_UPPER'",
    ),
    "missing kernel_shape": (
        h.make_node("AveragePool", ["x"], ["y"], name="p", strides=[2, 2]),
        11,
        "node 'p' (AveragePool-11): attribute 'kernel_shape' is required",
    ),
    "length does not match the kernel rank": (
        h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2], strides=[2]),
        12,
        "node 'p' (MaxPool-12): strides='2' has 1 values; a kernel of rank 2 needs 2",
    ),
    "kernel rank does not match the input": (
        h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2, 2]),
        12,
        "node 'p' (MaxPool-12): kernel_shape='2,2,2' has 3 axes but the input has 2 spatial axes",
    ),
    "Indices output at a version without it": (
        h.make_node("MaxPool", ["x"], ["y", "i"], name="p", kernel_shape=[2, 2]),
        7,
        "node 'p' (MaxPool-1): has 2 outputs; this version has at most 1 (Y)",
    ),
    "operator absent at the opset": (
        h.make_node("MaxUnpool", ["x", "x"], ["y"], name="p", kernel_shape=[2, 2]),
        8,
        "node 'p' (MaxUnpool): MaxUnpool does not exist at ai.onnx opset 8",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_invalid_node_message(case: str) -> None:
    node, opset, message = CASES[case]
    model = one_node_model(node, opset)
    with pytest.raises(OrtpoolError) as caught:
        ortpool.rewrite(model)
    assert str(caught.value) == message
    assert caught.value.node == "p"


@pytest.mark.parametrize("case", list(CASES))
def test_skip_invalid_leaves_node_and_reports(case: str) -> None:
    node, opset, message = CASES[case]
    model = one_node_model(node, opset)
    out, report = ortpool.rewrite.rewrite_with_report(model, skip_invalid=True)
    assert out == model  # nothing changed, not even an opset import
    (entry,) = report.nodes
    assert (entry.status, entry.invalid, entry.op_type) == ("left alone", True, None)
    assert entry.reason == "invalid: " + message.split("): ", 1)[1]
    assert report.counts() == {}
