"""Spark event-log files: discovery in a directory, incremental line reading, durable cursors.

Layouts Spark 2.x-4.x writes into `spark.eventLog.dir`:

- single file: `<appId>[.<codec>][.inprogress]`; `.inprogress` is renamed away when the app
  ends (same inode, and the same file id on HDFS);
- rolling (`spark.eventLog.rolling.enabled`): a directory `eventlog_v2_<appId>` holding
  `events_<n>_<appId>[.<codec>]` (never renamed) and an empty marker
  `appstatus_<appId>[.inprogress]` that only tells whether the app is still running;
- `.compact` files: the history server's compactor rewrites `events_1..n` into
  `events_<n>_<appId>[.<codec>].compact` and deletes the originals.

The file system is behind `FileSystem` (local here; WebHDFS can implement the same four calls).
`LogReader` turns bytes into complete lines, each with the cursor just after it; `CursorStore`
persists cursors. The caller commits a cursor only after the records from its lines are in Solr,
so after a crash it resumes at the last committed line: nothing lost, nothing duplicated.
`EventLogTailer` ties the three together for the poll loop.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Literal, Protocol

from navd.extractors.spark.codecs import CODECS, CorruptFrame, Decoder, Piece, make_decoder
from navd.errors import NavdError
from navd.logs import get_logger

log = get_logger("navd.extractor.spark")

# Spark has no limit; its biggest events (SQL plans) stay far below this. A longer line is
# damage or a runaway plan, and holding it whole would cost that much memory per file.
DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024
READ_SIZE = 1024 * 1024
IN_PROGRESS = ".inprogress"
COMPACT = ".compact"
ROLLING_DIR_PREFIX = "eventlog_v2_"
_EVENTS_FILE = re.compile(r"events_(\d+)_(.+)")
_APPSTATUS = "appstatus_"


class StateError(NavdError):
    """The cursor state file cannot be read or written."""


# --- file system -----------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class FileStatus:
    path: str
    name: str
    is_dir: bool
    size: int
    mtime_ns: int
    #: what survives a rename: the inode locally, the file id on HDFS
    file_id: str


class FileSystem(Protocol):
    """The four calls the reader needs; a WebHDFS client implements the same.

    `sizes_lag_while_writing`: the size a listing reports for a file still being written may be
    behind what can be read (HDFS: the NameNode learns a block's length only when the block is
    complete, while readers already see the writer's hflushed bytes). The reader then reads an
    unfinished log until `read` returns nothing instead of stopping at the listed size.
    """

    sizes_lag_while_writing: bool

    def list_dir(self, path: str) -> list[FileStatus]:
        """Entries of a directory; raises FileNotFoundError when it is gone."""
        ...

    def stat(self, path: str) -> FileStatus | None:
        """None when the path does not exist."""
        ...

    def read(self, path: str, offset: int, length: int) -> bytes:
        """Up to `length` bytes from `offset`; raises FileNotFoundError when it is gone."""
        ...

    def join(self, directory: str, name: str) -> str:
        ...


class LocalFileSystem:
    sizes_lag_while_writing = False

    def list_dir(self, path: str) -> list[FileStatus]:
        out = []
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    st = entry.stat()
                except FileNotFoundError:  # removed between listing and stat
                    continue
                out.append(_status(entry.path, entry.name, st))
        return out

    def stat(self, path: str) -> FileStatus | None:
        try:
            return _status(path, os.path.basename(path), os.stat(path))
        except FileNotFoundError:
            return None

    def read(self, path: str, offset: int, length: int) -> bytes:
        with open(path, "rb") as fh:
            fh.seek(offset)
            return fh.read(length)

    def join(self, directory: str, name: str) -> str:
        return os.path.join(directory, name)


def _status(path: str, name: str, st: os.stat_result) -> FileStatus:
    # The inode alone: cursors are keyed by path already, and st_dev of network and overlay
    # file systems can change across reboots, which would make every log look replaced.
    return FileStatus(path, name, stat.S_ISDIR(st.st_mode), st.st_size, st.st_mtime_ns,
                      str(st.st_ino))


class RoutingFileSystem:
    """Local paths to one file system, `<scheme>://` URIs to the one registered for the scheme."""

    def __init__(self, local: FileSystem, by_scheme: Mapping[str, FileSystem]) -> None:
        self.local = local
        self.by_scheme = dict(by_scheme)
        self.sizes_lag_while_writing = any(fs.sizes_lag_while_writing for fs in self.by_scheme.values())

    def lags(self, path: str) -> bool:
        return self._fs(path).sizes_lag_while_writing

    def _fs(self, path: str) -> FileSystem:
        scheme, sep, _ = path.partition("://")
        if not sep:
            return self.local
        try:
            return self.by_scheme[scheme]
        except KeyError:
            raise OSError(f"no file system for {scheme}:// URIs is configured") from None

    def list_dir(self, path: str) -> list[FileStatus]:
        return self._fs(path).list_dir(path)

    def stat(self, path: str) -> FileStatus | None:
        return self._fs(path).stat(path)

    def read(self, path: str, offset: int, length: int) -> bytes:
        return self._fs(path).read(path, offset, length)

    def join(self, directory: str, name: str) -> str:
        return self._fs(directory).join(directory, name)


def size_lags(fs: FileSystem, path: str) -> bool:
    """Whether a listed size of `path` may be behind its readable bytes while it is written."""
    if isinstance(fs, RoutingFileSystem):
        return fs.lags(path)
    return fs.sizes_lag_while_writing


# --- discovery (pure over listings) ----------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class LogName:
    """What a data file's name says."""

    app_id: str
    codec: str           # "" when uncompressed
    index: int           # rolling index; 0 for a single-file log
    compact: bool
    in_progress: bool    # the name ends with .inprogress (single files only)
    #: the name without .inprogress: stable across Spark's rename when the app ends
    stable_name: str


def parse_log_name(name: str, rolling: bool) -> LogName | None:
    """Parse a single-file log name, or (rolling) an `events_` file name; None for others."""
    if not name or name.startswith((".", "_")) or name.endswith(".crc") or name.startswith(_APPSTATUS):
        return None
    stable = name
    in_progress = stable.endswith(IN_PROGRESS)
    if in_progress:
        stable = stable[:-len(IN_PROGRESS)]
    base = stable
    compact = base.endswith(COMPACT)
    if compact:
        base = base[:-len(COMPACT)]
    codec = ""
    stem, dot, suffix = base.rpartition(".")
    if dot and suffix in CODECS:
        base, codec = stem, suffix
    index = 0
    if rolling:
        match = _EVENTS_FILE.fullmatch(base)
        if not match:
            return None
        index, base = int(match.group(1)), match.group(2)
    elif compact:
        return None  # only rolling logs are compacted
    if "." in base:
        # Spark app ids have no dots: this is a foreign file, or a codec this reader does not
        # know, which must not be read as text.
        return None
    if not base:
        return None
    return LogName(base, codec, index, compact, in_progress, stable)


@dataclasses.dataclass(frozen=True, slots=True)
class LogFile:
    """One data file of an event log, as discovered in one scan."""

    key: str             # directory + stable name: the cursor key
    status: FileStatus
    name: LogName


@dataclasses.dataclass(frozen=True, slots=True)
class EventLog:
    app_id: str
    layout: Literal["single", "rolling"]
    path: str
    complete: bool
    #: data files in reading order (rolling index, a compact file before later events files)
    files: tuple[LogFile, ...]


def discover(fs: FileSystem, directory: str) -> list[EventLog]:
    """The event logs in `directory`, sorted by app id. Raises FileNotFoundError if it is gone."""
    logs = []
    for entry in fs.list_dir(directory):
        if entry.is_dir:
            if entry.name.startswith(ROLLING_DIR_PREFIX):
                try:
                    found = _rolling_log(fs, entry, fs.list_dir(entry.path))
                except FileNotFoundError:  # removed by the cleaner while we looked
                    continue
                if found is not None:
                    logs.append(found)
            continue
        name = parse_log_name(entry.name, rolling=False)
        if name is not None:
            key = fs.join(directory, name.stable_name)
            logs.append(EventLog(name.app_id, "single", entry.path, not name.in_progress,
                                 (LogFile(key, entry, name),)))
    return sorted(logs, key=lambda item: (item.app_id, item.path))


def _rolling_log(fs: FileSystem, folder: FileStatus, entries: Iterable[FileStatus]) -> EventLog | None:
    app_id = folder.name[len(ROLLING_DIR_PREFIX):]
    files, complete = [], False
    for entry in entries:
        if entry.is_dir:
            continue
        if entry.name.startswith(_APPSTATUS):
            # The marker is data-free: it only says whether the app still runs.
            complete = not entry.name.endswith(IN_PROGRESS)
            continue
        name = parse_log_name(entry.name, rolling=True)
        if name is not None and name.app_id == app_id:
            files.append(LogFile(fs.join(folder.path, name.stable_name), entry, name))
    if not files:
        return None
    # As Spark's history server: the newest compact file n stands for events 1..n (the
    # compactor deletes them after writing it), so older files are not read.
    compacted = max((f.name.index for f in files if f.name.compact), default=0)
    files = [f for f in files
             if f.name.index > compacted or (f.name.compact and f.name.index == compacted)]
    files.sort(key=lambda f: f.name.index)
    return EventLog(app_id, "rolling", folder.path, complete, tuple(files))


# --- cursors ---------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class LogCursor:
    """Where reading of one log file stands, enough to resume after a restart.

    Resume by decoding from compressed offset `resume` and dropping `skip` decompressed bytes
    (0 for uncompressed files and frame-aligned positions; see codecs). `size`, `mtime_ns` and
    `file_id` identify the file version read; `done` marks a complete file read to its end.
    """

    key: str
    path: str
    file_id: str
    size: int
    mtime_ns: int
    codec: str
    resume: int = 0
    skip: int = 0
    done: bool = False

    def to_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> LogCursor:
        fields = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in fields})  # type: ignore[arg-type]


