"""What the figures were measured on: cores, threads, versions."""

from __future__ import annotations

import os
import platform
from typing import Any

import numpy as np


def physical_cores() -> int | None:
    """Physical cores from /proc/cpuinfo (Linux); None where that is unavailable."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    cores: set[tuple[str, str]] = set()
    physical, core = "0", None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "physical id":
            physical = value
        elif key == "core id":
            core = value
        elif not key and core is not None:
            cores.add((physical, core))
            core = None
    if core is not None:
        cores.add((physical, core))
    return len(cores) or None


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


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
