"""``ortpool bench``: time onnxruntime's built-in pooling against ortpool's ops."""

from __future__ import annotations

import argparse
import json
import sys

from ortpool.bench import cases as bench_cases
from ortpool.cliargs import inputs as cliargs_inputs
from ortpool.cliargs import numbers, reports, runtime
from ortpool.ort import DEFAULT_LEVEL
from ortpool.staging import StagedFiles

HELP = "time onnxruntime's built-in pooling against ortpool's ops on real CNN shapes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cases",
        nargs="+",
        metavar="NAME",
        help="run only these cases (names, substrings or globs; see --list)",
    )
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument(
        "--repeat",
        type=numbers.integer,
        default=30,
        metavar="N",
        help="timed rounds per case; every variant is sampled once per round (default 30)",
    )
    parser.add_argument(
        "--min-sample-ms",
        type=numbers.real,
        default=5.0,
        metavar="MS",
        help="each sample repeats the call until it lasts this long (default 5 ms)",
    )
    parser.add_argument(
        "--reference-timeout",
        type=numbers.real,
        default=10.0,
        metavar="S",
        help="time limit per case for the onnx reference evaluator; cases it cannot finish are "
        "skipped (default 10 s; 0 skips the evaluator)",
    )
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the onnx reference evaluator"
    )
    parser.add_argument(
        "--per-session-threads",
        action="store_true",
        help="give each session its own intra-op pool instead of one shared pool (noisier: idle "
        "workers of one session spin while another runs)",
    )
    # --seed from the group validate and fix share (the cases' models are ortpool's own: no
    # --shape or --inputs to give)
    cliargs_inputs.add_arguments(parser, model_inputs=False, seed_help="seed of the random inputs")
    reports.add_json(parser, "also write every figure as JSON to FILE")
    reports.add_markdown(parser, "print the table as Markdown")
    runtime.add_arguments(
        parser,
        DEFAULT_LEVEL,
        "every session runs at it (a deployed model's level)",
        providers_help="the execution providers the built-in and ortpool sessions run on, in "
        "priority order (default cpu); the table says which one executed each built-in node",
    )


def run(args: argparse.Namespace) -> int:
    """Exit code 0, or 1 when ortpool's outputs disagree with the built-in's on some case."""
    if args.list:
        for case in bench_cases.CASES:
            attrs = " ".join(f"{k}={v}" for k, v in case.attrs)
            print(f"{case.name:20} {case.op:17} {case.shape_text:16} {attrs}")
        return 0
    if args.repeat < 1:
        print("ortpool bench: error: --repeat must be at least 1", file=sys.stderr)
        return 2
    # one line each, exit 2 (ortpool.cli); a sample of more than a second only slows the run
    numbers.amount("--min-sample-ms", args.min_sample_ms, 0, 1000)
    numbers.seconds("--reference-timeout", args.reference_timeout)
    cliargs_inputs.seed(args)
    try:
        chosen = bench_cases.select(args.cases)
    except ValueError as err:
        print(f"ortpool bench: error: {err}", file=sys.stderr)
        return 2
    spec = runtime.read(args)
    # The report's destination is checked before anything runs (nothing is created yet).
    files = StagedFiles()
    json_file = files.add(args.json, "the JSON report") if args.json else None

    from ortpool.bench import machine, report, runner
    from ortpool.kernels import thread_count

    settings = runner.Settings(
        repeat=args.repeat,
        min_sample=args.min_sample_ms / 1000,
        intra_op_threads=spec.intra_op_threads,
        reference_limit=0.0 if args.no_reference else args.reference_timeout,
        seed=args.seed,
        shared_pool=not args.per_session_threads,
        runtime=spec,
    )
    if settings.shared_pool and not runner.share_thread_pool(settings.intra_op_threads):
        settings.shared_pool = False  # the machine line and the JSON then say "one per session"
    info = machine.describe(settings.intra_op_threads, thread_count(), settings.shared_pool)
    for line in report.machine_lines(info):
        print(line)
    print(f"runtime: {spec.title()}, graph optimizations {spec.level}")
    print(flush=True)
    with files:
        files.reserve()  # proves the folder writable before the timings, not after them
        results = []
        for case in chosen:
            title = f"  {case.name}: {case.title}, {case.shape_text} ..."
            print(title, file=sys.stderr, flush=True)
            results.append(runner.run_case(case, settings))
        print(report.render(report.table(results), markdown=args.markdown))
        print()
        print(report.LEGEND)
        info_summary = report.summary(results)
        for line in report.summary_lines(info_summary):
            print(line)
        if json_file is not None:
            document = report.document(results, info, settings)
            json_file.write((json.dumps(document, indent=2) + "\n").encode())
        files.commit()
    return 0 if info_summary["all_agree"] else 1