class CursorStore:
    """Cursors of all files in one JSON file under the state dir, replaced atomically."""

    FILE_NAME = "spark-event-log-cursors.json"

    def __init__(self, state_dir: str | os.PathLike[str]) -> None:
        self.path = Path(state_dir) / self.FILE_NAME

    def load(self) -> dict[str, LogCursor]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return {c["key"]: LogCursor.from_json(c) for c in raw["cursors"]}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # Refuse rather than start over: starting over would index every log again.
            raise StateError(f"{self.path}: cannot read the event log cursors: {exc}") from None

    def commit(self, cursors: Mapping[str, LogCursor]) -> None:
        """Persist `cursors` (all of them: keys absent are dropped). Call after Solr flushed."""
        payload = json.dumps({"version": 1, "cursors": [c.to_json() for c in
                                                         sorted(cursors.values(), key=lambda c: c.key)]},
                             indent=1).encode()
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as fh:
                fh.write(payload)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
            # The rename itself must reach the disk before we tell the caller it is durable.
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            raise StateError(f"{self.path}: cannot write the event log cursors: {exc.strerror}") from None


# --- reading ---------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class Line:
    """One complete line (without its newline) and the cursor just after it."""

    text: str
    cursor: LogCursor


@dataclasses.dataclass(slots=True)
class _Live:
    """An open decoder kept between polls so a growing file is never decoded twice."""

    cursor: LogCursor | None  # the last cursor handed out; continuing is valid only from it
    decoder: Decoder
    read_to: int             # compressed bytes fed to the decoder
    pending: bytearray       # bytes of the unfinished last line
    pending_pos: tuple[int, int]
    discarding: bool         # dropping bytes up to the next newline (damage or an overlong line)
    resynced: bool = False   # decoding went on after a damaged frame: see _split


