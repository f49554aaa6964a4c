"""Inputs that used to hang or blow up memory, and the limits that refuse absurd calls at once.

Each reproducer of the issue runs in a child process with a timeout, on the numpy and the numba
path (a hang fails its test, not the suite), and must give the exact result or OrtpoolError; the
plan arithmetic is checked to be closed form by running it on axes far too long for any loop.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ortpool import kernels
from ortpool.errors import OrtpoolError
from ortpool.geometry import AxisGeometry
from ortpool.kernels import _backend, _calls, _limits, _numpy_plans, _passes
from tests.support.reference_loops import average_pool as reference_average
from tests.support.reference_loops import max_pool as reference_max

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = ["numpy", "numba"]

#: A child process: the imports, then the caller's ``CALLS``, then each call on each backend,
#: one JSON line per call and backend.
CHILD_IMPORTS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from ortpool import kernels
    from ortpool.errors import OrtpoolError
    from ortpool.kernels import _backend
    """
)
CHILD = textwrap.dedent(
    """
    backends = sys.argv[1].split(",")
    for backend in backends:
        _backend.set_backend(backend)
        for name, call in CALLS:
            try:
                result = call()
                outputs = result if isinstance(result, tuple) else (result,)
                answer = {"result": [o.tolist() for o in outputs],
                          "shapes": [list(o.shape) for o in outputs]}
            except OrtpoolError as err:
                answer = {"error": str(err)}
            print(json.dumps({"backend": backend, "name": name, **answer}), flush=True)
    """
)


