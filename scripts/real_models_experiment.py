#!/usr/bin/env python
"""Issue 28's eight-model experiment on the models made like them (tests/support/models/real/,
``scripts/make_real_like_models.py``), each at its real size, in one or both input domains:

* ``ortpool validate``: each pooling node's verdict;
* ``ortpool fix``: what became of each node (unchanged, or the form written), the exit code, and
  whether the written model holds an ortpool op (then plain onnxruntime cannot load it);
* the ``Reorder*`` nodes (NCHWc layout changes) in the graph onnxruntime optimizes at level all
  (``SessionOptions.optimized_model_filepath``), original and fixed;
* the fixed model's speed against the original's in onnxruntime at level all, interleaved
  (every round times each session, rotating the order; ``ortpool.model.timing.interleaved``):
  the median over the rounds of fixed/original, and a control, a second session of the
  original against the first. By default one intra-op thread, timed by the calling thread's CPU
  time, which other processes' load does not move (wall time with ``--clock wall``). A fixed
  model that holds ortpool ops is timed in ``ortpool.InferenceSession``.

Each command runs as a user runs it (``python -m ortpool``, in a child process, ``--json``).
The domain's flags are spelled in ``DOMAIN_FLAGS`` alone (ruling 20: finite by default,
``--nonfinite`` for both commands).

Run: ``python scripts/real_models_experiment.py [--domain finite|nonfinite|both] [--rounds 31]
[--sample 0.03] [--threads 1] [--clock cpu|wall] [--models NAME ...] [--out
results/real_models.md]`` (about two minutes per domain on 2 cores).
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ortpool.model import timing  # noqa: E402  (the repository on the path first)
from ortpool.ort import RuntimeSpec, open_session, optimized, versions  # noqa: E402
from ortpool.ort.nodes import iter_ortpool_nodes  # noqa: E402
from tests.support.cnn_builders import REAL_LIKE  # noqa: E402

MODELS = ROOT / "tests" / "support" / "models" / "real"

#: The command-line flags of each input domain, per command. Today: fix proves NaN and -inf by
#: default and takes ``--assume-finite`` for finite inputs; validate has no domain flag.
DOMAIN_FLAGS: dict[str, dict[str, list[str]]] = {
    "finite": {"validate": [], "fix": []},  # the default domain (ruling 20)
    "nonfinite": {"validate": ["--nonfinite"], "fix": ["--nonfinite"]},
}


CLOCKS = {"cpu": "the calling thread's CPU time (onnxruntime computes there with one thread)",
          "wall": "the wall clock"}


def shape_args(sizes: dict[str, tuple[int, ...]]) -> list[str]:
    args: list[str] = []
    for name, dims in sizes.items():
        args += ["--shape", f"{name}:{','.join(map(str, dims))}"]
    return args


def ortpool_cli(*args: str) -> int:
    """The exit code of ``ortpool ARGS``; exit 2 (the model could not be run: no report) ends
    the experiment with the command's output."""
    done = subprocess.run([sys.executable, "-m", "ortpool", *args], capture_output=True,
                          text=True, timeout=900, check=False)
    if done.returncode == 2:
        raise SystemExit(f"ortpool {' '.join(args)}: exit 2\n{done.stdout}{done.stderr}")
    return done.returncode


def node_verdicts(path: Path, sizes: dict, domain: str, folder: Path) -> tuple[int, dict]:
    """validate's exit code and {node name: status}."""
    report = folder / "validate.json"
    code = ortpool_cli("validate", str(path), *shape_args(sizes), "--no-progress", "--json",
                       str(report), *DOMAIN_FLAGS[domain]["validate"])
    document = json.loads(report.read_text())
    return code, {n["name"]: n["status"] for m in document["models"] for n in m["nodes"]}


def fix_decisions(path: Path, sizes: dict, domain: str, out: Path) -> tuple[int, dict, dict]:
    """fix's exit code, {node name: "unchanged", the form written, or the realization} and
    {node name: its proof in the written model}."""
    report = out.with_suffix(".json")
    code = ortpool_cli("fix", str(path), str(out), *shape_args(sizes), "--allow-unproven",
                       "--json", str(report), *DOMAIN_FLAGS[domain]["fix"])
    document = json.loads(report.read_text())
    proofs = {}
    for node in document["nodes"]:
        proof = node["in_model"] or {}
        proofs[node["name"]] = (
            f"exact on {proof['sets']} input sets" if proof.get("exact")
            else proof.get("failure") or "not proven in the written model"
        )
    return code, {n["name"]: n["form"] or n["realization"] for n in document["nodes"]}, proofs


