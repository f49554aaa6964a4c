"""A model's inputs for validate, fix and bench (ortpool.model.inputs, ortpool.options.inputs):
open dims (symbols, -1) named with the size chosen, --shape and --inputs checked against the model
and each other, data inputs (rois, MaxUnpool indices) never generated, the sizes error; on the
exported-like models of tests/support/models (scripts/make_input_models.py). Hostile command lines
each in a child process with a time limit (run side by side)."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import io
import json
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from ortpool import kernels
from ortpool.errors import OrtpoolError
from ortpool.fix import fix_with_report
from ortpool.model.inputs import (
    DEFAULT_BATCH,
    DEFAULT_SIZE,
    InputSpec,
    data_inputs,
    describe_dims,
    parse_shape,
    parse_shapes,
    resolve,
)
from tests.support import CHILD_ENV, IR_VERSION, cnn_builders, run_cli

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "support" / "models"


def load(name: str) -> onnx.ModelProto:
    return onnx.load(MODELS / f"{name}.onnx")


def two_inputs(a_dims, b_dims, extra_nodes=(), b_elem=T.FLOAT) -> onnx.ModelProto:
    """a, b -> Add (or ``extra_nodes``) -> y; the inputs declared as given."""
    nodes = list(extra_nodes) or [h.make_node("Identity", ["a"], ["y"])]
    graph = h.make_graph(
        nodes, "g",
        [h.make_tensor_value_info("a", T.FLOAT, a_dims),
         h.make_tensor_value_info("b", b_elem, b_dims)],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = IR_VERSION
    return model


# --- parsing ----------------------------------------------------------------------------------


def test_parse_shape_examples():
    assert parse_shape("image:1,3,48,192") == ("image", (1, 3, 48, 192))
    assert parse_shape(" input:0:1,3,8,8 ") == ("input:0", (1, 3, 8, 8))  # TF-style names
    assert parse_shape("x:0,3,4,4") == ("x", (0, 3, 4, 4))  # an empty batch is a size
    assert parse_shape("x:[2,3,4]") == ("x", (2, 3, 4))  # as Polygraphy spells it
    assert parse_shapes(["x:1,2", "x:1,2", "y:3"]) == {"x": (1, 2), "y": (3,)}


@pytest.mark.parametrize(
    "text", ["x", "x:", "x:1,,2", "x:-1,3", "x:a,b", ":1,2", "x:1.5", "x1,3", "x:[1,2", "x:[]"]
)
def test_parse_shape_refuses_with_the_form(text):
    with pytest.raises(OrtpoolError, match=r"must be NAME:D1,D2,\.\.\. with integer sizes >= 0"):
        parse_shape(text)


def test_a_size_of_more_digits_than_int_reads_is_refused_as_too_large():
    """int() reads 4300 digits at most (a ValueError, a traceback on the command line); a size
    of 20 digits is already more than any array holds; the message quotes the option cut."""
    for digits in (20, 5000):
        with pytest.raises(OrtpoolError, match=r"^--shape 'x:1,9{2,}(\.\.\.)?': a size of more "
                           r"than 19 digits, more than any array can hold") as err:
            parse_shape("x:1," + "9" * digits)
        assert len(str(err.value)) < 200
    assert parse_shape("x:" + "0" * 30 + "8") == ("x", (8,))  # leading zeros count nothing


def test_one_input_two_shapes_is_refused():
    with pytest.raises(OrtpoolError, match=r"two shapes: \[1,3\] and \[1,4\]"):
        parse_shapes(["x:1,3", "x:1,4"])


# --- resolution -------------------------------------------------------------------------------


def test_open_dims_take_the_defaults_and_are_named():
    resolved = resolve(load("resnet-d"))
    assert resolved.shapes == {"image": [DEFAULT_BATCH, 3, DEFAULT_SIZE, DEFAULT_SIZE]}
    assert [(d.declared, d.size, d.source) for d in resolved.dims] == [
        ("batch", 1, "default"), ("height", 64, "default"), ("width", 64, "default")
    ]
    assert resolved.dims_text() == (
        "image[0] batch=1 (default), image[2] height=64 (default), image[3] width=64 (default)"
    )
    assert resolved.shape_hint() == "--shape image:1,3,64,64"  # the sizes chosen, pasteable
    x = resolved.feeds["image"]
    assert x.dtype == np.float32 and np.array_equal(x * 4, np.round(x * 4))  # quarter steps
    assert resolved.source == "generated, seed 0"


def test_a_minus_one_dim_is_open_and_shape_sets_it():
    model = load("ocr-neg-batch")
    assert resolve(model).dims_text() == "x[0]=1 (declared -1; default)"
    resolved = resolve(model, InputSpec.make(["x:2,3,48,192"]))
    assert resolved.shapes == {"x": [2, 3, 48, 192]}
    assert resolved.dims_text() == "x[0]=2 (declared -1; --shape)"
    with pytest.raises(OrtpoolError, match=r"size 190 on axis 3; the model fixes it at 192"):
        resolve(model, InputSpec.make({"x": (1, 3, 48, 190)}))


def test_a_zero_dim_is_static_and_empty():
    resolved = resolve(two_inputs([0, 3], ["n", 3]))
    assert resolved.shapes == {"a": [0, 3], "b": [1, 3]}
    with pytest.raises(OrtpoolError, match="size 1 on axis 0; the model fixes it at 0"):
        resolve(two_inputs([0, 3], [2]), InputSpec.make(["a:1,3"]))


def test_a_symbol_takes_its_first_given_size_where_nothing_else_sizes_it():
    model = two_inputs(["n", 3], ["n", "k"])
    resolved = resolve(model, InputSpec.make(["b:5,7"]))
    assert resolved.shapes == {"a": [5, 3], "b": [5, 7]}
    assert resolved.dims[0].text() == "a[0] n=5 (--shape on b)"
    assert describe_dims(resolved.dims, "") == [
        "open dims: a[0] n=5 (--shape on b), b[0] n=5 (--shape), b[1] k=7 (--shape)"
    ]
    arrays = {"a": np.zeros((4, 3), np.float32)}
    assert resolve(model, InputSpec.make(None, arrays)).shapes["b"] == [4, DEFAULT_SIZE]


def test_a_symbol_given_different_sizes_keeps_each_as_onnxruntime_does():
    # onnxruntime checks a fed array against the static dims only: one symbol on two axes (a
    # converter's "?" for unknown) runs at two sizes, and so it resolves, with a note
    model = two_inputs(["n", 3], ["n", "k"])
    resolved = resolve(model, InputSpec.make(["a:2,3", "b:5,7"]))
    assert resolved.shapes == {"a": [2, 3], "b": [5, 7]}
    assert describe_dims(resolved.dims, "")[1:] == [
        "dim 'n' is 2 on a[0] and 5 on b[0] (--shape): onnxruntime sizes each axis on its own, "
        "so each keeps its size"
    ]
    ocr = two_inputs(["N", 3, "?", "?"], [1])
    arrays = {"a": np.zeros((1, 3, 48, 192), np.float32)}
    found = resolve(ocr, InputSpec(arrays=arrays, origin="real.npz"))
    assert found.shapes["a"] == [1, 3, 48, 192]
    assert describe_dims(found.dims, "")[1:] == [
        "dim '?' is 48 on a[2] and 192 on a[3] (--inputs): onnxruntime sizes each axis on its "
        "own, so each keeps its size"
    ]
    # unnamed open dims were never one size; nothing to say about them
    unnamed = resolve(two_inputs([None, 3, None, None], [1]), InputSpec.make(["a:1,3,4,5"]))
    assert [d.symbol for d in unnamed.dims] == [False] * 3
    assert len(describe_dims(unnamed.dims, "")) == 1
    # nothing given: the default, one size per symbol
    assert resolve(ocr).shapes["a"] == [DEFAULT_BATCH, 3, DEFAULT_SIZE, DEFAULT_SIZE]


def test_shape_and_inputs_are_checked_against_each_other_and_the_model():
    model = two_inputs(["n", 3], ["n", 3])
    arrays = {"a": np.ones((2, 3), np.float32)}
    with pytest.raises(OrtpoolError, match=r"--shape a:4,3 and the --inputs array of shape \[2,3"):
        resolve(model, InputSpec.make(["a:4,3"], arrays))
    with pytest.raises(OrtpoolError, match=r"--inputs array 'a' is float64; .* float \(float32\)"):
        resolve(model, InputSpec.make(None, {"a": np.ones((2, 3))}))
    with pytest.raises(OrtpoolError, match=r"gives input 'a' 3 dims \[2,3,1\]; .* rank 2"):
        resolve(model, InputSpec.make(None, {"a": np.ones((2, 3, 1), np.float32)}))
    with pytest.raises(OrtpoolError, match="names input 'c', but the model's inputs are a, b"):
        resolve(model, InputSpec.make(None, {"c": np.ones(1)}))
    mixed = resolve(model, InputSpec(arrays=arrays, origin="in.npz"), seed=3)
    assert mixed.feeds["a"] is arrays["a"] and mixed.shapes["b"] == [2, 3]
    assert mixed.source == "a loaded from in.npz; b generated, seed 3"


def test_big_endian_arrays_are_taken_in_this_machines_order(tmp_path):
    """A big-endian array (numpy.savez on such a machine, or ``astype('>f4')``) was refused by
    fix and bench as "'a' is >f4; the model's input 'a' is float (float32)", while validate took
    it (its worker's pickle swaps the bytes); onnxruntime would read the bytes swapped."""
    model = two_inputs(["n", 3], ["n", 3])
    values = np.arange(6, dtype=np.float32).reshape(2, 3) / 8
    np.savez(tmp_path / "big.npz", a=values.astype(">f4"), b=values.astype(">f4"))
    for spec in (InputSpec.make(None, tmp_path / "big.npz"),
                 InputSpec.make(None, {"a": values.astype(">f4"), "b": values.astype(">f4")})):
        feeds = resolve(model, spec).feeds
        for array in feeds.values():
            assert array.dtype.str == np.dtype(np.float32).str
            np.testing.assert_array_equal(array, values)


def test_huge_shapes_and_unreadable_files_are_refused_before_any_allocation(tmp_path):
    model = load("resnet-d")
    with pytest.raises(OrtpoolError, match=r"\[1,3,100000,100000\] \(float\) would be "
                       r"120000000000 bytes of generated values; ortpool generates at most"):
        resolve(model, InputSpec.make(["image:1,3,100000,100000"]))
    np.save(tmp_path / "one.npy", np.zeros(3))
    np.savez(tmp_path / "objects.npz", image=np.array([{"a": 1}], dtype=object))
    for name, why in (("one.npy", "cannot read as .npz .*holds one array"),
                     ("objects.npz", "holds Python objects .*allow_pickle=False")):
        with pytest.raises(OrtpoolError, match=why):
            InputSpec.make(None, tmp_path / name)


def test_an_array_or_shape_python_cannot_read_is_refused_naming_the_input():
    """A tensor-like object whose ``__array__`` raises (a tensor on a device) was let through
    as the caller's RuntimeError, naming nothing; now one TypeError names the input."""

    class OnDevice:
        def __array__(self, *args, **kwargs):
            raise RuntimeError("can't convert cuda:0 device type tensor to numpy")

    with pytest.raises(TypeError, match=r"^inputs\['x'\]: OnDevice did not convert to a numpy "
                       r"array: RuntimeError: can't convert cuda:0") as err:
        InputSpec.make(None, {"x": OnDevice()}, style="python")
    assert err.value.__cause__ is None
    # a masked array: its masked cells' hidden values were fed as data; without a mask it is
    # its data
    values = np.arange(4, dtype=np.float32)
    with pytest.raises(TypeError, match=r"^inputs\['x'\] is a masked array with 2 masked cells, "
                       r"whose values are no data; give array.filled\(value\)"):
        InputSpec.make(None, {"x": np.ma.masked_greater(values, 1)}, style="python")
    unmasked = InputSpec.make(None, {"x": np.ma.masked_greater(values, 5)}, style="python")
    assert type(unmasked.arrays["x"]) is np.ndarray
    np.testing.assert_array_equal(unmasked.arrays["x"], values)
    # a 0-d array as a shape: numpy's "iteration over a 0-d array", naming nothing, before
    with pytest.raises(OrtpoolError, match=r"^shapes: the shape of 'x' must be a sequence of "
                       r"integers >= 0, not array\(4\)"):
        InputSpec.make({"x": np.array(4)}, style="python")
    # a set or a mapping: its sizes in hash order, or its keys, were taken as the axes
    for dims in ({16, 1, 4, 8}, {0: 1, 1: 3}):
        with pytest.raises(OrtpoolError, match=r"^shapes: the shape of 'x' must be a sequence"):
            InputSpec.make({"x": dims}, style="python")
    assert InputSpec.make({"x": (d for d in (1, 3))}, style="python").shapes == {"x": (1, 3)}


def test_an_input_without_a_declared_rank_needs_a_shape():
    model = two_inputs(["n", 3], None)
    with pytest.raises(OrtpoolError, match="'b' has no declared shape: give it with --shape b:"):
        resolve(model)
    assert resolve(model, InputSpec.make(["b:2,2,2"])).shapes["b"] == [2, 2, 2]


def test_data_inputs_are_the_ones_a_pool_reads_as_data():
    assert data_inputs(load("roi-head")) == {
        "rois": "MaxRoiPool '/maxroipool_5' input rois (batch index and box corners)"
    }
    assert set(data_inputs(load("segnet-unpool"))) == {"indices", "output_shape"}
    assert data_inputs(load("resnet-d")) == {}
    # Computed from the image (Conv, ReduceMean): the model's own values; an int count that
    # decides which of them reach the rois (TopK's k) is the user's.
    nodes = [
        h.make_node("ReduceMean", ["a"], ["m"], axes=[1], keepdims=0),
        h.make_node("TopK", ["m", "b"], ["top", "idx"]),
        h.make_node("Concat", ["top", "top", "top", "top", "top"], ["r"], axis=1),
        h.make_node("MaxRoiPool", ["a4", "r"], ["y"], pooled_shape=[1, 1]),
        h.make_node("Unsqueeze", ["a", "axes"], ["a4"]),
    ]
    model = two_inputs([2, 3], [1], nodes, b_elem=T.INT64)
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.array([0], np.int64), "axes"))
    assert set(data_inputs(model)) == {"b"}


