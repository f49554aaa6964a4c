"""``--runtime NAME``: the runtime ``validate`` and ``conformance`` judge, ``onnxruntime`` (in
this process) or one of :mod:`ortpool.runtimes` in a worker process, with ``--runtime-option``
and ``--case-timeout``. onnxruntime's own options are refused beside another runtime, and
``--case-timeout`` beside onnxruntime: a report must not seem to say they changed something.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ortpool import runtimes, values
from ortpool.errors import OrtpoolError
from ortpool.options import CLI, PYTHON, label

ONNXRUNTIME = "onnxruntime"
#: seconds one run may take in the worker (``--case-timeout``): the grid's cases take
#: milliseconds, a real network's node on OpenVINO a few seconds with its compile
DEFAULT_CASE_TIMEOUT = 60.0


@dataclasses.dataclass(frozen=True)
class Target:
    """The runtime judged: None is onnxruntime (the command's :class:`ortpool.ort.RuntimeSpec`),
    another runs in a worker process, ``case_timeout`` seconds a run."""

    runtime: runtimes.Runtime | None = None
    case_timeout: float = DEFAULT_CASE_TIMEOUT

    @property
    def name(self) -> str:
        return ONNXRUNTIME if self.runtime is None else self.runtime.name

    def describe(self) -> dict[str, Any] | None:
        """What the reports' settings say of the runtime, None for onnxruntime."""
        if self.runtime is None:
            return None
        return {**self.runtime.describe(), "case_timeout": self.case_timeout}


def names() -> list[str]:
    """Every name ``--runtime`` takes."""
    return [ONNXRUNTIME, *runtimes.names()]


def add_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """The group on ``parser``; ``what`` names what is judged ("each case")."""
    group = parser.add_argument_group("runtime judged")
    group.add_argument(
        "--runtime", default=ONNXRUNTIME, metavar="NAME",
        help=f"the runtime {what} runs on: {', '.join(names())} (default onnxruntime; "
        "openvino is OpenVINO's own runtime, reference the onnx reference evaluator; each but "
        "onnxruntime runs in a worker process a crash or a hang of it does not take down)")
    group.add_argument(
        "--runtime-option", action="append", default=[], metavar="KEY=VALUE",
        help="an option of --runtime, e.g. precision=f32 or device=CPU for openvino; repeatable")
    group.add_argument(
        "--case-timeout", type=values.real, default=DEFAULT_CASE_TIMEOUT, metavar="SECONDS",
        help=f"the most one run on --runtime may take (default {DEFAULT_CASE_TIMEOUT:g}); a "
        "run that takes longer is reported timed out and the worker restarted")


def from_args(args: argparse.Namespace, default_level: str) -> Target:
    """The target the flags name; ``default_level``: the command's --opt-level default."""
    options: dict[str, str] = {}
    for item in args.runtime_option:
        key, eq, value = item.partition("=")
        if not (eq and key.strip()):
            raise OrtpoolError(f"--runtime-option {item!r}: write KEY=VALUE")
        options[key.strip()] = value.strip()
    given = onnxruntime_set(default_level, args.providers, args.opt_level, args.intra_op_threads,
                            args.inter_op_threads, args.execution_mode, args.provider_option, CLI)
    return build(CLI, args.runtime, options, args.case_timeout, given)


def onnxruntime_set(default_level: str, providers: Any, opt_level: Any, intra: Any, inter: Any,
                    mode: Any, provider_options: Any = (), style: str = PYTHON) -> list[str]:
    """The onnxruntime options set to other than their defaults, as ``style`` spells them."""
    given = {"providers": providers is not None, "provider_options": bool(provider_options),
             "opt_level": opt_level != default_level, "intra_op_threads": intra != 0,
             "inter_op_threads": inter != 0, "execution_mode": mode != "sequential"}
    return [label(key, style) for key, set_ in given.items() if set_]


def from_python(runtime: Any = ONNXRUNTIME, runtime_options: Any = None,
                case_timeout: Any = DEFAULT_CASE_TIMEOUT,
                onnxruntime_given: Sequence[str] = ()) -> Target:
    """The target the keywords name: ``runtime`` a name (with ``runtime_options``) or a
    :class:`ortpool.runtimes.Runtime`; ``onnxruntime_given``: the onnxruntime keywords set."""
    if isinstance(runtime, runtimes.Runtime):
        if runtime_options is not None:
            raise OrtpoolError(
                f"runtime_options={values.shown(runtime_options)} with a Runtime object: give "
                "its options to ortpool.runtimes.get, or give runtime= a name")
        timeout = values.seconds("case_timeout", case_timeout)
        _refuse(PYTHON, runtime.name, onnxruntime_given)
        try:
            runtime.describe()  # as build() asks a runtime it makes
        except (TypeError, ValueError) as err:
            raise OrtpoolError(f"runtime={runtime!r}: {err}") from None
        return Target(runtime, timeout)
    options = {} if runtime_options is None else runtime_options
    if not (isinstance(options, Mapping) and all(isinstance(k, str) for k in options)):
        raise values.wrong("runtime_options", runtime_options, "a mapping of option names")
    return build(PYTHON, runtime, dict(options), case_timeout, onnxruntime_given)


def build(style: str, name: Any, options: dict[str, Any], case_timeout: Any,
          given: Sequence[str]) -> Target:
    """The target, every value checked once; ``given``: the onnxruntime options set."""
    key = label("runtime", style)
    if not isinstance(name, str):
        raise values.wrong(key, name, f"a runtime name ({', '.join(names())}) or a Runtime")
    named = f"{key}={name!r}" if style == PYTHON else f"{key} {name!r}"
    spelled = name.strip().lower()
    if spelled not in names():
        raise OrtpoolError(f"{named} is not a runtime ortpool knows: {', '.join(names())}")
    timeout = values.seconds(label("case_timeout", style), case_timeout)
    if spelled == ONNXRUNTIME:
        if timeout != DEFAULT_CASE_TIMEOUT:  # a report must not seem to say it limited a run
            raise OrtpoolError(
                f"{label('case_timeout', style)}={case_timeout} limits a run of another "
                f"{label('runtime', style)} in its worker process; onnxruntime runs in this "
                "process, where it would do nothing (leave it out)")
        if options:
            shown = values.shown(options) if style == PYTHON else " ".join(
                f"{k}={v}" for k, v in options.items())
            raise OrtpoolError(
                f"{label('runtime_options', style)} {shown}: onnxruntime's "
                f"options are {label('providers', style)}, {label('opt_level', style)} and the "
                "threads")
        return Target(None, timeout)
    _refuse(style, spelled, given)
    hint = runtimes.install_hint(spelled)
    if hint is not None:
        raise OrtpoolError(f"{named}: {spelled} is not installed here: {hint}")
    try:
        judged = runtimes.get(spelled, **options)
        # what the reports say of it, asked now: a device that is not there is refused before
        # any model runs (it failed every model, then the report's settings with a traceback)
        judged.describe()
    except (TypeError, ValueError) as err:  # an option it does not take, a bad value
        raise OrtpoolError(f"{label('runtime_options', style)}: {err}") from None
    return Target(judged, timeout)


def _refuse(style: str, name: str, given: Sequence[str]) -> None:
    if given:
        raise OrtpoolError(
            f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} onnxruntime's; "
            f"{label('runtime', style)} {name} takes {label('runtime_options', style)} and "
            f"{label('case_timeout', style)} (leave {'it' if len(given) == 1 else 'them'} out)")
