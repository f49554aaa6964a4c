"""numba's on-disk cache across processes: the max and sum loops, compiled by two processes and
loaded by a third, each give their own results. (Their closures once shared symbol names: a
process that loaded both from the cache ran one variant's machine code for both, MaxPool
returning window sums or AveragePool window maxima. Reverting the per-variant names of
``ortpool.kernels._numba._variant_jit`` makes the second kernel of the child below DIFFERENT.)

The two processes are the run's warm-up children (tests/conftest.py): each float type's MaxPool
is compiled in one and its AveragePool in the other (``support.WARMUP_CHILDREN``), so no test
here compiles anything."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import support

pytest.importorskip("numba")

STEP = textwrap.dedent("""
    import numpy as np
    from ortpool import kernels
    from ortpool.kernels import _backend
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    for dtype in ("float32", "float64"):
        x = np.random.default_rng(0).standard_normal((2, 3, 9, 11)).astype(dtype)
        for op, f in (("max", kernels.max_pool), ("avg", kernels.average_pool)):
            _backend.set_backend("numba")
            compiled = f(x, version=11, **attrs)
            _backend.set_backend("numpy")
            reference = f(x, version=11, **attrs)
            print(dtype, op, "same" if np.array_equal(compiled, reference) else "DIFFERENT")
""")


def _copy_cached_loops(cache: Path) -> list[str]:
    """Copy what numba's cache holds for the max and sum entry points (``max_planes``,
    ``average_planes``: the warm-up's) into ``cache``, where numba looks with NUMBA_CACHE_DIR
    set to it, and nothing else. The files' names."""
    from numba.core.caching import _CacheLocator

    from ortpool.kernels import _numba  # after the warm-up (conftest): its loops are cached

    # numba's own answer to "where is this source's cache" with NUMBA_CACHE_DIR set (a folder
    # named after the source's, with its path's hash)
    target = cache / _CacheLocator.get_suitable_cache_subpath(_numba.__file__)
    target.mkdir(parents=True)
    names = []
    for kernel in (_numba.max_planes, _numba.average_planes):
        source = Path(kernel._cache._cache_path)  # and in this environment
        # the index of this function (older sources' entries may sit beside it), and the
        # machine code it lists ("<index stem>.<n>.nbc")
        stem = kernel._cache._cache_file._index_name.removesuffix("nbi")
        for path in sorted(source.glob(stem + "*")):
            shutil.copy2(path, target / path.name)
            names.append(path.name)
    return names


def test_the_warmup_compiles_each_kernel_once_and_max_apart_from_sum():
    from ortpool.kernels.warmup import warm_up

    children = [
        [(kernel, dtype) for dtypes, kernels in steps for dtype in dtypes for kernel in kernels]
        for steps in support.WARMUP_CHILDREN
    ]
    every = [(kernel, dtype) for kernel, dtype, _ in warm_up()]  # loaded from the cache here
    # Each kernel and type compiled by one child, and together every one ortpool warms up
    # (a pair asked of a type that has no such kernel, AveragePool for int8, is nothing).
    done = [pair for pairs in children for pair in pairs if pair in every]
    assert sorted(done) == sorted(every) and len(set(done)) == len(done)
    for dtype in ("float", "double"):
        (max_child,) = [i for i, pairs in enumerate(children) if ("MaxPool", dtype) in pairs]
        (sum_child,) = [i for i, pairs in enumerate(children) if ("AveragePool", dtype) in pairs]
        assert max_child != sum_child, dtype


def test_max_and_sum_loops_compiled_apart_give_their_own_results(tmp_path):
    copied = _copy_cached_loops(tmp_path / "cache")
    assert sorted(name.split("-")[0] for name in copied if name.endswith(".nbi")) == [
        "_numba.average_planes", "_numba.max_planes"]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("ORTPOOL_KERNELS", None)
    done = subprocess.run(
        [sys.executable, "-c", STEP], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "float32 max same", "float32 avg same", "float64 max same", "float64 avg same"]
    # numba announces a real compile only (never a load from the cache): nothing was compiled.
    notes = [line for line in done.stderr.splitlines() if "compiling the numba kernel" in line]
    assert notes == []
