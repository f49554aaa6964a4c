"""The engine that judges a pooling node: one description, one set of inputs, one verdict.

``validate``'s verdict, ``fix``'s "unchanged" and the proof of each of its forms all come from
:func:`judge`, so the commands cannot disagree: :mod:`~ortpool.check.cases` gives the inputs (the
captured ones and ruling 18's built cases, in the domain of ruling 20: :mod:`~ortpool.check.domain`)
and the spec's answer, :mod:`~ortpool.check.compare` compares one output (max values and Indices
exact, sums by ruling 17), :mod:`~ortpool.check.status` names the verdicts and
:mod:`~ortpool.check.causes` says why a node differs. A node is described once
(:class:`ortpool.model.site.Site`).
"""

from __future__ import annotations

from ortpool.check.domain import FINITE, NONFINITE
from ortpool.lazy import lazy_names

#: public name -> module: the judge opens sessions (onnxruntime), the cases bring the kernels
_LAZY = {
    "FeedSet": "ortpool.check.cases",
    "Judgement": "ortpool.check.judge",
    "TensorComparison": "ortpool.check.compare",
    "compare_indices": "ortpool.check.compare",
    "compare_values": "ortpool.check.compare",
    "expect": "ortpool.check.cases",
    "judge": "ortpool.check.judge",
    "proof_sets": "ortpool.check.cases",
}
__all__ = ["FINITE", "NONFINITE", *_LAZY]

__getattr__ = lazy_names(__name__, _LAZY)
