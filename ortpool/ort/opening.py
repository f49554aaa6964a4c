"""Opening a session of a model on a :class:`~ortpool.ort.runtime_spec.RuntimeSpec`: the wrapper
(:class:`ortpool.ort.session.InferenceSession`) when the model holds ortpool ops, so their errors
are raised and not hidden, else a plain onnxruntime session; both made at
:func:`ortpool.ort.runtime.create`.

The top of ``ortpool/ort/``: the runtime description says what to open, the wrapper builds on the
description, and this module chooses between the wrapper and a plain session. Light to import:
the wrapper (which imports onnxruntime) is imported when a model holds ortpool ops, so
``ortpool fix --help`` declares its options without loading onnxruntime.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import onnx

from ortpool.ort import runtime
from ortpool.ort.nodes import iter_ortpool_nodes, load_structure
from ortpool.ort.runtime_spec import RuntimeSpec


def open_session(
    spec: RuntimeSpec,
    model: onnx.ModelProto | bytes | str | os.PathLike,
    level: str | None = None,
    threads: int | None = None,
    external_dir: str | os.PathLike | None = None,
    options: Any = None,
    profile_dir: str | None = None,
    ortpool_ops: bool | None = None,
) -> Any:
    """A session of ``model`` on ``spec``: ``ortpool.InferenceSession`` when the model holds
    ortpool ops (their errors raised, not hidden), else plain onnxruntime; ``ortpool_ops`` False
    skips reading the model for them (a built-in model). ``level``, ``threads``, ``external_dir``
    and ``profile_dir`` go to :meth:`RuntimeSpec.session_options`; ``options`` replaces the
    SessionOptions made from ``spec`` (``ortpool.InferenceSession(model, sess_options)``)."""
    runtime.quiet()
    if options is None:
        options = spec.session_options(level, threads, external_dir, profile_dir)
    if ortpool_ops is None:  # found by reading the model (a caller who knows says so)
        ortpool_ops = any(iter_ortpool_nodes(load_structure(model)))
    if ortpool_ops:
        from ortpool.ort.session import InferenceSession  # imports onnxruntime

        return InferenceSession(model, options, runtime=spec)
    source = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
    return runtime.create(source, options, **spec.provider_arguments())


def optimized(
    spec: RuntimeSpec, model: onnx.ModelProto, level: str | None = None
) -> onnx.ModelProto:
    """``model`` as onnxruntime's graph optimizer leaves it at ``level`` on ``spec``'s providers
    (its ``optimized_model_filepath``): which nodes it fused, folded or replaced."""
    options = spec.session_options(level)
    with tempfile.TemporaryDirectory(prefix="ortpool-fix-") as folder:
        options.optimized_model_filepath = os.path.join(folder, "optimized.onnx")
        open_session(spec, model, options=options)
        return onnx.load(options.optimized_model_filepath, load_external_data=False)
