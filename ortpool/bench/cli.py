"""``ortpool bench``: time onnxruntime's built-in pooling against ortpool's ops on the bundled
cases, or ``ortpool bench MODEL [FIXED]``: a model against its fixed form."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ortpool.bench import cases as bench_cases
from ortpool.errors import OrtpoolError
from ortpool.model import InputSpec
from ortpool.options import CLI, inputs, reports, runtime, timing
from ortpool.options.files import path as file_path
from ortpool.ort import DEFAULT_LEVEL
from ortpool.staging import StagedFiles

if TYPE_CHECKING:
    from ortpool.bench import runner, usermodel

HELP = (
    "time a model against its fixed form (MODEL FIXED), or onnxruntime's built-in pooling "
    "against ortpool's ops on real CNN shapes (no MODEL)"
)

#: seconds the onnx reference evaluator gets per bundled case (--reference-timeout)
REFERENCE_TIMEOUT = 10.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "model", nargs="?", metavar="MODEL", type=file_path,
        help="an ONNX model to time in plain onnxruntime, with the kernel time of each pooling "
        "node from onnxruntime's profile (default: the bundled CNN cases below)")
    parser.add_argument(
        "fixed", nargs="?", metavar="FIXED", type=file_path,
        help="MODEL's fixed form ('ortpool fix MODEL FIXED'): timed against MODEL in the same "
        "rounds, with a second session of MODEL as the control")
    # --shape and --inputs size MODEL's inputs (the bundled cases' models are ortpool's own)
    inputs.add_arguments(parser, seed_help="seed of the random inputs (0)")
    runtime.add_arguments(
        parser,
        DEFAULT_LEVEL,
        "every session runs at it (a deployed model's level)",
        providers_help="the execution providers the built-in and ortpool sessions run on, in "
        "priority order (default cpu); the table says which one executed each built-in node")
    group = parser.add_argument_group("timing")
    timing.add_repeat(group, 30, 5.0)
    group.add_argument(
        "--per-session-threads", action="store_true",
        help="give each session its own intra-op pool instead of one shared pool (noisier: idle "
        "workers of one session spin while another runs)")
    group = parser.add_argument_group("the bundled cases (without MODEL)")
    group.add_argument(
        "--cases", nargs="+", metavar="NAME",
        help="run only these cases (names, substrings or globs; see --list)")
    group.add_argument("--list", action="store_true", help="list the cases and exit")
    timing.add_reference_timeout(
        group, REFERENCE_TIMEOUT, "per case; cases it cannot finish are skipped (0 skips the "
        "evaluator)")
    group.add_argument(
        "--no-reference", action="store_true", help="skip the onnx reference evaluator")
    group = parser.add_argument_group("reports")
    reports.add_json(group, "also write every figure as JSON to FILE")
    reports.add_markdown(group, "print the table as Markdown")


def run(args: argparse.Namespace) -> int:
    """Exit code 0, or 1 when ortpool's outputs disagree with the built-in's on some case."""
    cases_only = [flag for flag, given in (
        ("--cases", args.cases), ("--list", args.list), ("--no-reference", args.no_reference),
        ("--reference-timeout", args.reference_timeout != REFERENCE_TIMEOUT)) if given]
    if args.model is not None and cases_only:
        raise OrtpoolError(f"{', '.join(cases_only)} select or measure the bundled cases; with "
                           "MODEL there are none (leave out MODEL to run them)")
    if args.model is None and (args.shape or args.inputs):
        raise OrtpoolError("--shape and --inputs size MODEL's inputs: give MODEL (ortpool bench "
                           "MODEL [FIXED] --shape ...)")
    if args.list:
        for case in bench_cases.CASES:
            attrs = " ".join(f"{k}={v}" for k, v in case.attrs)
            print(f"{case.name:20} {case.op:17} {case.shape_text:16} {attrs}")
        return 0
    # every option checked first (exit 2), the report's destination too (nothing created yet)
    reference = timing.reference_timeout(args.reference_timeout, zero="0: skipped")
    spec = runtime.from_args(args)
    model_inputs = inputs.from_args(args)
    from ortpool.model.files import data_files_in_reach

    models = [m for m in (args.model, args.fixed) if m is not None]
    files = StagedFiles([*zip(models, ("the model", "the fixed model"), strict=False),
                         *data_files_in_reach(models, [args.json]),
                         *([(args.inputs, "the inputs file")] if args.inputs else [])])
    json_file = files.add(args.json, "the JSON report") if args.json else None

    from ortpool.bench import runner
    from ortpool.bench.api import prepare
    from ortpool.report import bench as report

    settings = runner.Settings(
        repeat=timing.repeat(args.repeat), min_sample=timing.min_sample(args.min_sample_ms),
        reference_limit=0.0 if args.no_reference else reference, seed=inputs.seed(args.seed),
        shared_pool=not args.per_session_threads, runtime=spec)
    chosen, pair, info = prepare(settings, model_inputs, args.cases, args.model, args.fixed, CLI)
    print("\n".join(report.wrap([*report.machine_lines(info),
                                 f"runtime: {spec.title()}, graph optimizations {spec.level}"])))
    if pair is None:
        print(flush=True)
    with files:
        files.reserve()  # proves the folder writable before the timings, not after them
        if pair is not None:
            code, document = _run_model(pair, model_inputs, settings, info, args.markdown)
        else:
            code, document = _run_cases(chosen, settings, info, args.markdown)
        if json_file is not None:
            json_file.write((json.dumps(document, indent=2) + "\n").encode())
        files.commit()
    return code


def _run_cases(chosen: list[bench_cases.Case], settings: runner.Settings, info: dict[str, Any],
               markdown: bool) -> tuple[int, dict[str, Any]]:
    """The bundled cases: exit code 0, or 1 when ortpool's outputs disagree on one."""
    from ortpool.bench import runner
    from ortpool.report import bench as report
    from ortpool.report import text

    results = []
    for case in chosen:
        print(f"  {case.name}: {case.title}, {case.shape_text} ...", file=sys.stderr, flush=True)
        results.append(runner.run_case(case, settings))
    rows = report.table(results)
    print(report.render(rows, markdown=True) if markdown
          else report.render(report.short_table(rows), width=text.width()))
    figures = report.summary(results)
    print("\n".join(["", *report.wrap([report.LEGEND, *report.summary_lines(figures)])]))
    return 0 if figures["all_agree"] else 1, report.document(results, info, settings)


def _run_model(pair: usermodel.Pair, model_inputs: InputSpec, settings: runner.Settings,
               info: dict[str, Any], markdown: bool) -> tuple[int, dict[str, Any]]:
    """``ortpool bench MODEL [FIXED]``: exit code 0 (a model that cannot run is an error)."""
    from ortpool.bench import usermodel
    from ortpool.report import bench as report

    head = [f"model: {pair.label}"] + ([f"fixed: {pair.fixed_label}"] if pair.fixed else [])
    head.append(f"rounds: {settings.repeat}, each session sampled once per round")
    print("\n".join(report.wrap(head)), flush=True)
    result = usermodel.bench_models(pair, model_inputs, settings)
    shapes = ", ".join(f"{k} {v}" for k, v in result.inputs.shapes.items())
    head = [f"inputs: {shapes} ({result.inputs.source})"]
    if result.inputs.dims:
        head.append(f"open dims: {result.inputs.dims_text()}")
    print("\n".join([*report.wrap(head), "", *report.model_tables(result, markdown)]))
    return 0, report.model_document(result, info, settings)
