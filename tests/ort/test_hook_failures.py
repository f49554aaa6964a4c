"""No input kills the process: the hook's failure path is total, and outputs the process cannot
hold are refused before they are computed (issue 17).

* A property test calls the hook in-process with failures forced in the kernel (every op type,
  arity and dtype; random input shapes with zero and huge dims; output shapes that are empty,
  negative, overflowing, not integers or unknown; the memory check refusing; the failure path's
  own steps failing): it always returns one C-contiguous array per declared output, of the
  declared dtype, of a shape numpy and onnxruntime can allocate, and never raises.
* Child processes with a time limit run the same through onnxruntime sessions, the two
  reproductions of the issue, and both under a 2 GiB address-space limit.
* The reading of the limits (rlimits, cgroup v1 and v2, /proc/meminfo) on a /proc and /sys made
  for the test.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import json
import math
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnxruntime_extensions import _ocos

from ortpool import optypes
from ortpool.errors import OrtpoolError
from ortpool.kernels import _limits, _memory
from ortpool.ort import failures, hook, register
from tests import support

#: Depends on onnxruntime-extensions' hook protocol: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

ROOT = Path(__file__).resolve().parents[2]
NP_DTYPE = {"float": np.float32, "double": np.float64, "int8": np.int8, "uint8": np.uint8}
KERNELS = [(t, dtype) for t in optypes.all_op_types() for dtype in t.dtypes]

register.register()


# ---------------------------------------------------------------- the hook, in-process


class Forced(Exception):
    """The failure forced in a kernel."""


def _room(free: int, address_space: bool = False) -> list[_memory.Room]:
    return [_memory.Room(free, "a limit made for the test", address_space)]


@contextlib.contextmanager
def _patched(obj, name, value):
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


DIMS = st.sampled_from([0, 1, 2, 3, 7, 2**20, 2**30])
#: Output shapes the shape function may claim: real ones, and every way one can be wrong.
SHAPES = st.one_of(
    st.lists(DIMS, min_size=0, max_size=6).map(tuple),
    st.just((0, 1, 2000000003, 2000000003)),  # the issue: size 0, numpy "too big"
    st.just((2**62, 2**62, 0)),  # onnxruntime multiplies in order: overflow before the 0
    st.lists(st.integers(-(2**63), 2**64), min_size=1, max_size=5).map(tuple),
    st.just((1,) * 40),  # more dims than numpy takes
    st.just((1.5, 2)),
    st.just(("a", 1)),
    st.just(None),
)


def _feed(op_type: optypes.OpType, dtype: str, draw) -> list:
    """Inputs of the op's arity: broadcast views (any shape, no memory), sometimes junk."""
    types = [
        NP_DTYPE[dtype] if typed else np.int64
        for typed in op_type.spec.typed_inputs[: op_type.n_inputs]
    ]
    feed = []
    for t in types:
        shape = tuple(draw(st.lists(DIMS, min_size=0, max_size=5)))
        while math.prod(max(d, 1) for d in shape) * np.dtype(t).itemsize >= 2**62:
            shape = shape[:-1]  # numpy's bound, even for a view
        feed.append(np.broadcast_to(np.zeros((), t), shape))
    if draw(st.integers(0, 9)) == 0:
        feed[-1] = draw(st.sampled_from([None, [1, 2], "x"]))
    return feed


ATTRS = st.one_of(
    st.just({"kernel_shape": "2,2", "pads": "1000000000,1000000000,1000000000,1000000000"}),
    st.just({"kernel_shape": "x"}),
    st.just({}),
    st.dictionaries(
        st.sampled_from(["kernel_shape", "pads", "strides", "pooled_shape", "p"]),
        st.sampled_from(["2,2", "", "-1", "1," * 70 + "1", "\udcff"]),
        max_size=4,
    ),
)


def _check_answer(answer, k_id: int, out_dtypes, max_bytes: int) -> None:
    """What onnxruntime-extensions accepts: (k_id, shape, array, ...) for every output, each
    array C-contiguous of the declared dtype and of the shape given, which onnxruntime can
    allocate (dims >= 0, nonzero dims multiplying within int64)."""
    assert isinstance(answer, tuple) and answer[0] == k_id
    assert len(answer) == 1 + 2 * len(out_dtypes), answer
    for i, dtype in enumerate(out_dtypes):
        shape, array = answer[1 + 2 * i], answer[2 + 2 * i]
        assert isinstance(array, np.ndarray) and array.dtype == dtype
        assert tuple(shape) == array.shape and array.flags.c_contiguous
        assert min(array.shape, default=0) >= 0
        assert math.prod(max(d, 1) for d in array.shape) * dtype.itemsize < 2**63
        assert array.nbytes <= max_bytes


