"""Output shapes of a pooling call, without computing it: a failed call's placeholder in the
onnxruntime hook must have the node's shape (onnxruntime may have allocated the output already)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ortpool.errors import OrtpoolError
from ortpool.geometry import unpool_output_spatial
from ortpool.kernels._calls import attrs_for, geometry_for
from ortpool.versions import GLOBAL_OPERATORS


def output_shape(
    op: str, version: int, x_shape: Sequence[int], attributes: Mapping[str, Any],
    unpool_shape: Any = None, rois_shape: Sequence[int] | None = None,
) -> tuple[int, ...]:
    """Y's shape for ``op``-``version`` on an input of ``x_shape``, with MaxUnpool's
    ``output_shape`` input or the shape of MaxRoiPool's rois where the node has them; an
    :class:`OrtpoolError` when the attributes or the shape admit no output."""
    shape = tuple(int(v) for v in x_shape)
    if len(shape) < 3:
        raise OrtpoolError(f"input X has shape {list(shape)}; pooling needs (N, C, D1, ...)")
    attrs = attrs_for(op, version, attributes, len(shape) - 2)
    if op in GLOBAL_OPERATORS:
        return (*shape[:2], *(1,) * (len(shape) - 2))
    if op == "MaxRoiPool":
        if rois_shape is None or len(rois_shape) != 2:
            raise OrtpoolError(f"input rois has shape {rois_shape}; it must be (num_rois, 5)")
        return (int(rois_shape[0]), shape[1], *attrs.pooled_shape)
    if op != "MaxUnpool":
        return (*shape[:2], *geometry_for(shape[2:], attrs).output_spatial)
    if unpool_shape is None:
        return (*shape[:2], *unpool_output_spatial(shape[2:], attrs))
    given = np.asarray(unpool_shape)
    if given.ndim != 1 or given.size != len(shape) or given.dtype.kind not in "iu":
        raise OrtpoolError(f"output_shape={given.tolist()} is not {len(shape)} integers")
    return tuple(int(v) for v in given)
