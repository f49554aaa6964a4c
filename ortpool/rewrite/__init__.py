"""Rewrite a model's standard pooling nodes to ortpool's op types, and restore them.

API::

    import ortpool
    model = ortpool.rewrite("model.onnx")                  # or an onnx.ModelProto
    model, report = ortpool.rewrite.rewrite_with_report(model, ops="MaxPool", skip_invalid=True)
    print(report)                                          # counts per op version, nodes left alone
    back = ortpool.restore(model)
    report = ortpool.rewrite.rewrite_file("in.onnx", "out/model.onnx")   # external data handled

``ortpool.rewrite`` is this package and is itself callable (it calls :func:`rewrite`), so it
means the same thing whether or not ``ortpool.rewrite`` was imported as a module first.

A model given as a path is loaded without its external data; the returned proto still refers to
the weights relative to the source's directory. To write it elsewhere use :func:`rewrite_file` /
:func:`restore_file` (or :func:`save`), which make the weights reachable from the output.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

import onnx

from ortpool import modelfile
from ortpool.model import save, write_file
from ortpool.model.selection import Selection
from ortpool.report.rewrites import NodeReport, RewriteReport
from ortpool.rewrite.passes import restore_model, rewrite_model
from ortpool.rewrite.retarget import CAST_MARK

__all__ = [
    "CAST_MARK",
    "NodeReport",
    "RewriteReport",
    "Selection",
    "restore",
    "restore_file",
    "restore_with_report",
    "rewrite",
    "rewrite_file",
    "rewrite_with_report",
    "save",
    "write_file",
]

ModelLike = onnx.ModelProto | str | os.PathLike


def _model(model: ModelLike) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        copy = onnx.ModelProto()
        copy.CopyFrom(model)  # the caller's model is never changed
        return copy
    return modelfile.read(model, load_external_data=False)


def rewrite_with_report(
    model: ModelLike,
    *,
    ops: Any = None,
    nodes: Any = None,
    exclude: Any = None,
    skip_invalid: bool = False,
) -> tuple[onnx.ModelProto, RewriteReport]:
    """A copy of ``model`` with its standard pooling nodes retargeted to ortpool, and the report.

    ``ops``: operator names (``"MaxPool,AveragePool"`` or a list; default all three);
    ``nodes``: only nodes with these names; ``exclude``: never these. An invalid node raises
    :class:`ortpool.OrtpoolError` naming the node, version and attribute, unless
    ``skip_invalid``, which leaves it built-in and reports it.
    """
    selection = Selection.make(ops, nodes, exclude)
    proto = _model(model)
    report = rewrite_model(proto, selection, skip_invalid)
    return proto, report


def rewrite(model: ModelLike, **options: Any) -> onnx.ModelProto:
    """:func:`rewrite_with_report` without the report."""
    return rewrite_with_report(model, **options)[0]


def restore_with_report(
    model: ModelLike,
    *,
    ops: Any = None,
    nodes: Any = None,
    exclude: Any = None,
    skip_invalid: bool = False,
) -> tuple[onnx.ModelProto, RewriteReport]:
    """A copy of ``model`` with its ortpool nodes turned back into standard nodes, and the report.

    Attributes equal to the schema default are omitted; the Casts a rewrite inserted are removed,
    and the ``ortpool`` opset import where nothing uses it any more.
    """
    selection = Selection.make(ops, nodes, exclude)
    proto = _model(model)
    report = restore_model(proto, selection, skip_invalid)
    return proto, report


def restore(model: ModelLike, **options: Any) -> onnx.ModelProto:
    """:func:`restore_with_report` without the report."""
    return restore_with_report(model, **options)[0]


def _run_file(
    action: Any,
    source: str | os.PathLike,
    target: str | os.PathLike,
    link_data: bool,
    json_report: str | os.PathLike | None,
    options: dict[str, Any],
) -> RewriteReport:
    return write_file(
        source,
        target,
        lambda model, _: action(model, **options),
        link_data=link_data,
        json_report=json_report,
    )


def rewrite_file(
    source: str | os.PathLike,
    target: str | os.PathLike,
    *,
    link_data: bool = False,
    json_report: str | os.PathLike | None = None,
    **options: Any,
) -> RewriteReport:
    """Rewrite the model file ``source`` into ``target``; weights are never loaded (see
    :func:`save`). ``json_report``: also write the report there as JSON, with the model or not
    at all."""
    return _run_file(rewrite_with_report, source, target, link_data, json_report, options)


def restore_file(
    source: str | os.PathLike,
    target: str | os.PathLike,
    *,
    link_data: bool = False,
    json_report: str | os.PathLike | None = None,
    **options: Any,
) -> RewriteReport:
    """Restore the model file ``source`` into ``target`` (weights never loaded); ``json_report``
    as for :func:`rewrite_file`."""
    return _run_file(restore_with_report, source, target, link_data, json_report, options)


class _CallablePackage(types.ModuleType):
    """Lets ``ortpool.rewrite(model)`` call :func:`rewrite` while ``ortpool.rewrite`` stays the
    package (the import system binds the package to that name once it is imported)."""

    def __call__(self, model: ModelLike, **options: Any) -> onnx.ModelProto:
        return rewrite(model, **options)


sys.modules[__name__].__class__ = _CallablePackage
