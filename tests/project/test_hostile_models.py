"""Hostile models given to ``ortpool validate`` and ``ortpool fix``: each group of cases runs one
command after another in one child process with a time limit (``tests.support.commands_in_child``),
per case the exit code and the whole message (no traceback); nothing is written where a command
refuses.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from ortpool import kernels
from ortpool.check.cases import proof_sets
from ortpool.model.site import Site
from tests.support import CHILD_ENV, IR_VERSION, commands_in_child, run_cli, unwrap

TIMEOUT = 120
ENV = {**CHILD_ENV, "ORTPOOL_KERNELS": "numpy"}  # no numba compile in the children


def _save(model: onnx.ModelProto, path: Path) -> str:
    model.ir_version = IR_VERSION
    path.write_bytes(model.SerializeToString())
    return str(path)


def _calling(functions: dict[str, list[onnx.NodeProto]]) -> onnx.ModelProto:
    """A model whose one node calls the local function ``F`` of domain ``local``."""
    imports = [h.make_opsetid("", 19), h.make_opsetid("local", 1)]
    graph = h.make_graph(
        [h.make_node("F", ["x"], ["y"], name="call", domain="local")], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 6, 6])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    return h.make_model(graph, opset_imports=imports, functions=[
        h.make_function("local", name, ["fx"], ["fy"], nodes, imports)
        for name, nodes in functions.items()
    ])


def _run(folder: Path, commands: dict[tuple[str, ...], tuple[int, str]]) -> None:
    found = commands_in_child([list(c) for c in commands], cwd=folder, timeout=TIMEOUT, env=ENV)
    for (argv, want), (code, stderr) in zip(commands.items(), found, strict=True):
        assert "Traceback" not in stderr, (argv, stderr)
        assert (argv, code, (stderr.splitlines() or [""])[-1]) == (argv, *want)


def test_local_functions_that_call_themselves_are_refused_in_one_line(tmp_path):
    """onnx refuses to inline a local function that calls itself, directly or through another:
    the model is refused, naming the cycle (it was an internal error with onnx's traceback)."""
    pool = h.make_node("MaxPool", ["fx"], ["t"], name="fp", kernel_shape=[1, 1])
    models = {
        "self.onnx": (_calling({"F": [pool, h.make_node("F", ["t"], ["fy"], domain="local")]}),
                      "local::F -> local::F"),
        "mutual.onnx": (_calling({"F": [h.make_node("G", ["fx"], ["fy"], domain="local")],
                                  "G": [h.make_node("F", ["fx"], ["fy"], domain="local")]}),
                        "local::G -> local::F -> local::G"),
    }
    commands = {}
    for name, (model, cycle) in models.items():
        _save(model, tmp_path / name)
        why = (f"the model's local functions cannot be inlined: Cycle detected in model-local "
               f"function references: {cycle}. Model-local functions must not be recursive.")
        commands[("validate", name, "--no-progress")] = (2, f"ortpool validate: error: {name}: "
                                                            f"{why}")
        commands[("fix", name, "o.onnx")] = (2, f"ortpool fix: error: {why}")
    _run(tmp_path, commands)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(models)


def test_a_pool_in_a_local_function_is_fixed_in_the_function(tmp_path):
    """fix read a function body's outputs as a subgraph's declared shapes (a FunctionProto's are
    names): AttributeError, even for a node it leaves unchanged."""
    attrs = {"kernel_shape": [3, 3], "dilations": [2, 2], "auto_pad": "SAME_UPPER"}
    model = _calling({"F": [h.make_node("MaxPool", ["fx"], ["fy"], name="fp", **attrs)]})
    _save(model, tmp_path / "defect.onnx")
    model.functions[0].node[0].ClearField("attribute")
    model.functions[0].node[0].attribute.append(h.make_attribute("kernel_shape", [2, 2]))
    _save(model, tmp_path / "plain.onnx")
    _run(tmp_path, {
        ("fix", "defect.onnx", "fixed.onnx", "-q"): (0, ""),
        ("fix", "plain.onnx", "same.onnx", "-q"): (0, ""),
        ("validate", "fixed.onnx", "--no-progress", "--no-guard-cost"): (0, ""),
    })
    fixed = onnx.load(tmp_path / "fixed.onnx")
    (node,) = fixed.functions[0].node
    assert {a.name: h.get_attribute_value(a) for a in node.attribute} == {
        "kernel_shape": [3, 3], "dilations": [2, 2], "pads": [2, 2, 2, 2]}


def test_an_opset_imported_twice_governs_at_its_highest_version(tmp_path):
    """onnx.proto: nodes bind to the HIGHEST version of the operator sets imported. ortpool took
    the first import: with ai.onnx 11 then 19, an AveragePool with dilations (19's) was judged as
    AveragePool-11 ("not compared", both refuse it) and fix refused the model."""
    graph = h.make_graph(
        [h.make_node("AveragePool", ["x"], ["y"], name="p", kernel_shape=[2, 2],
                     dilations=[2, 2])], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 6, 6])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    imports = [h.make_opsetid("", 11), h.make_opsetid("ai.onnx", 19)]
    _save(h.make_model(graph, opset_imports=imports), tmp_path / "m.onnx")
    validated = run_cli("validate", "m.onnx", "--no-progress", "--no-guard-cost", cwd=tmp_path,
                        env=ENV, timeout=TIMEOUT)
    assert (validated.returncode, validated.stderr) == (0, "")
    assert validated.stdout.splitlines()[0].split() == [
        "agree", "m.onnx", "opset", "19,", "1", "node:", "1", "agree;", "its", "output", "agrees"]
    _run(tmp_path, {("fix", "m.onnx", "o.onnx", "-q"): (0, "")})
    assert [(e.domain, e.version) for e in onnx.load(tmp_path / "o.onnx").opset_import] == [
        ("", 11), ("ai.onnx", 19)]


