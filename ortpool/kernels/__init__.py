"""The pooling kernels as plain numpy functions, usable without onnxruntime.

``max_pool(x, version=12, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])`` and likewise
``average_pool`` and ``max_unpool``; see each function for its attributes. ``window_max(x, geom)``
is MaxPool's Y for a resolved :class:`~ortpool.geometry.PoolGeometry`.
"""

from ortpool.kernels.avgpool import average_pool
from ortpool.kernels.maxpool import max_pool, window_max
from ortpool.kernels.maxunpool import max_unpool

__all__ = ["average_pool", "max_pool", "max_unpool", "window_max"]
