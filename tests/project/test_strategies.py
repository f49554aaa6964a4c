"""tests/support/strategies.py: ``cells`` draws an input's values from one byte string."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import find, given, settings

from tests.support.strategies import cells, st


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
