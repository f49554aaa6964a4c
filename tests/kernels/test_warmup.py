"""``ortpool warmup``: the compiled kernels are compiled (or loaded from numba's cache) ahead of
time, for the element types asked."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from ortpool import cli
from ortpool.kernels import _backend
from ortpool.kernels.warmup import DTYPES, warm_up
from tests import support

numba = pytest.importorskip("numba")


@pytest.fixture
def backend():
    yield _backend.set_backend
    _backend.set_backend(None)


def test_warmup_compiles_every_kernel_for_the_dtypes(backend, capsys):
    backend("numba")
    from ortpool.kernels import _numba

    assert cli.main(["warmup", "--dtypes", "double,int8"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    rows = [re.fullmatch(r"(.+?) +(\w+) +\d+\.\d\d s", line).groups() for line in lines[:-1]]
    assert rows == [
        ("AveragePool", "double"), ("MaxPool", "double"), ("MaxPool with Indices", "double"),
        ("MaxUnpool", "double"), ("LpPool", "double"),
        ("GlobalAveragePool/GlobalLpPool", "double"), ("MaxRoiPool", "double"),
        ("MaxPool", "int8"), ("MaxPool with Indices", "int8"),
    ]
    assert re.fullmatch(
        r"9 kernel\(s\) ready in \d+\.\d s; later processes load the cached code", lines[-1]
    )
    # what is about to compile, counted, before the first one starts
    assert captured.err.splitlines()[0] == (
        "warming up 9 kernel(s) (double 7, int8 2); a first compile takes 10-20 s per window "
        "kernel, a cached one loads at once"
    )
    compiled = {str(sig[0].dtype) for f in (_numba.max_planes, _numba.max_indices)
                for sig in f.signatures}
    # int8 runs on the float32 max loops (exact): no int8 compile of its own
    assert {"float64", "float32"} <= compiled
    assert "int8" not in compiled
    assert "float64" in {str(sig[0].dtype) for sig in _numba.average_planes.signatures}
    from ortpool.kernels import _numba_family

    for kernel in (_numba_family.plane_sums, _numba_family.roi_max):
        assert "float64" in {str(sig[0].dtype) for sig in kernel.signatures}


def test_warmup_compiles_the_kernels_asked_and_no_other(backend, capsys):
    """``--kernels`` (names as the report prints them): those kernels for those types, in the
    report's order whatever the order asked; a kernel a type lacks (AveragePool for int8) is
    nothing."""
    backend("numba")
    assert cli.main(["warmup", "--dtypes", "int8,float64",
                     "--kernels", "MaxUnpool, AveragePool,MaxPool with Indices"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [re.fullmatch(r"(.+?) +(\w+) +\d+\.\d\d s", line).groups() for line in lines[:-1]]
    assert rows == [  # numpy's float64 is read, ONNX's name reported
        ("MaxPool with Indices", "int8"),
        ("AveragePool", "double"), ("MaxPool with Indices", "double"), ("MaxUnpool", "double"),
    ]


def test_warm_up_takes_one_name_as_a_string(backend):
    backend("numba")
    assert [row[:2] for row in warm_up("float32", "MaxPool")] == [("MaxPool", "float")]


def test_warmup_names_element_types_as_onnx_does():
    """``float`` is ONNX's float32 (numpy's ``float`` would be float64), ``double`` float64;
    numpy's spellings name the same types; the order is the kernels' whatever the order asked."""
    from ortpool.kernels.warmup import _calls, planned

    assert planned(["float", "float64"], ["MaxPool", "AveragePool"]) == [
        ("AveragePool", "float"), ("MaxPool", "float"),
        ("AveragePool", "double"), ("MaxPool", "double"),
    ]
    assert planned("float32", "MaxPool") == planned("float", "MaxPool") == [("MaxPool", "float")]
    assert planned("int8", "AveragePool") == []  # int8 has no AveragePool kernel
    from ortpool import dtypes

    assert dtypes.NUMPY["float"] == np.float32 and dtypes.NUMPY["double"] == np.float64
    assert set(_calls(dtypes.NUMPY["float"])) >= {"MaxPool", "AveragePool"}


def _specializations() -> dict[str, list[str]]:
    """Each compiled entry point holding a specialization (compiled, or loaded from numba's
    cache) -> the element types of its first argument, one per specialization."""
    from ortpool.kernels import _numba, _numba_family

    found = {}
    for module in (_numba, _numba_family):
        for name, kernel in sorted(vars(module).items()):
            if isinstance(kernel, numba.core.registry.CPUDispatcher) and kernel.signatures:
                short = module.__name__.rsplit(".", 1)[1]
                found[f"{short}.{name}"] = sorted(str(sig[0].dtype) for sig in kernel.signatures)
    return found


def print_loaded_after(dtype: str, kernel: str) -> None:
    """In a child: warm ``kernel`` up for ``dtype`` alone, then print the compiled entry points
    that hold a specialization."""
    warm_up([dtype], [kernel])
    print(json.dumps(sorted(_specializations())))


@pytest.mark.parametrize(
    ("kernel", "entries"),
    [
        # its Indices written out: the MaxPool with Indices loops are not compiled for it
        ("MaxUnpool", ["_numba.scatter"]),
        ("MaxPool", ["_numba.max_planes"]),
        ("MaxPool with Indices", ["_numba.max_indices"]),
        # LpPool's sums are AveragePool's float64 loops
        ("LpPool", ["_numba.average_planes"]),
    ],
)
def test_each_kernel_warms_up_alone(kernel, entries):
    """A warm-up of one kernel compiles (or loads) its own loops and no other's: the run's two
    warm-up children (tests/conftest.py) then never compile the same loops twice."""
    from ortpool.kernels import _numba  # noqa: F401 - after the suite's warm-up (conftest)

    done = support.run_child(__name__, "print_loaded_after", "float64", kernel, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == entries


def _read_only_calls(dtype: str) -> None:
    """Every compiled loop on read-only inputs (``np.frombuffer``'s, a memory map's)."""
    from ortpool import kernels

    def frozen(a: np.ndarray) -> np.ndarray:
        a = np.array(a)
        a.setflags(write=False)
        return a

    x = frozen((np.arange(32) % 7).astype(dtype).reshape(1, 2, 4, 4))
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    kernels.max_pool(x, version=12, **attrs)
    y, indices = kernels.max_pool(x, version=12, return_indices=True, **attrs)
    if x.dtype.kind == "f":
        kernels.average_pool(x, version=11, **attrs)
        kernels.lp_pool(x, version=18, **attrs)
        kernels.max_unpool(frozen(y), frozen(indices), version=11, **attrs)
        kernels.global_average_pool(x)
        kernels.global_lp_pool(x)
        kernels.max_roi_pool(x, frozen(np.array([[0, 0, 0, 3, 3]], dtype)), pooled_shape=[2, 2])


def print_specializations() -> None:
    """In a child: warm every element type up and run every compiled loop on read-only inputs,
    then print each compiled entry point's specializations."""
    warm_up(DTYPES)
    _backend.set_backend("numba")  # tiny calls: compiled all the same, as the warm-up's
    for dtype in DTYPES:
        _read_only_calls(dtype)
    print(json.dumps(_specializations()))