def test_a_negative_spatial_scale_is_judged_on_the_same_boxes(tmp_path):
    """MaxRoiPool's spatial_scale < 0 (the spec sets no sign; onnxruntime refuses it): the built
    RoIs divided the map by the scale and drew from an empty range (ValueError: low >= high,
    a traceback from fix). They are now the positive scale's boxes, corners negated."""
    rois = numpy_helper.from_array(np.array([[0, -1, -1, -4, -4]], np.float32), "rois")
    graph = h.make_graph(
        [h.make_node("MaxRoiPool", ["x", "rois"], ["y"], name="r", pooled_shape=[2, 2],
                     spatial_scale=-1.0)], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 8, 8])],
        [h.make_tensor_value_info("y", T.FLOAT, None)], initializer=[rois],
    )
    _save(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)]), tmp_path / "m.onnx")
    _run(tmp_path, {
        ("validate", "m.onnx", "--no-progress", "--no-guard-cost"): (1, ""),
        ("fix", "m.onnx", "o.onnx", "-q"): (1, ""),  # kept as ortpool's op
    })
    x = np.arange(2 * 3 * 8 * 8, dtype=np.float32).reshape(2, 3, 8, 8)
    for scale in (1.0, 0.5):
        mirrored = [proof_sets(Site.alone("MaxRoiPool", 1, {"pooled_shape": [2, 2],
                                                            "spatial_scale": s}, "float",
                                          list(x.shape), 2, 1), [x.shape])[0].arrays[1]
                    for s in (scale, -scale)]
        np.testing.assert_array_equal(mirrored[1], -mirrored[0] * [-1, 1, 1, 1, 1])
        np.testing.assert_array_equal(
            kernels.max_roi_pool(x, mirrored[0], pooled_shape=[2, 2], spatial_scale=scale),
            kernels.max_roi_pool(x, mirrored[1], pooled_shape=[2, 2], spatial_scale=-scale))


