"""tract (the ``tract`` package: sonos' Rust inference engine, through its C API and ctypes).

Measured on tract 0.23.9: a model is read from a file, its input facts set from the feeds. No
LpPool, MaxUnpool, MaxRoiPool, no bfloat16. Some inputs end the process (a Rust panic: MaxPool
with kernel_shape=[0], GlobalLpPool on a zero-size axis; a missing feed is a SIGSEGV): run it in a
:class:`~ortpool.runtimes.base.Worker`. Messages keep the first line and cause, no backtrace.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ortpool import dtypes
from ortpool.runtimes.base import (
    NO_KERNEL,
    REFUSED,
    RUN_FAILED,
    Runtime,
    check_outputs,
    one_line,
)

#: onnx element type name -> tract's fact mnemonic (tract has no bfloat16)
FACT_TYPES = {"float": "f32", "double": "f64", "float16": "f16", "int8": "i8", "int16": "i16",
              "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
              "uint64": "u64", "bool": "bool"}


def _clean(text: str) -> str:
    """tract's error in one line: its first line and its first cause, no backtrace."""
    text = text.split("Stack backtrace:", 1)[0]
    head, _, rest = text.partition("Caused by:")
    first = head.strip().splitlines()[0] if head.strip() else ""
    cause = rest.strip().splitlines()[0].strip() if rest.strip() else ""
    cause = re.sub(r"^\d+:\s*", "", cause)
    return one_line(f"{first} ({cause})" if cause else first)


def classify(text: str, stage: str) -> tuple[str, str]:
    """Kind and message of a tract error raised at ``stage`` (load, type, optimize, run)."""
    unimplemented = re.search(r'node #\d+ "([^"]*)" Unimplemented\((\w+)\)', text)
    if unimplemented:
        node, op = unimplemented.groups()
        return NO_KERNEL, f"no implementation of {op} (node {node!r})"
    datum = re.search(r"Unknown DatumType (\w+)", text)
    if datum:
        return NO_KERNEL, f"no element type {datum.group(1)}"
    return (RUN_FAILED if stage == "run" else REFUSED), _clean(text)


def _load(tract: Any, model: bytes) -> Any:
    """``model`` read by tract, which reads a path: a file with no name where the system has
    them, so that a worker stopped mid-load (its time limit) leaves no copy of the model."""
    if not hasattr(os, "memfd_create"):
        with tempfile.TemporaryDirectory(prefix="ortpool-tract-") as folder:
            path = os.path.join(folder, "model.onnx")
            with open(path, "wb") as f:
                f.write(model)
            return tract.onnx().load(path)
    with open(os.memfd_create("model.onnx"), "wb") as f:
        f.write(model)
        f.flush()
        return tract.onnx().load(f"/proc/self/fd/{f.fileno()}")


class Tract(Runtime):
    """tract on the CPU (its default runtime); the model's own element types."""

    name = "tract"
    PACKAGE = "tract"

    def describe(self) -> dict[str, Any]:
        tract = self._module()
        return {"runtime": self.name, "release": tract.version(),
                "package": importlib.metadata.version("tract"), "device": "CPU",
                "precision": "the model's element types"}

    def title(self) -> str:
        return f"tract {self._module().version()} (CPU)"

    def run(self, model: bytes, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        sig, arrays = self.checked(model, feeds)
        for port in (*sig.inputs, *sig.outputs):
            if port.dtype == "bfloat16":
                kind = "input" if port in sig.inputs else "output"
                raise self.failure(NO_KERNEL, f"no element type bfloat16 ({kind} {port.name!r})")
        inference = self._step("load", lambda: _load(self._module(), bytes(model)))
        order = self._set_facts(inference, arrays)
        typed = self._step("type", inference.into_model)
        names = [typed.output_name(i) for i in range(typed.output_count())]
        runnable = self._step("optimize", typed.into_runnable)
        results = self._step("run", lambda: [
            r.to_numpy() for r in runnable.run([arrays[name] for name in order])])
        values = dict(zip(names, results, strict=False))
        if all(p.name in values for p in sig.outputs):
            results = [values[p.name] for p in sig.outputs]
        return check_outputs(sig, results, self.name)

    def _step(self, stage: str, call: Callable[[], Any]) -> Any:
        """``call()``, its error sorted by :func:`classify` at ``stage``."""
        try:
            return call()
        except Exception as err:
            raise self.failure(*classify(str(err), stage)) from None

    def _set_facts(self, inference: Any, arrays: dict[str, np.ndarray]) -> list[str]:
        """Each input's fact from its feed; the input names in tract's order."""
        order = []
        for i in range(inference.input_count()):
            name = inference.input_name(i)
            if name not in arrays:
                # checked already: only an input with an initializer (IR 3) goes unfed, and
                # tract reads it as a free input that the run would read from nowhere
                raise self.failure(REFUSED, f"tract takes the initializer {name!r} as an input, "
                                   "and it has no feed")
            array = arrays[name]
            kind = FACT_TYPES.get(dtypes.name_of(array.dtype))
            if kind is None:
                raise self.failure(NO_KERNEL, f"no element type {array.dtype} (input {name!r})")
            fact = ",".join([*(str(n) for n in array.shape), kind])
            try:
                inference.set_input_fact(i, fact)
            except Exception as err:
                raise self.failure(REFUSED,
                                   f"input {name!r} fact {fact}: {_clean(str(err))}") from None
            order.append(name)
        return order