def test_data_inputs_need_the_users_arrays():
    with pytest.raises(OrtpoolError) as err:
        resolve(load("segnet-unpool"), InputSpec.make(None, {"x": np.zeros((1, 4, 2, 2), "f")}))
    assert str(err.value).startswith("inputs 'indices' (reaches MaxUnpool '/maxunpool_0' input I")
    assert "need --inputs" in str(err.value)
    assert "numpy.savez('in.npz', indices=..., output_shape=...)" in str(err.value)


def test_the_savez_hint_runs_when_pasted_for_names_that_are_no_keywords():
    """Paddle's 'boxes.tmp_0' and tf2onnx's 'rois:0' are no Python keyword names: the hint read
    numpy.savez('in.npz', boxes.tmp_0=...), a SyntaxError when pasted."""
    model = load("segnet-unpool")
    for node in model.graph.node:
        node.input[:] = ["indices:0" if name == "indices" else name for name in node.input]
    next(v for v in model.graph.input if v.name == "indices").name = "indices:0"
    with pytest.raises(OrtpoolError) as err:
        resolve(model, InputSpec.make(None, {"x": np.zeros((1, 4, 2, 2), "f")}))
    hint = str(err.value).split("; save the arrays with ")[1]
    assert hint == ("numpy.savez('in.npz', **{'indices:0': ..., 'output_shape': ...}) and pass "
                    "--inputs in.npz")
    import ast

    ast.parse(hint.split(" and pass")[0])  # pasted, it is Python


