"""The onnx reference evaluator (``onnx.reference.ReferenceEvaluator``, installed with onnx).

Measured on onnx 1.23.2: an op without an implementation raises NotImplementedError at
construction (GlobalLpPool, MaxRoiPool); its own checks raise RuntimeError or ValueError from its
modules (refused); anything else in a run is a failed run. It loops in Python (seconds for a
[1,8,128,128] pool): run it in a :class:`~ortpool.runtimes.base.Worker` with a time limit.
"""

from __future__ import annotations

import os
import time
import traceback
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx

from ortpool.runtimes.base import (
    NO_KERNEL,
    REFUSED,
    RUN_FAILED,
    Runtime,
    RuntimeFailure,
    Worker,
    check_outputs,
    one_line,
)


def _raised_by_the_evaluator(err: BaseException) -> bool:
    """Whether the innermost frame of ``err`` is in onnx's reference package (its own checks)."""
    frames = traceback.extract_tb(err.__traceback__)
    return bool(frames) and f"onnx{os.sep}reference{os.sep}" in frames[-1].filename


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return one_line(text.splitlines()[0] if text else type(err).__name__)


def classify(err: BaseException, stage: str) -> tuple[str, str]:
    """Kind and message of an exception from the evaluator at ``stage`` ("load" or "run")."""
    text = str(err)
    if isinstance(err, NotImplementedError) or text.startswith("Not implemented yet"):
        if "No registered implementation for operator" in text or "No registered schema" in text:
            op = text.split("operator ", 1)[1].split(" ", 1)[0].strip("'")
            return NO_KERNEL, f"no implementation of {op}"
        return NO_KERNEL, _first_line(err)
    if stage == "load":
        return REFUSED, f"{type(err).__name__}: {_first_line(err)}"
    if isinstance(err, RuntimeError | ValueError) and _raised_by_the_evaluator(err):
        return REFUSED, _first_line(err)
    return RUN_FAILED, f"{type(err).__name__}: {_first_line(err)}"


class Reference(Runtime):
    """``onnx.reference.ReferenceEvaluator``: numpy, in Python, at the model's element types."""

    name = "reference"
    PACKAGE = "onnx.reference"

    def describe(self) -> dict[str, Any]:
        return {"runtime": self.name, "release": onnx.__version__,
                "device": "CPU (numpy, in Python)", "precision": "the model's element types"}

    def title(self) -> str:
        return f"onnx {onnx.__version__} reference evaluator"

    def run(self, model: bytes, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        sig, arrays = self.checked(model, feeds)
        try:
            evaluator = self._module().ReferenceEvaluator(bytes(model))
        except Exception as err:
            raise self.failure(*classify(err, "load")) from None
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)
                outputs = evaluator.run(None, arrays)
        except Exception as err:
            raise self.failure(*classify(err, "run")) from None
        return check_outputs(sig, [np.asarray(o) for o in outputs], self.name)


class _Timed(Reference):
    """Times ``evaluator.run`` in the worker: one call, more while they fit in a third of
    ``budget`` seconds, up to 5; the outputs then the calls' seconds. A refusal keeps the
    evaluator's first line, a failed call is :data:`RUN_FAILED`."""

    OPTIONS = ("budget",)

    def __init__(self, budget: float) -> None:
        super().__init__()
        self.budget = budget

    def run(self, model: bytes, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        try:
            evaluator = self._module().ReferenceEvaluator(bytes(model))
        except Exception as err:
            raise self.failure(REFUSED, f"{type(err).__name__}: {err}".splitlines()[0]) from None
        times: list[float] = []
        while not times or (len(times) < 5 and sum(times) + times[-1] < self.budget / 3):
            start = time.perf_counter()
            try:
                outputs = evaluator.run(None, dict(feeds))
            except Exception as err:
                raise self.failure(RUN_FAILED, str(err)) from None
            times.append(time.perf_counter() - start)
        return [*(np.asarray(o) for o in outputs), np.asarray(times)]


def time_reference(model: bytes, feed: dict[str, np.ndarray], limit: float,
                   startup: float = 10.0) -> tuple[list[float], Any] | None:
    """The reference evaluator timed on ``model`` in a worker of its own (``bench``): its times
    (:class:`_Timed`) and outputs; no times and the evaluator's first line when it refuses the
    model; None when a call fails or does not finish within ``limit`` seconds (``startup`` more
    for the worker to import onnx)."""
    if min(limit, startup) <= 0:
        return None  # nothing finishes in no time
    with Worker(_Timed(limit), limit, startup) as worker:
        try:
            *outputs, times = worker.run(model, feed)
        except RuntimeFailure as err:
            return ([], err.message) if err.kind == REFUSED else None
    return times.tolist(), outputs
