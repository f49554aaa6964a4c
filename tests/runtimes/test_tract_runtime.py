"""tract (the ``tract`` package; skipped without it): exact MaxPool, no LpPool and no
bfloat16, and the inputs that end its process, each one result of a worker that goes on."""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np
import pytest

from ortpool import runtimes
from ortpool.runtimes import CRASHED, NO_KERNEL, RuntimeFailure
from tests.runtimes.cases import maxpool_case, node

tract = pytest.importorskip("tract")


@pytest.fixture(scope="module")
def runtime() -> runtimes.Runtime:
    return runtimes.get("tract")


def test_maxpool_equals_the_spec_exactly(runtime) -> None:
    model, feeds, want = maxpool_case()
    (y,) = runtime.run(model, feeds)
    assert y.dtype == want.dtype and y.shape == want.shape == (1, 2, 5, 5)
    np.testing.assert_array_equal(y, want)
    facts = runtime.describe()
    assert facts["release"] == tract.version() and json.loads(json.dumps(facts)) == facts
    assert runtime.title() == f"tract {tract.version()} (CPU)"


def test_lppool_and_bfloat16_have_no_kernel(runtime) -> None:
    x = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7)
    model, feeds = node("LpPool", 18, {"kernel_shape": [2], "p": 2}, x)
    with pytest.raises(RuntimeFailure) as caught:
        runtime.run(model, feeds)
    assert caught.value.kind == NO_KERNEL
    assert str(caught.value) == "tract: no-kernel: no implementation of LpPool (node 'node')"
    import ml_dtypes

    model, feeds = node("MaxPool", 22, {"kernel_shape": [2]}, x.astype(ml_dtypes.bfloat16))
    with pytest.raises(RuntimeFailure, match=r"^tract: no-kernel: no element type bfloat16 \(in"):
        runtime.run(model, feeds)


def test_a_zero_size_global_pool_aborts_tract_and_the_worker_goes_on(runtime) -> None:
    """GlobalLpPool over an empty spatial axis divides by zero in a Rust function that cannot
    unwind: SIGABRT (tract 0.23.9; GlobalAveragePool on [1,1,0,0] gives nan there, no longer an
    abort). In a worker: one CRASHED result, then the next case runs in a fresh child."""
    empty = np.zeros((1, 1, 0), np.float32)
    crash_model, crash_feeds = node("GlobalLpPool", 2, {"p": 2}, empty)
    model, feeds, want = maxpool_case()
    with runtimes.Worker(runtime, timeout=60) as worker:
        with pytest.raises(RuntimeFailure) as caught:
            worker.run(crash_model, crash_feeds)
        assert caught.value.kind == CRASHED
        assert caught.value.message.startswith("the worker was killed by SIGABRT on this case: ")
        assert "panicked at core/src/ops/nn/reduce.rs" in caught.value.message
        assert "attempt to divide by zero" in caught.value.message
        np.testing.assert_array_equal(worker.run(model, feeds)[0], want)
        assert worker.started == 2


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="no files without a name here")
def test_the_model_tract_reads_leaves_no_file_a_kill_could_leave_behind(runtime, tmp_path,
                                                                        monkeypatch) -> None:
    """tract reads a model from a path: it was written to ``ortpool-tract-*/model.onnx`` in
    TMPDIR, which a worker stopped at its time limit mid-load left behind (a 128 MB model read
    in more than ``case_timeout=0.5``: a copy of the model per time-out). It has no name now."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seen: list[tuple[str, list[str]]] = []
    onnx_loader = tract.onnx

    class Spy:
        def load(self, path: str) -> object:
            seen.append((str(path), os.listdir(tmp_path)))
            return onnx_loader().load(path)

    monkeypatch.setattr(tract, "onnx", Spy)
    model, feeds, want = maxpool_case()
    np.testing.assert_array_equal(runtime.run(model, feeds)[0], want)
    ((path, listed),) = seen
    assert path.startswith("/proc/self/fd/") and listed == []
