"""The options of a command that reads one model and writes another (``rewrite``, ``restore``,
``fix``): ``IN.onnx OUT.onnx``, which nodes (``--ops``, ``--nodes``, ``--exclude``,
``--skip-invalid``), ``--json REPORT``, ``--link-data``, ``-q``/``-v``; :func:`file_options`
reads them into the keyword options of ``rewrite_file``, ``restore_file`` and ``fix_file``.

Declaring them imports no onnxruntime: rewriting needs only onnx and ortpool's tables.
"""

from __future__ import annotations

import argparse
from typing import Any


def names(text: str) -> list[str]:
    """A list option's one value, comma-separated (``--nodes a,b``): one value per option, so
    the positionals after it (``IN.onnx OUT.onnx``) are never taken for names."""
    return [name.strip() for name in text.split(",") if name.strip()]


def add_arguments(parser: argparse.ArgumentParser, verb: str) -> None:
    """Declare them on ``parser``; ``verb`` (``retarget``, ``restore``, ``fix``) says in the help
    what the command does to the nodes selected."""
    parser.add_argument("input", metavar="IN.onnx", help="the model to read (never modified)")
    parser.add_argument(
        "output",
        metavar="OUT.onnx",
        help="where to write the result; external data files are hard-linked (or copied) "
        "next to it",
    )
    parser.add_argument(
        "--ops",
        metavar="OPS",
        help=f"only {verb} these operators, comma-separated (e.g. MaxPool,LpPool; default: "
        "every pooling operator)",
    )
    parser.add_argument(
        "--nodes",
        metavar="NAME[,NAME]",
        type=names,
        action="extend",
        help=f"only {verb} the nodes with these names, comma-separated; repeatable",
    )
    parser.add_argument(
        "--exclude",
        metavar="NAME[,NAME]",
        type=names,
        action="extend",
        default=[],
        help=f"never {verb} the nodes with these names, comma-separated; repeatable",
    )
    parser.add_argument(
        "--skip-invalid",
        action="store_true",
        help="leave a node that fails its schema checks as it is and report it, instead of failing",
    )
    parser.add_argument(
        "--json",
        metavar="REPORT",
        help="write the per-node report as JSON here (with the model, or neither)",
    )
    parser.add_argument(
        "--link-data",
        action="store_true",
        help="hard-link external data files next to the output instead of copying them (onnx "
        "then refuses to load the model, and the source, with its external data: they have two "
        "links)",
    )
    loud = parser.add_mutually_exclusive_group()
    loud.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    loud.add_argument("-v", "--verbose", action="store_true", help="also list every changed node")


def file_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword options of ``rewrite_file``/``restore_file``/``fix_file`` that the arguments
    of :func:`add_arguments` give."""
    return {
        "link_data": args.link_data,
        "ops": args.ops,
        "nodes": args.nodes,
        "exclude": args.exclude,
        "skip_invalid": args.skip_invalid,
        "json_report": args.json,
    }
