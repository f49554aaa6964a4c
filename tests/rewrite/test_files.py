"""Files: external data never loaded nor modified, the output runs from another directory; and
the CLI (exit codes, summary, --json) without importing onnxruntime."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import ortpool
from ortpool import OrtpoolError
from ortpool.validate.validator import bundled_models_dir
from tests import support
from tests.support.rewrite import vi

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

ROOT = Path(__file__).resolve().parents[2]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def external_model(tmp_path_factory) -> Path:
    """~4 MB of weights in data/weights.bin; pools in the main graph and an If branch."""
    folder = tmp_path_factory.mktemp("src")
    rng = np.random.default_rng(3)
    weights = numpy_helper.from_array(rng.standard_normal((1, 4, 512, 512)).astype(np.float32), "w")
    branch = h.make_graph(
        [
            h.make_node(
                "AveragePool", ["s"], ["b"], name="branch_pool", kernel_shape=[4, 4], strides=[4, 4]
            )
        ],
        "then",
        [],
        [vi("b")],
    )
    other = h.make_graph(
        [
            h.make_node(
                "MaxPool", ["s"], ["c"], name="else_pool", kernel_shape=[4, 4], strides=[4, 4]
            )
        ],
        "else",
        [],
        [vi("c")],
    )
    nodes = [
        h.make_node("Add", ["x", "w"], ["s"], name="add"),
        h.make_node("If", ["cond"], ["y"], name="if", then_branch=branch, else_branch=other),
        h.make_node("MaxPool", ["s"], ["m"], name="main_pool", kernel_shape=[8, 8], strides=[8, 8]),
    ]
    graph = h.make_graph(
        nodes,
        "ext",
        [vi("x", T.FLOAT, [1, 4, 512, 512]), vi("cond", T.BOOL, [])],
        [vi("y"), vi("m")],
        [weights],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    (folder / "data").mkdir()
    onnx.save(
        model,
        folder / "model.onnx",
        save_as_external_data=True,
        location="data/weights.bin",
        size_threshold=0,
    )
    return folder / "model.onnx"


def test_external_data_is_copied_and_untouched(external_model: Path, tmp_path: Path) -> None:
    data = external_model.parent / "data" / "weights.bin"
    before = sha(data), data.stat().st_mtime_ns
    out = tmp_path / "out" / "rewritten.onnx"
    out.parent.mkdir()  # the output's folder must exist; only data subfolders are created
    report = ortpool.rewrite.rewrite_file(external_model, out)
    assert (sha(data), data.stat().st_mtime_ns) == before
    how = "cloned" if _can_clone(tmp_path) else "copied"
    assert report.notes == [f"external data data/weights.bin: {how} next to the output"]
    assert not os.path.samefile(data, out.parent / "data" / "weights.bin")
    assert sha(out.parent / "data" / "weights.bin") == before[0]
    # onnx refuses data files with two hard links: neither model is linked to the other
    onnx.load(str(external_model))
    onnx.load(str(out))
    assert out.stat().st_size < 10_000  # the proto alone
    feed = {"x": np.ones((1, 4, 512, 512), np.float32), "cond": np.array(True)}
    expected = ort.InferenceSession(str(external_model)).run(None, feed)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cwd = os.getcwd()
    os.chdir(elsewhere)  # the output resolves its data from its own directory
    try:
        got = ortpool.InferenceSession(str(out)).run(None, feed)
    finally:
        os.chdir(cwd)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)  # average: summation order
    # a second run finds the same file in place; restore hard-links it elsewhere when told to
    assert ortpool.rewrite.rewrite_file(external_model, out).notes == [
        "external data data/weights.bin: already present next to the output"
    ]
    back = tmp_path / "back" / "model.onnx"
    back.parent.mkdir()
    assert ortpool.rewrite.restore_file(out, back, link_data=True).notes == [
        "external data data/weights.bin: hard-linked next to the output"
    ]
    assert os.path.samefile(out.parent / "data" / "weights.bin", back.parent / "data" /
                            "weights.bin")
    assert sha(data) == before[0]


def _can_clone(folder: Path) -> bool:
    """Whether this filesystem makes copy-on-write clones (the expected note depends on it)."""
    from ortpool.staging import _clone

    source = folder / "clone-probe"
    source.write_bytes(b"x")
    try:
        return _clone(source, folder / "clone-probe-2")
    finally:
        for p in (source, folder / "clone-probe-2"):
            p.unlink(missing_ok=True)


def test_external_data_conflicts_are_refused(external_model: Path, tmp_path: Path) -> None:
    taken = tmp_path / "data" / "weights.bin"
    taken.parent.mkdir()
    taken.write_bytes(b"something else")
    with pytest.raises(OrtpoolError, match="exists and differs from the model's external data"):
        ortpool.rewrite.rewrite_file(external_model, tmp_path / "m.onnx")
    assert taken.read_bytes() == b"something else"
    with pytest.raises(OrtpoolError, match="is the input model; write to another path"):
        ortpool.rewrite.rewrite_file(external_model, external_model)


def test_path_input_does_not_load_weights(external_model: Path) -> None:
    model = ortpool.rewrite(external_model)
    (weights,) = model.graph.initializer
    assert weights.data_location == onnx.TensorProto.EXTERNAL and not weights.raw_data


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run the CLI in a child process that reports whether onnxruntime got imported (forked
    from the command server, which never imports onnxruntime: support.run_child)."""
    return support.run_child("tests.support.rewrite", "cli_child", str(cwd), *args, timeout=120)


