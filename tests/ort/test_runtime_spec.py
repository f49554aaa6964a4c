"""The runtime description (``ortpool.ort.runtime_spec``), its shared options
(``ortpool.options.runtime``), where each node ran, and ortpool without onnxruntime.

The CPU build's AzureExecutionProvider takes no pooling node: asked first, every node falls back
to the CPU provider, which is how a fallback is tested without another build.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from ortpool.cli import main
from ortpool.model.singlenode import alone_model, feed_dict
from ortpool.model.site import Site
from ortpool.options import runtime as runtime_args
from ortpool.ort import ortrun, runtime
from ortpool.ort.runtime_spec import CPU, Provider, RuntimeSpec, parse_providers
from tests.support import CHILD_ENV, run_cli

pytestmark = pytest.mark.onnxruntime

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
AZURE = "AzureExecutionProvider"
needs_azure = pytest.mark.skipif(
    AZURE not in ort.get_available_providers(), reason="this build has no AzureExecutionProvider"
)


def _read(*argv: str, level: str = "disable") -> RuntimeSpec:
    parser = argparse.ArgumentParser()
    runtime_args.add_arguments(parser, level, "test")
    return runtime_args.from_args(parser.parse_args(list(argv)))


def test_the_options_read_into_one_description_and_its_session_options():
    spec = _read(
        "--providers",
        "cpu",
        "--provider-option",
        "cpu:arena_extend_strategy=kSameAsRequested",
        "--optimize",
        "--intra-op-threads",
        "2",
        "--inter-op-threads",
        "3",
        "--execution-mode",
        "parallel",
    )
    assert spec == RuntimeSpec(
        providers=(Provider(CPU, (("arena_extend_strategy", "kSameAsRequested"),)),),
        level="all",
        intra_op_threads=2,
        inter_op_threads=3,
        mode="parallel",
    )
    options = spec.session_options()
    assert options.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (2, 3)
    assert options.execution_mode == ort.ExecutionMode.ORT_PARALLEL
    assert spec.session_options(level="disable", threads=1).graph_optimization_level == (
        ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    )
    # the command's own default level, and the names onnxruntime's session takes
    assert _read().level == "disable" and _read(level="all").level == "all"
    assert parse_providers("openvino, CUDAExecutionProvider") == (
        Provider("OpenVINOExecutionProvider"),
        Provider("CUDAExecutionProvider"),
    )
    assert parse_providers(None) == (Provider(CPU),)
    assert spec.provider_arguments() == {
        "providers": [CPU],
        "provider_options": [{"arena_extend_strategy": "kSameAsRequested"}],
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--providers", "NoSuchEP"],
            "--providers: NoSuchEP is not available in this onnxruntime "
            "({build} {version}; available: {available}); every build installs the same module, so "
            "another provider needs its own build (e.g. onnxruntime-gpu, onnxruntime-openvino) in "
            "place of this one",
        ),
        (
            ["--provider-option", "openvino:device_type=CPU"],
            "--provider-option "
            "'openvino:device_type=CPU': OpenVINOExecutionProvider is not among --providers "
            "(CPUExecutionProvider)",
        ),
        (["--provider-option", "cpu"], "--provider-option 'cpu': write EP:KEY=VALUE"),
        (["--intra-op-threads", "-1"], "--intra-op-threads=-1 must be >= 0"),
    ],
    ids=["unknown-provider", "option-of-another", "option-without-value", "negative-threads"],
)
def test_each_command_refuses_a_bad_runtime_option_in_one_line(argv, message, capsys):
    build = runtime.build()
    expected = message.format(
        build=build["distribution"],
        version=ort.__version__,
        available=", ".join(ort.get_available_providers()),
    )
    model = str(MODELS / "maxpool-12.onnx")
    for command in (
        ["validate", model],
        ["conformance", "--ops", "MaxPool"],
        ["bench", "--cases", "vgg"],
        ["fix", model, "unused.onnx"],
    ):
        assert main([*command, *argv]) == 2
        assert capsys.readouterr().err == f"ortpool {command[0]}: error: {expected}\n"


def test_the_build_is_named_from_the_installed_module():
    build = runtime.build()
    assert build["version"] == ort.__version__
    assert metadata.version(build["distribution"]) == ort.__version__
    assert build["providers"] == ", ".join(ort.get_available_providers())


def _same_dilated() -> tuple[Site, np.ndarray]:
    x = np.arange(81, dtype=np.float32).reshape(1, 1, 9, 9)
    attrs = {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "dilations": [2, 2]}
    return Site.alone("MaxPool", 12, attrs, "float", x.shape), x


@needs_azure
def test_placement_names_the_provider_that_ran_each_node():
    spec, x = _same_dilated()
    model = alone_model(spec, [x])
    cpu_only = RuntimeSpec(level="disable")
    outputs, placed = ortrun.run_placed(model, feed_dict([x]), cpu_only)
    assert placed == {}  # the CPU provider alone: nothing can fall back, nothing profiled
    azure = RuntimeSpec(parse_providers("azure,cpu"), level="disable")
    fallen, placed = ortrun.run_placed(model, feed_dict([x]), azure)
    assert placed == {"node": CPU}
    # bench's runtime shares this process's pool; the worker process has none of its own
    shared = dataclasses.replace(azure, shared_pool=True)
    assert ortrun.run_placed(model, feed_dict([x]), shared)[1] == {"node": CPU}
    np.testing.assert_array_equal(fallen[0], outputs[0])


@needs_azure
def test_validate_says_a_node_fell_back_instead_of_crediting_the_asked_provider(tmp_path, capsys):
    report = tmp_path / "report.json"
    model = str(MODELS / "maxpool-12.onnx")
    assert (
        main(["validate", model, "--providers", "azure", "--no-progress", "--json", str(report)])
        == 0
    )
    out = capsys.readouterr().out
    # an agreeing node another provider executed is shown by default: its verdict is the CPU's
    assert out.splitlines()[1:6] == [
        "  maxpool12  MaxPool-12 uint8  k=3x3 p=2,2,2,2 d=2x2  agree",
        "      fell back to CPUExecutionProvider alone: onnxruntime's values here are not",
        "          AzureExecutionProvider's",
        "      fell back to CPUExecutionProvider in the model: onnxruntime's values here are not",
        "          AzureExecutionProvider's",
    ]
    (node,) = json.loads(report.read_text())["models"][0]["nodes"]
    assert (node["executed_by"], node["executed_in_model"], node["asked_provider"]) == (
        CPU,
        CPU,
        AZURE,
    )
    # on the CPU provider alone nothing is profiled and no column is added
    assert main(["validate", model, "--no-progress", "--json", str(report)]) == 0
    assert "executed by" not in capsys.readouterr().out
    (node,) = json.loads(report.read_text())["models"][0]["nodes"]
    assert (node["executed_by"], node["asked_provider"]) == (None, None)


@needs_azure
def test_conformance_counts_the_cases_that_fell_back(capsys, tmp_path):
    report = tmp_path / "conformance.json"
    argv = [
        "conformance",
        "--ops",
        "GlobalMaxPool",
        "--versions",
        "1",
        "--ranks",
        "1",
        "--dtypes",
        "float",
        "--nonfinite",  # the NaN case too: two cases the CPU provider runs
        "--no-progress",
        "--json",
        str(report),
    ]
    assert main([*argv, "--providers", "azure"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(
        f"ortpool conformance: {runtime.build()['distribution']} {ort.__version__} on "
        "AzureExecutionProvider: built-in pooling against the ONNX spec"
    )
    document = json.loads(report.read_text())
    executed = [case["executed_by"] for case in document["cases"]]
    # every case the built-in ran was the CPU provider's (one the runtime refuses ran nowhere)
    assert set(executed) <= {CPU, None} and executed.count(CPU) >= 2
    columns = re.split(r"\s{2,}", lines[3])
    row = dict(zip(columns, re.split(r"\s{2,}", lines[5]), strict=False))
    # every verdict of a case the CPU provider computed is there, none credited to Azure's
    (matrix_row,) = document["matrix"]
    assert matrix_row["fell_back"] == {CPU: executed.count(CPU)}
    assert sum(matrix_row["fell_back_statuses"].values()) == executed.count(CPU)
    assert sum(matrix_row["statuses"].values()) == executed.count(None)
    assert row["fell back"].startswith(f"{executed.count(CPU)} to CPU (")
    assert row["agree"] == row["spec text"] == row["ruling"] == row["RULINGS"] == "0"
    assert main(argv) == 0
    assert "fell back" not in capsys.readouterr().out


@needs_azure
def test_bench_says_which_provider_executed_the_built_in_node():
    from ortpool.bench import cases, runner

    (case,) = cases.select(["fixed-cost"])
    settings = runner.Settings(
        repeat=1, min_sample=0.0, reference_limit=0.0, runtime=RuntimeSpec(parse_providers("azure"))
    )
    assert runner.run_case(case, settings).executed_by == CPU


def test_one_onnxruntime_session_constructor_and_imports_only_under_ort():
    constructors, importers = [], set()
    for path in sorted((ROOT / "ortpool").rglob("*.py")):
        text = path.read_text()
        where = path.relative_to(ROOT).as_posix()
        constructors += [where for _ in re.finditer(r"\bort\.InferenceSession\(", text)]
        constructors += [where for _ in re.finditer(r"\bonnxruntime\.InferenceSession\(", text)]
        if re.search(r"^\s*(import onnxruntime\b|from onnxruntime(\.| ))", text, re.MULTILINE):
            importers.add(where)
    assert constructors == ["ortpool/ort/runtime.py"]
    assert {p.rsplit("/", 1)[0] for p in importers} == {"ortpool/ort"}


BLOCK_ONNXRUNTIME = r"""
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "onnxruntime":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
"""


def _without_onnxruntime(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", BLOCK_ONNXRUNTIME + code],
        cwd=cwd,
        env=CHILD_ENV,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_without_onnxruntime_the_commands_that_need_it_say_what_to_install(tmp_path):
    model = MODELS / "maxpool-12.onnx"
    code = (
        "from ortpool.cli import main\n"
        "for argv in (['validate', {m!r}], ['fix', {m!r}, 'f.onnx'], ['conformance'],\n"
        "             ['bench', '--cases', 'vgg'], ['rewrite', {m!r}, 'r.onnx'], ['ops']):\n"
        "    print('RC', argv[0], main(argv), flush=True)\n"
        "import ortpool\n"
        "try:\n"
        "    ortpool.InferenceSession\n"
        "except ModuleNotFoundError as err:\n"
        "    print('InferenceSession:', err)\n"
    ).format(m=str(model))
    done = _without_onnxruntime(code, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line for line in lines if line.startswith("RC ")] == [
        "RC validate 2",
        "RC fix 2",
        "RC conformance 2",
        "RC bench 2",
        "RC rewrite 0",
        "RC ops 0",
    ]
    assert lines[-1] == f"InferenceSession: {runtime.INSTALL_HINT}"
    assert done.stderr.splitlines() == [
        f"ortpool {command}: error: {runtime.INSTALL_HINT}"
        for command in ("validate", "fix", "conformance", "bench")
    ]
    assert runtime.INSTALL_HINT == (
        "no onnxruntime installed: pip install onnxruntime (or one build of onnxruntime-gpu, "
        "onnxruntime-openvino, onnxruntime-directml, ...)"
    )
    assert (tmp_path / "r.onnx").is_file() and not (tmp_path / "f.onnx").exists()


def test_ortpool_inference_session_takes_providers_as_onnxruntime_does():
    from ortpool import InferenceSession
    from ortpool.rewrite import rewrite

    spec, x = _same_dilated()
    model = rewrite(alone_model(spec, [x]))
    with_options = InferenceSession(model, providers=[(CPU, {"arena_extend_strategy": "0"})])
    assert with_options.runtime.providers == (Provider(CPU, (("arena_extend_strategy", "0"),)),)
    assert with_options.get_providers() == [CPU]
    (y,) = with_options.run(None, feed_dict([x]))
    assert y.shape == (1, 1, 9, 9)  # the spec's SAME size, where the CPU built-in gives 7x7


@needs_azure
def test_fix_proves_on_the_providers_named_and_says_where_the_form_ran():
    from ortpool.fix import fix_with_report

    model = MODELS / "fix" / "fix-valid-ceil.onnx"
    _, on_cpu = fix_with_report(model)
    _, on_azure = fix_with_report(model, providers="azure")
    assert on_azure.runtime["providers"] == [AZURE]
    for cpu_node, azure_node in zip(on_cpu.nodes, on_azure.nodes, strict=True):
        assert (azure_node.realization, azure_node.form) == (cpu_node.realization, cpu_node.form)
        assert azure_node.form.startswith("explicit-pads")
        (proven,) = [a for a in azure_node.attempts if a.outcome == "proven"]
        op = azure_node.op
        # at level all the CPU provider also runs its layout's Reorder nodes around the pool
        fell = re.fullmatch(
            r"exact on \d+ input sets? \(.*\); (.*) fell back to "
            r"CPUExecutionProvider",
            proven.detail,
        )
        assert fell is not None and op in fell.group(1).split(", "), proven.detail
        # on the CPU provider alone nothing can fall back and the proof names no provider
        (plain,) = [a for a in cpu_node.attempts if a.outcome == "proven"]
        assert "ExecutionProvider" not in plain.detail


OPENVINO = "OpenVINOExecutionProvider"
needs_openvino = pytest.mark.skipif(
    OPENVINO not in ort.get_available_providers(),
    reason="needs onnxruntime-openvino (the OpenVINO child environment runs these)",
)


@pytest.mark.openvino
@needs_openvino
def test_fix_differs_between_the_cpu_and_the_openvino_provider_and_each_is_exact_there():
    """SAME with dilation: the CPU provider pads for the undilated kernel (7x7 for the spec's
    8x8), the OpenVINO provider computes the spec's; so the fix differs per provider."""
    from ortpool.fix import fix_with_report

    model = MODELS / "fix" / "fix-same-dilated.onnx"
    _, on_cpu = fix_with_report(model)
    _, on_openvino = fix_with_report(model, providers="openvino")
    assert all(n.form.startswith("explicit-pads") for n in on_cpu.nodes)
    forms = {n.name: (n.realization, n.form) for n in on_openvino.nodes}
    # no node needs the explicit pads there (MaxPool may still need the NaN guard: OpenVINO
    # gives the lowest float for a window of -inf only)
    assert all("pads" not in (form or "") for _, form in forms.values())
    assert forms["averagepool_same_dilated"][0] == "unchanged"
    for found in (on_cpu, on_openvino):
        assert not found.unproven
        # each written model proven exact in the model, on the provider it was fixed for
        assert all(n.in_model is not None and n.in_model["exact"] for n in found.nodes)
    for node in on_openvino.nodes:
        (proven,) = [a for a in node.attempts if a.outcome == "proven"]
        assert proven.detail.endswith((f" on {OPENVINO}", " fell back to CPUExecutionProvider")), (
            proven.detail
        )


