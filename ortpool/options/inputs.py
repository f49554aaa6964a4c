"""``shapes``, ``inputs``, ``seed`` (``--shape``, ``--inputs``, ``--seed``) -> an
:class:`~ortpool.model.InputSpec`, parsed and loaded here so a bad one is refused before any
model runs, and the seed."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ortpool import values
from ortpool.model import DEFAULT_BATCH, DEFAULT_SIZE, InputSpec
from ortpool.options import CLI, PYTHON, label

#: seeds numpy's generator takes: integers from 0 (it refuses negative ones)
MAX_SEED = 2**64 - 1

Shapes = Mapping[str, Sequence[int]] | Sequence[str] | None
Arrays = Mapping[str, Any] | str | os.PathLike | None


def add_arguments(parser: argparse.ArgumentParser, *, model_inputs: bool = True,
                  seed_help: str = "") -> None:
    """The group on ``parser``; ``model_inputs=False``: ``--seed`` only (``conformance``)."""
    group = parser.add_argument_group("inputs")
    if model_inputs:
        group.add_argument(
            "--shape", action="append", default=[], metavar="NAME:D1,D2,...",
            help="sizes of an input's dims (symbolic, -1 or unknown ones are otherwise "
            f"{DEFAULT_BATCH} on axis 0 and {DEFAULT_SIZE} elsewhere, or larger where a pool's "
            "window needs it; the report names each size chosen); repeatable")
        group.add_argument(
            "--inputs", metavar="FILE.npz",
            help="feed these arrays (numpy.savez, keyed by input name); inputs the file lacks "
            "are generated, except those a pooling node reads as data (rois, MaxUnpool's "
            "indices and output_shape), which must be in it")
    group.add_argument(
        "--seed", type=values.integer, default=0,
        help=seed_help or "seed of the generated inputs (0)")


def seed(value: Any, style: str = CLI) -> int:
    """``seed``/``--seed``, checked."""
    return values.count(label("seed", style), value, 0, MAX_SEED)


def from_args(args: argparse.Namespace) -> InputSpec:
    """The spec the parsed options give, ``--seed`` checked."""
    seed(args.seed)
    return InputSpec.make(getattr(args, "shape", None) or None, getattr(args, "inputs", None))


def from_python(shapes: Shapes = None, inputs: Arrays = None) -> InputSpec:
    """The spec the keywords give (``shapes={"x": (1, 3, 8, 8)}``, ``inputs=`` arrays or .npz)."""
    return InputSpec.make(shapes, inputs, style=PYTHON)
