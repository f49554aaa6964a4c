"""``ortpool fix``: every pooling node computed exactly by the runtime's own kernels where a
standard-op form can do it, proven node by node against ortpool's kernels.

API::

    import ortpool
    fixed = ortpool.fix("model.onnx")                       # or an onnx.ModelProto
    fixed, report = ortpool.fix.fix_with_report(model, nodes=["pool1"], opt_level="all")
    print(report)                                           # realizations, forms, proofs
    report = ortpool.fix.fix_file("in.onnx", "out.onnx")    # external data handled, exit code
    report.exit_code()                                      # 0 exact, 1 needs ortpool, 2 unproven

For each node: left unchanged where the runtime already gives the spec's result, else the
cheapest standard-op form proven exact (:mod:`ortpool.fix.forms`), else ortpool's op (the
report names the nodes that then need ortpool at run time). ``ortpool.fix`` is this package
and callable (it calls :func:`fix`), like ``ortpool.rewrite``.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import onnx

from ortpool.fix.fixer import Options, fix_model
from ortpool.fix.report import FixReport, NodeFix
from ortpool.fix.runtime import DEFAULT_LEVEL, Runtime, parse_providers
from ortpool.rewrite import external
from ortpool.rewrite.selection import Selection

__all__ = ["FixReport", "NodeFix", "fix", "fix_file", "fix_with_report"]

ModelLike = onnx.ModelProto | str | os.PathLike


def _options(
    ops: Sequence[str] | str | None,
    nodes: Sequence[str] | str | None,
    exclude: Sequence[str] | str | None,
    skip_invalid: bool,
    providers: Sequence[str] | str | None,
    opt_level: str,
    nonfinite: bool,
    seed: int,
) -> Options:
    return Options(
        selection=Selection.make(ops, nodes, exclude),
        skip_invalid=skip_invalid,
        runtime=Runtime(parse_providers(providers), opt_level),
        nonfinite=nonfinite,
        seed=seed,
    )


def fix_with_report(
    model: ModelLike,
    *,
    ops: Sequence[str] | str | None = None,
    nodes: Sequence[str] | str | None = None,
    exclude: Sequence[str] | str | None = None,
    skip_invalid: bool = False,
    providers: Sequence[str] | str | None = None,
    opt_level: str = DEFAULT_LEVEL,
    nonfinite: bool = False,
    seed: int = 0,
) -> tuple[onnx.ModelProto, FixReport]:
    """A fixed copy of ``model`` and the report; the caller's proto is never changed.

    ``ops``/``nodes``/``exclude``: only these operators / only / never these node names (as
    ``ortpool rewrite`` takes them); ``skip_invalid``: a node failing its schema checks is left
    as it is and reported instead of raising; ``providers``: the execution
    providers to prove on (default CPU); ``opt_level``: onnxruntime's graph optimization level
    the model will run at (``disable``, ``basic``, ``extended``, ``layout``, ``all``; default
    ``all``, onnxruntime's own); ``nonfinite``: prove MaxPool on NaN and -inf too (and guard
    it where the runtime drops them). A model given by path is loaded without its external
    data; proofs read it from the model's folder.
    """
    options = _options(ops, nodes, exclude, skip_invalid, providers, opt_level, nonfinite, seed)
    if isinstance(model, onnx.ModelProto):
        return fix_model(model, options)
    return fix_model(external.load(model), options, Path(model).parent)


def fix(model: ModelLike, **options: Any) -> onnx.ModelProto:
    """:func:`fix_with_report` without the report."""
    return fix_with_report(model, **options)[0]


def fix_file(
    source: str | os.PathLike,
    target: str | os.PathLike,
    *,
    allow_unproven: bool = False,
    dry_run: bool = False,
    copy_data: bool = False,
    **options: Any,
) -> FixReport:
    """Fix the model file ``source`` into ``target`` (weights never loaded, external data
    hard-linked or copied next to it as ``ortpool rewrite`` does). Nothing is written when a
    node could not be proven unless ``allow_unproven``, nor with ``dry_run``."""
    external.check_paths(source, target)
    fixed, report = fix_with_report(source, **options)
    if report.unproven and not allow_unproven:
        report.notes.append("nothing written: some nodes are unproven (--allow-unproven)")
        return report
    if dry_run:
        report.notes.append("nothing written (--dry-run)")
        return report
    from ortpool.rewrite import save

    report.notes.extend(save(fixed, target, Path(source).parent, copy_data=copy_data))
    report.written = os.fspath(target)
    return report


class _CallablePackage(types.ModuleType):
    """``ortpool.fix(model)`` calls :func:`fix` while ``ortpool.fix`` stays the package."""

    def __call__(self, model: ModelLike, **options: Any) -> onnx.ModelProto:
        return fix(model, **options)


sys.modules[__name__].__class__ = _CallablePackage
