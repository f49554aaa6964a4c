"""``ortpool fix IN OUT``: exit codes, the report, --dry-run, --nodes, --json, external data never
loaded, nothing written unproven; hostile inputs each in a child process with a time limit."""

from __future__ import annotations

import hashlib
import json

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import ortpool
from ortpool.cli import main
from tests.support import unwrap
from tests.support.fix import FIX_MODELS, numpy_kernels, unloadable_model

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

__all__ = ["numpy_kernels"]


def test_exit_0_when_every_node_is_exact_without_ortpool(tmp_path, capsys):
    out, report = tmp_path / "fixed.onnx", tmp_path / "report.json"
    code = main(["fix", str(FIX_MODELS["fix-valid-ceil"]), str(out), "--json", str(report)])
    text = unwrap(capsys.readouterr().out)
    assert code == 0
    assert "2 pooling nodes: standard form 2" in text and f"wrote {out}" in text
    document = json.loads(report.read_text())
    assert document["summary"]["realizations"] == {"standard form": 2}
    assert document["summary"]["forms"] == {"explicit-pads": 2}  # the finite domain: no guard
    node = document["nodes"][0]
    assert node["proof"]["exact"] and node["in_model"]["exact"]
    assert [a["outcome"] for a in node["attempts"][:1]] == ["not exact"]
    onnx.checker.check_model(onnx.load(out))


def test_exit_1_names_the_nodes_that_need_ortpool(tmp_path, capsys):
    code = main(["fix", str(FIX_MODELS["fix-no-kernel"]), str(tmp_path / "o.onnx")])
    text = unwrap(capsys.readouterr().out)
    assert code == 1
    assert (
        "the fixed model needs ortpool at run time (ortpool.InferenceSession) for 1 node: "
        "'averagepool_double'" in text
    )


def test_dry_run_and_nodes(tmp_path, capsys):
    out = tmp_path / "o.onnx"
    code = main(["fix", str(FIX_MODELS["fix-valid-ceil"]), str(out), "--dry-run"])
    assert code == 0 and not out.exists()
    assert "note: nothing written (--dry-run)" in unwrap(capsys.readouterr().out)
    code = main(
        ["fix", str(FIX_MODELS["fix-valid-ceil"]), str(out), "--nodes", "maxpool_valid_ceil"]
    )
    text = unwrap(capsys.readouterr().out)
    assert code == 0
    # "not selected" once (it was said twice: the realization, then the selection's reason)
    assert "node 'averagepool_valid_ceil' (AveragePool): not selected: not named by --nodes\n" in (
        text)
    fixed = {n.name: n for n in onnx.load(out).graph.node}
    source = {n.name: n for n in onnx.load(FIX_MODELS["fix-valid-ceil"]).graph.node}
    assert fixed["averagepool_valid_ceil"] == source["averagepool_valid_ceil"]
    assert fixed["maxpool_valid_ceil"] != source["maxpool_valid_ceil"]


def test_unproven_nodes_are_written_only_when_allowed(tmp_path, capsys):
    # A node of a domain onnxruntime does not know after the pool: the written model cannot be
    # run, so the pool is proven alone only (a local function holding an ortpool op used to be
    # such a model, until the rewrite declared the call's outputs: it is now fixed and proven).
    model = unloadable_model()
    partly = tmp_path / "partly.onnx"
    onnx.save(model, partly)
    out = tmp_path / "o.onnx"
    assert main(["fix", str(partly), str(out)]) == 2 and not out.exists()
    assert "nothing written: some nodes are unproven" in unwrap(capsys.readouterr().err)
    assert main(["fix", str(partly), str(out), "--allow-unproven", "-q"]) == 1 and out.exists()


def test_external_data_is_never_loaded_and_stays_where_it_is(tmp_path):
    """Written as ``ortpool rewrite`` writes: the data file cloned or copied next to the output by
    default, hard-linked with ``link_data``; the source's bytes untouched."""
    source_dir, out_dir = tmp_path / "src", tmp_path / "out"
    source_dir.mkdir()
    out_dir.mkdir()
    model = onnx.load(FIX_MODELS["fix-pads-ge-kernel"])
    onnx.save(model, source_dir / "m.onnx", save_as_external_data=True, location="weights.bin",
              size_threshold=0)
    data = source_dir / "weights.bin"
    digest = hashlib.sha256(data.read_bytes()).hexdigest()
    found = ortpool.fix.fix_file(source_dir / "m.onnx", out_dir / "m.onnx")
    assert found.exit_code() == 0
    assert all(n.in_model and n.in_model["exact"] for n in found.nodes)  # weights were read
    (how,) = [n for n in found.notes if n.startswith("external data weights.bin: ")]
    assert how in (
        "external data weights.bin: cloned next to the output",
        "external data weights.bin: copied next to the output",
    )
    assert not (out_dir / "weights.bin").samefile(data)
    assert (out_dir / "weights.bin").read_bytes() == data.read_bytes()
    written = onnx.load(out_dir / "m.onnx", load_external_data=False)
    assert all(t.data_location == onnx.TensorProto.EXTERNAL for t in written.graph.initializer)
    linked = tmp_path / "linked"
    linked.mkdir()
    found = ortpool.fix.fix_file(source_dir / "m.onnx", linked / "m.onnx", link_data=True)
    assert "external data weights.bin: hard-linked next to the output" in found.notes
    assert (linked / "weights.bin").samefile(data)
    assert hashlib.sha256(data.read_bytes()).hexdigest() == digest


def _invalid_model(path):
    node = h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2],
                       auto_pad="SAME_UPPER", pads=[1, 1, 1, 1])
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 4, 4])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 12)])
    model.ir_version = 8
    onnx.save(model, path)


def test_skip_invalid_leaves_an_invalid_node_and_says_why(tmp_path, capsys):
    _invalid_model(tmp_path / "m.onnx")
    code = main(["fix", str(tmp_path / "m.onnx"), str(tmp_path / "o.onnx"), "--skip-invalid"])
    assert code == 0
    assert (
        "node 'p' (MaxPool): not selected: invalid: pads='1,1,1,1' cannot be used with "
        "auto_pad='SAME_UPPER'" in unwrap(capsys.readouterr().out)
    )