@settings(max_examples=200)
@given(data=st.data())
def test_the_failure_path_always_answers(data):
    op_type, dtype = data.draw(st.sampled_from(KERNELS), label="kernel")
    k_id = _ocos._ortpool_registered[(op_type.name, dtype)]
    name, _, out_dtypes, real_shape = hook.OURS[k_id]
    feed = _feed(op_type, dtype, data.draw)
    attrs = data.draw(ATTRS, label="attributes")
    error = data.draw(
        st.sampled_from(
            [Forced("forced"), MemoryError(), OrtpoolError("refused"), KeyboardInterrupt()]
        ),
        label="error",
    )
    claimed = data.draw(st.one_of(st.just("real"), st.just("raises"), SHAPES), label="shape")
    room = data.draw(st.sampled_from([None, 0, 10**12]), label="room")
    broken = data.draw(st.sampled_from([None, "placeholders", "record", "both"]), label="broken")

    def failing(feed, attributes):
        raise error

    def shape(feed, attributes):
        if claimed == "raises":
            raise ValueError("no shape")
        return real_shape(feed, attributes) if claimed == "real" else claimed

    def boom(*args, **kwargs):
        raise RuntimeError("the failure path itself failed")

    failures.clear()
    with contextlib.ExitStack() as stack:
        stack.enter_context(
            _patched(hook, "OURS", {**hook.OURS, k_id: (name, failing, out_dtypes, shape)})
        )
        # The same rule at 1 MB: NaN-filling placeholders of up to 1 GiB would cost seconds.
        stack.enter_context(_patched(hook, "MAX_PLACEHOLDER_BYTES", 1 << 20))
        if room is not None:
            stack.enter_context(_patched(_memory, "rooms", lambda proc=None: _room(room)))
        if broken in ("placeholders", "both"):
            stack.enter_context(_patched(hook, "placeholders", boom))
        if broken in ("record", "both"):
            stack.enter_context(_patched(failures, "record", boom))
        answer = hook.invoke(k_id, feed, attrs)
    _check_answer(answer, k_id, out_dtypes, 1 << 20)
    recorded = failures.take_thread()
    if broken in ("record", "both"):
        assert recorded == []
    else:
        (failure,) = recorded
        assert failure.op_type == op_type.name
        # Outputs of a real shape the memory cannot hold are refused before the kernel runs.
        assert failure.error is error or "the process can allocate" in str(failure.error)


def test_the_issue_placeholder_is_empty_of_the_output_rank():
    """[0, 1, 2000000003, 2000000003]: size 0, yet numpy cannot make it; the placeholders are
    empty arrays of rank 4, Y float32 and Indices int64."""
    k_id = _ocos._ortpool_registered[("MaxPool_12_Indices", "float")]
    attrs = {
        "auto_pad": "NOTSET",
        "ceil_mode": "0",
        "dilations": "1,1",
        "kernel_shape": "2,2",
        "pads": "1000000000,1000000000,1000000000,1000000000",
        "storage_order": "0",
        "strides": "1,1",
    }
    failures.clear()
    answer = hook.invoke(k_id, [np.zeros((0, 1, 4, 4), np.float32)], attrs)
    assert [(a.shape, a.dtype) for a in answer[2::2]] == [
        ((0, 0, 0, 0), np.dtype(np.float32)),
        ((0, 0, 0, 0), np.dtype(np.int64)),
    ]
    (failure,) = failures.take_thread()
    assert "the output Y of shape [0, 1, 2000000003, 2000000003] (float32)" in str(failure.error)


