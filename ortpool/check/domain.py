"""The input domain a verdict is about, the same for every command (ruling 20 of docs/rulings.md
says why finite is the default): **finite** every finite value of the element type;
**non-finite** (``--nonfinite``) NaN, +inf and -inf at every tap position too.
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
