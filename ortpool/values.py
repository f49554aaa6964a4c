"""The values every option takes, one checker per kind, for the shell and for Python alike: an
:class:`OrtpoolError` (a bad value) or a :class:`TypeError` (a wrong kind, from Python) naming
the option, in one line. On the command line the syntax is argparse's (``type=integer``,
``type=real``: ASCII only, since ``int`` reads every Unicode digit). Floats must be finite.
Below every layer, since the model layer checks its public functions' arguments with it too
(``model.files.save``).
"""

from __future__ import annotations

import argparse
import math
import numbers
import os
import re
import sys
from collections.abc import Iterable
from typing import Any

from ortpool.errors import OrtpoolError, shown

#: the longest time limit taken, in seconds (11.6 days): longer waits overflow poll's ms
MAX_SECONDS = 1e6

_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_REAL = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)",
    re.ASCII | re.IGNORECASE)


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


def wrong(label: str, value: Any, wanted: str) -> TypeError:
    """The error for a value of the wrong kind: ``seed='a' must be an integer, not str``."""
    return TypeError(f"{label}={shown(value)} must be {wanted}, not {type(value).__name__}")


def _number(label: str, value: Any, kind: type = numbers.Real, wanted: str = "a number") -> Any:
    # bool is an int to Python, but True for a count is a mistake, not 1
    if isinstance(value, bool) or not isinstance(value, kind):
        raise wrong(label, value, wanted)
    if isinstance(value, numbers.Integral) and abs(value) > sys.float_info.max:
        # float() overflows on it, and Python writes no int of over 4300 digits
        raise OrtpoolError(f"{label} is an integer of {int(value).bit_length()} bits, larger "
                           "than any option takes")
    return value


def count(label: str, value: Any, low: int = 0, high: int | None = None, note: str = "") -> int:
    """``value`` of option ``label``, an integer with ``low <= value <= high``; ``note`` says
    what a special value means (``"0: one per core"``)."""
    value = int(_number(label, value, numbers.Integral, "an integer"))
    if value < low or (high is not None and value > high):
        span = f">= {low}" if high is None else f"from {low} to {high}"
        raise OrtpoolError(f"{label}={value} must be {span}{f' ({note})' if note else ''}")
    return value


def amount(label: str, value: Any, low: float = 0.0, high: float | None = None) -> float:
    """``value`` of option ``label`` if a finite number ``>= low`` and ``<= high``."""
    number = float(_number(label, value))
    if not (math.isfinite(number) and number >= low and (high is None or number <= high)):
        span = f">= {low:g}" + (f" and <= {high:g}" if high is not None else "")
        raise OrtpoolError(f"{label}={value} must be a finite number {span}")
    return number


def seconds(label: str, value: Any, *, zero: str = "") -> float:
    """A time limit in seconds: finite, up to :data:`MAX_SECONDS`; > 0, or >= 0 when ``zero``
    says what 0 means (``"0: no limit"``)."""
    number = float(_number(label, value))
    fits = number >= 0 if zero else number > 0
    if not (math.isfinite(number) and fits and number <= MAX_SECONDS):
        low = ">= 0" if zero else "> 0"
        note = f" ({zero})" if zero else ""
        raise OrtpoolError(f"{label}={value} must be a finite number of seconds {low} and <= "
                           f"{MAX_SECONDS:.0f}{note}")
    return number


def flag(label: str, value: Any) -> bool:
    """A yes-or-no option: ``True`` or ``False`` (numpy's too), never a string: ``'false'`` is a
    true value to Python."""
    if type(value).__name__ not in ("bool", "bool_"):
        raise wrong(label, value, "True or False")
    return bool(value)


def choice(label: str, value: Any, choices: Iterable[str]) -> str:
    """One of ``choices`` (a string)."""
    known = list(choices)
    if not isinstance(value, str):
        raise wrong(label, value, f"one of {', '.join(map(repr, known))}")
    if value not in known:
        raise OrtpoolError(f"{label}={value!r} must be one of {', '.join(known)}")
    return value


def path(label: str, value: Any) -> str:
    """A file's path (``str`` or ``os.PathLike``), not empty."""
    if not isinstance(value, (str, os.PathLike)):
        raise wrong(label, value, "a path (str or os.PathLike)")
    text = os.fspath(value)
    if not isinstance(text, str) or not text:
        raise OrtpoolError(f"{label}={shown(value)} must name a file")
    if "\0" in text:  # the system's calls end a name there (Python: "embedded null byte")
        raise OrtpoolError(f"{label}={shown(value)} holds a NUL character, which no file name "
                           "can hold")
    return text


def names(label: str, value: Any, empty: bool = False) -> tuple[str, ...] | None:
    """Names given as one string or a list of strings (None: not given); a string is one name,
    never its characters. None at all (``[]``, ``''``: an empty shell variable) is refused
    unless ``empty`` (``exclude=[]``): it selected nothing, or every one."""
    if value is None:
        return None
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, Iterable) or isinstance(items, (bytes, dict)):
        raise wrong(label, value, "a name or a list of names")
    items = list(items)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(
                f"{label}={shown(value)} must hold names (str), not {type(item).__name__}")
    if not (empty or any(items)):
        raise OrtpoolError(f"{label}={shown(value)} names nothing; leave it out for every one")
    return tuple(items)


def integers(label: str, value: Any) -> list[int] | None:
    """Integers given as one or a list (None: not given)."""
    if value is None:
        return None
    items = [value] if isinstance(value, numbers.Integral) else value
    if not isinstance(items, Iterable) or isinstance(items, (str, bytes, dict)):
        raise wrong(label, value, "an integer or a list of integers")
    return [count(label, item, 0) for item in items]
