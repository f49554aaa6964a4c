"""The onnx reference evaluator (``onnx.reference.ReferenceEvaluator``, installed with onnx).

Measured on onnx 1.23.2:

- It loads lazily: an op it has no implementation of raises at construction
  (``RuntimeImplementationError``, a NotImplementedError: GlobalLpPool, MaxRoiPool; an unknown op
  raises NotImplementedError "No registered schema"); anything about the attributes raises at
  the run.
- Its pooling code refuses what it cannot compute by raising RuntimeError or ValueError from
  its own modules ("output shape cannot be null or negative", "Unable to compute pad shape");
  an error from inside numpy or an IndexError in its loops (uint8 MaxPool with pads and
  Indices) is a failed run. "Not implemented yet for shape" (MaxPool of rank 6) is no kernel.
- It loops in Python: seconds for a [1,8,128,128] pool. Run it in a
  :class:`~ortpool.runtimes.base.Worker` with a time limit.
"""

from __future__ import annotations

import os
import traceback
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from ortpool.runtimes.base import (
    NO_KERNEL,
    REFUSED,
    RUN_FAILED,
    Runtime,
    check_feeds,
    check_outputs,
    one_line,
    signature,
)


def _raised_by_the_evaluator(err: BaseException) -> bool:
    """Whether the innermost frame of ``err`` is in onnx's reference package (its own checks),
    not in numpy or Python."""
    frames = traceback.extract_tb(err.__traceback__)
    if not frames:
        return False
    return f"onnx{os.sep}reference{os.sep}" in frames[-1].filename


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
    OPTIONS = ()

    @classmethod
    def available(cls) -> str | None:
        try:
            import onnx.reference  # noqa: F401  (a dependency of ortpool: always there)
        except ImportError:  # pragma: no cover - onnx is a dependency
            return "pip install 'onnx>=1.17'"
        return None

    def prepare(self) -> None:
        import onnx.reference  # noqa: F401

    def describe(self) -> dict[str, Any]:
        import onnx

        return {
            "runtime": self.name,
            "release": onnx.__version__,
            "device": "CPU (numpy, in Python)",
            "precision": "the model's element types",
        }

    def title(self) -> str:
        import onnx

        return f"onnx {onnx.__version__} reference evaluator"

    def run(self, model: bytes, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        from onnx.reference import ReferenceEvaluator

        sig = signature(model, self.name)
        arrays = check_feeds(sig, feeds, self.name)
        try:
            evaluator = ReferenceEvaluator(bytes(model))
        except Exception as err:
            raise self.failure(*classify(err, "load")) from None
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)
                outputs = evaluator.run(None, arrays)
        except Exception as err:
            raise self.failure(*classify(err, "run")) from None
        return check_outputs(sig, [np.asarray(o) for o in outputs], self.name)
