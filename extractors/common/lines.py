"""Complete lines of growing, possibly compressed log files, each with the cursor after it.

`LogReader` reads a file through a `FileSystem` (tailing), decodes it (codecs) and splits it
into lines; every newline hands out a `LogCursor` (cursors) the caller commits once the
records of the lines before it are in the index. What a file is, which files belong together
and in what order is the caller's business: the reader takes any `TailedFile`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Protocol

from navd.extractors.common.codecs import CorruptFrame, Decoder, Piece, make_decoder
from navd.extractors.common.cursors import LogCursor
from navd.extractors.common.tailing import FileStatus, FileSystem, size_lags
from navd.logs import get_logger

# Longer than any sane log record (Spark's biggest events, SQL plans, stay far below this): a
# longer line is damage or a runaway plan, and holding it whole would cost that much memory.
DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024
READ_SIZE = 1024 * 1024


class TailedFile(Protocol):
    """One data file as a tailer discovered it."""

    @property
    def key(self) -> str:
        """The cursor key: stable across renames the writer does (e.g. dropping .inprogress)."""
        ...

    @property
    def status(self) -> FileStatus:
        ...

    @property
    def codec(self) -> str:
        """"" when uncompressed, else one of codecs.CODECS."""
        ...


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
                 read_size: int = READ_SIZE, *, logger: str = "navd.extractor", what: str = "log",
                 record_start: bytes = b"") -> None:
        self.fs = fs
        # The tailing extractor's logger and its name for the files ("event log"): warnings
        # about a file say whose it is.
        self.log = get_logger(logger)
        self.what = what
        #: the bytes every line of the format starts with, if any (Spark: `{"Event":`): after a
        #: damaged frame, data starting with them begins a whole line
        self.record_start = record_start
        self.max_line_bytes = max_line_bytes
        self.read_size = read_size
        self._live: dict[str, _Live] = {}

    def forget(self, key: str) -> None:
        self._live.pop(key, None)

    def read(self, file: TailedFile, cursor: LogCursor | None, complete: bool) -> Iterator[Line]:
        """Complete lines of `file` after `cursor` (from the start when None).

        `complete` says the writer has finished (no .inprogress, or the appstatus marker says
        so); then the last cursor is marked done, and a last line without a newline or an
        unfinished frame is reported and skipped. A growing file's partial last line is held
        back for the next call. A Line with empty text only carries a cursor (skipped input, the
        end of the file). Raises FileNotFoundError if the file is gone.
        """
        codec = file.codec
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

    def _lines(self, file: TailedFile, live: _Live, to_skip: int, complete: bool) -> Iterator[Line]:
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
                    self.log.warning("corrupt compressed frame skipped", file=path, offset=exc.offset,
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
                # Line-oriented writers end every record with a newline: a finished file without one
                # was cut short (a crashed writer, a truncated copy), and its last line is not whole.
                self.log.warning(f"finished {self.what} ends in a partial line, skipped",
                            file=path, **_where(file, live.pending_pos))
            live.pending.clear()
            unfinished = live.decoder.incomplete()
            if unfinished is not None:
                self.log.warning(f"finished {self.what} ends in an incomplete compressed frame, skipped",
                            file=path, offset=unfinished, codec=file.codec)
            if live.cursor is None or not live.cursor.done or live.cursor.size != file.status.size:
                live.cursor = cursor_for(file, live.read_to, 0, done=True)
                yield Line("", live.cursor)  # no text: only the final cursor

    def _split(self, file: TailedFile, live: _Live, piece: Piece) -> Iterator[Line]:
        data, start = piece.data, 0
        if live.resynced and data:
            # After a damaged frame the data goes on mid-line, unless the next frame starts with
            # a record (writers' frames often end at a flush, between records): keep that one.
            live.resynced = False
            if self.record_start and data.startswith(self.record_start):
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

    def _too_long(self, file: TailedFile, live: _Live) -> None:
        self.log.warning(f"{self.what} line too long, skipped", file=file.status.path,
                    **_where(file, live.pending_pos), max_line_bytes=self.max_line_bytes)
        live.pending.clear()
        live.discarding = True

    def _decode(self, file: TailedFile, raw: bytes, pos: tuple[int, int]) -> str | None:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.log.warning(f"{self.what} line is not UTF-8, skipped", file=file.status.path,
                        **_where(file, pos), reason=str(exc))
            return None


def _where(file: TailedFile, pos: tuple[int, int]) -> dict[str, int]:
    """Log fields locating a line: the byte offset, or for a compressed file the offset of the
    frame to decode from and the decompressed bytes into it."""
    if not file.codec:
        return {"offset": pos[0] + pos[1]}
    return {"offset": pos[0], "decompressed_skip": pos[1]}


def cursor_for(file: TailedFile, resume: int, skip: int, done: bool = False) -> LogCursor:
    s = file.status
    if not file.codec:  # uncompressed: every byte is a resume point
        resume, skip = resume + skip, 0
    return LogCursor(file.key, s.path, s.file_id, s.size, s.mtime_ns, file.codec,
                     resume, skip, done)
