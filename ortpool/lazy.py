"""Names a package exports without importing their modules until first used (PEP 562's module
``__getattr__``): the packages whose modules import onnxruntime, or bring the kernels and the
session layer with them, list their public names this way so importing the package stays light."""

from __future__ import annotations

import importlib
import inspect
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``names`` maps a public name to ``"module"`` (the
    same name there) or ``"module:name"``; a module ``package.name`` is itself the value (a
    package callable under its own name, such as ``ortpool.rewrite``)."""

    def __getattr__(name: str) -> Any:
        target = names.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, _, attribute = target.partition(":")
        module = importlib.import_module(module_name)
        own = module_name == f"{package}.{name}"  # a package callable under its own name
        value = module if own else getattr(module, attribute or name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


def callable_package(package: str, target: str) -> None:
    """Make the package ``package`` callable as ``target`` (``"module:function"``), with its
    signature: importing a submodule binds the package's name, so a function cannot have it."""
    module_name, _, name = target.partition(":")

    def function() -> Callable[..., Any]:
        return getattr(importlib.import_module(module_name), name)

    class CallablePackage(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return function()(*args, **kwargs)

        @property
        def __signature__(self) -> Any:
            return inspect.signature(function())

    sys.modules[package].__class__ = CallablePackage
