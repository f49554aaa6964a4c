"""MaxUnpool, every spec version: a scatter into the flat output (ruling 9)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ortpool.errors import OrtpoolError
from ortpool.geometry import unpool_output_spatial
from ortpool.kernels import _backend, _buffers, _limits, _parallel
from ortpool.kernels._calls import checked, located


def max_unpool(
    x: np.ndarray, indices: np.ndarray, output_shape: np.ndarray | None = None, *,
    version: int = 22, **attributes: Any,
) -> np.ndarray:
    """MaxUnpool of spec version ``version``: ``Y.flat[I[j]] = X.flat[j]``, zeros elsewhere.
    Without ``output_shape`` the spatial size is ``(n - 1) * s - pb - pe + k`` per axis; with it,
    the output has exactly that shape and ``pads`` are ignored. Duplicate indices: the last write
    wins. An index outside ``[0, Y.size)`` is an error."""
    with located("MaxUnpool", version):
        attrs = checked("MaxUnpool", version, x, attributes)
        # With output_shape the pads are ignored (ruling 9): the default size, which may be
        # negative for large pads, is computed only when it is used.
        default = unpool_output_spatial(x.shape[2:], attrs) if output_shape is None else ()
        shape = _output_shape(x, indices, output_shape, default)
        _limits.check_array("the output Y", shape, x.dtype)
        y = _buffers.output(shape, x.dtype)
        y.fill(0)
        flat = indices.reshape(-1)
        if not flat.size or _compiled_scatter(y, x, flat):
            return y
        # A large output is scattered in two halves on two threads when their index ranges are
        # disjoint (as MaxPool's always are), so that no index is written by both.
        cut = flat.size // 2 if y.nbytes >= _parallel.MIN_PARALLEL_BYTES else 0
        parts = [(0, cut), (cut, flat.size)] if cut else [(0, flat.size)]
        ranges = [(int(flat[lo:hi].min()), int(flat[lo:hi].max())) for lo, hi in parts]
        low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
        if low < 0 or high >= y.size:
            source = "output_shape" if output_shape is not None else "the attributes"
            valid = f"valid: 0 to {y.size - 1}" if y.size else "it is empty: no index is valid"
            raise OrtpoolError(f"index {low if low < 0 else high} in I is outside the output of "
                               f"shape {list(shape)} set by {source} ({valid})")
        # numpy assigns repeated indices in order, so the last write wins.
        y_flat, x_flat = y.reshape(-1), x.reshape(-1)
        if cut and ranges[0][1] < ranges[1][0]:

            def scatter(lo: int, hi: int) -> None:
                y_flat[flat[lo:hi]] = x_flat[lo:hi]

            _parallel.run(parts, scatter, y.nbytes)
        else:
            y_flat[flat] = x_flat
    return y


def _compiled_scatter(y: np.ndarray, x: np.ndarray, flat: np.ndarray) -> bool:
    """Scatter with the compiled loop; False when not in use or an index is outside."""
    scatter = _backend.loop("scatter", x.dtype, x.nbytes)
    if scatter is None:
        return False
    y_flat = y.reshape(-1)
    bad = scatter(y_flat, _buffers.read_only(x).reshape(-1), _buffers.read_only(flat))
    if bad < 0:
        return True
    y.fill(0)
    return False


def _output_shape(
    x: np.ndarray, indices: np.ndarray, output_shape: np.ndarray | None,
    default_spatial: tuple[int, ...],
) -> tuple[int, ...]:
    if not isinstance(indices, np.ndarray) or indices.dtype != np.int64:
        raise OrtpoolError("input I must be an int64 array, got "
                           f"{getattr(indices, 'dtype', type(indices))}")
    if indices.shape != x.shape:
        raise OrtpoolError(f"input I has shape {list(indices.shape)} but X has shape "
                           f"{list(x.shape)}")
    default = (*x.shape[:2], *default_spatial)
    if output_shape is None:
        return default
    given = np.asarray(output_shape)
    if given.dtype != np.int64 or given.ndim != 1 or given.size != x.ndim:
        raise OrtpoolError(f"output_shape={given.tolist()} must be a 1-D int64 tensor of {x.ndim} "
                           "values (the rank of X)")
    shape = tuple(int(v) for v in given)
    if shape[:2] != tuple(x.shape[:2]):
        raise OrtpoolError(f"output_shape={list(shape)} must keep X's batch and channel sizes "
                           f"{list(x.shape[:2])}")
    if any(g < 0 for g in shape):
        raise OrtpoolError(f"output_shape={list(shape)} has a negative size")
    # No lower bound from the attributes: MaxPool in ceil mode feeds MaxUnpool an output_shape
    # below the default size. An output too small for the indices fails the index check.
    return shape
