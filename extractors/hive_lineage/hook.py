"""Hive's LineageLogger output in a HiveServer2 log: finding the records, reading them. Pure.

`org.apache.hadoop.hive.ql.hooks.LineageLogger` (a `hive.exec.post.hooks` hook) writes one
JSON object per QUERY, CTAS, CREATE VIEW or ALTER VIEW AS through log4j (`LOG.info`), so each
record follows the appender's prefix (`2023-11-14T22:13:25,422 INFO [...] hooks.LineageLogger: `):

- Hive 2.x and later: compact JSON on the one line (`{"version":"1.0",...}`);
- Hive 1.x: `POSTHOOK: LINEAGE: {` and the object pretty-printed by Gson over the following
  lines, its closing `}` alone on the last.

Fields: `version`, `user`, `timestamp` (the query's start, epoch seconds), `duration` (ms, Hive
2.x+), `jobIds`, `engine`, `database` (2.x+), `hash` (MD5 of the text), `queryText`, `edges`,
`vertices`; Hive's test mode leaves out user, timestamp, duration and jobIds. The other lines of
the log are not lineage and are passed over.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from navd.extractors.hive_lineage.graph import (
    BadLineage,
    QueryLineage,
    epoch_seconds,
    integer,
    parse_graph,
    text,
    timedelta_ms,
)
from navd.model import SourceType

COMPACT_START = '{"version"'
PRETTY_START = "POSTHOOK: LINEAGE: {"


class RecordAssembler:
    """Lines of one log file in -> the JSON text of each lineage record out.

    A pretty-printed record spans lines; `in_record` says a record is open (the caller must not
    move its cursor past the record's first line until it is complete). `reset()` when the
    file's lines start again from a cursor."""

    def __init__(self, max_record_bytes: int) -> None:
        self.max_record_bytes = max_record_bytes
        self._lines: list[str] = []
        self._size = 0
        self.too_long = False

    @property
    def in_record(self) -> bool:
        return bool(self._lines)

    def reset(self) -> None:
        self._lines.clear()
        self._size = 0

    def feed(self, line: str) -> str | None:
        """The JSON text of the record `line` completes, else None. Sets `too_long` when a
        pretty-printed record grew past the limit and was dropped."""
        self.too_long = False
        if self._lines:
            self._lines.append(line)
            self._size += len(line) + 1
            if line.rstrip() == "}":
                record = "\n".join(self._lines)
                self.reset()
                return record
            if self._size > self.max_record_bytes:
                self.reset()
                self.too_long = True
            return None
        start = line.find(COMPACT_START)
        if start >= 0:
            return line[start:]
        if line.rstrip().endswith(PRETTY_START):
            self._lines.append("{")
            self._size = 1
        return None


def parse_hive(raw: Any) -> QueryLineage:
    """One decoded LineageLogger object -> QueryLineage; BadLineage for anything malformed."""
    if not isinstance(raw, dict):
        raise BadLineage("the record is not a JSON object")
    query_text = text(raw, "queryText", required=True)
    query_hash = text(raw, "hash", required=True)
    assert query_text is not None and query_hash is not None
    edges, vertices = parse_graph(raw)
    started = epoch_seconds(integer(raw, "timestamp"))
    duration = timedelta_ms(integer(raw, "duration"))
    return QueryLineage(SourceType.HIVE, query_text, query_hash, edges, vertices, user=text(raw, "user"),
                        started=started, ended=started + duration if started and duration is not None else None,
                        engine=text(raw, "engine"), database=text(raw, "database"), job_ids=_job_ids(raw),
                        version=text(raw, "version"))


def _job_ids(raw: Mapping[str, Any]) -> tuple[str, ...]:
    value = raw.get("jobIds") or []
    if not isinstance(value, list) or not all(isinstance(j, str) for j in value):
        raise BadLineage("jobIds must be a list of strings")
    return tuple(j for j in value if j)


__all__ = ["COMPACT_START", "PRETTY_START", "RecordAssembler", "parse_hive"]