def test_a_placeholder_the_memory_cannot_hold_twice_is_empty(monkeypatch):
    """A failed call's placeholder of its real shape (here 64 MB) is left empty when the memory
    could not hold it and onnxruntime's copy."""
    k_id = _ocos._ortpool_registered[("MaxUnpool_11_OutputShape", "float")]
    # Index 4096**2 is outside the output: the kernel fails.
    feed = [
        np.ones((1, 1, 2, 2), np.float32),
        np.full((1, 1, 2, 2), 4096**2, np.int64),
        np.array([1, 1, 4096, 4096], np.int64),
    ]
    attrs = {"kernel_shape": "2,2", "pads": "0,0,0,0", "strides": "2,2"}
    failures.clear()
    monkeypatch.setattr(_memory, "rooms", lambda proc=None: _room(10**12))
    nan = hook.invoke(k_id, feed, attrs)[2]
    assert nan.shape == (1, 1, 4096, 4096) and np.isnan(nan).all()
    monkeypatch.setattr(_memory, "rooms", lambda proc=None: _room(100 << 20))
    empty = hook.invoke(k_id, feed, attrs)[2]
    assert empty.shape == (0, 0, 0, 0) and empty.dtype == np.float32
    assert [type(f.error) for f in failures.take_thread()] == [OrtpoolError, OrtpoolError]


def test_outputs_refused_before_the_kernel_runs(monkeypatch):
    """The check counts Y and onnxruntime's copy, written (memory limits) and reserved
    (address-space limits: the arena's next power of two, plus slack); the kernel never runs."""
    k_id = _ocos._ortpool_registered[("MaxUnpool_11_OutputShape", "float")]
    name, _, out_dtypes, shape = hook.OURS[k_id]
    ran = []
    monkeypatch.setitem(hook.OURS, k_id, (name, lambda f, a: ran.append(1), out_dtypes, shape))
    feed = [
        np.ones((1, 1, 2, 2), np.float32),
        np.zeros((1, 1, 2, 2), np.int64),
        np.array([1, 1, 10000, 10000], np.int64),
    ]
    attrs = {"kernel_shape": "2,2", "pads": "0,0,0,0", "strides": "2,2"}
    monkeypatch.setattr(_memory, "rooms", lambda proc=None: _room(799_999_999))
    monkeypatch.setattr(hook, "held_output_bytes", lambda: 0)
    failures.clear()
    answer = hook.invoke(k_id, feed, attrs)
    assert ran == [] and answer[2].size == 0
    (failure,) = failures.take_thread()
    assert str(failure.error) == (
        "the output Y of shape [1, 1, 10000, 10000] (float32, 400000000 bytes) and "
        "onnxruntime's copy of it in its arena would take 800000000 bytes; the process can "
        "allocate 799999999 more (a limit made for the test)"
    )
    arena = (1 << 29) + hook.ARENA_SLACK  # 400 MB -> a 512 MiB region
    assert hook._arena_bytes(400_000_000) == arena
    monkeypatch.setattr(_memory, "rooms", lambda proc=None: _room(10**9, address_space=True))
    hook.invoke(k_id, feed, attrs)
    (failure,) = failures.take_thread()
    assert str(failure.error).endswith(
        f"would take {400_000_000 + arena} bytes of address space; the process can allocate "
        "1000000000 more (a limit made for the test)"
    )
    # Bytes this thread's buffers hold are reused or freed first: they count as free.
    monkeypatch.setattr(hook, "held_output_bytes", lambda: 500_000_000)
    monkeypatch.setattr(_memory, "rooms", lambda proc=None: _room(400_000_000))
    hook.invoke(k_id, feed, attrs)
    assert ran == [1]
    failures.clear()


def test_small_outputs_read_no_limits(monkeypatch):
    """Below 64 MB (what the outputs and the copy take) the limits are not read at all."""
    monkeypatch.setattr(_memory, "rooms", lambda proc=None: pytest.fail("limits read"))
    _limits.check_memory("x", _limits.MEMORY_CHECK_BYTES - 1)
    _limits.check_memory("x", 10 * _limits.MEMORY_CHECK_BYTES, reusable=10**12)


