"""The real inputs of each main-graph pooling node, from a run of a copy of the model that also
outputs them (local functions inlined first). A node inside a control-flow body receives another
tensor on every iteration: none is captured, and it is judged on built cases alone."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import onnx
from onnx import numpy_helper

from ortpool.model.scopes import ai_onnx_opset, inline_functions
from ortpool.model.site import Site

__all__ = ["capture", "capture_model", "governing_opset", "inline_functions"]


def governing_opset(model: onnx.ModelProto) -> int:
    """The model's ai.onnx opset: it decides which spec version each node is."""
    opset = ai_onnx_opset(model.opset_import)
    if opset is None:
        raise ValueError("the model imports no ai.onnx opset")
    return opset


def capture_model(model: onnx.ModelProto, tensors: Sequence[str]) -> onnx.ModelProto:
    """A copy of ``model`` that also outputs ``tensors`` (untyped: onnxruntime infers them)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    existing = {o.name for o in copy.graph.output}
    copy.graph.output.extend(onnx.ValueInfoProto(name=n) for n in dict.fromkeys(tensors)
                             if n not in existing)
    return copy


def capture(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], sites: Sequence[Site],
            run: Callable[[onnx.ModelProto, Mapping[str, np.ndarray]], list[np.ndarray]],
            ) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """Run ``model`` once with every main-graph site's inputs as extra outputs: (tensor name ->
    array, the model's own outputs). Feeds and initializers are read directly."""
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
    wide = capture_model(model, wanted)
    arrays = run(wide, feeds)
    by_name = {o.name: a for o, a in zip(wide.graph.output, arrays, strict=True)}
    captured.update((name, by_name[name]) for name in wanted)
    return captured, arrays[: len(model.graph.output)]
