"""``ortpool conformance``: a generated grid of single-node pooling cases judged on the installed
runtime against the spec.

* :mod:`ortpool.conformance.run` - the cases selected and judged, grouped per op and version.
* :mod:`ortpool.conformance.api` - ``ortpool.conformance(...)``, this package called as a
  function, and its :class:`~ortpool.conformance.api.ConformanceReport`.
* :mod:`ortpool.conformance.cli` - the command.
"""

from __future__ import annotations

from ortpool.lazy import callable_package, lazy_names

_LAZY = {
    "ConformanceReport": "ortpool.conformance.api",
    "run_conformance": "ortpool.conformance.run",
    "select_cases": "ortpool.conformance.run",
}

__all__ = ["ConformanceReport", "run_conformance", "select_cases"]

__getattr__ = lazy_names(__name__, _LAZY)

# ``ortpool.conformance(...)`` calls :func:`ortpool.conformance.api.conformance` while
# ``ortpool.conformance`` stays the package.
callable_package(__name__, "ortpool.conformance.api:conformance")
