"""``ortpool conformance``: a generated grid of single-node pooling cases judged on a runtime
against the spec (:mod:`.run`); ``ortpool.conformance(...)`` calls
:func:`ortpool.conformance.api.conformance`."""

from __future__ import annotations

from ortpool.lazy import callable_package, lazy_names

_LAZY = {
    "ConformanceReport": "ortpool.conformance.api",
    "run_conformance": "ortpool.conformance.run",
    "select_cases": "ortpool.conformance.run",
}

__all__ = list(_LAZY)

__getattr__ = lazy_names(__name__, _LAZY)

callable_package(__name__, "ortpool.conformance.api:conformance")
