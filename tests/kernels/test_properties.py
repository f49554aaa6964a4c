"""Property tests: ortpool's kernels against the loop reference in tests/support/reference_loops.py.

Random ranks 1-3, every attribute each version has (auto_pad in all four values, pads up to and
beyond the kernel, strides, dilations, ceil_mode, count_include_pad, storage_order), every spec
version, every element type the version allows (float16 through the numpy API only: it cannot
enter a Python op), both MaxPool outputs, NaN/-inf/inf, ties from small integer values, N = 0, and
MaxUnpool fed MaxPool's indices or random (duplicate, out-of-range) ones, with and without
output_shape. Most examples go through the numpy API; a smaller share through ORT sessions.
Every example is checked with the compiled (numba) kernels and with the numpy plans.

A call the rulings make an error (kernel larger than the padded input, an index outside the
output) must raise OrtpoolError in ortpool too. Every agreeing example is counted per op and
version and printed in the terminal summary (see conftest.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import pytest
from hypothesis import event, given, settings

import ortpool
from ortpool import kernels, versions
from ortpool.attributes import AUTO_PADS
from ortpool.errors import OrtpoolError
from tests import support
from tests.support import reference_loops as ref
from tests.support.strategies import Picks, cells, picks, st  # st: built once per arguments

T = TypeVar("T")


def _kernel_paths() -> tuple[str, ...]:
    try:
        import numba  # noqa: F401
    except ImportError:
        return ("numpy",)  # the lowest release's and OpenVINO's child environments
    return ("numba", "numpy")


#: Every example is checked on each kernel path: the compiled (numba) loops and the numpy plans.
#: One hypothesis run draws it and the reference computes it once (running each test once per
#: path drew the same examples twice and computed the reference twice: half the CPU).
KERNEL_PATHS = _kernel_paths()


def on_each_path(call: Callable[[], T]) -> list[T]:
    """``call()`` with the kernels on each of :data:`KERNEL_PATHS` in turn (the automatic choice
    again after); the results in that order. A failure names the path."""
    from ortpool.kernels import _backend

    results = []
    for path in KERNEL_PATHS:
        _backend.set_backend(path)
        try:
            results.append(call())
        except AssertionError as err:
            raise AssertionError(f"on the {path} kernel path: {err}") from err
        finally:
            _backend.set_backend(None)
    return results


#: ORTPOOL_HYPOTHESIS_SCALE=10 multiplies every example budget (for a local hunt).
SCALE = float(os.environ.get("ORTPOOL_HYPOTHESIS_SCALE", "1"))


def budget(n: int) -> settings:
    return settings(max_examples=max(1, int(n * SCALE)))


NP_DTYPES = {
    "float16": np.float16,
    "float": np.float32,
    "double": np.float64,
    "int8": np.int8,
    "uint8": np.uint8,
}


def _versions(op: str) -> list[int]:
    return list(versions.versions_of(op))


# ---------------------------------------------------------------- strategies
# An example's small choices (rank, shape, attributes, types) come from one Picks (one byte
# string, tests/support/strategies.py), its values from cells (another): four hypothesis draws
# an example instead of thirty-odd, the same choices made.


def inputs(draw, pick: Picks, rank: int, dtype: np.dtype, max_batch: int = 2) -> np.ndarray:
    """(N, C, D1..Dr) with N possibly 0; small integer values (ties) plus NaN/-inf/inf for floats,
    and sometimes non-integer floats."""
    n = pick.choice([1, 2, 1, 0][: max_batch + 2])
    c = pick.integer(1, 2)
    side = 6 if rank < 3 else 4
    # Sides of 1 and 2 drawn often: kernels longer than the padded input (ruling 19, the 1x1
    # map a ResNet-D's k2 s2 ceil shortcut meets), where ceil mode keeps one window.
    spatial = [pick.choice([1, 2]) if pick.boolean() else pick.integer(1, side)
               for _ in range(rank)]
    shape = (n, c, *spatial)
    size = int(np.prod(shape))
    mixed = None
    if dtype.kind == "f":
        special = [np.nan, -np.inf, np.inf, np.nan] if pick.boolean() else []
        choices = [*map(float, range(-3, 4)), *special]
        if pick.boolean():
            mixed = "float16"  # about half the cells any float16 in [-100, 100]
    elif dtype == np.int8:
        choices = [-128, -127, -1, 0, 1, 2, 126, 127]
    else:
        choices = [0, 1, 2, 128, 254, 255]
    return draw(cells(size, choices, mixed=mixed)).astype(dtype).reshape(shape)


def pool_attrs(pick: Picks, opv: versions.OpVersion, rank: int) -> dict:
    """Attributes of ``opv`` only, each present or absent (default), lists or string-encoded."""
    attrs: dict = {"kernel_shape": pick.integers(rank, 1, 3)}
    if pick.boolean():
        attrs["strides"] = pick.integers(rank, 1, 3)
    if "dilations" in opv.attrs and pick.boolean():
        attrs["dilations"] = pick.integers(rank, 1, 2)
    auto_pad = pick.choice([*AUTO_PADS, "NOTSET", "NOTSET"])
    if auto_pad != "NOTSET" or pick.boolean():
        attrs["auto_pad"] = auto_pad
    if auto_pad == "NOTSET" and pick.integer(0, 3) > 0:
        # Pads up to 4 with kernels up to 3: windows in the padding only, empty windows.
        attrs["pads"] = pick.integers(2 * rank, 0, 4)
    elif auto_pad != "NOTSET" and pick.integer(0, 4) == 0:
        attrs["pads"] = [0] * (2 * rank)  # tolerated with auto_pad (ruling 4)
    for flag in ("ceil_mode", "count_include_pad", "storage_order"):
        if flag in opv.attrs and pick.boolean():
            attrs[flag] = pick.integer(0, 1)
    if pick.integer(0, 3) == 0:  # the ortpool string encoding, as a session passes them
        attrs = {k: ",".join(map(str, v)) if isinstance(v, list) else v for k, v in attrs.items()}
    return attrs


def _decoded(attrs: dict) -> dict:
    """The reference takes lists: undo the string encoding."""
    out = {}
    for k, v in attrs.items():
        if isinstance(v, str) and k not in ("auto_pad",):
            out[k] = [int(p) for p in v.split(",")] if v else []
        else:
            out[k] = v
    return out


def element_type(pick: Picks, opv: versions.OpVersion, session: bool) -> np.dtype:
    """A type the version takes: one a Python op carries (session), or any numpy has."""
    allowed = opv.carried_types if session else tuple(t for t in opv.types if t in NP_DTYPES)
    return np.dtype(NP_DTYPES[pick.choice(allowed)])


@st.composite
def pool_example(draw, op: str, version: int, session: bool) -> tuple[np.ndarray, dict]:
    opv = versions.get(op, version)
    pick = draw(picks())
    dtype = element_type(pick, opv, session)
    rank = pick.integer(1, 3)
    return inputs(draw, pick, rank, dtype), pool_attrs(pick, opv, rank)


# ---------------------------------------------------------------- helpers


#: The last session made, by what it was made from: each example runs it once per kernel path
#: (the kernels are chosen when the op runs, not when the session is made).
_LAST_SESSION: dict[tuple, tuple] = {}


def _session_run(op, version, attrs, arrays, n_inputs=1, n_outputs=1):
    key = (op, version, repr(sorted(attrs.items())), arrays[0].dtype.str, n_inputs, n_outputs)
    if key not in _LAST_SESSION:
        model = support.ortpool_model(
            op, version, attrs, arrays[0].dtype, n_inputs=n_inputs, n_outputs=n_outputs
        )
        _LAST_SESSION.clear()
        _LAST_SESSION[key] = (model, ortpool.InferenceSession(model))
    model, session = _LAST_SESSION[key]
    return session.run(None, support.session_inputs(model, arrays))


def _features(x: np.ndarray, attrs: dict) -> None:
    """Tag the example (pytest --hypothesis-show-statistics shows how often each occurs)."""
    event(f"dtype {x.dtype}, rank {x.ndim - 2}")
    if x.shape[0] == 0:
        event("N = 0")
    if x.dtype.kind == "f" and np.isnan(x).any():
        event("NaN in input")
    if x.dtype.kind == "f" and np.isneginf(x).any():
        event("-inf in input")
    event(f"auto_pad {attrs.get('auto_pad', 'NOTSET')}")
    pads = _decoded(attrs).get("pads") or []
    kernel = _decoded(attrs)["kernel_shape"]
    if any(p >= kernel[i % len(kernel)] for i, p in enumerate(pads)):
        event("a pad >= kernel")
    dilations = _decoded(attrs).get("dilations") or [1] * len(kernel)
    rank = len(kernel)
    padded = [n + (pads[i] + pads[i + rank] if pads else 0) for i, n in enumerate(x.shape[2:])]
    if any((k - 1) * d + 1 > p for k, d, p in zip(kernel, dilations, padded, strict=True)):
        event("a kernel longer than the padded input (ruling 19)")


def _expect_error(call) -> None:
    event("error expected and raised")
    with pytest.raises(OrtpoolError) as info:
        call()
    assert info.value.op is not None and info.value.version is not None


def _pool(op: str, op_version: int, x, attrs, path: str, with_indices: bool = False) -> tuple:
    """MaxPool or AveragePool of ``x`` through the numpy API or an ortpool session: the outputs
    as a tuple (Y, or Y and Indices)."""
    if path == "session":
        return tuple(_session_run(op, op_version, attrs, [x], n_outputs=1 + with_indices))
    if op == "AveragePool":
        return (kernels.average_pool(x, version=op_version, **attrs),)
    got = kernels.max_pool(x, version=op_version, return_indices=with_indices, **attrs)
    return got if with_indices else (got,)


def outputs_or_error(
    reference: Callable[[], T], call: Callable[[], object]
) -> tuple[list, T | None]:
    """``(ortpool's outputs on each kernel path, the reference's)``; when the reference refuses
    the call, ortpool must raise an OrtpoolError naming the op version on each path (checked
    here), and the outputs are an empty list."""
    try:
        expected = reference()
    except ref.ReferenceError_:
        on_each_path(lambda: _expect_error(call))
        return [], None
    return on_each_path(call), expected


def count_checks(op: str, version: int, path: str) -> None:
    """Count one example's checks: one per kernel path, of its values or of its error."""
    for _ in KERNEL_PATHS:
        support.count_example(op, version, path)


