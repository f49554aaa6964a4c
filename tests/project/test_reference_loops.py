"""tests/support/reference_loops.py, the property tests' reference: its LpPool arithmetic is
what it says (60-digit sums, the p-th root rounded once), since every LpPool and GlobalLpPool
check leans on it."""

from __future__ import annotations

import decimal
import random

import numpy as np
import pytest

from tests.support import reference_loops as ref

D = decimal.Decimal


def _power_root(total: decimal.Decimal, p) -> float:
    """The p-th root as Decimal's power computes it (correctly rounded to 60 digits)."""
    return float(ref._DIGITS.power(total, ref._DIGITS.divide(D(1), D(p))))


def test_nth_root_gives_the_doubles_of_decimal_power_at_every_magnitude():
    rng = random.Random(19)
    totals = []
    for _ in range(400):
        n = rng.choice([1, 2, 3, 4, 5, 7, 16, 64])
        scale = rng.choice([0, 1, 30, 300, 3000, -300, -3000, -20000, 200000])
        totals.append((ref._DIGITS.scaleb(D(rng.random()), scale), n))
        base = D(rng.randint(1, 1000))  # exact powers: the root is an integer
        totals.append((ref._DIGITS.power(base, n), n))
    for total, n in totals:
        if total:
            assert ref._lp_root(total, n) == _power_root(total, n), (total, n)
    assert ref._lp_root(ref._DIGITS.power(D(987), 7), 7) == 987.0
    assert ref._lp_root(D(2), 2) == 2.0**0.5  # sqrt is correctly rounded, in 60 digits too


def test_lp_terms_are_summed_in_60_digits_whatever_the_thread_context():
    # |1e20|^2 + |1|^2 = 1e40 + 1: 41 digits, lost at the default context's 28
    with decimal.localcontext(decimal.Context(prec=28)):
        total = ref._lp_terms_sum([1e20, -1.0], 2)
    assert total == D(10**40 + 1)
    assert ref._lp_terms_sum([np.inf, 1.0], 3) == np.inf
    assert ref._lp_terms_sum([0.25, 0.25], 1.5) == D(0.25**1.5) * 2


@pytest.mark.parametrize(
    ("values", "p", "expected"),
    [([3.0, -4.0], 2, 5.0), ([1e100] * 8, 3, 2e100), ([2.0, 2.0], 1, 4.0), ([1.0, 4.0], 0.5, 9.0)],
)
def test_lp_pool_of_one_window(values, p, expected):
    x = np.array(values, np.float64).reshape(1, 1, -1)
    y = ref.lp_pool(x, {"kernel_shape": [len(values)], "p": p})
    assert y.tolist() == [[[expected]]]