def test_each_compiled_loop_has_one_specialization_per_element_type():
    """After a warm-up of every element type and a call of every loop on read-only inputs, each
    compiled entry point holds one specialization per type it computes in: numba compiles anew
    for any other argument type, read-only or writable included (AveragePool's read-only
    divisor and LpPool's writable one compiled the float64 loops twice, ~12 s more of every
    cold `ortpool warmup`; a caller's read-only input paid a compile of 12-18 s on its first
    call)."""
    from ortpool.kernels import _numba  # noqa: F401 - after the suite's warm-up (conftest)

    done = support.run_child(__name__, "print_specializations", timeout=300)
    assert done.returncode == 0, done.stderr
    both = ["float32", "float64"]  # int8/uint8 run on the float32 loops
    assert json.loads(done.stdout) == {
        "_numba.average_planes": both, "_numba.max_indices": both, "_numba.max_planes": both,
        "_numba.scatter": both, "_numba_family.plane_sums": both, "_numba_family.roi_max": both,
    }


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--dtypes", "float32,float16"],
         "element type 'float16': the compiled kernels take float, double, int8, uint8"),
        (["--dtypes", "float,half"],
         "element type 'half' is not one of float, double, float16, bfloat16, int8, uint8, int16, "
         "uint16, int32, uint32, int64, uint64, bool (ONNX names; numpy's spellings are read "
         "too: float32=float, float64=double, bool_=bool)"),
        (["--kernels", "MaxPool,GlobalMaxPool"],
         "kernel 'GlobalMaxPool' is not one of the compiled kernels: AveragePool, MaxPool, "
         "MaxPool with Indices, MaxUnpool, LpPool, GlobalAveragePool/GlobalLpPool, MaxRoiPool"),
    ],
)
def test_warmup_refuses_what_the_kernels_do_not_have(backend, capsys, option, message):
    backend("numba")
    assert cli.main(["warmup", *option]) == 2
    assert capsys.readouterr().err == f"ortpool warmup: error: {message}\n"


def test_warmup_with_the_numpy_kernels_has_nothing_to_do(backend, capsys):
    backend("numpy")
    assert warm_up(["float32"]) == []
    assert cli.main(["warmup"]) == 0
    assert capsys.readouterr().out == (
        "numpy kernels in use (numba not installed, or ORTPOOL_KERNELS=numpy): nothing to compile\n"
    )
