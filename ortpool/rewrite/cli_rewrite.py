"""``ortpool rewrite IN.onnx OUT.onnx``: retarget standard pooling nodes to ortpool's ops."""

from __future__ import annotations

import argparse

from ortpool.rewrite import cli_common, rewrite_file

HELP = (
    "retarget a model's standard pooling nodes (MaxPool, AveragePool, MaxUnpool, LpPool, the "
    "global pools, MaxRoiPool) to ortpool's spec-exact ops"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    cli_common.add_arguments(parser, "retarget")


def run(args: argparse.Namespace) -> int:
    return cli_common.run(args, rewrite_file)
