"""The Python API of ``ortpool validate`` and ``ortpool conformance``: keyword arguments in place
of the flags, a report object in place of the terminal text.

::

    import ortpool
    report = ortpool.validate("model.onnx", shapes={"image": (1, 3, 224, 224)})
    report.ok, report.exit_code          # False, 1: a node differs
    print(report.summary())              # the verdict and the models that do not agree
    report                               # in a notebook: the summary table (_repr_html_)
    report.to_json()                     # everything, as ``--json`` writes it

:class:`Report` is what every report of the API shares (``ok``, ``exit_code``, ``summary()``,
``to_dict()``, ``to_json()``, ``_repr_html_()``, a one-line ``repr``); messages made for a
Python caller name arguments (``shapes=``), not flags (``--shape``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import onnx

from ortpool.errors import OrtpoolError
from ortpool.model import InputSpec
from ortpool.model.inputs import PYTHON
from ortpool.ort import ISOLATED_LEVEL, RuntimeSpec, parse_providers
from ortpool.report import record as results
from ortpool.report.notebook import ValidationReport
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule

ModelLike = str | os.PathLike | onnx.ModelProto


def validate_options(
    spec: InputSpec,
    runtime: RuntimeSpec,
    seed: int = 0,
    atol: float | None = None,
    rtol: float | None = None,
    accuracy: AccuracyRule = DEFAULT_RULE,
    reference: bool = False,
    reference_timeout: float = 20.0,
    nonfinite: bool = False,
    guard_cost: bool = True,
) -> Any:
    """The validator's options (:class:`ortpool.validate.ValidateOptions`): the model's inputs
    (``spec``, whose style names the arguments in messages) and the runtime, the rest as
    :func:`validate` takes them; an :class:`OrtpoolError` names a bad one."""
    from ortpool.validate.validator import ValidateOptions

    if not reference_timeout > 0:
        raise OrtpoolError(f"reference_timeout={reference_timeout} must be > 0")
    for name, value in (("atol", atol), ("rtol", rtol)):
        if value is not None and not value >= 0:
            raise OrtpoolError(f"{name}={value} must be >= 0")
    return ValidateOptions(
        runtime=runtime.check(),
        atol=atol,
        rtol=rtol,
        accuracy=dataclasses.replace(accuracy, atol=atol, rtol=rtol),
        seed=seed,
        shapes=spec.shapes,
        inputs=spec,  # shapes and arrays as one spec (inputs_path is for a spec made later)
        reference=reference,
        reference_timeout=reference_timeout,
        nonfinite=nonfinite,
        guard_cost=guard_cost,
    )


def validate(
    model: ModelLike | Sequence[ModelLike] | None = None,
    *,
    shapes: Mapping[str, Sequence[int]] | Sequence[str] | None = None,
    inputs: Mapping[str, Any] | str | os.PathLike | None = None,
    seed: int = 0,
    providers: Sequence[str] | str | None = None,
    opt_level: str = ISOLATED_LEVEL,
    runtime: RuntimeSpec | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    accuracy: AccuracyRule = DEFAULT_RULE,
    reference: bool = False,
    reference_timeout: float = 20.0,
    fail_on_rulings: bool = False,
    isolate: bool | None = None,
    jobs: int = 1,
    timeout: float | None = None,
    nonfinite: bool = False,
    guard_cost: bool = True,
) -> ValidationReport:
    """Compare onnxruntime's built-in pooling with ortpool on ``model``: each pooling node alone
    and the whole model end to end, as ``ortpool validate`` does.

    ``model``: a path, an ``onnx.ModelProto``, or a list of them (default: the bundled models).
    ``shapes``: sizes of inputs' open dims, ``{"image": (1, 3, 224, 224)}`` (or
    ``["image:1,3,224,224"]``); ``inputs``: arrays to feed, a name -> array mapping or an
    ``.npz`` path (inputs a pooling node reads as data, rois and MaxUnpool indices, must be
    given); ``seed``: of the generated inputs. ``providers``: execution providers in priority
    order (``"cpu"``, ``["openvino", "cpu"]``; default the CPU provider); ``opt_level``: graph
    optimizations of every run (default ``disable``: each node judged as written); ``runtime``:
    the whole runtime description instead (:class:`ortpool.ort.RuntimeSpec`). ``atol``/``rtol``:
    graph outputs' tolerances (default per type); ``accuracy``: the sums' accuracy rule
    (:class:`ortpool.tolerances.AccuracyRule`). ``reference``: add the onnx reference evaluator,
    ``reference_timeout`` seconds per node. ``fail_on_rulings``: cells docs/rulings.md decides count
    as differences in ``exit_code``. ``isolate``: each model in a child process of its own, as
    the command runs them (a crash or a hang is reported, not suffered; default for paths; a
    ModelProto runs in this process), ``jobs`` at once (0: one per core), ``timeout`` seconds
    each (None: no limit). ``nonfinite``: the input domain of the verdicts (ruling 20): False
    (the default), every finite input, the nodes that differ on NaN and +-inf only reported as
    information (``node.nonfinite``); True, NaN and +-inf judged too. ``guard_cost``: in the
    finite domain, measure what guarding those nodes costs, as the command line does
    (:func:`ortpool.forms.price.guard_price`: the forms fix would write, the models timed as
    ``ortpool bench MODEL FIXED`` times them; default True).

    Returns a :class:`ValidationReport`; node-level findings are in the report, a bad argument
    raises :class:`ortpool.OrtpoolError`.
    """
    spec = InputSpec.make(shapes, inputs, style=PYTHON)
    runtime = runtime or RuntimeSpec(parse_providers(providers), opt_level)
    options = validate_options(
        spec, runtime, seed, atol, rtol, accuracy, reference, reference_timeout, nonfinite,
        guard_cost,
    )
    models = _models(model)
    if isolate is None:
        isolate = not any(isinstance(m, onnx.ModelProto) for m in models)
    if isolate:
        if any(isinstance(m, onnx.ModelProto) for m in models):
            raise OrtpoolError("isolate=True takes model paths, not ModelProto objects")
        from ortpool.validate import batch

        with _main_kept_out():
            found = batch.run_models(
                [os.fspath(m) for m in models],
                options,
                jobs=batch.jobs_from(jobs, len(models)),
                timeout=timeout,
            )
    else:
        found = [_in_process(m, options, len(models) == 1) for m in models]
    settings = {
        "seed": seed,
        "shapes": {k: list(v) for k, v in options.inputs.shapes.items()},
        "inputs": options.inputs.origin or None,
        "providers": [str(p) for p in options.runtime.providers],
        "opt_level": options.runtime.level,
        "optimize": options.runtime.level != ISOLATED_LEVEL,
        "runtime": options.runtime.describe(),
        "atol": atol,
        "rtol": rtol,
        "accuracy": options.accuracy.to_dict(),
        "reference": reference,
        "fail_on_rulings": fail_on_rulings,
        "timeout": timeout,
    }
    return ValidationReport(found, settings, fail_on_rulings)


@contextlib.contextmanager
def _main_kept_out() -> Iterator[None]:
    """The children validate with ortpool's code alone: the caller's main module, which
    multiprocessing imports in each child (running a script's top level, and its
    ``ortpool.validate`` call, again unless the script has the ``__main__`` guard), is kept
    out of their preparation while they start."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved = {k: main.__dict__.pop(k) for k in ("__file__",) if k in main.__dict__}
    spec = getattr(main, "__spec__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.update(saved)
        main.__spec__ = spec


def _models(model: ModelLike | Sequence[ModelLike] | None) -> list[ModelLike]:
    if model is None:
        from ortpool.validate.validator import bundled_models

        return list(bundled_models())
    if isinstance(model, (str, os.PathLike, onnx.ModelProto)):
        return [model]
    return list(model)


def _in_process(model: ModelLike, options: Any, strict: bool) -> results.ModelResult:
    """One model validated in this process; a model that cannot be validated is a result with
    its reason, as the command reports it."""
    from ortpool.validate.validator import validate_model

    label = model.graph.name or "<model>" if isinstance(model, onnx.ModelProto) else str(model)
    try:
        source = model if isinstance(model, onnx.ModelProto) else Path(model)
        return validate_model(source, options, strict_shapes=strict, label=label)
    except (OrtpoolError, OSError) as err:
        return results.ModelResult(path=label, outcome=results.COULD_NOT_RUN, error=str(err))