def test_cannot_run_names_the_sizes_and_how_to_set_them():
    resolved = resolve(load("fpn-concat"))
    text = str(resolved.cannot_run("m.onnx", "Concat: mismatched dimensions\n of 63 and 64"))
    assert text == (
        "m.onnx: the model cannot run at the sizes chosen for its open dims (x[0] N=1 (default), "
        "x[2] H=64 (default), x[3] W=64 (default)): Concat: mismatched dimensions of 63 and 64. "
        "Set them with --shape x:1,3,64,64 (or give arrays with --inputs FILE.npz)"
    )
    # every open dim sized by the arrays: no size to set (a --shape must agree with them); the
    # hint said "Set them with --shape x:1,4,4,4 ..." for an index out of range in the file
    arrays = {"x": np.zeros((1, 4, 4, 4), np.float32), "indices": np.zeros((1, 4, 4, 4), np.int64),
              "output_shape": np.array([1, 4, 8, 8])}
    for style, option in (("cli", "--inputs"), ("python", "inputs=")):
        resolved = resolve(load("segnet-unpool"), InputSpec.make(None, arrays, style=style))
        assert {d.source for d in resolved.dims} == {option}
        assert str(resolved.cannot_run("m.onnx", "Index value out of bounds")) == (
            "m.onnx: the model cannot run on x [1,4,4,4], indices [1,4,4,4], output_shape [4]: "
            "Index value out of bounds")
    # the rule reads what sized each dim (OpenDim.arrays), not the words of its source
    assert [d.arrays for d in resolved.dims] == [True] * len(resolved.dims)
    resolved.dims = [dataclasses.replace(d, source="inputs=") for d in resolved.dims]
    resolved.dims[0] = dataclasses.replace(resolved.dims[0], arrays=False)
    assert "Set them with" in str(resolved.cannot_run("m.onnx", "boom"))


