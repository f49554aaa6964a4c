"""The onnx reference evaluator, timed in a child process that is stopped at a time limit.

The evaluator loops in Python over output positions, so a large case can take minutes; a child
process can be stopped cleanly where a thread could not.
"""

from __future__ import annotations

import multiprocessing
import time
from typing import Any

import numpy as np


def _child(model: bytes, feed: dict[str, np.ndarray], budget: float, conn: Any) -> None:
    from onnx.reference import ReferenceEvaluator

    try:
        evaluator = ReferenceEvaluator(model)
    except Exception as err:  # e.g. no implementation of the operator (MaxRoiPool)
        conn.send(([], f"{type(err).__name__}: {str(err).splitlines()[0]}"))
        conn.close()
        return
    times: list[float] = []
    outputs = None
    spent = 0.0
    # At least one call; more while they fit in a third of the budget, up to 5.
    while not times or (len(times) < 5 and spent + times[-1] < budget / 3):
        start = time.perf_counter()
        outputs = evaluator.run(None, feed)
        times.append(time.perf_counter() - start)
        spent += times[-1]
    conn.send((times, outputs))
    conn.close()


def time_reference(
    model: bytes, feed: dict[str, np.ndarray], limit: float, startup: float = 10.0
) -> tuple[list[float], list[np.ndarray]] | None:
    """Per-call times of ``ReferenceEvaluator(model).run`` and its outputs, or None when the
    first call does not finish within ``limit`` seconds (plus ``startup`` seconds for the child
    to import onnx and numpy); no times and the error text when the evaluator refuses the model
    (it has no MaxRoiPool and no GlobalLpPool)."""
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(model, feed, limit, child), daemon=True)
    proc.start()
    child.close()
    try:
        # The child imports onnx and numpy before its clock starts: allow for that.
        if not parent.poll(limit + startup):
            return None
        times, outputs = parent.recv()
        return times, outputs
    except EOFError:
        return None
    finally:
        if proc.is_alive():
            proc.terminate()
        proc.join(5)
        parent.close()