class LogReader:
    """Incremental reader of log files: complete lines after a cursor.

    Between calls it keeps each file's decoder and unfinished last line, used only when the
    caller continues from the last cursor it was given; any other cursor (a restart, a retry
    after a failed Solr write) is resumed from its resume point.
    """

    def __init__(self, fs: FileSystem, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                 read_size: int = READ_SIZE) -> None:
        self.fs = fs
        self.max_line_bytes = max_line_bytes
        self.read_size = read_size
        self._live: dict[str, _Live] = {}

    def forget(self, key: str) -> None:
        self._live.pop(key, None)

    def read(self, file: LogFile, cursor: LogCursor | None, complete: bool) -> Iterator[Line]:
        """Complete lines of `file` after `cursor` (from the start when None).

        `complete` says the writer has finished (no .inprogress, or the appstatus marker says
        so); then the last cursor is marked done, and a last line without a newline or an
        unfinished frame is reported and skipped. A growing file's partial last line is held
        back for the next call. A Line with empty text only carries a cursor (skipped input, the
        end of the file). Raises FileNotFoundError if the file is gone.
        """
        codec = file.name.codec
        live = self._live.pop(file.key, None)
        if live is None or live.cursor != cursor:
            start = cursor if cursor is not None and cursor.codec == codec else None
            resume, skip = (start.resume, start.skip) if start else (0, 0)
            live = _Live(start, make_decoder(codec, resume), resume, bytearray(), (resume, 0), False)
            to_skip = skip
        else:
            to_skip = 0
        ok = False
        try:
            yield from self._lines(file, live, to_skip, complete)
            ok = True
        finally:
            # A caller that stopped early got only some lines: the kept state would be ahead.
            if ok:
                self._live[file.key] = live

    def _lines(self, file: LogFile, live: _Live, to_skip: int, complete: bool) -> Iterator[Line]:
        path = file.status.path
        end = file.status.size
        # An unfinished file whose listed size lags: read on until the file system has no more.
        unbounded = not complete and size_lags(self.fs, path)
        while unbounded or live.read_to < end:
            want = self.read_size if unbounded else min(self.read_size, end - live.read_to)
            data = self.fs.read(path, live.read_to, want)
            if not data:
                break  # truncated under us (or nothing new yet); the next scan sees the new size
            live.read_to += len(data)
            pieces = live.decoder.feed(data)
            while True:
                try:
                    piece = next(pieces)
                except StopIteration:
                    break
                except CorruptFrame as exc:
                    log.warning("corrupt compressed frame skipped", file=path, offset=exc.offset,
                                codec=exc.codec, reason=exc.reason)
                    # The line that spans the damage cannot be completed: drop it, and what
                    # follows up to the next newline belongs to it.
                    live.pending.clear()
                    live.discarding = live.resynced = True
                    pieces = live.decoder.feed(b"")
                    continue
                if to_skip:
                    if to_skip >= len(piece.data):
                        to_skip -= len(piece.data)
                        live.pending_pos = piece.position(len(piece.data))
                        continue
                    piece = Piece(piece.data[to_skip:], piece.resume, piece.skip + to_skip,
                                  piece.end_resume, piece.end_skip)
                    live.pending_pos = piece.position(0)
                    to_skip = 0
                yield from self._split(file, live, piece)
        if complete and live.read_to >= end:
            if live.pending and not live.discarding:
                # Spark ends every event with a newline: a finished file without one was cut
                # short (a crashed writer, a truncated copy), and its last line is not whole.
                log.warning("finished event log ends in a partial line, skipped",
                            file=path, **_where(file, live.pending_pos))
            live.pending.clear()
            unfinished = live.decoder.incomplete()
            if unfinished is not None:
                log.warning("finished event log ends in an incomplete compressed frame, skipped",
                            file=path, offset=unfinished, codec=file.name.codec)
            if live.cursor is None or not live.cursor.done or live.cursor.size != file.status.size:
                live.cursor = cursor_for(file, live.read_to, 0, done=True)
                yield Line("", live.cursor)  # no text: only the final cursor

    def _split(self, file: LogFile, live: _Live, piece: Piece) -> Iterator[Line]:
        data, start = piece.data, 0
        if live.resynced and data:
            # After a damaged frame the data goes on mid-line, unless the next frame starts with
            # an event (Spark's frames often end at a flush, between events): keep that one.
            live.resynced = False
            if data.startswith(b'{"Event":'):
                live.discarding = False
        while start < len(data):
            nl = data.find(b"\n", start)
            if nl < 0:
                if not live.discarding:
                    if not live.pending:
                        live.pending_pos = piece.position(start)
                    live.pending += data[start:]
                    if len(live.pending) > self.max_line_bytes:
                        self._too_long(file, live)
                return
            text: str | None = None
            if live.discarding:
                live.discarding = False
            else:
                if live.pending:
                    live.pending += data[start:nl]
                    raw, pos = bytes(live.pending), live.pending_pos
                    live.pending.clear()
                else:
                    raw, pos = data[start:nl], piece.position(start)
                if len(raw) > self.max_line_bytes:
                    live.pending_pos = pos
                    self._too_long(file, live)
                    live.discarding = False
                else:
                    text = self._decode(file, raw, pos)
            # Every newline hands out a cursor, also after skipped input, so the caller can
            # commit past it.
            resume, skip = piece.position(nl + 1)
            live.cursor = cursor_for(file, resume, skip)
            yield Line(text or "", live.cursor)
            start = nl + 1

    def _too_long(self, file: LogFile, live: _Live) -> None:
        log.warning("event log line too long, skipped", file=file.status.path,
                    **_where(file, live.pending_pos), max_line_bytes=self.max_line_bytes)
        live.pending.clear()
        live.discarding = True

    def _decode(self, file: LogFile, raw: bytes, pos: tuple[int, int]) -> str | None:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            log.warning("event log line is not UTF-8, skipped", file=file.status.path,
                        **_where(file, pos), reason=str(exc))
            return None