def test_a_refusal_quoting_the_models_input_names_prints_no_escape_sequence(tmp_path):
    """fix and bench printed "the model's inputs are x<ESC>[2J" raw (a terminal clears its
    screen); validate already made its message safe. Now every command's error line is."""
    model = two_inputs(["n", 3], ["n", 3])
    model.graph.input[0].name = model.graph.node[0].input[0] = "x\x1b[2J"
    onnx.save(model, tmp_path / "m.onnx")
    for argv in (["fix", "m.onnx", "out.onnx"], ["bench", "m.onnx", "--repeat", "1"]):
        done = run_cli(*argv, "--shape", "nope:1,3", cwd=tmp_path, timeout=120)
        assert done.returncode == 2, done.stderr
        assert "\x1b" not in done.stderr + done.stdout
        assert (f"ortpool {argv[0]}: error: --shape names input 'nope', but the model's inputs "
                "are x\\x1b[2J, b") in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]


def test_a_python_callers_error_quotes_the_models_input_names_escaped(tmp_path):
    """The command line prints its errors safe, but ``str(err)`` of the OrtpoolError a Python
    caller catches held the model's input names raw (an escape sequence, a bidi override) where
    it lists them and in the sizes error (the open dims, their sources, the --shape hint)."""
    import ortpool

    name = "x\x1b[2J\u202e"
    model = two_inputs(["n", 3], ["n", 3])
    model.graph.input[0].name = model.graph.node[0].input[0] = name
    onnx.save(model, tmp_path / "m.onnx")
    with pytest.raises(OrtpoolError) as err:
        ortpool.fix(str(tmp_path / "m.onnx"), shapes={"nope": (1, 3)})
    assert str(err.value) == (
        "shapes= names input 'nope', but the model's inputs are x\\x1b[2J\\u202e, b")
    shown = "x\\x1b[2J\\u202e"
    for style, hint in (("cli", f"--shape '{shown}:1,3' --shape b:1,3"),
                        ("python", f"shapes={{'{shown}': (1, 3), 'b': (1, 3)}}")):
        text = str(resolve(model, InputSpec.make(style=style)).cannot_run("m", "boom"))
        assert text.startswith(
            f"m: the model cannot run at the sizes chosen for its open dims ({shown}[0] n=1 "
            f"(default), b[0] n=1 (default on {shown})): boom. Set them with {hint} (or give")


def test_an_input_named_in_bytes_that_are_not_utf8_is_one_refusal(tmp_path):
    """protobuf hands such a name over as bytes: fix and bench ended in a TypeError traceback
    ("sequence item 0: expected str instance, bytes found") on --shape or --inputs, validate
    counted the model "crashed"; onnxruntime's Python API cannot feed the input at all."""
    model = two_inputs([1, 3], [1, 3])
    model.graph.input[0].name = model.graph.node[0].input[0] = "aQ"
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString().replace(b"aQ", b"a\xff"))
    assert onnx.load(tmp_path / "m.onnx").graph.input[0].name == b"a\xff"
    with pytest.raises(OrtpoolError, match=r"^input 'a\\udcff': its name is not valid UTF-8; "
                       r"onnxruntime's Python API cannot feed it"):
        resolve(onnx.load(tmp_path / "m.onnx"), InputSpec.make(["nope:1"]))
    for argv in (["fix", "m.onnx", "out.onnx"], ["bench", "m.onnx", "--repeat", "1"],
                 ["validate", "m.onnx"]):
        done = run_cli(*argv, "--shape", "b:1,3", cwd=tmp_path, timeout=120)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert "input 'a\\udcff': its name is not valid UTF-8" in done.stderr, done.stderr


