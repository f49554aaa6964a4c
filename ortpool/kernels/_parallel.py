"""Splitting a kernel's blocks of planes between the calling thread and persistent workers (numpy
and the compiled loops release the GIL). Waking a thread costs about 0.1 ms on a small VM, so
only calls of at least :data:`MIN_PARALLEL_BYTES` are split."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from ortpool.kernels._limits import env_count

#: Bytes a call must touch before its planes are split (2 cores: 1.6 MB gained nothing, 3.2 MB 25%).
MIN_PARALLEL_BYTES = 2 << 20

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_workers = 0
_override: int | None = None


@functools.cache
def usable_cores() -> int:
    """The cores this process may run on (its affinity), else the machine's."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def thread_count() -> int:
    """Threads the kernels use: :func:`set_thread_count`, else ``ORTPOOL_THREADS`` (read at
    each large call), else the usable cores, at most 4."""
    if _override is not None:
        return _override
    return env_count("ORTPOOL_THREADS", max(1, min(4, usable_cores())))


def set_thread_count(threads: int | None) -> None:
    """Use ``threads`` threads from now on (1: no splitting); None: back to the default."""
    global _override
    if threads is not None and threads < 1:
        raise ValueError(f"threads={threads} must be at least 1")
    _override = threads


def _executor(workers: int) -> ThreadPoolExecutor:
    global _pool, _pool_workers
    with _lock:
        if _pool is None or _pool_workers < workers:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ortpool")
            _pool_workers = workers
        return _pool


def run(ranges: Sequence[tuple[int, int]], work: Callable[[int, int], None], nbytes: int) -> None:
    """Call ``work(lo, hi)`` for every range, in contiguous shares across threads when large."""
    if nbytes < MIN_PARALLEL_BYTES or len(ranges) < 2 or thread_count() < 2:
        _share(work, ranges)
        return
    threads = min(thread_count(), len(ranges))
    cut = [len(ranges) * i // threads for i in range(threads + 1)]
    parts = [ranges[cut[i] : cut[i + 1]] for i in range(threads)]
    pool = _executor(threads - 1)
    futures: list[Future] = [pool.submit(_share, work, part) for part in parts[1:]]
    try:
        _share(work, parts[0])
    finally:
        for future in futures:
            future.result()


def _share(work: Callable[[int, int], None], part: Sequence[tuple[int, int]]) -> None:
    for lo, hi in part:
        work(lo, hi)


def split(
    planes: int, blocks: Sequence[tuple[int, int]], work: Callable[[int, int], None], nbytes: int
) -> None:
    """Planes ``[0, planes)``: in ``blocks`` for a small call, else one share per thread."""
    if nbytes < MIN_PARALLEL_BYTES or planes < 2 or thread_count() < 2:
        _share(work, blocks)
        return
    n = min(thread_count(), planes)
    run([(planes * i // n, planes * (i + 1) // n) for i in range(n)], work, nbytes)
