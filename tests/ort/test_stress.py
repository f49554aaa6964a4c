"""Hostile inputs, each in a child process with a timeout: no death, no hang, every failure an
OrtpoolError naming the node, the op version and the offending value.

The module is also the child: ``python tests/ort/test_stress.py CASE`` runs one case and prints one
JSON line (what came back: outputs or the error). The cases run two at a time; the whole set
takes well under a minute.
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

TIMEOUT = 60  # a child still running then is a hang

# ---------------------------------------------------------------- models (child side)


def _support():
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from tests import support

    return support


def _pool_node(attrs: dict[str, Any], name: str = "pool", op_type: str = "MaxPool_12"):
    """A hand-written ortpool MaxPool-12 node: every attribute present, ``attrs`` overriding."""
    from onnx import helper

    base = {"auto_pad": "NOTSET", "ceil_mode": 0, "dilations": "", "kernel_shape": "2,2",
            "pads": "", "storage_order": 0, "strides": ""}
    return helper.make_node(op_type, ["X"], ["Y"], domain="ortpool", name=name,
                            **{**base, **attrs})


def _one_node(node, x_dtype=np.float32):
    return _support().one_node_model(node, [x_dtype], [x_dtype])


def _run_ours(model, feeds, options=None) -> dict[str, Any]:
    import ortpool

    session = ortpool.InferenceSession(model, options)
    outputs = session.run(None, feeds)
    return {"shapes": [list(o.shape) for o in outputs],
            "nan": [bool(np.isnan(o).all()) if o.dtype.kind == "f" and o.size else False
                    for o in outputs]}


def _x(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def attribute_case(attrs: dict[str, Any]) -> Callable[[], dict]:
    def case() -> dict:
        return _run_ours(_one_node(_pool_node(attrs)), {"X": _x(1, 1, 4, 4)})

    return case


def _branch_model(pool_attrs: dict[str, Any], declared: list[int], via: str = "",
                  node=None, else_node=None, inputs=()):
    """If(c) then: X -> ortpool MaxPool (or ``node``) (-> a view) -> output of ``declared``
    shape; else the built-in MaxPool k2 (or ``else_node``). ``inputs``: more graph inputs."""
    import onnx
    from onnx import helper

    node = node or _pool_node(pool_attrs)
    nodes = [node]
    if via:
        node.output[0] = "P"
        nodes.append(helper.make_node(via, ["P", "shape"] if via == "Reshape" else ["P"],
                                      ["Yb"]))
    else:
        node.output[0] = "Yb"
    then_g = helper.make_graph(
        nodes, "then", [], [helper.make_tensor_value_info("Yb", onnx.TensorProto.FLOAT,
                                                          declared)])
    else_g = helper.make_graph(
        [else_node or helper.make_node("MaxPool", ["X"], ["Ye"], kernel_shape=[2, 2])], "else",
        [], [helper.make_tensor_value_info("Ye", onnx.TensorProto.FLOAT, declared)])
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["shape"],
                          value=helper.make_tensor("s", onnx.TensorProto.INT64, [4],
                                                   [1, 1, -1, 3])),
         helper.make_node("If", ["c"], ["Y"], then_branch=then_g, else_branch=else_g)],
        "g",
        [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [1, 1, 4, 4]),
         helper.make_tensor_value_info("c", onnx.TensorProto.BOOL, []), *inputs],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                    helper.make_opsetid("ortpool", 1)])
    model.ir_version = _support().IR_VERSION
    return model


def branch_case(pool_attrs, declared, via="", plain=False) -> Callable[[], dict]:
    def case() -> dict:
        model = _branch_model(pool_attrs, declared, via)
        feeds = {"X": _x(1, 1, 4, 4), "c": np.array(True)}
        if not plain:
            return _run_ours(model, feeds)
        import onnxruntime as ort

        import ortpool
        from ortpool.ort import failures

        session = ort.InferenceSession(ortpool.rewrite(model).SerializeToString(),
                                       ortpool.session_options(),
                                       providers=["CPUExecutionProvider"])
        (y,) = session.run(None, feeds)
        return {"shapes": [list(y.shape)], "recorded": [str(f.error) for f in failures.recent()]}

    return case


def standard_branch_rewritten_plain() -> dict:
    """A standard MaxUnpool in an If branch with a declared output shape, rewritten by ortpool,
    run in a plain onnxruntime session on indices outside the output: the op fails inside the
    branch; the process lives, the output keeps its shape and is NaN, the failure is kept."""
    import onnx
    import onnxruntime as ort
    from onnx import helper

    import ortpool
    from ortpool.ort import failures

    then_g = helper.make_graph(
        [helper.make_node("MaxUnpool", ["X", "I"], ["Yb"], kernel_shape=[2], name="unpool")],
        "then", [], [helper.make_tensor_value_info("Yb", onnx.TensorProto.FLOAT, [1, 1, 4])])
    else_g = helper.make_graph(
        [helper.make_node("Identity", ["Z"], ["Ye"])], "else", [],
        [helper.make_tensor_value_info("Ye", onnx.TensorProto.FLOAT, [1, 1, 4])])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["Y"], then_branch=then_g, else_branch=else_g)], "g",
        [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [1, 1, 3]),
         helper.make_tensor_value_info("I", onnx.TensorProto.INT64, [1, 1, 3]),
         helper.make_tensor_value_info("Z", onnx.TensorProto.FLOAT, [1, 1, 4]),
         helper.make_tensor_value_info("c", onnx.TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = _support().IR_VERSION
    session = ort.InferenceSession(ortpool.rewrite(model).SerializeToString(),
                                   ortpool.session_options(), providers=["CPUExecutionProvider"])
    feeds = {"X": np.ones((1, 1, 3), np.float32), "I": np.array([[[0, 1, 99]]]),
             "Z": np.zeros((1, 1, 4), np.float32), "c": np.array(True)}
    (y,) = session.run(None, feeds)
    return {"shapes": [list(y.shape)], "nan": [bool(np.isnan(y).all())],
            "recorded": [str(f.error) for f in failures.recent()]}


def kernel_case(call: str) -> Callable[[], dict]:
    """A numpy-API call given as source (``x`` is 1x1x4x4 float32, ``kernels`` imported)."""

    def case() -> dict:
        from ortpool import kernels

        x = np.ones((1, 1, 4, 4), np.float32)
        result = eval(call, {"np": np, "kernels": kernels, "x": x})
        return {"shapes": [list(np.shape(r)) for r in (result if isinstance(result, tuple)
                                                       else (result,))]}

    return case


def _family_node(op: str, version: int, attrs: dict[str, Any], override: dict[str, Any],
                 n_inputs: int = 1, name: str = "pool"):
    """An ortpool node of ``op``-``version`` written as the rewriter writes it from ``attrs``,
    then its encoded attributes replaced by ``override`` (what no rewrite would write)."""
    from onnx import helper

    node = _support().ortpool_model(op, version, attrs, np.float32, n_inputs=n_inputs,
                                    node_name=name).graph.node[0]
    for attribute in node.attribute:
        if attribute.name in override:
            attribute.CopyFrom(helper.make_attribute(attribute.name, override[attribute.name]))
    return node


def family_case(op: str, version: int, attrs: dict[str, Any], override: dict[str, Any],
                feeds: Callable[[], dict]) -> Callable[[], dict]:
    def case() -> dict:
        given = feeds()
        node = _family_node(op, version, attrs, override, n_inputs=len(given))
        model = _support().one_node_model(node, [np.float32] * len(given), [np.float32])
        return _run_ours(model, given)

    return case


ROIS = np.array([[0, 0, 0, 3, 3]], np.float32)


def family_branch_case(node: Callable[[], Any], else_op: str, declared: list[int],
                       rois: np.ndarray | None = None) -> Callable[[], dict]:
    """A new operator's ortpool node in an If branch of ``declared`` output shape."""

    def case() -> dict:
        import onnx
        from onnx import helper

        pool = node()
        pool.output[0] = "Yb"
        extra = ()
        if rois is not None:
            extra = (helper.make_tensor_value_info("rois", onnx.TensorProto.FLOAT, [None, 5]),)
        else_inputs = ["X", "rois"] if rois is not None else ["X"]
        else_node = helper.make_node(else_op, else_inputs, ["Ye"],
                                     **({"pooled_shape": [2, 2]} if rois is not None else {}))
        model = _branch_model({}, declared, node=pool, else_node=else_node, inputs=extra)
        feeds = {"X": _x(1, 1, 4, 4), "c": np.array(True)}
        if rois is not None:
            feeds["rois"] = rois
        return _run_ours(model, feeds)

    return case


