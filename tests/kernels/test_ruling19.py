"""ruling 19: a kernel longer than the padded input (``ek > n + pb + pe``).

Ruling 1's formula decides (ruling 3's for VALID): floor mode and VALID give no window there,
ceil mode with an overhang shorter than a stride one window from ``-pb`` whose taps past the end
pad never count. Checked here: every windowed operator and version on both kernel paths against
the loop reference (tests/support/reference_loops.py derives the sizes again from the rulings'
text);
ortpool's ops in a session, in a child process (empty outputs cross the op boundary); the cause
``validate`` names where onnxruntime makes a window the spec does not have; fix's pad form on
onnxruntime's own pool; a ResNet-D (tests/support/cnn_builders.resnet_d) at 32x32 through validate
and fix.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from ortpool import kernels, versions
from ortpool.check import causes
from ortpool.forms import plan as forms
from ortpool.kernels import _backend
from ortpool.report import record as results
from tests.fix.test_forms import facts_for, run_plan
from tests.support import reference_loops as ref
from tests.support import runtime_defects
from tests.support.cnn_builders import resnet_d
from tests.support.judging import run_node

ROOT = Path(__file__).resolve().parents[2]

#: (op, version, extra attributes): every windowed operator, the versions with and without
#: ceil_mode / dilations / count_include_pad.
OPS = [
    ("MaxPool", 10, {}),
    ("MaxPool", 12, {"storage_order": 1}),
    ("AveragePool", 1, {}),
    ("AveragePool", 19, {"count_include_pad": 0}),
    ("AveragePool", 22, {"count_include_pad": 1}),
    ("LpPool", 2, {"p": 3}),
    ("LpPool", 18, {"p": 2}),
]


def axis_cases():
    """(n, k, s, d, pb, pe, ceil) with ek > n + pb + pe, small enough for the loop reference
    (stride 1 left out: ``ceil(-m) + 1 <= 0`` there, the empty axis every stride has too)."""
    for n, k, s, d, pb, pe, ceil in itertools.product(
        [0, 1, 2], [2, 3, 4], [2, 3], [1, 2], [0, 1], [0, 1], [0, 1]
    ):
        if (k - 1) * d + 1 > n + pb + pe and pb < k and pe < k:
            yield n, k, s, d, pb, pe, ceil


def _attrs(op: str, version: int, extra: dict, axis: tuple, valid: bool) -> dict | None:
    """The node's attributes (axis 0 the case, axis 1 of 3 pooled 2/1 plainly), or None when
    the version cannot express the case."""
    _, k, s, d, pb, pe, ceil = axis
    spec = versions.get(op, version)
    attrs = {"kernel_shape": [k, 2], "strides": [s, 1], **extra}
    if d > 1:
        if "dilations" not in spec.attrs:
            return None
        attrs["dilations"] = [d, 1]
    if ceil:
        if "ceil_mode" not in spec.attrs:
            return None
        attrs["ceil_mode"] = 1
    if valid:
        attrs["auto_pad"] = "VALID"
    else:
        attrs["pads"] = [pb, 0, pe, 1]
    return attrs


@pytest.mark.parametrize("path", ["numpy", "numba"])
def test_every_windowed_operator_matches_the_loop_reference(path):
    if path == "numba":
        pytest.importorskip("numba")
    _backend.set_backend(path)
    rng = np.random.default_rng(19)
    checked = {"empty": 0, "one window": 0}
    try:
        for axis in axis_cases():
            for (op, version, extra), valid in itertools.product(OPS, (False, True)):
                attrs = _attrs(op, version, extra, axis, valid)
                if attrs is None or (valid and (axis[4] or axis[5])):
                    continue
                x = rng.integers(-3, 4, size=(1, 2, axis[0], 3)).astype(np.float32)
                x[0, 0, :1, :1] = np.nan  # NaN in the one window, where it has an input
                if op == "MaxPool":
                    outputs = versions.get(op, version).max_outputs
                    y, *ind = kernels.run_op(op, version, [x], attrs, outputs)
                    y_ref, i_ref = ref.max_pool(x, attrs)
                    if ind:
                        np.testing.assert_array_equal(ind[0], i_ref, err_msg=str((op, attrs)))
                else:
                    (y,) = kernels.run_op(op, version, [x], attrs)
                    loop = ref.average_pool if op == "AveragePool" else ref.lp_pool
                    y_ref = loop(x, attrs)
                assert y.shape == y_ref.shape, (op, version, attrs, x.shape)
                np.testing.assert_allclose(y, y_ref, rtol=1e-6, err_msg=str((op, version, attrs)))
                checked["empty" if y.shape[2] == 0 else "one window"] += 1
    finally:
        _backend.set_backend(None)
    assert checked["empty"] > 300 and checked["one window"] > 60, checked


def test_the_one_window_of_ceil_mode_counts_no_overhang():
    """1x1, k2 s2 ceil: the window holds the input element; the tap past the end pad counts
    neither for count_include_pad=0 nor =1 (ruling 8); with pads (1, 1) on 2, k=5, s=4 the
    window covers [-1, 4) and count_include_pad counts the 4 taps inside [-1, 3)."""
    x = np.array([[[[7.0]]]], np.float32)
    for include in (0, 1):
        y = kernels.average_pool(x, kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1,
                                 count_include_pad=include)
        np.testing.assert_array_equal(y, [[[[7.0]]]])
    y, ind = kernels.max_pool(x, kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1,
                              return_indices=True)
    assert (y.tolist(), ind.tolist()) == ([[[[7.0]]]], [[[[0]]]])
    x = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 2, 2)
    y = kernels.average_pool(x, kernel_shape=[5, 5], strides=[4, 4], pads=[1, 1, 1, 1],
                             ceil_mode=1, count_include_pad=1)
    np.testing.assert_array_equal(y, [[[[10 / 16]]]])
    floor = kernels.lp_pool(x, kernel_shape=[5, 5], strides=[4, 4], pads=[1, 1, 1, 1])
    assert floor.shape == (1, 1, 0, 0)


@pytest.mark.parametrize("path", ["numpy", "numba"])
def test_a_kernel_of_a_billion_taps_over_nine_positions(path):
    """k=10**9, s=2*10**9, pads (3, 5) on n=1: ceil mode's one window covers [-3, 10**9 - 3);
    its 9 taps inside [-3, 6) count with count_include_pad, the element itself without; floor
    mode has no window. Closed forms: no per-tap work."""
    if path == "numba":
        pytest.importorskip("numba")
    _backend.set_backend(path)
    try:
        x = np.arange(1, 7, dtype=np.float32).reshape(1, 2, 1, 3)
        axis = {"kernel_shape": [10**9, 1], "strides": [2 * 10**9, 1], "pads": [3, 0, 5, 0]}
        y, ind = kernels.max_pool(x, ceil_mode=1, return_indices=True, **axis)
        assert (y.ravel().tolist(), ind.ravel().tolist()) == (
            [1, 2, 3, 4, 5, 6], [0, 1, 2, 3, 4, 5]
        )
        for include, divisor in ((1, 9), (0, 1)):
            y = kernels.average_pool(x, ceil_mode=1, count_include_pad=include, **axis)
            np.testing.assert_array_equal(y, x / np.float32(divisor))
        y = kernels.lp_pool(x, ceil_mode=1, **axis)
        np.testing.assert_array_equal(y, x)
        assert kernels.max_pool(x, **axis).shape == (1, 2, 0, 3)
    finally:
        _backend.set_backend(None)


SESSION = """
import json, sys
sys.path.insert(0, {root!r})
import numpy as np
from tests import support
import ortpool
out = []
for op, version, attrs, n_out in {cases!r}:
    model = support.ortpool_model(op, version, attrs, np.float32, n_outputs=n_out)
    x = np.arange(1, 3, dtype=np.float32).reshape(1, 2, 1, 1)
    got = ortpool.InferenceSession(model).run(None, {{"X": x}})
    out.append([[list(g.shape), g.ravel().tolist()] for g in got])
