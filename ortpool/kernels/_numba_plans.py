"""The compiled loops of the plans (:mod:`._plan`): a separable reduction's passes as
:func:`._passes.pass_rows` over blocks of planes seen as one plane; MaxPool's Indices by one
window loop. numba is never imported here (:func:`._backend.loop` hands a plan its loop)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any  # the plans' type (:mod:`._plan` imports this module, not the reverse)

import numpy as np

from ortpool.geometry import AxisGeometry, PoolGeometry
from ortpool.kernels import _parallel
from ortpool.kernels._buffers import read_only, scratch
from ortpool.kernels._passes import INNER, OUT, OUTER, N, pass_rows

#: Input bytes of a block of planes seen as one plane (measured against 256 KB, 4 MB, all).
NUMBA_BLOCK_BYTES = 1 << 20

#: Input bytes times passes from which a compiled call is split across threads: below, a split lost
#: in ``ortpool bench`` (onnxruntime's own threads may still be spinning on the second core).
NUMBA_SPLIT_WORK = 20 << 20


def scratch_sizes(info: np.ndarray) -> tuple[int, int]:
    """(elements of each intermediate, of the phase buffer) for the passes ``info``."""
    sizes = info[:, OUTER] * info[:, INNER]
    inter = int((sizes[:-1] * info[:-1, OUT]).max(initial=1))
    phases = int((sizes * info[:, N]).max(initial=1))
    return inter, phases


def _split(planes: int, work: Callable[[int, int], None], work_bytes: int) -> None:
    """``work`` over planes ``[0, planes)``, split from :data:`NUMBA_SPLIT_WORK` bytes of work."""
    _parallel.split(planes, [(0, planes)], work, 0 if work_bytes < NUMBA_SPLIT_WORK else work_bytes)


class Passes:
    """The loop of a separable plan: ``max_planes`` or ``average_planes`` over blocks of planes."""

    def __init__(self, kernel: Callable, plan: Any, geom: PoolGeometry, order: list[int]):
        self.kernel = kernel
        self.info = pass_rows(geom, order)
        plane_bytes = max(1, plan.in_plane * plan.dtype.itemsize)
        self.block = max(1, min(plan.planes, NUMBA_BLOCK_BYTES // plane_bytes))
        last = plan.planes % self.block or self.block
        self._blocks = {n: self._block(n) for n in {self.block, last}}

    def _block(self, planes: int) -> tuple[np.ndarray, int, int]:
        """(passes, intermediate size, scratch size) of ``planes`` planes seen as one."""
        info = self.info.copy()
        info[:, OUTER] *= planes
        inter, phases = scratch_sizes(info)
        return info, inter, 2 * inter + phases

    # No closure in run: captured locals make their cells at every call (+6% on a small call).
    def run(self, plan: Any, x: np.ndarray, y: np.ndarray) -> None:
        # AveragePool's float16 input is cast here, as a whole.
        src = read_only(x.astype(plan.dtype) if plan.cast else x)
        if not len(self.info):  # every axis an identity: Y is X
            np.copyto(y.reshape(-1), src.reshape(-1))
        elif self.block == plan.planes:  # one block (every small call): straight to the kernel
            self._launch(plan, src, y, plan.planes)
        else:  # the work: input bytes times passes
            dst = y.reshape(plan.planes, plan.out_plane)
            work = functools.partial(self._blocks_of, plan, src.reshape(dst.shape[0], -1), dst)
            _split(plan.planes, work, plan.nbytes * len(self.info))

    def _blocks_of(self, plan: Any, src: np.ndarray, dst: np.ndarray, lo: int, hi: int) -> None:
        for first in range(lo, hi, self.block):
            last = min(hi, first + self.block)
            self._launch(plan, src[first:last], dst[first:last], last - first)

    def _launch(self, plan: Any, src: np.ndarray, dst: np.ndarray, planes: int) -> None:
        # a thread's share of a split call may end in a block of another size
        info, inter, size = self._blocks.get(planes) or self._block(planes)
        # A reused scratch buffer: a fresh one faulted in every page at each call.
        self.kernel(src.reshape(1, -1), dst.reshape(1, -1), info, *plan.operands,
                    scratch((size,), plan.dtype, "numba"), inter)


_UNIT_AXIS = AxisGeometry(n=1, k=1, s=1, d=1, pb=0, pe=0, out=1)


class Windows:
    """The loop of :class:`._plan.MaxIndices` of rank 1-3, all seen as rank 3; the plan's
    ``operands`` follow the plane size."""

    def __init__(self, kernel: Callable, plan: Any, geom: PoolGeometry):
        self.kernel = kernel
        lead = 3 - len(geom.axes)
        axes = [_UNIT_AXIS] * lead + list(geom.axes)
        self.mult = np.array([0] * lead + list(plan.mult), np.int64)
        self.geo = np.array([[g.s, g.d, g.pb, g.n, g.k, *g.interior()] for g in axes], np.int64)
        self.in4 = (plan.planes, *(g.n for g in axes))
        self.out4 = (plan.planes, *(g.out for g in axes))

    def run(self, plan: Any, x: np.ndarray, y: np.ndarray, indices: np.ndarray) -> None:
        src = read_only(x).reshape(self.in4)
        y4, i4 = y.reshape(self.out4), indices.reshape(self.out4)

        def work(lo: int, hi: int) -> None:
            self.kernel(src[lo:hi], y4[lo:hi], i4[lo:hi], self.geo, self.mult, lo, plan.in_plane,
                        *plan.operands)

        # A window loop costs about as much per input byte as three passes.
        _split(plan.planes, work, plan.nbytes * 3)
