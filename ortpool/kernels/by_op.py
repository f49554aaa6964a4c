"""One entry point for every operator: the kernel call of a node given its inputs and attributes.

The onnxruntime registration, the validator's direct kernel runs and the benchmark's numpy API
column all call a node through :func:`run`, so an operator is wired in once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ortpool.kernels.avgpool import average_pool
from ortpool.kernels.globalpool import global_average_pool, global_lp_pool, global_max_pool
from ortpool.kernels.lppool import lp_pool
from ortpool.kernels.maxpool import max_pool
from ortpool.kernels.maxunpool import max_unpool
from ortpool.kernels.roipool import max_roi_pool

#: The kernel of each operator but MaxPool, called with the node's present inputs in order.
_KERNELS = {
    "AveragePool": average_pool,
    "MaxUnpool": max_unpool,
    "LpPool": lp_pool,
    "GlobalMaxPool": global_max_pool,
    "GlobalAveragePool": global_average_pool,
    "GlobalLpPool": global_lp_pool,
    "MaxRoiPool": max_roi_pool,
}


def run(
    op: str,
    version: int,
    feeds: Sequence[np.ndarray],
    attributes: Mapping[str, Any],
    n_outputs: int = 1,
) -> tuple[np.ndarray, ...]:
    """The outputs of ``op``-``version`` on ``feeds`` (the node's present inputs, in order).

    ``n_outputs`` 2 asks MaxPool for Indices too. Errors are :class:`~ortpool.OrtpoolError`.
    """
    if op == "MaxPool":
        result = max_pool(feeds[0], version=version, return_indices=n_outputs > 1, **attributes)
        return result if n_outputs > 1 else (result,)
    return (_KERNELS[op](*feeds, version=version, **attributes),)
