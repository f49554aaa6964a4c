"""onnxruntime-extensions, imported here and only here: its import sets
``PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python`` in the process's environment (for its own
converters), which every process started after would inherit (validate's model workers, the
runtimes' workers): their protobuf then reads a model otherwise (a name that is not UTF-8 fails
there as "not a readable model"). The setting is put back as the user had it."""

import os

_KEY = "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"
_before = os.environ.get(_KEY)

import onnxruntime_extensions  # noqa: E402
from onnxruntime_extensions import PyCustomOpDef, _ocos, get_library_path, onnx_op  # noqa: E402

if _before is None:
    os.environ.pop(_KEY, None)
else:
    os.environ[_KEY] = _before

__all__ = ["PyCustomOpDef", "_ocos", "get_library_path", "onnx_op", "onnxruntime_extensions"]
