"""The notebook API: ``ortpool.validate``, ``ortpool.fix``, ``ortpool.conformance``,
``ortpool.bench`` with keyword arguments, their reports (``ok``, ``exit_code``, ``summary()``,
``to_json()``, ``_repr_html_()``, a one-line ``repr``), ``dir(ortpool)``, and messages that name
arguments (``shapes=``), not flags (``--shape``), when the caller is Python."""

from __future__ import annotations

import copy
import html
import inspect
import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import ortpool
from ortpool.model.inputs import CLI, PYTHON, InputSpec, resolve
from ortpool.model.singlenode import IR_VERSION
from ortpool.report.text import PRE
from ortpool.validate.validator import bundled_models_dir
from tests.support import CHILD_ENV

MODELS = bundled_models_dir()
AGREES, DIFFERS = MODELS / "maxpool-1.onnx", MODELS / "ort-defect-valid-ceil.onnx"


def test_dir_and_help_show_the_public_api():
    assert dir(ortpool) == [
        "BenchReport", "ConformanceReport", "FixResult", "InferenceSession", "OrtpoolError",
        "ValidationReport", "__version__", "bench", "check_model", "conformance", "fix",
        "register", "restore", "rewrite", "session_options", "validate",
    ]  # fmt: skip
    for name in ("validate(", "fix(", "conformance(", "bench(", "shapes="):
        assert name in ortpool.__doc__
    # the packages called as functions show the functions' keyword arguments
    validate = inspect.signature(ortpool.validate).parameters
    assert list(validate)[:4] == ["model", "shapes", "inputs", "seed"]
    assert validate["providers"].kind is inspect.Parameter.KEYWORD_ONLY
    fix = inspect.signature(ortpool.fix).parameters
    assert {"ops", "nodes", "exclude", "providers", "opt_level", "nonfinite", "shapes"} <= set(fix)
    bench = inspect.signature(ortpool.bench).parameters
    assert list(bench)[:3] == ["model", "fixed", "shapes"]


def test_validate_reports_models_from_python():
    """Two bundled models in this process: one agrees, one differs (onnxruntime's VALID with
    ceil_mode): every field of the report and the texts it makes."""
    report = ortpool.validate([AGREES, DIFFERS], isolate=False)
    assert repr(report) == "<ValidationReport: 2 models, 1 differs (1 node), exit 1>"
    # a report is equal to itself only (a generated == compared the records' arrays: "the truth
    # value of an array is ambiguous")
    assert report == report and report != copy.copy(report) and len({report, report}) == 1
    assert (report.ok, report.exit_code, len(report)) == (False, 1, 2)
    assert [m.path for m in report] == [str(AGREES), str(DIFFERS)]
    assert report[1].status == "differ" and report.differing == [report[1]]
    assert repr(report[1]) == f"<ModelResult {DIFFERS}: differ, 1 nodes, 1 of 1 outputs differ>"
    assert repr(report[1].nodes[0]) == "<NodeResult averagepool19 AveragePool-19: differ>"
    summary = report.summary().splitlines()
    # as the command prints them: the models that do not agree, then the run's lines
    assert summary[0].startswith("DIFFERS  ")
    assert "ort-defect-valid-ceil.onnx  opset 19" in summary[0]
    assert summary[-2:] == [
        "2 pooling nodes: 1 DIFFERS, 1 agree (by basis: spec text 1)",
        "1 of 2 models differ; 1 graph output(s) differ end to end",
    ]
    document = json.loads(report.to_json())
    assert document["tool"] == "ortpool validate" and document["status"] == "differ"
    assert [m["status"] for m in document["models"]] == ["agree", "differ"]
    page = report._repr_html_()
    # the summary table, the model that differs first
    assert page.index("ort-defect-valid-ceil.onnx") < page.index("maxpool-1.onnx")
    # a table of the model that differs, and one of the agreeing one collapsed in a <details>:
    # a header and a row each
    assert page.count("</tr>") == 4 and "nodes that do not agree" in page and "<details" in page
    # the cause is in the view (a notebook has no other), and no link leads nowhere
    assert "ceil_mode with VALID (VALID ignores ceil_mode)" in page and "href" not in page
    assert "<!DOCTYPE html>" in report.to_html()
    full = report.report().splitlines()
    assert full[-1] == summary[-1] and all(len(line) <= 100 for line in full)


