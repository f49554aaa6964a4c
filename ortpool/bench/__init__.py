"""``ortpool bench``: onnxruntime's built-in pooling against ortpool's ops on real CNN shapes
(:mod:`.cases`, :mod:`.runner`), and ``ortpool bench MODEL [FIXED]``: a model against its fixed
form (:mod:`.usermodel`); ``ortpool.bench(...)`` calls :func:`ortpool.bench.api.bench`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ortpool.lazy import callable_package, lazy_names

if TYPE_CHECKING:
    from ortpool.bench.api import BenchReport
    from ortpool.bench.cases import CASES, Case, select
    from ortpool.bench.runner import CaseResult, Settings, run_case
    from ortpool.bench.usermodel import ModelBench, bench_models, load_pair

#: public name -> its module, imported on first use (the runner brings the session layer)
_LAZY = {
    "BenchReport": "ortpool.bench.api",
    "CASES": "ortpool.bench.cases",
    "Case": "ortpool.bench.cases",
    "select": "ortpool.bench.cases",
    "CaseResult": "ortpool.bench.runner",
    "Settings": "ortpool.bench.runner",
    "run_case": "ortpool.bench.runner",
    "ModelBench": "ortpool.bench.usermodel",
    "bench_models": "ortpool.bench.usermodel",
    "load_pair": "ortpool.bench.usermodel",
}

__all__ = [
    "CASES", "BenchReport", "Case", "CaseResult", "ModelBench", "Settings", "bench_models",
    "load_pair", "run_case", "select"
]  # fmt: skip


__getattr__ = lazy_names(__name__, _LAZY)

callable_package(__name__, "ortpool.bench.api:bench")
