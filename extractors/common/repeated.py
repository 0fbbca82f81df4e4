"""Warnings of a tailer about its files: every one counted, the repeats of one kind summarised.

A damaged or foreign file can hold thousands of bad lines; one warning line each buries the
log and hides the one that matters. So per file and kind (a line that is not UTF-8, a line too
long, ...) the first `first` warnings are logged as they come, the rest only counted, and
`summarise` logs one count line for them. Every warning, logged or not, counts in `count`: the
run's warnings in its summary say how many problems there were, not how many lines were shown.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from navd.logs import get_logger

#: warnings of one kind about one file logged one by one before the rest are only counted
FIRST_LOGGED = 5


class RepeatedWarnings:
    """The warnings one tailer gives about its files, under its logger."""

    def __init__(self, logger: str, first: int = FIRST_LOGGED) -> None:
        self.log = get_logger(logger)
        self.first = first
        #: every warning given, logged one by one or summarised
        self.count = 0
        self._given: Counter[tuple[str, str]] = Counter()
        self._summarised: Counter[tuple[str, str]] = Counter()
        self._messages: dict[tuple[str, str], str] = {}

    def warn(self, file: str, kind: str, message: str, *, field: str = "file", **fields: Any) -> None:
        """Count a warning of `kind` about `file` (logged as `field`: a directory is named as
        one); log it if it is among the first of its kind."""
        self.count += 1
        key = (file, kind)
        self._given[key] += 1
        if self._given[key] <= self.first:
            self.log.warning(message, **{field: file}, **fields)
        self._messages[key] = message

    def summarise(self, file: str) -> None:
        """One line per kind for the warnings about `file` counted but not logged since the last
        summary (call when done with the file for now, e.g. at the end of a read)."""
        for key in sorted(k for k in self._given if k[0] == file):
            unlogged = self._given[key] - self.first - self._summarised[key]
            if unlogged > 0:
                self._summarised[key] += unlogged
                self.log.warning(f"{unlogged} more warnings like this one, not logged one by one",
                                 file=file, kind=key[1], like=self._messages[key], count=unlogged)
