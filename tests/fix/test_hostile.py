"""Hostile inputs to ``ortpool fix``, each through the command line in a child process with a
time limit (a hang or an abort fails the test, not the suite): the exit code and the whole
message. Where the message quotes onnxruntime, the installed onnxruntime is asked for its text.

Paths (an output that is the input, a ``--json`` that cannot be written) are refused by the code
``ortpool rewrite`` writes through: tests/rewrite/test_hostile_paths.py runs those for fix too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from ortpool import kernels
from ortpool.ort.ortrun import classify
from tests.support import CHILD_ENV, run_cli, unwrap
from tests.support.fix import unloadable_model

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

TIMEOUT = 120
ENV = {**CHILD_ENV, "ORTPOOL_KERNELS": "numpy"}  # no numba compile in the children
HEAD = (
    f"ortpool fix on onnxruntime {ort.__version__} (CPUExecutionProvider, graph optimizations "
    "all): 1 pooling node: "
)
NO_NONFINITE = (
    "MaxPool proofs held no NaN and no -inf (onnxruntime drops NaN and gives -3.4e38 for "
    "windows of -inf only): --nonfinite proves and guards them too"
)


def fix(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli("fix", *args, cwd=folder, env=ENV, timeout=TIMEOUT)


def save(model: onnx.ModelProto, path: Path) -> Path:
    model.ir_version = 10
    onnx.save(model, path)
    return path


def one_pool(path: Path, **attrs) -> Path:
    graph = h.make_graph(
        [h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2], **attrs)],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 4, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    return save(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)]), path)


def ort_refusal(path: Path) -> str:
    """onnxruntime's own words for refusing the model at ``path`` (as fix reports them)."""
    try:
        ort.InferenceSession(path.read_bytes(), providers=["CPUExecutionProvider"])
    except Exception as err:  # onnxruntime's exception types differ between releases
        return str(classify(err, "load"))[:400]
    raise AssertionError(f"onnxruntime {ort.__version__} loads {path}")


def test_pads_beyond_int64_are_refused_by_the_spec_and_nothing_is_written(tmp_path):
    one_pool(tmp_path / "m.onnx", pads=[2**62] * 4)
    done = fix(tmp_path, "m.onnx", "o.onnx")
    refused = (
        "spatial axis 0: the padded input 4 + 4611686018427387904 + 4611686018427387904 = "
        "9223372036854775812 does not fit in int64 (at most 9223372036854775807)"
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert unwrap(done.stderr).splitlines() == [
        HEAD + "unproven 1",
        "  node 'p' (MaxPool-12, float): unproven: no input it could be proven on: ortpool's "
        f"kernels refuse: X [1, 1, 4, 4]: {refused}",
        f"note: no node input could be captured: node 'p' (MaxPool-12): {refused} [op type "
        "MaxPool_12, input shapes [1, 1, 4, 4]]",
        "note: no proof in the written model: the written model could not be run: "
        + ort_refusal(tmp_path / "m.onnx"),
        "note: nothing written: some nodes are unproven (--allow-unproven)",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]


def test_attribute_strings_that_are_not_utf8_or_not_a_value_are_errors(tmp_path):
    path = one_pool(tmp_path / "m.onnx")
    model = onnx.load(path)
    model.graph.node[0].attribute.append(h.make_attribute("auto_pad", b"\xff\xfeSAME"))
    save(model, path)
    done = fix(tmp_path, "m.onnx", "o.onnx")
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "ortpool fix: error: node 'p': attribute 'auto_pad' is not UTF-8 text: "
        "b'\\xff\\xfeSAME'\n",
    )
    one_pool(path, auto_pad="SAME_SIDEWAYS")
    done = fix(tmp_path, "m.onnx", "o.onnx")
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "ortpool fix: error: node 'p' (MaxPool-12): auto_pad='SAME_SIDEWAYS' must be one of "
        "NOTSET, SAME_UPPER, SAME_LOWER, VALID\n",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]


