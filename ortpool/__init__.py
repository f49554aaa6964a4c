"""ortpool: spec-exact ONNX pooling operators for onnxruntime.

Importing ``ortpool`` is light (numpy and onnx); the onnxruntime parts load on first use of
``InferenceSession``, ``session_options`` or ``register``.
"""

from __future__ import annotations

from typing import Any

from ortpool.errors import OrtpoolError

__version__ = "0.1.0"

_LAZY = {
    "InferenceSession": "ortpool.ort.session",
    "session_options": "ortpool.ort.session",
    "check_model": "ortpool.ort.session",
    "register": "ortpool.ort.register",
    "rewrite": "ortpool.rewrite",
    "restore": "ortpool.rewrite",
    "fix": "ortpool.fix",
}

__all__ = ["OrtpoolError", "__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ortpool' has no attribute {name!r}")
    import importlib

    imported = importlib.import_module(module)
    # ``ortpool.rewrite`` and ``ortpool.fix`` are callable packages: importing one binds the
    # package to that name, so the lazy name must be the package too (``ortpool.rewrite(m)``
    # calls its ``rewrite``).
    value = imported if module == f"{__name__}.{name}" else getattr(imported, name)
    globals()[name] = value
    return value