def parallel_failing_runs(kind: str = "unpool") -> dict:
    """ORT_PARALLEL, 4 threads x 25 runs of one session, every other run failing (MaxUnpool: an
    index outside the output; MaxRoiPool: a batch index outside X's batch): each failing run
    raises its own error, each good run returns its result."""
    import onnxruntime as ort

    import ortpool

    sup = _support()
    x = np.ones((1, 1, 3), np.float32)
    if kind == "unpool":
        model = sup.ortpool_model("MaxUnpool", 11, {"kernel_shape": [2]}, np.float32,
                                  n_inputs=2, node_name="unpool")

        def feeds(r: int, bad: bool) -> dict:
            return {"X": x, "I": np.array([[[0, 1, 7 + r if bad else 2]]])}

        def own(r: int) -> str:
            return f"index {7 + r} in I"

        good_shape = (1, 1, 4)
    else:
        model = sup.ortpool_model("MaxRoiPool", 22, {"pooled_shape": [2, 2]}, np.float32,
                                  n_inputs=2, node_name="unpool")

        def feeds(r: int, bad: bool) -> dict:
            return {"X": np.ones((2, 1, 4, 4), np.float32),
                    "rois": np.array([[2 + r if bad else 1, 0, 0, 3, 3]], np.float32)}

        def own(r: int) -> str:
            return f"has batch index {2 + r};"

        good_shape = (1, 1, 2, 2)
    options = ortpool.session_options()
    options.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    session = ortpool.InferenceSession(model, options)
    counts = {"raised": 0, "good": 0, "wrong": 0}
    messages = set()
    lock = threading.Lock()

    def work(k: int) -> None:
        for r in range(25):
            bad = (r + k) % 2 == 1
            try:
                (y,) = session.run(None, feeds(r, bad))
                outcome = "wrong" if bad or y.shape != good_shape else "good"
            except ortpool.OrtpoolError as err:
                ok = bad and own(r) in str(err)
                outcome = "raised" if ok else "wrong"
                with lock:
                    messages.add(str(err).split(": ")[0])
            with lock:
                counts[outcome] += 1

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {**counts, "messages": sorted(messages)}


