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
from navd.extractors.common.repeated import RepeatedWarnings
from navd.extractors.common.tailing import FileStatus, FileSystem, size_lags

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


class NotThisFormat(Exception):
    """A file read from its start does not begin as every record of the format does."""


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
    #: the file's first bytes are still to be checked against the format's record start
    sniffing: bool = False
    held: bool = False       # an unfinished end of a finished file was reported (see _lines)


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
        # about a file say whose it is. They are counted (the run's warnings) and repeats of
        # one kind in one file summarised; the tailer gives its own through the same object.
        self.warnings = RepeatedWarnings(logger)
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
        so); then the last cursor is marked done, unless the file ends in a line without a
        newline or an unfinished frame: that is reported once and held back like a growing
        file's partial last line, for the next call (a copy still arriving under the final
        name), and no cursor goes past it. A Line with empty text only carries a cursor (skipped
        input, the end of the file). Raises FileNotFoundError if the file is gone, and
        NotThisFormat (before any line) when a file read from its start does not begin with
        `record_start`.
        """
        codec = file.codec
        live = self._live.pop(file.key, None)
        if live is None or live.cursor != cursor:
            start = cursor if cursor is not None and cursor.codec == codec else None
            resume, skip = (start.resume, start.skip) if start else (0, 0)
            live = _Live(start, make_decoder(codec, resume), resume, bytearray(), (resume, 0), False)
            live.sniffing = bool(self.record_start) and resume == 0 and skip == 0
            to_skip = skip
        else:
            to_skip = 0
        ok = False
        try:
            yield from self._lines(file, live, to_skip, complete)
            ok = True
        finally:
            # A caller that stopped early got only some lines: the kept state would be ahead.
            # A finished file read to its end is not read again unless it changes (then from its
            # cursor): its decoder is not kept, or a first start over a long history would hold
            # one per log.
            if ok and not (live.cursor is not None and live.cursor.done):
                self._live[file.key] = live
            self.warnings.summarise(file.status.path)

    def _warn(self, file: TailedFile, kind: str, message: str, **fields: object) -> None:
        self.warnings.warn(file.status.path, kind, message, **fields)

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
                    self._warn(file, "corrupt_frame", "corrupt compressed frame skipped", offset=exc.offset,
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
            if end == 0:
                # An empty file under its final name is a copy whose bytes have not arrived yet
                # (every finished log holds at least its first record): no cursor until it has
                # some, or a tailer would commit it as read while nothing of it was.
                return
            partial = bool(live.pending) and not live.discarding
            unfinished = live.decoder.incomplete()
            if partial or unfinished is not None:
                # Line-oriented writers end every record with a newline, so a file under its final
                # name without one is either still arriving (a copy, `rsync --inplace`) or was cut
                # short (a crashed writer). Never hand out a cursor past it: the file stays
                # unfinished, its partial line held back, and reading goes on from there when it
                # grows (the caller keeps what it knows of the file meanwhile, as for a file still
                # being written). Said once, not at every poll while a copy goes on.
                if not live.held:
                    live.held = True
                    if partial:
                        self._warn(file, "partial_line",
                                   f"finished {self.what} ends in a partial line, held back until it is complete",
                                   **_where(file, live.pending_pos))
                    else:
                        self._warn(file, "incomplete_frame",
                                   f"finished {self.what} ends in an incomplete compressed frame, held back "
                                   f"until it is complete", offset=unfinished, codec=file.codec)
                return
            live.pending.clear()
            live.held = False
            if live.cursor is None or not live.cursor.done or live.cursor.size != file.status.size:
                live.cursor = cursor_for(file, live.read_to, 0, done=True)
                yield Line("", live.cursor)  # no text: only the final cursor

    def _split(self, file: TailedFile, live: _Live, piece: Piece) -> Iterator[Line]:
        data, start = piece.data, 0
        if live.sniffing and data:
            # Checked on the first bytes, before any line: a binary or foreign file under a
            # log's name would otherwise give a warning for each of its "lines".
            head = bytes(live.pending) + data[:len(self.record_start)]
            if head[:len(self.record_start)] != self.record_start[:len(head)]:
                raise NotThisFormat(f"does not start with {self.record_start.decode('ascii', 'replace')}")
            live.sniffing = len(head) < len(self.record_start)
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
        self._warn(file, "line_too_long", f"{self.what} line too long, skipped",
                   **_where(file, live.pending_pos), max_line_bytes=self.max_line_bytes)
        live.pending.clear()
        live.discarding = True

    def _decode(self, file: TailedFile, raw: bytes, pos: tuple[int, int]) -> str | None:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._warn(file, "not_utf8", f"{self.what} line is not UTF-8, skipped", **_where(file, pos),
                       reason=str(exc))
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