def _where(file: LogFile, pos: tuple[int, int]) -> dict[str, int]:
    """Log fields locating a line: the byte offset, or for a compressed file the offset of the
    frame to decode from and the decompressed bytes into it."""
    if not file.name.codec:
        return {"offset": pos[0] + pos[1]}
    return {"offset": pos[0], "decompressed_skip": pos[1]}


def cursor_for(file: LogFile, resume: int, skip: int, done: bool = False) -> LogCursor:
    s = file.status
    if not file.name.codec:  # uncompressed: every byte is a resume point
        resume, skip = resume + skip, 0
    return LogCursor(file.key, s.path, s.file_id, s.size, s.mtime_ns, file.name.codec,
                     resume, skip, done)


# --- the poll loop ---------------------------------------------------------------------------

class EventLogTailer:
    """One pass over the event log directories per `poll()`; `checkpoint()` after Solr flushed.

    Lines are yielded file by file, rolling files in index order. A line with empty text only
    carries a cursor (a file finished, or input skipped); callers just pass it to `advance`.
    """

    def __init__(self, fs: FileSystem, directories: Iterable[str], store: CursorStore,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.fs = fs
        self.directories = tuple(directories)
        self.store = store
        self.reader = LogReader(fs, max_line_bytes)
        self.committed: dict[str, LogCursor] = store.load()
        self._pending: dict[str, LogCursor] = {}
        self._gone: set[str] = set()
        self._failures: set[tuple[str, int | None, str | None]] = set()

    def cursor(self, key: str) -> LogCursor | None:
        if key in self._gone:
            return self._pending.get(key)
        return self._pending.get(key, self.committed.get(key))

    def advance(self, cursor: LogCursor) -> None:
        """Record that the records of the lines up to `cursor` went to the index writer.

        Pass every line's cursor, empty lines included (they carry skipped input and ends of
        files); a poll continues cheaply only from the last cursor handed out.
        """
        self._pending[cursor.key] = cursor
        self._gone.discard(cursor.key)

    def checkpoint(self) -> None:
        """Persist every advanced cursor. Call only once the index writes are flushed."""
        if not self._pending and not self._gone:
            return  # an idle poll: no fsync every poll_seconds
        merged = {**self.committed, **self._pending}
        for key in self._gone:
            merged.pop(key, None)
        self.store.commit(merged)
        self.committed, self._pending = merged, {}
        self._gone.clear()

    def poll(self) -> Iterator[tuple[EventLog, Line]]:
        seen: set[str] = set()
        for directory in self.directories:
            try:
                logs = discover(self.fs, directory)
            except OSError as exc:
                # Keep its cursors: an unmounted or unreachable directory is not a deletion.
                log.warning("event log directory unreadable", directory=directory,
                            reason=exc.strerror or str(exc))
                seen.update(k for k in self._known() if k.startswith(directory.rstrip("/") + "/"))
                continue
            for event_log in logs:
                for file in event_log.files:
                    seen.add(file.key)
                    yield from ((event_log, line) for line in self._read(event_log, file))
        self._drop_vanished(seen)

    def _known(self) -> set[str]:
        return (set(self.committed) | set(self._pending)) - self._gone

    def _read(self, event_log: EventLog, file: LogFile) -> Iterator[Line]:
        cursor = self.cursor(file.key)
        status = file.status
        complete = event_log.complete
        lagging = not complete and size_lags(self.fs, status.path)
        if cursor is not None and (cursor.file_id != status.file_id
                                   or (status.size < cursor.resume and not lagging)):
            log.warning("event log replaced, reading it again", file=status.path,
                        previous_size=cursor.size, size=status.size)
            self.reader.forget(file.key)
            cursor = None
        if cursor is not None and cursor.size == status.size and cursor.mtime_ns == status.mtime_ns \
                and (cursor.done or not complete) and not lagging:
            return  # unchanged since last read
        if cursor is None and file.name.compact and self._has_earlier(event_log, file):
            # Its events were read from the files it replaces; reading it again duplicates.
            self.advance(cursor_for(file, status.size, 0, done=True))
            return
        try:
            yield from self.reader.read(file, cursor, complete)
        except FileNotFoundError:
            pass  # reported by _drop_vanished on the next pass
        except OSError as exc:
            # One unreadable file (permissions, an I/O error) must not stop the others; its
            # cursor stays, so it is read once it can be. Reported once per kind of failure.
            failure = (file.key, exc.errno, exc.strerror)
            if failure not in self._failures:
                self._failures.add(failure)
                log.warning("event log unreadable, will retry", file=status.path,
                            offset=cursor.resume if cursor else 0, reason=exc.strerror or str(exc))

    def _has_earlier(self, event_log: EventLog, compact: LogFile) -> bool:
        prefix = event_log.path.rstrip("/") + "/"
        for key in self._known():
            if not key.startswith(prefix):
                continue
            name = parse_log_name(key[len(prefix):], rolling=True)
            if name is not None and not name.compact and name.index <= compact.name.index:
                return True
        return False

    def _drop_vanished(self, seen: set[str]) -> None:
        for key in sorted(self._known() - seen):
            log.info("event log disappeared (deleted or compacted), cursor dropped", file=key)
            self._gone.add(key)
            self._pending.pop(key, None)
            self.reader.forget(key)
