"""The model layer: what ortpool knows about a model as a whole, without running it.

Between the kernels and onnxruntime (``spec -> kernels -> model -> ort -> rewrite/validate/fix/
bench -> cli``): it imports onnx, numpy and the spec modules, never onnxruntime.

- :mod:`ortpool.model.inputs`: a model's input shapes and values for a run, resolved the same
  way for every command that runs a model (``--shape``, ``--inputs``, ``--seed``).
- :mod:`ortpool.model.scopes`: a model's graphs, subgraphs and model-local functions, each with
  the opset that governs it.
- :mod:`ortpool.model.inference`: element types, ranks and dims per scope (onnx inference),
  for the rewrite and the fix.
- :mod:`ortpool.model.splice`: a node replaced where it stood, the opset import of its owner.
- :mod:`ortpool.model.site`: a pooling node described once (:class:`Site`), every one of a model
  found in every scope (:func:`find_sites`).
- :mod:`ortpool.model.singlenode`: ``node_model`` builds every small model ortpool makes, stamped
  with the IR every supported onnxruntime reads; ``alone_model``, a site's node alone.
- :mod:`ortpool.model.reference`: the onnx reference evaluator in a worker with a time limit
  (:mod:`ortpool.model.worker`: the spawned-worker pattern).
- :mod:`ortpool.model.carry`: bfloat16 inputs, outputs and captured tensors carried as float32
  through Casts (onnxruntime's Python API feeds and fetches no bfloat16 array).
- :mod:`ortpool.model.branch_outputs`: declared shapes of branch outputs set aside and put back.
- :mod:`ortpool.model.external`: external data located, planned and serialized.
- :mod:`ortpool.model.files`: a model file and its report written all together or not at all
  (``write_file``, ``save``).
- :mod:`ortpool.model.capture`: a model widened to output the tensors a run captures.

Other packages import these through the names below (``from ortpool.model import Site``).
"""

from __future__ import annotations

from ortpool.model import branch_outputs, capture
from ortpool.model.capture import governing_opset, inline_functions
from ortpool.model.external import external_locations
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

__all__ = [
    "AI_ONNX",
    "DEFAULT_BATCH",
    "DEFAULT_SIZE",
    "INPUT_NAMES",
    "IR_VERSION",
    "InputSpec",
    "OpenDim",
    "ResolvedInputs",
    "Scope",
    "Selection",
    "Site",
    "ai_onnx_opset",
    "alone_model",
    "attribute_dict",
    "branch_outputs",
    "called_function",
    "capture",
    "data_inputs",
    "describe_dims",
    "external_locations",
    "feed_dict",
    "find_sites",
    "function_index",
    "function_label",
    "governing_opset",
    "graph_inputs",
    "graph_scopes",
    "inline_functions",
    "ir_version_for",
    "is_pool",
    "is_standard",
    "model_scopes",
    "node_model",
    "random_tensor",
    "resolve",
    "save",
    "subgraphs",
    "write_file",
]
