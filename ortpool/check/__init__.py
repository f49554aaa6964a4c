"""The engine that judges a pooling node: one description, one set of inputs, one verdict.

``validate``'s verdict on a node, ``fix``'s decision to leave it unchanged and the proof of each
of its forms come from here, so that the commands cannot disagree:

* :mod:`ortpool.check.domain`: the input domain (ruling 20: finite by default, non-finite by
  choice);
* :mod:`ortpool.check.status`: what the engine can say of a node and of a model;
* :mod:`ortpool.check.cases`: the inputs a node is judged on (the captured ones and the cases
  ruling 18 names, built) and the spec's answer for each;
* :mod:`ortpool.check.compare`: one output against the spec's (max values and Indices exact,
  sums by ruling 17's accuracy rule);
* :mod:`ortpool.check.causes`: why a node differs, where its attributes and input show it;
* :mod:`ortpool.check.judge`: a model of the node (as it is, or a form of it) run on those
  inputs at the runtime's optimization level and compared with the spec: a :class:`Judgement`.

A node is described once, by :class:`ortpool.model.site.Site`. The layer sits above ``ort`` (it
opens sessions) and below ``rewrite``, ``validate`` and ``fix``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ortpool.check.domain import FINITE, NONFINITE
from ortpool.lazy import lazy_names

if TYPE_CHECKING:
    from ortpool.check.cases import FeedSet, expect, proof_sets
    from ortpool.check.compare import TensorComparison, compare_indices, compare_values
    from ortpool.check.judge import Judgement, judge

#: public name -> module: the judge opens sessions (onnxruntime), the cases bring the kernels
_LAZY = {
    "FeedSet": "ortpool.check.cases",
    "expect": "ortpool.check.cases",
    "proof_sets": "ortpool.check.cases",
    "TensorComparison": "ortpool.check.compare",
    "compare_indices": "ortpool.check.compare",
    "compare_values": "ortpool.check.compare",
    "Judgement": "ortpool.check.judge",
    "judge": "ortpool.check.judge",
}

__all__ = [
    "FINITE",
    "NONFINITE",
    "FeedSet",
    "Judgement",
    "TensorComparison",
    "compare_indices",
    "compare_values",
    "expect",
    "judge",
    "proof_sets",
]

__getattr__ = lazy_names(__name__, _LAZY)
