"""Side-by-side validation of a runtime's built-in pooling against ortpool: each pooling node
judged by the engine (:mod:`ortpool.check`) on its captured inputs and built cases, and the model
end to end (:mod:`.endtoend`); several models each in a child process (:mod:`.batch`).
``ortpool.validate(model, ...)`` calls :func:`ortpool.validate.api.validate`.
"""

from __future__ import annotations

from ortpool.lazy import callable_package, lazy_names

#: public name -> its home, imported on first use (the submodules bring the session layer)
_LAZY = {
    "ModelResult": "ortpool.report.record:ModelResult",
    "NodeResult": "ortpool.report.record:NodeResult",
    "Report": "ortpool.report.notebook:Report",
    "ValidateOptions": "ortpool.validate.validator:ValidateOptions",
    "ValidationReport": "ortpool.report.notebook:ValidationReport",
    "bundled_models": "ortpool.validate.validator:bundled_models",
    "load_model": "ortpool.validate.validator:load_model",
    "validate_model": "ortpool.validate.validator:validate_model",
    "validate_models": "ortpool.validate.batch:run_models",
}

__all__ = list(_LAZY)

__getattr__ = lazy_names(__name__, _LAZY)

callable_package(__name__, "ortpool.validate.api:validate")
