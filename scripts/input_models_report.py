#!/usr/bin/env python
"""``ortpool validate`` and ``ortpool fix`` on tests/support/models/ as typed and with ``--shape`` /
``--inputs``: exit codes, realizations, and the fixed model in plain onnxruntime against the
original and against the spec (the ortpool-rewritten model): max |difference| of the graph
outputs on an input of the given sizes not used by the proofs. Prints a Markdown table
(docs/validate.md, "Inputs").

Run: ``python scripts/input_models_report.py`` (about a minute; each command in a child process).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "support" / "models"


def _arrays(folder: Path) -> dict[str, Path]:
    """The --inputs files: RoIs for roi-head at 64x96, a MaxPool's output and Indices for
    segnet-unpool."""
    from ortpool import kernels

    rois = np.array([[0, 0, 0, 63, 95], [0, 8, 4, 40, 60], [0, 30, 20, 95, 63], [0, 0, 0, 3, 3]],
                    np.float64)
    np.savez(folder / "rois.npz", rois=rois)
    x = np.random.default_rng(0).normal(size=(1, 4, 16, 16)).astype(np.float32)
    pooled, indices = kernels.max_pool(x, version=12, return_indices=True, kernel_shape=[2, 2],
                                       strides=[2, 2])
    np.savez(folder / "unpool.npz", x=pooled, indices=indices.astype(np.int64),
             output_shape=np.array([1, 4, 16, 16], np.int64))
    return {"rois": folder / "rois.npz", "unpool": folder / "unpool.npz"}


def _runs(files: dict[str, Path]) -> list[tuple[str, list[str]]]:
    rois, unpool = str(files["rois"]), str(files["unpool"])
    return [
        ("resnet-d", []),
        ("resnet-d", ["--shape", "image:2,3,96,128"]),
        ("ocr-neg-batch", []),
        ("ocr-neg-batch", ["--shape", "x:1,3,48,192"]),
        ("fpn-concat", []),
        ("fpn-concat", ["--shape", "x:1,3,1,1"]),
        ("fpn-concat", ["--shape", "x:1,3,48,96"]),
        ("gap-large", []),
        ("gap-large", ["--shape", "x:1,4,320,320"]),
        ("roi-head", []),
        ("roi-head", ["--shape", "image:1,3,64,96", "--inputs", rois]),
        ("segnet-unpool", []),
        ("segnet-unpool", ["--inputs", unpool]),
    ]


def _ortpool(*args: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "ortpool", *args], capture_output=True,
                          text=True, timeout=600, check=False)
    return done.returncode, done.stdout + done.stderr


def _max_diff(a: list[np.ndarray], b: list[np.ndarray]) -> str:
    worst = []
    for x, y in zip(a, b, strict=True):
        if x.shape != y.shape:
            worst.append(f"shape {list(x.shape)} vs {list(y.shape)}")
        else:
            worst.append(f"{float(np.max(np.abs(x.astype(np.float64) - y), initial=0)):.3g}")
    return ", ".join(worst)


def _diffs(original: Path, fixed: Path, options: list[str]) -> tuple[str, str]:
    """Max |fixed - original| over the graph outputs in plain onnxruntime, and max |fixed -
    spec| (the ortpool-rewritten model: every pool by ortpool's kernels), on fresh inputs
    resolved as the commands resolve them (seed 7: not one the proofs used)."""
    import onnx
    import onnxruntime as ort

    import ortpool
    from ortpool.model.inputs import InputSpec, resolve

    shapes = [options[i + 1] for i, a in enumerate(options) if a == "--shape"]
    path = next((options[i + 1] for i, a in enumerate(options) if a == "--inputs"), None)
    model = onnx.load(original)
    feeds = resolve(model, InputSpec.make(shapes, path), seed=7).feeds
    a = ort.InferenceSession(str(original)).run(None, feeds)
    b = ort.InferenceSession(str(fixed)).run(None, feeds)
    spec = ortpool.InferenceSession(ortpool.rewrite(model)).run(None, feeds)
    return _max_diff(b, a), _max_diff(b, spec)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = _arrays(folder)
        print("| model | options | validate | fix | realizations | fixed vs original | fixed vs "
              "spec |")
        print("|---|---|---|---|---|---|---|")
        for name, options in _runs(files):
            model = MODELS / f"{name}.onnx"
            shown = " ".join(o if not o.endswith(".npz") else Path(o).name for o in options)
            v_code, v_text = _ortpool("validate", str(model), *options, "--no-progress")
            out, report = folder / f"{name}.fixed.onnx", folder / f"{name}.json"
            out.unlink(missing_ok=True)
            f_code, f_text = _ortpool("fix", str(model), str(out), *options, "--json",
                                      str(report))
            realized, diff = "", ("", "")
            if report.exists() and f_code != 2:
                document = json.loads(report.read_text())
                realized = ", ".join(
                    f"{n['name']}: {n['form'] or n['realization']}" for n in document["nodes"]
                )
            if out.exists():
                diff = _diffs(model, out, options)
            why = ""
            for text, code in ((v_text, v_code), (f_text, f_code)):
                if code == 2 and not why:
                    line = next(x for x in text.splitlines() if "error:" in x)
                    why = line.split("error: ", 1)[1].replace(f"{model}: ", "")[:110] + "..."
            print(f"| {name} | `{shown or 'as typed'}` | {v_code} | {f_code} | "
                  f"{realized or why} | {diff[0]} | {diff[1]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
