"""Running models in onnxruntime's built-in kernels, with failures sorted into kinds.

"onnxruntime has no kernel for this op/version/type" is an answer, not a crash: it is told apart
from other failures (a node onnxruntime rejects, a run that fails) so reports can say which.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import onnx
import onnxruntime as ort

# onnxruntime logs refused nodes at ERROR level; we report them ourselves.
ort.set_default_logger_severity(4)

NO_KERNEL = "no-kernel"
REJECTED = "rejected"
RUN_FAILED = "run-failed"


@dataclasses.dataclass(frozen=True)
class OrtFailure(Exception):
    """onnxruntime could not create or run a session; ``kind`` says which way."""

    kind: str  # NO_KERNEL, REJECTED or RUN_FAILED
    message: str

    def __str__(self) -> str:
        return self.message


def _strip_source_location(text: str) -> str:
    """Drop onnxruntime's ``/onnxruntime_src/...:88 Class::Method(...) [with ...]`` prefix."""
    start = text.find("/onnxruntime_src/")
    if start < 0:
        return text
    with_at = text.find("[with ", start)
    if with_at < 0:
        return text
    depth = 0
    for i in range(with_at, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return text[:start] + text[i + 1 :].lstrip()
    return text


def classify(err: Exception, stage: str) -> OrtFailure:
    """Sort an onnxruntime exception: :data:`NO_KERNEL`, :data:`REJECTED`, :data:`RUN_FAILED`."""
    text = str(err).replace("\n", " ")
    short = _strip_source_location(text)
    for marker in ("NOT_IMPLEMENTED : ", "INVALID_GRAPH : ", "FAIL : ", "INVALID_ARGUMENT : "):
        if marker in short:
            short = short.split(marker, 1)[1]
    short = short.strip()
    if "NOT_IMPLEMENTED" in text or "Could not find an implementation" in text:
        return OrtFailure(NO_KERNEL, short)
    if "InsertedPrecisionFreeCast" in text:
        # No float16 kernel, and the Cast onnxruntime inserts to fall back to float is invalid at
        # this opset: in effect, no kernel for the type.
        return OrtFailure(
            NO_KERNEL,
            "no kernel for this element type (the fallback Cast "
            "onnxruntime inserts is invalid at this opset)",
        )
    return OrtFailure(REJECTED if stage == "load" else RUN_FAILED, short)


def session_options(optimize: bool, threads: int = 0) -> ort.SessionOptions:
    """Options for a built-in session; ``threads`` > 0 caps the intra-op pool (small tensors)."""
    options = ort.SessionOptions()
    options.log_severity_level = 4
    if threads:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = threads
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return options


def builtin_session(
    model: onnx.ModelProto | bytes,
    providers: Sequence[str] | None = None,
    optimize: bool = False,
    threads: int = 0,
) -> ort.InferenceSession:
    """A plain onnxruntime session (built-in kernels); failures raised as :class:`OrtFailure`."""
    data = model if isinstance(model, bytes) else model.SerializeToString()
    try:
        return ort.InferenceSession(
            data,
            session_options(optimize, threads),
            providers=list(providers or ["CPUExecutionProvider"]),
        )
    except Exception as err:
        raise classify(err, "load") from None


def run_session(
    session: ort.InferenceSession,
    feeds: Mapping[str, np.ndarray],
    outputs: Sequence[str] | None = None,
) -> list[np.ndarray]:
    try:
        return [np.asarray(a) for a in session.run(list(outputs) if outputs else None, dict(feeds))]
    except Exception as err:
        raise classify(err, "run") from None


def run_builtin(
    model: onnx.ModelProto | bytes,
    feeds: Mapping[str, np.ndarray],
    providers: Sequence[str] | None = None,
    optimize: bool = False,
    threads: int = 0,
) -> list[np.ndarray]:
    """Create a built-in session and run it once."""
    return run_session(builtin_session(model, providers, optimize, threads), feeds)


def available_providers() -> list[str]:
    return list(ort.get_available_providers())
