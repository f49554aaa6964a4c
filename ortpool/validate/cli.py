"""``ortpool validate``: onnxruntime's built-in pooling against ortpool, per node and end to end."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ortpool.options import CLI, accuracy, domain, inputs, reports, runtime, target, timing
from ortpool.options.files import path as file_path
from ortpool.ort import ISOLATED_LEVEL
from ortpool.report import record as results
from ortpool.report.text import dumps, safe
from ortpool.staging import StagedFiles
from ortpool.validate import batch

if TYPE_CHECKING:
    from ortpool.report.progress import ProgressBar
    from ortpool.validate.validator import ValidateOptions

HELP = (
    "compare onnxruntime's built-in pooling with ortpool on models (default: the bundled ones), "
    "per node in isolation and end to end"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "models", nargs="*", metavar="MODEL", type=file_path,
        help="ONNX model files (default: the models bundled in the package, ortpool/models/)")
    # what the models run on first: --shape, --inputs, --seed, then the runtime
    inputs.add_arguments(parser)
    runtime.add_arguments(
        parser,
        ISOLATED_LEVEL,
        "both runs of the model and every isolated node run at it; disable judges each node as "
        "written, not fused into its neighbours, so a difference is the node's own (fix and "
        "bench default to all, the level a deployed model runs at)")
    target.add_arguments(parser, "each pooling node and the whole model")
    domain.add_arguments(parser, "verdicts")
    group = parser.add_argument_group("validation")
    group.add_argument(
        "--reference", action="store_true",
        help="add the onnx reference evaluator as a third column")
    timing.add_reference_timeout(group, timing.NODE_REFERENCE_TIMEOUT, "per node")
    group.add_argument(
        "--no-guard-cost", action="store_true",
        help="do not measure what guarding the nodes that differ on NaN/inf inputs only would "
        "cost (by default, in the finite domain, fix --nonfinite is run for them and the model "
        "timed: about a second per such model)")
    group.add_argument(
        "--fail-on-rulings", action="store_true",
        help="exit 1 also when the only differences are in cells docs/rulings.md "
        "decides (NaN in a window, empty windows)")
    timing.add_jobs(group)  # --jobs, --timeout
    group = parser.add_argument_group("reports")
    reports.add_json(group, "write the full report as JSON")
    reports.add_html(group, "write a self-contained HTML report")
    reports.add_verbose(
        group,
        "report every node and graph output, with the model's inputs and every note (by "
        "default: one line per model, then the nodes that do not agree and the outputs that "
        "differ; the report fits 100 columns, --json keeps every text whole)")
    reports.add_no_progress(group)
    accuracy.add_arguments(
        parser,
        atol_help="absolute tolerance for graph outputs (default per type: float and the half "
        "types 1e-6, double 1e-12; plus, for an output a pool reaches through a half type, 1 "
        "ulp of that type at the output's magnitude per rounding to it); for averages and "
        "norms, when given, it widens the accuracy agree band (default 0 there)",
        rtol_help="relative tolerance for graph outputs, relative to their magnitude (default per "
        "type: float and the half types 1e-5, double 1e-10); for averages and "
        "norms, when given, it widens the accuracy agree band (default 0 there); max values "
        "and Indices are always compared exactly")


def run(args: argparse.Namespace) -> int:
    from ortpool.report import html, terminal
    from ortpool.report.progress import ProgressBar
    from ortpool.validate import validator
    from ortpool.validate.api import settings as settings_of
    from ortpool.validate.api import unmatched

    options = _options(args)
    paths = args.models or [str(p) for p in validator.bundled_models()]
    jobs = batch.jobs_from(timing.jobs(args.jobs), paths)
    timeout = timing.timeout(args.timeout)
    # the reports' destinations checked and reserved first: one that cannot be written fails
    # in a second, not after the run
    from ortpool.model.files import data_files_in_reach

    sources = [(p, "a model being validated") for p in paths]
    sources += [(args.inputs, "the inputs file")] if args.inputs else []
    with StagedFiles([*sources, *data_files_in_reach(paths, (args.json, args.html))]) as files:
        json_file = files.add(args.json, "the JSON report") if args.json else None
        html_file = files.add(args.html, "the HTML report") if args.html else None
        files.reserve()
        title = f"validate {paths[0]}" if len(paths) == 1 else "validate"
        bar = None if args.no_progress else ProgressBar(title, force=False)
        try:
            found = batch.run_models(
                paths, options, jobs=jobs, timeout=timeout, progress=bar,
                on_result=lambda result: _print_model(result, args.verbose, bar))
        finally:
            if bar is not None:
                bar.close()
        warning = unmatched(options, found, CLI)
        if warning is not None:
            print(f"ortpool validate: warning: {safe(warning)}", file=sys.stderr)
        if len(found) > 1 or not args.verbose:
            print()
        print("\n".join(terminal.information_lines(found) + terminal.summary_lines(found)))
        settings = settings_of(options, timeout, args.fail_on_rulings)
        if json_file is not None:
            json_file.write(dumps(results.validate_document(found, settings)).encode())
        if html_file is not None:
            html_file.write(html.render(found, settings).encode())
        files.commit()
    for label, path in (("JSON", args.json), ("HTML", args.html)):
        if path:
            print(f"{label} report: {safe(path)}", file=sys.stderr)
    return results.exit_code(found, args.fail_on_rulings)


def _options(args: argparse.Namespace) -> ValidateOptions:
    """The validator's options the arguments give (an :class:`OrtpoolError` for a bad one)."""
    from ortpool.validate.validator import ValidateOptions

    judged = target.from_args(args, ISOLATED_LEVEL)
    return ValidateOptions(
        runtime=runtime.from_args(args), target=judged.runtime, case_timeout=judged.case_timeout,
        accuracy=accuracy.from_args(args), seed=inputs.seed(args.seed),
        inputs=inputs.from_args(args), reference=args.reference,
        reference_timeout=timing.reference_timeout(args.reference_timeout),
        nonfinite=domain.from_args(args), guard_cost=not args.no_guard_cost)


def _print_model(result: results.ModelResult, verbose: bool = False,
                 bar: ProgressBar | None = None) -> None:
    """One model's report as soon as it is known, the progress line erased first."""
    from ortpool.report import terminal

    if bar is not None:
        bar.close()
    if result.outcome:  # one line on stderr too, where a script looks for errors
        why = terminal.first_line(result.error)
        why = why if why.startswith(result.path) else f"{result.path}: {why}"
        print(f"ortpool validate: error: {safe(why)}", file=sys.stderr)
    print("\n".join(terminal.model_report(result, verbose)))
    if verbose:
        print()
