"""What a command reads and which nodes it touches: the model, ``IN.onnx OUT.onnx`` and
``--link-data``, and the selection (-> :class:`~ortpool.model.selection.Selection`)."""

from __future__ import annotations

import argparse
import os
from typing import Any

import onnx

from ortpool import values
from ortpool.errors import OrtpoolError
from ortpool.model.selection import Selection
from ortpool.modelfile import external_locations
from ortpool.options import CLI, PYTHON, label, reports
from ortpool.versions import OPERATORS

ModelLike = onnx.ModelProto | str | os.PathLike


def names(text: str) -> list[str]:
    """A list option's one value, comma-separated (``--nodes a,b``): one value per option, so
    the positionals after it (``IN.onnx OUT.onnx``) are never taken for names."""
    return [name.strip() for name in text.split(",") if name.strip()]


def path(text: str) -> str:
    """``type=`` of a file argument: ``''`` (an empty shell variable) names no file (pathlib
    took it for the current folder: ". is a directory")."""
    if not text:
        raise argparse.ArgumentTypeError("'' names no file")
    return text


def add_arguments(parser: argparse.ArgumentParser, verb: str) -> None:
    """``IN.onnx OUT.onnx``, the selection, ``--json``, ``--link-data``, ``-q``/``-v``; ``verb``
    (``retarget``, ``restore``, ``fix``): what the command does to the nodes selected."""
    parser.add_argument("input", metavar="IN.onnx", type=path,
                        help="the model to read (never modified)")
    parser.add_argument(
        "output", metavar="OUT.onnx", type=path,
        help="where to write the result; external data files are hard-linked (or copied) "
        "next to it")
    parser.add_argument(
        "--ops", metavar="OP[,OP]",
        help=f"only {verb} these operators, comma-separated (e.g. MaxPool,LpPool; default: "
        "every pooling operator)")
    for flag, what in (("--nodes", "only"), ("--exclude", "never")):
        parser.add_argument(
            flag, metavar="NAME[,NAME]", type=names, action="extend",
            default=None if flag == "--nodes" else [],
            help=f"{what} {verb} the nodes with these names, comma-separated; repeatable")
    parser.add_argument(
        "--skip-invalid", action="store_true",
        help="leave a node that fails its schema checks as it is and report it, instead of failing")
    reports.add_json(parser, "write the per-node report as JSON here (with the model, or neither)")
    parser.add_argument(
        "--link-data", action="store_true",
        help="hard-link external data files next to the output instead of copying them (onnx "
        "then refuses to load the model, and the source, with its external data: they have two "
        "links)")
    reports.add_verbose(parser, "also list every changed node", quiet=True)


def selection(ops: Any = None, nodes: Any = None, exclude: Any = None,
              style: str = PYTHON) -> Selection:
    """The nodes a command touches: ``ops``, only ``nodes`` (None: every one), never ``exclude``."""
    op_names = values.names(label("ops", style), ops)
    op_set = None
    if op_names is not None:
        op_set = frozenset(name for item in op_names for name in names(item))
        unknown = sorted(op_set - set(OPERATORS))
        if unknown or not op_set:
            problem = f"{unknown[0]!r} is not a pooling operator" if unknown else "no operator"
            raise OrtpoolError(
                f"{label('ops', style)}: {problem}; choose from {','.join(OPERATORS)}")
    chosen = values.names(label("nodes", style), nodes)
    return Selection(
        ops=op_set, nodes=None if chosen is None else frozenset(chosen),
        exclude=frozenset(values.names(label("exclude", style), exclude, empty=True) or ()),
        style=style)


def from_args(args: argparse.Namespace) -> Selection:
    return selection(args.ops, args.nodes, args.exclude, CLI)


def data_folder(model: Any, key: str, hint: str = "") -> None:
    """Refuse a ModelProto loaded without its external data (``hint``: what else the caller
    can give): onnxruntime would read a file of that name in the working directory."""
    where = external_locations(model) if isinstance(model, onnx.ModelProto) else []
    if where:
        raise OrtpoolError(f"{key}: its external data {where[0]!r} is not loaded, and a ModelProto "
                           "has no folder to read it from (onnxruntime would read the working "
                           f"directory's): give the model's path{hint}, or load it with its data")


def model(value: Any, key: str = "model", *, proto: bool = True) -> Any:
    """The model a Python call is given: a path, or (with ``proto``) an ``onnx.ModelProto``."""
    if proto and isinstance(value, onnx.ModelProto):
        return value
    if proto and not isinstance(value, (str, os.PathLike)):
        raise values.wrong(key, value, "a path or an onnx.ModelProto")
    return values.path(key, value)  # refuses what is not a path
