"""``ortpool conformance``: where does a runtime differ from the ONNX spec for pooling?"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

from ortpool.errors import OrtpoolError
from ortpool.options import CLI, accuracy, domain, inputs, reports, runtime, target
from ortpool.options.files import names
from ortpool.ort import ISOLATED_LEVEL
from ortpool.staging import StagedFiles
from ortpool.values import integer

if TYPE_CHECKING:
    from ortpool.check.grid import Case

HELP = (
    "sweep a generated grid of pooling cases (op x version x dtype x padding x rank x each value "
    "of the window and 0/1 attributes the version has) through a runtime (onnxruntime by default) "
    "and ortpool"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("cases")
    group.add_argument("--ops", metavar="OP[,OP]", help="only these operators")
    group.add_argument("--versions", metavar="V[,V]", help="only these spec versions")
    group.add_argument(
        "--dtypes", metavar="T[,T]",
        help="only these element types, ONNX names (float is float32, double, float16, int8...; "
        "numpy's spellings float32, float64 are read too)")
    group.add_argument("--ranks", metavar="R[,R]", default="1,2,3", help="spatial ranks (1,2,3)")
    inputs.add_arguments(parser, model_inputs=False, seed_help="seed of the case inputs (0)")
    runtime.add_arguments(
        parser,
        ISOLATED_LEVEL,
        "every case runs at it (disable: the node as written)",
        providers_help="the execution providers the built-in nodes run on, in priority order "
        "(default cpu); a case the first does not execute is counted as fallen back, not as its")
    target.add_arguments(parser, "each case")
    domain.add_arguments(parser, "cases")
    group = parser.add_argument_group("reports")
    reports.add_json(group, "write every case and its result as JSON")
    reports.add_no_progress(group)
    accuracy.add_arguments(
        parser, atol_help="widens the accuracy agree band of averages and norms",
        rtol_help="widens the accuracy agree band of averages and norms")


def run(args: argparse.Namespace) -> int:
    from ortpool.conformance.run import run_conformance
    from ortpool.report import matrix
    from ortpool.report.progress import ProgressBar
    from ortpool.report.record import environment
    from ortpool.report.text import dumps, safe

    cases, settings = _cases(args)
    spec = runtime.from_args(args)
    judged = target.from_args(args, ISOLATED_LEVEL)
    on, rule = judged.runtime or spec, accuracy.from_args(args)
    settings["accuracy"] = rule.to_dict()
    # the report's destination checked and reserved before the sweep, not after it
    with StagedFiles() as files:
        json_file = files.add(args.json, "the JSON report") if args.json else None
        files.reserve()
        bar = None if args.no_progress else ProgressBar("conformance")
        started = time.perf_counter()
        try:
            found = run_conformance(cases, args.seed, on, rule, progress=bar,
                                    domain=settings["domain"], case_timeout=judged.case_timeout)
        finally:
            if bar is not None:
                bar.close()
        seconds = time.perf_counter() - started
        env = environment()
        header = (f"ortpool conformance: {on.title()}: built-in pooling against the ONNX spec "
                  f"(onnxruntime-extensions {env['onnxruntime_extensions']}, onnx {env['onnx']}, "
                  f"ortpool {env['ortpool']})\n{len(found)} cases, seed {args.seed}, "
                  f"{seconds:.1f} s")
        print("\n".join(matrix.render(found, header, judged.name)))
        if json_file is not None:
            document = matrix.document(found, env, settings)
            # beside the settings, which conformance_compare requires equal across reports
            # (a CPU report and an OpenVINO one are compared side by side)
            document["runtime"] = judged.describe() or spec.describe()
            json_file.write(dumps(document).encode())
        files.commit()
    if args.json:
        print(f"JSON report: {safe(args.json)}", file=sys.stderr)
    return 0


def _cases(args: argparse.Namespace) -> tuple[list[Case], dict[str, Any]]:
    """:func:`ortpool.conformance.api.selected` of the flags; a filter given empty
    (``--ops ''``) is a mistake, not "every one"."""
    from ortpool.conformance.api import selected

    given = {flag: None if getattr(args, flag) is None else names(getattr(args, flag))
             for flag in ("ops", "versions", "dtypes", "ranks")}
    for flag, found in given.items():
        if found == []:
            raise OrtpoolError(f"--{flag} {getattr(args, flag)!r} names nothing; leave the option "
                               "out for every one")
    try:
        versions, ranks = ([integer(v) for v in given[key] or []] for key in ("versions", "ranks"))
    except argparse.ArgumentTypeError:  # also Unicode digits, which int() reads
        raise OrtpoolError("--versions and --ranks take comma-separated integers") from None
    return selected(given["ops"], versions, given["dtypes"], ranks, inputs.seed(args.seed),
                    args.nonfinite, CLI)