# ---------------------------------------------------------------- the limits, as read


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_cgroup_v2_limits_of_the_group_and_its_ancestors(tmp_path):
    proc, sys_ = tmp_path / "proc", tmp_path / "sys"
    _write(proc / "self" / "cgroup", "0::/kube/pod7\n")
    _write(
        proc / "self" / "mountinfo",
        f"30 23 0:26 / {sys_} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
    )
    _write(proc / "self" / "statm", "1 1 1 1 0 1 0\n")
    _write(proc / "meminfo", "MemTotal: 100 kB\nMemAvailable:  5000000 kB\nSwapFree: 1000 kB\n")
    pod, kube = sys_ / "kube" / "pod7", sys_ / "kube"
    _write(pod / "memory.max", "2147483648\n")
    _write(pod / "memory.current", "1500000000\n")
    _write(pod / "memory.stat", "anon 1000\nfile 600000000\ninactive_file 500000000\n")
    _write(kube / "memory.max", "max\n")
    _write(sys_ / "memory.max", "junk\n")
    _memory._cached.clear()
    assert _memory.rooms(proc)[-2:] == [
        _memory.Room(
            2147483648 - 1000000000,
            f"cgroup memory limit 2147483648 bytes ({pod / 'memory.max'}), 1000000000 in use",
        ),
        _memory.Room(
            5001000 * 1024, "MemAvailable 5120000000 bytes + SwapFree 1024000 bytes (/proc/meminfo)"
        ),
    ]
    _write(kube / "memory.max", "1200000000\n")
    _write(kube / "memory.current", "1100000000\n")
    _memory._cached.clear()
    assert [r.free for r in _memory.rooms(proc) if "cgroup" in r.source] == [1147483648, 100000000]
    # the least of them: what validate's default workers are counted against
    assert _memory.memory_room(proc) == 100000000


def test_cgroup_v1_hybrid_and_a_namespaced_group(tmp_path):
    """v1's memory hierarchy next to a v2 mount without the controller (this machine's layout);
    a group path outside the mount's root (a cgroup namespace) reads the mount point."""
    proc, sys_ = tmp_path / "proc", tmp_path / "sys"
    _write(proc / "self" / "cgroup", "4:memory:/outside/abc\n0::/\n")
    _write(
        proc / "self" / "mountinfo",
        f"35 31 0:32 /inside {sys_ / 'memory'} rw - cgroup cgroup rw,memory\n"
        f"41 31 0:38 / {sys_ / 'unified'} rw - cgroup2 cgroup2 rw\n",
    )
    mem = sys_ / "memory"
    _write(mem / "memory.limit_in_bytes", "3000000000\n")
    _write(mem / "memory.usage_in_bytes", "1000000000\n")
    _write(mem / "memory.stat", "inactive_file 7\ntotal_inactive_file 200000000\n")
    _memory._cached.clear()
    (room,) = _memory.rooms(proc)
    assert room == _memory.Room(
        2200000000,
        f"cgroup memory limit 3000000000 bytes ({mem / 'memory.limit_in_bytes'}), 800000000 in use",
    )
    _write(mem / "memory.limit_in_bytes", "9223372036854771712\n")  # v1's "no limit"
    _memory._cached.clear()
    assert _memory.rooms(proc) == [] and _memory.memory_room(proc) is None


def test_rlimits_against_the_address_space_in_use():
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY or soft != resource.RLIM_INFINITY:
        pytest.skip("RLIMIT_AS already set")
    pages = [int(v) for v in Path("/proc/self/statm").read_text().split()]
    resource.setrlimit(resource.RLIMIT_AS, (1 << 44, hard))
    try:
        _memory._cached.clear()
        (room,) = [r for r in _memory.rooms() if "RLIMIT_AS" in r.source]
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        _memory._cached.clear()
    used = (1 << 44) - room.free
    assert room.address_space
    assert abs(used - pages[0] * os.sysconf("SC_PAGE_SIZE")) < 64 << 20
    assert room.source == f"address-space limit {1 << 44} bytes (RLIMIT_AS), {used} in use"


# ---------------------------------------------------------------- sessions, in child processes

#: A child: ``CODE`` runs after these lines, prints JSON lines, then "SURVIVED".
PRELUDE = textwrap.dedent(
    """
    import json, os, resource, sys
    limit = int(os.environ.get("LIMIT_AS", "0"))
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import numpy as np
    import ortpool
    from tests import support
    from ortpool.errors import OrtpoolError

    def run(session, feed):
        try:
            outputs = session.run(None, feed)
            return {"shapes": [list(o.shape) for o in outputs]}
        except OrtpoolError as err:
            return {"error": str(err)}

    def pads_n0():
        model = support.ortpool_model("MaxPool", 12, {"kernel_shape": [2, 2],
                                      "pads": [10**9] * 4}, np.float32, n_outputs=2)
        return run(ortpool.InferenceSession(model), {"X": np.zeros((0, 1, 4, 4), np.float32)})

    def unpool(n, session=None):
        model = support.ortpool_model("MaxUnpool", 11, {"kernel_shape": [2, 2],
                                      "strides": [2, 2]}, np.float32, n_inputs=3)
        session = session or ortpool.InferenceSession(model)
        feed = {"X": np.ones((1, 1, 2, 2), np.float32),
                "I": np.arange(4).reshape(1, 1, 2, 2),
                "output_shape": np.array([1, 1, n, n], np.int64)}
        return run(session, feed), session
    """
)


