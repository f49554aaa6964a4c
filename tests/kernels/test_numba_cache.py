"""numba's on-disk cache across processes: a kernel loaded from the cache next to one compiled
in the process gives its own results. (The max and sum closures once shared symbol names: a
process that compiled MaxPool and then loaded a cached AveragePool ran the max loops.)"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

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


def test_cached_kernel_beside_a_freshly_compiled_one(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("ORTPOOL_KERNELS", None)
    outputs = []
    for ops in ("avg", "max,avg"):  # the second process compiles max, loads avg from the cache
        done = subprocess.run([sys.executable, "-c", STEP, ops], capture_output=True, text=True,
                              env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout.split())
    assert outputs == [["avg", "same"], ["max", "same", "avg", "same"]]
    assert sorted(p.name.split("-")[0] for p in (tmp_path / "cache").rglob("*.nbi")) == [
        "_numba.average_planes", "_numba.max_planes"]