def reorders(model: onnx.ModelProto) -> int:
    graph = optimized(RuntimeSpec(level="all"), model, "all").graph
    return sum(node.op_type.startswith("Reorder") for node in graph.node)


class _ThreadCpuClock:
    """``time`` as ortpool.model.timing reads it, its clock the calling thread's CPU time: on a
    machine other processes load, wall time counts their slices too (on 2 cores at load 12 the
    wall clock's controls ranged 0.87-1.15, the CPU time's 0.98-1.01). With one intra-op thread
    onnxruntime computes on the calling thread."""

    perf_counter = staticmethod(time.thread_time)


def speed(original: onnx.ModelProto, fixed: onnx.ModelProto, sizes: dict, rounds: int,
          sample: float, threads: int, clock: str) -> dict[str, float]:
    """Medians over ``rounds`` interleaved rounds of fixed/original and control/original."""
    spec = RuntimeSpec(level="all", intra_op_threads=threads)
    rng = np.random.default_rng(0)
    feeds = {name: rng.standard_normal(dims).astype(np.float32) for name, dims in sizes.items()}
    sessions = {"original": open_session(spec, original), "control": open_session(spec, original),
                "fixed": open_session(spec, fixed)}
    outputs = {name: s.run(None, feeds) for name, s in sessions.items()}
    calls = {name: (lambda s=s: s.run(None, feeds)) for name, s in sessions.items()}
    with mock.patch.object(timing, "time", _ThreadCpuClock if clock == "cpu" else time):
        stats = timing.interleaved(calls, repeat=rounds, min_sample=sample)
    base = stats["original"].samples

    def ratio(name: str) -> float:
        return float(np.median([a / b for a, b in zip(stats[name].samples, base, strict=True)]))

    return {
        "original_us": stats["original"].median * 1e6, "fixed_us": stats["fixed"].median * 1e6,
        "ratio": ratio("fixed"), "control": ratio("control"),
        "max_abs": max(float(np.max(np.abs(a - b), initial=0))
                       for a, b in zip(outputs["fixed"], outputs["original"], strict=True)),
    }


def run_domain(names: list[str], domain: str, args: argparse.Namespace) -> list[dict]:
    rows = []
    for name in names:
        sizes = REAL_LIKE[name][1]
        path = MODELS / f"{name}.onnx"
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            v_code, verdicts = node_verdicts(path, sizes, domain, folder)
            out = folder / "fixed.onnx"
            f_code, decisions, proofs = fix_decisions(path, sizes, domain, out)
            original, fixed = onnx.load(path), onnx.load(out)
            same = out.read_bytes() == path.read_bytes()
        row = {"model": name, "validate_exit": v_code, "verdicts": verdicts, "fix_exit": f_code,
               "same_bytes": same, "decisions": decisions, "proofs": proofs,
               "ortpool_ops": sum(1 for _ in iter_ortpool_nodes(fixed)),
               "reorders": (reorders(original), reorders(fixed)),
               **speed(original, fixed, sizes, args.rounds, args.sample, args.threads, args.clock)}
        print(f"[{domain}] {name}: validate {v_code}, fix {f_code}, ratio {row['ratio']:.3f} "
              f"(control {row['control']:.3f})", file=sys.stderr)
        rows.append(row)
    return rows


def _counts(values) -> str:
    return ", ".join(f"{k} {v}" for k, v in collections.Counter(values).items()) or "-"


def summary(rows: list[dict]) -> list[str]:
    """What the domain's rows show: validate and fix at odds, ortpool ops written, the cost."""
    agreed = [(r, node) for r in rows for node, v in r["verdicts"].items() if v == "agree"]
    changed = [f"{r['model']} `{node}` ({r['decisions'].get(node)})" for r, node in agreed
               if r["decisions"].get(node) != "unchanged"]
    with_ops = [r["model"] for r in rows if r["ortpool_ops"]]
    rewritten = [r for r in rows if not r["same_bytes"] and not r["ortpool_ops"]]
    lines = [
        f"- nodes validate calls agree: {len(agreed)}; of them fix changed {len(changed)}"
        + (f": {', '.join(changed)}" if changed else ""),
        f"- fixed models holding an ortpool op (plain onnxruntime cannot load them): "
        f"{', '.join(with_ops) or 'none'}",
        f"- fixed models written with the original's bytes: "
        f"{sum(r['same_bytes'] for r in rows)} of {len(rows)}",
    ]
    if rewritten:
        ratios = [r["ratio"] for r in rewritten]
        lines.append(f"- rewritten in standard ops ({len(rewritten)} models): fixed/orig "
                     f"{min(ratios):.3f} to {max(ratios):.3f}; controls of all models "
                     f"{min(r['control'] for r in rows):.3f} to "
                     f"{max(r['control'] for r in rows):.3f}")
    return lines


