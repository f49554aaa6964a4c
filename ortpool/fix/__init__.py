"""``ortpool fix``: every pooling node computed exactly by the runtime's own kernels where a
standard-op form can do it, proven node by node against ortpool's kernels (docs/fix.md).

Each node is left unchanged where the runtime already gives the spec's result, else written as
the cheapest standard-op form proven exact (:mod:`ortpool.forms.plan`), else as ortpool's op
(the report names the nodes that then need ortpool at run time). ``ortpool.fix`` is this
package and callable (it calls :func:`fix`), like ``ortpool.rewrite``: ``ortpool.fix(model)``
gives a :class:`FixResult` (``.model``, ``.report``, ``.summary()``, ``.save(path)``; it
unpacks as a pair).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import onnx

from ortpool import modelfile, values
from ortpool.errors import OrtpoolError
from ortpool.fix.fixer import Options, fix_model
from ortpool.lazy import callable_package
from ortpool.model.files import write_file
from ortpool.options import PYTHON, domain, files, runtime
from ortpool.options import accuracy as accuracy_group
from ortpool.options import inputs as inputs_group
from ortpool.ort.runtime_spec import DEFAULT_LEVEL
from ortpool.report.fixes import FixReport, FixResult, NodeFix
from ortpool.report.outcomes import Outcome, Realization
from ortpool.staging import same_file
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule

__all__ = [
    "FixReport", "FixResult", "NodeFix", "Outcome", "Realization", "fix", "fix_file",
    "fix_with_report"
]  # fmt: skip

ModelLike = onnx.ModelProto | str | os.PathLike


def fix(
    model: ModelLike,
    *,
    ops: str | Sequence[str] | None = None,
    nodes: str | Sequence[str] | None = None,
    exclude: str | Sequence[str] | None = None,
    skip_invalid: bool = False,
    shapes: inputs_group.Shapes = None,
    inputs: inputs_group.Arrays = None,
    seed: int = 0,
    providers: runtime.Providers = None,
    opt_level: str = DEFAULT_LEVEL,
    intra_op_threads: int = 0,
    inter_op_threads: int = 0,
    execution_mode: str = "sequential",
    nonfinite: bool = False,
    accuracy: AccuracyRule = DEFAULT_RULE,
    lift_opset: bool = True,
    source_dir: str | os.PathLike | None = None,
) -> FixResult:
    """Each pooling node of ``model`` (a path or an ``onnx.ModelProto``) rewritten into a form
    the runtime computes exactly, proven node by node, as ``ortpool fix`` does; returns a
    :class:`FixResult`: the fixed copy (``.model``; the caller's proto is never changed) and the
    report (``.report``, ``.summary()``, ``.ok``, ``.exit_code``, ``.save(path)``).

    ``ops``/``nodes``/``exclude``: only these operators / only / never these node names (as
    ``ortpool rewrite`` takes them); ``skip_invalid``: a node failing its schema checks is left as
    it is and reported instead of raising; ``shapes`` (``{"x": (1, 3, 48, 192)}`` or
    ``["x:1,3,48,192"]``) and ``inputs`` (an .npz path or name -> array): the model's inputs of
    the capture and proof runs, resolved as ``ortpool validate`` resolves them
    (:func:`ortpool.model.inputs.resolve`: open dims otherwise take the defaults; rois and
    MaxUnpool indices fed as inputs must be given); ``seed``: of the values around the built
    proof cases; ``providers``: the execution providers to prove on (a name, a list, or
    onnxruntime's ``[(name, {options})]``; default CPU); ``opt_level``: onnxruntime's graph
    optimization level the model will run at (``disable``, ``basic``, ``extended``, ``layout``,
    ``all``; default ``all``, onnxruntime's own); ``intra_op_threads``, ``inter_op_threads``,
    ``execution_mode``: the sessions' (0: onnxruntime's own); ``nonfinite``: the input domain
    (ruling 20): False (the default) proves every node on finite inputs, and the report says NaN
    and +-inf were not covered; True proves them too (NaN, +inf, -inf at every tap position,
    ruling 18) and guards a max where the runtime gets them wrong, at a cost; ``accuracy``: ruling
    17's thresholds for averages and norms (a node whose only difference is an accuracy note is
    left as it is; :class:`ortpool.tolerances.AccuracyRule`); ``lift_opset``: where nodes of a
    model below opset 11 stay unproven or need ortpool's op, try the model at a higher ai.onnx
    opset where every node keeps its meaning (docs/fix.md, "The opset lift"). A model given by
    path is read without its external data, which the proofs read from the model's folder
    (``source_dir`` for a proto whose data is not loaded). A bad argument raises
    :class:`ortpool.OrtpoolError` (or a ``TypeError``) naming it.
    """
    options = _options(locals())
    model = files.model(model)
    if source_dir is not None:
        source_dir = values.path("source_dir", source_dir)
    else:
        files.data_folder(model, "model", " or source_dir=")
    if not isinstance(model, onnx.ModelProto):
        source_dir = Path(model).parent if source_dir is None else source_dir
        model = modelfile.read(model, load_external_data=False)
    fixed, report = fix_model(model, options, source_dir)
    # absolute: .save() reads the data from there even after the working directory changed
    return FixResult(fixed, report, None if source_dir is None else os.path.abspath(source_dir))


def _options(given: Mapping[str, Any]) -> Options:
    """:func:`fix`'s keywords (``given``: its arguments by name) checked into its options."""
    return Options(
        selection=files.selection(given["ops"], given["nodes"], given["exclude"]),
        skip_invalid=values.flag("skip_invalid", given["skip_invalid"]),
        runtime=runtime.from_python(given["providers"], given["opt_level"],
                                    given["intra_op_threads"], given["inter_op_threads"],
                                    given["execution_mode"]),
        nonfinite=domain.from_python(given["nonfinite"]),
        seed=inputs_group.seed(given["seed"], PYTHON),
        lift_opset=values.flag("lift_opset", given["lift_opset"]),
        model_inputs=inputs_group.from_python(given["shapes"], given["inputs"]),
        accuracy=accuracy_group.from_python(accuracy=given["accuracy"]),
    )


def fix_with_report(model: ModelLike, **options: Any) -> tuple[onnx.ModelProto, FixReport]:
    """:func:`fix`'s model and report as a pair (the same arguments)."""
    result = fix(model, **options)
    return result.model, result.report


def fix_file(
    source: str | os.PathLike,
    target: str | os.PathLike,
    *,
    allow_unproven: bool = False,
    dry_run: bool = False,
    link_data: bool = False,
    json_report: str | os.PathLike | None = None,
    **options: Any,
) -> FixReport:
    """Fix the model file ``source`` into ``target``, written as ``ortpool rewrite`` writes
    (:func:`ortpool.model.files.write_file`: weights never loaded, external data cloned or copied
    next to it, hard-linked with ``link_data``; every destination checked before the proofs
    run; all files or none). No model is written when a node could not be proven unless
    ``allow_unproven``, nor with ``dry_run``; the JSON report (``json_report``) is written
    either way. ``options``: :func:`fix`'s keywords."""
    if "source_dir" in options:  # the source's own folder
        raise TypeError("fix_file() got an unexpected keyword argument 'source_dir'")
    try:
        bound = inspect.signature(fix).bind(source, **options)
    except TypeError as err:  # "got an unexpected keyword argument 'x'", as Python says it
        raise TypeError(f"fix_file() {err}") from None
    bound.apply_defaults()
    checked = _options(bound.arguments)
    flags = [values.flag(k, v) for k, v in (("allow_unproven", allow_unproven),
                                             ("dry_run", dry_run), ("link_data", link_data))]
    given = bound.arguments["inputs"]
    return run_file(
        files.model(source, "source", proto=False), files.model(target, "target", proto=False),
        checked, *flags, None if json_report is None else values.path("json_report", json_report),
        given if isinstance(given, (str, os.PathLike)) else None,
    )


def run_file(source: str | os.PathLike, target: str | os.PathLike, options: Options,
             allow_unproven: bool = False, dry_run: bool = False, link_data: bool = False,
             json_report: str | os.PathLike | None = None,
             inputs_file: str | os.PathLike | None = None) -> FixReport:
    """:func:`fix_file` on options already built (the command line's call); ``inputs_file``:
    the .npz the inputs were read from, which neither file written may be."""

    def produce(model: onnx.ModelProto, folder: Path) -> tuple[onnx.ModelProto | None, FixReport]:
        fixed, report = fix_model(model, options, folder)
        python = report.style == PYTHON  # the notes name the arguments, or the flags
        held = ("nothing written: some nodes are unproven "
                f"({'allow_unproven=True' if python else '--allow-unproven'})"
                if report.unproven and not allow_unproven
                else f"nothing written ({'dry_run=True' if python else '--dry-run'})" if dry_run
                else "")
        if held:
            report.notes.append(held)
            return None, report
        report.written = os.fspath(target)
        return fixed, report

    for path, what in ((target, "the output"), (json_report, "the JSON report")):
        if inputs_file is not None and path is not None and same_file(path, inputs_file):
            raise OrtpoolError(f"{what} {Path(path)} is the inputs file; write to another path")
    return write_file(source, target, produce, link_data=link_data, json_report=json_report)


# ``ortpool.fix(model)`` calls :func:`fix` while ``ortpool.fix`` stays the package.
callable_package(__name__, f"{__name__}:fix")