def test_an_invalid_node_and_an_unknown_node_name_are_errors(tmp_path):
    one_pool(tmp_path / "m.onnx", auto_pad="SAME_UPPER", pads=[1, 1, 1, 1])
    done = fix(tmp_path, "m.onnx", "o.onnx")
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "ortpool fix: error: node 'p' (MaxPool-12): pads='1,1,1,1' cannot be used with "
        "auto_pad='SAME_UPPER'\n",
    )
    one_pool(tmp_path / "m.onnx")
    done = fix(tmp_path, "m.onnx", "o.onnx", "--nodes", "nope")
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "ortpool fix: error: --nodes: no pooling node is named 'nope'\n",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]


def test_a_model_onnxruntime_cannot_load_is_unproven(tmp_path):
    path = save(unloadable_model(), tmp_path / "m.onnx")
    refusal = ort_refusal(path)
    done = fix(tmp_path, "m.onnx", "o.onnx", "--json", "r.json")
    assert (done.returncode, done.stdout) == (2, "")
    assert unwrap(done.stderr).splitlines() == [
        HEAD + "unproven 1",
        f"  node 'p' (MaxPool-12, float): unproven: proven alone, but the written model could "
        f"not be run: {refusal}",
        f"note: no node input could be captured: {refusal}",
        f"note: no proof in the written model: the written model could not be run: {refusal}",
        "note: nothing written: some nodes are unproven (--allow-unproven)",
    ]
    # The report is written (it is what the user needs here), the model is not.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx", "r.json"]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["summary"]["unproven"] == ["p"] and report["written"] is None
    # from Python the notes name the arguments, not the flags ("(--allow-unproven)")
    import ortpool

    notes = ortpool.fix.fix_file(path, tmp_path / "o.onnx").notes
    assert notes[-1] == "nothing written: some nodes are unproven (allow_unproven=True)"
    notes = ortpool.fix.fix_file(path, tmp_path / "o.onnx", allow_unproven=True, dry_run=True).notes
    assert notes[-1] == "nothing written (dry_run=True)"


# Subgraph bodies that declare the static shapes of their outputs --------------------------------

_RUN = """
import json, sys
import numpy as np
import ortpool
session = ortpool.InferenceSession(sys.argv[1])
feeds = {k: np.asarray(v, dtype=np.float32 if k != "c" else bool) for k, v in
         json.loads(sys.argv[2]).items()}
print(json.dumps([o.tolist() for o in session.run(None, feeds)]))
"""


