"""One description of the runtime a model runs on (:class:`RuntimeSpec`): execution providers
with their options, graph optimization level, threads, execution mode. Every session ortpool makes
is made from one (:func:`ortpool.ort.opening.open_session`), so two commands given the same
options run the same runtime. Which provider executed each node (onnxruntime falls back to the CPU
provider silently) is read from the session's profile (:func:`placement`). onnxruntime is
imported only when needed: ``ortpool fix --help`` does not load it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx

from ortpool import dtypes
from ortpool.errors import OrtpoolError, safe
from ortpool.ort import runtime
from ortpool.ort.runtime import CPU, EXTERNAL_FOLDER_KEY

#: Graph optimization levels -> onnxruntime.GraphOptimizationLevel members (``layout`` from 1.22).
LEVELS: dict[str, str] = {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC",
                          "extended": "ORT_ENABLE_EXTENDED", "layout": "ORT_ENABLE_LAYOUT",
                          "all": "ORT_ENABLE_ALL"}
#: onnxruntime's own default, the level a deployed model runs at (``ortpool fix`` proves at it).
DEFAULT_LEVEL = "all"
#: Nodes judged alone (``ortpool validate``, ``conformance``): the node as written, not fused.
ISOLATED_LEVEL = "disable"

#: Execution modes -> onnxruntime.ExecutionMode member names.
MODES: dict[str, str] = {"sequential": "ORT_SEQUENTIAL", "parallel": "ORT_PARALLEL"}

#: Short names a user may type for a provider (Polygraphy's ``--providers cuda``).
SHORT_NAMES: dict[str, str] = {"cpu": CPU} | {short: f"{name}ExecutionProvider" for short, name in (
    ("cuda", "CUDA"), ("tensorrt", "Tensorrt"), ("trt", "Tensorrt"), ("openvino", "OpenVINO"),
    ("dml", "Dml"), ("directml", "Dml"), ("coreml", "CoreML"), ("qnn", "QNN"), ("rocm", "ROCM"),
    ("migraphx", "MIGraphX"), ("azure", "Azure"))}


@dataclasses.dataclass(frozen=True)
class Provider:
    """An execution provider and its options, handed to onnxruntime as they are."""

    name: str
    options: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        if not self.options:
            return self.name
        return f"{self.name}({', '.join(f'{k}={v}' for k, v in self.options)})"


def provider_name(text: str) -> str:
    """``"openvino"`` -> ``"OpenVINOExecutionProvider"``; a full name is kept as written."""
    text = text.strip()
    return SHORT_NAMES.get(text.lower(), text)


def parse_providers(text: str | Sequence[str] | None) -> tuple[Provider, ...]:
    """``"OpenVINOExecutionProvider,cpu"`` (or a list) -> providers in that order (default CPU)."""
    items = text.split(",") if isinstance(text, str) else list(text or [])
    names = [provider_name(p) for p in items if str(p).strip()]
    return tuple(Provider(n) for n in names) or (Provider(CPU),)


@dataclasses.dataclass(frozen=True)
class RuntimeSpec:
    """Providers (in priority order), graph optimization level, threads (0: onnxruntime's
    default), execution mode: ``RuntimeSpec(parse_providers("openvino,cpu"), level="disable")``."""

    providers: tuple[Provider, ...] = (Provider(CPU),)
    level: str = DEFAULT_LEVEL
    intra_op_threads: int = 0
    inter_op_threads: int = 0
    mode: str = "sequential"
    #: every session uses onnxruntime's process-wide pool (:func:`share_thread_pool`)
    shared_pool: bool = False

    @property
    def provider_names(self) -> list[str]:
        return [p.name for p in self.providers]

    @property
    def first(self) -> str:
        """The provider asked for first: a node it did not execute fell back."""
        return self.providers[0].name

    def with_level(self, level: str) -> RuntimeSpec:
        return dataclasses.replace(self, level=level)

    def check(self, label: Callable[[str], str]) -> RuntimeSpec:
        """Self, or an :class:`OrtpoolError` for a level, mode or provider the installed
        onnxruntime does not have (naming what it has); ``label`` spells the options' names."""
        runtime.require()
        import onnxruntime as ort

        for value, table, enum, key in (
            (self.level, LEVELS, ort.GraphOptimizationLevel, "opt_level"),
            (self.mode, MODES, ort.ExecutionMode, "execution_mode"),
        ):
            if value not in table or not hasattr(enum, table[value]):
                known = [k for k, v in table.items() if hasattr(enum, v)]
                raise OrtpoolError(f"{label(key)}={value!r}: onnxruntime {ort.__version__} knows "
                                   f"{', '.join(known)}")
        most = 4 * (os.cpu_count() or 1)  # 10000 threads did not finish a one-node model in 180 s
        for key in ("intra_op_threads", "inter_op_threads"):
            count = getattr(self, key)
            if count < 0:
                raise OrtpoolError(f"{label(key)}={count} must be >= 0")
            if count > most:
                raise OrtpoolError(f"{label(key)}={count} must be at most {most} (4 per CPU of "
                                   "this machine: more threads only take turns on the cores, and "
                                   "each costs a stack)")
        available = ort.get_available_providers()
        build = runtime.build()
        for provider in self.providers:
            if provider.name not in available:
                raise OrtpoolError(f"{label('providers')}: {safe(provider.name)} is not available "
                                   f"in this onnxruntime ({build['distribution']} "
                                   f"{build['version']}; available: {', '.join(available)}); "
                                   "every build installs the same module, so another provider "
                                   "needs its own build (e.g. onnxruntime-gpu, "
                                   "onnxruntime-openvino) in place of this one")
        if _POOL is None:
            return self
        # bench(shared_pool=True) made the process's one pool: no session can have another
        for key, pool in (("intra_op_threads", _POOL), ("inter_op_threads", 0)):
            if getattr(self, key) not in (0, pool):
                raise OrtpoolError(
                    f"{label(key)}={getattr(self, key)}: every session of this process runs on "
                    "the one pool bench(shared_pool=True) made (intra-op threads: "
                    f"{_POOL or 'default'}; no inter-op pool), which onnxruntime keeps for the "
                    "process's life; leave the threads out, or run in another process")
        return dataclasses.replace(self, intra_op_threads=_POOL)  # reports say what sessions get

    def session_options(self, level: str | None = None, threads: int | None = None,
                        external_dir: str | os.PathLike | None = None,
                        profile_dir: str | None = None) -> Any:
        """SessionOptions of this runtime, its logging silenced (ortpool reports refusals).
        ``level`` and ``threads`` (intra and inter op) override this runtime's for one session;
        ``profile_dir`` turns profiling on, for :func:`placement`."""
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 4
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel,
                                                   LEVELS[level or self.level])
        options.execution_mode = getattr(ort.ExecutionMode, MODES[self.mode])
        intra = self.intra_op_threads if threads is None else threads
        inter = self.inter_op_threads if threads is None else threads
        shared = self.shared_pool or _POOL is not None
        if shared:
            options.use_per_session_threads = False
        elif intra:
            options.intra_op_num_threads = intra
        if inter and not shared:
            options.inter_op_num_threads = inter
        if external_dir is not None:
            options.add_session_config_entry(EXTERNAL_FOLDER_KEY, os.fspath(external_dir))
        if profile_dir is not None:
            options.enable_profiling = True
            options.profile_file_prefix = os.path.join(profile_dir, "ortpool")
        return options

    def provider_arguments(self) -> dict[str, Any]:
        """``providers=`` and ``provider_options=`` of onnxruntime.InferenceSession."""
        return {"providers": self.provider_names,
                "provider_options": [dict(p.options) for p in self.providers]}

    def describe(self) -> dict[str, Any]:
        """What a report says of the runtime."""
        build = runtime.build()
        return {"onnxruntime": build["version"], "build": build["distribution"],
                "providers": [str(p) for p in self.providers], "opt_level": self.level,
                "intra_op_threads": self.intra_op_threads,
                "inter_op_threads": self.inter_op_threads, "execution_mode": self.mode,
                "shared_pool": self.shared_pool or _POOL is not None,
                "also_installed": build.get("also_installed")}

    def title(self) -> str:
        """``onnxruntime-openvino 1.24.1, OpenVINOExecutionProvider, CPUExecutionProvider``."""
        build = runtime.build()
        providers = ", ".join(str(p) for p in self.providers)
        title = f"{build['distribution']} {build['version']} on {providers}"
        if "also_installed" in build:
            title += f" ({build['also_installed']} also installed, its files overwritten)"
        return title


