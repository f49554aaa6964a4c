"""Which loops a plan is built for, decided here alone: :func:`loop` hands a call its compiled
(numba, optional) loop, or None for the numpy back-end; both give the same bits.

numba costs a process about 1 s to import and 8-11 s per kernel and element type to compile, which
a short run never earns back; hence the modes (``ORTPOOL_KERNELS``, docs/kernels.md): ``auto``
compiles for calls of at least :data:`NUMBA_MIN_BYTES`, ``numba`` for every call, ``numpy`` never,
and ``loaded`` never compiles but uses what this process holds (:func:`prefer_loaded`).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import warnings
from collections.abc import Callable, Iterator

import numpy as np

from ortpool.kernels import _calls, _compile_note
from ortpool.kernels._compile_note import KERNELS

#: Element types the compiled kernels take (float16/bfloat16 are computed in float32 anyway).
NUMBA_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int8, np.uint8))

#: Input bytes from which a call brings in numba in ``auto`` mode. Not a speed crossover: below it
#: a call gains at most about 40 µs, so a 10 s compile pays after some 250,000 calls.
NUMBA_MIN_BYTES = 64 << 10

_MODES = ("auto", "numba", "numpy", "loaded")
_mode: str | None = None
_available: bool | None = None


def mode() -> str:
    """``"auto"``, ``"numba"`` (every call compiled), ``"numpy"`` or ``"loaded"`` (never
    compile): :func:`set_backend`, else ``ORTPOOL_KERNELS`` (read once)."""
    global _mode
    if _mode is None:
        choice = os.environ.get("ORTPOOL_KERNELS", "").strip().lower() or "auto"
        if choice not in _MODES:
            warnings.warn(f"ORTPOOL_KERNELS={choice!r} is not one of auto, numba, numpy, loaded: "
                          "using auto", stacklevel=2)
            choice = "auto"
        _mode = choice
    return _mode


def backend() -> str:
    """``"numba"`` when the compiled kernels may be used, else ``"numpy"`` (imports numba: 1 s)."""
    global _available
    if mode() == "numpy":
        return "numpy"
    if _available is None:
        try:
            from ortpool.kernels import _numba  # noqa: F401
        except ImportError as err:
            if mode() == "numba":
                warnings.warn(f"ORTPOOL_KERNELS=numba but numba does not import ({err}): using "
                              "numpy", stacklevel=2)
            _available = False
        else:
            _compile_note.install()
            _available = True
    return "numba" if _available else "numpy"


#: (kernel, dtype name) found loaded: a compiled signature is never dropped (asking costs 4 µs).
_LOADED: set[tuple[str, str]] = set()


def loaded(kernel: str, dtype: np.dtype) -> bool:
    """Whether this process holds the compiled ``kernel`` for ``dtype`` (compiled or from cache)."""
    if (kernel, dtype.name) in _LOADED:
        return True
    module = sys.modules.get(KERNELS[kernel][0])
    signatures = getattr(module, kernel).signatures if module is not None else ()
    if any(str(sig[0].dtype) == dtype.name for sig in signatures):
        _LOADED.add((kernel, dtype.name))
        return True
    return False


def compiled(kernel: str, dtype: np.dtype, nbytes: int) -> bool:
    """Whether a call of ``nbytes`` input bytes of ``dtype`` runs the compiled ``kernel``."""
    if dtype not in NUMBA_DTYPES or mode() == "numpy":
        return False
    if mode() == "loaded" or (mode() == "auto" and nbytes < NUMBA_MIN_BYTES):
        return loaded(kernel, dtype)
    if backend() != "numba":
        return False
    if mode() == "auto" and not loaded(kernel, dtype):
        # This call brings the kernel in: smaller calls planned with numpy until now take it too.
        _calls.forget()
    return True


def loop(kernel: str, dtype: np.dtype, nbytes: int) -> Callable | None:
    """The one dispatch of the kernels: the compiled ``kernel``, or None (the numpy back-end)."""
    if not compiled(kernel, dtype, nbytes):
        return None
    return getattr(importlib.import_module(KERNELS[kernel][0]), kernel)


@contextlib.contextmanager
def prefer_loaded() -> Iterator[None]:
    """Plan for ``"loaded"`` inside the block, in this process and the processes it starts,
    unless ``ORTPOOL_KERNELS`` names a mode: for a command whose first run must not wait for
    numba to compile. The mode and the environment are restored after it."""
    global _mode
    if os.environ.get("ORTPOOL_KERNELS", "").strip():
        yield
        return
    before, saved = _mode, os.environ.get("ORTPOOL_KERNELS")
    os.environ["ORTPOOL_KERNELS"] = "loaded"
    _calls.forget()
    _mode = "loaded"
    try:
        yield
    finally:
        os.environ.pop("ORTPOOL_KERNELS", None)
        if saved is not None:
            os.environ["ORTPOOL_KERNELS"] = saved
        _calls.forget()
        _mode = before


def set_backend(name: str | None) -> None:
    """Plan for ``"auto"``, ``"numba"``, ``"numpy"`` or ``"loaded"`` (None: the environment)."""
    global _mode
    if name not in (None, *_MODES):
        raise ValueError(f"kernels {name!r}: expected 'auto', 'numba', 'numpy', 'loaded' or None")
    _calls.forget()
    _mode = name
    if name == "numba":
        from ortpool.kernels import _numba  # noqa: F401  (fails here if numba is missing)