def run_child(folder: Path, model: str, feeds: dict) -> list[np.ndarray]:
    """``model`` run in a child process through ortpool.InferenceSession (an abort there fails
    this test only)."""
    ran = subprocess.run(
        [sys.executable, "-c", _RUN, model, json.dumps(feeds)],
        cwd=folder, env=ENV, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    return [np.asarray(a) for a in json.loads(ran.stdout)]


def test_a_branch_output_of_declared_shape_written_by_ortpool_op_runs(tmp_path):
    """A double AveragePool (no onnxruntime kernel: ortpool's op) writes an If branch output
    declared [1, 1, 3, 3]: onnxruntime allocates such an output ahead, and an op output of
    another shape ends the process; fix sets the declaration aside as rewrite does, and the
    model runs."""
    alone = h.make_graph(
        [h.make_node("AveragePool", ["x"], ["y"], name="avg_double", kernel_shape=[2, 2])], "g",
        [h.make_tensor_value_info("x", T.DOUBLE, [1, 1, 4, 4])],
        [h.make_tensor_value_info("y", T.DOUBLE, None)],
    )
    no_kernel = save(h.make_model(alone, opset_imports=[h.make_opsetid("", 19)]),
                     tmp_path / "alone.onnx")
    try:
        refusal = ort_refusal(no_kernel)
    except AssertionError:
        pytest.skip(f"onnxruntime {ort.__version__} runs double AveragePool-19: no ortpool op")
    no_kernel.unlink()
    branches = {
        name: h.make_graph(
            [h.make_node(op, ["xd"], [out], name=node, kernel_shape=[2, 2])],
            name,
            [],
            [h.make_tensor_value_info(out, T.DOUBLE, [1, 1, 3, 3])],
        )
        for name, op, out, node in (
            ("then", "AveragePool", "yb", "avg_double"),
            ("else", "MaxPool", "ye", "max_double"),
        )
    }
    graph = h.make_graph(
        [
            h.make_node("Cast", ["x"], ["xd"], to=T.DOUBLE),
            h.make_node("If", ["c"], ["y"], name="branch", then_branch=branches["then"],
                        else_branch=branches["else"]),
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 4, 4]),
         h.make_tensor_value_info("c", T.BOOL, [])],
        [h.make_tensor_value_info("y", T.DOUBLE, [1, 1, 3, 3])],
    )
    save(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)]), tmp_path / "m.onnx")
    # the non-finite domain: the double MaxPool of the other branch is guarded there
    done = fix(tmp_path, "m.onnx", "o.onnx", "--nonfinite")
    # one built set for ortpool's op; the tolerance by name with -v only
    exact = "exact on 3 input sets alone (within the accuracy rule for sums, ruling 17)"
    refused = f"not exact: onnxruntime refuses it: {refusal}"
    refused_guard = refused.replace("'avg_double'", "'ortpool_fix/flag_sum/max_double'")
    # the double MaxPool in the other branch: onnxruntime drops a NaN that is not a window's
    # first tap (the built cases, ruling 18), or before that (1.21) gives the lowest
    # finite double for a window of -inf only: either way it is guarded
    dropped = (
        "not exact: Y differs in 5 of 9 cells (on built cases 1/26 (NaN at tap (0, 0)), "
        "X [1, 1, 4, 4]; e.g. at [0, 0, 0, 1] (NaN at tap (0, 0)): ",
        "not exact: Y differs in 9 of 9 cells (on lowest, X [1, 1, 4, 4]; e.g. at [0, 0, 0, 0]: "
        "-1.7976931348623157e+308 instead of -inf)",
    )
    assert (done.returncode, done.stderr) == (1, "")
    lines = unwrap(done.stdout).splitlines()
    for line, tried in zip(lines[3:5], ("unchanged", "pad"), strict=True):
        assert line.startswith(f"      tried {tried}: "), line
        rest = line.split(": ", 1)[1]
        assert (rest.startswith(dropped[0]) and rest.endswith("instead of nan)")) or (
            rest == dropped[1]
        ), line
    assert lines[:3] + lines[5:] == [
        HEAD.replace("1 pooling node", "2 pooling nodes") + "standard form 1, ortpool op 1",
        "  standard forms: nan-guard-mask 1",
        "  node 'max_double' (MaxPool-12, double): form nan-guard-mask -- exact on 28 input "
        "sets alone (exact)",
        # the summed guard's AveragePool has no double kernel: the pooled mask guards it
        f"      tried nan-guard: {refused_guard}",
        f"      tried pad+nan-guard: {refused_guard}",
        f"  node 'avg_double' (AveragePool-19, double): ortpool op -- {exact}",
        f"      tried unchanged: {refused}",
        f"      tried pad: {refused}",
        f"      tried pad-signed-zero: {refused}",
        "      tried ortpool: proven (the proof above)",
        "the fixed model needs ortpool at run time (ortpool.InferenceSession) for 1 node: "
        "'avg_double'",
        "note: subgraph outputs 'yb' are written by an ortpool op: their declared static sizes "
        "are kept in their metadata and their dims made symbolic (as 'ortpool rewrite' does)",
        "wrote o.onnx",
    ]
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4) / 4
    for c, want in ((True, kernels.average_pool), (False, kernels.max_pool)):
        (y,) = run_child(tmp_path, "o.onnx", {"x": x.tolist(), "c": c})
        np.testing.assert_array_equal(y, want(x.astype(np.float64), kernel_shape=[2, 2]))


