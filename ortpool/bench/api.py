"""The Python API of ``ortpool bench``: :func:`bench` and its :class:`BenchReport`."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any

from ortpool import values
from ortpool.bench import runner, usermodel
from ortpool.bench.cases import Case, select
from ortpool.errors import OrtpoolError
from ortpool.model import InputSpec
from ortpool.options import PYTHON, files, label, runtime, timing
from ortpool.options import inputs as inputs_group
from ortpool.ort import DEFAULT_LEVEL, share_thread_pool
from ortpool.ort.runtime_spec import pool_threads
from ortpool.report import bench as bench_report
from ortpool.report import text
from ortpool.report.notebook import Report
from ortpool.runtimes.base import main_kept_out


@dataclasses.dataclass(repr=False, eq=False)  # equal to itself only
class BenchReport(Report):
    """The timed cases (:class:`ortpool.bench.CaseResult`), or the user's model
    (``model_bench``), the machine they ran on and the settings; ``table()`` is the command's
    table."""

    results: list[runner.CaseResult]
    machine: dict[str, Any]
    settings: runner.Settings
    #: ``bench(model, fixed)``: the figures of the model against its fixed form
    model_bench: usermodel.ModelBench | None = None

    @property
    def figures(self) -> dict[str, Any]:
        """The summary figures: geometric means, the worst ratio, the fixed cost, agreement."""
        return bench_report.summary(self.results)

    @property
    def exit_code(self) -> int:
        """As ``ortpool bench`` exits: 0, or 1 when ortpool's outputs disagree on a case."""
        return 0 if self.model_bench is not None or self.figures["all_agree"] else 1

    def table(self, markdown: bool = False) -> str:
        markdown = values.flag("markdown", markdown)
        if self.model_bench is not None:
            return "\n".join(bench_report.model_tables(self.model_bench, markdown=markdown))
        return bench_report.render(bench_report.table(self.results), markdown=markdown)

    def summary_lines(self) -> list[str]:
        if self.model_bench is not None:
            return bench_report.model_verdict(self.model_bench)
        return bench_report.summary_lines(self.figures)

    def to_dict(self) -> dict[str, Any]:
        if self.model_bench is not None:
            return bench_report.model_document(self.model_bench, self.machine, self.settings)
        return bench_report.document(self.results, self.machine, self.settings)

    def _repr_html_(self) -> str:
        """A notebook's view: the cases' table in HTML; a model's tables as printed."""
        if self.model_bench is None:
            rows = bench_report.table(self.results)
            return bench_report.notebook_view(rows, self.summary_lines())
        # the tables end with the verdict (summary_lines), as the command prints them
        return text.preformatted(self.table())

    def _describe(self) -> str:
        if self.model_bench is not None:
            return f"{self.model_bench.model}" + (
                f" against {self.model_bench.fixed}" if self.model_bench.fixed else "")
        ratio = self.figures.get("geomean_ratio")
        text = f"{len(self.results)} case(s)"
        return text + (f", geometric mean ratio {ratio:.2f}" if ratio is not None else "")


def bench(model: str | os.PathLike | None = None, fixed: str | os.PathLike | None = None, *,
          shapes: inputs_group.Shapes = None, inputs: inputs_group.Arrays = None, seed: int = 0,
          providers: runtime.Providers = None, opt_level: str = DEFAULT_LEVEL,
          intra_op_threads: int = 0, inter_op_threads: int = 0, execution_mode: str = "sequential",
          cases: str | Sequence[str] | None = None, repeat: int = 30, min_sample_ms: float = 5.0,
          reference_timeout: float = 10.0, shared_pool: bool = False) -> BenchReport:
    """Time onnxruntime's built-in pooling against ortpool's op, as ``ortpool bench`` does.

    ``model``/``fixed``: a model file and its fixed form (``ortpool.fix``'s, which must compute
    what MODEL computes), timed as ``ortpool bench MODEL FIXED`` times them on the inputs
    ``shapes`` and ``inputs`` give; without them, the bundled cases. ``cases``: names,
    substrings or globs of those (default every one); ``repeat``: timed rounds, every variant
    sampled once a round; ``min_sample_ms``: each sample repeats the call until it lasts this
    long; ``reference_timeout``: seconds a case for the onnx reference evaluator (0 skips it);
    ``seed``, ``providers``, ``opt_level`` (default ``all``), the threads and execution mode: as
    :func:`ortpool.validate` takes them; ``shared_pool``: every session on onnxruntime's one
    process-wide intra-op pool, as the command runs them (set once for the process, whose later
    sessions all run on it, other thread counts refused: off by default here). Returns a
    :class:`BenchReport`; a bad argument raises :class:`ortpool.OrtpoolError` (or a
    ``TypeError``) naming it.
    """
    spec = runtime.from_python(providers, opt_level, intra_op_threads, inter_op_threads,
                               execution_mode)
    settings = runner.Settings(
        repeat=timing.repeat(repeat, PYTHON), min_sample=timing.min_sample(min_sample_ms, PYTHON),
        reference_limit=timing.reference_timeout(reference_timeout, PYTHON, zero="0: skipped"),
        seed=inputs_group.seed(seed, PYTHON), shared_pool=values.flag("shared_pool", shared_pool),
        runtime=spec)
    spec_inputs = inputs_group.from_python(shapes, inputs)
    patterns = values.names("cases", cases)
    if model is None and not spec_inputs.empty:
        raise OrtpoolError("shapes= and inputs= size a model's inputs: give model= (the bundled "
                           "cases are ortpool's own models)")
    if (model is not None or fixed is not None) and (model is None or patterns is not None):
        raise OrtpoolError("model= and fixed= time a model against its fixed form, cases= the "
                           "bundled cases: give model= (and fixed=), or cases=")
    chosen, pair, info = prepare(
        settings, spec_inputs, patterns, None if model is None else files.model(model, proto=False),
        None if fixed is None else files.model(fixed, "fixed", proto=False), PYTHON)
    with main_kept_out():  # the reference evaluator's worker is a spawned process
        if pair is not None:
            return BenchReport([], info, settings,
                               usermodel.bench_models(pair, spec_inputs, settings))
        return BenchReport([runner.run_case(case, settings) for case in chosen], info, settings)


def prepare(settings: runner.Settings, model_inputs: InputSpec, patterns: Sequence[str] | None,
            model: str | None, fixed: str | None,
            style: str) -> tuple[list[Case], usermodel.Pair | None, dict[str, Any]]:
    """What a run times (the cases ``patterns`` selects, or MODEL and FIXED read and compared)
    and the machine, checked before anything is timed or the process-wide pool shared."""
    from ortpool.bench import machine
    from ortpool.kernels import thread_count

    chosen, pair = [], None
    if model is None:
        patterns = values.names(label("cases", style), patterns)
        try:
            chosen = select(patterns)
        except ValueError as err:
            raise OrtpoolError(f"{label('cases', style)}: {err}") from None
    else:
        pair = usermodel.load_pair(model, fixed)
        usermodel.check_equivalent(pair, model_inputs, settings)
    threads = settings.runtime.intra_op_threads
    # False where onnxruntime cannot share: the machine line and the JSON say "one per session";
    # True where an earlier bench(shared_pool=True) made the pool every session now runs on
    settings.shared_pool = (share_thread_pool(threads) if settings.shared_pool
                            else pool_threads() is not None)
    return chosen, pair, machine.describe(threads, thread_count(), settings.shared_pool)
