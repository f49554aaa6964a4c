"""numba's on-disk cache keeps the max and the sum kernels apart.

The separable passes are closures built once per combine step (max for MaxPool, sum for
AveragePool). numba files cache entries by qualified name and keys them by argument types, so the
two closures once shared an entry: a process that had compiled MaxPool float32 and one that then
compiled AveragePool float32 left a cache from which a third process loaded the sum's code for
MaxPool or the max's for AveragePool (silently wrong results). Each step runs in its own child
process with a fresh cache directory, as separate runs of a user's program would.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")

STEP = r"""
import sys
import numpy as np
from ortpool import kernels
from ortpool.kernels import _backend
assert _backend.backend() == "numba"
rng = np.random.default_rng(0)
for op in sys.argv[1:]:
    x = rng.normal(size=(2, 3, 8, 8)).astype(np.float32)
    window = x[:, :, :3, :3]
    if op == "max":
        got = kernels.max_pool(x, version=12, kernel_shape=[3, 3], strides=[2, 2])
        want = window.max(axis=(2, 3))
    else:
        got = kernels.average_pool(x, version=11, kernel_shape=[3, 3], strides=[2, 2])
        want = window.mean(axis=(2, 3))
    np.testing.assert_allclose(got[:, :, 0, 0], want, rtol=1e-6)
    print(op, "ok")
"""


def test_max_and_sum_kernels_never_load_each_others_code(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), ORTPOOL_KERNELS="numba")
    for ops in (["max"], ["avg"], ["max", "avg"]):
        done = subprocess.run(
            [sys.executable, "-c", STEP, *ops],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, (ops, done.stderr[-2000:])
        assert done.stdout.split() == [w for op in ops for w in (op, "ok")]
