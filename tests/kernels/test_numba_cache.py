"""numba's on-disk cache across processes: a kernel loaded from the cache next to one compiled
in the process gives its own results. (The max and sum closures once shared symbol names: a
process that compiled MaxPool and then loaded a cached AveragePool ran the max loops.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba")

STEP = textwrap.dedent("""
    import sys
    import numpy as np
    from ortpool import kernels
    from ortpool.kernels import _backend
    x = np.random.default_rng(0).standard_normal((2, 3, 9, 11)).astype(np.float32)
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    for op in sys.argv[1].split(","):
        f = kernels.max_pool if op == "max" else kernels.average_pool
        _backend.set_backend("numba")
        compiled = f(x, version=11, **attrs)
        _backend.set_backend("numpy")
        reference = f(x, version=11, **attrs)
        print(op, "same" if np.array_equal(compiled, reference) else "DIFFERENT")
""")


def _cached_average_loops(cache: Path) -> list[str]:
    """Copy the AveragePool loops the run's warm-up compiled into numba's cache into ``cache``
    (where numba looks with NUMBA_CACHE_DIR set to it), and nothing else: a process there loads
    AveragePool and compiles MaxPool. The files' names."""
    from numba.core.caching import _CacheLocator

    from ortpool.kernels import _numba  # after the warm-up (conftest): its loops are cached

    kernel = _numba.average_planes
    # numba's own answer to "where is this function's cache" for this environment and for one
    # with NUMBA_CACHE_DIR set (a folder named after the source's, with its path's hash)
    source = Path(kernel._cache._cache_path)
    target = cache / _CacheLocator.get_suitable_cache_subpath(_numba.__file__)
    target.mkdir(parents=True)
    # the index of this source's function (older sources' entries may sit beside it), and the
    # machine code it lists ("<index stem>.<n>.nbc")
    stem = kernel._cache._cache_file._index_name.removesuffix("nbi")
    names = []
    for path in sorted(source.glob(stem + "*")):
        shutil.copy2(path, target / path.name)
        names.append(path.name)
    return names


def test_cached_kernel_beside_a_freshly_compiled_one(tmp_path):
    copied = _cached_average_loops(tmp_path / "cache")
    assert any(name.endswith(".nbi") for name in copied), copied
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("ORTPOOL_KERNELS", None)
    # One process compiles max and loads avg from the cache (the order of the old bug).
    done = subprocess.run(
        [sys.executable, "-c", STEP, "max,avg"], capture_output=True, text=True, env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["max", "same", "avg", "same"]
    # numba announces a real compile only (never a load from the cache): MaxPool, not AveragePool.
    notes = [line for line in done.stderr.splitlines() if "compiling the numba kernel" in line]
    assert [note.split(" for ")[1].split(" (")[0] for note in notes] == ["float32 MaxPool"]
    assert sorted(p.name.split("-")[0] for p in (tmp_path / "cache").rglob("*.nbi")) == [
        "_numba.average_planes", "_numba.max_planes"]
