"""``ortpool fix IN.onnx OUT.onnx``: the exact spec at the runtime's own speed, proven."""

from __future__ import annotations

import argparse
import sys

from ortpool.report.text import safe

HELP = ("rewrite each pooling node into a form the installed onnxruntime computes exactly (or "
        "ortpool's op where none is), proven node by node against ortpool's kernels")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ortpool.options import accuracy, domain, files, inputs, runtime
    from ortpool.ort import DEFAULT_LEVEL

    # IN OUT, --ops, --nodes, --exclude, --skip-invalid, --json, --link-data, -q/-v: as rewrite's
    files.add_arguments(parser, "fix")
    # --shape, --inputs, --seed: as validate and bench take them
    inputs.add_arguments(parser, seed_help="seed of the values around the built proof cases (0); "
                         "it never changes which cases are built, nor the verdict (the model's "
                         "own runs are not seeded)")
    runtime.add_arguments(
        parser, DEFAULT_LEVEL, "the level the model will run at (onnxruntime's own default is "
        "all): forms are proven at it", providers_help="the execution providers the model will "
        "run on, in priority order (default cpu): forms are proven there, each proof says which "
        "provider executed it")
    domain.add_arguments(parser, "proofs")
    parser.add_argument(
        "--no-opset-lift", dest="lift_opset", action="store_false",
        help="never raise the model's ai.onnx opset (by default a model below opset 11 is "
        "lifted where every node keeps its meaning and more nodes become exact on the runtime)")
    parser.add_argument("--allow-unproven", action="store_true",
                        help="write the model even when some nodes could not be proven (exit 1)")
    parser.add_argument("--dry-run", action="store_true", help="prove and report; write nothing")
    accuracy.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from ortpool.fix import run_file
    from ortpool.fix.fixer import Options
    from ortpool.options import accuracy, domain, files, inputs, runtime
    from ortpool.report.terminal import wrapped

    options = Options(  # every option checked: exit 2 before any proof
        selection=files.from_args(args),
        skip_invalid=args.skip_invalid,
        runtime=runtime.from_args(args),
        nonfinite=domain.from_args(args),
        seed=inputs.seed(args.seed),
        lift_opset=args.lift_opset,
        model_inputs=inputs.from_args(args),  # the messages speak of --shape and --inputs
        accuracy=accuracy.from_args(args),
    )
    report = run_file(args.input, args.output, options, args.allow_unproven, args.dry_run,
                      args.link_data, args.json, args.inputs)
    code = report.exit_code(args.allow_unproven)
    if not args.quiet or code:
        stream = sys.stdout if code < 2 else sys.stderr
        for line in wrapped(report.summary_lines(verbose=args.verbose)):
            print(line, file=stream)
        if report.written:
            print(f"wrote {safe(report.written)}", file=stream)
    return code