def _run_child(calls: str, backends: list[str], timeout: float = 120) -> dict:
    """``{(backend, name): answer}`` of the calls (Python source defining ``CALLS``)."""
    if "numba" in backends:
        pytest.importorskip("numba")
    code = CHILD_IMPORTS + textwrap.dedent(calls) + CHILD
    done = subprocess.run(
        [sys.executable, "-c", code, ",".join(backends)], capture_output=True, text=True,
        timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return {(line["backend"], line["name"]): line for line in lines}


def _error(prefix: str, detail: str) -> str:
    return f"{prefix}: {detail}"


# ------------------------------------------------------------ the reproducers of the issue


def test_long_padded_average_returns_its_values():
    """k=100000 over a 1-element axis padded by 99999 each side: 100000 outputs of one input
    tap each; the divisor counts the whole window (count_include_pad). It was a Python loop over
    output x kernel (10**10 steps) before anything ran."""
    answers = _run_child(
        """
        CALLS = [("avg", lambda: kernels.average_pool(
            np.ones((1, 1, 1), np.float32), version=11, kernel_shape=[100000],
            pads=[99999, 99999], count_include_pad=1))]
        """,
        BACKENDS,
    )
    expected = float(np.float32(1) / np.float32(100000))
    for backend in BACKENDS:
        answer = answers[(backend, "avg")]
        assert answer["shapes"] == [[1, 1, 100000]]
        assert set(answer["result"][0][0][0]) == {expected}


def test_kernel_of_a_billion_taps_over_four_inputs():
    """kernel 10**9, end pad 10**9 on a 4-long axis: 5 outputs, the last one all padding. Only
    the 4 taps that land inside the input are visited (the numpy plan listed 10**9 taps, the
    numba plan looped over output x kernel)."""
    answers = _run_child(
        """
        x = np.arange(4, dtype=np.float32).reshape(1, 1, 4)
        attrs = {"kernel_shape": [10**9], "pads": [0, 10**9]}
        CALLS = [("max", lambda: kernels.max_pool(x, return_indices=True, **attrs)),
                 ("max-str", lambda: kernels.max_pool(x, kernel_shape="1000000000",
                                                      pads="0,1000000000")),
                 ("avg", lambda: kernels.average_pool(x, **attrs))]
        """,
        BACKENDS,
    )
    for backend in BACKENDS:
        y, i = answers[(backend, "max")]["result"]
        assert y == [[[3.0, 3.0, 3.0, 3.0, -float("inf")]]]
        assert i == [[[3, 3, 3, 3, -1]]]
        assert answers[(backend, "max-str")]["result"][0] == y
        avg = answers[(backend, "avg")]["result"][0][0][0]
        assert avg[:4] == [1.5, 2.0, 2.5, 3.0] and np.isnan(avg[4])


HUGE_PADS = (
    "the output Y of shape [{n}, 1, 2000000003, 2000000003] (float32) would take "
    "16000000048000000036 bytes (counting at least one plane); the limit is 4294967296 bytes "
    "(ORTPOOL_MAX_OUTPUT_BYTES)"
)
BEYOND_INT64 = (
    "pads='9999999999999999999999999999999999999999,0' holds a value beyond int64 (ONNX "
    "attributes are int64: -9223372036854775808 to 9223372036854775807)"
)
PADDED_INT64 = (
    "spatial axis 0: the padded input 4 + 9223372036854775807 + 9223372036854775807 = "
    "18446744073709551618 does not fit in int64 (at most 9223372036854775807)"
)


def test_hostile_attributes_fail_at_once_on_both_paths():
    """Pads of 10**9 on a 4x4 input (also with N = 0: the attributes make the call impossible,
    not the batch), values beyond int64 as the string encoding carries them, and int64 values
    whose padded extent leaves int64: the same OrtpoolError on both paths, before any plan."""
    answers = _run_child(
        """
        def pool(n, **attrs):
            return lambda: kernels.max_pool(np.ones((n, 1, 4, 4), np.float32), **attrs)
        big = 2**63 - 1
        CALLS = [
            ("pads", pool(1, kernel_shape=[2, 2], pads=[10**9] * 4)),
            ("pads-N0", pool(0, kernel_shape=[2, 2], pads=[10**9] * 4)),
            ("pads-N0-indices", pool(0, kernel_shape=[2, 2], pads=[10**9] * 4,
                                     return_indices=True)),
            ("string-40", lambda: kernels.max_pool(np.ones((1, 1, 4), np.float32),
                                                   kernel_shape="2", pads="9" * 40 + ",0")),
            ("string-int64", lambda: kernels.max_pool(np.ones((1, 1, 4), np.float32),
                                                      kernel_shape="2", pads=f"{big},{big}")),
            ("list-int64", lambda: kernels.average_pool(np.ones((1, 1, 4), np.float32),
                                                        kernel_shape=[2], pads=[big, big])),
        ]
        """,
        BACKENDS,
        timeout=60,
    )
    for backend in BACKENDS:
        assert answers[(backend, "pads")]["error"] == _error("(MaxPool-22)", HUGE_PADS.format(n=1))
        for name in ("pads-N0", "pads-N0-indices"):
            assert answers[(backend, name)]["error"] == _error(
                "(MaxPool-22)", HUGE_PADS.format(n=0)
            )
        assert answers[(backend, "string-40")]["error"] == _error("(MaxPool-22)", BEYOND_INT64)
        assert answers[(backend, "string-int64")]["error"] == _error("(MaxPool-22)", PADDED_INT64)
        assert answers[(backend, "list-int64")]["error"] == _error(
            "(AveragePool-22)", PADDED_INT64
        )


def test_hostile_attributes_through_a_session():
    """The same attributes as an ortpool node carries them (strings): beyond int64 is refused
    when the session is created, the others when it runs; the process lives."""
    code = textwrap.dedent(
        """
        import numpy as np, onnx
        from tests import support
        import ortpool
        from ortpool.errors import OrtpoolError
        def node(pads):
            attrs = {"auto_pad": "NOTSET", "ceil_mode": 0, "dilations": "1,1",
                     "kernel_shape": "2,2", "pads": pads, "storage_order": 0, "strides": "1,1"}
            n = support.raw_ortpool_node("MaxPool_12", attrs, 1, 1, name="bad")
            return support.one_node_model(n, [np.float32], [np.float32])
        big = 2**63 - 1
        for pads, n in (("9" * 40 + ",0,0,0", 1), (f"{big},0,{big},0", 1),
                        ("1000000000," * 3 + "1000000000", 1),
                        ("1000000000," * 3 + "1000000000", 0)):
            try:
                session = ortpool.InferenceSession(node(pads))
                session.run(None, {"X": np.ones((n, 1, 4, 4), np.float32)})
                print("NO ERROR")
            except OrtpoolError as err:
                print(str(err).split(" [op type ")[0])
        print("SURVIVED")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "node 'bad' (MaxPool-12): pads='9999999999999999999999999999999999999999,0,0,0' holds "
        "a value beyond int64 (ONNX attributes are int64: -9223372036854775808 to "
        "9223372036854775807)",
        "node 'bad' (MaxPool-12): " + PADDED_INT64,
        "node 'bad' (MaxPool-12): " + HUGE_PADS.format(n=1),
        "node 'bad' (MaxPool-12): " + HUGE_PADS.format(n=0),
        "SURVIVED",
    ]


# ------------------------------------------------------------ the limits


@pytest.fixture(params=BACKENDS)
def backend(request):
    if request.param == "numba":
        pytest.importorskip("numba")
    _backend.set_backend(request.param)
    yield request.param
    _backend.set_backend(None)


def test_reads_limit(backend):
    """A 10**6-long input under a 10**6-tap kernel padded by 10**6 each side: 2000001 outputs
    (8 MB), but every input element is read by 10**6 windows: 10**12 reads."""
    x = np.zeros((1, 1, 10**6), np.float32)
    with pytest.raises(OrtpoolError) as info:
        kernels.max_pool(x, kernel_shape=[10**6], pads=[10**6, 10**6])
    assert str(info.value) == (
        "(MaxPool-22): the windows would read 1000000000000 input elements (counting at least "
        "one plane; kernel_shape [1000000], output [1, 1, 2000001]); the limit is 274877906944 "
        "(ORTPOOL_MAX_READS)"
    )


def test_intermediate_limit_follows_the_pass_order(backend):
    """AveragePool sums axis 0 first (the order fixes the rounding): padding axis 0 by 10**4
    makes that intermediate 8 GB although the output is 80 KB. MaxPool reduces the shrinking
    axis first and runs."""
    x = np.zeros((1, 1, 4, 100000), np.float32)
    attrs = {"kernel_shape": [1, 100000], "pads": [10**4, 0, 10**4, 0]}
    with pytest.raises(OrtpoolError) as info:
        kernels.average_pool(x, **attrs)
    assert str(info.value) == (
        "(AveragePool-22): the intermediate after the pass over spatial axis 0 of shape "
        "[1, 1, 20004, 100000] (float32) would take 8001600000 bytes (counting at least one "
        "plane); the limit is 4294967296 bytes (ORTPOOL_MAX_OUTPUT_BYTES)"
    )
    y = kernels.max_pool(x, **attrs)
    assert y.shape == (1, 1, 20004, 1)
    assert np.isneginf(y[0, 0, :10000]).all() and (y[0, 0, 10000:10004] == 0).all()


def test_unpool_output_limit_and_empty_output(backend):
    x = np.ones((1, 1, 2, 2), np.float32)
    i = np.zeros((1, 1, 2, 2), np.int64)
    with pytest.raises(OrtpoolError) as info:
        kernels.max_unpool(x, i, np.array([1, 1, 10**6, 10**6]), kernel_shape=[2, 2])
    assert str(info.value) == (
        "(MaxUnpool-22): the output Y of shape [1, 1, 1000000, 1000000] (float32) would take "
        "4000000000000 bytes (counting at least one plane); the limit is 4294967296 bytes "
        "(ORTPOOL_MAX_OUTPUT_BYTES)"
    )
    # Default size (1 - 1) * 1 - 1 - 1 + 2 = 0: the output holds no index at all.
    with pytest.raises(OrtpoolError) as info:
        kernels.max_unpool(x[..., :1, :1], i[..., :1, :1], kernel_shape=[2, 2], pads=[1] * 4)
    assert str(info.value) == (
        "(MaxUnpool-22): index 0 in I is outside the output of shape [1, 1, 0, 0] set by the "
        "attributes (it is empty: no index is valid)"
    )


def test_limits_from_the_environment(backend, monkeypatch):
    x = np.zeros((1, 1, 16, 16), np.float32)
    monkeypatch.setenv("ORTPOOL_MAX_OUTPUT_BYTES", "1000")
    with pytest.raises(OrtpoolError, match=r"would take 1024 bytes .*limit is 1000 bytes"):
        kernels.max_pool(x, kernel_shape=[1, 1], pads=[0, 0, 0, 0])
    monkeypatch.setenv("ORTPOOL_MAX_OUTPUT_BYTES", "")
    monkeypatch.setenv("ORTPOOL_MAX_READS", "255")
    with pytest.raises(OrtpoolError, match=r"read 256 input elements .*the limit is 255 "):
        kernels.max_pool(x, kernel_shape=[1, 1], pads=[0, 1, 0, 0])
    monkeypatch.setenv("ORTPOOL_MAX_READS", "many")
    with pytest.warns(UserWarning, match=r"ORTPOOL_MAX_READS='many' is not a positive integer"):
        assert kernels.max_pool(x, kernel_shape=[1, 1], pads=[0, 2, 0, 0]).shape == (1, 1, 16, 18)


# ------------------------------------------------------------ closed forms


def test_plan_arithmetic_is_closed_form_on_a_ten_million_long_axis():
    """The divisor of a 10**7-long axis (a Python loop over output x kernel took 34 s for
    16.7M): right at the borders and inside, on both paths, in a child with a generous
    timeout; the ranges of a 10**9-tap kernel over 10**9 + 3 outputs, and its limits check
    (4 GB of output, 4 * 10**9 reads: both allowed), are O(1). The averages over the same axis
    take a 101-tap kernel: their sums cost output x kernel adds whatever the divisor's
    arithmetic (6.5 s per path for 1001 taps), and the borders they check are the same kind."""
    answers = _run_child(
        """
        from ortpool.geometry import AxisGeometry
        from ortpool.kernels import _limits
        from ortpool.kernels._plan import divisor
        from ortpool.geometry import PoolGeometry
        g = AxisGeometry(n=10**7, k=1001, s=1, d=1, pb=500, pe=500, out=10**7)
        spots = [0, 1, 499, 500, 5 * 10**6, 10**7 - 501, 10**7 - 500, 10**7 - 1]
        huge = AxisGeometry(n=4, k=10**9, s=1, d=1, pb=10**9 - 1, pe=10**9 - 1,
                            out=10**9 + 3)
        def check_huge():
            f32 = np.dtype(np.float32)
            _limits.check_pool(PoolGeometry((huge,)), (1, 1, 4), f32, f32, [0])
            return np.array([*huge.interior(), huge.full_tap(), *huge.tap_span(),
                             *huge.reading()])
        x = np.ones((1, 1, 10**7), np.float32)
        ends = [0, 1, 49, 50, 5 * 10**6, 10**7 - 51, 10**7 - 50, 10**7 - 1]
        CALLS = [
            ("counts", lambda: np.array([g.counts(False)[spots], g.counts(True)[spots]])),
            ("divisor", lambda: divisor(PoolGeometry((g,)), False, np.dtype(np.float32))[spots]),
            ("huge", check_huge),
            ("average", lambda: kernels.average_pool(x, kernel_shape=[101],
                                                     pads=[50, 50])[0, 0, ends] * 101),
        ]
        """,
        BACKENDS,
        timeout=120,
    )
    near = [501, 502, 1000, 1001, 1001, 1001, 1000, 501]
    for backend in BACKENDS:
        assert answers[(backend, "counts")]["result"][0] == [near, [1001] * 8]
        assert answers[(backend, "divisor")]["result"][0] == near
        # No window holds every tap (interior empty), no tap is inside for every output, every
        # tap may be inside for some, every window reads some input.
        out = 10**9 + 3
        assert answers[(backend, "huge")]["result"][0] == [out, out, -1, 0, 10**9, 0, out]
        # sum of the inside taps (all ones) over the count of the inside taps: 1, times 101.
        assert answers[(backend, "average")]["result"][0] == [101.0] * 8


def test_numba_plan_holds_one_row_per_pass():
    pytest.importorskip("numba")
    from ortpool.geometry import PoolGeometry
    from ortpool.kernels import _passes

    g = AxisGeometry(n=4, k=10**9, s=1, d=1, pb=0, pe=10**9, out=5)
    info = _passes.pass_rows(PoolGeometry((g,)), [0])
    # n, out, outer, inner, s, d, pb, no tap inside for every output, k, no interior.
    assert info.tolist() == [[4, 5, 1, 1, 1, 1, 0, -1, 10**9, 5, 5]]


# ------------------------------------------------------------ wide kernels, bit for bit

WIDE = [
    ("wide-1d", (300,), {"kernel_shape": [100], "strides": [3], "pads": [50, 60]}),
    ("wide-dilated-ceil", (200,), {"kernel_shape": [80], "strides": [7], "dilations": [2],
                                   "pads": [90, 30], "ceil_mode": 1}),
    ("diagonal", (3,), {"kernel_shape": [200], "pads": [199, 199]}),
    ("strided-lattice", (2,), {"kernel_shape": [300], "strides": [5], "pads": [290, 290]}),
    ("wide-2d", (12, 70), {"kernel_shape": [10, 65], "strides": [2, 1],
                           "pads": [3, 20, 4, 30]}),
    ("empty-2d", (4, 5), {"kernel_shape": [2, 3], "dilations": [3, 3], "pads": [4, 4, 5, 5]}),
]


def _wide_input(spatial, dtype=np.float64):
    rng = np.random.default_rng(len(spatial) * 100 + spatial[0])
    planes = (2, 3) if np.prod(spatial) > 100 else (3, 4)
    x = rng.integers(-4, 5, (*planes, *spatial)).astype(dtype)  # ties
    if dtype != np.int8:
        x.reshape(-1)[rng.choice(x.size, 3, replace=False)] = np.nan
    return x


@pytest.mark.parametrize(("spatial", "attrs"), [pytest.param(*w[1:], id=w[0]) for w in WIDE])
def test_wide_kernels_on_numpy_match_the_reference(spatial, attrs):
    """Passes over more than TAP_LIST_MAX candidate taps go by output (wide_pass), Indices of
    more than WINDOW_LOOP_MAX tap combinations are searched axis by axis: against the loops."""
    _backend.set_backend("numpy")
    try:
        x = _wide_input(spatial)
        y, i = kernels.max_pool(x, return_indices=True, **attrs)
        ry, ri = reference_max(x, attrs)
        np.testing.assert_array_equal(y, ry)
        np.testing.assert_array_equal(i, ri)
        for include in (0, 1):
            got = kernels.average_pool(x, count_include_pad=include, **attrs)
            want = reference_average(x, {**attrs, "count_include_pad": include})
            np.testing.assert_allclose(got, want, rtol=1e-12)
    finally:
        _backend.set_backend(None)


@pytest.mark.parametrize(("spatial", "attrs"), [pytest.param(*w[1:], id=w[0]) for w in WIDE])
@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_wide_paths_are_bit_identical_to_the_listed_ones(spatial, attrs, dtype, monkeypatch):
    """The same call with every pass listed and every Indices marked (numpy's small-kernel
    forms), with every pass wide and every Indices searched, and compiled: the same bits."""
    x = _wide_input(spatial, dtype)

    def calls():
        _calls.forget()
        out = [kernels.max_pool(x, **attrs), *kernels.max_pool(x, return_indices=True, **attrs)]
        if dtype != np.int8:
            out += [kernels.average_pool(x, count_include_pad=c, **attrs) for c in (0, 1)]
        return out

    try:
        _backend.set_backend("numpy")
        monkeypatch.setattr(_passes, "TAP_LIST_MAX", 10**6)
        monkeypatch.setattr(_numpy_plans, "WINDOW_LOOP_MAX", 10**6)
        listed = calls()
        monkeypatch.setattr(_passes, "TAP_LIST_MAX", 0)
        monkeypatch.setattr(_numpy_plans, "WINDOW_LOOP_MAX", 0)
        results = [calls()]
        if _numba_available():
            _backend.set_backend("numba")
            results.append(calls())
    finally:
        _backend.set_backend(None)
    for other in results:
        for a, b in zip(listed, other, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape
            if a.dtype.kind == "f":  # a max of +0 and -0 may be either (np.maximum's SIMD)
                a, b = np.where(a == 0, 0, a), np.where(b == 0, 0, b)
            np.testing.assert_array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}"))


def _numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


# ------------------------------------------------------------ bounded memory

RSS_CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    from ortpool import kernels
    from ortpool.kernels import _backend, _calls
    _backend.set_backend(sys.argv[1])
    def rss():
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmRSS"))
    def call(n):
        x = np.ones((1, 1, n), np.float32)
        kernels.average_pool(x, kernel_shape=[3], strides=[2], pads=[1, 1])
        kernels.max_pool(x, kernel_shape=[3], strides=[2], pads=[1, 1])
        kernels.max_pool(x, kernel_shape=[3], strides=[2], pads=[1, 1], return_indices=True)
    call(10)
    start = rss()
    for n in np.random.default_rng(0).permutation(np.arange(100000, 200000))[:1000].tolist():
        call(n)  # a new length at every call
    print((rss() - start) // 1024, _calls._held)
    """
)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RSS from /proc")
@pytest.mark.parametrize("path", BACKENDS)
def test_new_shapes_at_every_call_keep_memory_bounded(path):
    """1000 calls of each op with a new length each (audio of 100k-200k samples): the cached
    plans stay within their byte bound and RSS grows by less than 200 MiB (measured about
    90 MiB numpy, 115 MiB numba; before, the numba plans held per-output tables and took
    minutes to build, the numpy path plateaued at 320 MiB: 1024 plans and 256 divisors of
    up to a 100k-output plane each)."""
    if path == "numba":
        pytest.importorskip("numba")
    done = subprocess.run(
        [sys.executable, "-c", RSS_CHILD, path], capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    growth_mib, held = map(int, done.stdout.split())
    assert held <= _calls.MAX_HELD_BYTES
    assert growth_mib < 200


def test_the_call_cache_is_bounded_in_bytes(monkeypatch):
    monkeypatch.setattr(_calls, "MAX_HELD_BYTES", 3 * (_calls.ENTRY_BYTES + 50))
    _calls.forget()
    try:
        runners = [(lambda x, n=n: n) for n in range(4)]
        for n, runner in enumerate(runners):
            _calls.remember(("t", n), runner, 50)
        # The first entry made room for the fourth; an entry beyond the bound is kept alone.
        assert [key[1] for key in _calls._CALLS] == [1, 2, 3]
        assert _calls._held == 3 * (_calls.ENTRY_BYTES + 50)
        _calls.remember(("t", 9), runners[0], 10**9)
        assert list(_calls._CALLS) == [("t", 9)]
        assert _calls._held == 10**9 + _calls.ENTRY_BYTES
    finally:
        _calls.forget()


def test_limits_count_at_least_one_plane():
    """An empty batch, or an empty axis next to a long one, is counted as one plane, one
    element: the attributes decide."""
    with pytest.raises(OrtpoolError, match=r"shape \[0, 3, 0, 2000000000\] \(float32\) would "
                                           r"take 8000000000 bytes"):
        _limits.check_array("the output Y", (0, 3, 0, 2 * 10**9), np.dtype(np.float32))
    _limits.check_array("the output Y", (0, 3, 0, 10**9), np.dtype(np.float32))


@pytest.mark.parametrize("env", ["ORTPOOL_MAX_READS", "ORTPOOL_THREADS"])
@pytest.mark.parametrize("text", ["²", "many", "0"])
def test_a_setting_that_is_no_positive_integer_is_warned_and_the_default_used(env, text,
                                                                              monkeypatch):
    """'²' passed str.isdigit and then failed int() inside the kernel (a ValueError traceback);
    ORTPOOL_THREADS took anything else without a word."""
    x = np.arange(2 * 8 * 256 * 256, dtype=np.float32).reshape(2, 8, 256, 256)  # 4 MB: split
    _backend.set_backend("numpy")
    kernels.forget_plans()  # a plan reads the read limit as it is made
    monkeypatch.setenv(env, text)
    try:
        with pytest.warns(UserWarning, match=rf"^{env}='{text}' is not a positive integer: "
                          r"using \d+$"):
            y = kernels.max_pool(x, kernel_shape=[2, 2], strides=[2, 2])
    finally:
        _backend.set_backend(None)
    np.testing.assert_array_equal(y, x.reshape(2, 8, 128, 2, 128, 2).max(axis=(3, 5)))
