"""Extractors: one module per source, each behind the small `Extractor` interface.

An extractor is a client (I/O against WebHDFS, HiveServer2, the ResourceManager or event-log
files; injected, typed) plus a pure processor turning what the client returns into records.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from navd.errors import RunStopped
from navd.model import Record

if TYPE_CHECKING:
    from navd.index.client import IndexWriter


class Extractor(Protocol):
    """What the scheduler and `navd extract` drive."""

    #: component name, also the logger suffix: navd.extractor.<name>
    name: str

    def extract(self, since: datetime | None) -> Iterator[Record]:
        """Yield the records changed since `since` (everything when None), streaming."""
        ...


def write_checkpointed(records: Iterable[Record], writer: IndexWriter, *, commit: Callable[[], None],
                       checkpoint_due: Callable[[], bool] = lambda: False,
                       stop: threading.Event | None = None) -> int:
    """Write `records`; at each due checkpoint and at the end flush the writer, then `commit` the
    extractor's state, in that order: state (positions, directory times) never runs ahead of what
    Solr holds, so a crash loses nothing. Returns the number of records written; raises if Solr
    did not take them (the state then stays at the last commit).

    `stop` set (navd is shutting down): a due checkpoint is still flushed and committed, so the
    work up to it is kept; then RunStopped is raised before the next record."""
    count = 0
    for record in records:
        writer.write(record)
        count += 1
        if checkpoint_due():
            writer.flush()
            commit()
        if stop is not None and stop.is_set():
            raise RunStopped("navd is stopping: run abandoned at the last checkpoint, the next run continues")
    writer.flush()
    commit()
    return count