def _check_max(op_version: int, x, attrs, *, with_indices: bool, path: str) -> None:
    _features(x, attrs)
    found, expected = outputs_or_error(
        lambda: ref.max_pool(x, _decoded(attrs)),
        lambda: _pool("MaxPool", op_version, x, attrs, path, with_indices),
    )
    y_ref, i_ref = expected or (None, None)
    if found and (i_ref < 0).any():
        event("empty window")
    for outputs in found:
        y, ind = outputs if with_indices else (outputs[0], None)
        assert y.dtype == x.dtype
        assert y.shape == y_ref.shape
        np.testing.assert_array_equal(y, y_ref)
        if with_indices:
            assert ind.dtype == np.int64
            np.testing.assert_array_equal(ind, i_ref)
    count_checks("MaxPool", op_version, path)


def _check_average(op_version: int, x, attrs, *, path: str) -> None:
    _features(x, attrs)
    found, y_ref = outputs_or_error(
        lambda: ref.average_pool(x, _decoded(attrs)),
        lambda: _pool("AveragePool", op_version, x, attrs, path),
    )
    rtol = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-12}[x.dtype.type]
    # Non-integer float16 draws sum to values whose absolute error is set by the largest term.
    atol = {np.float16: 0.1, np.float32: 1e-4, np.float64: 1e-10}[x.dtype.type]
    for (y,) in found:
        assert y.dtype == x.dtype
        assert y.shape == y_ref.shape
        np.testing.assert_allclose(y.astype(np.float64), y_ref, rtol=rtol, atol=atol)
        # NaN exactly where the reference has NaN (empty windows, inf - inf), infinities likewise.
        np.testing.assert_array_equal(np.isnan(y), np.isnan(y_ref))
        np.testing.assert_array_equal(np.isposinf(y), np.isposinf(y_ref))
    count_checks("AveragePool", op_version, path)


