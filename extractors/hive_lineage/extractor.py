"""The push extractor of query lineage logs: HiveServer2's LineageLogger output and impalad's
lineage event log, one class for both (they log the same graph; only finding the records in a
file and the header fields differ).

One pass (`extract`) reads what is new in every file the patterns match (extractors.common.filetail),
turns each record into records (graph.records) and advances each file's cursor past a record
once its records were handed to the writer; `commit()` (after the writer flushed) makes the
cursors durable. A record is self-contained, so a restart simply goes on from the committed
cursors: a pretty-printed Hive record cut by a crash or a poll is read again from its first line.
Records are idempotent upserts: a record read twice writes the same documents.

Bad input (not JSON, a vertex that is not `db.table[.column]`, an edge naming a missing vertex,
a record longer than the limit) is one warning naming the file and the record's offset; the
record is skipped and the rest flows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import orjson

from navd.extractors import CHECKPOINT, Checkpoint
from navd.extractors.common.cursors import CursorStore
from navd.extractors.common.filetail import GlobTailer
from navd.extractors.hive_lineage.graph import BadLineage, QueryLineage, records
from navd.extractors.hive_lineage.hook import RecordAssembler
from navd.model import Element, ElementType, Record
from navd.names import InvalidName

#: The longest record read: a longer line (a generated query of many MB) is skipped with its
#: offset instead of being held whole in memory and written into Solr's queryText.
MAX_RECORD_BYTES = 16 * 1024 * 1024
#: a pass yields a CHECKPOINT (cursors committed) after a whole record once this many lines were
#: read since the last one (a backlog of many files after downtime)
CHECKPOINT_LINES = 20_000
#: the most stub and operation identities remembered within a pass (then forgotten, and written
#: again at worst: stubs and operations are idempotent upserts)
MAX_REMEMBERED = 200_000


@dataclasses.dataclass(frozen=True)
class PassReport:
    lines: int
    #: lineage records understood and written
    queries: int
    records: int
    #: records, lines or files skipped, each logged with its file (and offset)
    warnings: int


class LineageLogExtractor:
    """Tails lineage logs (files matching `patterns`) into records; see the module docstring."""

    def __init__(self, *, name: str, cluster: str, patterns: Iterable[str], state_dir: Path, cursor_file: str,
                 parse: Callable[[Any], QueryLineage], multi_line: bool, what: str,
                 extractor_run_id: str | None = None, max_record_bytes: int = MAX_RECORD_BYTES,
                 key_by: Literal["inode", "path"] = "inode") -> None:
        self.name = name
        self.cluster = cluster
        self.parse = parse
        self.multi_line = multi_line
        self.max_record_bytes = max_record_bytes
        self.extractor_run_id = extractor_run_id or f"{name}##{datetime.now(UTC):%Y%m%dT%H%M%S}"
        self.tailer = GlobTailer(patterns, CursorStore(state_dir, cursor_file), logger=f"navd.extractor.{name}",
                                 what=what, max_line_bytes=max_record_bytes, key_by=key_by)
        self._lines = 0
        self._queries = 0
        self._since_checkpoint = 0
        #: the counters when the pass began: its report is what they grew by
        self._pass_start = (0, 0, 0)
        # Within a pass the same tables, columns and query texts come back query after query:
        # their stubs (with the columns' PARENT_CHILD) and operations are written once, not
        # once per query (most of a query's records otherwise). Per pass: a failed pass writes
        # them again with the records that name them.
        self._stubbed: set[str] = set()
        self._operations: set[tuple[str, str]] = set()

    def extract(self, *, full: bool = False) -> Iterator[Record | Checkpoint]:
        """Records of everything new in the logs since the last pass, and a CHECKPOINT at a record
        boundary every CHECKPOINT_LINES lines. `full` changes nothing: cursors say what is new."""
        del full
        self._pass_start = (self._lines, self._queries, self.tailer.warnings)
        self._stubbed.clear()
        self._operations.clear()
        assembler = RecordAssembler(self.max_record_bytes)
        current = None
        offset = record_offset = 0  # where the next line and the open record start
        for file, line in self.tailer.poll():
            if file.key != current:
                # A file's lines start (again) from its cursor: nothing gathered so far counts.
                current = file.key
                assembler.reset()
                cursor = self.tailer.cursor(file.key)
                offset = cursor.resume if cursor is not None and cursor.file_id == file.status.file_id else 0
            start, offset = offset, line.cursor.resume
            if line.text:
                self._lines += 1
                self._since_checkpoint += 1
                if self.multi_line:
                    opened = assembler.in_record
                    record = assembler.feed(line.text)
                    if not opened and assembler.in_record:
                        record_offset = start
                    elif record is not None and not opened:
                        record_offset = start
                    if assembler.too_long:
                        self.tailer.warn(file.status.path, "record_too_long", "lineage record too long, skipped",
                                         offset=record_offset, max_record_bytes=self.max_record_bytes)
                else:
                    record, record_offset = (line.text if line.text.strip() else None), start
                if record is not None:
                    yield from self._records(file.status.path, record, record_offset)
            if not assembler.in_record:
                self.tailer.advance(line.cursor)
                if self._since_checkpoint >= CHECKPOINT_LINES:
                    yield CHECKPOINT

    def _records(self, path: str, record: str, offset: int) -> Iterator[Record]:
        try:
            query = self.parse(orjson.loads(record))
            if len(self._stubbed) >= MAX_REMEMBERED:
                self._stubbed.clear()
            emitted = list(records(query, cluster=self.cluster, extractor_run_id=self.extractor_run_id,
                                   stubbed=self._stubbed))
        except orjson.JSONDecodeError as exc:
            self.tailer.warn(path, "not_json", "lineage record is not JSON, skipped", offset=offset,
                             reason=str(exc).splitlines()[0][:200])
            return
        except (BadLineage, InvalidName) as exc:
            self.tailer.warn(path, "bad_record", "lineage record skipped", offset=offset, reason=str(exc))
            return
        self._queries += 1
        for emitted_record in emitted:
            if isinstance(emitted_record, Element) and emitted_record.type is ElementType.OPERATION:
                key = (emitted_record.identity, emitted_record.name)
                if key in self._operations:
                    continue  # the same text again: its operation is written already
                if len(self._operations) >= MAX_REMEMBERED:
                    self._operations.clear()
                self._operations.add(key)
            yield emitted_record

    def commit(self) -> None:
        """Make the cursors of everything extracted so far durable. Call after the writer flushed."""
        self._since_checkpoint = 0
        self.tailer.checkpoint()

    def rollback(self) -> None:
        """The pass failed or was stopped: the next one reads again from the committed cursors."""
        self._since_checkpoint = 0
        self.tailer.rollback()

    def finished(self, records: int) -> PassReport:
        lines, queries, warnings = self._pass_start
        return PassReport(lines=self._lines - lines, queries=self._queries - queries, records=records,
                          warnings=self.tailer.warnings - warnings)

    def close(self) -> None:
        """Nothing to release: each pass commits its cursors."""


__all__ = ["CHECKPOINT_LINES", "MAX_RECORD_BYTES", "LineageLogExtractor", "PassReport"]