def test_a_name_no_model_of_a_run_has_is_a_warning(tmp_path):
    """With several models each takes the --shape/--inputs names it has, so a misspelt name
    changed nothing, silently (one model refuses it); now a warning names it."""
    import ortpool

    models = [str(MODELS / f"{name}.onnx") for name in ("gap-large", "ocr-neg-batch")]
    with pytest.warns(UserWarning, match=r"^shapes= 'nope': no input of that name in the 2 "
                      r"models whose inputs were read; nothing was sized or fed by it$"):
        ortpool.validate(models, shapes={"nope": (1,)}, isolate=False)
    done = run_cli("validate", *models, "--shape", "nope:1", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert ("ortpool validate: warning: --shape 'nope': no input of that name in the 2 models "
            "whose inputs were read") in done.stderr
    done = run_cli("validate", *models, "--shape", "x:1,4,48,96", "--no-progress", cwd=tmp_path)
    assert "warning" not in done.stderr


def _awkward_names() -> onnx.ModelProto:
    """Inputs as converters name them: tf2onnx's ``input:0`` with its ``unk__653`` symbol, a
    name with a space, one with two colons, an unnamed open dim (-1)."""
    inputs = [
        onnx.helper.make_tensor_value_info("input:0", onnx.TensorProto.FLOAT,
                                           ["unk__653", 8, 8, 3]),
        onnx.helper.make_tensor_value_info("x y", onnx.TensorProto.FLOAT, ["N", 3]),
        onnx.helper.make_tensor_value_info("a:b:c", onnx.TensorProto.FLOAT, [-1, 2]),
    ]
    nodes = [onnx.helper.make_node("Identity", [v.name], [f"out{i}"]) for i, v in
             enumerate(inputs)]
    outputs = [onnx.helper.make_tensor_value_info(f"out{i}", onnx.TensorProto.FLOAT, None)
               for i in range(3)]
    graph = onnx.helper.make_graph(nodes, "awkward", inputs, outputs)
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)])


def test_every_printed_hint_is_read_back_as_printed():
    """The ``--shape`` hints (in the report's open-dims line and in the error of a model that
    cannot run) and the ``shapes=`` hint, pasted back, set the sizes they name: numbers, never
    a symbol, and quoted for the shell where a name needs it."""
    import ast
    import shlex

    from ortpool.model.inputs import CLI, PYTHON, describe_dims, parse_shapes

    model = _awkward_names()
    chosen = resolve(model)
    hint = chosen.shape_hint()
    assert hint == "--shape input:0:1,8,8,3 --shape 'x y:1,3' --shape a:b:c:1,2"
    texts = [hint, describe_dims(chosen.dims, hint)[1], str(chosen.cannot_run("m", "boom"))]
    for text in texts:
        printed = text[text.index("--shape"):].split(" (or give")[0]
        words = shlex.split(printed)
        assert words[::2] == ["--shape"] * 3
        again = resolve(model, InputSpec.make(parse_shapes(words[1::2]), style=CLI))
        assert again.shapes == chosen.shapes
    python = resolve(model, InputSpec.make(style=PYTHON)).shape_hint()
    assert python == "shapes={'input:0': (1, 8, 8, 3), 'x y': (1, 3), 'a:b:c': (1, 2)}"
    given = ast.literal_eval(python.removeprefix("shapes="))
    assert resolve(model, InputSpec.make(given, style=PYTHON)).shapes == chosen.shapes


def test_the_input_models_regenerate_byte_for_byte(tmp_path):
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_input_models.py"), str(tmp_path)],
        check=True, capture_output=True, timeout=60, env=CHILD_ENV,
    )
    made = sorted(p.name for p in tmp_path.glob("*.onnx"))
    assert made == sorted(p.name for p in MODELS.glob("*.onnx")) and len(made) == 6
    for name in made:
        assert (tmp_path / name).read_bytes() == (MODELS / name).read_bytes(), name
        assert (MODELS / name).stat().st_size < 32_000


def test_validate_reports_the_open_dims_in_its_json():
    from ortpool.validate.validator import ValidateOptions, validate_model

    spec = InputSpec.make({"x": (2, 3, 48, 192)})
    found = validate_model(load("ocr-neg-batch"), ValidateOptions(inputs=spec))
    document = found.to_dict()
    assert document["inputs"] == {"x": [2, 3, 48, 192]}
    assert document["open_dims"] == [
        {"input": "x", "axis": 0, "declared": "-1", "size": 2, "source": "--shape",
         "symbol": False, "arrays": False}
    ]
    assert [n.status for n in found.nodes] == ["agree"] * 3


# --- fix at the user's sizes (API) --------------------------------------------------------------


def test_fix_proves_at_the_given_sizes_and_the_fixed_model_is_the_spec():
    model = load("fpn-concat")
    # from Python, the message names the argument to set, not the command line's flag
    wanted = r"x\[2\] H=64 \(default\).*shapes=\{'x': \(1, 3, 64, 64\)\}"
    with pytest.raises(OrtpoolError, match=wanted):
        fix_with_report(model)
    fixed, report = fix_with_report(model, shapes={"x": (1, 3, 48, 96)})
    head = next(n for n in report.nodes if n.name == "/head_pool")
    # finite inputs by default (ruling 20): the SAME pads of the dilated span, no guard
    assert (head.realization, head.form) == ("standard form", "explicit-pads")
    assert [1, 4, 48, 96] in head.proof["shapes"]  # the model's own run at the given size
    assert len(head.proof["shapes"]) > 1  # and the small sampled sizes
    assert head.shapes.endswith("sampled sizes; and on the model's run at X [1,4,48,96]")
    assert report.to_dict()["inputs"]["open_dims"][1] == {
        "input": "x", "axis": 2, "declared": "H", "size": 48, "source": "shapes=", "symbol": True,
        "arrays": False,
    }
    # Plain onnxruntime: the original's head differs from the spec, the fixed model's does not.
    x = np.random.default_rng(1).normal(size=(1, 3, 48, 96)).astype(np.float32)
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    probe.graph.output.append(onnx.ValueInfoProto(name="/conv_7/out0"))
    original, before = ort.InferenceSession(probe.SerializeToString()).run(None, {"x": x})
    (after,) = ort.InferenceSession(fixed.SerializeToString()).run(None, {"x": x})
    spec = kernels.max_pool(before, version=12, kernel_shape=[3, 3], dilations=[2, 2],
                            auto_pad="SAME_UPPER")
    assert original.shape == (1, 4, 46, 94) and after.shape == spec.shape == (1, 4, 48, 96)
    assert np.array_equal(after, spec)


