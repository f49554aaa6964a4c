"""``ortpool bench``: onnxruntime's built-in pooling against ortpool's ops on real CNN shapes
(:mod:`.cases`, :mod:`.runner`), and ``ortpool bench MODEL [FIXED]``: a model against its fixed
form (:mod:`.usermodel`); ``ortpool.bench(...)`` calls :func:`ortpool.bench.api.bench`."""

from __future__ import annotations

from ortpool.lazy import callable_package, lazy_names

#: public name -> its module, imported on first use (the runner brings the session layer)
_LAZY = {
    "CASES": "ortpool.bench.cases",
    "BenchReport": "ortpool.bench.api",
    "Case": "ortpool.bench.cases",
    "CaseResult": "ortpool.bench.runner",
    "ModelBench": "ortpool.bench.usermodel",
    "Settings": "ortpool.bench.runner",
    "bench_models": "ortpool.bench.usermodel",
    "load_pair": "ortpool.bench.usermodel",
    "run_case": "ortpool.bench.runner",
    "select": "ortpool.bench.cases",
}
__all__ = list(_LAZY)

__getattr__ = lazy_names(__name__, _LAZY)

callable_package(__name__, "ortpool.bench.api:bench")
