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

- ``validate(model, *, shapes, inputs, providers, opt_level, ...) -> ValidationReport``:
  onnxruntime's built-in pooling against ortpool, each node alone and the model end to end.
- ``fix(model, *, ops, nodes, providers, opt_level, shapes, inputs, ...) -> FixResult``: the
  fixed model (``.model``, ``.save(path)``) and its report, every node proven.
- ``conformance(*, ops, versions, dtypes, ranks, ...) -> ConformanceReport``.
- ``bench(model=None, fixed=None, *, cases, repeat, providers, ...) -> BenchReport``.
- ``rewrite(model)``/``restore(model)``: standard pooling nodes to ortpool's op types and back;
  ``InferenceSession(model)``: an onnxruntime session that runs them (``register``,
  ``session_options``, ``check_model`` for your own sessions).
- ``OrtpoolError``: what every bad argument or unusable model raises.

Importing ``ortpool`` is light (a few milliseconds: no numpy, onnx or onnxruntime yet): each
name above imports its modules on first use.
"""

from __future__ import annotations

from ortpool.errors import OrtpoolError
from ortpool.lazy import lazy_names

__version__ = "0.1.0"

#: public name -> its home, imported on first use (``module`` or ``module:name``); ``validate``,
#: ``fix``, ``bench``, ``conformance`` and ``rewrite`` are callable packages (the package is the
#: function: a package and a function cannot share a name, see
#: :func:`ortpool.lazy.callable_package`)
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


# ``ortpool.rewrite`` and ``ortpool.fix`` are callable packages: importing one binds the package
# to that name, so the lazy name is the package too (``ortpool.rewrite(m)`` calls its ``rewrite``).
__getattr__ = lazy_names(__name__, _LAZY)


def __dir__() -> list[str]:
    """The public API (``dir(ortpool)``), not the modules' machinery."""
    return sorted(__all__)
