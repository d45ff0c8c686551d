"""A progress bar on stderr for long commands (a line per step when not a terminal)."""

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


class ProgressBar:
    """``bar(done, total, message)``: redraws one line on a terminal, at most 10 times a
    second; elsewhere (a log file, a pipe) writes a line at most every 10 seconds, and
    always the last step."""

    WIDTH = 30

    def __init__(self, stream: TextIO | None = None, unit: str = ""):
        self.stream = stream or sys.stderr
        self.unit = unit
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = 0.1 if self.tty else 10.0
        self.started = time.monotonic()
        self.last = -1e9
        self.drawn = False

    def __call__(self, done: int, total: int | None = None, message: str = "") -> None:
        now = time.monotonic()
        finished = total is not None and done >= total
        if not finished and now - self.last < self.interval:
            return
        self.last = now
        self.stream.write(self._line(done, total, message, now) + ("\r" if self.tty else "\n"))
        self.stream.flush()
        self.drawn = True

    def _line(self, done: int, total: int | None, message: str, now: float) -> str:
        unit = f" {self.unit}" if self.unit else ""
        elapsed = now - self.started
        if not total:
            return f"{message}: {done:,}{unit} ({elapsed:.0f} s)"
        share = min(1.0, done / total)
        filled = int(round(share * self.WIDTH))
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        return f"{message} [{bar}] {share:6.1%} {done:,}/{total:,}{unit} ({elapsed:.0f} s)"

    def close(self) -> None:
        if self.drawn and self.tty:
            self.stream.write("\n")
            self.stream.flush()


@contextmanager
def progress_bar(command, unit: str, quiet: bool) -> Iterator[ProgressBar | None]:
    """A command's progress bar on its stderr (``None`` with ``--quiet``), its line ended
    however the block ends."""
    bar = None if quiet else ProgressBar(command.stderr._out, unit=unit)
    try:
        yield bar
    finally:
        if bar is not None:
            bar.close()
