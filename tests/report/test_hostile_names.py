"""What a user reads when the names are hostile (issue 34): a node or input name holding
terminal escapes, a name or a file name that is not UTF-8, a name of 100,000 characters; and a
report that fits the terminal's width (COLUMNS), never a fixed 100 columns."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

import ortpool
from ortpool.cli import main
from ortpool.model.singlenode import IR_VERSION
from ortpool.report import bench, html, terminal, text
from ortpool.report import record as results
from ortpool.report.fixes import FixReport, NodeFix, Realization
from ortpool.report.rewrites import NodeReport, RewriteReport
from tests.support import run_cli

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

ESCAPES = "\x1b]0;PWNED\x07\x1b[2J"  # sets the terminal's title, then clears the screen


def pool_model(node: str = "pool", x: str = "x") -> onnx.ModelProto:
    """MaxPool 3x3 SAME_UPPER with dilation 2 (onnxruntime differs: a node with figures)."""
    nodes = [helper.make_node("MaxPool", [x], ["y"], name=node, kernel_shape=[3, 3],
                              auto_pad="SAME_UPPER", dilations=[2, 2])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
        x, TensorProto.FLOAT, [1, 2, 9, 9])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = IR_VERSION
    return model


def no_control(printed: str) -> bool:
    """Nothing a terminal would act on: no control character but the line ends."""
    return not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", printed)


def test_escapes_in_names_are_printed_escaped_by_every_renderer(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(pool_model("pool" + ESCAPES, "x" + ESCAPES), path)
    assert main(["validate", "--no-progress", "-v", str(path)]) == 1
    printed = capsys.readouterr().out
    assert no_control(printed) and "pool\\x1b]0;PWNED\\x07\\x1b[2J  MaxPool-12" in printed
    assert "inputs x\\x1b]0;PWNED" in printed
    report = ortpool.validate(path, isolate=False)
    assert no_control(str(report))
    for shown in (report.report(verbose=True), report._repr_html_(), report.to_html()):
        assert no_control(shown) and "\\x1b]0;PWNED" in shown
    # the JSON keeps the name, escaped as JSON escapes it
    assert json.loads(report.to_json())["models"][0]["nodes"][0]["name"] == "pool" + ESCAPES
    # fix's, rewrite's and bench's lines
    fix = FixReport(nodes=[NodeFix("p" + ESCAPES, "main graph", "MaxPool", 12, "float",
                                   Realization.UNPROVEN, reason="because " + ESCAPES)])
    rewrite = RewriteReport("rewrite", [NodeReport("p" + ESCAPES, "g", "MaxPool", 12,
                                                   "left alone", reason=ESCAPES)])
    for lines in (terminal.wrapped(fix.summary_lines()), [str(fix)],
                  terminal.wrapped(rewrite.summary_lines()), [str(rewrite)],
                  [bench.render([["node"], ["p" + ESCAPES]], width=80)]):
        assert all(no_control(line) for line in lines) and "\\x1b" in "\n".join(lines)


def test_names_that_are_not_utf8_are_escaped_and_the_reports_are_utf8(tmp_path, capsys):
    """A protobuf name holding invalid UTF-8 reaches the reports as bytes or as a str with lone
    surrogates; a file name that is not UTF-8 as a str with lone surrogates (os.fsdecode). The
    terminal, the HTML and the JSON escape them; the files are written, valid UTF-8."""
    folder = os.fsencode(tmp_path)
    path = os.fsdecode(folder + b"/model\xff.onnx")
    onnx.save(pool_model(), path)
    page, document = tmp_path / "r.html", tmp_path / "r.json"
    assert main(["validate", "--no-progress", "--html", str(page), "--json", str(document),
                 path]) == 1
    assert "model\\udcff.onnx" in capsys.readouterr().out
    assert "model\\udcff.onnx" in page.read_bytes().decode("utf-8")
    assert json.loads(document.read_bytes().decode("utf-8"))["models"][0]["model"].endswith(
        "model\\udcff.onnx")
    # a node named in bytes (a protobuf string that is not UTF-8) or with lone surrogates
    for name in (b"pool\xff\xfename", "pool\udcff\udcfename"):
        node = results.NodeResult(name, "MaxPool", 12, 12, "float", {}, [], "differ", sets=1)
        model = results.ModelResult(path, opset=12, nodes=[node])
        shown = "\n".join(terminal.model_report(model, verbose=True))
        assert "pool\\udcff\\udcfename" in shown and no_control(shown)
        for out in (shown, html.render([model], {}), text.dumps(model.to_dict())):
            out.encode("utf-8")  # no lone surrogate left: valid UTF-8


def test_a_long_name_is_cut_on_the_page_and_whole_in_the_json():
    """A node named with 100,000 characters: the page shows 80 of them (the tooltip up to
    2,000), so a browser lays out no 100,000-character cell; the JSON keeps it whole."""
    node = results.NodeResult("N" * 100_000, "MaxPool", 12, 12, "float", {}, [], "differ",
                              sets=1)
    model = results.ModelResult("G" * 100_000, opset=12, nodes=[node])
    page = html.render([model], {})
    assert max(len(run) for run in re.findall("N+|G+", page)) <= html.TITLE_LIMIT
    assert "100000 characters: the JSON report has them all" in page
    assert len(page) < 60_000
    assert model.to_dict()["nodes"][0]["name"] == "N" * 100_000


@pytest.mark.parametrize("columns", ["80", "120", "30"])
def test_the_report_fits_the_terminals_width(monkeypatch, columns):
    """COLUMNS (as shutil reads the terminal's width) sets the width, at least 60 columns."""
    monkeypatch.setenv("COLUMNS", columns)
    width = max(int(columns), text.MIN_WIDTH)
    cause = results.causes.Cause(results.causes.SAME_DILATION, "why " * 40)
    node = results.NodeResult("p" * 30, "MaxPool", 12, 12, "float", {"kernel_shape": [3, 3]},
                              [], "differ", causes=[cause], sets=1)
    model = results.ModelResult(str(Path("models") / ("m" * 70 + ".onnx")), opset=12,
                                nodes=[node])
    lines = [*terminal.model_report(model, verbose=True), *terminal.summary_lines([model])]
    assert max(map(len, lines)) <= width
    assert max(map(len, lines)) > width - 12  # the width is used, not a fixed 100
    fix = FixReport(nodes=[NodeFix("p", "main graph", "MaxPool", 12, "float",
                                   Realization.UNPROVEN, reason="no " * 60)])
    assert max(map(len, terminal.wrapped(fix.summary_lines()))) <= width
    assert max(map(len, bench.wrap([bench.LEGEND]))) <= width


def test_benchs_notebook_view_is_a_table():
    """A notebook wraps a 200-column ``<pre>`` into noise: bench's view is an HTML table, its
    figures right-aligned, every cell escaped."""
    rows = [["case", "ratio", "outputs"], ["resnet-stem", "1.31", "exact"], ["<b>", "-", "x"]]
    page = bench.notebook_view(rows, ["geometric mean 1.31"])
    assert "<pre" not in page and page.count("<tr>") == 3 and page.count("<th ") == 3
    assert "text-align:right;white-space:nowrap'>1.31</td>" in page and "&lt;b&gt;" in page


def test_every_command_reads_a_model_whose_node_name_is_not_utf8(tmp_path):
    """A node name of bytes that are not UTF-8 (protobuf hands it over as bytes): validate, fix
    and bench each run to their verdict, print the name escaped, and fix's model validates."""
    raw = pool_model("poolXXname").SerializeToString().replace(b"poolXXname", b"pool\xff\xfename")
    (tmp_path / "m.onnx").write_bytes(raw)
    shown = "pool\\udcff\\udcfe"
    done = run_cli("validate", "--no-progress", "-v", "m.onnx", cwd=tmp_path)
    assert done.returncode == 1 and not done.stderr, done.stderr
    assert f"{shown}name  MaxPool-12" in done.stdout and no_control(done.stdout)
    done = run_cli("fix", "m.onnx", "fixed.onnx", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"1 node: '{shown}name'" in " ".join(done.stdout.split())
    done = run_cli("validate", "--no-progress", "fixed.onnx", cwd=tmp_path)
    assert done.returncode == 0 and "1 pooling node: 1 fixed" in done.stdout, done.stdout
    done = run_cli("bench", "--repeat", "3", "m.onnx", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert re.search(rf"{re.escape(shown)}\S*\s+MaxPool-12\s+\d", done.stdout), done.stdout
