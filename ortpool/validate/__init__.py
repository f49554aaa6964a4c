"""Side-by-side validation of onnxruntime's built-in pooling against ortpool.

``ortpool.validate(model, *, shapes=None, inputs=None, providers=None, ...)`` is this package,
called as :func:`ortpool.validate.api.validate`: it returns a
:class:`~ortpool.report.notebook.ValidationReport` (``.ok``, ``.exit_code``, ``.summary()``,
``.to_json()``, ``.to_html()``, the summary table in a notebook).

``ortpool validate`` judges each pooling node of a real model with the engine
(:mod:`ortpool.check`) on its captured inputs and built cases, and the model end to end
(:mod:`.endtoend`); ``validate_models`` (:mod:`.batch`) runs several models, each in a child
process of its own, every one reported whatever the others do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ortpool.lazy import callable_package, lazy_names

if TYPE_CHECKING:
    from ortpool.report.notebook import Report, ValidationReport
    from ortpool.report.record import ModelResult, NodeResult
    from ortpool.validate.batch import run_models as validate_models
    from ortpool.validate.validator import (
        ValidateOptions,
        bundled_models,
        load_model,
        validate_model,
    )

#: public name -> (module, name there), imported on first access: the submodules bring the
#: kernels, multiprocessing and the session layer with them
_LAZY = {
    "ValidationReport": "ortpool.report.notebook:ValidationReport",
    "Report": "ortpool.report.notebook:Report",
    "validate_model": "ortpool.validate.validator:validate_model",
    "ValidateOptions": "ortpool.validate.validator:ValidateOptions",
    "bundled_models": "ortpool.validate.validator:bundled_models",
    "load_model": "ortpool.validate.validator:load_model",
    "validate_models": "ortpool.validate.batch:run_models",
    "ModelResult": "ortpool.report.record:ModelResult",
    "NodeResult": "ortpool.report.record:NodeResult",
}

__all__ = [
    "ModelResult",
    "NodeResult",
    "Report",
    "ValidateOptions",
    "ValidationReport",
    "bundled_models",
    "load_model",
    "validate_model",
    "validate_models",
]


__getattr__ = lazy_names(__name__, _LAZY)

# ``ortpool.validate(model)`` calls the API's validate while ``ortpool.validate`` stays the package.
callable_package(__name__, "ortpool.validate.api:validate")
