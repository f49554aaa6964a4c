"""The limits a pooling call must respect, checked from the geometry before anything is allocated:
attributes that fit int64 can still ask for absurd work (``pads=[10**9] * 4`` on a 4x4 input is
4 * 10**18 outputs), which would look like a hang or kill the process. Every figure counts at
least one plane (an empty batch is refused as a batch of one would be)."""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence

import numpy as np

from ortpool.errors import OrtpoolError
from ortpool.geometry import AxisGeometry, PoolGeometry
from ortpool.kernels import _memory

#: Bytes of any one array a call allocates (Y, Indices, an intermediate): 4 GiB, above every real
#: pooling layer (VGG's first MaxPool at batch 256: 822 MB of output).
MAX_OUTPUT_BYTES = 1 << 32
#: Input elements the windows of a call read, summed over the passes (and Indices' window loop):
#: 2**38, about five minutes of the compiled kernels on one core.
MAX_READS = 1 << 38

#: Allocations below this are not checked against the memory the process can hold (a reading
#: costs about 130 µs, writing 64 MB at least 10 ms).
MEMORY_CHECK_BYTES = 64 << 20

OUTPUT_ENV = "ORTPOOL_MAX_OUTPUT_BYTES"
READS_ENV = "ORTPOOL_MAX_READS"


def env_count(env: str, default: int) -> int:
    """The positive integer ``env`` sets, else ``default`` (warned when set otherwise); read at
    each use, so a change between calls counts."""
    text = os.environ.get(env, "").strip()
    # ASCII digits: str.isdigit takes '²', which int() refuses
    if text.isascii() and text.isdigit() and int(text) > 0:
        return int(text)
    if text:
        warnings.warn(f"{env}={text!r} is not a positive integer: using {default}", stacklevel=3)
    return default


def _elements(shape: Sequence[int]) -> int:
    """Elements of ``shape``, each size taken as at least 1 (an empty axis is still counted)."""
    return max(1, shape[0] * shape[1]) * math.prod(max(1, n) for n in shape[2:])


def output_limit() -> int:
    """Bytes any one array may take: :data:`MAX_OUTPUT_BYTES` or ``ORTPOOL_MAX_OUTPUT_BYTES``."""
    return env_count(OUTPUT_ENV, MAX_OUTPUT_BYTES)


def check_array(what: str, shape: Sequence[int], dtype: np.dtype) -> None:
    """``what`` of ``shape`` and ``dtype`` must fit :data:`MAX_OUTPUT_BYTES`."""
    cap = output_limit()
    nbytes = _elements(shape) * np.dtype(dtype).itemsize
    if nbytes > cap:
        raise OrtpoolError(f"{what} of shape {list(shape)} ({np.dtype(dtype).name}) would take "
                           f"{nbytes} bytes (counting at least one plane); the limit is {cap} "
                           f"bytes ({OUTPUT_ENV})", limit=True)


def check_memory(what: str, nbytes: int, reserved: int | None = None, reusable: int = 0) -> None:
    """``what`` (what the bytes are, for the message) must fit the memory the process can still
    allocate under every limit, counting the ``reusable`` bytes it holds as free: ``nbytes``
    written under the limits on memory, ``reserved`` (default ``nbytes``) under those on address
    space. Not checked when ``nbytes`` less ``reusable`` is below :data:`MEMORY_CHECK_BYTES`."""
    reserved = nbytes if reserved is None else reserved
    if nbytes - reusable < MEMORY_CHECK_BYTES:
        return
    short = None
    for room in _memory.rooms():
        need = reserved if room.address_space else nbytes
        margin = room.free + reusable - need
        if margin < 0 and (short is None or margin < short[0]):
            short = (margin, need, room)
    if short is not None:
        _, need, room = short
        kind = " of address space" if room.address_space else ""
        held = f", and reuse {reusable} bytes it holds" if reusable else ""
        raise OrtpoolError(f"{what} would take {need} bytes{kind}; the process can allocate "
                           f"{max(room.free, 0)} more ({room.source}){held}", limit=True)


def check_pool(
    geom: PoolGeometry, shape: Sequence[int], out_dtype: np.dtype, work_dtype: np.dtype,
    order: Sequence[int], indices: bool = False,
) -> None:
    """Y (and Indices), the intermediates of the passes in ``order`` and the reads, in limits."""
    out_shape = (*shape[:2], *geom.output_spatial)
    check_array("the output Y", out_shape, out_dtype)
    if indices:
        check_array("the output Indices", out_shape, np.dtype(np.int64))
    active = [a for a in order if not geom.axes[a].is_identity]
    # With Indices, the numpy search keeps the input max-pooled over the last axes (_first_match).
    orders = [active, list(range(len(geom.axes) - 1, -1, -1))] if indices else [active]
    for passes in orders:
        spatial = list(shape[2:])
        for a in passes[:-1]:
            spatial[a] = geom.axes[a].out
            what = f"the intermediate after the pass over spatial axis {a}"
            check_array(what, (*shape[:2], *spatial), work_dtype)
    cap = env_count(READS_ENV, MAX_READS)
    # A bound first (O(rank)); the exact count (per border output) only when it is over.
    bounds = [_reads_bound(g) for g in geom.axes]
    if _reads(geom, shape, active, indices, bounds) <= cap:
        return
    reads = _reads(geom, shape, active, indices, [g.taps_inside() for g in geom.axes])
    if reads > cap:
        raise OrtpoolError(f"the windows would read {reads} input elements (counting at least one "
                           f"plane; kernel_shape {[g.k for g in geom.axes]}, output "
                           f"{list(out_shape)}); the limit is {cap} ({READS_ENV})", limit=True)


def _reads_bound(g: AxisGeometry) -> int:
    """At least :meth:`~ortpool.geometry.AxisGeometry.taps_inside`, in O(1)."""
    return min(g.out * min(g.k, -(-g.n // g.d)), g.n * min(g.k, g.out))


def _reads(geom: PoolGeometry, shape: Sequence[int], active: list[int], indices: bool,
           per_axis: list[int]) -> int:
    """Reads of the passes in ``active`` order, plus Indices' window loop (one plane at least)."""
    planes, spatial, reads = max(1, shape[0] * shape[1]), list(shape[2:]), 0
    for a in active:
        reads += planes * math.prod(spatial[:a] + spatial[a + 1 :]) * per_axis[a]
        spatial[a] = geom.axes[a].out
    if indices:
        reads += planes * math.prod(per_axis)
    return reads
