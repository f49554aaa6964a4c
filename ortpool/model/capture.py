"""Capturing the real inputs each pooling node receives, from a run of the model itself: a copy
whose graph also outputs every main-graph site's inputs. Nodes inside local functions are
captured after inlining the functions (their inputs then exist as main-graph tensors). Nodes
inside control-flow subgraphs (If, Loop, Scan bodies) receive a different tensor on every
iteration: none is captured, and the engine judges them on built cases alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import onnx
from onnx import numpy_helper

from ortpool.model.scopes import AI_ONNX
from ortpool.model.site import Site


def governing_opset(model: onnx.ModelProto) -> int:
    """The model's ai.onnx opset: it decides which spec version each node is."""
    for entry in model.opset_import:
        if entry.domain in AI_ONNX:
            return int(entry.version)
    raise ValueError("the model imports no ai.onnx opset")


def inline_functions(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with its local functions inlined (unchanged if it has none)."""
    if not model.functions:
        return model
    import onnx.inliner

    return onnx.inliner.inline_local_functions(model)


def capture_model(model: onnx.ModelProto, tensors: Sequence[str]) -> onnx.ModelProto:
    """A copy of ``model`` that also outputs ``tensors`` (no types needed: onnxruntime infers)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    existing = {o.name for o in copy.graph.output}
    for name in tensors:
        if name not in existing:
            copy.graph.output.append(onnx.ValueInfoProto(name=name))
            existing.add(name)
    return copy


def capture(
    model: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    sites: Sequence[Site],
    run: Callable[[onnx.ModelProto, Mapping[str, np.ndarray]], list[np.ndarray]],
) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """Run ``model`` once with every main-graph site's inputs as extra outputs.

    Returns (tensor name -> array, the model's own outputs). Initializers are read directly.
    """
    initializers = {init.name: init for init in model.graph.initializer}
    captured: dict[str, np.ndarray] = {}
    wanted: list[str] = []
    for site in sites:
        # a bfloat16 tensor cannot be fetched through onnxruntime's Python API (no such numpy
        # type): such a node is judged on its built cases alone
        if not site.in_main_graph or site.elem == "bfloat16":
            continue
        for name in site.inputs:
            if name in feeds:
                captured[name] = np.asarray(feeds[name])
            elif name in initializers:
                captured[name] = numpy_helper.to_array(initializers[name])
            elif name not in wanted:
                wanted.append(name)
    n_outputs = len(model.graph.output)
    extra = [name for name in wanted if name not in {o.name for o in model.graph.output}]
    arrays = run(capture_model(model, extra), feeds)
    outputs = arrays[:n_outputs]
    by_name = {o.name: a for o, a in zip(model.graph.output, outputs, strict=True)}
    by_name.update(dict(zip(extra, arrays[n_outputs:], strict=True)))
    for name in wanted:
        captured[name] = by_name[name]
    return captured, outputs
