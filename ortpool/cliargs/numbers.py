"""The numbers the command line takes, one checker per kind, shared by every command.

Two steps, so every message keeps its usual form:

* the syntax, where argparse reads the value (``type=integer``/``type=real``): ASCII only. Python's
  ``int`` and ``float`` read every Unicode decimal digit (``int('٣')`` is 3, ``float('３')`` is
  3.0) and underscores (``int('1_0')`` is 10), so a value that only looks like a number to its
  reader would be taken; argparse answers a refusal with the command's usage and ``argument
  --seed: ...`` (exit 2);
* the range, when the command reads its options (:func:`count`, :func:`amount`,
  :func:`seconds`): an :class:`OrtpoolError` naming the option and the value, which the command
  line prints as its one line ``ortpool CMD: error: --seed=-1 must be ...`` (exit 2). Floats
  must be finite: ``nan`` compares false with every bound and ``inf`` overflows the waits it
  becomes.
"""

from __future__ import annotations

import argparse
import math
import re

from ortpool.errors import OrtpoolError

#: the longest time limit taken, in seconds (11.6 days): the waits a limit becomes take at most
#: about 2**31 ms (poll) or 9.2e9 s (threading) and overflow beyond them.
MAX_SECONDS = 1e6

_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_REAL = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)",
    re.ASCII | re.IGNORECASE,
)


def integer(text: str) -> int:
    """``type=`` of an integer option: ASCII digits with an optional sign."""
    if not _INTEGER.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer (ASCII digits 0-9)")
    return int(text)


def real(text: str) -> float:
    """``type=`` of a number option: a decimal number in ASCII (``inf`` and ``nan`` are read
    here and refused by the range check, which names the option)."""
    if not _REAL.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (ASCII, e.g. 1e-5)")
    return float(text)


def count(flag: str, value: int, low: int = 0, high: int | None = None, note: str = "") -> int:
    """``value`` of option ``flag`` if ``low <= value <= high``; ``note`` says what a special
    value means (``"0: one per core"``)."""
    if value < low or (high is not None and value > high):
        span = f">= {low}" if high is None else f"from {low} to {high}"
        raise OrtpoolError(f"{flag}={value} must be {span}{f' ({note})' if note else ''}")
    return value


def amount(
    flag: str, value: float, low: float = 0.0, high: float | None = None, *, above: bool = False
) -> float:
    """``value`` of option ``flag`` if finite, ``>= low`` (``> low`` with ``above``) and
    ``<= high``."""
    fits = value > low if above else value >= low
    if not (math.isfinite(value) and fits and (high is None or value <= high)):
        span = f"{'>' if above else '>='} {low:g}"
        span += f" and <= {high:g}" if high is not None else ""
        raise OrtpoolError(f"{flag}={value} must be a finite number {span}")
    return value


def seconds(flag: str, value: float, *, zero: str = "") -> float:
    """A time limit in seconds: finite, up to :data:`MAX_SECONDS`; > 0, or >= 0 when ``zero``
    says what 0 means (``"0: no limit"``)."""
    fits = value >= 0 if zero else value > 0
    if not (math.isfinite(value) and fits and value <= MAX_SECONDS):
        low = ">= 0" if zero else "> 0"
        note = f" ({zero})" if zero else ""
        raise OrtpoolError(
            f"{flag}={value} must be a finite number of seconds {low} and <= "
            f"{MAX_SECONDS:.0f}{note}"
        )
    return value
