"""The realization of one node: the cheapest candidate (:func:`ortpool.forms.plan.candidates`)
proven exact on the runtime. Every candidate tried is kept with its outcome, so the report can
say why the node is not left alone and why a cheaper form was passed over (a Pad folded back by
PadFusion).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ortpool.check.cases import FeedSet
from ortpool.check.judge import Judgement
from ortpool.forms import emit
from ortpool.forms import plan as forms
from ortpool.forms.prove import prove_plan
from ortpool.model.site import Site
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.report.outcomes import Attempt, NotApplicable, Outcome
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule


@dataclasses.dataclass
class Choice:
    """The chosen plan (None: nothing could be proven) with its proof and every attempt."""

    plan: forms.Plan | None
    proof: Judgement | None
    attempts: list[Attempt]
    reason: str = ""  # why no candidate was tried (plan None and no attempts)


def choose(site: Site, sets: Sequence[FeedSet], runtime: RuntimeSpec,
           earlier: Sequence[Attempt] = (), rule: AccuracyRule = DEFAULT_RULE) -> Choice:
    """The first candidate of ``site`` proven exact (sums by ruling 17's ``rule``); ``earlier``:
    a previous choice's attempts (its winner refused in the model), not tried again."""
    if not site.judgeable:
        raise ValueError(f"site {site.name!r} cannot be judged: {site.reason}")
    attempts = list(earlier)
    tried = {a.form for a in earlier}
    for name, plan in forms.candidates(site):
        if name in tried:
            continue
        if isinstance(plan, NotApplicable):
            attempts.append(Attempt(name, Outcome.NOT_APPLICABLE, plan.reason))
            continue
        if site.spatial is None and not plan.shape_free:
            attempts.append(Attempt(name, Outcome.NOT_APPLICABLE,
                                    "its numbers depend on the input size"))
            continue
        try:
            proof = prove_plan(plan, site, sets, runtime, rule)
        except emit.Unwritable as err:
            attempts.append(Attempt(name, Outcome.NOT_WRITABLE, str(err)))
            continue
        if proof.exact:
            attempts.append(Attempt(name, Outcome.PROVEN, proof.describe()))
            return Choice(plan, proof, attempts)
        outcome = Outcome.FOLDED if proof.folded else Outcome.NOT_EXACT
        attempts.append(Attempt(name, outcome, proof.failure))
    return Choice(None, None, attempts)