def plain_failing_runs() -> dict:
    """A plain onnxruntime session whose ortpool op fails on every run: the process lives, each
    output is NaN of the node's shape, the failures kept are bounded."""
    import logging

    import onnxruntime as ort

    import ortpool
    from ortpool.ort import failures

    logging.getLogger("ortpool").setLevel(logging.CRITICAL)
    model = _support().ortpool_model("MaxUnpool", 11, {"kernel_shape": [2]}, np.float32,
                                     n_inputs=2)
    session = ort.InferenceSession(model.SerializeToString(), ortpool.session_options(),
                                   providers=["CPUExecutionProvider"])
    for _ in range(300):
        (y,) = session.run(None, {"X": np.ones((1, 2, 3), np.float32),
                                  "I": np.full((1, 2, 3), 50)})
    return {"shapes": [list(y.shape)], "nan": [bool(np.isnan(y).all())],
            "kept": len(failures.recent())}


def scan_later_iteration_fails() -> dict:
    """An ortpool MaxUnpool in a Scan body with declared output shapes, failing on the second
    iteration only (onnxruntime places later iterations' outputs into the Scan output)."""
    import onnx
    from onnx import helper

    sup = _support()
    unpool = sup.ortpool_model("MaxUnpool", 11, {"kernel_shape": [2]}, np.float32, n_inputs=2,
                               node_name="unpool").graph.node[0]
    unpool.input[:] = ["x", "i"]
    unpool.output[:] = ["y"]
    body = helper.make_graph(
        [unpool], "body",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 1, 3]),
         helper.make_tensor_value_info("i", onnx.TensorProto.INT64, [1, 1, 3])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 1, 4])])
    scan = helper.make_node("Scan", ["X", "I"], ["Y"], body=body, num_scan_inputs=2)
    graph = helper.make_graph(
        [scan], "g",
        [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [2, 1, 1, 3]),
         helper.make_tensor_value_info("I", onnx.TensorProto.INT64, [2, 1, 1, 3])],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16),
                                                    helper.make_opsetid("ortpool", 1)])
    model.ir_version = sup.IR_VERSION
    indices = np.array([[[[0, 1, 2]]], [[[0, 1, 9]]]])
    return _run_ours(model, {"X": np.ones((2, 1, 1, 3), np.float32), "I": indices})


