"""Records -> Solr documents: Navigator's field names, one place."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

from navd.index.documents import display_document, element_document, property_field, relation_document
from navd.model import (
    DependencyType,
    Element,
    ElementType,
    EntityRef,
    Relation,
    RelationType,
    SourceType,
    identity,
)


def test_file_element_document() -> None:
    parent = EntityRef(SourceType.HDFS, "hdfs://ns/data/raw", ElementType.DIRECTORY)
    deleted_at = datetime(2026, 11, 2, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    element = Element(SourceType.HDFS, ElementType.FILE, "hdfs://ns/data/raw/a b.csv", name="a b.csv",
                      parent=parent, file_system_path="/data/raw/a b.csv", owner="etl", size=42,
                      replication=3, last_modified=datetime(2026, 11, 1, tzinfo=UTC),
                      extractor_run_id="hdfs##7", deleted=True, delete_time=deleted_at,
                      properties={"team name": "finance", "tier": "gold"})
    doc = element_document(element)
    assert doc["identity"] == identity(SourceType.HDFS, "hdfs://ns/data/raw/a b.csv")
    assert doc["originalName"] == "a b.csv"
    assert doc["parentId"] == parent.identity
    assert doc["parentPath"] == "/data/raw"
    assert doc["size"] == 42 and doc["replication"] == 3
    assert doc["lastModified"] == "2026-11-01T00:00:00.000Z"
    assert doc["deleted"] is True and doc["deleteTime"] == "2026-11-02T10:00:00.000Z"
    assert doc["extractorRunId"] == "hdfs##7"
    assert json.loads(doc["properties"]) == {"team name": "finance", "tier": "gold"}
    assert doc[property_field("team name")] == "finance" and "prop_team_name" in doc
    assert "owner" in doc and "group" not in doc  # unknown values are absent, not null


def test_table_documents_carry_no_parent_path() -> None:
    database = EntityRef(SourceType.HIVE, "sales@primary", ElementType.DATABASE)
    doc = element_document(Element(SourceType.HIVE, ElementType.TABLE, "sales.orders@primary", name="orders",
                                   parent=database, file_system_path="/warehouse/sales.db/orders"))
    assert doc["parentQualifiedName"] == "sales@primary"
    assert "parentPath" not in doc
    assert doc["fileSystemPath"] == "/warehouse/sales.db/orders"


def test_relation_document() -> None:
    source = EntityRef(SourceType.HIVE, "sales.s.c@primary", ElementType.FIELD)
    target = EntityRef(SourceType.HIVE, "sales.t.u@primary", ElementType.FIELD)
    relation = Relation(RelationType.DATA_FLOW, source, target, linked2=False,
                        dependency_type=DependencyType.EXPRESSION, expression="upper(c)",
                        discriminator="spark://app/1")
    doc = relation_document(relation)
    assert doc["identity"] == relation.identity
    assert (doc["endpoint1Id"], doc["endpoint2Id"]) == (source.identity, target.identity)
    assert doc["endpoint2QualifiedName"] == "sales.t.u@primary"
    assert doc["endpoint1Type"] == "FIELD" and doc["endpoint2SourceType"] == "HIVE"
    assert doc["unlinked"] is True and doc["endpoint1Linked"] is True and doc["endpoint2Linked"] is False
    assert doc["dependencyType"] == "EXPRESSION" and doc["expression"] == "upper(c)"


def test_display_document_hides_internals() -> None:
    shown = display_document({"identity": "x", "_version_": 1, "prop_a": "1", "properties": '{"a": "1"}'})
    assert shown == {"identity": "x", "properties": {"a": "1"}}
