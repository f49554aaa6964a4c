"""The Python API of ``ortpool conformance``: :func:`conformance` and its
:class:`ConformanceReport`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ortpool import values
from ortpool.check.domain import name
from ortpool.conformance.run import run_conformance, select_cases
from ortpool.dtypes import canonical
from ortpool.errors import OrtpoolError
from ortpool.options import PYTHON, domain, inputs, label, target
from ortpool.options import accuracy as accuracy_group
from ortpool.options import runtime as session
from ortpool.ort import ISOLATED_LEVEL
from ortpool.report import record as results
from ortpool.report.matrix import matrix
from ortpool.report.notebook import Report
from ortpool.report.text import plural, tally
from ortpool.runtimes import Runtime
from ortpool.tolerances import DEFAULT_RULE, AccuracyRule


@dataclasses.dataclass(repr=False, eq=False)  # equal to itself only
class ConformanceReport(Report):
    """The grid's cases and their results (``cases``: each with ``.case`` and ``.node``)."""

    cases: list[Any]
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """0: the sweep ran (it reports differences; :attr:`differing` counts them)."""
        return 0

    @property
    def differing(self) -> list[Any]:
        """The cases whose built-in result differs from the spec."""
        return [r for r in self.cases if r.node.failing]

    @property
    def bases(self) -> dict[str, int]:
        """The differing cases (:attr:`differing`, refusals and crashes included) by basis:
        ``{"spec text": 1799, "ruling 2": 44}``."""
        return results.bases([r.node for r in self.cases])

    def summary_lines(self) -> list[str]:
        rows = matrix(self.cases)
        by = tally(self.bases)
        lines = [
            f"{plural(len(self.cases), 'case')}: {len(self.differing)} differ from the spec"
            + (f" (by basis: {by})" if by else "")
        ]
        for row in rows:
            bad = sum(n for s, n in row.statuses.items() if s in results.FAILING)
            if bad:
                lines.append(f"  {row.key}: {bad} of {row.cases} cases differ")
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {"settings": self.settings, "cases": [r.to_dict() for r in self.cases]}

    def _describe(self) -> str:
        return f"{plural(len(self.cases), 'case')}, {len(self.differing)} differ"


def conformance(*, ops: str | Sequence[str] | None = None, versions: Sequence[int] | None = None,
                dtypes: str | Sequence[str] | None = None, ranks: Sequence[int] = (1, 2, 3),
                seed: int = 0, runtime: str | Runtime = target.ONNXRUNTIME,
                runtime_options: Mapping[str, str] | None = None,
                case_timeout: float = target.DEFAULT_CASE_TIMEOUT,
                providers: session.Providers = None, opt_level: str = ISOLATED_LEVEL,
                intra_op_threads: int = 0, inter_op_threads: int = 0,
                execution_mode: str = "sequential", nonfinite: bool = False,
                atol: float | None = None, rtol: float | None = None,
                accuracy: AccuracyRule = DEFAULT_RULE) -> ConformanceReport:
    """Sweep the generated grid of single-node pooling cases through onnxruntime's built-ins and
    ortpool, as ``ortpool conformance`` does.

    ``ops``, ``versions``, ``dtypes`` (ONNX names: ``float`` is float32; numpy's spellings are
    read too), ``ranks``: only these cases (default every one, 1-3 spatial axes); ``seed``: of
    the case inputs; ``runtime``, ``runtime_options``, ``case_timeout``, ``providers``,
    ``opt_level``, the threads and execution mode, ``atol``, ``rtol``, ``accuracy``: as
    :func:`ortpool.validate` takes them; ``nonfinite``: the cases holding NaN too (ruling 20).
    Returns a :class:`ConformanceReport`.
    """
    judged = target.from_python(runtime, runtime_options, case_timeout, target.onnxruntime_set(
        ISOLATED_LEVEL, providers, opt_level, intra_op_threads, inter_op_threads, execution_mode))
    spec = session.from_python(
        providers, opt_level, intra_op_threads, inter_op_threads, execution_mode)
    rule = accuracy_group.from_python(atol, rtol, accuracy)
    cases, settings = selected(ops, versions, dtypes, ranks, inputs.seed(seed, PYTHON),
                               domain.from_python(nonfinite), PYTHON)
    found = run_conformance(cases, settings["seed"], judged.runtime or spec, rule,
                            domain=settings["domain"], case_timeout=judged.case_timeout)
    return ConformanceReport(found, {**settings, "runtime": judged.describe() or spec.describe()})


def selected(ops: Any, versions: Any, dtypes: Any, ranks: Any, seed: int, nonfinite: bool,
             style: str) -> tuple[list[Any], dict[str, Any]]:
    """The grid's cases the filters select, and the filters as the report's settings."""
    op_names = values.names(label("ops", style), ops)
    op_list = [p.strip() for o in op_names for p in o.split(",") if p.strip()] if op_names else None
    type_names = values.names(label("dtypes", style), dtypes)
    try:
        types = [canonical(t) for t in type_names] if type_names else None
    except OrtpoolError as err:
        raise OrtpoolError(f"{label('dtypes', style)}: {err}") from None
    wanted = values.integers(label("versions", style), versions) or []
    # each rank once (the grid takes every rank given: one named twice ran its cases twice)
    spatial = list(dict.fromkeys(values.integers(label("ranks", style), ranks) or []))
    cases = select_cases(op_list, wanted, types, spatial, nonfinite, style)
    return cases, {"seed": seed, "ops": op_list, "versions": wanted, "dtypes": types,
                   "ranks": spatial, "domain": name(nonfinite)}
