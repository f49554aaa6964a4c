"""A node's proof inputs in a model: the captured runs and the built cases at its sizes.

The inputs themselves (the cases ruling 18 names, in the domain of ruling 20) are built by
:mod:`ortpool.check.cases`, the same for ``validate`` and ``fix``; this module picks, for one
site of a model, the shapes they are built at and the captured arrays that belong to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ortpool.check.cases import FeedSet, expect, full_shape, proof_sets, sampled_shapes
from ortpool.model.site import Site


def site_sets(site: Site, captured: Sequence[Mapping[str, np.ndarray]], seed: int = 0,
              nonfinite: bool = False) -> tuple[list[FeedSet], list[str]]:
    """A node's input sets with the spec's outputs, the model's ``captured`` runs first, and
    why the kernels refused the others: its static shape, or sampled shapes when its sizes are
    symbolic (:func:`proof_sets`)."""
    if not site.judgeable:
        raise ValueError(f"site {site.name!r} cannot be judged: {site.reason}")
    mine = []
    for run in captured:
        arrays = [run.get(name) for name in site.node.input if name]
        if all(a is not None for a in arrays):
            mine.append(arrays)
    shape = full_shape(site)
    shapes = [shape] if shape is not None else sampled_shapes(site)
    if shape is not None:
        # The forms of static spatial sizes hold at those sizes, for any batch and channels: the
        # model's own run is kept at whatever N and C the user's inputs give.
        mine = [a for a in mine if tuple(a[0].shape[2:]) == shape[2:]]
    sets = proof_sets(site, shapes, captured=mine, seed=seed, nonfinite=nonfinite,
                      output_shape=site.output_shape)
    refusals: list[str] = []
    return expect(site, sets, refusals), refusals
