"""Records -> Solr documents: Navigator's field names, one place."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from navd.index.documents import (
    deletion_update,
    display_document,
    element_document,
    element_field,
    is_stub,
    property_field,
    relation_document,
    relinked_document,
    run_document,
    stored_relation_identity,
    stub_document,
)
from navd.lineage.stored import StoredElement, StoredEndpoint, StoredRelation
from navd.model import (
    Deletion,
    DependencyType,
    Element,
    ElementStub,
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
    # The stored text is json.dumps' (sorted keys, ", " and ": ", UTF-8 kept): documents written
    # by older navd versions compare equal to new ones (the OpenLineage intake compares them).
    assert doc["properties"] == json.dumps({"tier": "gold", "team name": "finance"}, ensure_ascii=False,
                                           sort_keys=True)
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


def test_stub_and_deletion_documents() -> None:
    element = Element(SourceType.HIVE, ElementType.TABLE, "sales.raw@primary", name="raw",
                      properties={"knownFrom": "spark"})
    assert stub_document(ElementStub(element)) == {**element_document(element), "_version_": -1}
    dropped = datetime(2026, 11, 2, tzinfo=UTC)
    assert deletion_update(Deletion(element.ref, dropped)) == {
        "identity": element.identity, "_version_": 1, "deleted": {"set": True},
        "deleteTime": {"set": "2026-11-02T00:00:00.000Z"}}


def test_run_document() -> None:
    started = datetime(2026, 11, 2, tzinfo=UTC)
    doc = run_document("hdfs##1", "extractor.hdfs", "FAILED", started=started, host="h",
                       ended=started + timedelta(minutes=1), error="x" * 3000, counts={"elements": 3})
    assert doc == {"identity": "hdfs##1", "kind": "run", "component": "extractor.hdfs", "state": "FAILED",
                   "started": "2026-11-02T00:00:00.000Z", "host": "h", "ended": "2026-11-02T00:01:00.000Z",
                   "error": "x" * 2000, "count_elements": 3}
    assert "ended" not in run_document("r", "c", "RUNNING", started=started, host="h")


def test_stored_views_read_what_the_builders_write() -> None:
    stub = Element(SourceType.HIVE, ElementType.TABLE, "sales.raw@primary", name="raw",
                   properties={"knownFrom": "spark"})
    assert StoredElement.from_doc(element_document(stub)) == StoredElement(
        stub.identity, "sales.raw@primary", "TABLE", "HIVE", "raw", deleted=False, stub=True)
    assert is_stub(element_document(stub))
    source = EntityRef(SourceType.HIVE, "sales.s.c@primary", ElementType.FIELD)
    target = EntityRef(SourceType.HIVE, "sales.t.u@primary", ElementType.FIELD)
    relation = Relation(RelationType.DATA_FLOW, source, target, linked2=False,
                        dependency_type=DependencyType.SIMPLE, discriminator="spark://app/1")
    stored = StoredRelation.from_doc(relation_document(relation))
    assert stored.id == relation.identity and stored.type == "DATA_FLOW"
    assert stored.endpoint(1) == StoredEndpoint(source.identity, "sales.s.c@primary", "HIVE", "FIELD", True)
    assert stored.endpoint(2).linked is False and stored.unlinked_ends == (2,)
    assert (stored.dependency_type, stored.expression, stored.discriminator) == ("SIMPLE", None, "spark://app/1")
    # a query that fetched only some fields reads the rest as empty
    partial = StoredRelation.from_doc({"identity": "r", "endpoint1Id": "a"})
    assert partial.endpoint1.id == "a" and partial.endpoint2.id == "" and partial.unlinked_ends == ()


def test_relinked_document_and_identity() -> None:
    exe = EntityRef(SourceType.SPARK, "spark://app/1", ElementType.OPERATION_EXECUTION)
    seen = EntityRef(SourceType.HDFS, "hdfs://nn1:8020/wh/t", ElementType.DIRECTORY)
    real = EntityRef(SourceType.HDFS, "hdfs://ns1/wh/t", ElementType.DIRECTORY)
    unlinked = relation_document(Relation(RelationType.DATA_FLOW, exe, seen, linked2=False))
    assert stored_relation_identity(unlinked) == unlinked["identity"]
    relinked = relinked_document({**unlinked, "_version_": 7, "lastIndexed": "x"},
                                 {2: StoredElement(real.identity, real.qualified_name, "DIRECTORY", "HDFS")})
    assert relinked == relation_document(Relation(RelationType.DATA_FLOW, exe, real))


def test_relinked_document_keeps_every_field_in_order() -> None:
    """Linking rewrites the endpoint fields, `unlinked` and the identity, drops what Solr
    maintains, and keeps everything else (properties and their prop_* fields, expression,
    discriminator, fields navd does not know) with its value, in the order read."""
    exe = EntityRef(SourceType.SPARK, "spark://app/1", ElementType.OPERATION_EXECUTION)
    seen = EntityRef(SourceType.HDFS, "hdfs://nn1:8020/wh/t", ElementType.DIRECTORY)
    real = EntityRef(SourceType.HDFS, "hdfs://ns1/wh/t", ElementType.DIRECTORY)
    read = {**relation_document(Relation(RelationType.DATA_FLOW, exe, seen, linked2=False, discriminator="d1",
                                         properties={"mode": "overwrite"})),
            "lastIndexed": "2026-11-29T00:00:00Z", "someField_s": "kept", "_version_": 7, "score": 1.0}
    relinked = relinked_document(read, {2: StoredElement(real.identity, real.qualified_name, "DIRECTORY", "HDFS")})
    assert list(relinked) == [k for k in read if k not in ("lastIndexed", "_version_", "score")]
    changed = {"identity", "endpoint2Id", "endpoint2QualifiedName", "endpoint2Linked", "unlinked"}
    assert {k: v for k, v in relinked.items() if k not in changed} == \
        {k: v for k, v in read.items() if k not in changed | {"lastIndexed", "_version_", "score"}}
    assert (relinked["endpoint2Id"], relinked["endpoint2Linked"], relinked["unlinked"]) == (real.identity, True, False)
    assert relinked["identity"] == stored_relation_identity(relinked) != read["identity"]
    assert relinked["prop_mode"] == "overwrite" and relinked["discriminator"] == "d1"
    with pytest.raises(ValueError, match="endpoint 3"):
        relinked_document(read, {3: StoredElement(real.identity, real.qualified_name, "DIRECTORY", "HDFS")})


def test_element_field_names() -> None:
    assert [element_field(a) for a in ("name", "last_modified", "block_size", "delete_time")] == \
        ["originalName", "lastModified", "blockSize", "deleteTime"]
    with pytest.raises(ValueError, match="'parent'"):
        element_field("parent")
