"""A model timed against a second session of itself (the control) and its fixed form,
interleaved: ``ortpool bench MODEL FIXED``."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx

from ortpool.model.timing import Ratio, Stats, interleaved
from ortpool.ort.opening import open_session
from ortpool.ort.runtime_spec import RuntimeSpec, runner

#: The variants' names, as the reports print them.
ORIGINAL = "original"
CONTROL = "original again"
FIXED = "fixed"


class RunFailed(Exception):
    """A variant's first run failed: which one, and onnxruntime's message."""

    def __init__(self, variant: str, reason: str) -> None:
        super().__init__(f"{variant}: {reason}")
        self.variant, self.reason = variant, reason


def time_against(
    model: onnx.ModelProto,
    fixed: onnx.ModelProto | None,
    feeds: Mapping[str, np.ndarray],
    runtime: RuntimeSpec,
    repeat: int,
    min_sample: float,
) -> tuple[dict[str, Stats], dict[str, Ratio]]:
    """``model`` (:data:`ORIGINAL`) against a second session of itself (:data:`CONTROL`) and
    ``fixed`` (:data:`FIXED`), ``repeat`` interleaved rounds: each variant's times, and the
    CONTROL and FIXED ratios to ORIGINAL; a session that fails to load or to run first raises
    :class:`RunFailed`."""
    variants = {}  # each a call of its session, bfloat16 made OrtValues once (runner)
    for name, variant in ((ORIGINAL, model), (CONTROL, model), (FIXED, fixed)):
        if variant is None:
            continue
        try:  # onnxruntime's own exception types differ between releases
            variants[name] = runner(open_session(runtime, variant), None, feeds)
            variants[name]()
        except Exception as err:
            raise RunFailed(name, str(err)) from None
    times = interleaved(variants, repeat, min_sample)
    ratios = {
        name: Ratio.of(times[name], times[ORIGINAL]) for name in (CONTROL, FIXED) if name in times
    }
    return times, ratios
