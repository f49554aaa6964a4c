"""Issue 33, point 3: one record per node and per model, and every renderer reads it. A model's
report is rendered to the terminal, the JSON document, the HTML page and the notebook's view,
each parsed back, and every count and max-abs figure must be the record's (the comparison's
fields, as the JSON holds them): the bundled defect models and a model with a node that differs
only on a built case (fix-valid-ceil's AveragePool, judged again at the spec's size)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

import ortpool
from ortpool.report import terminal
from ortpool.validate.validator import bundled_models_dir

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

MODELS = bundled_models_dir()
CASES = [MODELS / "ort-defect-valid-ceil.onnx", MODELS / "ort-defect-same-dilated.onnx",
         MODELS / "fix" / "fix-valid-ceil.onnx"]


def expected(output: dict) -> dict[str, object]:
    """The figures a report says of one compared output, from the JSON's fields."""
    wrong = output["differing"] + output["inaccurate"] + output["ruling_differing"]
    return {"compared": output["compared"], "wrong": wrong, "only": output["only_in_one"],
            "max_abs": terminal.num(output["max_abs"]) if wrong and output["max_abs"] else None}


def said(clause: str) -> dict[str, object]:
    """The same figures read back from a sentence of :func:`terminal.cells_text`."""
    found: dict[str, object] = {"only": 0, "max_abs": None}
    if m := re.search(r"(\d+) of (\d+) cells differ", clause):
        found.update(wrong=int(m[1]), compared=int(m[2]))
    elif m := re.search(r"all (\d+) cells agree", clause):
        found.update(wrong=0, compared=int(m[1]))
    if m := re.search(r"has (\d+) cells (?:the spec's|onnxruntime's) \S+ has not", clause):
        found["only"] = int(m[1])
    if m := re.search(r"of the (\d+) cells both have, (\d+) differ", clause):
        found.update(compared=int(m[1]), wrong=int(m[2]))
    elif m := re.search(r"the (\d+) cells both have agree", clause):
        found.update(compared=int(m[1]), wrong=0)
    if m := re.search(r"by up to (\S+?)[,;)]?(?: |$)", clause):
        found["max_abs"] = m[1]
    return found


def _texts(pattern: str, page: str) -> list[str]:
    return [html.unescape(re.sub(r"<[^>]+>", "", t)) for t in re.findall(pattern, page, re.S)]


@pytest.mark.parametrize("path", CASES, ids=lambda p: Path(p).stem)
def test_every_view_says_the_records_counts(path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "10000")  # a line each: read back whole
    report = ortpool.validate(path, isolate=False)
    (doc_model,) = json.loads(report.to_json())["models"]
    lines = report.report().splitlines()
    page, notebook = report.to_html(), report._repr_html_()
    failing = [n for n in doc_model["nodes"] if n["status"] != "agree"]
    assert failing, "the case must have a node that differs"
    cells = _texts(r'<td class="cells"[^>]*>(.*?)</td>', page)
    maxima = _texts(r'<td class="num"[^>]*>(.*?)</td>', page)
    found = dict(zip(re.findall(r'<li class="finding" data-node="([^"]+)"', notebook),
                     _texts(r'<span class="figures">(.*?)</span>', notebook), strict=True))
    for index, node in enumerate(doc_model["nodes"]):
        want = [expected(o) for o in node["outputs"]]
        # the terminal: the node's line, then its figures' line
        head = next(i for i, line in enumerate(lines) if line.startswith(f"  {node['name']}  "))
        views = {"terminal": lines[head + 1].strip(), "html": cells[index],
                 "notebook": found[node["name"]]}
        for view, text in views.items():
            clauses = re.split(r"; (?=Y: |Indices: )", text) if len(want) > 1 else [text]
            assert [said(c) for c in clauses] == want, (view, text)
        assert maxima[index] == terminal.num(node["max_abs_error"])
        if node["shown"]:  # figures of a built case say so, in every view
            assert all(v.startswith(f"on {node['shown']}: ") for v in views.values())
    # the pictures: one per differing output, its legend's counts the JSON's
    for name, output, legend in re.findall(
            r'<figure class="node-picture" data-node="([^"]+)" data-output="([^"]+)">'
            r'<div class="legend">(.*?)</div>', page):
        fields = next(o for n in doc_model["nodes"] if n["name"] == name
                      for o in n["outputs"] if o["name"] == output)
        counts = {label: int(n) for label, n in re.findall(
            r'data-category="([^"]+)"><i [^>]*></i><b class="count">(\d+)</b>', legend)}
        assert counts.get("differs", 0) == fields["differing"]
        assert counts.get("only in one output (shapes differ)", 0) == fields["only_in_one"]
    # end to end: the terminal's sentence and the HTML's say the JSON's outputs
    for output in doc_model["end_to_end"]["outputs"]:
        line = next(x for x in lines if x.startswith(f"  end to end: output {output['name']} "))
        assert said(line)["only"] == output["only_in_one"]
        assert said(line)["compared"] == output["compared"]
    # the model's status, the same word everywhere
    assert lines[0].startswith(terminal.status_text(doc_model["status"]))
    assert f'data-status="{doc_model["status"]}"' in page
    assert f'class="summary-row" data-status="{doc_model["status"]}"' in notebook


