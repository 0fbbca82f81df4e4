"""The durable spool of the OpenLineage intake: events accepted (202) while Solr is down.

One file per event, `<sequence>.json` (20 digits, so names sort in arrival order), written with
navd.state.write_atomically (fsync'd file, linked into place, fsync'd directory): after a crash a
file is there whole or not at all, and a 202 is answered only once it is. A name already taken is
never overwritten: the next number is tried (one intake per state directory holds the spool, see
navd.openlineage.intake; this keeps an event even if another process writes here). Files are
removed only after
Solr acknowledged the event's documents, so a crash in between replays the event, which
overwrites the same documents (navd.openlineage.mapping: identities from the event's names and
runId). A file that cannot be read back (a disk fault) is moved to `rejected/`, never dropped.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from navd.state import private_dir, write_atomically

SUFFIX = ".json"
REJECTED = "rejected"


class Spool:
    """Events waiting for Solr, oldest first. Thread-safe."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self._next: int | None = None

    def _ensure(self) -> None:
        if self._next is None:
            private_dir(self.directory)  # its missing parents 0700 too; an existing spool tightened
            numbers = [int(p.name[:-len(SUFFIX)]) for p in self._files()]
            self._next = max(numbers, default=0) + 1

    def _files(self) -> list[Path]:
        return sorted(p for p in self.directory.glob(f"*{SUFFIX}") if _spooled(p.name))

    def put(self, body: bytes) -> Path:
        """Store one event durably; its path once it is on disk. OSError when it cannot be."""
        with self._lock:
            self._ensure()
            assert self._next is not None
            while True:
                path = self.directory / f"{self._next:020d}{SUFFIX}"
                self._next += 1
                try:
                    write_atomically(path, body, overwrite=False)
                except FileExistsError:
                    continue
                return path

    def pending(self) -> list[Path]:
        """The spooled events, oldest first."""
        with self._lock:
            self._ensure()
            return self._files()

    def holds_events(self) -> bool:
        """Whether any event is spooled: what the intake asks before each group it writes, so
        the first spooled file ends the look (the sorted listing of `pending`, with a stat of
        each entry, was a twentieth of the intake's CPU time)."""
        with self._lock:
            self._ensure()
            with os.scandir(self.directory) as entries:
                return any(_spooled(entry.name) for entry in entries)

    def __len__(self) -> int:
        return len(self.pending())

    def remove(self, paths: list[Path]) -> None:
        """Events Solr holds now: gone from the spool, durably (one directory fsync for all)."""
        for path in paths:
            path.unlink(missing_ok=True)
        if paths:
            _fsync_directory(self.directory)

    def reject(self, path: Path) -> Path:
        """An event that cannot be read back: kept aside in `rejected/` for an admin to look at."""
        target_dir = self.directory / REJECTED
        private_dir(target_dir)
        target = target_dir / path.name
        copy = 1
        while True:  # numbers start again at 1 once the spool empties: keep an earlier one set aside
            try:
                os.link(path, target)
                break
            except FileExistsError:
                copy += 1
                target = target_dir / f"{path.stem}.{copy}{SUFFIX}"
        _fsync_directory(target_dir)  # kept aside on disk before it leaves the spool
        path.unlink()
        _fsync_directory(self.directory)
        return target


def _spooled(name: str) -> bool:
    """Whether a file name is a spooled event's (`<sequence>.json`)."""
    return name.endswith(SUFFIX) and name[:-len(SUFFIX)].isdigit() and not name.startswith(".")


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
