"""ortpool: spec-exact ONNX pooling operators for onnxruntime.

Importing ``ortpool`` is light (numpy and onnx); the onnxruntime parts load on first use of
``InferenceSession``, ``session_options`` or ``register``.
"""

from __future__ import annotations

from ortpool.errors import OrtpoolError
from ortpool.lazy import lazy_names

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


# ``ortpool.rewrite`` and ``ortpool.fix`` are callable packages: importing one binds the package
# to that name, so the lazy name is the package too (``ortpool.rewrite(m)`` calls its ``rewrite``).
__getattr__ = lazy_names(__name__, _LAZY)
