"""``ortpool bench MODEL [FIXED]``: a user's model timed against its fixed form, with the
control and the per-node times from onnxruntime's profile.

The fixed model here is written by hand as ``ortpool fix`` writes one (the pool node keeps its
name, an inserted node carries the fix mark naming it), so the test knows exactly which nodes
stand for the pooling node; no figure's size is asserted (they depend on the machine).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ortpool.bench import runner, usermodel
from ortpool.errors import OrtpoolError
from ortpool.forms.emit import MARK
from ortpool.model.singlenode import IR_VERSION
from ortpool.ort import timed

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime


def _model(
    path: Path,
    fixed: bool = False,
    size: int = 8,
    elem: int = TensorProto.FLOAT,
    ir_version: int = IR_VERSION,
) -> str:
    """X [1, 2, size, size] -> MaxPool 'pool' k2 s2 -> Relu 'relu' -> Y; ``fixed`` puts a Neg
    pair marked as written by ``ortpool fix`` for 'pool' in front of the pool."""
    nodes = []
    source = "X"
    if fixed:
        for role in ("neg", "back"):
            node = helper.make_node("Neg", [source], [f"X__ortpool_fix_{role}"],
                                    name=f"ortpool_fix/{role}/pool")
            node.doc_string = f"{MARK} inserted by 'ortpool fix' for node 'pool' (form test)"
            nodes.append(node)
            source = node.output[0]
    nodes.append(helper.make_node("MaxPool", [source], ["P"], name="pool", kernel_shape=[2, 2],
                                  strides=[2, 2]))
    nodes.append(helper.make_node("Relu", ["P"], ["Y"], name="relu"))
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("X", elem, [1, 2, size, size])],
        [helper.make_tensor_value_info("Y", elem, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = ir_version
    onnx.save(model, path)
    return str(path)


def test_the_command_times_model_fixed_and_control_and_profiles_the_pool(tmp_path):
    # onnx's own IR version: onnxruntime 1.21/1.22 read 10 at most, and asking which one it
    # reads opens probe sessions, which must happen before the shared thread pool is set
    model = _model(tmp_path / "m.onnx", ir_version=onnx.IR_VERSION)
    fixed = _model(tmp_path / "f.onnx", fixed=True)
    out = tmp_path / "bench.json"
    temp = tmp_path / "tmp"
    temp.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "ortpool", "bench", model, fixed, "--repeat", "3",
         "--min-sample-ms", "0.2", "--opt-level", "disable", "--json", str(out)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "TMPDIR": str(temp)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "EP Error" not in proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    rows = {line.split("  ")[0]: line.split() for line in lines}
    # whole-model rows: the original at 1, the control and the fixed form with a ratio ± spread
    assert rows["original"][-1] == "1"
    control = lines[next(i for i, line in enumerate(lines) if line.startswith("original again"))]
    assert control.split()[-2].replace(".", "").isdigit() and control.split()[-1][0] == "±"
    assert rows["fixed"][-2].replace(".", "").isdigit()
    # the profile's row of the pooling node: its name, op and version, both times
    pool = rows["pool"]
    assert pool[:2] == ["pool", "MaxPool-12"] and pool[-2] == "3"  # pool + two marked Negs
    assert "relu" not in rows  # only pooling nodes are listed
    doc = json.loads(out.read_text())
    (node,) = doc["nodes"]
    assert node["name"] == "pool" and node["op"] == "MaxPool-12"
    assert node["fixed_nodes"] == 3 and node["original_s"] > 0 and node["fixed_s"] > 0
    assert node["ratio"] == pytest.approx(node["fixed_s"] / node["original_s"])
    assert doc["ratios_to_original"]["original again"]["rounds"] == 3
    assert doc["ratios_to_original"]["fixed"]["rounds"] == 3
    assert set(doc["times"]) == {"original", "original again", "fixed"}
    assert doc["profiles"]["original"]["runs"] == usermodel.PROFILED_RUNS
    assert doc["inputs"]["shapes"] == {"X": [1, 2, 8, 8]}
    # the profiles were written in a private folder, removed with the files
    assert list(temp.rglob("*.json")) == [] and list(temp.glob("ortpool-profile-*")) == []


def test_a_fixed_model_with_other_inputs_is_refused_when_read(tmp_path):
    model = _model(tmp_path / "m.onnx")
    other = _model(tmp_path / "f.onnx", fixed=True, size=6)
    with pytest.raises(OrtpoolError, match=(
        r"FIXED .*f\.onnx does not take the inputs of MODEL .*m\.onnx: input 'X' is float "
        r"\[1,2,8,8\] in MODEL, float \[1,2,6,6\] in FIXED"
    )):
        usermodel.load_pair(model, other)
    doubles = _model(tmp_path / "d.onnx", fixed=True, elem=TensorProto.DOUBLE)
    with pytest.raises(OrtpoolError, match=r"input 'X' is float \[1,2,8,8\] in MODEL, double "):
        usermodel.load_pair(model, doubles)


def test_fixed_with_other_input_names_or_outputs_is_refused():
    a = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["X"], ["Y"])], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])],
    ))
    b = onnx.ModelProto()
    b.CopyFrom(a)
    b.graph.input[0].name = "image"
    with pytest.raises(OrtpoolError, match="MODEL has X, FIXED has image"):
        usermodel.check_interface(a, b, "a.onnx", "b.onnx")
    b.CopyFrom(a)
    b.graph.output[0].name = "Z"
    with pytest.raises(OrtpoolError, match="MODEL gives Y, FIXED gives Z"):
        usermodel.check_interface(a, b, "a.onnx", "b.onnx")


def test_profile_keys_follow_the_nchwc_rename():
    node = helper.make_node("MaxPool", ["c"], ["p"], name="pool")
    assert usermodel._profile_keys(node) == ("pool", "p_nchwc")


def test_case_options_and_model_options_are_kept_apart(tmp_path, capsys):
    from ortpool.cli import main

    model = _model(tmp_path / "m.onnx")
    assert main(["bench", model, "--cases", "vgg"]) == 2
    assert "--cases select or measure the bundled cases" in capsys.readouterr().err
    assert main(["bench", "--shape", "X:1,2,8,8"]) == 2
    assert "--shape and --inputs size MODEL's inputs: give MODEL" in capsys.readouterr().err
    # sizes the model cannot take: refused before a line is printed, as validate and fix do
    assert main(["bench", model, "--shape", "X:1,2,8"]) == 2
    assert capsys.readouterr() == ("", "ortpool bench: error: --shape gives input 'X' 3 dims "
                                   "[1,2,8]; the model declares rank 4 [1,2,8,8]\n")
    # refused when read, before any session (and before the shared thread pool is set)
    other = _model(tmp_path / "f.onnx", fixed=True, size=6)
    assert main(["bench", model, other]) == 2
    err = capsys.readouterr().err
    assert "does not take the inputs of MODEL" in err and "input 'X' is float [1,2,8,8]" in err


def test_ratio_is_taken_round_by_round():
    from ortpool.model.timing import Ratio, Stats

    slow_spell = Stats((1.0, 4.0, 1.0, 1.0), 1)
    same_spell = Stats((2.0, 8.0, 2.0, 2.0), 1)
    ratio = Ratio.of(same_spell, slow_spell)
    assert ratio.samples == (2.0, 2.0, 2.0, 2.0) and ratio.spread == 0.0
    assert np.isclose(ratio.median, 2.0)


def test_the_verdict_tells_a_cost_from_the_noise_by_the_control():
    from ortpool.model import ResolvedInputs
    from ortpool.model.inputs import CLI, PYTHON
    from ortpool.model.timing import Ratio
    from ortpool.report import bench as report

    def verdict(control: tuple[float, ...], fixed: tuple[float, ...], style: str = CLI) -> str:
        result = usermodel.ModelBench(
            "m.onnx", "f.onnx", ResolvedInputs({}, [], {}, style), {},
            {timed.CONTROL: Ratio(control), timed.FIXED: Ratio(fixed)}, [], {},
        )
        return report.model_verdict(result)[1]

    steady = verdict((0.96, 1.0, 1.04, 1.0), (1.8, 2.0, 2.2, 2.0))
    assert steady == (
        "fixed / original: 2.00 (±0.05); control 1.00 (±0.01): the fixed model takes 2.00x "
        "the original's time."
    )
    noisy = verdict((0.5, 1.0, 3.0, 2.5), (1.9, 2.0, 2.1, 2.0))
    assert "their middle halves overlap, so this machine's noise is as large as the" in noisy
    assert "(more rounds with --repeat, or a quieter machine," in noisy
    # a Python caller is told the keyword it sets
    noisy = verdict((0.5, 1.0, 3.0, 2.5), (1.9, 2.0, 2.1, 2.0), PYTHON)
    assert "(more rounds with repeat=, or a quieter machine," in noisy


def test_the_node_table_says_where_a_node_ran_when_another_provider_took_it():
    from ortpool.model import ResolvedInputs
    from ortpool.model.timing import Stats
    from ortpool.report import bench as report

    profile = usermodel.Profile({"pool": 4e-6}, {"pool": 1}, {}, 2e-5, 4e-6, 10)
    node = usermodel.NodeTime("pool", "MaxPool-12", 4e-6, providers=("OpenVINOExecutionProvider",))
    result = usermodel.ModelBench(
        "m.onnx", None, ResolvedInputs({}, [], {}), {"original": Stats((1e-5,), 1)}, {},
        [node], {timed.ORIGINAL: profile},
    )
    lines = report.model_tables(result)
    header = next(line for line in lines if line.startswith("pooling node"))
    assert header.split() == ["pooling", "node", "op", "original", "ran", "on"]
    row = next(line for line in lines if line.startswith("pool "))
    assert row.split() == ["pool", "MaxPool-12", "4", "µs", "OpenVINO"]
    assert next(line for line in lines if line.startswith("whole run")).split() == [
        "whole", "run", "20", "µs"
    ]


def test_a_model_that_cannot_run_at_the_sizes_chosen_says_which_and_how_to_set_them(tmp_path):
    ten = onnx.numpy_helper.from_array(np.zeros((1, 1, 10, 10), np.float32), "ten")
    graph = helper.make_graph(
        [helper.make_node("Add", ["X", "ten"], ["S"], name="add"),  # runs at 10x10 only
         helper.make_node("MaxPool", ["S"], ["Y"], name="pool", kernel_shape=[2, 2])], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, "H", "W"])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [ten],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = IR_VERSION
    path = tmp_path / "sized.onnx"
    onnx.save(model, path)
    pair = usermodel.load_pair(path, None)
    settings = runner.Settings(repeat=1, min_sample=0.0)
    with pytest.raises(OrtpoolError, match=(
        r"sized\.onnx: the model cannot run at the sizes chosen for its open dims "
        r"\(X\[2\] H=64 \(default\), X\[3\] W=64 \(default\)\): .*Set them with --shape X:1,1,64,64"
    )):
        usermodel.bench_models(pair, None, settings)


def _not_equivalent(path: Path, model: str, how: str) -> str:
    """MODEL edited into a FIXED that computes something else under the same names: its output
    cast to float16 (``cast``), or an AveragePool named 'pool' (``average``)."""
    edited = onnx.load(model)
    if how == "cast":
        edited.graph.node[-1].output[0] = "R"
        edited.graph.node.append(helper.make_node("Cast", ["R"], ["Y"], to=TensorProto.FLOAT16))
        edited.graph.output[0].type.tensor_type.elem_type = TensorProto.FLOAT16
    else:
        edited.graph.node[0].op_type = "AveragePool"
    onnx.save(edited, path)
    return str(path)


def test_a_fixed_model_that_computes_something_else_is_refused_before_timing(tmp_path):
    """FIXED is run once beside MODEL on the same inputs first: another element type, or
    values beyond the tolerance, is one line and exit 2 (the two are never timed)."""
    from tests.support import commands_in_child

    model = _model(tmp_path / "m.onnx")
    cast = _not_equivalent(tmp_path / "cast.onnx", model, "cast")
    average = _not_equivalent(tmp_path / "avg.onnx", model, "average")
    found = commands_in_child([["bench", model, cast, "--repeat", "1"],
                               ["bench", model, average, "--repeat", "1"]], timeout=120)
    lines = [(code, err.strip().splitlines()) for code, err in found]
    assert [(code, len(err)) for code, err in lines] == [(2, 1), (2, 1)], lines
    assert lines[0][1][0] == (
        f"ortpool bench: error: FIXED {cast} does not compute what MODEL {model} means (its "
        "pooling nodes as the ONNX spec defines them): output 'Y' is float16, not float32 "
        "(compared within 0.0001 of its magnitude); bench times a model against its fixed form "
        "only (give the model 'ortpool fix' wrote from MODEL)"
    )
    assert re.fullmatch(
        rf"ortpool bench: error: FIXED {re.escape(average)} does not compute what MODEL "
        rf"{re.escape(model)} means \(its pooling nodes as the ONNX spec defines them\): "
        r"output 'Y' differs \(max \|d\| [0-9.e+-]+\) \(compared within 0\.0001 of its "
        r"magnitude\); .*",
        lines[1][1][0],
    )


def test_pools_the_profile_cannot_name_do_not_question_the_fixed_model(tmp_path):
    """A model whose pooling node is unnamed (or inside a local function) has no profile event
    of its own; bench timed it against its fixed form and asked 'no node of FIXED ... stands for
    a pooling node of MODEL ...: is FIXED MODEL's fixed form?'. Only a pool the profile found
    can say so."""
    graph = helper.make_graph(
        [helper.make_node("MaxPool", ["X"], ["Y"], kernel_shape=[2, 2])], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = IR_VERSION
    onnx.save(model, tmp_path / "m.onnx")
    proc = subprocess.run(
        [sys.executable, "-m", "ortpool", "bench", "m.onnx", "m.onnx", "--repeat", "2",
         "--min-sample-ms", "0.2", "--opt-level", "disable"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    notes = proc.stdout.replace("\n  ", " ").splitlines()
    assert not [line for line in notes if "is FIXED MODEL's fixed form?" in line]
    assert notes[-1] == (
        "no profile event names <unnamed MaxPool> (an unnamed node, a node inside a function, "
        "or one onnxruntime's optimizer fused into another)")


def test_infinities_on_both_sides_compare_without_a_warning():
    """An output holding -inf on both sides (an attention-style mask after a pool): bench's
    equivalence check printed 'ortpool bench: warning: invalid value encountered in subtract'
    (inf - inf), and took a FIXED that differs in the output's other cells for equivalent."""
    import warnings

    a = np.array([-np.inf, 1.0, np.inf], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert runner.compare([a], [a.copy()], exact=True) == ("exact", True, 0.0)
        assert runner.compare([a], [-a], exact=False)[:2] == ("differs (max |d| inf)", False)
        # and the NaN of inf - inf hid every other difference of the output (np.max's NaN)
        b = np.array([-np.inf, 2.0, np.inf], np.float32)
        assert runner.compare([a], [b], exact=False) == ("differs (max |d| 1)", False, 1.0)
