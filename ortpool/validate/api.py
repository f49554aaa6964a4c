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
import html
import json
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
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule
from ortpool.validate import results

ModelLike = str | os.PathLike | onnx.ModelProto


class Report:
    """What the API's reports share. A subclass gives :attr:`exit_code`, :meth:`summary_lines`,
    :meth:`to_dict` and :meth:`_describe` (the ``repr``'s words)."""

    @property
    def exit_code(self) -> int:  # pragma: no cover - every report defines it
        raise NotImplementedError

    @property
    def ok(self) -> bool:
        """True when the command would exit 0."""
        return self.exit_code == 0

    def summary_lines(self) -> list[str]:  # pragma: no cover - every report defines it
        raise NotImplementedError

    def summary(self) -> str:
        """A few lines: the verdict and what does not agree."""
        return "\n".join(self.summary_lines())

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - every report defines it
        raise NotImplementedError

    def to_json(self) -> str:
        """The report as the command's ``--json`` writes it."""
        return json.dumps(self.to_dict(), indent=2, default=str) + "\n"

    def _describe(self) -> str:  # pragma: no cover - every report defines it
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self._describe()}, exit {self.exit_code}>"

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        """A notebook's view: the summary as preformatted text."""
        return f"<pre>{html.escape(self.summary())}</pre>"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


@dataclasses.dataclass(repr=False)
class ValidationReport(Report):
    """Every model validated: ``models`` (:class:`ortpool.validate.ModelResult`, in the order
    given; ``report[0]``, ``len(report)``, ``for model in report``), the run's settings."""

    models: list[results.ModelResult]
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    fail_on_rulings: bool = False

    @property
    def exit_code(self) -> int:
        """As ``ortpool validate`` exits: 0 every model agrees, 1 one differs, 2 one was not
        validated."""
        return results.exit_code(self.models, self.fail_on_rulings)

    @property
    def differing(self) -> list[results.ModelResult]:
        """The models that differ (validated, with a difference from the spec)."""
        return [m for m in self.models if not m.outcome and m.failing]

    def summary_lines(self) -> list[str]:
        """The verdict, then one line per model that does not agree (at most 10)."""
        from ortpool.validate import terminal

        shown = [m for m in self.models if m.status != results.AGREE]
        lines = terminal.summary_lines(self.models)
        lines += [line for m in shown[:10] for line in terminal.fit(terminal.model_line(m))]
        if len(shown) > 10:
            lines.append(f"... and {len(shown) - 10} more (report.report() lists every one)")
        return lines + terminal.information_lines(self.models, "nonfinite=True")

    def report(self, verbose: bool = False) -> str:
        """The terminal report ``ortpool validate`` prints (``verbose``: as with ``-v``)."""
        from ortpool.validate import terminal

        lines = [line for m in self.models for line in terminal.model_report(m, verbose)]
        lines += ["", *terminal.information_lines(self.models, "nonfinite=True")]
        return "\n".join([*lines, *terminal.summary_lines(self.models)])

    def to_dict(self) -> dict[str, Any]:
        """The JSON report's document (``ortpool validate --json``)."""
        from ortpool.validate import jsonreport

        return jsonreport.validate_document(self.models, self.settings)

    def to_json(self) -> str:
        from ortpool.validate import jsonreport

        return jsonreport.dumps(self.to_dict())

    def to_html(self) -> str:
        """The self-contained HTML report (``ortpool validate --html``)."""
        from ortpool.validate import html as html_report

        return html_report.render(self.models, self.settings)

    def _repr_html_(self) -> str:
        from ortpool.validate import html as html_report

        return html_report.summary(self.models)

    def _describe(self) -> str:
        text = _plural(len(self.models), "model")
        differing = self.differing
        if differing:
            nodes = sum(1 for m in differing for n in m.nodes if n.failing)
            text += f", {len(differing)} differ" + ("s" if len(differing) == 1 else "")
            text += f" ({_plural(nodes, 'node')})" if nodes else " (end to end)"
        not_run = sum(1 for m in self.models if m.outcome)
        if not_run:
            text += f", {not_run} not validated"
        return text

    def __len__(self) -> int:
        return len(self.models)

    def __iter__(self) -> Iterator[results.ModelResult]:
        return iter(self.models)

    def __getitem__(self, index: int) -> results.ModelResult:
        return self.models[index]


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
    guard_cost: Any = None,
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
    guard_cost: Any = None,
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
    information (``node.nonfinite``); True, NaN and +-inf judged too. ``guard_cost``: a function
    pricing the guard of those nodes on the model, as the command line does
    (``ortpool.fix.cost.priced``: fix and timing, about a second per such model); None (the
    default) measures nothing.

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


@dataclasses.dataclass(repr=False)
class ConformanceReport(Report):
    """The grid's cases and their results (``cases``: each with ``.case`` and ``.node``)."""

    cases: list[Any]
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """0: the sweep ran (``ortpool conformance`` reports differences, it does not fail on
        them; :attr:`differing` counts them)."""
        return 0

    @property
    def differing(self) -> list[Any]:
        """The cases whose built-in result differs from the spec."""
        return [r for r in self.cases if r.node.failing]

    def summary_lines(self) -> list[str]:
        from ortpool.validate.conformance import matrix

        rows = matrix(self.cases)
        lines = [
            f"{_plural(len(self.cases), 'case')}: {len(self.differing)} differ from the spec"
        ]
        for row in rows:
            bad = sum(n for s, n in row.statuses.items() if s in results.FAILING)
            if bad:
                lines.append(f"  {row.key}: {bad} of {row.cases} cases differ")
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {"settings": self.settings, "cases": [r.to_dict() for r in self.cases]}

    def _describe(self) -> str:
        return f"{_plural(len(self.cases), 'case')}, {len(self.differing)} differ"


def conformance(
    *,
    ops: Sequence[str] | None = None,
    versions: Sequence[int] | None = None,
    dtypes: Sequence[str] | None = None,
    ranks: Sequence[int] = (1, 2, 3),
    seed: int = 0,
    providers: Sequence[str] | str | None = None,
    opt_level: str = ISOLATED_LEVEL,
    runtime: RuntimeSpec | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    accuracy: AccuracyRule = DEFAULT_RULE,
    nonfinite: bool = False,
) -> ConformanceReport:
    """Sweep the generated grid of single-node pooling cases through onnxruntime's built-ins and
    ortpool, as ``ortpool conformance`` does.

    ``ops``, ``versions``, ``dtypes`` (ONNX names: ``float`` is float32, ``double``...; numpy's
    spellings are read too), ``ranks``: only these cases (default every one, 1-3 spatial axes);
    ``seed``: of the case inputs; ``providers``, ``opt_level``, ``runtime``, ``atol``, ``rtol``,
    ``accuracy``: as :func:`validate` takes them; ``nonfinite``: the cases holding NaN too (ruling
    20: the non-finite domain). Returns a :class:`ConformanceReport`.
    """
    from ortpool.validate.conformance import run_conformance, select_cases

    cases = select_cases(ops, versions, dtypes, ranks, nonfinite)
    if runtime is None:
        runtime = RuntimeSpec(parse_providers(providers), opt_level)
    rule = dataclasses.replace(accuracy, atol=atol, rtol=rtol)
    found = run_conformance(cases, seed, runtime.check(), rule,
                            domain="non-finite" if nonfinite else "finite")
    settings = {"seed": seed, "ops": ops, "versions": versions, "dtypes": dtypes,
                "ranks": list(ranks), "runtime": runtime.describe(),
                "domain": "non-finite" if nonfinite else "finite"}
    return ConformanceReport(found, settings)