# --- the command line, each case in a child process ---------------------------------------------


def _npz(path: Path, **arrays) -> str:
    np.savez(path, **arrays)
    return str(path)


def _cases(tmp: Path) -> dict[str, tuple[list[str], int, list[str]]]:
    """name -> (argv, exit code, texts the output must hold)."""
    m = {name: str(MODELS / f"{name}.onnx") for name in
         ("fpn-concat", "ocr-neg-batch", "roi-head", "segnet-unpool")}
    rois = np.array([[0, 0, 0, 63, 95], [0, 8, 4, 40, 60], [0, 0, 0, 3, 3]], np.float64)
    good_rois = _npz(tmp / "rois.npz", rois=rois)
    pooled, _ = kernels.max_pool(
        np.random.default_rng(0).normal(size=(1, 4, 8, 8)).astype(np.float32), version=12,
        return_indices=True, kernel_shape=[2, 2], strides=[2, 2],
    )
    out = str(tmp / "out.onnx")
    unknown = str(tmp / "unknown_hw.onnx")
    onnx.save(cnn_builders.unknown_hw("?"), unknown)
    rng = np.random.default_rng(0)
    real = _npz(tmp / "real.npz", x=rng.normal(size=(1, 3, 48, 192)).astype(np.float32))
    both = "dim '?' is {} on x[2] and {} on x[3] ({}): onnxruntime sizes each axis on its own"
    return {
        "? at 48x192 inputs": (["validate", unknown, "--inputs", real, "-v"], 0, [
            both.format(48, 192, "--inputs"), "[1,8,24,96]", "1 agree"]),
        "? at 32x100 shape": (["validate", unknown, "--shape", "x:2,3,32,100", "-v"], 0, [
            both.format(32, 100, "--shape"), "[2,8,16,50]", "1 agree"]),
        "fix ? at 48x192": (["fix", unknown, out + ".u1", "--inputs", real], 0, [
            both.format(48, 192, "--inputs"), "model inputs x [1,3,48,192]"]),
        "fix ? at 32x100": (["fix", unknown, out + ".u2", "--shape", "x:2,3,32,100"], 0, [
            both.format(32, 100, "--shape"), "model inputs x [2,3,32,100]"]),
        "fpn as typed": (["validate", m["fpn-concat"]], 2, [
            "the model cannot run at the sizes chosen for its open dims (x[0] N=1 (default), "
            "x[2] H=64 (default), x[3] W=64 (default))", "Set them with --shape x:1,3,64,64"]),
        "fpn at size 1": (["validate", m["fpn-concat"], "--shape", "x:1,3,1,1"], 2,
                          ["x[2] H=1 (--shape), x[3] W=1 (--shape)"]),
        "fpn at its size": (["validate", m["fpn-concat"], "--shape", "x:1,3,48,96"], 1, [
            "open dims: x[0] N=1 (--shape), x[2] H=48 (--shape), x[3] W=96 (--shape)",
            "auto_pad=SAME_UPPER with dilations=[2, 2]: the pads must cover"]),
        "fpn empty batch": (["validate", m["fpn-concat"], "--shape", "x:0,3,9,9"], 1,
                            ["open dims: x[0] N=0 (--shape), x[2] H=9 (--shape)"]),
        "ocr -1 as typed": (["validate", m["ocr-neg-batch"]], 0,
                            ["open dims: x[0]=1 (declared -1; default)", "3 agree"]),
        "bad shape string": (["validate", m["ocr-neg-batch"], "--shape", "x:1,3,-1,192"], 2,
                             ["must be NAME:D1,D2,... with integer sizes >= 0"]),
        "conflicting shape": (["validate", m["ocr-neg-batch"], "--shape", "x:1,3,48,191"], 2,
                              ["size 191 on axis 3; the model fixes it at 192"]),
        "zero spatial": (["validate", m["fpn-concat"], "--shape", "x:1,3,0,9"], 2,
                         ["x[2] H=0 (--shape)"]),
        "rois need inputs": (["validate", m["roi-head"]], 2, [
            "input 'rois' (reaches MaxRoiPool '/maxroipool_5' input rois (batch index and box "
            "corners)) needs --inputs"]),
        "inputs missing a name": (["validate", m["segnet-unpool"], "--inputs",
                                   _npz(tmp / "x.npz", x=pooled)], 2,
                                  ["inputs 'indices' (reaches", "'output_shape' (reaches"]),
        "inputs wrong dtype": (["validate", m["roi-head"], "--inputs",
                                _npz(tmp / "f32.npz", rois=rois.astype(np.float32))], 2,
                               ["--inputs array 'rois' is float32; the model's input 'rois' is "
                                "double (float64)"]),
        "inputs not npz": (["validate", m["roi-head"], "--inputs", m["roi-head"]], 2,
                           ["cannot read as .npz"]),
        "fix rois as typed": (["fix", m["roi-head"], out], 2, ["'rois'", "needs --inputs"]),
        "fix rois given": (["fix", m["roi-head"], out + ".r", "--inputs", good_rois,
                            "--shape", "image:1,3,64,96", "--json", str(tmp / "roi.json")], 0,
                           ["rois[0] num_rois=3 (--inputs)", "1 pooling node: unchanged 1",
                            "proven in the finite domain (the default, ruling 20)"]),
        "fix rois nonfinite": (["fix", m["roi-head"], out + ".n", "--inputs", good_rois,
                                "--shape", "image:1,3,64,96", "--nonfinite"], 0,
                               ["1 pooling node: standard form 1", "form nan-guard"]),
        "fix -1 as typed": (["fix", m["ocr-neg-batch"], out + ".o"], 0,
                            ["x[0]=1 (declared -1; default)", "3 pooling nodes: unchanged 3"]),
        "fix bad shape": (["fix", m["fpn-concat"], out, "--shape", "x:1,3"], 2,
                          ["gives input 'x' 2 dims [1,3]; the model declares rank 4"]),
    }


