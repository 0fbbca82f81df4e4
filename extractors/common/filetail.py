"""Local log files named by glob patterns, tailed line by line with durable cursors.

For logs a service appends to and rotates by itself: HiveServer2's log4j appender (the file
renamed to `<name>.1`, or `<name>.<date>`, and a new one opened) and impalad's lineage logger (a
new `impala_lineage_log_1.0-<ms>` every N queries, the oldest deleted). A file's cursor is keyed
by its directory and inode, not its name (`key_by="inode"`), so a renamed file goes on from
where it was read and is never read twice; a pattern that also matches the rotated names reads
the rest a rename left unread. A writer that never renames (impalad) keys by path
(`key_by="path"`): a new file reusing a deleted file's inode is then never taken for it. Files
compressed by a rollover (`.gz`, ...) are not read: their lines were read while the file was live.

Lines come from extractors.common.lines (partial last lines held back until complete, overlong
lines skipped with their offset); cursors persist through extractors.common.cursors once the
caller's records are in Solr.
"""

from __future__ import annotations

import dataclasses
import glob
import os
from collections.abc import Iterable, Iterator
from typing import Literal

from navd.extractors.common.cursors import CursorBook, CursorStore
from navd.extractors.common.lines import Line, LogReader
from navd.extractors.common.tailing import FileStatus, LocalFileSystem
from navd.logs import get_logger

#: suffixes of rolled-over copies: read while live, so never read again
ROLLED_SUFFIXES = (".gz", ".bz2", ".zip", ".zst", ".xz", ".lz4", ".snappy")


@dataclasses.dataclass(frozen=True, slots=True)
class GlobbedFile:
    """One file a pattern matched in one scan (a lines.TailedFile)."""

    key: str
    status: FileStatus
    codec: str = ""


def file_key(status: FileStatus, key_by: Literal["inode", "path"] = "inode") -> str:
    """`<directory>#<inode>`: what a rename within the directory keeps; or the path itself."""
    if key_by == "path":
        return status.path
    return f"{os.path.dirname(status.path)}#{status.file_id}"


class GlobTailer(CursorBook):
    """One pass over the files `patterns` match per `poll()`; `checkpoint()` after Solr flushed.

    A Line with empty text only carries a cursor (skipped input); pass every cursor of a complete
    record to `advance`. A caller assembling a record from several lines advances only at record
    boundaries: the next poll then reads the unfinished record again from its first line (the
    reader restarts from the cursor it is given), so the caller drops what it had gathered of a
    file whenever that file's lines start again.
    """

    def __init__(self, patterns: Iterable[str], store: CursorStore, *, logger: str, what: str,
                 max_line_bytes: int, key_by: Literal["inode", "path"] = "inode") -> None:
        self.patterns = tuple(patterns)
        self.key_by = key_by
        self.fs = LocalFileSystem()
        self.log = get_logger(logger)
        self.what = what
        self.reader = LogReader(self.fs, max_line_bytes, logger=logger, what=what)
        CursorBook.__init__(self, store)
        self._failures: set[tuple[str, int | None, str | None]] = set()

    @property
    def warnings(self) -> int:
        return self.reader.warnings.count

    def warn(self, path: str, kind: str, message: str, **fields: object) -> None:
        """A warning about one file, counted with the reader's (repeats of a kind summarised)."""
        self.reader.warnings.warn(path, kind, message, **fields)

    def discover(self) -> list[GlobbedFile]:
        """The regular files the patterns match now, oldest first (rotated files before the live
        one, impalad's files in the order written); a file two patterns match once."""
        found: dict[str, GlobbedFile] = {}
        for pattern in self.patterns:
            for path in glob.glob(os.path.expanduser(pattern)):
                if path.endswith(ROLLED_SUFFIXES):
                    continue
                status = self.fs.stat(path)
                if status is None or status.is_dir:
                    continue
                key = file_key(status, self.key_by)
                found.setdefault(key, GlobbedFile(key, status))
        return sorted(found.values(), key=lambda f: (f.status.mtime_ns, f.status.path))

    def poll(self) -> Iterator[tuple[GlobbedFile, Line]]:
        seen: set[str] = set()
        for file in self.discover():
            seen.add(file.key)
            yield from ((file, line) for line in self._read(file))
        self._drop_vanished(seen)

    def _read(self, file: GlobbedFile) -> Iterator[Line]:
        cursor = self.cursor(file.key)
        status = file.status
        if cursor is not None and (cursor.file_id != status.file_id or status.size < cursor.resume):
            # Truncated, or a new file under a reused inode: its lines are new.
            self.warn(status.path, "replaced", f"{self.what} truncated or replaced, reading it again",
                      previous_size=cursor.size, size=status.size)
            self.reader.forget(file.key)
            cursor = None
        if cursor is not None and cursor.size == status.size and cursor.mtime_ns == status.mtime_ns:
            return  # unchanged since last read
        try:
            # Never complete: a writer may append to any file a pattern matches.
            yield from self.reader.read(file, cursor, complete=False)
        except FileNotFoundError:
            pass  # deleted under us: dropped by _drop_vanished on the next pass
        except OSError as exc:
            failure = (file.key, exc.errno, exc.strerror)
            if failure not in self._failures:
                self._failures.add(failure)
                self.warn(status.path, "unreadable", f"{self.what} unreadable, will retry",
                          offset=cursor.resume if cursor else 0, reason=exc.strerror or str(exc))

    def _drop_vanished(self, seen: set[str]) -> None:
        for key in sorted(self._known() - seen):
            self.log.info(f"{self.what} disappeared (deleted or rotated away), cursor dropped", file=key)
            self._forget_cursor(key)
            self.reader.forget(key)


__all__ = ["GlobTailer", "GlobbedFile", "ROLLED_SUFFIXES", "file_key"]