#: Each child: (kernels, RLIMIT_AS, code). They run two at a time (the machine's two cores), once
#: per test session, and each test reads its own answers.
CHILDREN = {
    "numba": (
        "numba",
        0,
        """
        print(json.dumps(pads_n0()))
        """,
    ),
    "6GiB": (
        "numpy",
        6 << 30,
        """
        print(json.dumps(unpool(30000)[0]))
        """,
    ),
    "2GiB-numpy": (
        "numpy",
        2 << 30,
        """
        print(json.dumps(pads_n0()))
        print(json.dumps(unpool(30000)[0]))
        print(json.dumps(unpool(13000)[0]))
        answer, session = unpool(8000)
        print(json.dumps(answer))
        for _ in range(2):
            print(json.dumps(unpool(8000, session)[0]))
        print(json.dumps(unpool(30000, session)[0]))
        """,
    ),
    # Only the two reproductions on numba: both are refused before any kernel is compiled.
    "2GiB-numba": (
        "numba",
        2 << 30,
        """
        print(json.dumps(pads_n0()))
        print(json.dumps(unpool(30000)[0]))
        """,
    ),
    "numpy": (
        "numpy",
        0,
        """
        print(json.dumps(pads_n0()))
        from onnxruntime_extensions import _ocos
        from ortpool import optypes
        from ortpool.ort import hook
        ortpool.register()
        HOSTILE = [(0, 1, 2000000003, 2000000003), (2**62, 2**62, 0), (-1, 3), None,
                   (1,) * 40, (0, 0, 0, 0), (2, 3)]
        ATTRS = {"MaxRoiPool": {"pooled_shape": [2, 2]}, "GlobalMaxPool": {},
                 "GlobalAveragePool": {}, "GlobalLpPool": {}}
        DTYPES = {"float": np.float32, "double": np.float64, "int8": np.int8,
                  "uint8": np.uint8}
        count = 0
        for op_type in optypes.all_op_types():
            spec = op_type.spec
            for dtype in op_type.dtypes:
                k_id = _ocos._ortpool_registered[(op_type.name, dtype)]
                name, body, out_dtypes, shape = hook.OURS[k_id]
                claimed = HOSTILE[count % len(HOSTILE)]

                def failing(feed, attrs, k=op_type.name):
                    raise RuntimeError(f"forced in {k}")

                def lying(feed, attrs, claimed=claimed):
                    if claimed is None:
                        raise ValueError("no shape")
                    return claimed

                hook.OURS[k_id] = (name, failing, out_dtypes, lying)
                attrs = ATTRS.get(spec.op, {"kernel_shape": [2, 2]})
                model = support.ortpool_model(spec.op, spec.version, attrs, DTYPES[dtype],
                                              n_inputs=op_type.n_inputs,
                                              n_outputs=op_type.n_outputs)
                x_dtype = DTYPES[dtype]
                feed = {"X": np.zeros((count % 2, 1, 4, 4), x_dtype)}
                if spec.op == "MaxUnpool":
                    feed["I"] = np.zeros((count % 2, 1, 4, 4), np.int64)
                    if op_type.n_inputs == 3:
                        feed["output_shape"] = np.array([-1, 1, 2**40, 2**40], np.int64)
                if spec.op == "MaxRoiPool":
                    feed["rois"] = np.zeros((count % 3, 5), x_dtype)
                answer = run(ortpool.InferenceSession(model), feed)
                print(json.dumps({"kernel": [op_type.name, dtype], **answer}))
                count += 1
        """,
    ),
}
TIMEOUT = 120


