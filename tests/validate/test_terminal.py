"""Output for a terminal: ``ortpool validate`` in 100 columns (one line per model, then what does
not agree; ``-v`` every node), statuses shown by name, onnxruntime's messages by their first
line, the progress line erased before the report goes on, ``ortpool --help`` with a line per
command, the ``ops`` table in 100 columns, list options that leave the file names alone, and
ONNX element-type names."""

from __future__ import annotations

import io
import re

import pytest
from onnx import TensorProto, helper

from ortpool import cli, dtypes
from ortpool.errors import OrtpoolError
from ortpool.model.singlenode import IR_VERSION
from ortpool.report import record as results
from ortpool.report import terminal
from ortpool.report.progress import ProgressBar
from ortpool.validate.cli import _print_model
from ortpool.validate.validator import bundled_models

#: a model's line: its status, two blanks, its path
MODEL_LINE = re.compile(r"^(agree|not compared|DIFFERS|COULD NOT RUN|CRASHED|TIMED OUT) +\S+\.onnx")


def test_validate_fits_100_columns_on_the_bundled_models(capsys):
    """The main job: one line per model, the nodes that do not agree under it, every line in
    100 columns; with -v every node. The models validated once, in this process (the command
    prints the same lines: terminal.model_report), and the command itself on one of them."""
    import ortpool

    models = bundled_models()
    report = ortpool.validate(models, isolate=False)
    out = report.report().splitlines()
    assert max(len(line) for line in out) <= 100
    assert sum(1 for line in out if MODEL_LINE.match(line)) == len(models)
    verdict = f" of {len(models)} models differ" if report.exit_code else "all "
    first = out.index(next(x for x in out if re.match(r"\d+ pooling nodes: ", x)))
    tail = " ".join(" ".join(out[first:]).split())  # the wrapped lines joined
    assert re.fullmatch(rf"\d+ pooling nodes: .+ \d+{verdict}.*; \d+ graph output\(s\) differ "
                        "end to end", tail)
    verbose = report.report(verbose=True).splitlines()
    assert max(len(line) for line in verbose) <= 100
    nodes = [n.name for m in report for n in m.nodes]
    listed = [line.split()[0] for line in verbose if re.match(r"^  \S+  \S+-\d+", line)]
    assert listed == nodes  # -v: every node, in order
    cnn = str(next(p for p in models if p.stem == "cnn"))
    expected = results.exit_code([next(m for m in report if m.path == cnn)])
    assert cli.main(["validate", "--no-progress", "-v", cnn]) == expected
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == next(line for line in verbose if "cnn.onnx" in line)
    assert any(line.startswith("  maxpool_indices  MaxPool-12  ") for line in printed)
    assert not any(line.startswith("  maxpool_indices  ") for line in out)


def _node(status: str, name: str = "p") -> results.NodeResult:
    return results.NodeResult(name, "MaxPool", 12, 12, "float", {"kernel_shape": [2, 2]}, [],
                              status, sets=1)


def test_statuses_the_report_does_not_know_are_shown_by_their_name():
    """A status added later (one this report does not know) is shown and counted, never hidden
    or taken for an agreement; ``fixed`` (a node fix rewrote) is counted and shown with -v."""
    nodes = [_node("stale"), _node("agree", "q"), _node("fixed", "f")]
    model = results.ModelResult("m.onnx", opset=12, nodes=nodes)
    lines = terminal.model_report(model)
    assert lines == [
        "agree    m.onnx  opset 12, 3 nodes: 1 fixed, 1 agree, 1 stale; outputs not compared",
        "  p  MaxPool-12  k=2x2  stale",
    ]
    assert terminal.summary([model]) == (
        "1 model agrees: 3 pooling nodes: 1 fixed, 1 agree, 1 stale; 0 graph output(s) differ "
        "end to end"
    )


