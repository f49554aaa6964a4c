"""Small single-node models for the runtime tests, built as ortpool builds its own
(:func:`ortpool.model.singlenode.alone_model`), and the spec's answer for them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ortpool import kernels
from ortpool.model.singlenode import alone_model, feed_dict
from tests.support.judging import site_of

MAXPOOL_ATTRS = {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]}


def node(
    op: str, opset: int, attributes: dict[str, Any], *feeds: np.ndarray, n_outputs: int = 1
) -> tuple[bytes, dict[str, np.ndarray]]:
    """The model of one ``op`` node at ``opset`` and its feeds (X, I, output_shape)."""
    site = site_of(op, opset, attributes, list(feeds), n_outputs, name="node")
    model = alone_model(site, list(feeds))
    return model.SerializeToString(), feed_dict(list(feeds))


def maxpool_case() -> tuple[bytes, dict[str, np.ndarray], np.ndarray]:
    """MaxPool-12 k3 s1 p1 on a [1,2,5,5] float32 input (with ties and negative values), and
    the spec's Y from ortpool's kernels."""
    rng = np.random.default_rng(35)
    x = rng.integers(-4, 5, size=(1, 2, 5, 5)).astype(np.float32) / 4
    model, feeds = node("MaxPool", 12, MAXPOOL_ATTRS, x)
    (want,) = kernels.run_op("MaxPool", 12, [x], MAXPOOL_ATTRS, 1)
    return model, feeds, want
