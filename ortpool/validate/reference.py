"""The onnx reference evaluator as a third opinion: each node's captured input judged by the
engine on the reference runtime (in a worker with a time limit: it loops in Python), and its
known defects named where it differs for a reason of its own (rulings 6, 9 and 12)."""

from __future__ import annotations

import time

from ortpool.check import status as st
from ortpool.check.judge import judge
from ortpool.model.site import Site
from ortpool.report.record import ReferenceResult
from ortpool.runtimes.base import Worker

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
    if "No registered implementation" in message or "no-kernel" in message:
        return [NO_IMPLEMENTATION_DEFECT]
    return []


def reference(worker: Worker, site: Site, feed: object) -> ReferenceResult:
    """The reference evaluator's answer on ``feed`` (the node's captured set, observed),
    judged against the spec's, its known defects named."""
    started = time.perf_counter()
    judgement = judge(site, [feed], worker)  # type: ignore[list-item]
    seconds = round(time.perf_counter() - started, 3)
    if judgement.exact:
        return ReferenceResult("agree", seconds=seconds)
    if judgement.status == st.TIMED_OUT:
        return ReferenceResult("timeout", judgement.failure, seconds=seconds)
    if judgement.status not in (st.DIFFER, st.INACCURATE, st.RULINGS):
        defects = error_defects(site.op, site.n_inputs, judgement.failure)
        return ReferenceResult("error", judgement.failure, defects=defects, seconds=seconds)
    comps = judgement.comparisons
    differing = sum(c.differing + c.inaccurate + c.ruling_differing + c.only_in_one
                    for c in comps)
    on_nan = sum(c.in_nan_windows for c in comps)
    defects = [NAN_DEFECT] if on_nan else []
    unpool = site.op == "MaxUnpool" and site.n_inputs > 2
    lp_ceil = site.op == "LpPool" and bool(site.attributes.get("ceil_mode"))
    defects += [UNPOOL_DEFECT] * unpool + [LP_CEIL_DEFECT] * lp_ceil
    explained = on_nan == differing or unpool or lp_ceil
    return ReferenceResult(
        "differ", "differences explained by its known defects" if explained else "",
        differing=differing, defects=defects, seconds=seconds)