def test_a_scan_body_with_declared_shapes_gets_the_spec_sizes(tmp_path):
    """A VALID ceil_mode MaxPool in a Scan body whose outputs declare the spec's size
    ([1, 1, 2, 2] from 6x6, k3 s2; onnxruntime computes 3x3): fixed to explicit pads, and the
    Scan runs with the declared sizes."""
    x = np.random.default_rng(0).normal(size=(2, 1, 1, 6, 6)).astype(np.float32)
    node = h.make_node("MaxPool", ["s"], ["o"], name="scan_pool", kernel_shape=[3, 3],
                       strides=[2, 2], auto_pad="VALID", ceil_mode=1)
    ours = kernels.max_pool(x[0], kernel_shape=[3, 3], strides=[2, 2], auto_pad="VALID",
                            ceil_mode=1)
    if onnx_runs_it_right(node, x[0], ours):
        pytest.skip(f"onnxruntime {ort.__version__} sizes VALID with ceil_mode as the spec does")
    body = h.make_graph(
        [node, h.make_node("Identity", ["state"], ["state_out"])],
        "body",
        [h.make_tensor_value_info("state", T.FLOAT, [1]),
         h.make_tensor_value_info("s", T.FLOAT, [1, 1, 6, 6])],
        [h.make_tensor_value_info("state_out", T.FLOAT, [1]),
         h.make_tensor_value_info("o", T.FLOAT, [1, 1, 2, 2])],
    )
    graph = h.make_graph(
        [h.make_node("Scan", ["init", "x"], ["final", "ys"], name="scan", body=body,
                     num_scan_inputs=1)],
        "g",
        [h.make_tensor_value_info("init", T.FLOAT, [1]),
         h.make_tensor_value_info("x", T.FLOAT, [2, 1, 1, 6, 6])],
        [h.make_tensor_value_info("final", T.FLOAT, [1]),
         h.make_tensor_value_info("ys", T.FLOAT, [2, 1, 1, 2, 2])],
    )
    save(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)]), tmp_path / "m.onnx")
    done = fix(tmp_path, "m.onnx", "o.onnx", "-q")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    _, ys = run_child(tmp_path, "o.onnx", {"init": [0.0], "x": x.tolist()})
    np.testing.assert_array_equal(ys[0], ours)
    np.testing.assert_array_equal(
        ys[1], kernels.max_pool(x[1], kernel_shape=[3, 3], strides=[2, 2], auto_pad="VALID")
    )


def onnx_runs_it_right(node: onnx.NodeProto, x: np.ndarray, ours: np.ndarray) -> bool:
    """Whether onnxruntime's built-in gives ``ours`` for ``node`` alone on ``x``."""
    alone = onnx.NodeProto()
    alone.CopyFrom(node)
    graph = h.make_graph(
        [alone], "g", [h.make_tensor_value_info("s", T.FLOAT, list(x.shape))],
        [h.make_tensor_value_info("o", T.FLOAT, None)],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)])
    model.ir_version = 10
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"s": x})
    return got.shape == ours.shape and bool(np.array_equal(got, ours))


