"""``ortpool restore IN.onnx OUT.onnx``: turn ortpool nodes back into standard pooling nodes."""

from __future__ import annotations

import argparse

from ortpool.rewrite import cli_common, restore_file

HELP = "turn a model's ortpool pooling nodes back into standard ONNX nodes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    cli_common.add_arguments(parser, "restore")


def run(args: argparse.Namespace) -> int:
    return cli_common.run(args, restore_file)