# ---------------------------------------------------------------- MaxPool


@pytest.mark.parametrize("version", _versions("MaxPool"))
@budget(250)
@given(data=st.data())
def test_max_pool_values_numpy(version, data):
    x, attrs = data.draw(pool_example("MaxPool", version, session=False))
    _check_max(version, x, attrs, with_indices=False, path="numpy")


@pytest.mark.parametrize("version", [v for v in _versions("MaxPool") if v >= 8])
@budget(300)
@given(data=st.data())
def test_max_pool_indices_numpy(version, data):
    x, attrs = data.draw(pool_example("MaxPool", version, session=False))
    _check_max(version, x, attrs, with_indices=True, path="numpy")


@pytest.mark.onnxruntime
@pytest.mark.parametrize("version", _versions("MaxPool"))
@budget(50)
@given(data=st.data())
def test_max_pool_session(version, data):
    x, attrs = data.draw(pool_example("MaxPool", version, session=True))
    with_indices = versions.get("MaxPool", version).max_outputs > 1 and data.draw(st.booleans())
    _check_max(version, x, attrs, with_indices=with_indices, path="session")


# ---------------------------------------------------------------- AveragePool


@pytest.mark.parametrize("version", _versions("AveragePool"))
@budget(400)
@given(data=st.data())
def test_average_pool_numpy(version, data):
    x, attrs = data.draw(pool_example("AveragePool", version, session=False))
    _check_average(version, x, attrs, path="numpy")