print(json.dumps(out))
"""


def test_ortpool_ops_in_a_session_give_empty_and_one_window_outputs():
    """Through onnxruntime-extensions (a child process: an output onnxruntime cannot take
    would end it): floor mode gives (1, 2, 0, 0), ceil mode 1x1 of the element itself."""
    base = {"kernel_shape": [2, 2], "strides": [2, 2]}
    cases = []
    for ceil in (0, 1):
        cases += [
            ("MaxPool", 12, {**base, "ceil_mode": ceil}, 2),
            ("AveragePool", 19, {**base, "ceil_mode": ceil}, 1),
            ("LpPool", 18, {**base, "ceil_mode": ceil, "p": 2}, 1),
        ]
    code = SESSION.format(root=str(ROOT), cases=cases)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "ORTPOOL_KERNELS": "numpy"})
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout)
    empty = [[1, 2, 0, 0], []]
    assert got[:3] == [[empty, empty], [empty], [empty]]
    assert got[3:] == [
        [[[1, 2, 1, 1], [1.0, 2.0]], [[1, 2, 1, 1], [0, 1]]],
        [[[1, 2, 1, 1], [1.0, 2.0]]],
        [[[1, 2, 1, 1], [1.0, 2.0]]],
    ]


@pytest.mark.onnxruntime
@pytest.mark.parametrize(("op", "version", "attrs", "n_outputs"), [
    ("AveragePool", 19, {"kernel_shape": [2, 2], "strides": [2, 2], "count_include_pad": 0}, 1),
    ("MaxPool", 12, {"kernel_shape": [2, 2], "strides": [2, 2]}, 2),
    ("LpPool", 18, {"kernel_shape": [2, 2], "strides": [2, 2], "auto_pad": "VALID"}, 1),
])
def test_validate_names_the_window_a_runtime_makes(op, version, attrs, n_outputs):
    """floor(-1/2) + 1 = 0 on a 1x1 map; onnxruntime (1.21 to 1.32) truncates -1/2 to 0 and
    makes one window: validate says so by name, not "unrecognised"."""
    x = np.full((1, 2, 1, 1), 3.0, np.float32)
    got = runtime_defects.builtin(op, version, attrs, [x], n_outputs)
    runtime_defects.require(
        got.outputs is not None and got.outputs[0].size > 0, "makes no window there"
    )
    r = run_node(op, version, attrs, [x], n_outputs)
    assert r.status == results.DIFFER
    assert r.ortpool_shapes[0] == [1, 2, 0, 0]
    assert [c.code for c in r.causes] == [causes.WINDOW_BEYOND_INPUT]
    assert r.causes[0].detail.startswith(
        "axis 0: kernel span 2 > padded input 1 + 0 + 0: floor(-1/2) + 1 = 0, no window "
        "(ruling 19): the spec's output is empty there; the runtime makes one window"
    )
    ceil = {**attrs, "ceil_mode": 1} if "auto_pad" not in attrs else None
    if ceil is not None:
        agreed = run_node(op, version, ceil, [x], n_outputs)
        assert agreed.status == results.AGREE and agreed.ortpool_shapes[0] == [1, 2, 1, 1]


def test_the_cause_is_not_named_where_the_formula_gives_a_window():
    attrs = versions.get("AveragePool", 19)
    from ortpool.attributes import normalize

    ceil = normalize(attrs, {"kernel_shape": [2], "strides": [2], "ceil_mode": 1}, 1)
    assert causes.geometric_causes("AveragePool", ceil, [1]) == []
    floor = normalize(attrs, {"kernel_shape": [3], "strides": [2], "pads": [0, 1]}, 1)
    assert [c.code for c in causes.geometric_causes("AveragePool", floor, [1])] == [
        causes.WINDOW_BEYOND_INPUT
    ]


@pytest.mark.onnxruntime
def test_pad_form_is_exact_on_onnxruntimes_pool_for_the_ceil_window():
    """fix's Pad form for ceil mode's one window: Pad the end to (out-1)*s + ek, pool in floor
    mode, times kvol/count. Computed with onnxruntime's own pool (not ortpool's), it gives the
    spec: a standard-op form exists (the node as it is is right too: onnxruntime agrees)."""
    rng = np.random.default_rng(3)
    for op, version, attrs in [
        ("AveragePool", 19, {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1,
                             "count_include_pad": 0}),
        ("AveragePool", 19, {"kernel_shape": [5, 3], "strides": [4, 3], "ceil_mode": 1,
                             "pads": [1, 0, 1, 0], "count_include_pad": 1}),
        ("MaxPool", 12, {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}),
    ]:
        spatial = (1, 1) if attrs["kernel_shape"][0] == 2 else (2, 1)
        x = rng.normal(size=(1, 3, *spatial)).astype(np.float32)
        facts = facts_for(op, version, attrs, spatial)
        plan = forms.pad_node(facts)
        assert not isinstance(plan, forms.NotApplicable), plan

        def builtin_pool(padded, op=op, version=version, **pool_attrs):
            got = runtime_defects.builtin(op, version, pool_attrs, [padded])
            assert got.outputs is not None, got.error
            return got.outputs[0]

        got = run_plan(plan, facts, [x], pool=builtin_pool)
        want = kernels.run_op(op, version, [x], attrs)[0]
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=str((op, attrs)))


@pytest.mark.onnxruntime
def test_resnet_d_at_32x32_through_validate_and_fix(tmp_path, capsys):
    """The 32x32 image brings the last shortcut's AveragePool k2 s2 ceil a 1x1 map: validate
    agrees on every node and end to end (exit 0), fix proves every AveragePool as it is."""
    from ortpool.cli import main

    model = resnet_d()
    path = tmp_path / "resnet_d.onnx"
    onnx.save(model, path)
    code = main(["validate", str(path), "--shape", "image:1,3,32,32", "--no-progress", "-v",
                 "--no-guard-cost"])
    out = capsys.readouterr().out
    assert code == 0, out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("averagepool32 "))
    assert lines[at].split()[-1] == "agree"
    assert lines[at + 1].strip() == "all 64 cells agree"
    assert lines[-2:] == [
        "6 pooling nodes: 6 agree", "1 model agrees; 0 graph output(s) differ end to end"
    ]
    dims = model.graph.input[0].type.tensor_type.shape.dim
    for dim, size in zip(dims, (1, 3, 32, 32), strict=True):
        dim.dim_value = size
    onnx.save(model, path)
    report = tmp_path / "fix.json"
    code = main(["fix", str(path), str(tmp_path / "fixed.onnx"), "--json", str(report)])
    out = capsys.readouterr().out
    assert code == 0, out
    realized = {n["name"]: n["realization"] for n in json.loads(report.read_text())["nodes"]}
    # The shortcut pools, the 1x1 one included, as they are; the stem's MaxPool takes what the
    # installed runtime needs for NaN and -inf (ruling 18), not this test's business.
    assert {name: realized[name] for name in realized if name.startswith("averagepool")} == {
        "averagepool11": "unchanged", "averagepool18": "unchanged",
        "averagepool25": "unchanged", "averagepool32": "unchanged",
    }
    assert (tmp_path / "fixed.onnx").exists()
