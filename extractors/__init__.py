"""Extractors: one module per source, each behind the small `Extractor` interface.

An extractor is a client (I/O against WebHDFS, HiveServer2, the ResourceManager or event-log
files; injected, typed) plus a pure processor turning what the client returns into records.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Protocol

from navd.model import Record


class Extractor(Protocol):
    """What the scheduler and `navd extract` drive."""

    #: component name, also the logger suffix: navd.extractor.<name>
    name: str

    def extract(self, since: datetime | None) -> Iterator[Record]:
        """Yield the records changed since `since` (everything when None), streaming."""
        ...