def render(results: dict[str, list[dict]], args: argparse.Namespace) -> str:
    lines = [
        "# The eight-model experiment on models made like them",
        "",
        f"Generated by `{' '.join(['python scripts/real_models_experiment.py', *args.argv])}` on "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
        f"onnxruntime {versions()['onnxruntime']}, Python {platform.python_version()}, "
        f"{platform.machine()}. Models: tests/support/models/real/ "
        "(`scripts/make_real_like_models.py`), each at its real size (below).",
        "",
        f"Speed: plain onnxruntime (ORT_ENABLE_ALL, intra-op threads {args.threads or 'default'})"
        f", {args.rounds} interleaved rounds of at least {args.sample * 1e3:g} ms per session, "
        f"timed by {CLOCKS[args.clock]}; "
        "`fixed/orig` is the median over the rounds of the fixed model's time over the "
        "original's, `control` the same for a second session of the original. `max abs`: the "
        "fixed model's outputs against the original's on that (finite) input. `Reorder`: "
        "`Reorder*` nodes in onnxruntime's optimized graph, original -> fixed. `fixed = original`: "
        "whether the file fix wrote has the original's bytes.",
    ]
    for domain, rows in results.items():
        flags = DOMAIN_FLAGS[domain]
        lines += [
            "", f"## Domain: {domain}", "",
            f"validate flags: `{' '.join(flags['validate']) or '(none)'}`; fix flags: "
            f"`{' '.join(flags['fix'] + ['--allow-unproven']).strip()}`", "",
            "| model | size | validate (exit) | fix (exit) | fixed = original | ortpool ops in "
            "fixed | Reorder | orig us | fixed us | fixed/orig | control | max abs |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            size = "; ".join("x".join(map(str, d)) for d in REAL_LIKE[r["model"]][1].values())
            lines.append(
                f"| {r['model']} | {size} | {_counts(r['verdicts'].values())} "
                f"({r['validate_exit']}) | {_counts(r['decisions'].values())} ({r['fix_exit']}) "
                f"| {'same bytes' if r['same_bytes'] else 'rewritten'} | {r['ortpool_ops']} | "
                f"{r['reorders'][0]} -> {r['reorders'][1]} | "
                f"{r['original_us']:.1f} | {r['fixed_us']:.1f} | {r['ratio']:.3f} | "
                f"{r['control']:.3f} | {r['max_abs']:.3g} |"
            )
        lines += ["", *summary(rows)]
        lines += ["", "| model | node | validate | fix | fix's proof in the written model |",
                  "|---|---|---|---|---|"]
        for r in rows:
            for node, verdict in r["verdicts"].items():
                lines.append(f"| {r['model']} | `{node}` | {verdict} | "
                             f"{r['decisions'].get(node, '(not a fix node)')} | "
                             f"{r['proofs'].get(node, '')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domain", choices=["finite", "nonfinite", "both"], default="both")
    parser.add_argument("--rounds", type=int, default=31, help="interleaved rounds (>= 12)")
    parser.add_argument("--sample", type=float, default=0.03,
                        help="seconds of back-to-back runs per session per round")
    parser.add_argument("--threads", type=int, default=1,
                        help="onnxruntime intra-op threads of the timed sessions (0: its own)")
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                        help="time the calling thread's CPU (default; needs --threads 1) or the "
                        "wall clock")
    parser.add_argument("--models", nargs="+", choices=list(REAL_LIKE), default=list(REAL_LIKE))
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "real_models.md")
    args = parser.parse_args(argv)
    if args.clock == "cpu" and args.threads != 1:
        parser.error("--clock cpu times the calling thread: it needs --threads 1")
    if args.rounds < 12:
        parser.error(f"--rounds {args.rounds}: the median needs at least 12 rounds")
    args.argv = argv
    domains = ["finite", "nonfinite"] if args.domain == "both" else [args.domain]
    results = {domain: run_domain(args.models, domain, args) for domain in domains}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(results, args))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
