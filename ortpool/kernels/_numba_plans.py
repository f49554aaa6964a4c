"""The compiled loops of the plans (:mod:`._plan`): a separable reduction's passes as
:func:`._passes.pass_rows` (one int64 row per pass), run by the compiled loops of
:mod:`ortpool.kernels._numba` over blocks of planes seen as one plane; MaxPool's Indices by one
window loop; and the split of planes across threads. numba itself is never imported here: a
plan is handed its compiled loop by :func:`ortpool.kernels._backend.loop`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any  # the plans' type (:mod:`._plan` imports this module, not the reverse)

import numpy as np

from ortpool.geometry import AxisGeometry, PoolGeometry
from ortpool.kernels import _parallel
from ortpool.kernels._buffers import read_only, scratch
from ortpool.kernels._passes import INNER, OUT, OUTER, N, pass_rows

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

#: Input bytes times passes from which a compiled call is split across threads. Waking a
#: worker costs about 0.1 ms, and inside a session onnxruntime's own pool threads may still be
#: spinning on the second core. Measured in ``ortpool bench`` (ORTPOOL_THREADS=1 vs 2, two runs
#: each, session.run): ResNet stem (3.2 MB x 2 passes) 560/819 µs on one thread, 1.20/1.13 ms
#: split; 3-D (6.4 MB x 3) 1.80/2.64 vs 2.10/2.05 ms; VGG (12.8 MB x 2) 3.37/5.27 vs
#: 3.29/3.81 ms. Outside a session a split paid from about 6 MB x passes (ResNet 460 -> 318 µs).
NUMBA_SPLIT_WORK = 20 << 20


def scratch_sizes(info: np.ndarray) -> tuple[int, int]:
    """(elements of each intermediate buffer, of the phase buffer) for the passes ``info``: the
    largest target of a pass but the last (which writes the output), the largest source of a
    pass (an inner pass splits its source into phases); at least 1."""
    sizes = info[:, OUTER] * info[:, INNER]
    inter = int((sizes[:-1] * info[:-1, OUT]).max(initial=1))
    phases = int((sizes * info[:, N]).max(initial=1))
    return inter, phases


def _split(planes: int, work: Callable[[int, int], None], work_bytes: int) -> None:
    """``work`` over planes ``[0, planes)``, split across threads from
    :data:`NUMBA_SPLIT_WORK` bytes of work on."""
    _parallel.split(planes, [(0, planes)], work, 0 if work_bytes < NUMBA_SPLIT_WORK else work_bytes)


class Passes:
    """The loop of a separable plan (:class:`._plan.Separable`): ``max_planes`` or
    ``average_planes`` over blocks of about :data:`NUMBA_BLOCK_BYTES` of planes."""

    compiled = True

    def __init__(self, kernel: Callable, plan: Any, geom: PoolGeometry, order: list[int]):
        self.kernel = kernel
        self.info = pass_rows(geom, order)
        plane_bytes = max(1, plan.in_plane * plan.dtype.itemsize)
        self.block = max(1, min(plan.planes, NUMBA_BLOCK_BYTES // plane_bytes))
        # The blocks of an unsplit call: full ones and the last; their passes and the sizes of
        # their scratch buffer are computed once.
        last = plan.planes % self.block or self.block
        self._blocks = {n: self._block(n) for n in {self.block, last}}

    def _block(self, planes: int) -> tuple[np.ndarray, int, int]:
        """The passes of ``planes`` consecutive planes seen as one plane; the elements of each
        intermediate and of the whole scratch buffer (two intermediates, then the phases)."""
        info = self.info.copy()
        info[:, OUTER] *= planes
        inter, phases = scratch_sizes(info)
        return info, inter, 2 * inter + phases

    # No closure in run: a function whose locals a closure captures makes their cells at every
    # call, which cost a small call 0.25 µs (+6%).
    def run(self, plan: Any, x: np.ndarray, y: np.ndarray) -> None:
        # AveragePool's float16 input is cast here, as a whole.
        src = read_only(x.astype(plan.dtype) if plan.cast else x)
        if not len(self.info):  # every axis an identity: Y is X
            np.copyto(y.reshape(-1), src.reshape(-1))
        elif self.block == plan.planes:  # one block (every small call): straight to the kernel
            info, inter, size = self._blocks[plan.planes]
            self.kernel(src.reshape(1, -1), y.reshape(1, -1), info, *plan.operands,
                        scratch((size,), plan.dtype, "numba"), inter)
        else:  # the work: input bytes times passes
            dst = y.reshape(plan.planes, plan.out_plane)
            work = functools.partial(self._blocks_of, plan, src.reshape(dst.shape[0], -1), dst)
            _split(plan.planes, work, plan.nbytes * len(self.info))

    def _blocks_of(self, plan: Any, src: np.ndarray, dst: np.ndarray, lo: int, hi: int) -> None:
        """Planes ``[lo, hi)``, a block at a time."""
        for first in range(lo, hi, self.block):
            last = min(hi, first + self.block)
            self._launch(plan, src[first:last], dst[first:last], last - first)

    def _launch(self, plan: Any, src: np.ndarray, dst: np.ndarray, planes: int) -> None:
        """The kernel over ``planes`` planes ``src`` -> ``dst``, seen as one plane."""
        # a thread's share of a split call may end in a block of another size
        info, inter, size = self._blocks.get(planes) or self._block(planes)
        # Allocated in the kernel at each call, a multi-megabyte scratch buffer came from mmap
        # and faulted in every page (the ResNet stem took 3 ms in a session).
        self.kernel(
            src.reshape(1, -1), dst.reshape(1, -1), info, *plan.operands,
            scratch((size,), plan.dtype, "numba"), inter,
        )


_UNIT_AXIS = AxisGeometry(n=1, k=1, s=1, d=1, pb=0, pe=0, out=1)


class Windows:
    """The loop of :class:`._plan.MaxIndices` of rank 1-3: ``max_indices``, one loop over each
    window's taps in row-major order (rulings 6, 7), ranks 1 and 2 seen as rank 3 with unit
    leading axes."""

    compiled = True

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
                        plan.ident)

        # A window loop costs about as much per input byte as three passes (SegNet's 12.8 MB:
        # one thread 6.6 ms, split 3.8 ms, outside a session).
        _split(plan.planes, work, plan.nbytes * 3)