def test_shapes_that_differ_are_said_in_words_not_as_zero_differences(monkeypatch):
    """onnxruntime's VALID with ceil_mode: [1,2,4,4] where the spec gives [1,2,3,3]. The 18
    cells both have agree; no "14 differ, max abs 0"."""
    monkeypatch.setenv("COLUMNS", "200")
    report = ortpool.validate(MODELS / "ort-defect-valid-ceil.onnx", isolate=False)
    text = report.report()
    assert ("shapes differ: onnxruntime's [1,2,4,4] has 14 cells the spec's [1,2,3,3] has not; "
            "the 18 cells both have agree") in text
    assert "max abs 0" not in text and "14 differ" not in text


def test_a_model_nothing_was_compared_on_is_not_compared(monkeypatch):
    """AveragePool-1 has no onnxruntime kernel: no node and no output was compared. The model
    is 'not compared', never 'agree'; it exits 0, counted apart in the summary."""
    monkeypatch.setenv("COLUMNS", "200")
    report = ortpool.validate([MODELS / "averagepool-1.onnx", MODELS / "maxpool-12.onnx"],
                              isolate=False)
    assert [m.status for m in report] == ["not-compared", "agree"] and report.exit_code == 0
    lines = report.report().splitlines()
    assert lines[0].startswith("not compared  ")
    assert lines[-1] == ("2 models: 1 agree, 1 not compared (no onnxruntime kernel); "
                         "0 graph output(s) differ end to end")
    assert json.loads(report.to_json())["models"][0]["status"] == "not-compared"
    assert 'class="summary-row" data-status="not-compared"' in report._repr_html_()


def test_a_nodes_line_names_its_flags_set():
    """Every 0/1 attribute a node sets is named, from the schemas (``_mode`` dropped)."""
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1, "count_include_pad": 0,
             "storage_order": 1}
    assert terminal.short_attributes(attrs) == "k=3x3 s=2x2 ceil storage_order"


def test_a_fixed_nodes_proof_says_its_sets_once():
    """One node, one count of input sets: the proof alone and the proof in the fixed model ran
    the same sets, and the text says so instead of two counts (it said "exact on 16 input sets"
    and "exact on 17 input sets" for one node)."""
    result = ortpool.fix(str(MODELS / "ort-defect-same-dilated.onnx"))
    (node,) = result.nodes
    sets = node.proof["sets"]
    assert sets > 1 and node.in_model["sets"] == sets
    summary = result.summary()
    assert f"exact on {sets} input sets alone and again in the fixed model, on the same sets " \
        "through its form as written" in summary
    assert len(re.findall(r"(\d+) input sets", summary)) == 1


@pytest.mark.parametrize("name", ["maxpool-1", "globalmaxpool-22", "maxroipool-1"])
def test_the_guards_price_is_of_the_model_fix_writes(name):
    """validate's guard price and ``ortpool bench MODEL FIXED`` time the same pair: the forms
    validate prices are the ones ``fix(nonfinite=True)`` writes, node by node (the price said
    x0.10 where bench said 1.55 when the two timed different models)."""
    path = str(MODELS / f"{name}.onnx")
    fixed = ortpool.fix(path, nonfinite=True)
    priced = json.loads(ortpool.validate(path).to_json())["models"][0]["guard_cost"]
    assert priced["forms"] == {n.name: n.form for n in fixed.nodes}
    assert priced["error"] == "" and priced["level"] == "all"
    assert priced["ratio"] > 0 and 3 <= priced["rounds"] <= 12


def test_cells_that_differ_only_by_a_nan_or_an_infinity_are_not_said_to_differ_by_0():
    """The magnitudes are of the cells finite on both sides: where every differing cell has a
    NaN or an infinity on one side (a runtime's lowest finite value for the spec's -inf in an
    empty window, ruling 5) they are 0, and "144 cells differ, by up to 0" contradicted itself."""
    from ortpool.check.compare import TensorComparison

    c = TensorComparison("y", "float", (1, 2, 11, 11), (1, 2, 11, 11), "exact", compared=242,
                         ruling_differing=144, max_abs=0.0, max_rel=0.0)
    words = "144 of 242 cells differ (144 in cells the rulings decide), each with a NaN or an " \
            "infinity on one side"
    assert terminal.cells_text(c) == terminal.cells_text(c, verbose=True) == words
    c.differing, c.max_abs, c.max_rel = 1, 2.5, 0.5  # one finite cell off: its magnitude
    assert terminal.cells_text(c).endswith("decide), by up to 2.5")
    assert terminal.cells_text(c, verbose=True).endswith("decide), max abs 2.5, max rel 0.5")