def test_a_script_without_the_main_guard_validates_in_child_processes(tmp_path):
    """Paths run each in a child process by default, as the command runs them; a plain script
    (no ``if __name__ == "__main__":``) works: its top level is not run again in the children
    (it was: every child re-ran the script and its call, and the model was "not validated")."""
    script = tmp_path / "notebook.py"
    script.write_text(
        "import ortpool\n"
        f"report = ortpool.validate({str(AGREES)!r})\n"
        "print(repr(report))\n"
        "print(report.summary())\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120,
        env=CHILD_ENV, cwd=tmp_path,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        "<ValidationReport: 1 model, exit 0>",
        # ruling 20: onnxruntime's MaxPool-1 drops NaN; information, not the verdict
        "information: 1 node differs on NaN/inf inputs only, not counted (the finite domain, "
        "ruling 20;",
        "    nonfinite=True judges them)",
        "1 pooling node: 1 agree",
        "1 model agrees; 0 graph output(s) differ end to end",
    ]


def test_validate_refuses_bad_arguments_by_their_names():
    with pytest.raises(ortpool.OrtpoolError, match=r"^reference_timeout=0 must be a finite "):
        ortpool.validate(AGREES, reference_timeout=0)
    with pytest.raises(ortpool.OrtpoolError, match=r"^atol=-1 must be a finite number >= 0$"):
        ortpool.validate(AGREES, atol=-1)
    with pytest.raises(ortpool.OrtpoolError, match=r"^isolate=True takes model paths"):
        ortpool.validate(onnx.load(AGREES), isolate=True)


def test_timeout_means_in_python_what_it_means_on_the_command_line():
    """900 s a model by default, as ``--timeout`` (the API's default was no limit), 0 for none
    (or None, the API's old default); a model validated in this process (a ModelProto, or
    ``isolate=False``) has no limit, so a ``timeout=`` it could not apply is refused."""
    assert inspect.signature(ortpool.validate).parameters["timeout"].default == 900.0
    report = ortpool.validate(AGREES)  # a path: in a child process, killed past the limit
    assert json.loads(report.to_json())["settings"]["timeout"] == 900.0
    report = ortpool.validate(AGREES, timeout=0)
    assert json.loads(report.to_json())["settings"]["timeout"] is None
    report = ortpool.validate(AGREES, timeout=None)  # the API's old default, still no limit
    assert json.loads(report.to_json())["settings"]["timeout"] is None
    proto = onnx.load(AGREES)
    with pytest.raises(ortpool.OrtpoolError, match=(
            r"^timeout=60 limits a model validated in a child process; a ModelProto is "
            r"validated in this process, where no limit applies \(give its path, or leave "
            r"timeout out\)$")):
        ortpool.validate(proto, timeout=60)
    with pytest.raises(ortpool.OrtpoolError, match=(
            r"^timeout=60 limits a model validated in a child process; isolate=False validates "
            r"in this process, where no limit applies \(leave one of them out\)$")):
        ortpool.validate(AGREES, timeout=60, isolate=False)
    for report in (ortpool.validate(proto), ortpool.validate(proto, timeout=0)):
        assert json.loads(report.to_json())["settings"]["timeout"] is None  # as it ran


