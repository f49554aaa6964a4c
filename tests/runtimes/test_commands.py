"""``--runtime NAME`` on the commands (issue 35): ``ortpool conformance --runtime tract`` counts
tract's abort as one crashed case and completes the grid; ``ortpool validate --runtime openvino``
and ``--runtime tract`` judge each node of a bundled CNN on that runtime, every view naming it;
onnxruntime's own options refused beside another runtime. Each command in a child process with
a time limit."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.support import ROOT, commands_in_child, run_cli

MODELS = ROOT / "models"

needs = {name: pytest.mark.skipif(importlib.util.find_spec(name) is None,
                                  reason=f"{name} is not installed")
         for name in ("openvino", "tract")}


@needs["tract"]
def test_conformance_on_tract_counts_its_abort_as_a_crashed_case_and_completes(tmp_path):
    done = run_cli("conformance", "--runtime", "tract", "--ops", "GlobalAveragePool,GlobalLpPool",
                   "--versions", "1,22", "--dtypes", "float", "--ranks", "1", "--json",
                   "c.json", "--no-progress", cwd=tmp_path, timeout=180)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["runtime"]["runtime"] == "tract" and doc["runtime"]["case_timeout"] == 60.0
    crashed = [c for c in doc["cases"] if c["status"] == "crashed"]
    # one case per op-version: the zero-size plane (tract divides by zero and aborts)
    assert sorted((c["op"], c["version"]) for c in crashed) == [
        ("GlobalAveragePool", 1), ("GlobalAveragePool", 22), ("GlobalLpPool", 1),
        ("GlobalLpPool", 22)]
    for case in crashed:
        assert case["causes"][0]["code"] == "crashed"
        assert "SIGABRT" in case["causes"][0]["detail"], case["causes"][0]
    # the grid went on: every other case has its verdict, none of them crashed
    assert len(doc["cases"]) == 12 and all(c["status"] != "timed-out" for c in doc["cases"])
    rows = {f"{r['op']}-{r['version']}": r for r in doc["matrix"]}
    assert rows["GlobalAveragePool-1"]["statuses"]["crashed"] == 1
    # GlobalLpPool as (mean x^p)^(1/p): the spec's words "the Lp norm" (GlobalLpPool-22's text)
    assert rows["GlobalLpPool-22"]["bases"] == {"spec text": 3}
    assert doc["causes"]["global-norm-mean"]["bases"]["spec text"] >= 3
    table = done.stdout.splitlines()
    head = next(line for line in table if line.startswith("op-version"))
    assert head.split()[:12] == ["op-version", "cases", "agree", "spec", "text", "ruling",
                                 "RULINGS", "refused", "no", "kernel", "crashed", "timed"]
    row = next(line for line in table if line.startswith("GlobalAveragePool-1 "))
    assert row.split()[1:11] == ["2", "1", "0", "0", "0", "0", "0", "1", "0", "0"]
    assert done.stdout.splitlines()[0].startswith("ortpool conformance: tract 0.")


@pytest.mark.parametrize("runtime", ["openvino", "tract"])
def test_validate_judges_each_node_of_a_bundled_cnn_on_the_runtime_named(runtime, tmp_path):
    if importlib.util.find_spec(runtime) is None:
        pytest.skip(f"{runtime} is not installed")
    done = run_cli("validate", str(MODELS / "cnn.onnx"), "--runtime", runtime, "--no-progress",
                   "-v", "--json", "v.json", cwd=tmp_path, timeout=180)
    doc = json.loads((tmp_path / "v.json").read_text())
    (model,) = doc["models"]
    nodes = {n["name"]: n for n in model["nodes"]}
    assert len(nodes) == 8 and {n["runtime"] for n in nodes.values()} == {runtime}
    assert model["runtime"].startswith({"openvino": "OpenVINO 20", "tract": "tract 0."}[runtime])
    if runtime == "openvino":  # the precision stated, f32 by default (not the bf16 hint)
        assert doc["settings"]["runtime"]["precision"] == "f32"
    # neither has a MaxUnpool: the node says so in the runtime's words, and nothing is compared
    # end to end (the runtime cannot run the model)
    assert nodes["maxunpool"]["status"] == "no-kernel"
    assert f"maxunpool  MaxUnpool-11  k=2x2 s=2x2  no {runtime} kernel" in done.stdout
    assert f"{runtime} could not run the model" in done.stdout
    # every other node was judged on its captured input or the built cases
    assert all(n["compared"] for k, n in nodes.items() if k != "maxunpool")
    assert nodes["averagepool_same"]["status"] == "agree"
    # the verdict and its exit code agree, and the basis of each difference is counted
    differing = [n for n in nodes.values() if n["status"] in ("differ", "inaccurate")]
    assert done.returncode == (1 if differing else 0), done.stderr
    assert doc["bases"] == ({"ruling 6": len(differing)} if differing else {})
    for node in differing:  # ties: another index of an equal maximum (ruling 6)
        assert node["basis"] == {"basis": "ruling 6", "ruling": 6, "quote": None}


def test_onnxruntimes_options_and_bad_runtime_options_are_refused(tmp_path):
    model = str(MODELS / "maxpool-12.onnx")
    cases = [
        ["validate", model, "--runtime", "nope"],
        ["validate", model, "--runtime", "tract", "--providers", "cpu"],
        ["conformance", "--runtime", "reference", "--optimize", "--intra-op-threads", "2"],
        ["validate", model, "--runtime-option", "precision=f32"],
        ["validate", model, "--runtime", "tract", "--runtime-option", "precision"],
        ["validate", model, "--runtime", "tract", "--case-timeout", "nan"],
        ["validate", model, "--case-timeout", "5"],  # onnxruntime: the flag would do nothing
        ["conformance", "--runtime", "onnxruntime", "--case-timeout", "0.5"],
    ]
    found = commands_in_child(cases, cwd=tmp_path, timeout=120)
    assert found == [
        (2, "ortpool validate: error: --runtime 'nope' is not a runtime ortpool knows: "
            "onnxruntime, openvino, reference, tract\n"),
        (2, "ortpool validate: error: --providers is onnxruntime's; --runtime tract takes "
            "--runtime-option and --case-timeout (leave it out)\n"),
        (2, "ortpool conformance: error: --opt-level, --intra-op-threads are onnxruntime's; "
            "--runtime reference takes --runtime-option and --case-timeout (leave them out)\n"),
        (2, "ortpool validate: error: --runtime-option precision=f32: onnxruntime's options are "
            "--providers, --opt-level and the threads\n"),
        (2, "ortpool validate: error: --runtime-option 'precision': write KEY=VALUE\n"),
        (2, "ortpool validate: error: --case-timeout=nan must be a finite number of seconds > 0 "
            "and <= 1000000\n"),
        (2, "ortpool validate: error: --case-timeout=5.0 limits a run of another --runtime in "
            "its worker process; onnxruntime runs in this process, where it would do nothing "
            "(leave it out)\n"),
        (2, "ortpool conformance: error: --case-timeout=0.5 limits a run of another --runtime in "
            "its worker process; onnxruntime runs in this process, where it would do nothing "
            "(leave it out)\n"),
    ]
    assert not list(tmp_path.iterdir())


@needs["openvino"]
def test_a_device_openvino_does_not_have_is_refused_before_any_model(tmp_path):
    """``--runtime-option device=NPU7``: exit 2 at once with the devices there are (it failed
    every model, then ended in a traceback writing the report's settings, exit 1)."""
    import ortpool
    from ortpool import runtimes
    from ortpool.errors import OrtpoolError

    model = str(MODELS / "maxpool-12.onnx")
    cases = [["validate", model, model, "--runtime", "openvino", "--runtime-option",
              "device=NPU7"],
             ["conformance", "--ops", "MaxPool", "--runtime", "openvino", "--runtime-option",
              "device=NPU7"]]
    found = commands_in_child(cases, cwd=tmp_path, timeout=120)
    for (code, stderr), command in zip(found, ("validate", "conformance"), strict=True):
        assert code == 2 and stderr.startswith(
            f"ortpool {command}: error: --runtime-option: openvino: device 'NPU7' is not "
            "available here (available: "), stderr
        assert stderr.count("\n") == 1
    with pytest.raises(OrtpoolError, match=r"^runtime=OpenVINO\(device='NPU7', precision='f32'"
                       r"\): openvino: device 'NPU7' is not available here"):
        ortpool.validate(model, runtime=runtimes.get("openvino", device="NPU7"))
    assert not list(tmp_path.iterdir())


def test_a_node_ortpool_refuses_is_named_when_the_runtime_fails_on_it_too(tmp_path):
    """MaxPool kernel_shape=[0, 2]: the reference evaluator fails in its run (tract aborts), and
    the error blamed the sizes chosen, leaving out ortpool's refusal that names the node, the
    attribute and the value (onnxruntime, which refuses it at load, had both)."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    graph = h.make_graph([h.make_node("MaxPool", ["X"], ["Y"], name="p", kernel_shape=[0, 2])],
                         "g", [h.make_tensor_value_info("X", T.FLOAT, [1, 2, 6, 6])],
                         [h.make_tensor_value_info("Y", T.FLOAT, None)])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)]), tmp_path / "m.onnx")
    ((code, stderr),) = commands_in_child(
        [["validate", "m.onnx", "--runtime", "reference", "--no-progress"]], cwd=tmp_path,
        timeout=120)
    assert code == 2 and stderr.startswith(
        "ortpool validate: error: m.onnx: reference could not run the model: reference: "), stderr
    assert stderr.endswith("; ortpool could not rewrite the model: node 'p' (MaxPool-12): "
                           "kernel_shape='0,2' must all be >= 1\n"), stderr
