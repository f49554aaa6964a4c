"""The runtime a fix is proven on: onnxruntime, its execution providers and optimization level.

A form is exact *on a runtime*: the installed onnxruntime, the providers the user will run, and
the graph optimizations it applies (PadFusion at level 1 and above folds a Pad into the pool
after it). Every proof session is made here, so all of them use the same settings. (The IR
version a written model is stamped with is :mod:`ortpool.ort.runtime`'s.)
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any

import onnx

from ortpool.errors import OrtpoolError
from ortpool.ort.runtime import EXTERNAL_FOLDER_KEY

#: --opt-level names -> onnxruntime.GraphOptimizationLevel member names
LEVELS: dict[str, str] = {
    "disable": "ORT_DISABLE_ALL",
    "basic": "ORT_ENABLE_BASIC",
    "extended": "ORT_ENABLE_EXTENDED",
    "layout": "ORT_ENABLE_LAYOUT",
    "all": "ORT_ENABLE_ALL",
}
DEFAULT_LEVEL = "all"  # onnxruntime's own default


@dataclasses.dataclass(frozen=True)
class Runtime:
    """Providers and optimization level of every proof session."""

    providers: tuple[str, ...] = ("CPUExecutionProvider",)
    level: str = DEFAULT_LEVEL

    def __post_init__(self) -> None:
        import onnxruntime as ort

        if self.level not in LEVELS or not hasattr(ort.GraphOptimizationLevel, LEVELS[self.level]):
            known = [k for k, v in LEVELS.items() if hasattr(ort.GraphOptimizationLevel, v)]
            raise OrtpoolError(f"--opt-level {self.level!r}: choose one of {', '.join(known)}")
        available = ort.get_available_providers()
        for provider in self.providers:
            if provider not in available:
                raise OrtpoolError(
                    f"--providers: {provider} is not available in this onnxruntime "
                    f"(available: {', '.join(available)})"
                )

    def options(self, level: str | None = None, threads: int = 0, external_dir: str | None = None):
        """SessionOptions at ``level`` (default: this runtime's), logging silenced."""
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 4
        options.graph_optimization_level = getattr(
            ort.GraphOptimizationLevel, LEVELS[level or self.level]
        )
        if threads:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = threads
        if external_dir is not None:
            options.add_session_config_entry(EXTERNAL_FOLDER_KEY, os.fspath(external_dir))
        return options

    def session(
        self,
        model: onnx.ModelProto,
        level: str | None = None,
        threads: int = 0,
        external_dir: str | None = None,
    ) -> Any:
        """A session of ``model``: plain onnxruntime, or ``ortpool.InferenceSession`` when the
        model holds ortpool ops (errors of those ops are then raised, not hidden)."""
        options = self.options(level, threads, external_dir)
        data = model.SerializeToString()
        from ortpool.ort.session import InferenceSession, iter_ortpool_nodes

        if any(iter_ortpool_nodes(model)):

            return InferenceSession(data, options, providers=list(self.providers))
        import onnxruntime as ort

        return ort.InferenceSession(data, options, providers=list(self.providers))

    def optimized(self, model: onnx.ModelProto, level: str | None = None) -> onnx.ModelProto:
        """``model`` as onnxruntime's graph optimizer leaves it at ``level`` on these providers
        (its ``optimized_model_filepath``): which nodes it fused, folded or replaced."""
        import tempfile

        options = self.options(level)
        with tempfile.TemporaryDirectory(prefix="ortpool-fix-") as folder:
            options.optimized_model_filepath = os.path.join(folder, "optimized.onnx")
            from ortpool.ort.session import InferenceSession, iter_ortpool_nodes

            data = model.SerializeToString()
            if any(iter_ortpool_nodes(model)):
                InferenceSession(data, options, providers=list(self.providers))
            else:
                import onnxruntime as ort

                ort.InferenceSession(data, options, providers=list(self.providers))
            return onnx.load(options.optimized_model_filepath, load_external_data=False)

    def describe(self) -> dict[str, Any]:
        import onnxruntime as ort

        return {
            "onnxruntime": ort.__version__,
            "providers": list(self.providers),
            "opt_level": self.level,
        }


def parse_providers(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"CUDAExecutionProvider,CPUExecutionProvider"`` -> a tuple; None -> CPU."""
    if not text:
        return ("CPUExecutionProvider",)
    items = text.split(",") if isinstance(text, str) else list(text)
    return tuple(p.strip() for p in items if p.strip())