def test_ortpool_ops_fix_writes_are_declared_as_rewrite_declares_them(tmp_path):
    """onnxruntime types nothing an ortpool op writes. A local function's double AveragePool
    (ortpool's op) read after the call: fix wrote it undeclared and its own proof refused the
    model ("Node (block) Op (Block) output arg (b) type inference failed", exit 2, nothing
    written), where 'ortpool rewrite' declares the call's output. And a SegNet's MaxPools with
    their Indices read, ortpool's op on NaN: fixing the fixed model again left the MaxUnpools
    unproven ("the element type of input 'r' could not be learned")."""
    block = h.make_function("local", "Block", ["fx"], ["fy"], [
        h.make_node("AveragePool", ["fx"], ["fy"], name="fap", kernel_shape=[2, 2],
                    pads=[1, 1, 1, 1])], [h.make_opsetid("", 17)])
    graph = h.make_graph(
        [h.make_node("Cast", ["x"], ["xd"], name="cast", to=T.DOUBLE),
         h.make_node("Block", ["xd"], ["b"], domain="local", name="block"),
         h.make_node("Relu", ["b"], ["y"], name="relu")], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 6, 6])],
        [h.make_tensor_value_info("y", T.DOUBLE, [1, 2, 7, 7])])
    save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("local", 1)],
                      functions=[block]), tmp_path / "f.onnx")
    done = fix(tmp_path, "f.onnx", "fo.onnx", "-q")
    assert (done.returncode, done.stderr) == (1, "")
    x = np.arange(72, dtype=np.float32).reshape(1, 2, 6, 6) / 4
    (y,) = run_child(tmp_path, "fo.onnx", {"x": x.tolist()})
    want = kernels.average_pool(x.astype(np.float64), kernel_shape=[2, 2], pads=[1, 1, 1, 1])
    np.testing.assert_array_equal(y, np.maximum(want, 0))
    graph = h.make_graph([
        h.make_node("MaxPool", ["x"], ["p", "i"], name="pool", kernel_shape=[2, 2],
                    strides=[2, 2]),
        h.make_node("Relu", ["p"], ["r"], name="relu"),
        h.make_node("MaxUnpool", ["r", "i"], ["y"], name="unpool", kernel_shape=[2, 2],
                    strides=[2, 2]),
    ], "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 8, 8])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 2, 8, 8])])
    save(h.make_model(graph, opset_imports=[h.make_opsetid("", 11)]), tmp_path / "s.onnx")
    assert fix(tmp_path, "s.onnx", "so.onnx", "--nonfinite", "-q").returncode == 1
    again = fix(tmp_path, "so.onnx", "so2.onnx", "--nonfinite", "-q")
    assert (again.returncode, again.stderr, (tmp_path / "so2.onnx").exists()) == (1, "", True)


def test_ortpool_ops_the_model_holds_already_are_reported_and_exit_1():
    """fix of a model that holds ortpool's ops already (rewritten, or fixed before with a node
    kept as ortpool's op) said '1 pooling node: unchanged 1' and exited 0, 'the model runs on
    plain onnxruntime', which refuses the model it wrote. Each is reported as the ortpool op it
    is, the model as needing ortpool at run time (exit 1)."""
    import ortpool
    from ortpool.fix import fix_with_report

    graph = h.make_graph([
        h.make_node("MaxPool", ["x"], ["a"], name="kept", kernel_shape=[2, 2]),
        h.make_node("MaxPool", ["a"], ["y"], name="plain", kernel_shape=[2, 2]),
    ], "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 6, 6])],
        [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 12)])
    model.ir_version = 10
    _, report = fix_with_report(ortpool.rewrite(model, nodes="kept"))
    assert [(n.name, n.key, n.realization) for n in report.nodes] == [
        ("plain", "MaxPool-12", "unchanged"), ("kept", "MaxPool-12", "ortpool op")]
    assert report.exit_code() == 1
    assert report.summary_lines()[-2] == (
        "the fixed model needs ortpool at run time (ortpool.InferenceSession) for 1 node: 'kept'")


def test_a_pool_in_a_function_another_function_calls_is_fixed():
    """A local function F calling G, whose MaxPool (SAME_UPPER, dilated) onnxruntime gets wrong:
    fix typed a function's body only at the calls of the graphs, so G's pool was unproven ('the
    element type of input 'gx' could not be learned', exit 2) where rewrite and validate read
    it. Nested calls are followed, as rewrite's types follow them."""
    from ortpool.fix import fix_with_report

    imports = [h.make_opsetid("", 17), h.make_opsetid("local", 1)]
    inner = h.make_function("local", "G", ["gx"], ["gy"], [
        h.make_node("MaxPool", ["gx"], ["gy"], name="gpool", kernel_shape=[3, 3],
                    dilations=[2, 2], auto_pad="SAME_UPPER")], imports)
    outer = h.make_function("local", "F", ["fx"], ["fy"], [
        h.make_node("G", ["fx"], ["ft"], domain="local", name="gcall"),
        h.make_node("Relu", ["ft"], ["fy"], name="frelu")], imports)
    graph = h.make_graph([h.make_node("F", ["x"], ["y"], domain="local", name="fcall")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 9, 9])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, 2, 9, 9])])
    model = h.make_model(graph, opset_imports=imports, functions=[inner, outer])
    model.ir_version = 8
    fixed, report = fix_with_report(model)
    assert [(n.name, n.location, n.form) for n in report.nodes] == [
        ("gpool", "function local.G", "explicit-pads")]
    assert report.exit_code() == 0
    x = np.arange(162, dtype=np.float32).reshape(1, 2, 9, 9) % 7
    (y,) = ort.InferenceSession(fixed.SerializeToString()).run(None, {"x": x})
    want = kernels.max_pool(x, kernel_shape=[3, 3], dilations=[2, 2], auto_pad="SAME_UPPER")
    np.testing.assert_array_equal(y, np.maximum(want, 0))


