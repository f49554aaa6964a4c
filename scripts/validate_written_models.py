#!/usr/bin/env python
"""``ortpool validate`` on what ``ortpool fix`` and ``ortpool rewrite`` write, for every bundled
model (models/ and models/fix/): one row per model with the four exit codes and validate's
summary line of each written model, as a Markdown table.

validate should exit 0 on a fixed model wherever fix proved it (fix exits 0, or 1 when it kept
ortpool's op for a node: those run ortpool's kernel), and on every rewritten model (each pool is
ortpool's op). Each command runs as a child process (``python -m ortpool``), one at a time.

Run: ``python scripts/validate_written_models.py [--keep DIR] [MODEL ...]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> tuple[int, str]:
    """``python -m ortpool ARGS``: its exit code and the last line it printed."""
    done = subprocess.run([sys.executable, "-m", "ortpool", *args], capture_output=True,
                          text=True, timeout=600, cwd=ROOT)
    lines = (done.stdout.strip() or done.stderr.strip()).splitlines()
    return done.returncode, lines[-1] if lines else ""


def _written(command: str, model: Path, out: Path) -> tuple[str, str, str]:
    """(the command's exit code, validate's exit code on what it wrote, validate's summary)."""
    code, _ = _run(command, str(model), str(out), "-q")
    if not out.is_file():
        return str(code), "-", "(nothing written)"
    checked, summary = _run("validate", str(out), "--no-progress")
    return str(code), str(checked), summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path, help="default: every bundled model")
    parser.add_argument("--keep", type=Path, help="write the fixed and rewritten models here")
    args = parser.parse_args(argv)
    models = args.models or sorted((ROOT / "models").glob("*.onnx")) + sorted(
        (ROOT / "models" / "fix").glob("*.onnx"))
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        print("| model | fix | validate fixed | rewrite | validate rewritten | summaries |")
        print("|---|---|---|---|---|---|")
        bad = 0
        for model in models:
            fix = _written("fix", model, folder / f"{model.stem}.fixed.onnx")
            rewrite = _written("rewrite", model, folder / f"{model.stem}.rewritten.onnx")
            bad += (fix[0] in "01" and fix[1] != "0") + (rewrite[1] != "0")
            print(f"| {model.stem} | {fix[0]} | {fix[1]} | {rewrite[0]} | {rewrite[1]} | "
                  f"{fix[2]} / {rewrite[2]} |", flush=True)
    print(f"\n{bad} written model(s) validate did not pass where fix proved them")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