#: children run side by side, this many at a time (each imports onnxruntime: about 150 MB)
PARALLEL = 5


def _command(tmp_path: Path, argv: list[str]) -> subprocess.CompletedProcess | None:
    """The command's run, or None when it gave no answer in time."""
    quiet = ["--no-progress"] if argv[0] == "validate" else []
    try:
        return run_cli(*argv, *quiet, cwd=tmp_path, timeout=120)
    except subprocess.TimeoutExpired:
        return None


def test_command_lines_on_the_input_models(tmp_path):
    cases = _cases(tmp_path)
    failures: list[str] = []
    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
        runs = dict(zip(cases, pool.map(lambda n: _command(tmp_path, cases[n][0]), cases),
                        strict=True))
    for name, done in runs.items():
        if done is None:
            failures.append(f"{name}: no answer in time")
            continue
        text = done.stdout + done.stderr
        _, code, wanted = cases[name]
        if "Traceback" in text or done.returncode != code:
            failures.append(f"{name}: exit {done.returncode} (wanted {code}): {text[-600:]}")
        flat = " ".join(text.split())  # the report wraps its lines in 100 columns
        missing = [w for w in wanted if " ".join(w.split()) not in flat]
        failures += [f"{name}: {w!r} not in {text[-800:]!r}" for w in missing]
    assert not failures, "\n".join(failures)
    document = json.loads((tmp_path / "roi.json").read_text())
    assert document["inputs"]["shapes"] == {"image": [1, 3, 64, 96], "rois": [3, 5]}
    assert document["inputs"]["source"].endswith(f"rois loaded from {tmp_path / 'rois.npz'}")


# --- broken --inputs archives (issue 30) --------------------------------------------------------


def _patched(source: Path, target: Path, edits: list[tuple[bytes, int, bytes]]) -> str:
    """``source``'s bytes with, after the first occurrence of each signature, the bytes at
    that offset replaced: how a damaged or forged zip is made from a good one."""
    data = bytearray(source.read_bytes())
    for signature, offset, value in edits:
        at = data.index(signature) + offset
        data[at : at + len(value)] = value
    target.write_bytes(bytes(data))
    return str(target)


def _broken_archives(tmp: Path) -> dict[str, tuple[str, str]]:
    """name -> (file, the message's text after ``--inputs FILE: ``)."""
    x = np.arange(4096, dtype=np.float32)
    np.savez(tmp / "stored.npz", x=x)
    np.savez_compressed(tmp / "deflated.npz", x=x)
    zeros = tmp / "zeros.npz"
    np.savez_compressed(zeros, x=np.zeros(1 << 18, np.float32))  # 1 MB deflated to 1 KB
    (tmp / "text.npz").write_text("not an archive")
    stored, deflated = tmp / "stored.npz", tmp / "deflated.npz"
    local, central = b"PK\x03\x04", b"PK\x01\x02"
    # the member's data: after the local header (30 bytes), its name and its extra field
    # (numpy writes a zip64 one)
    data_start, inflate_start = (
        30 + sum(int.from_bytes(h[at : at + 2], "little") for at in (26, 28))
        for h in (stored.read_bytes()[:30], deflated.read_bytes()[:30])
    )
    header = np.lib.format.header_data_from_array_1_0(x)
    header["shape"] = (2**40,)
    forged = io.BytesIO()
    np.lib.format.write_array_header_1_0(forged, header)
    with zipfile.ZipFile(tmp / "header.npz", "w") as archive:
        archive.writestr("x.npy", forged.getvalue() + x.tobytes())
    three_gib = (3 << 30).to_bytes(4, "little")
    # a header cut short inside its dict (tokenize's TokenError), a shape of a bool (numpy's
    # header check takes True for an int; its reshape raises a TypeError)
    for name, text in (("cut", b"{'descr': (\n"),
                       ("bool", b"{'descr': '<f4', 'fortran_order': False, 'shape': (True, 2)}\n")):
        with zipfile.ZipFile(tmp / f"{name}.npz", "w") as archive:
            archive.writestr("x.npy", b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little")
                             + text + bytes(64))
    with warnings.catch_warnings(), zipfile.ZipFile(tmp / "twice.npz", "w") as archive:
        warnings.simplefilter("ignore")  # zipfile's "Duplicate name", on writing only
        for values in (x, -x):
            stream = io.BytesIO()
            np.save(stream, values)
            archive.writestr("x.npy", stream.getvalue())
    bad = "cannot read as .npz (numpy.savez): "
    return {
        "not a zip": (str(tmp / "text.npz"), bad + "it is not a zip archive"),
        "bad CRC": (
            _patched(stored, tmp / "crc.npz", [(local, data_start + 200, b"\xff\xff")]),
            bad + "BadZipFile: Bad CRC-32 for file 'x.npy'",
        ),
        "corrupt deflate": (
            # the first block's type bits 11: reserved, which no inflater reads
            _patched(deflated, tmp / "inflate.npz", [(local, inflate_start, b"\xff")]),
            bad + "error: Error -3 while decompressing data: invalid block type",
        ),
        "method 99": (
            _patched(stored, tmp / "m99.npz", [(local, 8, b"c\0"), (central, 10, b"c\0")]),
            "member 'x.npy' uses compression method 99; numpy.savez writes stored or deflated "
            "members only",
        ),
        "header of 4 TiB": (
            str(tmp / "header.npz"),
            "member 'x.npy' declares an array of shape [1099511627776] (float32, 4398046511104 "
            "bytes) but holds 16512 bytes",
        ),
        "3 GiB declared": (
            _patched(zeros, tmp / "bomb.npz", [(local, 22, three_gib), (central, 24, three_gib)]),
            "its arrays, 3221225472 bytes uncompressed as it declares would take 3221225472 "
            "bytes of address space; the process can allocate",
        ),
        "header cut short": (str(tmp / "cut.npz"), bad + "TokenError: "),
        "shape of a bool": (str(tmp / "bool.npz"), "member 'x.npy' declares the shape (True, 2): "
                            "its sizes must be integers"),
        "a member twice": (str(tmp / "twice.npz"), "member 'x.npy' is in the archive 2 times; "
                           "which array is meant is not known"),
    }