def test_an_input_of_an_element_type_onnx_does_not_define_is_named(tmp_path):
    """elem_type 999: the message asked onnx for the type's name (ValueError: Enum DataType has
    no name defined for value 999: a traceback from fix, a message naming nothing from
    validate). Nor does it advise an array ortpool would refuse (a float8 one: "must be an
    array of numbers")."""
    graph = h.make_graph(
        [h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2])], "g",
        [h.make_tensor_value_info("x", 999, [1, 1, 6, 6])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    _save(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)]), tmp_path / "m.onnx")
    why = ("input 'x' is not a tensor of a type ortpool generates or feeds (element type 999, "
           "which onnx does not define; it takes float, double, float16, bfloat16, int8, uint8, "
           "int16, uint16, int32, uint32, int64, uint64, bool)")
    _run(tmp_path, {
        ("validate", "m.onnx", "--no-progress"): (2, f"ortpool validate: error: m.onnx: {why}"),
        ("fix", "m.onnx", "o.onnx"): (2, f"ortpool fix: error: {why}"),
    })
    assert [p.name for p in tmp_path.iterdir()] == ["m.onnx"]


def test_a_pool_reading_a_tensor_name_that_is_not_utf8_is_refused_by_fix(tmp_path):
    """protobuf hands such a name over as bytes, which fix wrote back into its copy of the node:
    UnicodeDecodeError (a traceback). The node is refused, naming the tensor; validate says the
    model cannot run."""
    for name, place in (("in.onnx", "input 'X'"), ("out.onnx", "output 'Y'")):
        graph = h.make_graph(
            [h.make_node("MaxPool", ["xQQ"], ["yQQ"], name="p", kernel_shape=[2, 2])], "g",
            [h.make_tensor_value_info("xQQ", T.FLOAT, [1, 1, 6, 6])],
            [h.make_tensor_value_info("yQQ", T.FLOAT, None)],
        )
        raw = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)])
        raw.ir_version = IR_VERSION
        spot = b"xQQ" if place.startswith("input") else b"yQQ"
        data = raw.SerializeToString().replace(spot, spot[:1] + b"\xff\xfe")
        (tmp_path / name).write_bytes(data)
        tensor = spot[:1] + b"\xff\xfe"
        _run(tmp_path, {("fix", name, "o.onnx"): (
            2, f"ortpool fix: error: node 'p' (MaxPool-12): {place} names the tensor {tensor!r}, "
               "which is not UTF-8 text: onnxruntime cannot load the model, nor can ortpool "
               "write it")})
        done = commands_in_child([["validate", name, "--no-progress"]], cwd=tmp_path,
                                 timeout=TIMEOUT, env=ENV)
        assert done[0][0] == 2 and "Traceback" not in done[0][1], done
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.onnx", "out.onnx"]


def test_maxunpool_with_an_output_shape_no_array_holds_is_unproven(tmp_path):
    """MaxUnpool's output_shape [1, 1, 2**40, 2**40] (an initializer): the built cases drew a
    permutation of 2**80 indices (ValueError: Maximum allowed size exceeded, a traceback from
    fix). Now the kernels refuse the output, naming its size, and nothing is written."""
    inits = [numpy_helper.from_array(np.ones((1, 1, 2, 2), np.float32), "X"),
             numpy_helper.from_array(np.zeros((1, 1, 2, 2), np.int64), "I"),
             numpy_helper.from_array(np.array([1, 1, 2**40, 2**40], np.int64), "S")]
    graph = h.make_graph(
        [h.make_node("MaxUnpool", ["X", "I", "S"], ["y"], name="u", kernel_shape=[2, 2],
                     strides=[2, 2])], "g", [], [h.make_tensor_value_info("y", T.FLOAT, None)],
        initializer=inits)
    _save(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)]), tmp_path / "m.onnx")
    _run(tmp_path, {("fix", "m.onnx", "o.onnx"): (
        2, "note: nothing written: some nodes are unproven (--allow-unproven)")})
    done = commands_in_child([["fix", "m.onnx", "o.onnx"]], cwd=tmp_path, timeout=TIMEOUT,
                             env=ENV)
    assert "the output Y of shape [1, 1, 1099511627776, 1099511627776] (float32) would take " \
        "4835703278458516698824704 bytes" in " ".join(done[0][1].split())
    assert [p.name for p in tmp_path.iterdir()] == ["m.onnx"]


