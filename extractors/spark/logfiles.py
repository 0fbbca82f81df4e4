"""Spark event-log files: discovery in a directory, incremental line reading, durable cursors.

Layouts Spark 2.x-4.x writes into `spark.eventLog.dir`:

- single file: `<appId>[.<codec>][.inprogress]`; `.inprogress` is renamed away when the app
  ends (same inode, and the same file id on HDFS);
- rolling (`spark.eventLog.rolling.enabled`): a directory `eventlog_v2_<appId>` holding
  `events_<n>_<appId>[.<codec>]` (never renamed) and an empty marker
  `appstatus_<appId>[.inprogress]` that only tells whether the app is still running;
- `.compact` files: the history server's compactor rewrites `events_1..n` into
  `events_<n>_<appId>[.<codec>].compact` and deletes the originals.

Only these rules are Spark's; the generic tailing is in navd.extractors.common: the file
system seam (tailing: local, WebHDFS), codecs, the line reader (lines) and the durable cursors
(cursors). The caller commits a cursor only after the records from its lines are in Solr, so
after a crash it resumes at the last committed line: nothing lost, nothing duplicated.
`EventLogTailer` ties them together with discovery for the poll loop.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Iterator
from typing import Literal

from navd.extractors.common.codecs import CODECS
from navd.extractors.common.cursors import CursorBook, CursorStore
from navd.extractors.common.lines import DEFAULT_MAX_LINE_BYTES, Line, LogReader, NotThisFormat, cursor_for
from navd.extractors.common.tailing import FileStatus, FileSystem, size_lags
from navd.logs import get_logger

LOGGER = "navd.extractor.spark"
log = get_logger(LOGGER)

IN_PROGRESS = ".inprogress"
COMPACT = ".compact"
ROLLING_DIR_PREFIX = "eventlog_v2_"
_EVENTS_FILE = re.compile(r"events_(\d+)_(.+)")
_APPSTATUS = "appstatus_"
#: what Spark writes first into every event log (LogStart since 1.3; ApplicationStart before)
FIRST_EVENTS = frozenset({"SparkListenerLogStart", "SparkListenerApplicationStart"})


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
    """One data file of an event log, as discovered in one scan (a lines.TailedFile)."""

    key: str             # directory + stable name: the cursor key
    status: FileStatus
    name: LogName

    @property
    def codec(self) -> str:
        return self.name.codec


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


class EventLogCursorStore(CursorStore):
    """The Spark tailer's cursors, in their own file of the state dir."""

    FILE_NAME = "spark-event-log-cursors.json"


# --- the poll loop ---------------------------------------------------------------------------

