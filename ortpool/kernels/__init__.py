"""The pooling kernels as plain numpy functions, usable without onnxruntime.

``max_pool(x, version=12, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])`` and likewise
``average_pool``, ``max_unpool``, ``lp_pool``, ``global_max_pool``, ``global_average_pool``,
``global_lp_pool`` and ``max_roi_pool(x, rois, ...)``; ``run_op`` calls any of them by operator
name. The other names are the process-wide settings and checks the other layers use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ortpool.kernels._backend import NUMBA_MIN_BYTES, backend, prefer_loaded, set_backend
from ortpool.kernels._backend import mode as backend_mode
from ortpool.kernels._buffers import held_bytes as held_output_bytes
from ortpool.kernels._buffers import reuse_outputs
from ortpool.kernels._calls import forget as forget_plans
from ortpool.kernels._compile_note import set_relay as set_compile_relay
from ortpool.kernels._limits import MEMORY_CHECK_BYTES, check_array, check_memory, output_limit
from ortpool.kernels._memory import memory_room
from ortpool.kernels._parallel import set_thread_count, thread_count, usable_cores
from ortpool.kernels._plan import average_pool, lp_pool, max_pool, window_max
from ortpool.kernels.globalpool import global_average_pool, global_lp_pool, global_max_pool
from ortpool.kernels.maxunpool import max_unpool
from ortpool.kernels.roipool import max_roi_pool

#: The kernel of each operator but MaxPool, called with the node's present inputs in order.
_KERNELS = {"AveragePool": average_pool, "MaxUnpool": max_unpool, "LpPool": lp_pool,
            "GlobalMaxPool": global_max_pool, "GlobalAveragePool": global_average_pool,
            "GlobalLpPool": global_lp_pool, "MaxRoiPool": max_roi_pool}


def run_op(
    op: str, version: int, feeds: Sequence[np.ndarray], attributes: Mapping[str, Any],
    n_outputs: int = 1,
) -> tuple[np.ndarray, ...]:
    """The outputs of ``op``-``version`` on ``feeds`` (the node's present inputs, in order);
    ``n_outputs`` 2 asks MaxPool for Indices too. Errors are :class:`~ortpool.OrtpoolError`."""
    if op == "MaxPool":
        result = max_pool(feeds[0], version=version, return_indices=n_outputs > 1, **attributes)
        return result if n_outputs > 1 else (result,)
    return (_KERNELS[op](*feeds, version=version, **attributes),)


__all__ = ["MEMORY_CHECK_BYTES", "NUMBA_MIN_BYTES", "average_pool", "backend", "backend_mode",
           "check_array", "check_memory", "forget_plans", "global_average_pool", "global_lp_pool",
           "global_max_pool", "held_output_bytes", "lp_pool", "max_pool", "max_roi_pool",
           "max_unpool", "memory_room", "output_limit", "prefer_loaded", "reuse_outputs", "run_op",
           "set_backend", "set_compile_relay", "set_thread_count", "thread_count", "usable_cores",
           "window_max"]
