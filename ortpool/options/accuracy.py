"""``--accuracy-agree-factor``, ``--accuracy-limit``, ``--half-ulps``: ruling 17's thresholds,
one group for ``validate``, ``conformance`` and ``fix`` (a note ``validate`` reports is one
``fix`` leaves alone), with ``--atol``/``--rtol`` -> one :class:`AccuracyRule`."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from ortpool import values
from ortpool.errors import OrtpoolError
from ortpool.tolerances import ACCUMULATION, DEFAULT_RULE, AccuracyRule

_TYPES = sorted(set(ACCUMULATION.values()))


def add_arguments(parser: argparse.ArgumentParser, atol_help: str | None = None,
                  rtol_help: str | None = None) -> None:
    """The group on ``parser``, with ``--atol``/``--rtol`` first when their helps are given."""
    group = parser.add_argument_group(
        "tolerances: graph outputs, and the accuracy of averages and norms (ruling 17)",
        "a sum's error against the exact result, in units of u*mean|x| (u: the unit roundoff "
        "of its accumulation type), is accuracy, not semantics: within the agree band it "
        "agrees, up to the limit it agrees with an accuracy note (exit code unchanged, fix "
        "leaves it), beyond it differs (exit 1, fix mends it)")
    for flag, text in (("--atol", atol_help), ("--rtol", rtol_help)):
        if text is not None:
            group.add_argument(flag, type=values.real, metavar="TOL", help=text)
    group.add_argument(
        "--accuracy-agree-factor", type=values.real, default=DEFAULT_RULE.agree_factor, metavar="F",
        help="a sum agrees within F times a pairwise sum's bound (log2 n + 1)*u*mean|x| "
        f"(default {DEFAULT_RULE.agree_factor:g})")
    defaults = ", ".join(f"{k} {v:g}" for k, v in DEFAULT_RULE.limits)
    group.add_argument(
        "--accuracy-limit", action="append", default=[], metavar="[TYPE:]FRACTION",
        help="beyond the agree band, an accuracy note up to FRACTION of mean|x|, beyond it a "
        f"difference; TYPE is the accumulation type ({', '.join(_TYPES)}; float16/bfloat16 "
        f"accumulate in float), none: every type; repeatable (default {defaults}; 0 counts "
        "every error beyond the agree band)")
    group.add_argument(
        "--half-ulps", type=values.real, default=DEFAULT_RULE.half_ulps, metavar="N",
        help="float16/bfloat16 sums (float32 arithmetic, rounded once) agree within N ulp of "
        f"the output type, beyond it differ (default {DEFAULT_RULE.half_ulps:g})")


def parse_limits(texts: list[str]) -> dict[str, float]:
    """``["1e-3", "double:1e-10"]`` -> ``{"float": 1e-3, "double": 1e-10}`` (later wins)."""
    limits: dict[str, float] = {}
    for text in texts:
        kind, sep, number = text.rpartition(":")
        try:
            value = values.amount("--accuracy-limit", values.real(number))
        except argparse.ArgumentTypeError:
            raise OrtpoolError(f"--accuracy-limit: {number!r} is not a number") from None
        if not sep:
            limits.update(dict.fromkeys(_TYPES, value))
        elif kind in _TYPES:
            limits[kind] = value
        else:
            raise OrtpoolError(f"--accuracy-limit {text}: {kind!r} is not an accumulation type "
                               f"({', '.join(_TYPES)})")
    return limits


def from_args(args: argparse.Namespace) -> AccuracyRule:
    """The rule the flags give, with ``--atol``/``--rtol`` where the command takes them."""
    factor = values.amount("--accuracy-agree-factor", args.accuracy_agree_factor)
    half = values.amount("--half-ulps", args.half_ulps)
    rule = AccuracyRule(factor, DEFAULT_RULE.limits, half)
    return from_python(getattr(args, "atol", None), getattr(args, "rtol", None),
                       rule.with_limits(parse_limits(args.accuracy_limit)), "--")


def from_python(atol: Any = None, rtol: Any = None, accuracy: Any = DEFAULT_RULE,
                prefix: str = "") -> AccuracyRule:
    """``accuracy`` (an :class:`AccuracyRule`) with ``atol``/``rtol`` (finite, >= 0) when given;
    ``prefix`` ``"--"`` names them as flags."""
    if not isinstance(accuracy, AccuracyRule):
        raise values.wrong("accuracy", accuracy, "an ortpool.tolerances.AccuracyRule")
    given = {name: values.amount(prefix + name, value)
             for name, value in (("atol", atol), ("rtol", rtol)) if value is not None}
    return dataclasses.replace(accuracy, **given)
