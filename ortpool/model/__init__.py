"""The model layer: what ortpool knows about a model as a whole, without running it (onnx and
numpy, never onnxruntime). A pooling node is described once (:class:`Site`, :func:`find_sites`);
a model's inputs for a run are resolved once (:func:`resolve`); scopes, inference, splicing, the
small models ortpool builds (:func:`node_model`) and the files it writes (:func:`write_file`) live
in the submodules. Other packages import the names below (``from ortpool.model import Site``).
"""

from __future__ import annotations

from ortpool.model import branch_outputs, capture
from ortpool.model.capture import governing_opset, inline_functions
from ortpool.model.files import save, write_file
from ortpool.model.inputs import (
    DEFAULT_BATCH,
    DEFAULT_SIZE,
    InputSpec,
    OpenDim,
    ResolvedInputs,
    data_inputs,
    describe_dims,
    graph_inputs,
    random_tensor,
    resolve,
)
from ortpool.model.scopes import (
    AI_ONNX,
    Scope,
    ai_onnx_opset,
    called_function,
    function_index,
    function_label,
    graph_scopes,
    is_pool,
    is_standard,
    model_scopes,
    subgraphs,
)
from ortpool.model.selection import Selection
from ortpool.model.singlenode import IR_VERSION, alone_model, feed_dict, ir_version_for, node_model
from ortpool.model.site import INPUT_NAMES, Site, attribute_dict, find_sites
from ortpool.modelfile import external_locations

__all__ = [
    "AI_ONNX", "DEFAULT_BATCH", "DEFAULT_SIZE", "INPUT_NAMES", "IR_VERSION", "InputSpec",
    "OpenDim", "ResolvedInputs", "Scope", "Selection", "Site", "ai_onnx_opset", "alone_model",
    "attribute_dict", "branch_outputs", "called_function", "capture", "data_inputs",
    "describe_dims", "external_locations", "feed_dict", "find_sites", "function_index",
    "function_label", "governing_opset", "graph_inputs", "graph_scopes", "inline_functions",
    "ir_version_for", "is_pool", "is_standard", "model_scopes", "node_model", "random_tensor",
    "resolve", "save", "subgraphs", "write_file",
]
