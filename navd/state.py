"""navd's ways to keep an extractor's state between runs: a SQLite file in its state dir, or,
for a small document replaced whole (log cursors, a watermark), one file written atomically.

Extractors write their state in the same transaction as their progress and commit it only
after the index writer has flushed the records that progress stands for; a crash rolls back to
the last commit, so state and index never disagree in the direction that loses data.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path


class SqliteState:
    """A SQLite file `state_dir/FILE_NAME`, its schema created and migrated on open."""

    FILE_NAME = "state.sqlite"
    SCHEMA = ""
    #: (table, column, type) added after state files were first written: added when missing.
    ADDED_COLUMNS: Iterable[tuple[str, str, str]] = ()

    def __init__(self, state_dir: Path) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self.path = state_dir / self.FILE_NAME
        # Only the extractor's consumer thread uses it; check_same_thread off lets the daemon
        # hand the extractor from its scheduler thread to a worker.
        self.db = sqlite3.connect(self.path, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(self.SCHEMA)
        for table, column, kind in self.ADDED_COLUMNS:
            if column not in {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}:
                self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        self.db.commit()

    def commit(self) -> None:
        self.db.commit()

    def rollback(self) -> None:
        self.db.rollback()

    def close(self) -> None:
        self.db.close()


def write_atomically(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that after a crash it holds the old or the new bytes, whole.

    Written to a temporary file beside it, fsynced, renamed over it, then the directory fsynced:
    the rename itself must reach the disk before the caller is told the state is durable.
    Raises OSError (the caller names what the file is for)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