@pytest.mark.openvino
@needs_openvino
def test_validate_on_openvino_names_the_provider_of_each_node(tmp_path, capsys):
    report = tmp_path / "report.json"
    assert (
        main(
            [
                "validate",
                str(MODELS / "maxunpool-11.onnx"),
                "--providers",
                "openvino",
                "--no-progress",
                "--no-guard-cost",
                "--json",
                str(report),
            ]
        )
        == 1
    )
    nodes = {n["op"]: n for n in json.loads(report.read_text())["models"][0]["nodes"]}
    # OpenVINO (onnxruntime-openvino 1.24.1) answers a window of equal values, all the lowest
    # finite float, with an index outside the window: a built case of the finite domain (ruling
    # 20) the model's own run does not reach, and the Indices feed the MaxUnpool
    assert nodes["MaxPool"]["status"] == "differ"
    assert "Indices differ in " in nodes["MaxPool"]["judged"]
    assert "among the lowest finite" in nodes["MaxPool"]["judged"]
    assert nodes["MaxUnpool"]["status"] == "agree"
    # OpenVINO takes the MaxPool; it has no MaxUnpool, which falls back to the CPU provider
    assert (nodes["MaxPool"]["executed_by"], nodes["MaxPool"]["executed_in_model"]) == (
        OPENVINO,
        OPENVINO,
    )
    assert (nodes["MaxUnpool"]["executed_by"], nodes["MaxUnpool"]["executed_in_model"]) == (
        CPU,
        CPU,
    )
    assert "fell back to CPUExecutionProvider alone" in capsys.readouterr().out


