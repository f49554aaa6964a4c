"""One pooling node judged by the engine on given inputs, as ``ortpool conformance`` judges a
case (the inputs observed: rulings' cells and Index ties counted apart): the record a report
shows of it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ortpool import dtypes, versions
from ortpool.check.cases import FeedSet
from ortpool.check.judge import judge
from ortpool.model.site import Site
from ortpool.ort import ISOLATED_LEVEL, RuntimeSpec
from ortpool.report import record as results
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule


def site_of(op: str, opset: int, attributes: Mapping[str, Any], feeds: Sequence[np.ndarray],
            n_outputs: int = 1, name: str = "n") -> Site:
    """The node of ``op`` at ai.onnx ``opset`` alone, sized by ``feeds`` (the spec may refuse
    it)."""
    x = feeds[0]
    version = versions.resolve(op, opset).version
    site = Site.alone(op, version, dict(attributes), dtypes.name_of(x.dtype), x.shape,
                      len(feeds), n_outputs, name=name, strict=False)
    return dataclasses.replace(site, opset=opset)


def run_node(op: str, opset: int, attributes: Mapping[str, Any], feeds: Sequence[np.ndarray],
             n_outputs: int = 1, runtime: RuntimeSpec | None = None,
             rule: AccuracyRule = DEFAULT_RULE) -> results.NodeResult:
    """The engine's record of the node on ``feeds``."""
    site = site_of(op, opset, attributes, feeds, n_outputs)
    runtime = runtime or RuntimeSpec(level=ISOLATED_LEVEL)
    judgement = judge(site, [FeedSet("the given input", list(feeds), observed=True)], runtime,
                      rule)
    return results.node_record(site, judgement)


def spec_outputs(op: str, opset: int, attributes: Mapping[str, Any],
                 feeds: Sequence[np.ndarray], n_outputs: int = 1) -> list[np.ndarray]:
    """ortpool's kernels' outputs (the spec's) for ``op`` at ai.onnx ``opset``."""
    from ortpool import kernels

    version = versions.resolve(op, opset).version
    return list(kernels.run_op(op, version, list(feeds), dict(attributes), n_outputs))
