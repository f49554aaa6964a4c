"""``--shape``, ``--inputs``, ``--seed``: declared once for every command that runs a model.

:func:`add_arguments` declares them on a subcommand's parser; :func:`read` gives the
:class:`~ortpool.model.inputs.InputSpec` they describe (parsed and loaded here, so a bad
``--shape`` or an unreadable file is a usage error before any model runs). How the spec becomes
arrays for a model is :func:`ortpool.model.inputs.resolve`.
"""

from __future__ import annotations

import argparse

from ortpool.cliargs import numbers
from ortpool.model import DEFAULT_BATCH, DEFAULT_SIZE, InputSpec

#: seeds numpy's generator takes: integers from 0 (it refuses negative ones)
MAX_SEED = 2**64 - 1


def add_arguments(
    parser: argparse.ArgumentParser, *, model_inputs: bool = True, seed_help: str = ""
) -> None:
    """The group on ``parser``; ``model_inputs=False`` declares ``--seed`` only (a command
    whose models ortpool builds itself, such as ``bench``)."""
    group = parser.add_argument_group("inputs")
    if model_inputs:
        group.add_argument(
            "--shape",
            action="append",
            default=[],
            metavar="NAME:D1,D2,...",
            help="sizes of an input's dims (symbolic, -1 or unknown ones are otherwise "
            f"{DEFAULT_BATCH} on axis 0 and {DEFAULT_SIZE} elsewhere; the report names each "
            "size chosen); repeatable",
        )
        group.add_argument(
            "--inputs",
            metavar="FILE.npz",
            help="feed these arrays (numpy.savez, keyed by input name); inputs the file lacks "
            "are generated, except those a pooling node reads as data (rois, MaxUnpool's "
            "indices and output_shape), which must be in it",
        )
    group.add_argument(
        "--seed",
        type=numbers.integer,
        default=0,
        help=seed_help or "seed of the generated inputs (0)",
    )


def seed(args: argparse.Namespace) -> int:
    """``--seed``, checked (also for a command that declares its own)."""
    return numbers.count("--seed", args.seed, 0, MAX_SEED)


def read(args: argparse.Namespace) -> InputSpec:
    """The spec the parsed options give, ``--seed`` checked (an :class:`~ortpool.OrtpoolError`
    for a bad one)."""
    seed(args)
    return InputSpec.make(getattr(args, "shape", None) or None, getattr(args, "inputs", None))
