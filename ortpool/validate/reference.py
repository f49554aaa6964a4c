"""The onnx reference evaluator as a third opinion: each node's captured input judged by the
engine on the reference runtime (in a worker with a time limit: it loops in Python), and why it
differs or fails named by the engine's causes, each with its basis, as ``--runtime reference``
names them (its known readings: NaN dropped, LpPool's border windows rescaled, MaxUnpool's
``output_shape`` zero-extended, ceil_mode with auto_pad refused, no implementation)."""

from __future__ import annotations

import time

from ortpool.check import causes
from ortpool.check import status as st
from ortpool.check.judge import judge
from ortpool.model.site import Site
from ortpool.report.record import ReferenceResult
from ortpool.runtimes.base import Worker


def reference(worker: Worker, site: Site, feed: object) -> ReferenceResult:
    """The reference evaluator's answer on ``feed`` (the node's captured set, observed),
    judged against the spec's, with its causes."""
    started = time.perf_counter()
    judgement = judge(site, [feed], worker)  # type: ignore[list-item]
    seconds = round(time.perf_counter() - started, 3)
    if judgement.exact:
        return ReferenceResult("agree", seconds=seconds)
    if judgement.status == st.TIMED_OUT:
        return ReferenceResult("timeout", judgement.failure, seconds=seconds)
    found = causes.of(site, judgement)
    if judgement.status not in (st.DIFFER, st.INACCURATE, st.RULINGS):
        return ReferenceResult("error", judgement.failure, causes=found, seconds=seconds)
    differing = sum(c.differing + c.inaccurate + c.ruling_differing + c.only_in_one
                    for c in judgement.comparisons)
    return ReferenceResult("differ", judgement.failure, differing=differing, causes=found,
                           seconds=seconds)
