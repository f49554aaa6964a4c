"""Opening a session of a model on a :class:`~ortpool.ort.runtime_spec.RuntimeSpec`: the wrapper
(:class:`ortpool.ort.session.InferenceSession`, imported only then) when the model holds ortpool
ops, so their errors are raised, else a plain onnxruntime session.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import onnx

from ortpool.ort import runtime
from ortpool.ort.nodes import iter_ortpool_nodes, load_structure
from ortpool.ort.runtime_spec import RuntimeSpec


def open_session(spec: RuntimeSpec, model: onnx.ModelProto | bytes | str | os.PathLike,
                 level: str | None = None, threads: int | None = None,
                 external_dir: str | os.PathLike | None = None, options: Any = None,
                 profile_dir: str | None = None, ortpool_ops: bool | None = None) -> Any:
    """A session of ``model`` on ``spec``: ``ortpool.InferenceSession`` when it holds ortpool ops
    (``ortpool_ops`` False: known not to), else plain onnxruntime. ``level``, ``threads``,
    ``external_dir`` and ``profile_dir`` go to :meth:`RuntimeSpec.session_options`; ``options``
    replaces the SessionOptions made from ``spec``."""
    runtime.quiet()
    if options is None:
        options = spec.session_options(level, threads, external_dir, profile_dir)
    if ortpool_ops is None:
        ortpool_ops = any(iter_ortpool_nodes(load_structure(model)))
    if ortpool_ops:
        from ortpool.ort.session import InferenceSession  # imports onnxruntime

        return InferenceSession(model, options, runtime=spec)
    source = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
    return runtime.create(source, options, **spec.provider_arguments())


def optimized(spec: RuntimeSpec, model: onnx.ModelProto,
              level: str | None = None) -> onnx.ModelProto:
    """``model`` as onnxruntime's optimizer leaves it at ``level`` on ``spec``'s providers."""
    options = spec.session_options(level)
    with tempfile.TemporaryDirectory(prefix="ortpool-fix-") as folder:
        options.optimized_model_filepath = os.path.join(folder, "optimized.onnx")
        open_session(spec, model, options=options)
        return onnx.load(options.optimized_model_filepath, load_external_data=False)
