"""What guarding a model's nodes against NaN and -inf would cost: measured on the model.

Ruling 20: in the finite domain ``validate`` reports the nodes that differ on non-finite inputs
only, as information, with the price of guarding them. The price is measured, not estimated: the
model is fixed in the non-finite domain for those nodes alone (``fix --nonfinite --nodes ...``,
the forms and proofs of :mod:`ortpool.fix`), and the fixed model is timed against the original in
plain onnxruntime on the validated inputs (:func:`ortpool.bench.usermodel.time_against`, as
``ortpool bench MODEL FIXED`` times them), interleaved, with a control (the original against a
second session of itself): a ratio of 1.00 is what noise looks like on this machine then.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx

from ortpool.bench.usermodel import CONTROL, FIXED, time_against
from ortpool.fix.report import FORM, UNCHANGED
from ortpool.ort import DEFAULT_LEVEL, ISOLATED_LEVEL, RuntimeSpec

#: Interleaved rounds of the timing (the median of each variant's samples is compared).
ROUNDS = 12
#: Seconds of back-to-back runs per sample: long enough for the timer, short beside a command.
SAMPLE = 0.01


@dataclasses.dataclass
class GuardCost:
    """The guard's price on one model: the nodes guarded, the forms written, the ratios."""

    nodes: list[str]
    forms: dict[str, str]  # node -> the form fix proved (or why none)
    level: str  # the graph optimization level the models were timed at
    ratio: float | None = None  # guarded / original, median run time
    control: float | None = None  # original / original, the noise at the time
    error: str = ""  # why nothing was measured

    def text(self) -> str:
        """One line for the report."""
        names = ", ".join(repr(n) for n in self.nodes)
        if self.error or self.ratio is None:
            return f"guarding {names} (fix --nonfinite) could not be measured: {self.error}"
        forms = ", ".join(sorted(set(self.forms.values())))
        return (f"guarding {names} against NaN and -inf (fix --nonfinite: {forms}) costs "
                f"x{self.ratio:.2f} of this model's run time (control x{self.control:.2f}; "
                f"level {self.level}, one thread, median of {ROUNDS} interleaved rounds)")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def guard_cost(
    model: onnx.ModelProto,
    nodes: Sequence[str],
    feeds: Mapping[str, np.ndarray],
    runtime: RuntimeSpec,
    source_dir: str | None = None,
) -> GuardCost:
    """Fix ``nodes`` of ``model`` in the non-finite domain and time the result against the
    model on ``feeds`` (the level the model runs at: ``runtime``'s, or onnxruntime's default
    ``all`` where the runtime is validate's isolating ``disable``)."""
    from ortpool.fix import fix_with_report

    level = DEFAULT_LEVEL if runtime.level == ISOLATED_LEVEL else runtime.level
    timed = runtime.with_level(level)
    found = GuardCost(list(nodes), {}, level)
    try:
        fixed, report = fix_with_report(model, nodes=list(nodes), nonfinite=True, runtime=timed,
                                        inputs=dict(feeds), source_dir=source_dir)
    except Exception as err:  # a model fix refuses: the report says why, validation goes on
        found.error = f"fix refused it: {err}"
        return found
    found.forms = {n.name: n.form or n.realization for n in report.nodes if n.name in nodes}
    if report.exit_code() != 0:
        lacking = [f"{n.name!r} ({n.realization})" for n in report.nodes
                   if n.name in nodes and n.realization not in (UNCHANGED, FORM)]
        found.error = ("no standard-op form is exact there for " + ", ".join(lacking)
                       + ": the guarded model would need ortpool's op")
        return found
    # one intra-op thread, timed by the calling thread's CPU time: what onnxruntime computes
    # there alone, steady on a shared machine where wall time moved a control by 10-80%
    alone = dataclasses.replace(timed, intra_op_threads=1)
    try:
        _, ratios = time_against(model, fixed, feeds, alone, ROUNDS, SAMPLE, time.thread_time)
    except Exception as err:  # onnxruntime's own error types, or a variant that cannot run
        found.error = f"the models could not be timed: {str(err).splitlines()[0][:200]}"
        return found
    found.ratio = ratios[FIXED].median
    found.control = ratios[CONTROL].median
    return found


def priced(
    model: onnx.ModelProto,
    nodes: Sequence[str],
    feeds: Mapping[str, np.ndarray],
    runtime: RuntimeSpec,
) -> tuple[str, dict[str, Any]]:
    """:func:`guard_cost` as validate's report takes it: its line and its figures."""
    found = guard_cost(model, nodes, feeds, runtime)
    return found.text(), found.to_dict()
