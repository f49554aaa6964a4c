"""The Python API of ``ortpool bench``: :func:`bench` and its :class:`BenchReport`.

Today it times the bundled cases (real CNN shapes, one pooling node each): onnxruntime's
built-in node against ortpool's op. A user's model (``model``) and its fixed form (``fixed``)
are the seam the command's ``bench MODEL [FIXED]`` fills: the arguments are taken now, and
refused with that reason until the runner times a whole model.
"""

from __future__ import annotations

import dataclasses
import html
import os
from collections.abc import Mapping, Sequence
from typing import Any

import onnx

from ortpool.bench import runner
from ortpool.bench.cases import select
from ortpool.errors import OrtpoolError
from ortpool.ort import DEFAULT_LEVEL, RuntimeSpec, parse_providers
from ortpool.report import bench as bench_report
from ortpool.report.notebook import Report

ModelLike = str | os.PathLike | onnx.ModelProto


@dataclasses.dataclass(repr=False)
class BenchReport(Report):
    """The timed cases (:class:`ortpool.bench.CaseResult`), the machine they ran on and the
    settings; ``table()`` is the command's table."""

    results: list[runner.CaseResult]
    machine: dict[str, Any]
    settings: runner.Settings

    @property
    def figures(self) -> dict[str, Any]:
        """The summary figures: geometric means, the worst ratio, the fixed cost, agreement."""
        return bench_report.summary(self.results)

    @property
    def exit_code(self) -> int:
        """As ``ortpool bench`` exits: 0, or 1 when ortpool's outputs disagree on a case."""
        return 0 if self.figures["all_agree"] else 1

    def table(self, markdown: bool = False) -> str:
        return bench_report.render(bench_report.table(self.results), markdown=markdown)

    def summary_lines(self) -> list[str]:
        return bench_report.summary_lines(self.figures)

    def to_dict(self) -> dict[str, Any]:
        return bench_report.document(self.results, self.machine, self.settings)

    def _repr_html_(self) -> str:
        """A notebook's view: the table and the summary, as the command prints them."""
        text = "\n".join([self.table(), "", *self.summary_lines()])
        return f"<pre>{html.escape(text)}</pre>"

    def _describe(self) -> str:
        ratio = self.figures.get("geomean_ratio")
        text = f"{len(self.results)} case(s)"
        return text + (f", geometric mean ratio {ratio:.2f}" if ratio is not None else "")


def bench(
    model: ModelLike | None = None,
    fixed: ModelLike | None = None,
    *,
    shapes: Mapping[str, Sequence[int]] | Sequence[str] | None = None,
    inputs: Mapping[str, Any] | str | os.PathLike | None = None,
    providers: Sequence[str] | str | None = None,
    opt_level: str = DEFAULT_LEVEL,
    runtime: RuntimeSpec | None = None,
    cases: Sequence[str] | None = None,
    repeat: int = 30,
    min_sample_ms: float = 5.0,
    reference_timeout: float = 10.0,
    seed: int = 0,
    shared_pool: bool = True,
) -> BenchReport:
    """Time onnxruntime's built-in pooling against ortpool's op, as ``ortpool bench`` does.

    ``model``/``fixed``: a user's model and its fixed form, with its ``shapes`` and ``inputs``
    as :func:`ortpool.validate` takes them (not yet: an :class:`OrtpoolError` says so; leave
    them out for the bundled cases). ``cases``: names, substrings or globs of the bundled cases
    (default every one); ``repeat``: timed rounds per case, every variant sampled once per
    round; ``min_sample_ms``: each sample repeats the call until it lasts this long;
    ``reference_timeout``: seconds per case for the onnx reference evaluator (0 skips it);
    ``seed``: of the inputs; ``providers``, ``opt_level`` (default ``all``, a deployed model's),
    ``runtime``: as :func:`ortpool.validate` takes them; ``shared_pool``: every session on one
    intra-op pool (False: a pool per session, noisier). Returns a :class:`BenchReport`.
    """
    if model is not None or fixed is not None or shapes is not None or inputs is not None:
        # The seam for ``ortpool bench MODEL [FIXED]``: the runner times bundled cases only.
        raise OrtpoolError(
            "bench(model, fixed, shapes=, inputs=): timing a user's model is not in this "
            "version of ortpool; bench() without them times the bundled cases"
        )
    if repeat < 1:
        raise OrtpoolError(f"repeat={repeat} must be at least 1")
    try:
        chosen = select(cases)
    except ValueError as err:
        raise OrtpoolError(str(err)) from None
    if runtime is None:
        runtime = RuntimeSpec(parse_providers(providers), opt_level)
    runtime.check()
    from ortpool.bench import machine
    from ortpool.kernels import thread_count

    settings = runner.Settings(
        repeat=repeat,
        min_sample=min_sample_ms / 1000,
        intra_op_threads=runtime.intra_op_threads,
        reference_limit=reference_timeout,
        seed=seed,
        shared_pool=shared_pool,
        runtime=runtime,
    )
    if settings.shared_pool and not runner.share_thread_pool(settings.intra_op_threads):
        settings.shared_pool = False
    info = machine.describe(settings.intra_op_threads, thread_count(), settings.shared_pool)
    found = [runner.run_case(case, settings) for case in chosen]
    return BenchReport(found, info, settings)