@pytest.mark.onnxruntime
@pytest.mark.parametrize("version", _versions("AveragePool"))
@budget(50)
@given(data=st.data())
def test_average_pool_session(version, data):
    x, attrs = data.draw(pool_example("AveragePool", version, session=True))
    _check_average(version, x, attrs, path="session")


# ---------------------------------------------------------------- MaxUnpool


@st.composite
def unpool_example(draw, version: int, session: bool):
    """(X, I, output_shape or None, attrs): X and I from the reference MaxPool of a random input
    (kernel/strides/pads shared with MaxUnpool), or random I with duplicates and, rarely,
    indices outside the output; output_shape absent, the pooled input's shape, or random."""
    opv = versions.get("MaxUnpool", version)
    pick = draw(picks())
    dtype = element_type(pick, opv, session)
    rank = pick.integer(1, 3)
    attrs: dict = {"kernel_shape": pick.integers(rank, 1, 3)}
    if pick.boolean():
        attrs["strides"] = pick.integers(rank, 1, 3)
    if pick.boolean():
        attrs["pads"] = pick.integers(2 * rank, 0, 2)
    from_pool = pick.boolean()
    source = inputs(draw, pick, rank, dtype)
    output_shape = None
    if from_pool:
        try:
            x, indices = ref.max_pool(source, attrs)
        except ref.ReferenceError_:
            x, indices = source, np.zeros(source.shape, np.int64)
        choice = pick.choice(["none", "input", "random"])
        if choice == "input":
            output_shape = list(source.shape)
        elif choice == "random":
            output_shape = [*x.shape[:2], *pick.integers(rank, 0, 7)]
    else:
        x = source
        if pick.boolean():
            output_shape = [*x.shape[:2], *pick.integers(rank, 1, 7)]
            size = int(np.prod(output_shape))
        else:
            try:
                size = int(np.prod(ref.unpool_shape(x.shape, attrs)))
            except ref.ReferenceError_:
                size = 4
        # Few distinct values: duplicates are the rule; rarely one outside [0, size).
        high = max(1, min(size, 6))
        outside = [-1, size, size + 3] if pick.integer(0, 9) == 0 else None
        indices = draw(cells(x.size, range(high), mixed=outside)).reshape(x.shape)
    if pick.integer(0, 3) == 0:
        attrs = {k: ",".join(map(str, v)) for k, v in attrs.items()}
    return x, indices, output_shape, attrs


def _check_unpool(version: int, x, indices, output_shape, attrs, *, path: str) -> None:
    shape_arg = None if output_shape is None else np.array(output_shape, np.int64)
    event("with output_shape" if output_shape is not None else "default output size")
    flat = indices.reshape(-1)
    if len(set(flat.tolist())) < flat.size:
        event("duplicate indices")

    def call():
        if path == "numpy":
            return kernels.max_unpool(x, indices, shape_arg, version=version, **attrs)
        arrays = [x, indices] + ([shape_arg] if shape_arg is not None else [])
        (y,) = _session_run("MaxUnpool", version, attrs, arrays, n_inputs=len(arrays))
        return y

    found, y_ref = outputs_or_error(
        lambda: ref.max_unpool(x, indices, _decoded(attrs), output_shape), call
    )
    for y in found:
        assert y.dtype == x.dtype
        assert y.shape == y_ref.shape
        np.testing.assert_array_equal(y, y_ref)
    count_checks("MaxUnpool", version, path)


@pytest.mark.parametrize("version", _versions("MaxUnpool"))
@budget(400)
@given(data=st.data())
def test_max_unpool_numpy(version, data):
    x, indices, output_shape, attrs = data.draw(unpool_example(version, session=False))
    _check_unpool(version, x, indices, output_shape, attrs, path="numpy")


@pytest.mark.onnxruntime
@pytest.mark.parametrize("version", _versions("MaxUnpool"))
@budget(50)
@given(data=st.data())
def test_max_unpool_session(version, data):
    x, indices, output_shape, attrs = data.draw(unpool_example(version, session=True))
    _check_unpool(version, x, indices, output_shape, attrs, path="session")
