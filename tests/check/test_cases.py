"""The built cases (``ortpool.check.cases``): where each case's marks land in its plane."""

from __future__ import annotations

import numpy as np

from ortpool.check.cases import constructed_sets
from tests.support.judging import site_of


def test_a_case_marks_exactly_its_lattice_of_the_plane():
    """MaxPool k=3x3 on X [1, 64, 7, 8]: the lattice spacing is 3 per axis, so "NaN at tap
    (1, 2)" puts NaN at every row r with r % 3 == 1 and column c with c % 3 == 2 (rows 1 and 4,
    columns 2 and 5: one NaN in every window) and the fill everywhere else."""
    x = np.zeros((1, 64, 7, 8), np.float32)
    site = site_of("MaxPool", 12, {"kernel_shape": [3, 3]}, [x])
    sets = constructed_sets(site, x.shape, np.random.default_rng(0), nonfinite=True)
    found = {label: (s, nc) for s in sets for nc, label in s.cases.items()}
    feed, (n, c) = found["NaN at tap (1, 2)"]
    plane = feed.arrays[0][n, c]
    assert [tuple(int(v) for v in p) for p in np.argwhere(np.isnan(plane))] == [
        (1, 2), (1, 5), (4, 2), (4, 5)]
    assert np.isfinite(np.delete(plane.reshape(-1), [10, 13, 34, 37])).all()
    # the last offset of the first axis: rows 2 and 5 (row 8 is past the plane), columns 0, 3, 6
    feed, (n, c) = found["+inf at tap (2, 0)"]
    plane = feed.arrays[0][n, c]
    assert [tuple(int(v) for v in p) for p in np.argwhere(plane == np.inf)] == [
        (2, 0), (2, 3), (2, 6), (5, 0), (5, 3), (5, 6)]
    assert np.isfinite(plane).sum() == 7 * 8 - 6
