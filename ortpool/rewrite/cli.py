"""``ortpool rewrite IN.onnx OUT.onnx`` and ``ortpool restore IN.onnx OUT.onnx``: one shape, the
options of :mod:`ortpool.options.files`, one file call, the report's summary; neither imports
onnxruntime."""

from __future__ import annotations

import argparse
import dataclasses

from ortpool.options import files
from ortpool.rewrite import Action, run_file
from ortpool.rewrite.passes import restore_model, rewrite_model


@dataclasses.dataclass(frozen=True)
class Command:
    """One of the two commands as :mod:`ortpool.cli` runs it."""

    HELP: str
    #: what the command does to a node, in the help of --ops, --nodes, --exclude
    verb: str
    action: Action

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        files.add_arguments(parser, self.verb)

    def run(self, args: argparse.Namespace) -> int:
        report = run_file(self.action, args.input, args.output, files.from_args(args),
                          args.skip_invalid, args.link_data, args.json)
        if not args.quiet:
            from ortpool.report.terminal import wrapped  # 100 columns, as every report
            from ortpool.report.text import safe

            print("\n".join([*wrapped(report.summary_lines(verbose=args.verbose)),
                             f"wrote {safe(args.output)}"]))
        return 0


REWRITE = Command(
    "retarget a model's standard pooling nodes (MaxPool, AveragePool, MaxUnpool, LpPool, the "
    "global pools, MaxRoiPool) to ortpool's spec-exact ops", "retarget", rewrite_model)
RESTORE = Command(
    "turn a model's ortpool pooling nodes back into standard ONNX nodes", "restore", restore_model)