def validate_branch_model(tmp: str = "/tmp") -> dict:
    """``ortpool validate`` on a standard model whose MaxPool (SAME_UPPER, dilation 2) sits in
    an If branch declaring the shape onnxruntime computes for it (2x2; the spec's is 4x4): the
    ortpool-rewritten run ended the process; now it reports the difference."""
    import onnx
    from onnx import helper

    then_g = helper.make_graph(
        [helper.make_node("MaxPool", ["X"], ["Yb"], kernel_shape=[3, 3], dilations=[2, 2],
                          auto_pad="SAME_UPPER", name="pool")],
        "then", [], [helper.make_tensor_value_info("Yb", onnx.TensorProto.FLOAT, [1, 1, 2, 2])])
    else_g = helper.make_graph(
        [helper.make_node("MaxPool", ["X"], ["Ye"], kernel_shape=[2, 2], strides=[2, 2])],
        "else", [], [helper.make_tensor_value_info("Ye", onnx.TensorProto.FLOAT, [1, 1, 2, 2])])
    true = helper.make_tensor("true", onnx.TensorProto.BOOL, [], [True])
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["c"], value=true),
         helper.make_node("If", ["c"], ["Y"], then_branch=then_g, else_branch=else_g)], "g",
        [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = _support().IR_VERSION
    path = os.path.join(tmp, f"ortpool-stress-branch-{os.getpid()}.onnx")
    onnx.save(model, path)
    try:
        done = subprocess.run([sys.executable, "-m", "ortpool", "validate", path, "--no-progress",
                               "--seed", "0"], capture_output=True, text=True, timeout=TIMEOUT)
    finally:
        os.remove(path)
    return {"returncode": done.returncode, "stdout": done.stdout[-2000:],
            "stderr": done.stderr[-2000:]}


BAD_UTF8 = b"\xff\xfe3"
HUGE = "9" * 40

#: name -> (case, expected): ("ok", checks) or ("raised", substrings of the OrtpoolError).
CASES: dict[str, tuple[Callable[[], dict], tuple[str, Any]]] = {
    "kernel_shape-letters": (attribute_case({"kernel_shape": "x,3"}),
                             ("raised", ["node 'pool' (MaxPool-12)", "kernel_shape='x,3'"])),
    "kernel_shape-empty-item": (attribute_case({"kernel_shape": "3,,3"}),
                                ("raised", ["node 'pool' (MaxPool-12)", "kernel_shape='3,,3'"])),
    "kernel_shape-negative": (attribute_case({"kernel_shape": "-1,-1"}),
                              ("raised", ["node 'pool' (MaxPool-12)", "kernel_shape='-1,-1'"])),
    "kernel_shape-bad-utf8": (attribute_case({"kernel_shape": BAD_UTF8}),
                              ("raised", ["node 'pool' (MaxPool-12)", "'kernel_shape'",
                                          repr(BAD_UTF8)])),
    "auto_pad-bad-utf8": (attribute_case({"auto_pad": b"SAME\xc3"}),
                          ("raised", ["node 'pool' (MaxPool-12)", "'auto_pad'"])),
    "auto_pad-lowercase": (attribute_case({"auto_pad": "same_upper"}),
                           ("raised", ["node 'pool' (MaxPool-12)", "auto_pad='same_upper'"])),
    "pads-beyond-int64": (attribute_case({"pads": ",".join([HUGE] * 4)}),
                          ("raised", ["node 'pool' (MaxPool-12)", HUGE])),
    "pads-int64-max": (attribute_case({"pads": ",".join([str(2**63 - 1)] * 4)}),
                       ("raised", ["node 'pool' (MaxPool-12)", str(2**63 - 1)])),
    "pads-1e9": (attribute_case({"pads": "1000000000,1000000000,1000000000,1000000000"}),
                 ("raised", ["node 'pool' (MaxPool-12)", "[1, 1, 2000000003, 2000000003]",
                            "ORTPOOL_MAX_OUTPUT_BYTES"])),
    "kernel-1e9": (attribute_case({"kernel_shape": "1000000000,1", "pads": "0,0,1000000000,0"}),
                   ("ok", {"shapes": [[1, 1, 5, 4]]})),  # 4 + 1e9 - 1e9 spans 5 windows
    "strides-zero": (attribute_case({"strides": "0,0"}),
                     ("raised", ["node 'pool' (MaxPool-12)", "strides='0,0'"])),
    "ceil_mode-2": (attribute_case({"ceil_mode": 2}),
                    ("raised", ["node 'pool' (MaxPool-12)", "ceil_mode=2"])),
    # ruling 19: no window in floor mode (an empty output), one in ceil mode.
    "kernel-larger-than-input": (attribute_case({"kernel_shape": "9,9"}),
                                 ("ok", {"shapes": [[1, 1, 0, 0]]})),
    "kernel-larger-than-input-ceil": (
        attribute_case({"kernel_shape": "9,9", "strides": "9,9", "ceil_mode": 1}),
        ("ok", {"shapes": [[1, 1, 1, 1]]})),
    "numpy-avg-huge-window": (
        kernel_case("kernels.average_pool(np.ones((1,1,1), np.float32), version=11, "
                    "kernel_shape=[100000], pads=[99999,99999], count_include_pad=1)"),
        ("ok", {"shapes": [[1, 1, 100000]]})),
    "numpy-max-kernel-1e9": (
        kernel_case("kernels.max_pool(np.ones((1,1,4), np.float32), kernel_shape=[10**9], "
                    "pads=[0,10**9])"),
        ("ok", {"shapes": [[1, 1, 5]]})),
    # ruling 19 with a 10**9-tap kernel over 1 + 3 + 5 positions: one window in ceil mode
    # (stride 2e9: the overhang is shorter than a stride), none in floor mode.
    "numpy-avg-kernel-1e9-ceil-one-window": (
        kernel_case("kernels.average_pool(np.ones((1,1,1,3), np.float32), version=19, "
                    "kernel_shape=[10**9,1], strides=[2*10**9,1], pads=[3,0,5,0], ceil_mode=1, "
                    "count_include_pad=1)"),
        ("ok", {"shapes": [[1, 1, 1, 3]]})),
    "numpy-max-kernel-1e9-floor-empty": (
        kernel_case("kernels.max_pool(np.ones((1,1,1,3), np.float32), kernel_shape=[10**9,1], "
                    "strides=[2*10**9,1], pads=[3,0,5,0], return_indices=True)"),
        ("ok", {"shapes": [[1, 1, 0, 3], [1, 1, 0, 3]]})),
    "numpy-max-pads-1e9": (
        kernel_case("kernels.max_pool(x, kernel_shape=[2,2], pads=[10**9]*4)"),
        ("raised", ["(MaxPool-22)", "[1, 1, 2000000003, 2000000003]"])),
    "numpy-max-pads-1e9-n0": (
        kernel_case("kernels.max_pool(np.ones((0,1,4,4), np.float32), kernel_shape=[2,2], "
                    "pads=[10**9]*4)"),
        ("raised", ["(MaxPool-22)", "[0, 1, 2000000003, 2000000003]"])),
    "branch-declared-ok": (branch_case({}, [1, 1, 3, 3]), ("ok", {"shapes": [[1, 1, 3, 3]]})),
    "branch-declared-wrong": (branch_case({}, [1, 1, 2, 2]), ("ok", {"shapes": [[1, 1, 3, 3]]})),
    "branch-via-identity-wrong": (branch_case({}, [1, 1, 2, 2], via="Identity"),
                                  ("ok", {"shapes": [[1, 1, 3, 3]]})),
    "branch-via-reshape-wrong": (branch_case({}, [1, 1, 2, 2], via="Reshape"),
                                 ("ok", {"shapes": [[1, 1, 3, 3]]})),
    "branch-op-fails": (branch_case({"pads": ",".join([str(2**63 - 1)] * 4)}, [1, 1, 3, 3]),
                        ("raised", ["node 'pool' (MaxPool-12)", str(2**63 - 1)])),
    "branch-rewritten-plain-wrong-declared": (
        branch_case({}, [1, 1, 2, 2], plain=True), ("ok", {"shapes": [[1, 1, 3, 3]]})),
    "branch-standard-rewritten-plain-op-fails": (
        standard_branch_rewritten_plain,
        ("ok", {"shapes": [[1, 1, 4]], "nan": [True],
                "recorded": ["(MaxUnpool-11): index 99 in I is outside the output of shape "
                             "[1, 1, 4] set by the attributes (valid: 0 to 3)"]})),
    "scan-later-iteration-fails": (scan_later_iteration_fails,
                                   ("raised", ["node 'unpool' (MaxUnpool-11)", "index 9 in I"])),
    "parallel-failing-runs": (parallel_failing_runs,
                              ("ok", {"raised": 50, "good": 50, "wrong": 0,
                                      "messages": ["node 'unpool' (MaxUnpool-11)"]})),
    # the new operators (LpPool, the global pools, MaxRoiPool) through the same paths
    "lppool-pads-1e9": (
        family_case("LpPool", 18, {"kernel_shape": [2, 2]},
                    {"pads": "1000000000,1000000000,1000000000,1000000000"},
                    lambda: {"X": _x(1, 1, 4, 4)}),
        ("raised", ["node 'pool' (LpPool-18)", "[1, 1, 2000000003, 2000000003]",
                    "ORTPOOL_MAX_OUTPUT_BYTES"])),
    "lppool-kernel-1e9": (
        family_case("LpPool", 18, {"kernel_shape": [2, 2]},
                    {"kernel_shape": "1000000000,1", "pads": "0,0,1000000000,0"},
                    lambda: {"X": _x(1, 1, 4, 4)}),
        ("ok", {"shapes": [[1, 1, 5, 4]]})),
    "lppool-pads-beyond-int64": (
        family_case("LpPool", 11, {"kernel_shape": [2, 2]}, {"pads": ",".join([HUGE] * 4)},
                    lambda: {"X": _x(1, 1, 4, 4)}),
        ("raised", ["node 'pool' (LpPool-11)", HUGE])),
    "lppool-p-bad-utf8": (
        family_case("LpPool", 1, {"kernel_shape": [2, 2]}, {"p": BAD_UTF8},
                    lambda: {"X": _x(1, 1, 4, 4)}),
        ("raised", ["node 'pool' (LpPool-1)", "'p'", repr(BAD_UTF8)])),
    "roipool-pooled-1e9": (
        family_case("MaxRoiPool", 22, {"pooled_shape": [2, 2]},
                    {"pooled_shape": "1000000000,1000000000"},
                    lambda: {"X": _x(1, 1, 4, 4), "rois": ROIS}),
        ("raised", ["node 'pool' (MaxRoiPool-22)", "[1, 1, 1000000000, 1000000000]",
                    "ORTPOOL_MAX_OUTPUT_BYTES"])),
    "roipool-pooled-beyond-int64": (
        family_case("MaxRoiPool", 1, {"pooled_shape": [2, 2]}, {"pooled_shape": f"{HUGE},1"},
                    lambda: {"X": _x(1, 1, 4, 4), "rois": ROIS}),
        ("raised", ["node 'pool' (MaxRoiPool-1)", "holds a value beyond int64"])),
    "roipool-scale-bad-utf8": (
        family_case("MaxRoiPool", 22, {"pooled_shape": [2, 2]}, {"spatial_scale": BAD_UTF8},
                    lambda: {"X": _x(1, 1, 4, 4), "rois": ROIS}),
        ("raised", ["node 'pool' (MaxRoiPool-22)", "'spatial_scale'"])),
    "roipool-scale-1e300": (
        family_case("MaxRoiPool", 22, {"pooled_shape": [2, 2]}, {"spatial_scale": "1e300"},
                    lambda: {"X": _x(1, 1, 4, 4),
                             "rois": np.array([[0, 0, 0, 1, 1]], np.float32)}),
        ("raised", ["node 'pool' (MaxRoiPool-22)", "spatial_scale=1e+300", "2**40"])),
    "global-branch-declared-wrong": (
        family_branch_case(lambda: _family_node("GlobalAveragePool", 22, {}, {}),
                           "GlobalAveragePool", [1, 1, 2, 2]),
        ("ok", {"shapes": [[1, 1, 1, 1]]})),
    "roipool-branch-op-fails": (
        family_branch_case(lambda: _family_node("MaxRoiPool", 22, {"pooled_shape": [2, 2]}, {},
                                                n_inputs=2),
                           "MaxRoiPool", [1, 1, 2, 2],
                           rois=np.array([[5, 0, 0, 3, 3]], np.float32)),
        ("raised", ["node 'pool' (MaxRoiPool-22)", "has batch index 5"])),
    "parallel-failing-roipool-runs": (
        functools.partial(parallel_failing_runs, "roipool"),
        ("ok", {"raised": 50, "good": 50, "wrong": 0,
                "messages": ["node 'unpool' (MaxRoiPool-22)"]})),
    "plain-failing-runs": (plain_failing_runs,
                           ("ok", {"shapes": [[1, 2, 4]], "nan": [True], "kept": 64})),
    "validate-branch-model": (validate_branch_model, ("validate", None)),
}


def child(name: str) -> None:
    case, _ = CASES[name]
    try:
        result = {"kind": "ok", **case()}
    except Exception as err:  # reported, then judged by the parent
        from ortpool import OrtpoolError

        result = {"kind": "raised", "type": type(err).__name__, "message": str(err),
                  "is_ortpool": isinstance(err, OrtpoolError)}
    print("RESULT " + json.dumps(result))


# ---------------------------------------------------------------- the tests (parent side)


def _launch(name: str) -> subprocess.CompletedProcess | str:
    try:  # a process of its own per case, forked from a server that imported ortpool once
        return _support().run_child(__name__, "child", name, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"hung: no answer in {TIMEOUT} s"


@functools.cache
def _results() -> dict[str, subprocess.CompletedProcess | str]:
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        return dict(zip(CASES, pool.map(_launch, CASES), strict=True))


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_case(name: str) -> None:
    done = _results()[name]
    assert not isinstance(done, str), done
    assert done.returncode == 0, f"child died ({done.returncode}): {done.stderr[-3000:]}"
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stdout + done.stderr
    result = json.loads(lines[-1][len("RESULT "):])
    kind, expected = CASES[name][1]
    if kind == "raised":
        assert result["kind"] == "raised", result
        assert result["is_ortpool"], result
        for part in expected:
            assert part in result["message"], (part, result["message"])
    elif kind == "validate":
        assert result["kind"] == "ok", result
        assert result["returncode"] == 1, result  # the difference is found, end to end
        assert ("end to end: output Y differs: shapes differ: the spec's [1,1,4,4] has 12 cells "
                "onnxruntime's [1,1,2,2] has not") in " ".join(result["stdout"].split()), result
    else:
        assert result["kind"] == "ok", result
        assert {k: result[k] for k in expected} == expected


if __name__ == "__main__":
    child(sys.argv[1])