def test_an_opset_beyond_any_onnx_can_number_is_refused(tmp_path):
    """ai.onnx opset 2**62: fix asked onnx for a schema at that opset (TypeError from onnx's
    binding, a traceback); validate judged MaxPool-22 and called onnxruntime's refusal (it reads
    the opset as 0) a difference. The node is refused, naming the opset."""
    graph = h.make_graph(
        [h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2])], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 6, 6])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    _save(h.make_model(graph, opset_imports=[h.make_opsetid("", 2**62)]), tmp_path / "m.onnx")
    why = ("node 'p' (MaxPool): ai.onnx opset 4611686018427387904 is beyond any opset onnx can "
           "number (at most 2147483647)")
    _run(tmp_path, {("fix", "m.onnx", "o.onnx"): (2, f"ortpool fix: error: {why}")})
    ((code, stderr),) = commands_in_child([["validate", "m.onnx", "--no-progress"]],
                                          cwd=tmp_path, timeout=TIMEOUT, env=ENV)
    assert code == 2 and stderr.endswith(f"ortpool could not rewrite the model: {why}\n"), stderr
    assert [p.name for p in tmp_path.iterdir()] == ["m.onnx"]


def test_rois_of_the_models_own_that_the_spec_refuses_are_not_replaced_by_built_ones(tmp_path):
    """A MaxRoiPool whose RoIs (an initializer) hold a NaN: onnxruntime runs it, the spec
    (ortpool's kernels) refuses it. The model's own set was left out and the built RoIs judged
    in its place: validate said agree (exit 0), fix proved the node unchanged and wrote it."""
    rois = numpy_helper.from_array(np.array([[0, np.nan, 0, 4, 4]], np.float32), "rois")
    graph = h.make_graph(
        [h.make_node("MaxRoiPool", ["x", "rois"], ["y"], name="r", pooled_shape=[2, 2])], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 8, 8])],
        [h.make_tensor_value_info("y", T.FLOAT, None)], initializer=[rois],
    )
    _save(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)]), tmp_path / "m.onnx")
    refused = "X [1, 1, 8, 8]: rois[0] = [0, nan, 0, 4, 4] has a non-finite value at column 1"
    done = run_cli("validate", "m.onnx", "--no-progress", "--no-guard-cost", cwd=tmp_path,
                   env=ENV, timeout=TIMEOUT)
    assert (done.returncode, done.stderr) == (1, "")
    assert done.stdout.splitlines()[:4] == [
        "DIFFERS  m.onnx  opset 19, 1 node: 1 ORTPOOL REJECTS; outputs not compared",
        "  r  MaxRoiPool-1  bins=2x2  ORTPOOL REJECTS",
        "      cause: unrecognised: no known cause matches this node",
        f"      note: ortpool: {refused}"]
    done = run_cli("fix", "m.onnx", "o.onnx", cwd=tmp_path, env=ENV, timeout=TIMEOUT)
    assert (done.returncode, done.stdout) == (2, "")
    assert unwrap(done.stderr).splitlines()[1:] == [
        "  node 'r' (MaxRoiPool-1, float): unproven: no input it could be proven on: ortpool's "
        f"kernels refuse: the model's own {refused}",
        "note: nothing written: some nodes are unproven (--allow-unproven)"]
    assert [p.name for p in tmp_path.iterdir()] == ["m.onnx"]


def test_a_local_function_named_like_a_standard_operator_is_refused_by_validate(tmp_path):
    """A function 'MaxPool' of domain '' (a Relu) beside a node MaxPool: onnxruntime runs the
    operator, onnx's inliner the function. validate captured the node inputs from the inlined
    model, so it judged a Relu as 'onnxruntime's built-in run': no pooling node, and the
    outputs' difference blamed on no node (exit 1). It refuses the model, naming the function;
    fix, whose proofs run the model itself, fixes the operator as onnxruntime runs it."""
    relu = h.make_function("", "MaxPool", ["fx"], ["fy"], [h.make_node("Relu", ["fx"], ["fy"])],
                           [h.make_opsetid("", 19)])
    graph = h.make_graph(
        [h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[3, 3], dilations=[2, 2],
                     auto_pad="SAME_UPPER")], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 8, 8])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    _save(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], functions=[relu]),
          tmp_path / "m.onnx")
    why = ("the model's local function 'MaxPool' is named like the standard operator MaxPool of "
           "ai.onnx: onnx's inliner runs the function for its nodes, onnxruntime the operator; "
           "rename the function or give it a domain of its own")
    _run(tmp_path, {
        ("validate", "m.onnx", "--no-progress"): (2, f"ortpool validate: error: m.onnx: {why}"),
        ("fix", "m.onnx", "o.onnx", "-q"): (0, ""),
    })
    (node,) = onnx.load(tmp_path / "o.onnx").graph.node
    assert {a.name: h.get_attribute_value(a) for a in node.attribute}["pads"] == [2, 2, 2, 2]


