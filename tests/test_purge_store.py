"""The queries of purge/store.py: each rule's query as Solr reads it, and a threshold or an
identity that stays one value (read back with navd's parser of Solr's grammar)."""

from __future__ import annotations

import pytest

from navd.index.query_syntax import Range, parse
from navd.purge import store

THRESHOLD = "2026-01-01T00:00:00Z"


@pytest.mark.parametrize(("query", "expected"), [
    (store.executions_before(THRESHOLD),
     "type:OPERATION_EXECUTION AND (ended:[* TO 2026-01-01T00:00:00Z] OR "
     "(started:[* TO 2026-01-01T00:00:00Z] -ended:[* TO *]))"),
    (store.directories_deleted_before(THRESHOLD),
     "sourceType:HDFS AND type:DIRECTORY AND deleted:true AND deleteTime:[* TO 2026-01-01T00:00:00Z]"),
    (store.entities_deleted_before(THRESHOLD),
     "deleted:true AND deleteTime:[* TO 2026-01-01T00:00:00Z] "
     "-(sourceType:HIVE AND type:(DATABASE OR TABLE OR VIEW OR FIELD))"),
    (store.runs_ended_before(THRESHOLD), "kind:run AND ended:[* TO 2026-01-01T00:00:00Z]"),
    (store.INSTANCE_OF, "type:INSTANCE_OF"),
    (store.LINEAGE, "type:(DATA_FLOW OR CONTROL_FLOW)"),
    (store.PARENT_CHILD, "type:PARENT_CHILD"),
    (store.NOT_LOGICAL_PHYSICAL, "*:* -type:LOGICAL_PHYSICAL"),
    (store.with_end_in(2, ["e1", "e2"]), "{!terms f=endpoint2Id}e1,e2"),
])
def test_each_rule_asks_its_query(query: str, expected: str) -> None:
    assert query == expected


@pytest.mark.parametrize(("filters", "expected"), [
    (store.child_executions_of(["x1", "x2"]),
     ["type:PARENT_CHILD", "endpoint2Type:OPERATION_EXECUTION", "{!terms f=endpoint1Id}x1,x2"]),
    (store.dataset_writes_of(["x1"]),
     ["type:DATA_FLOW", "-endpoint2Type:(OPERATION OR OPERATION_EXECUTION)", "{!terms f=endpoint1Id}x1"]),
    (store.logical_physical_at(1, ["a"]), ["type:LOGICAL_PHYSICAL", "{!terms f=endpoint1Id}a"]),
])
def test_each_lookup_filters_its_relations(filters: list[str], expected: list[str]) -> None:
    assert filters == expected


def test_a_threshold_that_is_not_a_plain_date_is_quoted() -> None:
    query = store.runs_ended_before('x] OR *:*')
    ranges = [c.node for c in parse(query).clauses if isinstance(c.node, Range)]
    assert [r.high for r in ranges] == ['x] OR *:*']
