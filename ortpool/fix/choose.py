"""The realization of one node: the cheapest candidate proven exact on the runtime.

Candidates come from :func:`ortpool.fix.forms.candidates` (the node as it is first, ortpool's op
last); each is written for the node's opset (:mod:`ortpool.fix.emit`) and proven on the node's
input sets (:mod:`ortpool.fix.prove`). Every candidate tried is kept with its outcome, so the
report can say why the node is not simply left alone (the runtime's own difference from the
spec) and why a cheaper form was passed over (e.g. a Pad folded back by PadFusion).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ortpool.fix import emit, forms
from ortpool.fix.inputs import FeedSet
from ortpool.fix.prove import Proof, prove_plan
from ortpool.fix.sites import Site
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule

NOT_APPLICABLE = "not applicable"
NOT_WRITABLE = "not writable at this opset"
NOT_EXACT = "not exact"
FOLDED = "changed by the optimizer"
NOT_IN_MODEL = "not exact in the model"
PROVEN = "proven"


@dataclasses.dataclass
class Attempt:
    """One candidate tried for a node and what became of it."""

    form: str
    outcome: str
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Choice:
    """The chosen plan (None: nothing could be proven) with its proof and every attempt."""

    plan: forms.Plan | None
    proof: Proof | None
    attempts: list[Attempt]
    reason: str = ""  # why no candidate was tried (plan None and no attempts)


def choose(
    site: Site,
    sets: Sequence[FeedSet],
    runtime: RuntimeSpec,
    earlier: Sequence[Attempt] = (),
    rule: AccuracyRule = DEFAULT_RULE,
) -> Choice:
    """Try the candidates of ``site`` in order; the first proven exact wins (a sum within
    RULINGS.md 17's ``rule``: the node as it is stays where its only difference is an accuracy
    note). ``earlier``: the attempts of a previous choice (its winner refused in the model):
    those forms are not tried again and stay in the record."""
    facts = site.facts
    if facts is None:
        raise ValueError(f"site {site.name!r} has no facts: {site.reason}")
    attempts = list(earlier)
    tried = {a.form for a in earlier}
    for name, plan in forms.candidates(facts):
        if name in tried:
            continue
        if isinstance(plan, str):
            attempts.append(Attempt(name, NOT_APPLICABLE, plan))
            continue
        if facts.spatial is None and not plan.shape_free:
            attempts.append(Attempt(name, NOT_APPLICABLE, "its numbers depend on the input size"))
            continue
        try:
            proof = prove_plan(plan, facts, site.node, sets, runtime, rule)
        except emit.Unwritable as err:
            attempts.append(Attempt(name, NOT_WRITABLE, str(err)))
            continue
        if proof.exact:
            attempts.append(Attempt(name, PROVEN, proof.describe()))
            return Choice(plan, proof, attempts)
        attempts.append(Attempt(name, FOLDED if proof.folded else NOT_EXACT, proof.failure))
    return Choice(None, None, attempts)