def test_a_function_called_directly_and_from_another_function_keeps_no_size():
    """G's SAME_UPPER dilated MaxPool (stride 2: its pads depend on the size) called on x
    [1,2,9,9] and, through F, on x padded to 10x10: fix sized G by its direct call alone and
    wrote the pads of 9x9, wrong on F's call (and validate called both copies fixed). G's sizes
    are unknown now: a form right at every size, or ortpool's op."""
    import ortpool
    from ortpool.fix import fix_with_report

    imports = [h.make_opsetid("", 17), h.make_opsetid("local", 1)]
    inner = h.make_function("local", "G", ["gx"], ["gy"], [
        h.make_node("MaxPool", ["gx"], ["gy"], name="gpool", kernel_shape=[3, 3],
                    strides=[2, 2], dilations=[2, 2], auto_pad="SAME_UPPER")], imports)
    pads = np.array([0, 0, 0, 0, 0, 0, 1, 1], np.int64)
    outer = h.make_function("local", "F", ["fx"], ["fy"], [
        h.make_node("Constant", [], ["pp"], value=onnx.numpy_helper.from_array(pads)),
        h.make_node("Pad", ["fx", "pp"], ["fp"], name="pad"),
        h.make_node("G", ["fp"], ["fy"], domain="local", name="gcall")], imports)
    graph = h.make_graph([h.make_node("G", ["x"], ["a"], domain="local", name="direct"),
                          h.make_node("F", ["x"], ["b"], domain="local", name="fcall")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 9, 9])],
                         [h.make_tensor_value_info("a", T.FLOAT, None),
                          h.make_tensor_value_info("b", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=imports, functions=[inner, outer])
    model.ir_version = 8
    fixed, report = fix_with_report(model)
    assert [(n.name, n.realization) for n in report.nodes] == [("gpool", "ortpool op")]
    x = np.arange(162, dtype=np.float32).reshape(1, 2, 9, 9) % 7
    a, b = ortpool.InferenceSession(fixed).run(None, {"x": x})
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "dilations": [2, 2],
             "auto_pad": "SAME_UPPER"}
    np.testing.assert_array_equal(a, kernels.max_pool(x, **attrs))
    padded = np.pad(x, ((0, 0), (0, 0), (0, 1), (0, 1)))
    np.testing.assert_array_equal(b, kernels.max_pool(padded, **attrs))


def test_a_pool_in_a_function_nothing_calls_does_not_stop_the_fix():
    """A local function no graph calls (an exporter's leftover) holding a MaxPool: its input's
    type can never be learned, and fix called it unproven and wrote nothing (exit 2) beside a
    node it had fixed. It never runs: not selected, with the reason."""
    from ortpool.fix import fix_with_report

    imports = [h.make_opsetid("", 17), h.make_opsetid("local", 1)]
    unused = h.make_function("local", "Unused", ["ux"], ["uy"], [
        h.make_node("MaxPool", ["ux"], ["uy"], name="upool", kernel_shape=[2, 2])], imports)
    graph = h.make_graph([h.make_node("MaxPool", ["x"], ["y"], name="mp", kernel_shape=[3, 3],
                                      dilations=[2, 2], auto_pad="SAME_UPPER")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 9, 9])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, 2, 9, 9])])
    model = h.make_model(graph, opset_imports=imports, functions=[unused])
    model.ir_version = 8
    _, report = fix_with_report(model)
    assert [(n.name, n.realization, n.reason) for n in report.nodes] == [
        ("mp", "standard form", ""),
        ("upool", "not selected", "function local.Unused is called nowhere: it never runs")]
    assert report.exit_code() == 0
