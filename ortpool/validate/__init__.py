"""Side-by-side validation of onnxruntime's built-in pooling against ortpool.

``ortpool validate`` (per node in isolation and end to end, on a real model) and
``ortpool conformance`` (a generated grid of single-node cases) share the pieces of this package:
input generation (:mod:`.inputs`), running nodes in onnxruntime (:mod:`ortpool.ort.ortrun`,
:mod:`ortpool.model.singlenode`, :mod:`ortpool.model.capture`), comparison (:mod:`.compare`), cause
recognition (:mod:`.causes`), the onnx reference evaluator column (:mod:`.reference`) and the
reports (:mod:`.terminal`, :mod:`.jsonreport`, :mod:`.html`). ``validate_models`` (:mod:`.batch`)
runs several models, each in a child process of its own, every one reported whatever the others
do.
"""

from __future__ import annotations

from typing import Any

__all__ = ["run_conformance", "validate_model", "validate_models"]


def __getattr__(name: str) -> Any:
    # Lazy: the submodules import onnxruntime.
    if name == "validate_model":
        from ortpool.validate.validator import validate_model

        return validate_model
    if name == "validate_models":
        from ortpool.validate.batch import run_models

        return run_models
    if name == "run_conformance":
        from ortpool.validate.conformance import run_conformance

        return run_conformance
    raise AttributeError(f"module 'ortpool.validate' has no attribute {name!r}")
