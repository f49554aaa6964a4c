"""One session used from several threads at once gives what one thread gives, and one thread's
failing run does not leak its error into another thread's run."""

from __future__ import annotations

import threading

import numpy as np
import onnx
import pytest
from onnx import helper

import ortpool
from ortpool import optypes, versions
from ortpool.attributes import full_attributes, normalize
from ortpool.errors import OrtpoolError
from tests import support

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

THREADS = 4
RUNS = 20


def _encoded(op, version, attrs):
    opv = versions.get(op, version)
    return full_attributes(opv, normalize(opv, attrs))


def _chain_model() -> onnx.ModelProto:
    """X -> MaxPool_12_Indices (Y, I) -> MaxUnpool_11 (Y, I) -> AveragePool_19 -> Z, plus I."""
    pool = helper.make_node(
        "MaxPool_12_Indices", ["X"], ["P", "I"], domain=optypes.DOMAIN, name="pool",
        **_encoded("MaxPool", 12, {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1],
                                   "storage_order": 0}),
    )
    unpool = helper.make_node(
        "MaxUnpool_11_OutputShape", ["P", "I", "shape"], ["U"], domain=optypes.DOMAIN,
        name="unpool", **_encoded("MaxUnpool", 11, {"kernel_shape": [3, 3], "strides": [2, 2],
                                                    "pads": [1, 1, 1, 1]}),
    )
    shape = helper.make_node("Shape", ["X"], ["shape"])
    avg = helper.make_node(
        "AveragePool_19", ["U"], ["Z"], domain=optypes.DOMAIN, name="avg",
        **_encoded("AveragePool", 19, {"kernel_shape": [2, 2], "dilations": [2, 1],
                                       "auto_pad": "SAME_LOWER", "count_include_pad": 1}),
    )
    graph = helper.make_graph(
        [pool, shape, unpool, avg], "chain",
        [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("Z", onnx.TensorProto.FLOAT, None),
         helper.make_tensor_value_info("I", onnx.TensorProto.INT64, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22),
                                                    helper.make_opsetid(optypes.DOMAIN, 1)])
    model.ir_version = support.IR_VERSION
    return model


def _input(thread: int, run: int) -> np.ndarray:
    rng = np.random.default_rng(1000 * thread + run)
    shape = (1 + run % 2, 3, 9 + thread, 11 - thread)  # different shapes per thread as well
    return rng.integers(-20, 20, shape).astype(np.float32)  # ties included


def _in_threads(work, n: int = THREADS) -> list:
    """Run ``work(thread)`` on ``n`` threads started together; re-raise a thread's exception."""
    barrier = threading.Barrier(n)
    results: list = [None] * n
    errors: list = []

    def target(t: int) -> None:
        barrier.wait()
        try:
            results[t] = work(t)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=target, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    if errors:
        raise errors[0]
    return results


def test_threads_give_what_one_thread_gives():
    session = ortpool.InferenceSession(_chain_model())
    alone = {
        (t, r): session.run(None, {"X": _input(t, r)}) for t in range(THREADS) for r in range(RUNS)
    }

    def work(t: int):
        return [session.run(None, {"X": _input(t, r)}) for r in range(RUNS)]

    together = _in_threads(work)
    for t in range(THREADS):
        for r in range(RUNS):
            for got, want in zip(together[t][r], alone[(t, r)], strict=True):
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)
    # And the single-thread results are right: Z equals the numpy API chain.
    from ortpool import kernels

    x = _input(2, 3)
    p, i = kernels.max_pool(x, version=12, return_indices=True, kernel_shape=[3, 3],
                            strides=[2, 2], pads=[1, 1, 1, 1])
    u = kernels.max_unpool(p, i, np.array(x.shape), version=11, kernel_shape=[3, 3],
                           strides=[2, 2], pads=[1, 1, 1, 1])
    z = kernels.average_pool(u, version=19, kernel_shape=[2, 2], dilations=[2, 1],
                             auto_pad="SAME_LOWER", count_include_pad=1)
    np.testing.assert_array_equal(alone[(2, 3)][0], z)
    np.testing.assert_array_equal(alone[(2, 3)][1], i)


def test_a_failing_thread_does_not_leak_into_others():
    """Threads 0 and 2 feed an out-of-range index on every other run (a value of their own);
    threads 1 and 3 never fail and must never see an error, nor wrong values."""
    model = support.ortpool_model("MaxUnpool", 11, {"kernel_shape": [2], "strides": [2]},
                                  np.float32, n_inputs=2, node_name="unpool")
    session = ortpool.InferenceSession(model)
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 2, 3)  # default output (1, 2, 6)

    def feed(t: int, r: int):
        indices = np.array([[[0, 2, 5], [6, 9, 11]]]) if (t + r) % 3 else \
            np.array([[[1, 3, 4], [7, 8, 10]]])
        return indices

    def expected(indices):
        y = np.zeros((1, 2, 6), np.float32)
        y.reshape(-1)[indices.reshape(-1)] = x.reshape(-1)
        return y

    def work(t: int):
        seen = []
        for r in range(RUNS):
            indices = feed(t, r)
            bad = t % 2 == 0 and r % 2 == 0
            if bad:
                indices = indices.copy()
                indices[0, 1, 2] = 100 + t  # outside [0, 12): this thread's own value
            try:
                (y,) = session.run(None, {"X": x, "I": indices})
                seen.append(("ok", bad, y, indices))
            except OrtpoolError as err:
                seen.append(("error", bad, str(err), indices))
        return seen

    results = _in_threads(work)
    for t, seen in enumerate(results):
        for status, bad, payload, indices in seen:
            if bad:
                assert status == "error"
                assert payload.startswith(
                    f"node 'unpool' (MaxUnpool-11): index {100 + t} in I is outside the output "
                    "of shape [1, 2, 6]"
                )
            else:
                assert status == "ok", payload
                np.testing.assert_array_equal(payload, expected(indices))