class _EndsTheProcess:
    """Unpickled in the worker, it ends the worker's process as a crashing provider does."""

    def __reduce__(self):
        import os

        return (os._exit, (3,))


@needs_azure
def test_a_provider_ending_its_process_is_one_failure_and_the_next_run_works():
    spec, x = _same_dilated()
    model = alone_model(spec, [x])
    azure = RuntimeSpec(parse_providers("azure"), level="disable")
    with pytest.raises(ortrun.OrtFailure) as caught:
        ortrun.run_placed(model, {"X": _EndsTheProcess()}, azure)
    assert (caught.value.kind, caught.value.message) == (
        ortrun.RUN_FAILED,
        f"onnxruntime on {AZURE}: the worker exited with code 3 on this case",
    )
    outputs, placed = ortrun.run_placed(model, feed_dict([x]), azure)  # a new worker
    assert placed == {"node": CPU} and outputs[0].shape == (1, 1, 7, 7)


@needs_openvino
def test_validate_survives_the_openvino_provider_aborting(tmp_path):
    """MaxPool 2x2/2 on 9x9, then MaxUnpool to 8x8: an index (70) beyond the output, which
    ortpool refuses and the OpenVINO provider answers with abort() (in the worker)."""
    from onnx import TensorProto, helper

    nodes = [
        helper.make_node(
            "MaxPool", ["x"], ["t", "i"], name="pool", kernel_shape=[2, 2], strides=[2, 2]
        ),
        helper.make_node(
            "MaxUnpool", ["t", "i"], ["y"], name="unpool", kernel_shape=[2, 2], strides=[2, 2]
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 8
    path = tmp_path / "aborts.onnx"
    path.write_bytes(model.SerializeToString())
    done = run_cli("validate", str(path), "--providers", "openvino", "--no-progress", cwd=tmp_path)
    assert done.returncode == 2
    # one line for the model (its wording around the failure is the validator's), not an abort
    last = done.stderr.splitlines()[-1]
    assert last.startswith(f"ortpool validate: error: {path}: ")
    # the provider's last words (its abort message) may follow
    assert re.search(f"onnxruntime on {OPENVINO}: the worker was killed by SIGABRT on this case"
                     "(: .*)?$", last)