class EventLogTailer(CursorBook):
    """One pass over the event log directories per `poll()`; `checkpoint()` after Solr flushed.

    Lines are yielded file by file, rolling files in index order. A line with empty text only
    carries a cursor (a file finished, or input skipped); callers just pass it to `advance`.
    """

    def __init__(self, fs: FileSystem, directories: Iterable[str], store: CursorStore,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, *, allowed_owners: Iterable[str] = ()) -> None:
        self.fs = fs
        self.directories = tuple(directories)
        #: `[spark] allowed_log_owners`: only files these users own are read (empty: all)
        self.allowed_owners = frozenset(allowed_owners)
        self.reader = LogReader(fs, max_line_bytes, logger=LOGGER, what="event log", record_start=b'{"Event":')
        CursorBook.__init__(self, store)
        self._failures: set[tuple[str, int | None, str | None]] = set()
        #: files under a log's name that are no event log: the version last seen, not read
        #: again until it changes; each reported once
        self._foreign: dict[str, tuple[str, int, int]] = {}
        #: directories that could not be listed, with why: warned once, until readable again
        self._unreadable: dict[str, str] = {}
        #: files skipped for their owner, by key: the owner last reported
        self._disowned: dict[str, str] = {}

    @property
    def warnings(self) -> int:
        """Warnings about files and directories given so far (logged, or summarised)."""
        return self.reader.warnings.count

    def rewind_unfinished(self) -> None:
        """Read every event log whose reading was unfinished at the last checkpoint from its
        start: every file of a rolling log (its first file has the application's start), the
        file of a single-file log. Until the next checkpoint the committed cursors stay on disk."""
        unfinished = {log_of(key) for key, cursor in self.committed.items() if not cursor.done}
        for key, cursor in list(self.committed.items()):
            if log_of(key) in unfinished:
                # size -1 never matches the file: it is read again, from `resume`, same file id.
                self.committed[key] = dataclasses.replace(cursor, resume=0, skip=0, size=-1, done=False)
                self.reader.forget(key)

    def poll(self) -> Iterator[tuple[EventLog, Line]]:
        seen: set[str] = set()
        for directory in self.directories:
            try:
                logs = discover(self.fs, directory)
            except OSError as exc:
                # Keep its cursors: an unmounted or unreachable directory is not a deletion.
                # Said once (and again if the reason changes), not every poll_seconds.
                reason = exc.strerror or str(exc)
                if self._unreadable.get(directory) != reason:
                    self._unreadable[directory] = reason
                    self.reader.warnings.warn(directory, "directory_unreadable", "event log directory unreadable",
                                              field="directory", reason=reason)
                seen.update(k for k in self._known() if k.startswith(directory.rstrip("/") + "/"))
                continue
            if self._unreadable.pop(directory, None) is not None:
                log.info("event log directory readable again", directory=directory)
            for event_log in logs:
                seen.update(file.key for file in event_log.files)
                yield from self.read_log(event_log)
        self._drop_vanished(seen)
        for key in set(self._foreign) - seen:
            del self._foreign[key]
        for key in set(self._disowned) - seen:
            del self._disowned[key]

    def read_log(self, event_log: EventLog) -> Iterator[tuple[EventLog, Line]]:
        """What is new in one event log's files, in reading order, as `poll` reads it (a Spark
        history backfill task reads the logs it was given this way)."""
        for file in event_log.files:
            yield from ((event_log, line) for line in self._read(event_log, file))

    def _read(self, event_log: EventLog, file: LogFile) -> Iterator[Line]:
        cursor = self.cursor(file.key)
        status = file.status
        complete = event_log.complete
        lagging = not complete and size_lags(self.fs, status.path)
        version = (status.file_id, status.size, status.mtime_ns)
        if self._foreign.get(file.key) == version:
            return  # no event log, unchanged since it was found so
        if self.allowed_owners and status.owner not in self.allowed_owners:
            # Not read at all (its cursor stays): read once it is owned by an allowed user.
            if self._disowned.get(file.key) != status.owner:
                self._disowned[file.key] = status.owner
                self.reader.warnings.warn(status.path, "owner_not_allowed",
                                          "event log skipped: its owner is not in [spark] allowed_log_owners",
                                          owner=status.owner)
            return
        self._disowned.pop(file.key, None)
        if cursor is not None and (cursor.file_id != status.file_id
                                   or (status.size < cursor.resume and not lagging)):
            self.reader.warnings.warn(status.path, "replaced", "event log replaced, reading it again",
                                      previous_size=cursor.size, size=status.size)
            self.reader.forget(file.key)
            cursor = None
        if cursor is not None and cursor.size == status.size and cursor.mtime_ns == status.mtime_ns \
                and (cursor.done or not complete) and not lagging:
            return  # unchanged since last read
        if cursor is not None and cursor.done and len(event_log.files) == 1:
            # A finished log that changed after it was read to its end: Spark never appends to
            # one, so it was a copy still arriving under its final name that happened to end at
            # a line's end (or the file was rewritten). Its application's state was dropped when
            # it looked finished, so the rest cannot be read on from the position: the whole log
            # again, from its start (records are upserts: nothing duplicated).
            self.reader.warnings.warn(status.path, "changed_after_finished",
                                      "finished event log changed after it was read, reading it again",
                                      previous_size=cursor.size, size=status.size)
            self.reader.forget(file.key)
            cursor = None
        if cursor is None and file.name.compact and self._has_earlier(event_log, file):
            # Its events were read from the files it replaces; reading it again duplicates.
            self.advance(cursor_for(file, status.size, 0, done=True))
            return
        # The first line of a log tells whether it is one at all: checked before it is handed on.
        first = cursor is None and file is event_log.files[0] and not file.name.compact and file.name.index <= 1
        try:
            for line in self.reader.read(file, cursor, complete):
                if first and line.text:
                    first = False
                    kind = _event_kind(line.text)
                    if kind not in FIRST_EVENTS:
                        raise NotThisFormat(f"its first line is {kind or 'no Spark event'}, not "
                                            f"SparkListenerLogStart or SparkListenerApplicationStart")
                yield line
        except NotThisFormat as exc:
            self.reader.forget(file.key)
            if file.key not in self._foreign:
                self.reader.warnings.warn(status.path, "not_an_event_log",
                                          "not a Spark event log, skipped until it changes", reason=str(exc))
            self._foreign[file.key] = version
        except FileNotFoundError:
            pass  # reported by _drop_vanished on the next pass
        except OSError as exc:
            # One unreadable file (permissions, an I/O error) must not stop the others; its
            # cursor stays, so it is read once it can be. Reported once per kind of failure.
            failure = (file.key, exc.errno, exc.strerror)
            if failure not in self._failures:
                self._failures.add(failure)
                self.reader.warnings.warn(status.path, "unreadable", "event log unreadable, will retry",
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
            self._forget_cursor(key)
            self.reader.forget(key)


def _event_kind(text: str) -> str | None:
    """The "Event" of a log line, None when it is no JSON object with one."""
    try:
        event = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested past the parser's depth
        return None
    kind = event.get("Event") if isinstance(event, dict) else None
    return kind if isinstance(kind, str) else None


def log_of(key: str) -> str:
    """The event log a cursor key belongs to: a rolling log's directory, or the file itself."""
    parent, _, _name = key.rpartition("/")
    return parent if parent.rsplit("/", 1)[-1].startswith(ROLLING_DIR_PREFIX) else key


__all__ = ["COMPACT", "IN_PROGRESS", "ROLLING_DIR_PREFIX", "EventLog", "EventLogCursorStore", "EventLogTailer",
           "LogFile", "LogName", "discover", "log_of", "parse_log_name"]