def test_cli_rewrite_and_restore(tmp_path: Path) -> None:
    cnn = bundled_models_dir() / "cnn.onnx"
    done = cli(
        "rewrite",
        str(cnn),
        "out.onnx",
        "--json",
        "report.json",
        "--exclude",
        "maxpool_half",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "retargeted 7 of 8 pooling nodes (AveragePool-11: 3, MaxPool-12: 3, MaxUnpool-11: 1)"
    )
    assert lines[1:3] == [
        "left alone 1:",
        "  node 'maxpool_half' (MaxPool) in main graph: left "
        "alone: not selected: named by --exclude",
    ]
    assert lines[-1] == "ORT-NOT-IMPORTED"
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["summary"] == {
        "considered": 8,
        "changed": 7,
        "left_alone": 1,
        "per_op_version": {"AveragePool-11": 3, "MaxPool-12": 3, "MaxUnpool-11": 1},
    }
    done = cli("restore", "out.onnx", "back.onnx", "-q", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "ORT-NOT-IMPORTED\n")
    assert onnx.load(tmp_path / "back.onnx") == onnx.load(cnn)


def _save_bad_model(folder: Path) -> None:
    """bad.onnx: a MaxPool-12 node without its required kernel_shape."""
    bad = h.make_model(
        h.make_graph(
            [h.make_node("MaxPool", ["x"], ["y"], name="p")],
            "g",
            [vi("x", T.FLOAT, [1, 1, 4, 4])],
            [vi("y")],
        ),
        opset_imports=[h.make_opsetid("", 12)],
    )
    onnx.save(bad, folder / "bad.onnx")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["rewrite", "missing.onnx", "o.onnx"],
            "ortpool rewrite: error: missing.onnx: no such model file\n",
        ),
        (
            ["rewrite", "{cnn}", "o.onnx", "--ops", "Pool"],
            "ortpool rewrite: error: --ops: 'Pool' "
            "is not a pooling operator; choose from MaxPool,AveragePool,MaxUnpool,LpPool,"
            "GlobalMaxPool,GlobalAveragePool,GlobalLpPool,MaxRoiPool\n",
        ),
        (
            ["restore", "{cnn}", "o.onnx", "--nodes", "conv"],
            "ortpool restore: error: --nodes: no ortpool node is named 'conv'\n",
        ),
        (
            ["rewrite", "{bad}", "o.onnx"],
            "ortpool rewrite: error: node 'p' (MaxPool-12): attribute 'kernel_shape' is required\n",
        ),
    ],
)
def test_cli_errors(args: list[str], message: str, tmp_path: Path) -> None:
    _save_bad_model(tmp_path)
    cnn = bundled_models_dir() / "cnn.onnx"
    args = [a.format(cnn=cnn, bad=tmp_path / "bad.onnx") for a in args]
    done = cli(*args, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, message)
    assert not (tmp_path / "o.onnx").exists()


def test_cli_skip_invalid(tmp_path: Path) -> None:
    _save_bad_model(tmp_path)
    done = cli("rewrite", "bad.onnx", "o.onnx", "--skip-invalid", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.splitlines()[:3] == [
        "retargeted 0 of 1 pooling nodes",
        "left alone 1:",
        "  node 'p' (MaxPool-12) in main graph: left alone: invalid: attribute 'kernel_shape' is "
        "required",
    ]
