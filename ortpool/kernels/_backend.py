"""Which kernels the plans are built for: the compiled (numba) loops or the numpy passes.

numba is optional (``pip install ortpool[fast]``) and imported at the first plan only, never by
``import ortpool`` nor by the commands that build no plan.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from ortpool.kernels import _calls

#: Element types the compiled kernels take (float16/bfloat16 are computed in float32 anyway).
NUMBA_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int8, np.uint8))

_backend: str | None = None


def backend() -> str:
    """``"numba"`` or ``"numpy"``: the kernels plans are built for from now on.

    Decided at the first plan: ``ORTPOOL_KERNELS=numpy`` keeps the numpy plans; otherwise (unset,
    ``auto`` or ``numba``) numba is imported then, and used when it imports. numba is never
    imported by ``import ortpool`` nor by the commands that build no plan.
    """
    global _backend
    if _backend is None:
        choice = os.environ.get("ORTPOOL_KERNELS", "").strip().lower() or "auto"
        if choice not in ("auto", "numba", "numpy"):
            warnings.warn(
                f"ORTPOOL_KERNELS={choice!r} is not one of auto, numba, numpy: using auto",
                stacklevel=2,
            )
        if choice == "numpy":
            _backend = "numpy"
        else:
            try:
                from ortpool.kernels import _numba  # noqa: F401  (loads numba: about 0.2 s)
            except ImportError as err:
                if choice == "numba":
                    warnings.warn(
                        f"ORTPOOL_KERNELS=numba but numba does not import ({err}): using numpy",
                        stacklevel=2,
                    )
                _backend = "numpy"
            else:
                _backend = "numba"
    return _backend


def set_backend(name: str | None) -> None:
    """Build plans for ``"numba"`` or ``"numpy"`` from now on (None: decide again from the
    environment); forgets every cached plan."""
    global _backend
    if name not in (None, "numba", "numpy"):
        raise ValueError(f"kernels {name!r}: expected 'numba', 'numpy' or None")
    _calls.forget()
    _backend = None
    if name == "numba":
        from ortpool.kernels import _numba  # noqa: F401  (fails here if numba is missing)
    _backend = name
