"""The pooling kernels as plain numpy functions, usable without onnxruntime.

``max_pool(x, version=12, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])`` and likewise
``average_pool``, ``max_unpool``, ``lp_pool``, ``global_max_pool``, ``global_average_pool``,
``global_lp_pool`` and ``max_roi_pool(x, rois, ...)``; see each function for its attributes.
``run_op(op, version, feeds, attributes)`` calls any of them by operator name.
``window_max(x, geom)`` is MaxPool's Y for a resolved :class:`~ortpool.geometry.PoolGeometry`.
"""

from ortpool.kernels.avgpool import average_pool
from ortpool.kernels.by_op import run as run_op
from ortpool.kernels.globalpool import global_average_pool, global_lp_pool, global_max_pool
from ortpool.kernels.lppool import lp_pool
from ortpool.kernels.maxpool import max_pool, window_max
from ortpool.kernels.maxunpool import max_unpool
from ortpool.kernels.roipool import max_roi_pool

__all__ = [
    "average_pool",
    "global_average_pool",
    "global_lp_pool",
    "global_max_pool",
    "lp_pool",
    "max_pool",
    "max_roi_pool",
    "max_unpool",
    "run_op",
    "window_max",
]
