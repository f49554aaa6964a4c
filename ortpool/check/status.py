"""What the engine can say of a node, and of a model: the statuses every report counts. A node
nothing was compared on has a status of its own (:data:`NOT_COMPARED`, :data:`NO_KERNEL`, ...),
never :data:`AGREE`.
"""

from __future__ import annotations

AGREE = "agree"
TIES = "ties"  # only Indices ties differ: both picked a maximum
RULINGS = "rulings"  # differences only in cells the spec leaves to docs/rulings.md
DIFFER = "differ"  # wrong semantics: a shape, window, divisor, NaN... (ruling 17)
INACCURATE = "inaccurate"  # a sum rounded beyond the accuracy limit (ruling 17): counted
ACCURACY_NOTE = "accuracy-note"  # agrees; a sum rounded beyond a pairwise sum, within the limit
ORT_REJECTED = "ort-rejected"  # the runtime refuses a node the spec accepts
ORTPOOL_REJECTED = "ortpool-rejected"  # the spec refuses a node the runtime runs
BOTH_REJECTED = "both-rejected"
NO_KERNEL = "no-kernel"
NOT_COMPARED = "not-compared"  # nothing could be compared (no input to judge it on)
FIXED = "fixed"  # a form 'ortpool fix' wrote, judged exact as it stands in the model
ORTPOOL_OP = "ortpool-op"  # a node of the ortpool domain: it runs ortpool's kernel
CRASHED = "crashed"  # the runtime's process died on the node (another runtime than onnxruntime)
TIMED_OUT = "timed-out"  # the runtime gave no answer in time

#: statuses that are differences between the runtime and the spec (exit code 1): a runtime
#: that dies or hangs on a node the spec defines computes no spec result either
FAILING = (DIFFER, INACCURATE, ORT_REJECTED, ORTPOOL_REJECTED, CRASHED, TIMED_OUT)
#: statuses whose difference is one of semantics (the rest of FAILING is accuracy)
SEMANTICS = (DIFFER, ORT_REJECTED, ORTPOOL_REJECTED, RULINGS, NO_KERNEL)
#: statuses that computed the spec's result
AGREEING = (AGREE, TIES, ACCURACY_NOTE, FIXED, ORTPOOL_OP)
#: display order, most severe first
ORDER = (DIFFER, INACCURATE, ORT_REJECTED, ORTPOOL_REJECTED, CRASHED, TIMED_OUT, RULINGS,
         NO_KERNEL, BOTH_REJECTED, NOT_COMPARED, FIXED, ORTPOOL_OP, ACCURACY_NOTE, TIES, AGREE)

# What became of a whole model. One that ran is AGREE, DIFFER or NOT_COMPARED; the others exit 2.
#: the validator refused or failed on it, with the reason (unreadable, an input it cannot size...)
COULD_NOT_RUN = "could-not-run"
#: model statuses, most severe first (a run's status is its first one present)
MODEL_ORDER = (CRASHED, TIMED_OUT, COULD_NOT_RUN, DIFFER, NOT_COMPARED, AGREE)


def worst(statuses: list[str] | tuple[str, ...]) -> str:
    """The most severe of ``statuses`` (:data:`ORDER`); AGREE for none."""
    return min(statuses, key=ORDER.index, default=AGREE)
