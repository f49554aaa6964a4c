"""What the figures were measured on: cores, threads, versions."""

from __future__ import annotations

import os
import platform
from typing import Any

import numpy as np


def _cpuinfo() -> list[tuple[str, str]]:
    """/proc/cpuinfo's (key, value) lines (Linux; none elsewhere), a blank one between CPUs."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return [(k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in f)]
    except OSError:
        return []


def physical_cores() -> int | None:
    """Physical cores from /proc/cpuinfo (Linux); None where that is unavailable."""
    cores: set[tuple[str, str]] = set()
    physical, core = "0", None
    for key, value in [*_cpuinfo(), ("", "")]:
        if key == "physical id":
            physical = value
        elif key == "core id":
            core = value
        elif not key and core is not None:
            cores.add((physical, core))
            core = None
    return len(cores) or None


def cpu_model() -> str:
    found = next((value for key, value in _cpuinfo() if key == "model name"), None)
    return platform.processor() or platform.machine() if found is None else found


def blas() -> str:
    try:
        config = np.show_config(mode="dicts")
        info = config["Build Dependencies"]["blas"]
        return f"{info.get('name', '?')} {info.get('version', '')}".strip()
    except Exception:
        return "unknown"


def _kernels() -> str:
    """The kernel path in use: "numba 0.68.1 from 64 KB" (the default), "numba 0.68.1"
    (ORTPOOL_KERNELS=numba) or "numpy"."""
    from ortpool.kernels import NUMBA_MIN_BYTES, backend, backend_mode

    if backend() == "numba":
        import numba

        auto = backend_mode() == "auto"
        return f"numba {numba.__version__}" + (f" from {NUMBA_MIN_BYTES >> 10} KB" if auto else "")
    return "numpy"


def describe(intra_op_threads: int, kernel_threads: int, shared_pool: bool) -> dict[str, Any]:
    """The machine and the thread settings in effect."""
    from ortpool.ort import runtime

    thread_env = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                             "MKL_NUM_THREADS", "ORTPOOL_THREADS")
                  if k in os.environ}
    return {
        "cpu": cpu_model(), "logical_cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "physical_cores": physical_cores(),
        "ort_intra_op_threads": intra_op_threads or "default (one per physical core)",
        "ort_thread_pool": "one shared by all sessions" if shared_pool else "one per session",
        "ortpool_kernel_threads": kernel_threads, "ortpool_kernels": _kernels(),
        "numpy_blas": blas(), "thread_env": thread_env, "python": platform.python_version(),
        "platform": platform.platform(), "versions": runtime.versions(),
    }