def placement(session: Any, model: onnx.ModelProto | None = None) -> dict[str, str]:
    """Node name -> the provider that executed it, read from the session's profile (made with
    ``profile_dir``; profiling ends here). A node compiled into a provider's subgraph (OpenVINO,
    TensorRT) has no event of its own: with ``model``, each node no event names is given the
    compiling provider when exactly one compiled subgraphs, else ``"?"``. Profiling costs a
    one-node model 12.6 -> 16.3 ms on the CPU provider, so only other providers are profiled.
    """
    found: dict[str, str] = {}
    compiled: set[str] = set()
    for node, op_type, provider in profile_events(session):
        if node.startswith(f"{provider}_") and op_type in node:
            compiled.add(provider)  # a fused subgraph: "<EP>_<EP>-subgraph_1_0"
        else:
            found[node] = provider
    if model is not None:
        others = sorted(compiled)
        for node in model.graph.node:
            if node.name and node.name not in found:
                found[node.name] = others[0] if len(others) == 1 else "?"
    return found


def read_profile(session: Any) -> list[dict[str, Any]]:
    """The events of the session's profile (Chrome trace format: ``cat``, ``name``, ``ts`` and
    ``dur`` in µs, ``args``; the session made with ``profile_dir``). Ends profiling and removes
    the file and its folder: a profile grows with every run."""
    raw = getattr(session, "session", session)  # ortpool.InferenceSession wraps one
    path = raw.end_profiling()
    try:
        # a node name that is not UTF-8 is written into the profile as it is
        with open(path, encoding="utf-8", errors="surrogateescape") as file:
            return list(json.load(file))
    finally:
        with contextlib.suppress(OSError):
            os.remove(path)
            os.rmdir(os.path.dirname(path))