def test_a_branch_declaring_a_huge_size_for_a_pools_input_is_refused_naming_it(tmp_path):
    """An If branch declares its pool's input [64, 64, 4096, 4096] (the model feeds 6x6): the
    built cases were drawn at that size (numpy's MemoryError: a traceback from fix, a message
    naming no node from validate). Now the node is refused, naming the size and the limit."""
    then = h.make_graph(
        [h.make_node("Identity", ["x"], ["t"]),
         h.make_node("MaxPool", ["t"], ["b"], name="bp", kernel_shape=[2, 2])], "then", [],
        [h.make_tensor_value_info("b", T.FLOAT, None)],
        value_info=[h.make_tensor_value_info("t", T.FLOAT, [64, 64, 4096, 4096])])
    other = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [],
                         [h.make_tensor_value_info("e", T.FLOAT, None)])
    graph = h.make_graph(
        [h.make_node("If", ["c"], ["z"], name="branch", then_branch=then, else_branch=other)],
        "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 6, 6]),
              h.make_tensor_value_info("c", T.BOOL, [])],
        [h.make_tensor_value_info("z", T.FLOAT, None)])
    _save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), tmp_path / "m.onnx")
    why = ("node 'bp' (MaxPool-12): X of the built cases of shape [64, 64, 4096, 4096] (float32) "
           "would take 274877906944 bytes (counting at least one plane); the limit is 4294967296 "
           "bytes (ORTPOOL_MAX_OUTPUT_BYTES)")
    env = {k: v for k, v in ENV.items() if k != "ORTPOOL_MAX_OUTPUT_BYTES"}
    found = commands_in_child(
        [["validate", "m.onnx", "--no-progress"], ["fix", "m.onnx", "o.onnx"]], cwd=tmp_path,
        timeout=TIMEOUT, env=env)
    assert found == [(2, f"ortpool validate: error: m.onnx: {why}\n"),
                     (2, f"ortpool fix: error: {why}\n")]
    assert [p.name for p in tmp_path.iterdir()] == ["m.onnx"]


def test_a_limit_of_ortpools_own_is_no_refusal_of_the_spec(tmp_path):
    """ORTPOOL_MAX_READS=1: validate judged the node "ORTPOOL REJECTS", cause unrecognised (exit
    1: a difference), where ORTPOOL_MAX_OUTPUT_BYTES=10 made the model "could not run" (exit 2):
    a limit of ortpool's own leaves no answer of the spec to judge the runtime by, either way."""
    graph = h.make_graph([h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2])],
                         "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 6, 6])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)])
    _save(h.make_model(graph, opset_imports=[h.make_opsetid("", 12)]), tmp_path / "m.onnx")
    reads = ("node 'p' (MaxPool-12): the windows would read 110 input elements (counting at least "
             "one plane; kernel_shape [2, 2], output [1, 1, 5, 5]); the limit is 1 "
             "(ORTPOOL_MAX_READS)")
    size = ("node 'p' (MaxPool-12): X of the built cases of shape [1, 1, 6, 6] (float32) would "
            "take 144 bytes (counting at least one plane); the limit is 10 bytes "
            "(ORTPOOL_MAX_OUTPUT_BYTES)")
    for env, why in (("ORTPOOL_MAX_READS", reads), ("ORTPOOL_MAX_OUTPUT_BYTES", size)):
        found = commands_in_child([["validate", "m.onnx", "--no-progress"]], cwd=tmp_path,
                                  timeout=TIMEOUT,
                                  env={**ENV, env: "1" if env.endswith("READS") else "10"})
        assert found == [(2, f"ortpool validate: error: m.onnx: {why}\n")]
    assert [p.name for p in tmp_path.iterdir()] == ["m.onnx"]


