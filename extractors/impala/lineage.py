"""impalad's lineage event log: one JSON object per line, per query. Pure.

With `--lineage_event_log_dir`, impalad appends each query's lineage graph to
`impala_lineage_log_1.0-<ms since epoch>` in that directory and starts a new file every
`--max_lineage_log_file_size` queries (apache/impala be/src/util/lineage-util.h,
be/src/util/simple-logger.cc). Fields, in the order written: `queryText`, `operationType`,
`queryId`, `hash`, `user`, `timestamp` (start, epoch seconds), `endTime`, `edges` (no
`expression`), `vertices` (all `vertexType` COLUMN, with `metadata` `tableName`, `tableType`,
`tableCreateTime` for a table's column), optional `tableLocation`.
"""

from __future__ import annotations

import re
from typing import Any

from navd.extractors.hive_lineage.graph import BadLineage, QueryLineage, epoch_seconds, integer, parse_graph, text
from navd.model import SourceType

FILE_PREFIX = "impala_lineage_log_1.0-"
#: impalad's own pattern for its files (SimpleLogger::GetLogFiles): the prefix and digits
FILE_NAME = re.compile(re.escape(FILE_PREFIX) + r"[0-9]+")


def parse_impala(raw: Any) -> QueryLineage:
    """One decoded lineage object -> QueryLineage; BadLineage for anything malformed."""
    if not isinstance(raw, dict):
        raise BadLineage("the record is not a JSON object")
    query_text = text(raw, "queryText", required=True)
    query_hash = text(raw, "hash", required=True)
    query_id = text(raw, "queryId", required=True)
    assert query_text is not None and query_hash is not None
    edges, vertices = parse_graph(raw)
    return QueryLineage(SourceType.IMPALA, query_text, query_hash, edges, vertices, user=text(raw, "user"),
                        started=epoch_seconds(integer(raw, "timestamp")), ended=epoch_seconds(integer(raw, "endTime")),
                        query_id=query_id, engine="impala", operation_type=text(raw, "operationType"),
                        table_location=text(raw, "tableLocation"))


__all__ = ["FILE_NAME", "FILE_PREFIX", "parse_impala"]
