"""The onnxruntime session options of every command that runs a model (``--providers``,
``--opt-level``, the threads...; from Python the keywords) -> one
:class:`ortpool.ort.runtime_spec.RuntimeSpec`, checked against the installed onnxruntime."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from ortpool import values
from ortpool.errors import OrtpoolError
from ortpool.options import CLI, PYTHON, label
from ortpool.ort import LEVELS, MODES, Provider, RuntimeSpec, provider_name

#: what ``providers=`` takes: a name, names, or onnxruntime's ``(name, {options})`` pairs
Providers = str | Sequence[str | tuple[str, Mapping[str, Any]]] | None


def add_arguments(
    parser: argparse.ArgumentParser, default_level: str, level_help: str,
    providers_help: str = "onnxruntime execution providers, in priority order (default cpu)",
) -> None:
    """Declare the runtime options; ``level_help``: what the command's ``default_level`` means."""
    group = parser.add_argument_group("runtime (onnxruntime session)")
    group.add_argument(
        "--providers", metavar="EP[,EP...]",
        help=f"{providers_help}; full names (OpenVINOExecutionProvider) or short ones (cpu, "
        "cuda, tensorrt, openvino, dml, coreml, qnn); onnxruntime runs on the CPU provider "
        "any node the first cannot take, and reports say so per node")
    group.add_argument(
        "--provider-option", action="append", default=[], metavar="EP:KEY=VALUE",
        help="an option of one provider, e.g. openvino:device_type=CPU; repeatable")
    group.add_argument(
        "--opt-level", choices=list(LEVELS), default=default_level,
        help=f"onnxruntime's graph optimization level (default {default_level}): {level_help}")
    group.add_argument(
        "--optimize", dest="opt_level", action="store_const", const="all",
        help="the same as --opt-level all")
    for kind in ("intra", "inter"):
        group.add_argument(
            f"--{kind}-op-threads", type=values.integer, default=0, metavar="N",
            help=f"onnxruntime {kind}-op threads (default 0: onnxruntime's own)")
    group.add_argument(
        "--execution-mode", choices=list(MODES), default="sequential",
        help="onnxruntime's execution mode (default sequential)")


def from_args(args: argparse.Namespace) -> RuntimeSpec:
    """The runtime the options describe (an :class:`OrtpoolError` names the flag and value)."""
    text = args.providers
    if text is not None and not any(p.strip() for p in text.split(",")):
        raise OrtpoolError(f"--providers {text!r} names no provider; name at least one (e.g. cpu)")
    listed: list[tuple[str, dict[str, str]]] = [
        (provider_name(p), {}) for p in (text or "cpu").split(",") if p.strip()
    ]
    named = dict(listed)
    for item in args.provider_option:
        ep, sep, pair = item.partition(":")
        key, eq, value = pair.partition("=")
        if not (sep and eq and key.strip()):
            raise OrtpoolError(f"--provider-option {item!r}: write EP:KEY=VALUE")
        if provider_name(ep) not in named:
            raise OrtpoolError(
                f"--provider-option {item!r}: {provider_name(ep)} is not among --providers "
                f"({', '.join(named)})")
        named[provider_name(ep)][key.strip()] = value.strip()
    return build(CLI, text or "cpu", listed, args.opt_level, args.intra_op_threads,
                 args.inter_op_threads, args.execution_mode)


def from_python(providers: Providers = None, opt_level: str = "all", intra_op_threads: int = 0,
                inter_op_threads: int = 0, execution_mode: str = "sequential") -> RuntimeSpec:
    """The runtime the keywords describe, as :func:`from_args` reads the flags."""
    if providers is None:
        providers = "cpu"
    items = providers.split(",") if isinstance(providers, str) else providers
    if not isinstance(items, Sequence) or isinstance(items, bytes):
        raise values.wrong("providers", providers, "a provider name or a list of them")
    listed = []
    for item in items:
        name, options = (item, {}) if isinstance(item, str) else (None, None)
        if isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[1], Mapping):
            name, options = item
        if not isinstance(name, str) or options is None:
            raise TypeError(f"providers={values.shown(providers)}: {values.shown(item)} is "
                            "neither a provider name nor a (name, {options}) pair")
        if name.strip():
            listed.append((provider_name(name), {str(k): str(v) for k, v in options.items()}))
    return build(PYTHON, providers, listed, opt_level, intra_op_threads, inter_op_threads,
                 execution_mode)


def build(style: str, given: Any, listed: list[tuple[str, dict[str, str]]], opt_level: Any,
          intra: Any, inter: Any, mode: Any) -> RuntimeSpec:
    """The spec, every value checked once (``given`` is ``providers`` as the caller wrote it)."""
    key = label("providers", style)
    if not listed:
        raise OrtpoolError(f"{key} {given!r} names no provider; name at least one (e.g. cpu)")
    names = [name for name, _ in listed]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise OrtpoolError(f"{key} {given!r} names {twice} twice")
    spec = RuntimeSpec(
        providers=tuple(Provider(name, tuple(options.items())) for name, options in listed),
        level=values.choice(label("opt_level", style), opt_level, LEVELS),
        intra_op_threads=values.count(label("intra_op_threads", style), intra),
        inter_op_threads=values.count(label("inter_op_threads", style), inter),
        mode=values.choice(label("execution_mode", style), mode, MODES))
    return spec.check(lambda key: label(key, style))
