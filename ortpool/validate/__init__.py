"""Side-by-side validation of onnxruntime's built-in pooling against ortpool.

``ortpool.validate(model, *, shapes=None, inputs=None, providers=None, ...)`` is this package,
called as :func:`ortpool.validate.api.validate`: it returns a
:class:`~ortpool.validate.api.ValidationReport` (``.ok``, ``.exit_code``, ``.summary()``,
``.to_json()``, ``.to_html()``, the summary table in a notebook). ``ortpool.conformance(...)``
is :func:`ortpool.validate.api.conformance`.

``ortpool validate`` (per node in isolation and end to end, on a real model) and
``ortpool conformance`` (a generated grid of single-node cases) share the pieces of this package:
input generation (:mod:`.inputs`), running nodes in onnxruntime (:mod:`ortpool.ort.ortrun`,
:mod:`ortpool.model.singlenode`, :mod:`ortpool.model.capture`), the judgement of a node and the
comparison (:mod:`ortpool.check`), cause recognition (:mod:`.causes`), the onnx reference
evaluator column (:mod:`.reference`) and the reports (:mod:`.terminal`, :mod:`.jsonreport`,
:mod:`.html`). ``validate_models`` (:mod:`.batch`) runs several models, each in a child process of
its own, every one reported whatever the others do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ortpool.lazy import callable_package, lazy_names

if TYPE_CHECKING:
    from ortpool.validate.api import (
        ConformanceReport,
        Report,
        ValidationReport,
        validate_options,
    )
    from ortpool.validate.batch import run_models as validate_models
    from ortpool.validate.conformance import run_conformance
    from ortpool.validate.results import ModelResult, NodeResult
    from ortpool.validate.validator import (
        ValidateOptions,
        bundled_models,
        load_model,
        validate_model,
    )

#: public name -> (module, name there), imported on first access: the submodules bring the
#: kernels, multiprocessing and the session layer with them
_LAZY = {
    "ValidationReport": "ortpool.validate.api:ValidationReport",
    "ConformanceReport": "ortpool.validate.api:ConformanceReport",
    "Report": "ortpool.validate.api:Report",
    "validate_options": "ortpool.validate.api:validate_options",
    "validate_model": "ortpool.validate.validator:validate_model",
    "ValidateOptions": "ortpool.validate.validator:ValidateOptions",
    "bundled_models": "ortpool.validate.validator:bundled_models",
    "load_model": "ortpool.validate.validator:load_model",
    "validate_models": "ortpool.validate.batch:run_models",
    "run_conformance": "ortpool.validate.conformance:run_conformance",
    "ModelResult": "ortpool.validate.results:ModelResult",
    "NodeResult": "ortpool.validate.results:NodeResult",
}

__all__ = [
    "ConformanceReport",
    "ModelResult",
    "NodeResult",
    "Report",
    "ValidateOptions",
    "ValidationReport",
    "bundled_models",
    "load_model",
    "run_conformance",
    "validate_model",
    "validate_models",
    "validate_options",
]


__getattr__ = lazy_names(__name__, _LAZY)

# ``ortpool.validate(model)`` calls the API's validate while ``ortpool.validate`` stays the package.
callable_package(__name__, "ortpool.validate.api:validate")
