"""Progress of a long command on a terminal: counts and rate, redrawn in place on stderr.

Nothing is printed when stderr is not a terminal (scripts, cron, systemd): their output stays
the summary line alone.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO


class Progress:
    """`with Progress("hdfs", lambda: writer.total):` redraws `hdfs: 12,345 records (1,234/s)`."""

    def __init__(self, label: str, count: Callable[[], int], *, unit: str = "records",
                 stream: TextIO | None = None, interval: float = 0.5, enabled: bool = True) -> None:
        self.label = label
        self.count = count
        self.unit = unit
        self.stream = sys.stderr if stream is None else stream
        self.interval = interval
        self.enabled = enabled and self.stream.isatty()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = 0.0

    def line(self) -> str:
        count = self.count()
        elapsed = max(time.monotonic() - self._started, 1e-6)
        return f"{self.label}: {count:,} {self.unit} ({count / elapsed:,.0f}/s, {elapsed:,.0f}s)"

    def _draw(self) -> None:
        while not self._done.wait(self.interval):
            self.stream.write("\r" + self.line() + "\033[K")
            self.stream.flush()

    def __enter__(self) -> Progress:
        self._started = time.monotonic()
        if self.enabled:
            self._thread = threading.Thread(target=self._draw, name="progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._thread is None:
            return
        self._done.set()
        self._thread.join()
        self.stream.write("\r" + self.line() + "\033[K\n")
        self.stream.flush()
