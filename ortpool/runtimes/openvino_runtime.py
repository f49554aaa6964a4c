"""OpenVINO's own runtime (the ``openvino`` package), not onnxruntime's OpenVINO provider.

Measured on openvino 2026.4.1 (CPU plugin): the CPU's default precision is bf16 where it has it,
so f32 is asked for, and a hint the CPU cannot honour runs f32 silently (:meth:`OpenVINO.describe`
says which). bfloat16 crosses the API as float16 arrays of bfloat16 bits. ``read_model`` raises
"No conversion rule found" (no kernel) or "Conversion is failed for" (refused). A missing feed
reads uninitialised memory (so feeds are checked first).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from typing import Any

import ml_dtypes
import numpy as np

from ortpool.runtimes.base import (
    NO_KERNEL,
    REFUSED,
    RUN_FAILED,
    Runtime,
    check_outputs,
    one_line,
)

PRECISIONS = ("f32", "bf16", "f16")
#: OpenVINO's model converter, which its package imports by default
_CONVERTER = "openvino.tools.ovc"


def _convert_model(*args: Any, **kwargs: Any) -> Any:
    """``openvino.convert_model``, its module imported at the first call (see ``_module``)."""
    from openvino.tools.ovc import convert_model

    return convert_model(*args, **kwargs)


def _op_failure(text: str) -> tuple[str, str]:
    """Kind and message of a ``read_model`` error from the ONNX frontend."""
    rules = re.search(r"No conversion rule found for operations?:\s*([^\n]+)", text)
    if rules:
        return NO_KERNEL, f"no conversion rule for {rules.group(1).strip()}"
    failed = re.search(r"-- (\S+) with a message:\n(.*?)(?:\n\s*\nSummary:|\Z)", text, re.S)
    if failed:
        op, detail = failed.group(1), failed.group(2)
        rank = re.search(r"is_rank_compatible_any_of\(data_rank, \{([\d, ]+)\}\)", detail)
        if rank:
            return NO_KERNEL, f"{op}: no implementation for this rank (takes ranks {rank.group(1)})"
        lines = _lines(detail, "While validating")
        reason = lines[-1] if lines else detail
        node = re.search(r"ONNX node '<Node\((\w+)\): ([^>]*)>'", detail)
        where = f"{op} (node {node.group(2)!r})" if node else op
        return REFUSED, f"{where}: {reason}"
    return REFUSED, _clean(text)


def _lines(text: str, *skipped: str) -> list[str]:
    """OpenVINO's message lines without its ``Exception from`` and ``Check`` ones."""
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith(
        ("Exception from", "Check '", *skipped))]


def _clean(text: str) -> str:
    return one_line(" ".join(_lines(text)) or text)


