"""``--accuracy-agree-factor``, ``--accuracy-limit``, ``--half-ulps``: ruling 17's thresholds
for averages and norms, one argument group for ``validate``, ``conformance`` and ``fix`` (a node
``validate`` calls an accuracy note is one ``fix`` leaves alone, under the same flags), with
``--atol``/``--rtol`` where a command takes them."""

from __future__ import annotations

import argparse

from ortpool.cliargs import numbers
from ortpool.errors import OrtpoolError
from ortpool.tolerances import ACCUMULATION, DEFAULT_RULE, AccuracyRule

_TYPES = sorted(set(ACCUMULATION.values()))


def add_arguments(
    parser: argparse.ArgumentParser, atol_help: str | None = None, rtol_help: str | None = None
) -> None:
    """The group on ``parser``; with ``atol_help`` and ``rtol_help``, ``--atol`` and ``--rtol``
    (what they mean for the command: ``validate`` compares graph outputs with them too) are
    declared first, beside the command's own options."""
    if atol_help is not None:
        parser.add_argument("--atol", type=numbers.real, help=atol_help)
    if rtol_help is not None:
        parser.add_argument("--rtol", type=numbers.real, help=rtol_help)
    group = parser.add_argument_group(
        "accuracy of averages and norms (ruling 17)",
        "a sum's error against the exact result, in units of u*mean|x| (u: the unit roundoff "
        "of its accumulation type), is accuracy, not semantics: within the agree band it "
        "agrees, up to the limit it agrees with an accuracy note (exit code unchanged, fix "
        "leaves it), beyond it differs (exit 1, fix mends it)",
    )
    group.add_argument(
        "--accuracy-agree-factor",
        type=numbers.real,
        default=DEFAULT_RULE.agree_factor,
        metavar="F",
        help="a sum agrees within F times a pairwise sum's bound (log2 n + 1)*u*mean|x| "
        f"(default {DEFAULT_RULE.agree_factor:g})",
    )
    defaults = ", ".join(f"{k} {v:g}" for k, v in DEFAULT_RULE.limits)
    group.add_argument(
        "--accuracy-limit",
        action="append",
        default=[],
        metavar="[TYPE:]FRACTION",
        help="beyond the agree band, an accuracy note up to FRACTION of mean|x|, beyond it a "
        f"difference; TYPE is the accumulation type ({', '.join(_TYPES)}; float16/bfloat16 "
        f"accumulate in float), none: every type; repeatable (default {defaults}; 0 counts "
        "every error beyond the agree band)",
    )
    group.add_argument(
        "--half-ulps",
        type=numbers.real,
        default=DEFAULT_RULE.half_ulps,
        metavar="N",
        help="float16/bfloat16 sums (float32 arithmetic, rounded once) agree within N ulp of "
        f"the output type, beyond it differ (default {DEFAULT_RULE.half_ulps:g})",
    )


def _number(flag: str, text: str) -> float:
    try:
        value = numbers.real(text)
    except argparse.ArgumentTypeError:
        raise OrtpoolError(f"{flag}: {text!r} is not a number") from None
    return numbers.amount(flag, value)


def parse_limits(values: list[str]) -> dict[str, float]:
    """``["1e-3", "double:1e-10"]`` -> ``{"float": 1e-3, "double": 1e-10}`` (later wins)."""
    limits: dict[str, float] = {}
    for text in values:
        kind, sep, number = text.rpartition(":")
        value = _number("--accuracy-limit", number)
        if not sep:
            limits.update(dict.fromkeys(_TYPES, value))
        elif kind in _TYPES:
            limits[kind] = value
        else:
            raise OrtpoolError(
                f"--accuracy-limit {text}: {kind!r} is not an accumulation type "
                f"({', '.join(_TYPES)})"
            )
    return limits


def rule_from(args: argparse.Namespace) -> AccuracyRule:
    """The :class:`AccuracyRule` the flags give (an :class:`OrtpoolError` for a bad value)."""
    factor = numbers.amount("--accuracy-agree-factor", args.accuracy_agree_factor)
    half = numbers.amount("--half-ulps", args.half_ulps)
    for name in ("atol", "rtol"):  # where the command takes them
        if getattr(args, name, None) is not None:
            numbers.amount(f"--{name}", getattr(args, name))
    return AccuracyRule(factor, DEFAULT_RULE.limits, half).with_limits(
        parse_limits(args.accuracy_limit)
    )
