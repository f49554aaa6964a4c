"""Which kernels a plan is built for: the compiled (numba) loops or the numpy passes, decided here
alone: :func:`loop` hands a call its compiled loop, or None for the numpy back-end.

numba is optional (the ``fast`` extra: ``pip install '.[fast]'``). Its loops are faster at every
size, but a
process pays for them up front: about 1 s and 115 MB to import numba, and 8-11 s to compile each
kernel and element type the first time (cached on disk afterwards). A short run on small tensors
(``ortpool validate`` on the bundled models, ``ortpool conformance``) never earns that back, so by
default (``auto``) only a call of at least :data:`NUMBA_MIN_BYTES` brings numba in; a smaller
call takes the compiled kernel only when this process has it already. ``ORTPOOL_KERNELS=numba``
compiles for every call (a deployment that ran ``ortpool warmup`` and serves small tensors),
``ORTPOOL_KERNELS=numpy`` never. Both paths give bit-identical results.

``loaded`` never compiles: a call takes the compiled kernel only when this process holds it
already, whatever its size. It is the default of the commands that are not latency-critical
(``ortpool validate``, ``fix``, ``conformance``: :func:`prefer_loaded`): a first ``validate`` of
a 1x3x640x640 model compiled five kernels for 67 s on a shared 2-core machine, where the numpy
plans gave the same bits in 5 s (docs/validate.md, "Kernels").
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
from ortpool.kernels._compile_note import KERNELS  # the table lives with the note naming them

#: Element types the compiled kernels take (float16/bfloat16 are computed in float32 anyway).
NUMBA_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int8, np.uint8))

#: Input bytes from which a call brings in numba in ``auto`` mode. Not a speed crossover (the
#: compiled kernels are faster from 64 bytes up, docs/bench.md "Fifth round"): below it a call
#: gains at most about 40 µs, so a 10 s compile pays after some 250,000 calls, which no short run
#: makes.
#: The bundled models and the validator's nodes are under 10 KB; the smallest benchmark shape
#: (Inception's 1x192x28x28, 600 KB) is far above.
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
            warnings.warn(
                f"ORTPOOL_KERNELS={choice!r} is not one of auto, numba, numpy, loaded: using auto",
                stacklevel=2,
            )
            choice = "auto"
        _mode = choice
    return _mode


def backend() -> str:
    """``"numba"`` when the compiled kernels may be used (numba imports and the mode is not
    ``numpy``), else ``"numpy"``. Imports numba (about 1 s) the first time it is asked."""
    global _available
    if mode() == "numpy":
        return "numpy"
    if _available is None:
        try:
            from ortpool.kernels import _numba  # noqa: F401
        except ImportError as err:
            if mode() == "numba":
                warnings.warn(
                    f"ORTPOOL_KERNELS=numba but numba does not import ({err}): using numpy",
                    stacklevel=2,
                )
            _available = False
        else:
            _compile_note.install()
            _available = True
    return "numba" if _available else "numpy"


#: (kernel, dtype name) found loaded: a compiled signature is never dropped, so a yes is final
#: (asking numba again costs about 4 µs, per call of the kernels that decide per call).
_LOADED: set[tuple[str, str]] = set()


def loaded(kernel: str, dtype: np.dtype) -> bool:
    """Whether this process holds the compiled ``kernel`` for ``dtype`` (compiled or loaded from
    numba's cache): then calling it costs nothing more than the numpy path."""
    if (kernel, dtype.name) in _LOADED:
        return True
    module = sys.modules.get(KERNELS[kernel][0])
    if module is None:
        return False
    if any(str(sig[0].dtype) == dtype.name for sig in getattr(module, kernel).signatures):
        _LOADED.add((kernel, dtype.name))
        return True
    return False


def compiled(kernel: str, dtype: np.dtype, nbytes: int) -> bool:
    """Whether a call of ``nbytes`` input bytes of ``dtype`` is planned for the compiled
    ``kernel`` (one of :data:`KERNELS`); see the module docstring for the rule."""
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
    """The one dispatch of the kernels: the compiled ``kernel`` (one of :data:`KERNELS`) when a
    call of ``nbytes`` input bytes of ``dtype`` is planned for it (:func:`compiled`), else None
    (the numpy back-end). numba is imported only here, and only for a compiled call."""
    if not compiled(kernel, dtype, nbytes):
        return None
    return getattr(importlib.import_module(KERNELS[kernel][0]), kernel)


@contextlib.contextmanager
def prefer_loaded() -> Iterator[None]:
    """Plan for ``"loaded"`` inside the block, in this process and the processes it starts,
    unless ``ORTPOOL_KERNELS`` names a mode: for a command whose first run must not wait for
    numba to compile (the results are the same bits either way). The mode and the environment
    are restored after it (a command run in-process leaves its caller's rule alone)."""
    global _mode
    if os.environ.get("ORTPOOL_KERNELS", "").strip():
        yield
        return
    before, saved = _mode, os.environ.get("ORTPOOL_KERNELS")
    # The environment carries the choice into child processes (``--jobs``, isolated runs).
    os.environ["ORTPOOL_KERNELS"] = "loaded"
    _calls.forget()
    _mode = "loaded"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("ORTPOOL_KERNELS", None)
        else:
            os.environ["ORTPOOL_KERNELS"] = saved
        _calls.forget()
        _mode = before


def set_backend(name: str | None) -> None:
    """Plan for ``"auto"``, ``"numba"`` (every call), ``"numpy"`` or ``"loaded"`` from now on
    (None: decide again from the environment); forgets every cached plan."""
    global _mode
    if name not in (None, *_MODES):
        raise ValueError(f"kernels {name!r}: expected 'auto', 'numba', 'numpy', 'loaded' or None")
    _calls.forget()
    _mode = name
    if name == "numba":
        from ortpool.kernels import _numba  # noqa: F401  (fails here if numba is missing)
