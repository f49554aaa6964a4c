"""The onnxruntime ortpool runs against: the installed build (:func:`build`), the answer when
none is (:func:`require`), the one place a session is made (:func:`create`), the newest IR version
it reads, and the versions a report names. The bottom of ``ortpool/ort/``, importing onnxruntime
only when called: ``ortpool rewrite`` runs where none is installed.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ortpool.errors import OrtpoolError
from ortpool.model.singlenode import IR_VERSION, node_model  # IR_VERSION: every model's stamp

if TYPE_CHECKING:
    import onnx

CPU = "CPUExecutionProvider"

#: The session config entry naming where the external data of a model handed over as bytes is.
EXTERNAL_FOLDER_KEY = "session.model_external_initializers_file_folder_path"
#: The distributions that install the ``onnxruntime`` module (each overwrites the others' files,
#: so ortpool requires none).
BUILDS = ("onnxruntime", "onnxruntime-gpu", "onnxruntime-openvino", "onnxruntime-directml",
          "onnxruntime-qnn", "onnxruntime-training")
INSTALL_HINT = ("no onnxruntime installed: pip install onnxruntime (or one build of "
                "onnxruntime-gpu, onnxruntime-openvino, onnxruntime-directml, ...)")


def require() -> None:
    """An :class:`OrtpoolError` saying what to install when ``onnxruntime`` does not import (none
    installed, or one build's files removed by uninstalling another)."""
    try:
        found = importlib.util.find_spec("onnxruntime")
    except ImportError:  # an import hook that refuses it
        found = None
    if found is None:
        raise OrtpoolError(INSTALL_HINT)
    try:
        import onnxruntime

        onnxruntime.InferenceSession  # noqa: B018 (a half-removed build imports as a namespace)
    except (ImportError, AttributeError) as err:
        raise OrtpoolError(f"onnxruntime does not import ({type(err).__name__}: {err}); builds "
                           "installed over each other leave it broken: pip uninstall every "
                           "onnxruntime* distribution, then install one (pip install onnxruntime, "
                           "or onnxruntime-gpu, -openvino, ...)") from None


@functools.cache
def build() -> dict[str, str]:
    """The installed build: its distribution (``onnxruntime-openvino``...), version and providers.
    The name is the module's own (``capi/build_and_package_info.py``: the files in place are the
    last build installed), else the installed distributions' metadata's."""
    from importlib import metadata

    import onnxruntime

    try:
        from onnxruntime.capi import build_and_package_info as info

        name = str(info.package_name).replace("_", "-")
    except ImportError:  # not in every build: the metadata then says
        installed = [d for d in BUILDS if _installed(metadata, d)]
        name = installed[0] if len(installed) == 1 else "onnxruntime"
    others = [d for d in BUILDS if d != name and _installed(metadata, d)]
    found = {"distribution": name, "version": onnxruntime.__version__,
             "providers": ", ".join(onnxruntime.get_available_providers())}
    if others:
        found["also_installed"] = ", ".join(others)
    return found


def _installed(metadata, name: str) -> bool:
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def versions() -> dict[str, str]:
    """The packages whose versions decide what a report measured."""
    import numpy
    import onnx
    import onnxruntime

    import ortpool
    from ortpool.ort._extensions import onnxruntime_extensions

    return {"ortpool": ortpool.__version__, "onnxruntime": onnxruntime.__version__,
            "onnxruntime_build": build()["distribution"],
            "onnxruntime_extensions": onnxruntime_extensions.__version__, "onnx": onnx.__version__,
            "numpy": numpy.__version__}


@functools.cache
def max_ir_version() -> int:
    """The highest IR version the installed onnxruntime loads: a one-node model tried from one
    above the newest onnx knows downwards (a few ms per try; onnxruntime exposes no number)."""
    import onnx

    for ir_version in range(max(onnx.IR_VERSION + 1, IR_VERSION), IR_VERSION, -1):
        if _loads(ir_version):
            return ir_version
    return IR_VERSION


def _loads(ir_version: int) -> bool:
    import onnxruntime as ort
    from onnx import TensorProto, helper

    model = node_model([helper.make_node("Identity", ["x"], ["y"])], "ir_probe",
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
                       [helper.make_opsetid("", 13)], ir_version=ir_version)
    quiet()
    options = ort.SessionOptions()
    options.log_severity_level = 4  # a refused IR version is the answer, not an error to log
    try:
        create(model.SerializeToString(), options, [CPU])
    except Exception:  # onnxruntime's own exception types differ between releases
        return False
    return True


def unreadable(ir_version: int) -> int | None:
    """The newest IR version the installed onnxruntime reads when ``ir_version`` is above it,
    else None (up to :data:`IR_VERSION` it is not even asked)."""
    if ir_version <= IR_VERSION:
        return None
    newest = max_ir_version()
    return newest if ir_version > newest else None


def stamp(model: onnx.ModelProto) -> str | None:
    """Lower ``model``'s IR version in place to the newest the installed onnxruntime reads (onnx
    1.23 writes 14, onnxruntime 1.21 reads 10); a note saying so, or None."""
    newest = unreadable(model.ir_version)
    if newest is None:
        return None
    old, model.ir_version = model.ir_version, newest
    return f"IR version {old} lowered to {newest}, the newest the installed onnxruntime reads"


@functools.cache
def quiet() -> None:
    """onnxruntime logs refused nodes at ERROR level on its own logger; ortpool reports them."""
    import onnxruntime as ort

    ort.set_default_logger_severity(4)


def create(source: bytes | str | os.PathLike, options: Any, providers: Sequence[str],
           provider_options: Sequence[dict[str, str]] | None = None, **kwargs: Any) -> Any:
    """The one place ortpool makes an onnxruntime session: ``source`` on ``providers``;
    ``kwargs`` go to onnxruntime as they are. Errors are onnxruntime's own."""
    import onnxruntime as ort

    arguments: dict[str, Any] = {"providers": list(providers)}
    if provider_options is not None and any(provider_options):
        # onnxruntime 1.21 wants none rather than empty ones
        arguments["provider_options"] = list(provider_options)
    return ort.InferenceSession(os.fspath(source) if isinstance(source, os.PathLike) else source,
                                sess_options=options, **arguments, **kwargs)