def kernel_node(event: dict[str, Any]) -> str | None:
    """The node a profile event times (``<node>_kernel_time``), or None."""
    name = str(event.get("name", ""))
    if event.get("cat") != "Node" or not name.endswith("_kernel_time"):
        return None
    return name.removesuffix("_kernel_time")


def profile_events(session: Any) -> list[tuple[str, str, str]]:
    """(node name, op type, provider) of every node run in the session's profile
    (:func:`read_profile`); a provider's compiled subgraph is one node,
    ``<EP>_<EP>-subgraph_1_0`` of op type ``<EP>-subgraph_1``."""
    found = []
    for event in read_profile(session):
        args = event.get("args") or {}
        provider = args.get("provider")
        node = kernel_node(event)
        if provider and node is not None:
            found.append((node, str(args.get("op_name", "")), provider))
    return found


def fell_back(asked: RuntimeSpec, executed: str | None) -> str | None:
    """``"fell back to CPUExecutionProvider"`` when a node ran on another provider than the
    first asked for; else None."""
    if executed is None or executed == "?" or executed == asked.first:
        return None
    return f"fell back to {executed}"


def profile_dir() -> str:
    """A folder of its own for one session's profile (onnxruntime names the file by the
    millisecond), removed once read, or by a caller that may not read it: no exit handler, which
    a process ended by ``os._exit`` (validate's children) never runs."""
    return tempfile.mkdtemp(prefix="ortpool-profile-")