def test_provider_errors_show_their_first_line():
    """onnxruntime's runtime errors carry a C++ stack and more (about 3,000 characters): the
    report shows the first line, the JSON keeps the whole text."""
    error = "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : bad pads\n" + "  at frame\n" * 200
    model = results.ModelResult("m.onnx", outcome=results.COULD_NOT_RUN, error=error)
    assert terminal.model_report(model) == [
        "COULD NOT RUN  m.onnx: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : bad pads"
    ]
    assert model.to_dict()["error"] == error
    long = results.ModelResult("m.onnx", outcome=results.CRASHED, error="why " * 60)
    lines = terminal.model_report(long)
    assert len(lines) == 3 and max(map(len, lines)) <= 100 and lines[1].startswith("    why")
    # one line of thousands of characters: cut after a few lines, the JSON keeps it whole
    huge = results.ModelResult("m.onnx", outcome=results.COULD_NOT_RUN, error="x y " * 1000)
    lines = terminal.model_report(huge)
    assert len(lines) == terminal.MAX_LINES and max(map(len, lines)) <= 100
    assert lines[-1].endswith(" ... (cut: --json has the whole text)")


def test_the_progress_line_is_erased_before_a_model_is_reported(capsys):
    stream = io.StringIO()
    bar = ProgressBar("validate", stream=stream, force=True, width=4)
    bar(1, 2, "cnn.onnx")
    model = results.ModelResult("m.onnx", opset=12, nodes=[_node("agree")])
    _print_model(model, bar=bar)
    # erased (carriage return, erase to the end of the line), then the report on stdout
    assert stream.getvalue() == "\r\x1b[Kvalidate [##--] 1/2 cnn.onnx\r\x1b[K"
    assert capsys.readouterr().out.startswith("agree    m.onnx  opset 12")
    bar(2, 2, "x" * 200)  # drawn again on the next update, in 99 columns
    assert len(stream.getvalue().rpartition("\x1b[K")[2]) == 99


def test_help_has_a_line_per_command(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = capsys.readouterr().out
    assert "see 'ortpool" not in text
    for name, line in cli.SUMMARIES.items():
        assert re.search(rf"^    {name}(\s+|\n\s+){re.escape(line)}$", text, re.M), name
    assert set(cli.SUMMARIES) == set(cli.COMMANDS)


def test_ops_table_fits_100_columns_and_markdown_stays_whole(capsys):
    assert cli.main(["ops"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 100
    assert lines[0].split() == ["op", "type", "spec", "inputs", "outputs", "X", "types"]
    row = lines.index(next(line for line in lines if line.startswith("MaxPool_12_Indices ")))
    assert lines[row].split() == ["MaxPool_12_Indices", "MaxPool-12", "X", "Y,Indices",
                                  "float,double,int8,uint8"]
    assert lines[row + 1] == (
        "    auto_pad, ceil_mode:int, dilations, kernel_shape, pads, storage_order:int, strides"
    )
    assert cli.main(["ops", "--markdown"]) == 0
    markdown = capsys.readouterr().out.splitlines()
    assert len(markdown) == 2 + sum(1 for line in lines if not line.startswith(" ")) - 1
    assert "| `MaxPool_12_Indices` | MaxPool-12 | X | Y, Indices | float, double, int8, uint8 | " \
        "auto_pad:string, ceil_mode:int," in "\n".join(markdown)


def test_list_options_leave_the_file_names_to_the_positionals(tmp_path, capsys):
    """``--nodes pool in.onnx out.onnx``: one comma-separated value per option, so the model
    files are not taken for node names."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
    nodes = [helper.make_node("MaxPool", ["x"], [o], name=o, kernel_shape=[2, 2])
             for o in ("a", "b")]
    outputs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("a", "b")]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], outputs),
                              opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = IR_VERSION
    source = tmp_path / "in.onnx"
    source.write_bytes(model.SerializeToString())
    out = tmp_path / "out.onnx"
    assert cli.main(["rewrite", "--nodes", "a", str(source), str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("retargeted 1 of 2 pooling nodes")
    assert cli.main(["rewrite", "--exclude", "a,b", str(source), str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("retargeted 0 of 2 pooling nodes")


def test_element_types_have_their_onnx_names_and_numpy_spellings():
    assert [dtypes.canonical(t) for t in ("float", "float32", "FLOAT", "double", "float64")] == [
        "float", "float", "float", "double", "double"]
    with pytest.raises(OrtpoolError, match=r"^element type 'half' is not one of float, double, "):
        dtypes.canonical("half")
    # conformance takes the same names: float32 selects what float does
    from ortpool.conformance.run import select_cases

    assert select_cases(["LpPool"], [18], ["float32"], [1]) == select_cases(
        ["LpPool"], [18], ["float"], [1])
    with pytest.raises(OrtpoolError, match=r"^ranks \[4\] must name ranks among 1, 2, 3$"):
        select_cases(ranks=[4])
