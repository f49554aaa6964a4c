"""Running models in onnxruntime's built-in kernels, with failures sorted into kinds.

"onnxruntime has no kernel for this op/version/type" is an answer, not a crash: it is told apart
from other failures (a node onnxruntime rejects, a run that fails) so reports can say which.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx

from ortpool.ort import runtime_spec
from ortpool.ort.runtime_spec import RuntimeSpec

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


def builtin_session(
    model: onnx.ModelProto | bytes,
    runtime: RuntimeSpec,
    threads: int | None = None,
    profile_dir: str | None = None,
) -> Any:
    """A plain onnxruntime session (built-in kernels) on ``runtime`` (``threads`` overriding its
    intra/inter-op threads); failures raised as :class:`OrtFailure`."""
    data = model if isinstance(model, bytes) else model.SerializeToString()
    try:
        return runtime.session(data, threads=threads, profile_dir=profile_dir)
    except Exception as err:
        raise classify(err, "load") from None


def run_session(
    session: Any,
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
    runtime: RuntimeSpec,
    threads: int | None = None,
) -> list[np.ndarray]:
    """Create a built-in session and run it once."""
    return run_session(builtin_session(model, runtime, threads), feeds)


def run_placed(
    model: onnx.ModelProto | bytes,
    feeds: Mapping[str, np.ndarray],
    runtime: RuntimeSpec,
    threads: int | None = None,
) -> tuple[list[np.ndarray], dict[str, str]]:
    """:func:`run_builtin`, and which provider executed each node (node name -> provider).

    On the CPU provider alone nothing can fall back, and the session is not profiled; on
    another, the run is profiled (:func:`ortpool.ort.runtime_spec.placement`)."""
    if runtime.provider_names == [runtime_spec.CPU]:
        return run_builtin(model, feeds, runtime, threads), {}
    session = builtin_session(model, runtime, threads, profile_dir=runtime_spec.profile_dir())
    outputs = run_session(session, feeds)
    proto = model if isinstance(model, onnx.ModelProto) else onnx.load_from_string(model)
    return outputs, runtime_spec.placement(session, proto)
