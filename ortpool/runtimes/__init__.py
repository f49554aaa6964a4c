"""Runtimes other than onnxruntime, behind one interface (issue 35, :mod:`~ortpool.runtimes.base`):
``get("openvino")`` (options ``device="CPU"``, ``precision="f32"``), ``get("tract")``,
``get("reference")`` (the onnx reference evaluator). Their packages are optional and imported only
when used (``Runtime.available()`` gives the install hint).
"""

from __future__ import annotations

from typing import Any

from ortpool.runtimes.base import (
    CRASHED,
    KINDS,
    NO_KERNEL,
    REFUSED,
    RUN_FAILED,
    TIMED_OUT,
    Runtime,
    RuntimeFailure,
    Worker,
)
from ortpool.runtimes.openvino_runtime import OpenVINO
from ortpool.runtimes.reference_runtime import Reference
from ortpool.runtimes.tract_runtime import Tract

_RUNTIMES: dict[str, type[Runtime]] = {cls.name: cls for cls in (OpenVINO, Tract, Reference)}


def names() -> list[str]:
    """The runtimes :func:`get` knows, sorted."""
    return sorted(_RUNTIMES)


def _class(name: str) -> type[Runtime]:
    cls = _RUNTIMES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"unknown runtime {name!r}: the runtimes are {', '.join(names())}")
    return cls


def install_hint(name: str) -> str | None:
    """None when runtime ``name``'s package imports here, else how to install it."""
    return _class(name).available()


def get(name: str, **options: Any) -> Runtime:
    """The runtime called ``name`` with ``options``: a ValueError for an unknown name or one not
    installed (with its hint), a TypeError for an option it does not take."""
    cls = _class(name)
    unknown = sorted(set(options) - set(cls.OPTIONS))
    if unknown:
        takes = ", ".join(cls.OPTIONS) or "none"
        raise TypeError(f"runtime {name!r} takes no option {unknown[0]!r} (its options: {takes})")
    hint = cls.available()
    if hint is not None:
        raise ValueError(f"runtime {name!r} is not installed here: {hint}")
    return cls(**options)


__all__ = [
    "CRASHED", "KINDS", "NO_KERNEL", "REFUSED", "RUN_FAILED", "TIMED_OUT", "OpenVINO", "Reference",
    "Runtime", "RuntimeFailure", "Tract", "Worker", "get", "install_hint", "names",
]
