"""The timing loop: every variant of a case is timed in the same rounds, interleaved (a slow
spell of a shared machine then hits every variant of the round), the order rotating from round to
round; each sample times enough calls to last ``min_sample`` seconds (timer resolution). A loop
holds :func:`set_quiet`'s hold while it times: the process's way to keep its machine quiet.
"""

from __future__ import annotations

import contextlib
import dataclasses
import statistics
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

Hold = Callable[[], AbstractContextManager[Any]]

#: Held while a loop times: nothing by default; in validate's worker children, until no other
#: child validates a model (one validated beside the timing slows some samples, not others).
_quiet: Hold = contextlib.nullcontext


def set_quiet(hold: Hold | None) -> None:
    """What every timing loop of this process holds from now on (None: nothing)."""
    global _quiet
    _quiet = hold or contextlib.nullcontext


@dataclasses.dataclass(frozen=True)
class _Samples:
    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples) if self.samples else float("nan")

    def quantile(self, q: float) -> float:
        """The ``q`` quantile, linear between the two nearest samples (numpy's default)."""
        if not self.samples:
            return float("nan")
        ordered = sorted(self.samples)
        pos = q * (len(ordered) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(ordered) - 1)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)

    @property
    def spread(self) -> float:
        """Half the interquartile range: the "±" printed next to the median."""
        return (self.quantile(0.75) - self.quantile(0.25)) / 2


@dataclasses.dataclass(frozen=True)
class Stats(_Samples):
    """Per-call times in seconds over the samples of one variant."""

    calls_per_sample: int

    def as_dict(self) -> dict[str, float | int]:
        return {"median_s": self.median, "p25_s": self.quantile(0.25), "p75_s": self.quantile(0.75),
                "min_s": min(self.samples), "max_s": max(self.samples),
                "samples": len(self.samples), "calls_per_sample": self.calls_per_sample}


def calls_for(fn: Callable[[], object], min_sample: float) -> int:
    """How many back-to-back calls of ``fn`` last at least ``min_sample`` seconds."""
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_sample or number >= 1 << 20:
            return number
        # Aim a little past the target, at most 10x per step.
        number = max(number + 1,
                     min(number * 10, int(number * min_sample * 1.2 / max(elapsed, 1e-9))))


def interleaved(variants: Mapping[str, Callable[[], object]], repeat: int,
                min_sample: float = 0.002, warmup: int = 2, warmup_time: float = 0.05,
                clock: Callable[[], float] = time.perf_counter) -> dict[str, Stats]:
    """Time every variant ``repeat`` times, one sample of each per round, rotating the order.

    ``clock``: wall time by default; ``time.thread_time`` counts only the calling thread's CPU
    time, steadier on a shared machine for a call that runs on that thread alone (an
    onnxruntime session with one intra-op thread)."""
    with _quiet():
        names = list(variants)
        for name in names:
            # Warm up for a while, not a fixed count: the first calls pay page faults on fresh
            # buffers and lazy initialisation, for large tensors for tens of milliseconds.
            start = time.perf_counter()
            done = 0
            while done < warmup or time.perf_counter() - start < warmup_time:
                variants[name]()
                done += 1
        number: dict[str, int] = {}
        for name in names:
            # a control is the same callable as its original: one count for both, calibrated once
            same = next((number[n] for n in number if variants[n] is variants[name]), None)
            number[name] = same or calls_for(variants[name], min_sample)
        samples: dict[str, list[float]] = {name: [] for name in names}
        for r in range(repeat):
            shift = r % len(names)
            for name in names[shift:] + names[:shift]:
                fn, n = variants[name], number[name]
                start = clock()
                for _ in range(n):
                    fn()
                samples[name].append((clock() - start) / n)
        return {name: Stats(tuple(samples[name]), number[name]) for name in names}


@dataclasses.dataclass(frozen=True)
class Ratio(_Samples):
    """One variant's time over another's, round by round: both sampled in the same rounds
    (:func:`interleaved`), so a slow spell moves both and leaves the ratio."""

    @classmethod
    def of(cls, numerator: Stats, denominator: Stats) -> Ratio:
        pairs = zip(numerator.samples, denominator.samples, strict=True)
        return cls(tuple(n / d for n, d in pairs if d > 0))

    @property
    def low(self) -> float:
        return self.quantile(0.25)

    @property
    def high(self) -> float:
        return self.quantile(0.75)

    def as_dict(self) -> dict[str, float | int | None]:
        return {"median": self.median, "p25": self.low if self.samples else None,
                "p75": self.high if self.samples else None, "rounds": len(self.samples)}
