"""One entry point for every operator: the kernel call of a node given its inputs and attributes.

The onnxruntime registration, the validator's direct kernel runs and the benchmark's numpy API
column all call a node through :func:`run`, so an operator is wired in once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ortpool.kernels.avgpool import average_pool
from ortpool.kernels.globalpool import global_average_pool, global_lp_pool, global_max_pool
from ortpool.kernels.lppool import lp_pool
from ortpool.kernels.maxpool import max_pool
from ortpool.kernels.maxunpool import max_unpool
from ortpool.kernels.roipool import max_roi_pool

Outputs = tuple[np.ndarray, ...]


def _max_pool(feeds: Sequence[np.ndarray], version: int, attrs: dict, n_outputs: int) -> Outputs:
    result = max_pool(feeds[0], version=version, return_indices=n_outputs > 1, **attrs)
    return result if n_outputs > 1 else (result,)


def _max_unpool(feeds: Sequence[np.ndarray], version: int, attrs: dict, n_outputs: int) -> Outputs:
    shape = feeds[2] if len(feeds) > 2 else None
    return (max_unpool(feeds[0], feeds[1], shape, version=version, **attrs),)


def _single(kernel: Callable[..., np.ndarray]) -> Callable[..., Outputs]:
    def call(feeds: Sequence[np.ndarray], version: int, attrs: dict, n_outputs: int) -> Outputs:
        return (kernel(*feeds, version=version, **attrs),)

    return call


_KERNELS: dict[str, Callable[..., Outputs]] = {
    "MaxPool": _max_pool,
    "AveragePool": _single(average_pool),
    "MaxUnpool": _max_unpool,
    "LpPool": _single(lp_pool),
    "GlobalMaxPool": _single(global_max_pool),
    "GlobalAveragePool": _single(global_average_pool),
    "GlobalLpPool": _single(global_lp_pool),
    "MaxRoiPool": _single(max_roi_pool),
}


def run(
    op: str,
    version: int,
    feeds: Sequence[np.ndarray],
    attributes: Mapping[str, Any],
    n_outputs: int = 1,
) -> Outputs:
    """The outputs of ``op``-``version`` on ``feeds`` (the node's present inputs, in order).

    ``n_outputs`` 2 asks MaxPool for Indices too. Errors are :class:`~ortpool.OrtpoolError`.
    """
    return _KERNELS[op](feeds, version, dict(attributes), n_outputs)
