"""tests/support/strategies.py: ``cells`` draws an input's values from one byte string, ``picks``
an example's small choices from another."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import find, given, settings

from tests.support.strategies import Picks, cells, picks, st


@settings(max_examples=60, database=None, derandomize=True)
@given(st.data())
def test_cells_takes_only_the_choices_and_the_float16_range(data):
    ints = data.draw(cells(7, [0, 1, 2, 128, 254, 255]))
    assert ints.dtype == np.int64 and ints.shape == (7,)
    assert set(ints.tolist()) <= {0, 1, 2, 128, 254, 255}
    floats = data.draw(cells(9, [-1.0, 0.0, np.nan], mixed="float16"))
    assert floats.dtype == np.float64 and floats.shape == (9,)
    drawn = floats[~np.isnan(floats)]
    assert (np.abs(drawn) < 100).all()
    assert (drawn.astype(np.float16).astype(np.float64) == drawn).all()  # float16 values
    outside = data.draw(cells(5, range(3), mixed=[-1, 99]))
    assert set(outside.tolist()) <= {0, 1, 2, -1, 99}
    assert data.draw(cells(0, [1.0])).shape == (0,)


def test_cells_reach_the_mixed_values_and_shrink_to_the_first_choice():
    # Found by hypothesis's search: a draw with a value from ``mixed`` exists...
    found = find(cells(4, [5, 6], mixed=[-7]), lambda v: -7 in v.tolist(),
                 settings=settings(database=None, derandomize=True))
    # ...and it shrinks to one such cell, the others the first choice.
    assert sorted(found.tolist()) == [-7, 5, 5, 5]
    halves = find(cells(3, [2.0], mixed="float16"), lambda v: bool((v % 1 != 0).any()),
                  settings=settings(database=None, derandomize=True))
    assert (halves % 1 != 0).sum() == 1


@pytest.mark.parametrize(
    ("choices", "mixed", "message"),
    [([], None, "cells: no choices to draw from"),
     ([1], "float32", "cells: mixed='float32' is neither values nor 'float16'")],
)
def test_cells_refuses_what_it_cannot_draw(choices, mixed, message):
    with pytest.raises(ValueError, match=message):
        find(cells(2, choices, mixed=mixed), lambda v: True,
             settings=settings(database=None, derandomize=True))


def test_picks_read_one_byte_per_choice_in_turn():
    pick = Picks(bytes([0, 200, 255, 100, 128, 26, 255]))
    assert pick.integer(1, 3) == 1  # byte 0: the lowest
    assert pick.integer(1, 3) == 3  # 200 * 3 // 256 == 2
    assert pick.integer(-128, 127) == 127
    assert pick.choice(["a", "b", "c"]) == "b"  # 100 * 3 // 256 == 1
    assert pick.boolean() is True  # 128 and above
    assert pick.integers(2, 0, 9) == [1, 9]
    with pytest.raises(ValueError, match=r"^picks: all 7 bytes are used: draw picks\(more\)$"):
        pick.boolean()


@pytest.mark.parametrize(("low", "high"), [(0, 256), (5, 4), (-300, 0)])
def test_picks_refuse_a_range_one_byte_cannot_choose_from(low, high):
    with pytest.raises(ValueError, match=rf"^picks: \[{low}, {high}\] is not 1 to 256 integers$"):
        Picks(bytes(4)).integer(low, high)


@settings(max_examples=200, database=None, derandomize=True)
@given(picks(3))
def test_picks_reach_every_value_of_a_small_range(pick):
    assert 0 <= pick.integer(0, 2) <= 2
    assert pick.choice([10, 20]) in (10, 20)


def test_picks_cover_each_range_and_shrink_choice_by_choice():
    seen = set()

    @settings(max_examples=100, database=None, derandomize=True)
    @given(picks(2))
    def collect(pick):
        seen.add((pick.integer(1, 3), pick.boolean()))

    collect()
    assert seen == {(k, b) for k in (1, 2, 3) for b in (False, True)}
    # A search for a first choice of at least 2 and True shrinks choice by choice to the
    # smallest bytes that still give it: 2 of [1, 3] (from the byte 86), True (from 128); the
    # unused bytes to 0.
    found = find(picks(4), lambda p: p.integer(1, 3) >= 2 and p.boolean(),
                 settings=settings(database=None, derandomize=True))
    assert found._raw == bytes([86, 128, 0, 0])