def _launch(name: str) -> subprocess.CompletedProcess | str:
    kernels, limit, code = CHILDREN[name]
    env = {
        **support.CHILD_ENV,
        "PYTHONPATH": str(ROOT),
        "ORTPOOL_KERNELS": kernels,
        "LIMIT_AS": str(limit),
    }
    try:
        return subprocess.run(
            [sys.executable, "-c", PRELUDE + textwrap.dedent(code) + "\nprint('SURVIVED')"],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return f"hung: no answer in {TIMEOUT} s"


@functools.cache
def _results() -> dict[str, subprocess.CompletedProcess | str]:
    names = [n for n in CHILDREN if CHILDREN[n][0] != "numba" or _numba_available()]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        return dict(zip(names, pool.map(_launch, names), strict=True))


def _numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def _child(name: str) -> list:
    """The JSON answers of child ``name``, which must have lived to print SURVIVED."""
    if CHILDREN[name][0] == "numba" and not _numba_available():
        pytest.skip("numba is not installed")
    done = _results()[name]
    assert not isinstance(done, str), done
    assert done.returncode == 0, f"child died ({done.returncode}): {done.stderr[-3000:]}"
    lines = done.stdout.splitlines()
    assert lines and lines[-1] == "SURVIVED", done.stdout + done.stderr
    return [json.loads(line) for line in lines[:-1]]


HUGE_PADS_N0 = (
    "node 'pool' (MaxPool-12): the output Y of shape [0, 1, 2000000003, 2000000003] (float32) "
    "would take 16000000048000000036 bytes (counting at least one plane); the limit is "
    "4294967296 bytes (ORTPOOL_MAX_OUTPUT_BYTES) [op type MaxPool_12_Indices, input shapes "
    "[0, 1, 4, 4]]"
)
UNPOOL = (
    "node 'pool' (MaxUnpool-11): the output Y of shape [1, 1, {n}, {n}] (float32, {b} bytes) "
    "and onnxruntime's copy of it in its arena would take {need} bytes{kind}; the process can "
    "allocate "
)
UNPOOL_INPUTS = "[op type MaxUnpool_11_OutputShape, input shapes [1, 1, 2, 2], [1, 1, 2, 2], [4]]"


@pytest.mark.parametrize("kernels", ["numpy", "numba"])
def test_issue_empty_batch_with_indices_and_huge_pads(kernels):
    """Reproduction 1: the kernel's refusal reaches the run; the placeholders (empty, rank 4)
    no longer fail."""
    assert _child(kernels)[0] == {"error": HUGE_PADS_N0}


def test_issue_unpool_output_the_address_space_cannot_hold_twice():
    """Reproduction 2: 3.6 GB fits a 6 GiB address space once, not with onnxruntime's copy
    (the process aborted in BFCArena::AllocateRawInternal); refused before it is computed."""
    (answer,) = _child("6GiB")
    b = 3_600_000_000
    need = b + hook._arena_bytes(b)
    assert answer["error"].startswith(
        UNPOOL.format(n=30000, b=b, need=need, kind=" of address space")
    )
    assert "(address-space limit 6442450944 bytes (RLIMIT_AS), " in answer["error"]
    assert answer["error"].endswith(UNPOOL_INPUTS)


@pytest.mark.parametrize("kernels", ["numpy", "numba"])
def test_both_cases_under_a_2_gib_address_space(kernels):
    """Under ``RLIMIT_AS`` = 2 GiB: the two reproductions; on numpy also a 676 MB output that
    fits once but not with the arena region of its copy (it aborted before), and a 256 MB one
    that fits, run three times (the buffers and the arena region of the first run are reused),
    then the 3.6 GB one in that session (the buffers held count as free)."""
    answers = _child(f"2GiB-{kernels}")
    assert answers[0] == {"error": HUGE_PADS_N0}
    sizes = (30000, 13000) if kernels == "numpy" else (30000,)
    assert len(answers) == (7 if kernels == "numpy" else 2)
    for answer, n in zip(answers[1:], sizes, strict=False):
        assert "error" in answer, answer
        assert "bytes of address space; the process can allocate" in answer["error"]
        assert f"[1, 1, {n}, {n}] (float32" in answer["error"]
        assert "(address-space limit 2147483648 bytes (RLIMIT_AS), " in answer["error"]
    if kernels == "numpy":
        assert answers[3:6] == [{"shapes": [[1, 1, 8000, 8000]]}] * 3
        assert answers[6]["error"].endswith(" bytes it holds " + UNPOOL_INPUTS)


def test_every_kernel_failing_through_a_session():
    """Every op type and dtype with its kernel forced to fail and its output shape claimed to
    be each hostile shape in turn, through sessions: each run raises the forced error as an
    OrtpoolError naming the node; the process lives."""
    answers = _child("numpy")[1:]
    assert len(answers) == len(KERNELS) == 82
    for answer in answers:
        name = answer["kernel"][0]
        spec = optypes.parse(name).spec
        assert answer.get("error", "").startswith(
            f"node 'pool' ({spec.op}-{spec.version}): RuntimeError: forced in {name} "
            f"[op type {name}, input shapes "
        ), answer
