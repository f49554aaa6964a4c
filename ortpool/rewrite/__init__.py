"""Rewrite a model's standard pooling nodes to ortpool's op types, and restore them (examples:
docs/rewrite.md). ``ortpool.rewrite`` is this package, callable as :func:`rewrite`.

A model given as a path is loaded without its external data (the proto still refers to the
weights beside the source): to write it elsewhere use :func:`rewrite_file` / :func:`restore_file`
(or :func:`save`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import onnx

from ortpool import modelfile, values
from ortpool.lazy import callable_package
from ortpool.model import save, write_file
from ortpool.model.selection import Selection
from ortpool.options import files
from ortpool.options.files import ModelLike
from ortpool.report.rewrites import NodeReport, RewriteReport
from ortpool.rewrite.passes import restore_model, rewrite_model
from ortpool.rewrite.retarget import CAST_MARK

__all__ = [
    "CAST_MARK", "NodeReport", "RewriteReport", "Selection", "restore", "restore_file",
    "restore_with_report", "rewrite", "rewrite_file", "rewrite_with_report", "save", "write_file"
]  # fmt: skip

Names = str | Sequence[str] | None
Action = Callable[[onnx.ModelProto, Selection, bool], RewriteReport]


def _python(action: Action, model: Any, ops: Any, nodes: Any, exclude: Any,
            skip_invalid: Any) -> tuple[onnx.ModelProto, RewriteReport]:
    """``action`` on a copy of ``model``, every argument checked first."""
    selection = files.selection(ops, nodes, exclude)
    model, skip_invalid = files.model(model), values.flag("skip_invalid", skip_invalid)
    if isinstance(model, onnx.ModelProto):
        proto = onnx.ModelProto()
        proto.CopyFrom(model)
    else:
        proto = modelfile.read(model, load_external_data=False)
    return proto, action(proto, selection, skip_invalid)


def rewrite_with_report(model: ModelLike, *, ops: Names = None, nodes: Names = None,
                        exclude: Names = None,
                        skip_invalid: bool = False) -> tuple[onnx.ModelProto, RewriteReport]:
    """A copy of ``model`` with its standard pooling nodes retargeted to ortpool, and the report.

    ``ops``: operator names (``"MaxPool,AveragePool"`` or a list; default every pooling
    operator); ``nodes``: only nodes with these names; ``exclude``: never these. An invalid node
    raises :class:`ortpool.OrtpoolError` naming the node, version and attribute, unless
    ``skip_invalid``, which leaves it built-in and reports it.
    """
    return _python(rewrite_model, model, ops, nodes, exclude, skip_invalid)


def rewrite(model: ModelLike, **options: Any) -> onnx.ModelProto:
    """:func:`rewrite_with_report` without the report."""
    return rewrite_with_report(model, **options)[0]


def restore_with_report(model: ModelLike, *, ops: Names = None, nodes: Names = None,
                        exclude: Names = None,
                        skip_invalid: bool = False) -> tuple[onnx.ModelProto, RewriteReport]:
    """A copy of ``model`` with its ortpool nodes turned back into standard nodes, and the report.

    Attributes equal to the schema default are omitted; the Casts a rewrite inserted are removed,
    and the ``ortpool`` opset import where nothing uses it any more.
    """
    return _python(restore_model, model, ops, nodes, exclude, skip_invalid)


def restore(model: ModelLike, **options: Any) -> onnx.ModelProto:
    """:func:`restore_with_report` without the report."""
    return restore_with_report(model, **options)[0]


def run_file(action: Action, source: str | os.PathLike, target: str | os.PathLike,
             selection: Selection, skip_invalid: bool, link_data: bool,
             json_report: str | os.PathLike | None) -> RewriteReport:
    """``action`` from the file ``source`` into ``target`` (the command line's call)."""
    return write_file(source, target,
                      lambda model, _: (model, action(model, selection, skip_invalid)),
                      link_data=link_data, json_report=json_report)


def _python_file(action: Action, source: Any, target: Any, ops: Any, nodes: Any, exclude: Any,
                 skip_invalid: Any, link_data: Any, json_report: Any) -> RewriteReport:
    return run_file(
        action, files.model(source, "source", proto=False),
        files.model(target, "target", proto=False), files.selection(ops, nodes, exclude),
        values.flag("skip_invalid", skip_invalid), values.flag("link_data", link_data),
        None if json_report is None else values.path("json_report", json_report))


def rewrite_file(source: str | os.PathLike, target: str | os.PathLike, *, ops: Names = None,
                 nodes: Names = None, exclude: Names = None, skip_invalid: bool = False,
                 link_data: bool = False,
                 json_report: str | os.PathLike | None = None) -> RewriteReport:
    """Rewrite the model file ``source`` into ``target``; weights are never loaded (see
    :func:`save`). ``json_report``: also write the report there as JSON, with the model or not
    at all; ``ops``, ``nodes``, ``exclude``, ``skip_invalid`` as :func:`rewrite_with_report`
    takes them."""
    return _python_file(rewrite_model, source, target, ops, nodes, exclude, skip_invalid,
                        link_data, json_report)


def restore_file(source: str | os.PathLike, target: str | os.PathLike, *, ops: Names = None,
                 nodes: Names = None, exclude: Names = None, skip_invalid: bool = False,
                 link_data: bool = False,
                 json_report: str | os.PathLike | None = None) -> RewriteReport:
    """Restore the model file ``source`` into ``target`` (weights never loaded); the keywords
    as for :func:`rewrite_file`."""
    return _python_file(restore_model, source, target, ops, nodes, exclude, skip_invalid,
                        link_data, json_report)


callable_package(__name__, f"{__name__}:rewrite")
