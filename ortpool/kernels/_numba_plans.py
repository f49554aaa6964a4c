"""The compiled back-end's plans: the passes of a call as :func:`._passes.pass_rows` (one int64
row per pass), run by the compiled loops of :mod:`ortpool.kernels._numba` over blocks of planes
seen as one plane, and the split of planes across threads. numba itself is never imported here:
a plan is handed its compiled loop by :func:`ortpool.kernels._backend.loop`."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ortpool.geometry import AxisGeometry, PoolGeometry, index_multipliers
from ortpool.kernels import _parallel
from ortpool.kernels._buffers import output, read_only, scratch
from ortpool.kernels._passes import INNER, OUT, OUTER, N, PlaneShape, pass_rows

#: Input bytes of a block of planes. A block is seen as one plane with ``planes`` times the
#: outer rows (``pass_rows``' OUTER column), so each pass is one call over the block instead
#: of one per plane, and a flat inner pass one loop (the plane seams are row seams, redone like
#: the others); a block small enough keeps its intermediates in cache between passes. A plane
#: larger than this is a block of its own. Kernel alone, one thread, in-process A/B, time
#: against the whole input as one block (256 KB / 1 MB / 4 MB blocks): ResNet stem 1.13 / 1.07
#: / 1.14, VGG 1.24 / 1.02 / 1.01, DenseNet 1.16 / 1.05 / 1.02, Inception 1.08 / 1.07 / 1.01,
#: 3-D 0.94 / 0.82 / 1.00, 1-D 1.35 / 0.94 / 0.98; against the kernel called once for all
#: planes, each plane on its own: Inception 0.66, 1-D 0.74, VGG 0.76, DenseNet 0.83. Same
#: size as the numpy plans' blocks (``_numpy_loops.BLOCK_BYTES``), measured apart.
NUMBA_BLOCK_BYTES = 1 << 20


def scratch_sizes(info: np.ndarray) -> tuple[int, int]:
    """(elements of each intermediate buffer, of the phase buffer) for the passes ``info``: the
    largest target of a pass but the last (which writes the output), the largest source of a
    pass (an inner pass splits its source into phases); at least 1."""
    sizes = info[:, OUTER] * info[:, INNER]
    inter = int((sizes[:-1] * info[:-1, OUT]).max(initial=1))
    phases = int((sizes * info[:, N]).max(initial=1))
    return inter, phases


def _work_sizes(info: np.ndarray) -> tuple[int, int]:
    inter, phases = scratch_sizes(info)
    return inter, 2 * inter + phases


class _NumbaSeparablePlan(PlaneShape):
    def __init__(
        self, kernel: Callable, geom: PoolGeometry, shape: tuple[int, ...], dtype: np.dtype, order
    ):
        super().__init__(geom, shape, dtype)
        #: The compiled loop (``max_planes`` or ``average_planes``) for ``dtype``.
        self.kernel = kernel
        self.info = pass_rows(geom, order)
        self.in_plane = math.prod(shape[2:])
        self.out_plane = math.prod(geom.output_spatial)
        plane_bytes = max(1, self.in_plane * dtype.itemsize)
        self.block = max(1, min(self.planes, NUMBA_BLOCK_BYTES // plane_bytes))
        # The blocks of an unsplit call: full ones and the last; their passes and scratch
        # sizes are computed once.
        self._blocks = {
            n: (info, _work_sizes(info))
            for n in {self.block, self.planes % self.block or self.block}
            for info in [self._block_info(n)]
        }

    def _block_info(self, planes: int) -> np.ndarray:
        """The passes of ``planes`` consecutive planes seen as one plane."""
        info = self.info.copy()
        info[:, OUTER] *= planes
        return info

    def _launch(
        self, src: np.ndarray, dst: np.ndarray, info: np.ndarray, planes: int,
        work: np.ndarray, inter: int,
    ) -> None:
        """Run the kernel over one block ``src`` -> ``dst`` (one row each) of ``planes`` planes,
        through ``work`` (two intermediates of ``inter`` elements, then the phases)."""
        raise NotImplementedError

    def _run(self, x: np.ndarray) -> np.ndarray:
        planes = self.planes
        y = output(self.out_shape, self.dtype)
        if not y.size:
            return y
        if planes == self.block and len(self.info):
            # One block (every small call): straight to the kernel, nothing computed per call.
            info, (inter, size) = self._blocks[planes]
            self._launch(
                read_only(x).reshape(1, -1), y.reshape(1, -1), info, planes,
                scratch((size,), self.dtype, "numba"), inter,
            )
            return y
        src = read_only(x).reshape(planes, self.in_plane)
        dst = y.reshape(planes, self.out_plane)
        if not len(self.info):
            np.copyto(dst, src)
            return y

        def work(lo: int, hi: int) -> None:
            for first in range(lo, hi, self.block):
                last = min(hi, first + self.block)
                count = last - first
                if count in self._blocks:
                    info, (inter, size) = self._blocks[count]
                else:  # a thread's share of a split call
                    info = self._block_info(count)
                    inter, size = _work_sizes(info)
                # Allocated in the kernel at each call, a multi-megabyte scratch buffer came
                # from mmap and faulted in every page (the ResNet stem took 3 ms in a session).
                scratch_buffer = scratch((size,), self.dtype, "numba")
                self._launch(
                    src[first:last].reshape(1, -1), dst[first:last].reshape(1, -1), info,
                    count, scratch_buffer, inter,
                )

        # Input bytes times passes: the work, to decide whether a second thread pays.
        work_bytes = self.nbytes * len(self.info)
        split_bytes = work_bytes if work_bytes >= NUMBA_SPLIT_WORK else 0
        _parallel.split(planes, [(0, planes)], work, split_bytes)
        return y


#: Input bytes times passes from which a compiled call is split across threads. Waking a
#: worker costs about 0.1 ms, and inside a session onnxruntime's own pool threads may still be
#: spinning on the second core. Measured in ``ortpool bench`` (ORTPOOL_THREADS=1 vs 2, two runs
#: each, session.run): ResNet stem (3.2 MB x 2 passes) 560/819 µs on one thread, 1.20/1.13 ms
#: split; 3-D (6.4 MB x 3) 1.80/2.64 vs 2.10/2.05 ms; VGG (12.8 MB x 2) 3.37/5.27 vs
#: 3.29/3.81 ms. Outside a session a split paid from about 6 MB x passes (ResNet 460 -> 318 µs).
NUMBA_SPLIT_WORK = 20 << 20


class NumbaMaxValuesPlan(_NumbaSeparablePlan):
    """Y of MaxPool, compiled: separable passes per plane, in :func:`max_axis_order`."""

    def __init__(self, kernel: Callable, geom: PoolGeometry, shape: tuple[int, ...],
                 dtype: np.dtype, order, ident: Any):
        super().__init__(kernel, geom, shape, dtype, order)
        #: An empty window's value: the input type's lowest (int8/uint8 run as float32 keep
        #: their own), in ``dtype``.
        self.ident = dtype.type(ident)

    def _launch(
        self, src: np.ndarray, dst: np.ndarray, info: np.ndarray, planes: int,
        work: np.ndarray, inter: int,
    ) -> None:
        self.kernel(src, dst, info, self.ident, work, inter)

    def values(self, x: np.ndarray) -> np.ndarray:
        return self._run(x)


class NumbaAveragePlan(_NumbaSeparablePlan):
    """Y of AveragePool, compiled: separable sums over the axes in order, then the division."""

    def __init__(
        self,
        kernel: Callable,
        geom: PoolGeometry,
        shape: tuple[int, ...],
        acc: np.dtype,
        divisor: np.ndarray,
    ):
        super().__init__(kernel, geom, shape, acc, list(range(len(geom.axes))))
        # One plane's divisor: the kernel divides every plane of a block by it (a copy per plane
        # of the block made the plan hold as much as a whole block of output).
        # Read-only, as every input of a compiled loop (_buffers.read_only): AveragePool's divisor
        # arrived read-only and LpPool's (a broadcast 1, copied) writable, so the float64 loops
        # were compiled twice, ~12 s of CPU on a cold cache in every `ortpool warmup`.
        self.divisor = read_only(
            np.ascontiguousarray(np.broadcast_to(divisor, geom.output_spatial).reshape(-1), acc)
        )
        self.zero = acc.type(0)

    def _launch(
        self, src: np.ndarray, dst: np.ndarray, info: np.ndarray, planes: int,
        work: np.ndarray, inter: int,
    ) -> None:
        self.kernel(src, dst, info, self.divisor, self.zero, work, inter)

    def average(self, x: np.ndarray) -> np.ndarray:
        if x.dtype != self.dtype:
            x = x.astype(self.dtype)
        return self._run(x)


_UNIT_AXIS = AxisGeometry(n=1, k=1, s=1, d=1, pb=0, pe=0, out=1)


class NumbaMaxIndicesPlan(PlaneShape):
    """Y and Indices of MaxPool of rank 1-3, compiled: one loop over each window's taps in
    row-major order (rulings 6, 7), ranks 1 and 2 seen as rank 3 with unit leading axes."""

    def __init__(
        self,
        kernel: Callable,
        geom: PoolGeometry,
        shape: tuple[int, ...],
        dtype: np.dtype,
        storage_order: int,
        ident: Any,
    ):
        super().__init__(geom, shape, dtype)
        #: The compiled window loop (``max_indices``) for ``dtype``.
        self.kernel = kernel
        spatial = tuple(shape[2:])
        rank = len(spatial)
        mult = list(index_multipliers(spatial, storage_order))
        axes = [_UNIT_AXIS] * (3 - rank) + list(geom.axes)
        self.mult = np.array([0] * (3 - rank) + mult, np.int64)
        self.geo = np.array([[g.s, g.d, g.pb, g.n, g.k, *g.interior()] for g in axes], np.int64)
        self.in4 = (self.planes, *(g.n for g in axes))
        self.out4 = (self.planes, *(g.out for g in axes))
        self.plane_size = math.prod(spatial)
        self.ident = dtype.type(ident)  # as the values plan's

    def run(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        y = output(self.out_shape, self.dtype, 0)
        indices = output(self.out_shape, np.dtype(np.int64), 1)
        if not y.size:
            return y, indices
        src = read_only(x).reshape(self.in4)
        y4 = y.reshape(self.out4)
        i4 = indices.reshape(self.out4)
        kernel, geo, mult = self.kernel, self.geo, self.mult
        plane_size, ident = self.plane_size, self.ident

        def work(lo: int, hi: int) -> None:
            kernel(src[lo:hi], y4[lo:hi], i4[lo:hi], geo, mult, lo, plane_size, ident)

        # A window loop costs about as much per input byte as three passes (SegNet's 12.8 MB:
        # one thread 6.6 ms, split 3.8 ms, outside a session).
        work_bytes = self.nbytes * 3
        split_bytes = work_bytes if work_bytes >= NUMBA_SPLIT_WORK else 0
        _parallel.split(self.planes, [(0, self.planes)], work, split_bytes)
        return y, indices