def _roi_model() -> onnx.ModelProto:
    """MaxRoiPool whose rois are a graph input, over an image with open dims."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])
    rois = helper.make_tensor_value_info("rois", TensorProto.FLOAT, [2, 5])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], name="roi", pooled_shape=[2, 2])
    graph = helper.make_graph([node], "roi", [x, rois], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    model.ir_version = IR_VERSION
    return model


def test_messages_name_arguments_for_python_and_flags_for_the_command_line():
    model = _roi_model()
    report = ortpool.validate(model)  # a proto: in this process
    (found,) = report.models
    assert (found.outcome, report.exit_code) == ("could-not-run", 2)
    assert found.error == (  # the graph's name labels a proto
        "roi: input 'rois' (reaches MaxRoiPool 'roi' input rois (batch index and box corners)) "
        "needs inputs=: generated values there (a batch index of -0.5, an index outside the "
        "output) prove nothing; pass them as inputs={'rois': array}"
    )
    rois = np.array([[0, 0, 0, 3, 3], [0, 1, 1, 2, 2]], np.float32)
    python = resolve(model, InputSpec.make(inputs={"rois": rois}, style=PYTHON))
    cli = resolve(model, InputSpec.make(inputs={"rois": rois}, style=CLI))
    assert python.shape_hint() == "shapes={'x': (1, 3, 64, 64)}"
    assert cli.shape_hint() == "--shape x:1,3,64,64"
    assert str(python.cannot_run("", "boom")).endswith(
        "Set them with shapes={'x': (1, 3, 64, 64)} (or give arrays with inputs={'NAME': array})"
    )
    assert str(cli.cannot_run("", "boom")).endswith(
        "Set them with --shape x:1,3,64,64 (or give arrays with --inputs FILE.npz)"
    )
    with pytest.raises(ortpool.OrtpoolError, match=r"^shapes= names input 'z', but the model"):
        resolve(model, InputSpec.make({"z": (1,)}, {"rois": rois}, style=PYTHON))
    with pytest.raises(ValueError, match=r"^style='notebook' must be 'cli' or 'python'$"):
        InputSpec.make(style="notebook")


def test_fix_returns_the_model_and_its_report(tmp_path):
    result = ortpool.fix(str(DIFFERS))
    # save(): the notes on the data, a list as scripts read it, shown as what was written
    saved = result.save(tmp_path / "fixed.onnx")
    assert saved == [] and repr(saved) == f"wrote {tmp_path / 'fixed.onnx'}"
    # a path of bytes: "a bytes-like object is required, not 'str'" from inside, before
    for path in (bytes(tmp_path / "b.onnx"), None):
        with pytest.raises(TypeError, match=r"^path=.* must be a path \(str or os.PathLike\)"):
            result.save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fixed.onnx"]
    assert repr(result) == "<FixResult: 1 pooling node: standard form 1, exit 0>"
    assert (result.ok, result.exit_code) == (True, 0)
    model, report = result  # unpacks as fix_with_report's pair
    assert model is result.model and report is result.report
    assert [n.op_type for n in model.graph.node] == ["AveragePool"]
    assert [(n.name, n.form) for n in result.nodes] == [("averagepool19", "explicit-pads")]
    assert result.summary() == "\n".join(report.summary_lines())
    # from Python the report speaks of the argument, not the flag
    assert result.summary().endswith(
        "NaN and +-inf were not covered (nonfinite=True proves them, and guards a max onnxruntime "
        "gets wrong there)"
    )
    assert json.loads(result.to_json())["summary"]["forms"] == {"explicit-pads": 1}
    page = result._repr_html_()
    assert "<td><code>averagepool19</code></td><td>AveragePool-19</td>" in page
    # what was wrong before the fix, beside what it became
    assert "Y has shape [1, 2, 4, 4], the spec&#x27;s is [1, 2, 3, 3]" in page


def test_a_proto_without_its_external_data_is_not_judged_on_another_file(tmp_path, monkeypatch):
    """A ModelProto loaded without its external data has no folder to read it from: onnxruntime
    read the working directory's file of that name, so validate said "agree" and fix "proven"
    on another file's weights (5.0 where the model's are 2.0). validate makes it that model's
    could-not-run, fix refuses it unless given source_dir=."""
    pool = helper.make_node("MaxPool", ["a"], ["y"], name="pool", kernel_shape=[2, 2])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["a"]), pool], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(np.full((1, 1, 4, 4), 2.0, np.float32), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = IR_VERSION
    (tmp_path / "m").mkdir()
    onnx.save(model, tmp_path / "m" / "m.onnx", save_as_external_data=True, location="w.bin",
              size_threshold=0)
    proto = onnx.load(tmp_path / "m" / "m.onnx", load_external_data=False)
    (tmp_path / "cwd").mkdir()
    np.full((1, 1, 4, 4), 5.0, np.float32).tofile(tmp_path / "cwd" / "w.bin")  # another's
    monkeypatch.chdir(tmp_path / "cwd")
    why = ("its external data 'w.bin' is not loaded, and a ModelProto has no folder to read it "
           "from (onnxruntime would read the working directory's): give the model's path{}, or "
           "load it with its data")
    (found,) = ortpool.validate(proto)
    assert (found.status, found.error) == ("could-not-run", "g: " + why.format(""))
    with pytest.raises(ortpool.OrtpoolError) as refused:
        ortpool.fix(proto)
    assert str(refused.value) == "model: " + why.format(" or source_dir=")
    assert ortpool.fix(proto, source_dir=tmp_path / "m").exit_code == 0


def test_a_report_s_yes_or_no_arguments_refuse_strings():
    """'false' is a true value to Python: report.report(verbose="false") printed every node, as
    the options of the calls themselves no longer do (values.flag)."""
    calls = [
        lambda: ortpool.validate(str(AGREES), isolate=False).report(verbose="false"),
        lambda: ortpool.BenchReport([], {}, None).table(markdown="no"),
        lambda: ortpool.fix(str(AGREES)).report.exit_code("no"),
        lambda: ortpool.fix(str(AGREES)).report.summary_lines(verbose="no"),
        lambda: ortpool.rewrite.rewrite_with_report(str(AGREES))[1].summary_lines(verbose="no"),
    ]
    found = []
    for call in calls:
        with pytest.raises(TypeError) as refused:
            call()
        found.append(str(refused.value))
    assert found == ["verbose='false' must be True or False, not str",
                     "markdown='no' must be True or False, not str",
                     "allow_unproven='no' must be True or False, not str",
                     "verbose='no' must be True or False, not str",
                     "verbose='no' must be True or False, not str"]


def test_conformance_and_bench_from_python():
    from ortpool.conformance.run import select_cases
    from ortpool.report.record import FAILING

    report = ortpool.conformance(ops=["MaxPool"], versions=[12], dtypes=["float32"], ranks=[1])
    # numpy's float32 selects ONNX's float: the same cases
    assert [r.case for r in report.cases] == select_cases(["MaxPool"], [12], ["float"], [1])
    assert {r.case.dtype for r in report.cases} == {"float"}
    differing = [r for r in report.cases if r.node.status in FAILING]
    assert report.differing == differing and report.exit_code == 0  # as the command exits
    assert repr(report) == (
        f"<ConformanceReport: {len(report.cases)} cases, {len(differing)} differ, exit 0>"
    )
    by = ", ".join(f"{k} {n}" for k, n in report.bases.items())
    assert sum(report.bases.values()) == len(differing) and "spec text" in report.bases
    assert report.summary().splitlines()[0] == (
        f"{len(report.cases)} cases: {len(differing)} differ from the spec (by basis: {by})"
    )
    # a notebook shows the summary's lines as lines (each escaped alone, the breaks kept)
    assert report._repr_html_() == f"{PRE}{html.escape(report.summary())}</pre>"
    assert report.summary().count("\n") == 1
    with pytest.raises(ortpool.OrtpoolError, match=r"^repeat=0 must be from 1 to 1000000$"):
        ortpool.bench(repeat=0)


def test_a_model_bench_shows_its_tables_as_lines_in_a_notebook(tmp_path):
    fixed = tmp_path / "fixed.onnx"
    ortpool.fix(str(DIFFERS)).save(fixed)
    report = ortpool.bench(str(DIFFERS), str(fixed), repeat=1, min_sample_ms=0)
    page = report._repr_html_()
    assert page == f"{PRE}{html.escape(report.table())}</pre>"
    # the verdict once, at the end of the tables (it was shown twice)
    assert page.count("fixed / original: ") == 1 and page.count("times: median per call") == 1
    assert "\\n" not in page and page.count("\n") >= 5


def test_bench_from_a_script_without_the_main_guard(tmp_path):
    """``ortpool.bench`` from a plain script (the reference evaluator's worker is a spawned
    process, which imported the script again and died of multiprocessing's bootstrapping
    error): the bundled cases (``cases='fixed-cost'`` is one pattern, not ten letters matching
    thirteen cases), a user's model
    against its fixed form, and a FIXED that computes something else, refused."""
    fixed, wrong = tmp_path / "fixed.onnx", tmp_path / "wrong.onnx"
    ortpool.fix(str(DIFFERS)).save(fixed)
    other = onnx.load(fixed)
    other.graph.node[0].op_type = "MaxPool"  # another op under the same names
    onnx.save(other, wrong)
    script = tmp_path / "notebook.py"
    script.write_text(
        "import ortpool\n"
        "report = ortpool.bench(cases='fixed-cost', repeat=1, min_sample_ms=0)\n"
        "print(sorted(r.case.name for r in report.results), report.exit_code)\n"
        f"report = ortpool.bench({str(DIFFERS)!r}, {str(fixed)!r}, repeat=2, min_sample_ms=0)\n"
        "print(repr(report), sorted(report.to_dict()['times']))\n"
        f"for other in ({str(AGREES)!r}, {str(wrong)!r}):\n"
        "    try:\n"
        f"        ortpool.bench({str(DIFFERS)!r}, other, repeat=1)\n"
        "    except ortpool.OrtpoolError as err:\n"
        "        print(str(err).split(':')[0])\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120,
        env=CHILD_ENV, cwd=tmp_path,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.splitlines() == [
        "['fixed-cost'] 0",
        f"<BenchReport: {DIFFERS} against {fixed}, exit 0> ['fixed', 'original', "
        "'original again']",
        f"FIXED {AGREES} does not take the inputs of MODEL {DIFFERS}",
        f"FIXED {wrong} does not compute what MODEL {DIFFERS} means (its pooling nodes as the "
        "ONNX spec defines them)",
    ]


def test_a_report_pickles_and_compares_whichever_way_it_was_made():
    """A report validated in this process (a ModelProto, or isolate=False) held the sites'
    protos: pickle raised "cannot pickle 'RepeatedCompositeContainer'"; and two equal results
    compared with == raised numpy's "truth value of an array ... is ambiguous" (the drawn
    cells of each comparison)."""
    import pickle

    path = str(MODELS / "ort-defect-same-dilated.onnx")
    here = ortpool.validate(onnx.load(path))
    again = pickle.loads(pickle.dumps(here))
    assert again.to_json() == here.to_json() and again.to_html() == here.to_html()
    isolated = ortpool.validate(path)
    (mine,), (theirs,) = here.models, isolated.models
    assert theirs == pickle.loads(pickle.dumps(theirs))
    assert mine.nodes == theirs.nodes and mine.outputs == theirs.outputs
