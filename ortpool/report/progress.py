"""A one-line progress bar on stderr, drawn only on a terminal and only for long runs."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from ortpool.report.text import safe, width

#: ``progress(done, total, label)``: what a long run reports as it goes
Progress = Callable[[int, int, str], None]


class ProgressBar:
    """``bar(done, total, label)`` redraws in place; ``close()`` erases the line. Nothing is
    drawn on a stream that is no terminal unless ``force``, nor in the first ``delay`` seconds."""

    def __init__(self, title: str, stream: TextIO | None = None, force: bool = False,
                 delay: float = 0.5, width: int = 30) -> None:
        self.title, self.width, self.stream = title, width, stream or sys.stderr
        self.enabled = force or bool(getattr(self.stream, "isatty", lambda: False)())
        self.delay, self.started, self.drawn = 0.0 if force else delay, time.monotonic(), False

    def __call__(self, done: int, total: int, label: str = "") -> None:
        if not self.enabled or time.monotonic() - self.started < self.delay or total <= 0:
            return
        filled = int(self.width * done / total)
        bar = "#" * filled + "-" * (self.width - filled)
        # a column short of the width: a wrapped line is not erased by a carriage return
        line = safe(f"{self.title} [{bar}] {done}/{total} {label}")[: width() - 1]
        self.stream.write(f"\r\x1b[K{line}")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        """Erase the line, so what is printed next starts on a clean line."""
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False