def load_each(paths: list[str]) -> None:
    """In the child, under an address-space limit of 1 GiB more than it uses: each file through
    ``InputSpec.make``; prints one JSON list of what each gave ("ok" or the message)."""
    import resource

    from ortpool.model.inputs import InputSpec as Spec

    size = int(Path("/proc/self/status").read_text().split("VmSize:")[1].split()[0]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 30), resource.RLIM_INFINITY))
    found = []
    for path in paths:
        try:
            Spec.make(None, path)
            found.append("ok")
        except OrtpoolError as err:
            found.append(str(err))
    print(json.dumps(found))


def test_a_broken_inputs_archive_is_one_line_naming_the_file(tmp_path):
    """Not a zip, a bad CRC, a corrupt deflate stream, compression method 99, an npy header
    declaring 4 TiB, a zip declaring 3 GiB under an address-space limit: each one message naming
    the file and what is wrong (no traceback, nothing allocated for what is only declared), in
    one child process with a time limit."""
    from tests.support import run_child

    cases = _broken_archives(tmp_path)
    done = run_child(__name__, "load_each", [f for f, _ in cases.values()] + [
        str(tmp_path / "deflated.npz")], timeout=60)
    assert done.returncode == 0, done.stderr
    *found, good = json.loads(done.stdout)
    for (name, (path, text)), message in zip(cases.items(), found, strict=True):
        assert (name, message[: len(f"--inputs {path}: {text}")]) == (
            name, f"--inputs {path}: {text}")
    assert good == "ok"


def _keras_audio() -> onnx.ModelProto:
    """Made like a keras audio model: opset 13, ``input_1`` [N, input_dim_0, 40] (time, then 40
    features), transposed to NCW, three Conv1D of stride 4, MaxPool1D k=2 on the time axis. At
    the default 64 the convolutions leave the pool a time axis of 1: no whole window, where the
    spec's output is empty (ruling 19) and onnxruntime's is not."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Transpose", ["input_1"], ["t0"], perm=[0, 2, 1], name="transpose")]
    weights = []
    for i, channels in enumerate((40, 8, 8)):
        weights.append(numpy_helper.from_array(
            rng.normal(size=(8, channels, 4)).astype(np.float32), f"w{i}"))
        nodes.append(helper.make_node("Conv", [f"t{i}", f"w{i}"], [f"t{i + 1}"], kernel_shape=[4],
                                      strides=[4], name=f"conv1d_{i}"))
    nodes.append(helper.make_node("MaxPool", ["t3"], ["out"], kernel_shape=[2], strides=[2],
                                  name="max_pooling1d"))
    graph = helper.make_graph(
        nodes, "keras_audio",
        [helper.make_tensor_value_info("input_1", TensorProto.FLOAT, ["N", "input_dim_0", 40])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    return model


def test_default_sizes_give_every_pool_a_whole_window():
    """The time axis is doubled from the default until the pool sees a window (128: 64 -> 2 at
    the pool), the report line naming the sizes says so, and the verdict as typed is the
    verdict at a size the model runs at (it agrees), not ruling 19's empty output."""
    from ortpool.validate.validator import ValidateOptions, validate_model

    model = _keras_audio()
    resolved = resolve(model)
    assert resolved.shapes == {"input_1": [1, 128, 40]}
    assert resolved.dims_text() == (
        "input_1[0] N=1 (default), input_1[1] input_dim_0=128 (default, doubled: a pool saw no "
        "whole window at the default)"
    )
    assert describe_dims(resolved.dims, resolved.shape_hint())[1] == (
        "  sizes by default: set them with --shape input_1:1,128,40"
    )
    found = validate_model(model, ValidateOptions())
    assert [n.status for n in found.nodes] == ["agree"]
    # sizes given are kept, even where the pool sees no window there
    small = resolve(model, InputSpec.make({"input_1": (1, 64, 40)}))
    assert small.shapes == {"input_1": [1, 64, 40]}
