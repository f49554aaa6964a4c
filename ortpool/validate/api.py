"""The Python API of ``ortpool validate``: keyword arguments in place of the flags, a
:class:`ValidationReport` in place of the terminal text."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import onnx

from ortpool import values
from ortpool.errors import OrtpoolError
from ortpool.options import PYTHON, domain, files, target, timing
from ortpool.options import accuracy as accuracy_group
from ortpool.options import inputs as inputs_group
from ortpool.options import runtime as session
from ortpool.options.files import ModelLike
from ortpool.ort import ISOLATED_LEVEL
from ortpool.report import record as results
from ortpool.report.notebook import ValidationReport
from ortpool.report.text import plural
from ortpool.runtimes import Runtime
from ortpool.runtimes.base import main_kept_out
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule
from ortpool.validate.validator import ValidateOptions, bundled_models, validate_model


def validate(model: ModelLike | Sequence[ModelLike] | None = None, *,
             shapes: inputs_group.Shapes = None, inputs: inputs_group.Arrays = None, seed: int = 0,
             runtime: str | Runtime = target.ONNXRUNTIME,
             runtime_options: Mapping[str, str] | None = None,
             case_timeout: float = target.DEFAULT_CASE_TIMEOUT, providers: session.Providers = None,
             opt_level: str = ISOLATED_LEVEL, intra_op_threads: int = 0, inter_op_threads: int = 0,
             execution_mode: str = "sequential", nonfinite: bool = False, atol: float | None = None,
             rtol: float | None = None, accuracy: AccuracyRule = DEFAULT_RULE,
             reference: bool = False, reference_timeout: float = timing.NODE_REFERENCE_TIMEOUT,
             fail_on_rulings: bool = False, isolate: bool | None = None,
             jobs: int | None = None, timeout: float | None = timing.DEFAULT_TIMEOUT,
             guard_cost: bool = True) -> ValidationReport:
    """Compare a runtime's built-in pooling with ortpool on ``model``, each pooling node alone
    and the model end to end, as ``ortpool validate`` does.

    ``model``: a path, an ``onnx.ModelProto``, or a list of them (default: the bundled models).
    ``shapes``: sizes of inputs' open dims, ``{"image": (1, 3, 224, 224)}``; ``inputs``: arrays
    to feed, a mapping or an ``.npz`` path (the inputs a pool reads as data, rois and MaxUnpool
    indices, must be given); ``seed``: of the generated inputs. ``runtime``: the runtime judged,
    ``"onnxruntime"`` (the default), ``"openvino"``, ``"tract"``, ``"reference"`` or a
    :class:`ortpool.runtimes.Runtime`, any but onnxruntime in a worker process, ``case_timeout``
    seconds a run, with ``runtime_options`` (openvino: ``{"precision": "f32"}``; the onnxruntime
    keywords are refused beside it). ``providers``: in priority order (``"cpu"``,
    ``["openvino", "cpu"]`` or ``[(name, {options})]``); ``opt_level``: of every run (default
    ``disable``: each node judged as written); the threads and ``execution_mode``: the
    sessions' (0: onnxruntime's own). ``nonfinite``: True judges NaN and +-inf inputs too
    (ruling 20; by default a node differing there only is information, ``node.nonfinite``).
    ``atol``/``rtol``: graph outputs' tolerances; ``accuracy``: the sums' rule
    (:class:`ortpool.tolerances.AccuracyRule`). ``reference``: add the onnx reference
    evaluator, ``reference_timeout`` seconds a node. ``fail_on_rulings``: cells docs/rulings.md
    decides count in ``exit_code``. ``isolate``: each model in a child process (default for
    paths), ``jobs`` at once (0: one per core; None: one per core for models of at most 256 MiB in
    all without external data, else 1), ``timeout`` seconds each (900, as ``--timeout``; 0 or
    None: no limit; a model validated in this process has none: another ``timeout`` is refused
    there).
    ``guard_cost``: measure what guarding the nodes that differ on NaN/inf costs.

    Returns a :class:`ValidationReport`; a bad argument raises :class:`ortpool.OrtpoolError` (or
    a ``TypeError``) naming it.
    """
    judged = target.from_python(runtime, runtime_options, case_timeout, target.onnxruntime_set(
        ISOLATED_LEVEL, providers, opt_level, intra_op_threads, inter_op_threads, execution_mode))
    options = ValidateOptions(
        runtime=session.from_python(providers, opt_level, intra_op_threads, inter_op_threads,
                                    execution_mode),
        target=judged.runtime, case_timeout=judged.case_timeout,
        accuracy=accuracy_group.from_python(atol, rtol, accuracy),
        seed=inputs_group.seed(seed, PYTHON), inputs=inputs_group.from_python(shapes, inputs),
        reference=values.flag("reference", reference),
        reference_timeout=timing.reference_timeout(reference_timeout, PYTHON),
        nonfinite=domain.from_python(nonfinite), guard_cost=values.flag("guard_cost", guard_cost))
    fail_on_rulings = values.flag("fail_on_rulings", fail_on_rulings)
    jobs, limit = timing.jobs(jobs, PYTHON), timing.timeout(timeout, PYTHON)
    models = _models(model)
    protos = any(isinstance(m, onnx.ModelProto) for m in models)
    isolate = not protos if isolate is None else values.flag("isolate", isolate)
    if isolate and protos:
        raise OrtpoolError("isolate=True takes model paths, not ModelProto objects")
    if not isolate:
        # nothing can stop a hang in this process: a limit asked for would be a false promise
        if limit not in (None, timing.DEFAULT_TIMEOUT):
            why = ("a ModelProto is validated in this process, where no limit applies (give its "
                   "path, or leave timeout out)" if protos else "isolate=False validates in "
                   "this process, where no limit applies (leave one of them out)")
            raise OrtpoolError(f"timeout={timeout} limits a model validated in a child process; "
                               + why)
        limit = None
    if isolate:
        from ortpool.validate import batch

        with main_kept_out():
            found = batch.run_models(
                [os.fspath(m) for m in models], options, jobs=batch.jobs_from(jobs, models),
                timeout=limit, style=PYTHON)
    else:
        found = [_in_process(m, options, len(models) == 1) for m in models]
    warning = unmatched(options, found, PYTHON)
    if warning is not None:
        import warnings

        warnings.warn(warning, stacklevel=2)
    return ValidationReport(found, settings(options, limit, fail_on_rulings), fail_on_rulings)


def unmatched(options: Any, found: Sequence[results.ModelResult], style: str) -> str | None:
    """The warning for ``--shape``/``--inputs`` names no model of a run of several has (each
    model takes the names it has, so a misspelt one changed nothing), or None."""
    from ortpool.model.inputs import option

    read = [m.inputs for m in found if m.inputs]
    if len(found) < 2 or not read:
        return None
    given = [("shape", n) for n in options.inputs.shapes] + [
        ("inputs", n) for n in options.inputs.arrays]
    missing = [(what, n) for what, n in given if not any(n in inputs for inputs in read)]
    if not missing:
        return None
    listed = ", ".join(f"{option(what, style)} {n!r}" for what, n in missing)
    return (f"{listed}: no input of that name in the {plural(len(read), 'model')} whose inputs "
            "were read; nothing was sized or fed by it")


def settings(options: Any, timeout: float | None, fail_on_rulings: bool) -> dict[str, Any]:
    """The run's settings as the JSON and HTML reports name them."""
    runtime, accuracy = options.runtime, options.accuracy
    return {
        "seed": options.seed, "shapes": {k: list(v) for k, v in options.inputs.shapes.items()},
        "inputs": options.inputs.origin or None,
        "providers": [str(p) for p in runtime.providers], "opt_level": runtime.level,
        "optimize": runtime.level != ISOLATED_LEVEL,
        "runtime": (runtime.describe() if options.target is None
                    else {**options.target.describe(), "case_timeout": options.case_timeout}),
        "atol": accuracy.atol, "rtol": accuracy.rtol, "accuracy": accuracy.to_dict(),
        "reference": options.reference, "fail_on_rulings": fail_on_rulings, "timeout": timeout,
    }


def _models(model: Any) -> list[ModelLike]:
    """The models a call names: one, a list of at least one, or the bundled ones (None)."""
    if model is None:
        return list(bundled_models())
    if isinstance(model, (str, os.PathLike, onnx.ModelProto)):
        return [files.model(model)]
    if not isinstance(model, (list, tuple)):
        raise values.wrong("model", model, "a path, an onnx.ModelProto, or a list of them")
    if not model:
        raise OrtpoolError("model=[] names no model; give at least one (or None: the bundled "
                           "models)")
    return [files.model(m, f"model[{i}]") for i, m in enumerate(model)]


def _in_process(model: ModelLike, options: Any, strict: bool) -> results.ModelResult:
    """One model validated in this process (one that cannot be is a result with its reason)."""
    label = model.graph.name or "<model>" if isinstance(model, onnx.ModelProto) else str(model)
    try:
        files.data_folder(model, label)
        source = model if isinstance(model, onnx.ModelProto) else Path(model)
        # as a worker's result, so that the report pickles
        return validate_model(source, options, strict_shapes=strict, label=label).portable()
    except (OrtpoolError, OSError) as err:
        return results.ModelResult(path=label, outcome=results.COULD_NOT_RUN, error=str(err))