#: the intra-op threads (0: onnxruntime's default) of the process-wide pool this process made,
#: None before: it cannot be left, and onnxruntime then refuses every session with a pool of its
#: own (validate, fix, InferenceSession after a ``bench(shared_pool=True)``), so every later
#: session runs on it
_POOL: int | None = None


def pool_threads() -> int | None:
    """The intra-op threads of the process-wide pool every session of this process now runs on
    (:func:`share_thread_pool`; 0: onnxruntime's default), None while there is none."""
    return _POOL


def share_thread_pool(intra_op_threads: int = 0) -> bool:
    """Give every later session one process-wide intra-op pool (set before the first session;
    sessions then need ``use_per_session_threads = False``); False where onnxruntime cannot
    (1.21, 1.22). ``ortpool bench`` holds several sessions, whose idle workers would spin and
    take the cores from each other (MaxPool 0.20 ms ±17% against 0.10 ms ±3% on 2 cores).
    """
    from onnxruntime.capi import _pybind_state

    global _POOL
    setter = getattr(_pybind_state, "set_global_thread_pool_sizes", None)
    if setter is None:
        return False
    if _POOL is None:  # onnxruntime refuses to replace it (the first one's size stays)
        setter(intra_op_threads, 0)
        _POOL = intra_op_threads
    return True


def with_values(feeds: Mapping[str, Any]) -> dict[str, Any]:
    """``feeds`` with bfloat16 arrays (ml_dtypes) made OrtValues, which onnxruntime reads."""
    found = {}
    for name, array in feeds.items():
        # dtype == , not dtype.name (12 us a feed, on every timed run)
        if isinstance(array, np.ndarray) and array.dtype == dtypes.NUMPY["bfloat16"]:
            import onnxruntime as ort

            found[name] = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
                np.ascontiguousarray(array).view(np.uint16), onnx.TensorProto.BFLOAT16
            )
        else:
            found[name] = array
    return found


def runner(session: Any, outputs: Sequence[str] | None, feeds: Mapping[str, Any],
           run_options: Any = None) -> Callable[[], list[Any]]:
    """``session.run(outputs, feeds, run_options)`` as a call, bfloat16 fed and fetched as
    ml_dtypes arrays: onnxruntime's Python API converts none either way, so they cross as
    OrtValues (``run_with_ort_values``, whose feeds are all OrtValues). The way is chosen once:
    a timed call pays nothing for it.
    ``ortpool.InferenceSession.run`` takes this way itself, its errors raised as its own."""
    import onnxruntime as ort

    values = with_values(feeds)
    declared = session.get_outputs() if isinstance(session, ort.InferenceSession) else []
    wanted = list(outputs or [o.name for o in declared])
    if all(o.type != "tensor(bfloat16)" for o in declared if o.name in wanted):
        return functools.partial(session.run, outputs, values, run_options)
    values = {name: v if isinstance(v, ort.OrtValue) else ort.OrtValue.ortvalue_from_numpy(v)
              for name, v in values.items()}
    return lambda: [_array(v) for v in session.run_with_ort_values(wanted, values, run_options)]


def run_arrays(session: Any, outputs: Sequence[str] | None, feeds: Mapping[str, Any],
               run_options: Any = None) -> list[Any]:
    """:func:`runner`'s call, made once."""
    return runner(session, outputs, feeds, run_options)()


def _array(value: Any) -> Any:
    """A fetched OrtValue as a numpy array; a bfloat16 one copied from its memory (its
    ``numpy()`` knows no such type), which is the CPU's (the session fetches its outputs there)."""
    if value.data_type() != "tensor(bfloat16)":
        return value.numpy()
    import ctypes

    bits = np.empty(value.shape(), np.uint16)
    ctypes.memmove(bits.ctypes.data, value.data_ptr(), bits.nbytes)
    return bits.view(dtypes.NUMPY["bfloat16"])
