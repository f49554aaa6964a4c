"""``ortpool validate``: onnxruntime's built-in pooling against ortpool, per node and end to end."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ortpool.cliargs import inputs as cliargs_inputs
from ortpool.cliargs import runtime
from ortpool.errors import OrtpoolError
from ortpool.ort.runtime_spec import ISOLATED_LEVEL
from ortpool.staging import StagedFiles

HELP = (
    "compare onnxruntime's built-in pooling with ortpool on models (default: the bundled ones), "
    "per node in isolation and end to end"
)
EXIT_AGREE, EXIT_DIFFER, EXIT_ERROR = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ortpool.cliargs import accuracy

    parser.add_argument(
        "models",
        nargs="*",
        metavar="MODEL",
        help="ONNX model files (default: the models bundled in the package, ortpool/models/)",
    )
    # --shape, --inputs, --seed: the group every command that runs a model shares
    cliargs_inputs.add_arguments(parser)
    runtime.add_arguments(
        parser,
        ISOLATED_LEVEL,
        "both runs of the model and every isolated node run at it (disable: each node judged "
        "as written, not fused into its neighbours)",
    )
    parser.add_argument(
        "--atol",
        type=float,
        help="absolute tolerance for graph outputs (default per type: float 1e-6, double "
        "1e-12, float16 1e-3, bfloat16 1e-2); for averages and norms, when given, it widens "
        "the accuracy agree band (default 0 there)",
    )
    parser.add_argument(
        "--rtol",
        type=float,
        help="relative tolerance for graph outputs, relative to their magnitude (default per "
        "type: float 1e-5, double 1e-10, float16 2e-3, bfloat16 1.6e-2); for averages and "
        "norms, when given, it widens the accuracy agree band (default 0 there); max values "
        "and Indices are always compared exactly",
    )
    accuracy.add_arguments(parser)
    parser.add_argument(
        "--reference",
        action="store_true",
        help="add the onnx reference evaluator as a third column",
    )
    parser.add_argument(
        "--reference-timeout",
        type=float,
        default=20.0,
        metavar="SECONDS",
        help="time limit per node for the reference evaluator (20)",
    )
    parser.add_argument("--json", metavar="FILE", help="write the full report as JSON")
    parser.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    parser.add_argument(
        "--fail-on-rulings",
        action="store_true",
        help="exit 1 also when the only differences are in cells RULINGS.md "
        "decides (NaN in a window, empty windows)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def run(args: argparse.Namespace) -> int:
    from ortpool.cliargs.accuracy import rule_from
    from ortpool.validate import html, jsonreport, terminal, validator
    from ortpool.validate.progress import ProgressBar

    spec = cliargs_inputs.read(args)
    if args.reference_timeout <= 0:
        raise OrtpoolError(f"--reference-timeout={args.reference_timeout} must be > 0")
    for name in ("atol", "rtol"):
        value = getattr(args, name)
        if value is not None and value < 0:
            raise OrtpoolError(f"--{name}={value} must be >= 0")
    options = validator.ValidateOptions(
        runtime=runtime.read(args),
        atol=args.atol,
        rtol=args.rtol,
        accuracy=rule_from(args),
        seed=args.seed,
        shapes=spec.shapes,
        inputs_path=args.inputs,
        inputs=spec,
        reference=args.reference,
        reference_timeout=args.reference_timeout,
    )
    paths = args.models or [str(p) for p in validator.bundled_models()]
    # The report destinations are checked and a temporary file reserved next to each before
    # anything runs: a report that cannot be written fails in a second, not after the run.
    with StagedFiles((p, "a model being validated") for p in paths) as files:
        json_file = files.add(args.json, "the JSON report") if args.json else None
        html_file = files.add(args.html, "the HTML report") if args.html else None
        files.reserve()
        models = [validator.load_model(p) for p in paths]  # every model readable before any runs
        found = []
        for path, model in zip(paths, models, strict=True):
            bar = ProgressBar(f"validate {path}", force=False) if not args.no_progress else None
            try:
                result = validator.validate_model(
                    model, options, progress=bar, strict_shapes=len(paths) == 1, label=path
                )
            finally:
                if bar is not None:
                    bar.close()
            result.path = path
            found.append(result)
            print("\n".join(terminal.model_report(result)))
            print()
        print(terminal.summary(found))
        settings: dict[str, Any] = {
            "seed": args.seed,
            "shapes": args.shape,
            "inputs": args.inputs,
            "providers": [str(p) for p in options.runtime.providers],
            "opt_level": options.runtime.level,
            "optimize": options.runtime.level != ISOLATED_LEVEL,
            "runtime": options.runtime.describe(),
            "atol": args.atol,
            "rtol": args.rtol,
            "accuracy": options.accuracy.to_dict(),
            "reference": args.reference,
            "fail_on_rulings": args.fail_on_rulings,
        }
        if json_file is not None:
            document = jsonreport.validate_document(found, settings)
            json_file.write(jsonreport.dumps(document).encode())
        if html_file is not None:
            html_file.write(html.render(found, settings).encode())
        files.commit()
    for label, path in (("JSON", args.json), ("HTML", args.html)):
        if path:
            print(f"{label} report: {path}", file=sys.stderr)
    failing = any(m.failing for m in found)
    if args.fail_on_rulings:
        failing = failing or any(n.status == "rulings" for m in found for n in m.nodes)
    return EXIT_DIFFER if failing else EXIT_AGREE