def test_an_attribute_of_a_version_that_has_none_is_named_so(tmp_path):
    """GlobalMaxPool-1 with a kernel_shape: the message ended "(it has )"."""
    graph = h.make_graph(
        [h.make_node("GlobalMaxPool", ["x"], ["y"], name="g", kernel_shape=[2, 2])], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 6, 6])],
        [h.make_tensor_value_info("y", T.FLOAT, None)])
    _save(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)]), tmp_path / "m.onnx")
    _run(tmp_path, {("fix", "m.onnx", "o.onnx"): (
        2, "ortpool fix: error: node 'g' (GlobalMaxPool-1): attribute 'kernel_shape' does not "
           "exist in this version (it has no attributes)")})


def test_a_model_neither_run_runs_could_not_run_unless_it_has_no_pooling_node(tmp_path):
    """A model whose one pooling node is an ortpool op neither onnxruntime nor the rewritten
    model runs (kernel_shape 0,0; an op type that is not UTF-8) was "not compared", exit 0:
    nothing of it was judged. It could not run, exit 2 (docs/validate.md's statuses). A model
    with no pooling node at all has nothing to judge: "not compared", exit 0, as before."""
    import ortpool

    graph = h.make_graph(
        [h.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2])], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 6, 6])],
        [h.make_tensor_value_info("y", T.FLOAT, None)])
    ours = ortpool.rewrite(h.make_model(graph, opset_imports=[h.make_opsetid("", 12)]))
    (kernel,) = (a for a in ours.graph.node[0].attribute if a.name == "kernel_shape")
    kernel.s = b"2,2"
    (tmp_path / "bad-type.onnx").write_bytes(
        ours.SerializeToString().replace(b"MaxPool_12", b"MaxPo\xffl_12"))
    kernel.s = b"0,0"
    _save(ours, tmp_path / "bad-kernel.onnx")
    graph.node[0].CopyFrom(h.make_node("Foo", ["x"], ["y"], name="f", domain="acme"))
    _save(h.make_model(graph, opset_imports=[h.make_opsetid("", 12), h.make_opsetid("acme", 1)]),
          tmp_path / "no-pool.onnx")
    why = {
        "bad-kernel.onnx": "node 'pool' (MaxPool-12): kernel_shape='0,0' must all be >= 1",
        "bad-type.onnx": "node 'pool': b'MaxPo\\xffl_12' is not an ortpool op type; expected "
                         "<Op>_<version>[_Indices|_OutputShape] with a spec version of MaxPool, "
                         "AveragePool, MaxUnpool, LpPool, GlobalMaxPool, GlobalAveragePool, "
                         "GlobalLpPool, MaxRoiPool (e.g. MaxPool_12)",
    }
    for name, reason in why.items():
        error = f"{name}: the model cannot run on x [1,1,6,6]: {reason}"
        found = run_cli("validate", name, "--no-progress", "--no-guard-cost", cwd=tmp_path,
                        env=ENV, timeout=TIMEOUT)
        assert (found.returncode, found.stderr) == (2, f"ortpool validate: error: {error}\n")
        assert " ".join(found.stdout.split("\n\n")[0].split()) == f"COULD NOT RUN {error}"
    found = run_cli("validate", "no-pool.onnx", "--no-progress", cwd=tmp_path, env=ENV,
                    timeout=TIMEOUT)
    assert (found.returncode, found.stderr) == (0, "")
    assert found.stdout.splitlines()[0].split() == [
        "not", "compared", "no-pool.onnx", "opset", "12,", "0", "nodes;", "outputs", "not",
        "compared"]
    # (protobuf's pure-Python parser, which a test process may use, refuses bad-type.onnx)
    report = ortpool.validate([tmp_path / "bad-kernel.onnx", tmp_path / "no-pool.onnx"],
                              guard_cost=False, timeout=TIMEOUT)
    assert [(m.status, m.error) for m in report.models] == [
        ("could-not-run", f"the model cannot run on x [1,1,6,6]: {why['bad-kernel.onnx']}"),
        ("not-compared", "")]
    assert report.exit_code == 2
