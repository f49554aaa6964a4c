"""Running models in onnxruntime's built-in kernels, failures sorted into kinds: "no kernel for
this op/version/type" is an answer, told apart from a node onnxruntime rejects and a failed run."""

from __future__ import annotations

import atexit
import dataclasses
import functools
import shutil
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx

from ortpool.ort import runtime_spec
from ortpool.ort.opening import open_session
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.runtimes.base import NO_KERNEL, REFUSED, RUN_FAILED, Runtime, RuntimeFailure, Worker

#: onnxruntime refused the model (its other kinds are the runtimes' NO_KERNEL and RUN_FAILED)
REJECTED = "rejected"


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
        return OrtFailure(NO_KERNEL,
                          "no kernel for this element type (the fallback Cast "
                          "onnxruntime inserts is invalid at this opset)")
    return OrtFailure(REJECTED if stage == "load" else RUN_FAILED, short)


@functools.cache
def known_version(op: str) -> int:
    """The newest spec version of ai.onnx ``op`` onnxruntime's own schemas know (0: none): a
    newer one it reads as that one, refusing what the newer adds, with no kernel of its own."""
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

    return max((s.since_version for s in ort_c.get_all_operator_schema()
                if s.name == op and s.domain == ""), default=0)


def builtin_session(model: onnx.ModelProto | bytes, runtime: RuntimeSpec,
                    threads: int | None = None, profile_dir: str | None = None) -> Any:
    """A plain onnxruntime session (built-in kernels) on ``runtime``; failures raised as
    :class:`OrtFailure`."""
    try:
        return open_session(runtime, model, threads=threads, profile_dir=profile_dir,
                            ortpool_ops=False)
    except Exception as err:
        raise classify(err, "load") from None


def as_arrays(outputs: Sequence[Any]) -> list[np.ndarray]:
    """Each output of a run as an array; a sequence of tensors of different shapes
    (SplitToSequence's), which numpy cannot stack, as an object array of them: not a numeric
    tensor, so not compared end to end, and not a failure of the model."""
    found = []
    for value in outputs:
        try:
            found.append(np.asarray(value))
        except ValueError:  # "inhomogeneous shape": each element kept as it is
            found.append(np.empty(len(value), dtype=object))
            for i, item in enumerate(value):
                found[-1][i] = item
    return found


def run_session(session: Any, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    try:
        outputs = runtime_spec.run_arrays(session, None, feeds)
    except Exception as err:
        raise classify(err, "run") from None
    return as_arrays(outputs)


def run_builtin(model: onnx.ModelProto | bytes, feeds: Mapping[str, np.ndarray],
                runtime: RuntimeSpec, threads: int | None = None) -> list[np.ndarray]:
    """Create a built-in session and run it once (in a worker off the CPU provider:
    :func:`run_placed`)."""
    if runtime.provider_names != [runtime_spec.CPU]:
        return run_placed(model, feeds, runtime, threads)[0]
    return run_session(builtin_session(model, runtime, threads), feeds)


def run_placed(model: onnx.ModelProto | bytes, feeds: Mapping[str, np.ndarray],
               runtime: RuntimeSpec,
               threads: int | None = None) -> tuple[list[np.ndarray], dict[str, str]]:
    """:func:`run_builtin`, and which provider executed each node (node name -> provider; none
    on the CPU provider alone, where nothing can fall back). Off it, the run is profiled
    (:func:`ortpool.ort.runtime_spec.placement`) in a worker process: a provider may end its
    process (OpenVINO's aborts on MaxPool 2x2/2 of 9x9 then MaxUnpool), one result, not the end
    of the validation."""
    if runtime.provider_names == [runtime_spec.CPU]:
        return run_builtin(model, feeds, runtime, threads), {}
    data = model if isinstance(model, bytes) else model.SerializeToString()
    # the worker has no process-wide pool of its own (bench shares one in this process)
    alone = dataclasses.replace(runtime, shared_pool=False)
    try:
        *outputs, placed = _worker(alone, threads).run(data, feeds)
    except RuntimeFailure as err:
        if err.kind in (NO_KERNEL, REFUSED, RUN_FAILED):
            raise OrtFailure(REJECTED if err.kind == REFUSED else err.kind, err.message) from None
        # the provider ended the worker's process: one failed run, not the caller's end
        raise OrtFailure(RUN_FAILED, f"onnxruntime on {', '.join(runtime.provider_names)}: "
                         f"{err.message}") from None
    return outputs, placed


class _Placed(Runtime):
    """onnxruntime's built-in kernels on one :class:`RuntimeSpec`, run by a :class:`Worker`: the
    outputs, then which provider executed each node."""

    name = PACKAGE = "onnxruntime"
    OPTIONS = ("spec", "threads")

    def __init__(self, spec: RuntimeSpec, threads: int | None) -> None:
        super().__init__()
        self.spec, self.threads = spec, threads

    def describe(self) -> dict[str, Any]:
        return {"runtime": self.name, "providers": self.spec.provider_names}

    def title(self) -> str:
        return f"onnxruntime on {', '.join(self.spec.provider_names)}"

    def run(self, model: bytes, feeds: Mapping[str, np.ndarray]) -> list[Any]:
        folder = runtime_spec.profile_dir()
        try:
            session = builtin_session(model, self.spec, self.threads, profile_dir=folder)
            outputs = run_session(session, feeds)
            return [*outputs, runtime_spec.placement(session, onnx.load_from_string(model))]
        except OrtFailure as err:  # its kind carried across as the worker's
            raise self.failure(REFUSED if err.kind == REJECTED else err.kind, err.message) from None
        except Exception as err:  # a profile that does not read: a failed run, not the caller's
            raise self.failure(RUN_FAILED, f"{type(err).__name__}: {err}") from None
        finally:  # read or not (a refused model, a failing run), the profile goes now
            shutil.rmtree(folder, ignore_errors=True)


@functools.cache
def _worker(spec: RuntimeSpec, threads: int | None) -> Worker:
    """The worker of one runtime, started on first use and again after a provider ended it; no
    time limit (a model's own has its caller: validate's --timeout)."""
    worker = Worker(_Placed(spec, threads), timeout=None)
    atexit.register(worker.close)
    return worker
