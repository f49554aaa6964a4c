"""The compiled (numba) kernels against the numpy plans, and how the kernels are chosen.

The property tests run both paths against the loop reference on small tensors. Here: tensors
large enough for the specialised interior loops, the thread split and every dtype, compared bit
for bit between the two paths (the numba kernels combine the same taps in the same order);
``ORTPOOL_KERNELS`` and the lazy import of numba.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ortpool import kernels
from ortpool.kernels import _backend, _numba_plans, _parallel, _passes

numba = pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def paths():
    """Call ``f`` with the numpy plans, then with the numba kernels; plans are rebuilt."""

    def both(f):
        _backend.set_backend("numpy")
        a = f()
        _backend.set_backend("numba")
        b = f()
        return a, b

    yield both
    _backend.set_backend(None)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _assert_same(a, b, zero_sign: bool = True) -> None:
    """Bit for bit; with ``zero_sign=False`` a maximum of 0 may be +0 in one and -0 in the other:
    the two are equal, and numpy's own np.maximum picks either depending on its SIMD loop."""
    a, b = (a, b) if isinstance(a, tuple) else ((a,), (b,))
    for p, q in zip(a, b, strict=True):
        assert p.dtype == q.dtype and p.shape == q.shape
        if not zero_sign and p.dtype.kind == "f":
            np.testing.assert_array_equal(p == 0, q == 0)
            p, q = np.where(p == 0, 0, p), np.where(q == 0, 0, q)
        np.testing.assert_array_equal(_bits(p), _bits(q))


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(shape).astype(dtype)
        flat = x.reshape(-1)
        flat[rng.choice(x.size, x.size // 50, replace=False)] = np.round(
            flat[rng.choice(x.size, x.size // 50, replace=False)]
        )  # ties
        flat[rng.choice(x.size, 40, replace=False)] = np.nan
        flat[rng.choice(x.size, 40, replace=False)] = -np.inf
        flat[rng.choice(x.size, 40, replace=False)] = -0.0
        return x
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape, dtype=dtype)


# (id, spatial, attributes): the specialised interiors (k, s, first tap), dilations, ceil mode,
# same padding, pads beyond the kernel (empty windows), rank 1-3, and one rank 4 (numpy only
# for Indices).
GEOMETRIES = [
    ("k3s2p1", (37, 41), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ("k2s2", (36, 40), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ("k3s1p1", (19, 23), {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]}),
    ("k3s2-ceil", (21, 17), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ("k3s1", (20, 9), {"kernel_shape": [3, 2], "strides": [1, 1]}),
    ("k4s4-1d", (130,), {"kernel_shape": [4], "strides": [4], "pads": [1, 2]}),
    ("dilated-same", (25, 30), {"kernel_shape": [3, 2], "dilations": [2, 3],
                                "auto_pad": "SAME_LOWER", "strides": [2, 1]}),
    ("pads-beyond", (5, 6), {"kernel_shape": [2, 3], "pads": [3, 4, 2, 5], "strides": [3, 2]}),
    ("3d", (9, 14, 15), {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [1] * 6}),
    ("3d-k2", (8, 10, 12), {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]}),
    ("4d", (4, 5, 6, 7), {"kernel_shape": [2, 2, 2, 3], "strides": [1, 2, 2, 2]}),
    # Inner rows exactly s times the output rows: the flat passes over a whole plane, split
    # into phases when windows overlap (s = 2, 3, 4; dilated), one strided loop when not
    # (k3s3), fused taps (k <= 3) or tap by tap (k > 3), row borders redone.
    ("k3s2p1-even", (38, 40), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ("k3s2d2-even", (20, 24), {"kernel_shape": [3, 3], "strides": [2, 2], "dilations": [2, 2],
                               "pads": [2, 2, 2, 2]}),
    ("k3s3", (12, 18), {"kernel_shape": [3, 3], "strides": [3, 3]}),
    ("k6s4", (8, 32), {"kernel_shape": [2, 6], "strides": [1, 4], "pads": [0, 1, 0, 1]}),
    ("k5s3", (9, 27), {"kernel_shape": [1, 5], "strides": [1, 3], "pads": [0, 2, 0, 2]}),
    ("k2s1-lower", (7, 30), {"kernel_shape": [2, 2], "pads": [1, 1, 0, 0]}),
]


@pytest.mark.parametrize(("spatial", "attrs"), [pytest.param(*g[1:], id=g[0]) for g in GEOMETRIES])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint8, np.float16])
def test_max_pool_bit_identical(paths, spatial, attrs, dtype, monkeypatch):
    x = _data((2, 3, *spatial), dtype, seed=len(spatial) * 7 + x_seed(attrs))
    _assert_same(*paths(lambda: kernels.max_pool(x, version=22, **attrs)), zero_sign=False)
    monkeypatch.setattr(_numba_plans, "NUMBA_BLOCK_BYTES", 0)  # a block per plane
    _assert_same(*paths(lambda: kernels.max_pool(x, version=22, **attrs)), zero_sign=False)
    indices = paths(lambda: kernels.max_pool(x, version=22, return_indices=True, **attrs))
    _assert_same(*indices, zero_sign=False)
    # The compiled path's Y is the input at its index, to the bit (where there is one).
    y, i = indices[1]
    found = i >= 0
    np.testing.assert_array_equal(_bits(x.reshape(-1)[i[found]]), _bits(y[found]))
    with_order = paths(
        lambda: kernels.max_pool(x, version=22, return_indices=True, storage_order=1, **attrs)
    )
    _assert_same(*with_order, zero_sign=False)


def x_seed(attrs: dict) -> int:
    return sum(sum(v) if isinstance(v, list) else len(str(v)) for v in attrs.values())


@pytest.mark.parametrize(("spatial", "attrs"), [pytest.param(*g[1:], id=g[0]) for g in GEOMETRIES])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("include_pad", [0, 1])
def test_average_pool_bit_identical(paths, spatial, attrs, dtype, include_pad, monkeypatch):
    # A block per plane with count_include_pad=1, every plane in one block with 0.
    monkeypatch.setattr(_numba_plans, "NUMBA_BLOCK_BYTES", 0 if include_pad else 1 << 40)
    x = _data((2, 3, *spatial), dtype, seed=x_seed(attrs) + include_pad)
    _assert_same(
        *paths(
            lambda: kernels.average_pool(x, version=22, count_include_pad=include_pad, **attrs)
        )
    )


@pytest.mark.parametrize("whole", [True, False], ids=["blocks", "per-plane"])
@pytest.mark.parametrize("threads", [1, 2])
def test_large_calls_split_across_threads_bit_identical(paths, threads, whole, monkeypatch):
    """Calls above the split threshold: both paths, one and two threads (each share of planes
    in blocks of 1 MB, or of one plane each), the same bits."""
    monkeypatch.setattr(_numba_plans, "NUMBA_SPLIT_WORK", 1)  # split whatever numpy would split
    monkeypatch.setattr(_numba_plans, "NUMBA_BLOCK_BYTES", 1 << 20 if whole else 0)
    _parallel.set_thread_count(threads)
    try:
        x = _data((1, 64, 112, 112), np.float32, seed=5)
        attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
        assert x.nbytes >= _parallel.MIN_PARALLEL_BYTES
        _assert_same(*paths(lambda: kernels.max_pool(x, version=12, **attrs)), zero_sign=False)
        _assert_same(
            *paths(lambda: kernels.max_pool(x, version=12, return_indices=True, **attrs)),
            zero_sign=False,
        )
        _assert_same(*paths(lambda: kernels.average_pool(x, version=11, **attrs)))
        y, i = kernels.max_pool(x, version=12, return_indices=True, kernel_shape=[2, 2],
                                strides=[2, 2])
        _assert_same(
            *paths(lambda: kernels.max_unpool(y, i, version=11, kernel_shape=[2, 2],
                                              strides=[2, 2]))
        )
    finally:
        _parallel.set_thread_count(None)


def test_unpool_duplicates_last_write_and_bad_index(paths):
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 6)
    i = np.array([3, 1, 3, 0, 1, 3], np.int64).reshape(1, 1, 6)
    a, b = paths(lambda: kernels.max_unpool(x, i, version=11, kernel_shape=[2], strides=[2]))
    np.testing.assert_array_equal(b, [[[3, 4, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0]]])
    _assert_same(a, b)
    bad = i.copy()
    bad[0, 0, 4] = 12
    for name in ("numpy", "numba"):
        _backend.set_backend(name)
        with pytest.raises(ValueError, match=r"index 12 in I is outside the output"):
            kernels.max_unpool(x, bad, version=11, kernel_shape=[2], strides=[2])


def _child(code: str, **env: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )
    return done.stdout.split()


def test_backend_from_environment():
    code = (
        "import numpy as np, sys\nfrom ortpool import kernels\n"
        "from ortpool.kernels import _backend\n"
        "kernels.max_pool(np.zeros((1, 1, 4, 4), np.float32), kernel_shape=[2, 2])\n"
        "print(_backend.mode(), 'numba' in sys.modules, _backend.backend())"
    )
    assert _child(code, ORTPOOL_KERNELS="numpy") == ["numpy", "False", "numpy"]
    assert _child(code, ORTPOOL_KERNELS="") == ["auto", "False", "numba"]
    assert _child(code, ORTPOOL_KERNELS="auto") == ["auto", "False", "numba"]
    assert _child(code, ORTPOOL_KERNELS="numba") == ["numba", "True", "numba"]


def test_a_bad_setting_is_one_warning_line_of_the_command(tmp_path):
    """ORTPOOL_KERNELS=bogus (ORTPOOL_MAX_READS=x) printed Python's warning: a path:line in
    ortpool, then that line of its source. A command prints it as it prints its errors, from its
    own process and from validate's model processes alike."""
    from tests.support import CHILD_ENV, run_cli

    model = str(ROOT / "models" / "maxpool-12.onnx")
    env = {**CHILD_ENV, "ORTPOOL_KERNELS": "bogus", "ORTPOOL_MAX_READS": "x"}
    for argv in (["validate", model, "--no-progress"], ["fix", model, "out.onnx"]):
        done = run_cli(*argv, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        lines = done.stderr.splitlines()
        command = argv[0]
        assert lines.count(f"ortpool {command}: warning: ORTPOOL_KERNELS='bogus' is not one of "
                           "auto, numba, numpy, loaded: using auto") == 1, done.stderr
        assert f"ortpool {command}: warning: ORTPOOL_MAX_READS='x' is not a positive integer: " \
            "using 274877906944" in lines, done.stderr
        assert all(line.startswith(f"ortpool {command}: ") for line in lines), done.stderr


def test_auto_brings_numba_in_for_large_calls_only():
    """Small calls of every kernel run the numpy plans without importing numba; a call of
    NUMBA_MIN_BYTES runs compiled, and from then on small calls of that kernel and dtype do too
    (their numpy plans are dropped), while the other kernels and dtypes stay on numpy."""
    code = """
import sys
import numpy as np
from ortpool import kernels
from ortpool.kernels import _backend, _calls
from ortpool.validate.validator import bundled_models_dir

MIN = _backend.NUMBA_MIN_BYTES
A = {"kernel_shape": [2, 2], "strides": [2, 2]}
small = np.arange(4 * 8 * 8, dtype=np.float32).reshape(1, 4, 8, 8)
y, i = kernels.max_pool(small, version=12, return_indices=True, **A)
kernels.max_pool(small, version=12, **A)
kernels.average_pool(small, version=11, **A)
kernels.max_unpool(y, i, version=11, **A)
def plans():  # each cached plan, and the back-end that fills its loop
    return ",".join(sorted(
        f"{type(r.__self__).__name__}:{type(r.__self__.loop).__module__.split('._')[-1][:5]}"
        for r, _ in _calls._CALLS.values()
    ))

print("numba" in sys.modules, plans())
f32 = np.dtype(np.float32)
print(_backend.compiled("max_planes", f32, MIN - 1), "numba" in sys.modules)
large = np.zeros((1, 1, 64, MIN // 256), np.float32)
assert large.nbytes == MIN
kernels.max_pool(large, version=12, **A)
print(plans())
kernels.max_pool(small, version=12, **A)
print(plans())
print(_backend.compiled("max_planes", f32, 64), _backend.compiled("average_planes", f32, 64),
      _backend.compiled("max_planes", np.dtype(np.float64), 64))
"""
    lines = _child(code, ORTPOOL_KERNELS="")
    assert lines == [
        "False", "Average:numpy,MaxIndices:numpy,MaxValues:numpy",
        "False", "False",
        "MaxValues:numba",
        "MaxValues:numba,MaxValues:numba",
        "True", "False", "False",
    ]


def test_commands_that_are_not_latency_critical_never_compile():
    """validate, fix and conformance plan "loaded" (issue 16 part 5): a call of
    1 MB stays on numpy without importing numba, the choice reaches child processes through
    the environment, a kernel this process holds is still used, and ORTPOOL_KERNELS wins."""
    code = """
import os, subprocess, sys
import numpy as np
from ortpool import kernels
from ortpool.kernels import _backend
with _backend.prefer_loaded():
    print(_backend.mode(), os.environ["ORTPOOL_KERNELS"])
    x = np.zeros((1, 1, 512, 512), np.float32)
    if _backend.mode() == "loaded":  # (auto would compile MaxPool here: 10 s)
        kernels.max_pool(x, kernel_shape=[2, 2])
        child = "import os; print(os.environ['ORTPOOL_KERNELS'])"
        print("numba" in sys.modules, subprocess.check_output([sys.executable, "-c", child],
                                                              text=True).strip())
        _backend.set_backend("numba")
        kernels.max_unpool(x, np.zeros(x.shape, np.int64), kernel_shape=[1, 1])
        _backend.set_backend("loaded")
        print(_backend.compiled("scatter", x.dtype, x.nbytes),
              _backend.compiled("max_planes", x.dtype, x.nbytes))
print(_backend.mode(), repr(os.environ.get("ORTPOOL_KERNELS")))
"""
    assert _child(code, ORTPOOL_KERNELS="") == [
        "loaded", "loaded", "False", "loaded", "True", "False", "auto", "''"
    ]
    assert _child(code, ORTPOOL_KERNELS="auto") == ["auto", "auto", "auto", "'auto'"]
    from ortpool import cli

    assert sorted(cli.NO_COMPILE) == ["conformance", "fix", "validate"]


def test_warmup_compiles_although_its_calls_are_small():
    """warm_up's 4x4 calls compile (the mode is forced for them) and the mode is restored;
    uint8's max runs on the float32 loops (exact), which it compiles, and nothing for uint8."""
    code = (
        "from ortpool.kernels import _backend\nfrom ortpool.kernels.warmup import warm_up\n"
        "import numpy as np\n"
        "warm_up(['uint8'])\n"
        "u8, f32 = np.dtype(np.uint8), np.dtype(np.float32)\n"
        "print(_backend.mode(), _backend.loaded('max_planes', f32), "
        "_backend.loaded('max_indices', f32), _backend.loaded('average_planes', f32), "
        "_backend.loaded('max_planes', u8))"
    )
    assert _child(code, ORTPOOL_KERNELS="") == ["auto", "True", "True", "False", "False"]


def test_import_and_rewrite_do_not_load_numba(tmp_path):
    code = (
        "import sys\nimport ortpool\nprint('numba' in sys.modules)\n"
        "from ortpool.cli import main\n"
        f"rc = main(['rewrite', {str(ROOT / 'models' / 'cnn.onnx')!r}, "
        f"{str(tmp_path / 'out.onnx')!r}])\n"
        "print(rc, 'numba' in sys.modules, 'onnxruntime' in sys.modules)"
    )
    lines = _child(code)
    assert lines[0] == "False"
    assert lines[-3:] == ["0", "False", "False"]


def test_scratch_sizes_of_the_resnet_stem_passes():
    """H pass (1, 112, 112) -> (1, 56, 112), then W pass (56, 112, 1) -> (56, 56, 1): the one
    intermediate is 56 * 112; the largest pass source, 112 * 112, bounds the phases; a block of
    64 planes seen as one plane needs 64 times both."""
    from ortpool.attributes import normalize
    from ortpool.geometry import pool_geometry
    from ortpool.versions import get

    attrs = normalize(get("MaxPool", 12),
                      {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, 2)
    info = _passes.pass_rows(pool_geometry((112, 112), attrs), [0, 1])
    assert _numba_plans.scratch_sizes(info) == (56 * 112, 112 * 112)
    info[:, _passes.OUTER] *= 64
    assert _numba_plans.scratch_sizes(info) == (64 * 56 * 112, 64 * 112 * 112)
    assert _numba_plans.scratch_sizes(info[:1]) == (1, 64 * 112 * 112)  # one pass: no intermediate


def test_max_and_sum_closures_have_names_of_their_own():
    """numba names machine code after the qualified name and a per-process counter: with one
    name for both variants, max and sum compiled in two processes shared a symbol, and a process
    loading both from the disk cache ran one for the other (MaxPool returned window sums).
    Every compiled closure of the two chains must have a qualified name of its own."""
    from ortpool.kernels import _numba

    def closures(dispatcher, seen):
        func = dispatcher.py_func
        for cell in func.__closure__ or ():
            inner = cell.cell_contents
            if (
                hasattr(inner, "py_func")
                and inner.py_func.__closure__ is not None
                and inner.py_func.__qualname__ not in seen
            ):
                seen.add(inner.py_func.__qualname__)
                closures(inner, seen)
        return seen

    names_max = closures(_numba._chain_max, {_numba._chain_max.py_func.__qualname__})
    names_sum = closures(_numba._chain_sum, {_numba._chain_sum.py_func.__qualname__})
    assert len(names_max) == len(names_sum) >= 9
    assert not names_max & names_sum
    assert "_make_pass.<locals>.max.pass_" in names_max
    assert "_make_pass.<locals>.sum.pass_" in names_sum
