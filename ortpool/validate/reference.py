"""The onnx reference evaluator as a third opinion, in a worker process with a time limit.

``onnx.reference.ReferenceEvaluator`` loops in Python and can take minutes on a real tensor, so
it runs in a separate process that is killed when a node exceeds the limit. Its answers are
compared with ortpool's; where it differs for a reason of its own, the defect is labelled:

* it pads windows with NaN and drops NaNs before reducing, so a NaN *input* is ignored too
  (RULINGS.md 6 says NaN propagates);
* MaxUnpool with ``output_shape`` scatters into the inferred shape and zero-extends it, instead of
  addressing the requested output (RULINGS.md 9);
* LpPool in ceil mode rescales the windows that hang over the end by k / (taps inside)
  (RULINGS.md 12: padding contributes nothing), and refuses ceil_mode with auto_pad;
* it has no GlobalLpPool and no MaxRoiPool at all.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from ortpool.tolerances import Tolerance
from ortpool.validate.results import ReferenceResult

DEFAULT_TIMEOUT = 20.0
NAN_DEFECT = "reference ignores NaN inputs (it pads with NaN and drops NaNs before reducing)"
UNPOOL_DEFECT = "reference MaxUnpool zero-extends to output_shape instead of addressing it"
CEIL_AUTO_PAD_DEFECT = "reference refuses ceil_mode with auto_pad (the spec allows it)"
LP_CEIL_DEFECT = (
    "reference rescales LpPool's ceil-mode windows that hang over the end by k / (taps inside) "
    "([1..7], k3 s3 pads (1, 0), p=1: 19.5 where the spec gives 13)"
)
NO_IMPLEMENTATION_DEFECT = "reference has no implementation of this operator"


def error_defects(op: str, n_inputs: int, message: str) -> list[str]:
    """Known defects behind a reference evaluator failure."""
    if op == "MaxUnpool" and n_inputs > 2 and "out of bounds" in message:
        return [UNPOOL_DEFECT]
    if "ceil_mode is not supported with auto_pad" in message:
        return [CEIL_AUTO_PAD_DEFECT]
    if "No registered implementation for operator" in message:
        return [NO_IMPLEMENTATION_DEFECT]
    return []


def _serve(conn: Connection) -> None:
    """Worker loop: (model bytes, feeds) in, ("ok", outputs) or ("error", text) out."""
    from onnx.reference import ReferenceEvaluator

    from ortpool.ort.ortrun import received

    for model_bytes, feeds in received(conn):
        try:
            evaluator = ReferenceEvaluator(model_bytes)
            outputs = evaluator.run(None, feeds)
            conn.send(("ok", [np.asarray(o) for o in outputs]))
        except Exception as err:
            conn.send(("error", f"{type(err).__name__}: {err}"))


class ReferenceWorker:
    """A reusable worker; a job that overruns ``timeout`` seconds kills and replaces it."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout
        self._ctx = multiprocessing.get_context("spawn")
        self._process: Any = None
        self._conn: Connection | None = None

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self._process = self._ctx.Process(target=_serve, args=(child,), daemon=True)
        self._process.start()
        child.close()
        self._conn = parent

    def run(self, model_bytes: bytes, feeds: dict[str, np.ndarray]) -> tuple[str, Any, float]:
        """("ok", outputs, seconds), ("error", text, seconds) or ("timeout", text, seconds)."""
        if self._process is None or not self._process.is_alive():
            self._start()
        if self._conn is None:
            raise RuntimeError("the reference worker did not start")
        started = time.perf_counter()
        self._conn.send((model_bytes, feeds))
        # Spawning the worker imports onnx and numpy: allow for it on top of the limit.
        if not self._conn.poll(self.timeout + 5.0):
            self.close(kill=True)
            return (
                "timeout",
                f"did not finish within {self.timeout:g} s",
                time.perf_counter() - started,
            )
        try:
            status, payload = self._conn.recv()
        except EOFError:
            self.close(kill=True)
            return "error", "the reference worker died", time.perf_counter() - started
        return status, payload, time.perf_counter() - started

    def close(self, kill: bool = False) -> None:
        if self._process is None:
            return
        if kill:
            self._process.kill()
        elif self._conn is not None:
            with contextlib.suppress(BrokenPipeError, OSError):
                self._conn.send(None)
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()
        self._process = None
        self._conn = None

    def __enter__(self) -> ReferenceWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _same(a: np.ndarray, b: np.ndarray, tolerance: Tolerance) -> np.ndarray:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    bound = tolerance.allowed(b64)
    with np.errstate(invalid="ignore"):
        return (a64 == b64) | (np.isnan(a64) & np.isnan(b64)) | (np.abs(a64 - b64) <= bound)


def judge(
    op: str,
    feeds: Sequence[np.ndarray],
    reference: Sequence[np.ndarray],
    ours: Sequence[np.ndarray],
    nan_cells: np.ndarray | None,
    tolerance: Tolerance,
    ceil_mode: bool = False,
) -> ReferenceResult:
    """Compare the reference's outputs with ortpool's within ``tolerance`` (Y's, its window
    allowance included: :mod:`ortpool.tolerances`; the allowance is Y's alone) and
    label the reference's known defects."""
    differing = 0
    on_nan = 0
    # Indices have no window allowance; their atol and rtol are Y's (0 for the max-like ops).
    others = dataclasses.replace(tolerance, slack=None)
    for position, (ref, mine) in enumerate(zip(reference, ours, strict=False)):
        if ref.shape != mine.shape:
            differing += max(ref.size, mine.size)
            continue
        differ = ~_same(ref, mine, tolerance if position == 0 else others)
        differing += int(differ.sum())
        if nan_cells is not None and nan_cells.shape == differ.shape:
            on_nan += int((differ & nan_cells).sum())
    if differing == 0:
        return ReferenceResult("agree")
    defects = []
    if on_nan:
        defects.append(NAN_DEFECT)
    if op == "MaxUnpool" and len(feeds) > 2:
        defects.append(UNPOOL_DEFECT)
    lp_ceil = op == "LpPool" and ceil_mode
    if lp_ceil:
        defects.append(LP_CEIL_DEFECT)
    explained = (on_nan == differing) or (op == "MaxUnpool" and len(feeds) > 2) or lp_ceil
    return ReferenceResult(
        "differ",
        "differences explained by its known defects" if explained else "",
        differing=differing,
        defects=defects,
    )