class OpenVINO(Runtime):
    """OpenVINO on ``device`` (``CPU``) at ``precision`` (``f32``, ``bf16`` or ``f16``: its
    INFERENCE_PRECISION_HINT)."""

    name = "openvino"
    OPTIONS = ("device", "precision")
    PACKAGE = "openvino"

    def __init__(self, device: str = "CPU", precision: str = "f32") -> None:
        super().__init__()
        if not isinstance(device, str) or not device.strip():
            raise ValueError(f"openvino: device={device!r} is not a device name (e.g. 'CPU')")
        if precision not in PRECISIONS:
            raise ValueError(f"openvino: precision={precision!r} is not one of "
                             f"{', '.join(PRECISIONS)}")
        self.device = device.strip()
        self.precision = precision

    def _module(self) -> Any:
        # `import openvino` imports its model converter (openvino.tools.ovc), whose import
        # writes ~/intel/stats and ~/intel/openvino_ga_cid and sends a usage event from a forked
        # process: ortpool needs the runtime alone, and writes nothing the user did not name.
        # The converter is kept out of that import; openvino.convert_model imports it when called.
        if "openvino" in sys.modules:
            return super()._module()
        sys.modules[_CONVERTER] = None  # type: ignore[assignment]  # openvino catches the ImportError
        try:
            ov = super()._module()
        finally:
            if sys.modules.get(_CONVERTER, 0) is None:
                del sys.modules[_CONVERTER]
        if not hasattr(ov, "convert_model"):
            ov.convert_model = _convert_model
        return ov

    def _core(self) -> Any:
        if "core" not in self._cache:
            self._cache["core"] = self._module().Core()
        return self._cache["core"]

    def prepare(self) -> None:
        self._core()

    def _config(self) -> dict[str, str]:
        return {"INFERENCE_PRECISION_HINT": self.precision}

    def _check_device(self) -> None:
        devices = self._core().available_devices
        if self.device not in devices and self.device.split(".")[0] not in devices:
            raise ValueError(f"openvino: device {self.device!r} is not available here "
                             f"(available: {', '.join(devices) or 'none'})")

    def precision_in_effect(self) -> str:
        """The precision a compiled model states (bf16 asked of a CPU without it runs f32)."""
        if "effective" not in self._cache:
            ov = self._module()
            param = ov.opset8.parameter([1], ov.Type.f32, name="x")
            model = ov.Model([ov.opset8.relu(param)], [param], "probe")
            compiled = self._core().compile_model(model, self.device, self._config())
            # an element type: its name is the precision's ("f32", "bf16", "f16")
            hint = compiled.get_property("INFERENCE_PRECISION_HINT")
            self._cache["effective"] = hint.get_type_name()
        return self._cache["effective"]

    def describe(self) -> dict[str, Any]:
        ov = self._module()
        self._check_device()
        try:  # a device id its plugin lacks (CPU.1) is refused here, by OpenVINO's words
            name = str(self._core().get_property(self.device, "FULL_DEVICE_NAME"))
            precision = self.precision_in_effect()
        except Exception as err:  # OpenVINO's own type
            raise ValueError(f"openvino: device {self.device!r}: {_clean(str(err))}") from None
        return {"runtime": self.name, "release": ov.__version__.split("-", 1)[0],
                "build": ov.__version__, "device": self.device, "device_name": name,
                "precision": precision, "precision_asked": self.precision}

    def title(self) -> str:
        facts = self.describe()
        shown = facts["precision"]
        if shown != self.precision:
            shown = f"{shown}; {self.precision} asked, not supported here"
        return f"OpenVINO {facts['release']} ({self.device}, {shown})"

    def _feed(self, array: np.ndarray) -> Any:
        if array.dtype != np.dtype(ml_dtypes.bfloat16):
            return array
        ov = self._module()
        tensor = ov.Tensor(ov.Type.bf16, ov.Shape(list(array.shape)))
        tensor.data[...] = np.ascontiguousarray(array).view(np.float16)
        return tensor

    def run(self, model: bytes, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        sig, arrays = self.checked(model, feeds)
        core = self._core()
        self._check_device()
        try:
            read = core.read_model(model=bytes(model), weights=b"")
        except Exception as err:
            raise self.failure(*_op_failure(str(err))) from None
        try:
            compiled = core.compile_model(read, self.device, self._config())
        except Exception as err:
            raise self.failure(REFUSED, _clean(str(err))) from None
        request = compiled.create_infer_request()
        try:
            request.infer({name: self._feed(a) for name, a in arrays.items()})
        except Exception as err:
            raise self.failure(RUN_FAILED, _clean(str(err))) from None
        return check_outputs(sig, self._outputs(compiled, request, sig), self.name)

    def _outputs(self, compiled: Any, request: Any, sig: Any) -> list[np.ndarray]:
        """The outputs by the model's output names (else by position), bfloat16 bits read as
        bfloat16."""
        ov = self._module()
        ports = list(compiled.outputs)
        by_name = {name: port for port in ports for name in port.get_names()}
        outputs = []
        for i, declared in enumerate(sig.outputs):
            port = by_name.get(declared.name, ports[i] if i < len(ports) else None)
            if port is None:
                raise self.failure(RUN_FAILED, f"no output {declared.name!r} in the compiled model")
            tensor = request.get_tensor(port)
            data = np.array(tensor.data, copy=True)
            if tensor.element_type == ov.Type.bf16:
                data = data.view(np.uint16).view(ml_dtypes.bfloat16)
            outputs.append(data)
        return outputs
