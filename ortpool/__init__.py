"""ortpool: spec-exact ONNX pooling operators for onnxruntime.

The commands, from Python (each returns a report: ``.ok``, ``.exit_code``, ``.summary()``,
``.to_json()``, a table in a notebook)::

    import ortpool
    report = ortpool.validate("model.onnx", shapes={"image": (1, 3, 224, 224)})
    print(report.summary())           # how many models differ, the nodes that do not agree
    result = ortpool.fix("model.onnx", shapes={"image": (1, 3, 224, 224)})
    result.save("fixed.onnx")         # each pooling node in a form the runtime computes exactly
    ortpool.conformance(ops=["MaxPool"], dtypes=["float"])   # the generated grid of cases
    ortpool.bench(cases=["resnet*"])  # built-in pooling against ortpool's ops, timed

``rewrite(model)``/``restore(model)`` turn standard pooling nodes into ortpool's op types and
back; ``InferenceSession(model)`` runs them. Every bad argument or unusable model raises
``OrtpoolError``. Importing ``ortpool`` is light: each name imports its modules on first use.
"""

from __future__ import annotations

from ortpool.errors import OrtpoolError
from ortpool.lazy import lazy_names

__version__ = "0.1.0"

#: public name -> its home, imported on first use; ``validate``, ``fix``, ``bench``,
#: ``conformance`` and ``rewrite`` are callable packages (:func:`ortpool.lazy.callable_package`)
_LAZY = {
    "validate": "ortpool.validate",
    "fix": "ortpool.fix",
    "conformance": "ortpool.conformance",
    "bench": "ortpool.bench",
    "rewrite": "ortpool.rewrite",
    "restore": "ortpool.rewrite",
    "InferenceSession": "ortpool.ort.session",
    "session_options": "ortpool.ort.session",
    "check_model": "ortpool.ort.session",
    "register": "ortpool.ort.register",
    "ValidationReport": "ortpool.report.notebook",
    "FixResult": "ortpool.report.fixes",
    "ConformanceReport": "ortpool.conformance.api",
    "BenchReport": "ortpool.bench.api",
}

__all__ = ["OrtpoolError", "__version__", *_LAZY]


__getattr__ = lazy_names(__name__, _LAZY)


def __dir__() -> list[str]:
    """The public API (``dir(ortpool)``), not the modules' machinery."""
    return sorted(__all__)
