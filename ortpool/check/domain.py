"""The input domain a verdict is about (ruling 20 of docs/rulings.md), the same for every command:
**finite** (the default) every finite value of the element type; **non-finite** (``--nonfinite``)
NaN, +inf and -inf at every tap position too. Finite by default because guarding NaN costs real
models 1.3-1.8x of their run time for inputs their pipelines never produce; ``validate`` still
reports what the non-finite cases show, as information.
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
