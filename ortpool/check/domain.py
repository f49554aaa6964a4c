"""The input domain a verdict is about (ruling 20 of docs/rulings.md).

Every command that judges a node (``validate``'s verdict, ``fix``'s proofs, ``conformance``'s
cases) judges it on one domain of inputs, the same for the same flag:

* **finite** (the default): every finite value of the element type. The built cases of ruling 18
  without NaN and +-inf: ties, the lowest and highest finite values, windows partly or wholly
  padding, empty windows, at the real size.
* **non-finite** (``--nonfinite``, ``nonfinite=True``): those and NaN, +inf and -inf at every tap
  position of every window, windows of -inf only, of NaN only.

Why finite by default: NaN propagation (ruling 6) stands, but guarding it costs real models
1.3-1.8x of their run time for inputs their pipelines (normalized images, audio features) never
produce. In the finite domain ``validate`` still runs each node's non-finite cases and reports what
they show as information (it does not change the exit code), so the choice is made knowing both
its meaning and its price.
"""

from __future__ import annotations

#: The two domains' names, as reports print them.
FINITE = "finite"
NONFINITE = "non-finite"

#: The element values outside the finite domain, as the built cases name them.
NONFINITE_VALUES = ("NaN", "+inf", "-inf")


def name(nonfinite: bool) -> str:
    """The domain's name: ``name(False) == "finite"``, ``name(True) == "non-finite"``."""
    return NONFINITE if nonfinite else FINITE


def describe(nonfinite: bool) -> str:
    """One line for a report header: what the verdicts below cover."""
    if nonfinite:
        return "non-finite domain: finite inputs and NaN, +inf, -inf at every tap position"
    return "finite domain: every finite input value (NaN and +-inf: --nonfinite)"
