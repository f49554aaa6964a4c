"""The runtime options every command that runs a model shares (``validate``, ``fix``,
``conformance``, ``bench``), read into one :class:`ortpool.ort.runtime_spec.RuntimeSpec`:

``--providers EP[,EP...]`` (full names or short ones: ``openvino,cpu``), ``--provider-option
EP:KEY=VALUE`` (repeatable), ``--opt-level {disable,basic,extended,layout,all}`` (``--optimize``:
the same as ``--opt-level all``), ``--intra-op-threads``, ``--inter-op-threads``,
``--execution-mode``. Declaring them imports no onnxruntime; :func:`read` checks them against the
installed one (and says what to install when there is none).
"""

from __future__ import annotations

import argparse
import dataclasses

from ortpool.cliargs import numbers
from ortpool.errors import OrtpoolError
from ortpool.ort import LEVELS, MODES, RuntimeSpec, parse_providers, provider_name


def add_arguments(
    parser: argparse.ArgumentParser,
    default_level: str,
    level_help: str,
    providers_help: str = "onnxruntime execution providers, in priority order (default cpu)",
    threads: bool = True,
) -> None:
    """Declare the runtime options on ``parser``; ``default_level`` and ``level_help`` say what
    the command's optimization level means (validate judges nodes as written, fix proves at the
    level the model will run at). ``threads`` False leaves the thread options out (a command
    that sizes them itself)."""
    group = parser.add_argument_group("runtime (onnxruntime session)")
    group.add_argument(
        "--providers",
        metavar="EP[,EP...]",
        help=f"{providers_help}; full names (OpenVINOExecutionProvider) or short ones (cpu, "
        "cuda, tensorrt, openvino, dml, coreml, qnn); onnxruntime runs on the CPU provider "
        "any node the first cannot take, and reports say so per node",
    )
    group.add_argument(
        "--provider-option",
        action="append",
        default=[],
        metavar="EP:KEY=VALUE",
        help="an option of one provider, e.g. openvino:device_type=CPU; repeatable",
    )
    group.add_argument(
        "--opt-level",
        choices=list(LEVELS),
        default=default_level,
        help=f"onnxruntime's graph optimization level (default {default_level}): {level_help}",
    )
    group.add_argument(
        "--optimize",
        dest="opt_level",
        action="store_const",
        const="all",
        help="the same as --opt-level all",
    )
    if threads:
        group.add_argument(
            "--intra-op-threads",
            type=numbers.integer,
            default=0,
            metavar="N",
            help="onnxruntime intra-op threads (default 0: onnxruntime's own)",
        )
        group.add_argument(
            "--inter-op-threads",
            type=numbers.integer,
            default=0,
            metavar="N",
            help="onnxruntime inter-op threads (default 0: onnxruntime's own)",
        )
        group.add_argument(
            "--execution-mode",
            choices=list(MODES),
            default="sequential",
            help="onnxruntime's execution mode (default sequential)",
        )


def read(args: argparse.Namespace) -> RuntimeSpec:
    """The runtime the options describe, checked against the installed onnxruntime (an
    :class:`OrtpoolError` names the option, the value and what is available)."""
    if args.providers is not None and not any(p.strip() for p in args.providers.split(",")):
        raise OrtpoolError(
            f"--providers {args.providers!r} names no provider; name at least one (e.g. cpu)"
        )
    providers = parse_providers(args.providers)
    named = {p.name: i for i, p in enumerate(providers)}
    if len(named) < len(providers):
        twice = next(p.name for p in providers if [q.name for q in providers].count(p.name) > 1)
        raise OrtpoolError(f"--providers {args.providers!r} names {twice} twice")
    options: dict[str, dict[str, str]] = {}
    for text in args.provider_option:
        ep, sep, pair = text.partition(":")
        key, eq, value = pair.partition("=")
        if not (sep and eq and key.strip()):
            raise OrtpoolError(f"--provider-option {text!r}: write EP:KEY=VALUE")
        name = provider_name(ep)
        if name not in named:
            raise OrtpoolError(
                f"--provider-option {text!r}: {name} is not among --providers ({', '.join(named)})"
            )
        options.setdefault(name, {})[key.strip()] = value.strip()
    providers = tuple(
        dataclasses.replace(p, options=tuple(options.get(p.name, {}).items())) for p in providers
    )
    spec = RuntimeSpec(
        providers=providers,
        level=args.opt_level,
        intra_op_threads=getattr(args, "intra_op_threads", 0),
        inter_op_threads=getattr(args, "inter_op_threads", 0),
        mode=getattr(args, "execution_mode", "sequential"),
    )
    return spec.check()
