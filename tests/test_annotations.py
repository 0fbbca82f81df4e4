"""Annotations on the real Solr over elements the real HMS extractor (through the session Spark
Thrift Server) and the one writer indexed: edits searchable (`tags:pii`, `description:*churn*`,
Navigator's queries), kept through a full re-extraction, a drop (deletion flag) and re-creation
of the table, a second Spark pass over the same job (the execution's document rewritten, the
table a stub written only if absent), a purge of the element, and an edit made while a writer
was writing the element; each change recorded with its before and after."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pyhive import hive

from navd.annotations.rules import Edit
from navd.annotations.service import AnnotationService
from navd.catalog import navigator as navigator_reads
from navd.catalog.service import search, shown_entity
from navd.extractors.hms.extractor import HmsExtractor
from navd.extractors.spark.records import process_lines, stubs_for
from navd.index.client import IndexWriter, SolrIndex
from navd.model import Deletion, Element, ElementType, EntityRef, SourceType, identity
from navd.purge.purge import Purger
from navd_devstack.spark_thrift import SparkThriftServer
from navd.extractors import run_pass
from spark_fixtures import DEFAULT_FS, fixture_lines

CLUSTER = "anntest"


def qn(*parts: str) -> str:
    return ".".join(parts) + "@" + CLUSTER


@pytest.fixture
def sql(spark_thrift: SparkThriftServer) -> Iterator[Any]:
    connection = hive.connect("127.0.0.1", spark_thrift.port, username="navd")
    cursor = connection.cursor()

    def run(*statements: str) -> None:
        for statement in statements:
            cursor.execute(statement)

    yield run
    cursor.close()
    connection.close()


@pytest.fixture
def hms(spark_thrift: SparkThriftServer, index: SolrIndex, tmp_path: Path, unique: str) -> Iterator[Any]:
    """One HMS pass over the test's databases, as the extractor runs it: written, acknowledged, committed."""
    extractor = HmsExtractor(hive.connect("127.0.0.1", spark_thrift.port, username="navd"), index, cluster=CLUSTER,
                             default_fs="hdfs://ns", state_dir=tmp_path / "state", database_regex=f"{unique}_.*")

    def run(full: bool = False) -> None:
        writer = IndexWriter(index)
        assert run_pass(extractor, writer, full=full).complete
        assert writer.close(60)
        index.commit("elements")

    yield run
    extractor.close()


def names(index: SolrIndex, query: str) -> set[str]:
    return {str(d["qualifiedName"]) for d in search(index, "elements", query, rows=100).docs}


def test_annotations_are_searchable_and_survive_re_extraction_drop_and_re_creation(
        index: SolrIndex, sql: Any, hms: Any, unique: str) -> None:
    db = f"{unique}_ann"
    sql(f"CREATE DATABASE {db}",
        f"CREATE TABLE {db}.orders (id INT COMMENT 'order id', amount DOUBLE) USING parquet COMMENT 'all orders'",
        f"CREATE TABLE {db}.customers (c INT, d STRING) USING parquet",
        f"CREATE TABLE {db}.regions (r STRING, s STRING) USING parquet")
    hms()
    orders = identity("HIVE", qn(db, "orders"))
    service = AnnotationService(index)
    service.add_tags(orders, ["pii", "finance"], "eddie")
    service.set_description(orders, "inputs of the churn model", "eddie")
    service.set_properties(orders, {"owner": "bob"}, "ada")
    service.set_custom_properties(orders, {"sales.steward": "ann"}, "ada")
    service.set_name(orders, "Orders", "ada")
    service.add_tags(identity("HIVE", qn(db, "customers")), ["finance"], "eddie")
    ours = f"qualifiedName:{db}.*"

    def searchable(state: str) -> None:
        assert names(index, f"tags:pii AND {ours}") == {qn(db, "orders")}, state
        assert names(index, f"tags:FINANCE AND {ours}") == {qn(db, "orders"), qn(db, "customers")}, state
        assert names(index, f"description:*churn* AND {ours}") == {qn(db, "orders")}, state
        assert names(index, f"up_owner:bob AND {ours}") == {qn(db, "orders")}, state
        assert names(index, f"churn AND {ours}") == {qn(db, "orders")}, state  # the catch-all field
        # Navigator's query, as Hue's search sends it, and its entity as Hue reads it
        [entity] = navigator_reads.navigator_entities(index, f"tags:pii AND description:*churn* AND "
                                                             f"sales.steward:ann AND {ours}")
        assert (entity["name"], entity["description"], entity["tags"], entity["properties"],
                entity["customProperties"]) == ("Orders", "inputs of the churn model", ["finance", "pii"],
                                                {"owner": "bob"}, {"sales": {"steward": "ann"}}), state
        assert entity["originalDescription"] == "all orders", state  # the metastore's, apart

    searchable("after the edits")
    before = index.get("elements", [orders])[0]["lastIndexed"]
    hms(full=True)  # every element document written again, whole
    assert index.get("elements", [orders])[0]["lastIndexed"] != before
    searchable("after a full HMS run rewrote the documents")

    sql(f"DROP TABLE {db}.orders")
    hms()
    assert index.get("elements", [orders])[0]["deleted"] is True
    assert names(index, f"tags:pii AND {ours}") == {qn(db, "orders")}  # flagged, still annotated

    sql(f"CREATE TABLE {db}.orders (id INT, amount DOUBLE, note STRING) USING parquet COMMENT 'all orders'")
    hms()
    assert index.get("elements", [orders])[0]["deleted"] is False
    searchable("after the table was dropped and re-created")

    # the history: each change, who, before and after, oldest first
    changes = [(c.field, c.actor, c.before, c.after) for c in service.history(orders)]
    assert changes == [("tags", "eddie", [], ["finance", "pii"]),
                       ("description", "eddie", None, "inputs of the churn model"),
                       ("properties.owner", "ada", None, "bob"),
                       ("customProperties.sales.steward", "ada", None, "ann"),
                       ("name", "ada", None, "Orders")]
    # `navd entity` shows them from the records
    assert shown_entity(index, qn(db, "orders"))["annotations"]["tags"] == ["finance", "pii"]

    # removed: gone from search, recorded
    service.remove_tags(orders, ["pii"], "eddie")
    service.set_description(orders, None, "eddie")
    assert names(index, f"tags:pii AND {ours}") == set()
    assert names(index, f"description:*churn* AND {ours}") == set()
    assert [(c.field, c.before, c.after) for c in service.history(orders)][-2:] == [
        ("tags", ["finance", "pii"], ["finance"]), ("description", "inputs of the churn model", None)]
    assert service.edit(orders, Edit(add_tags=("finance",)), "eddie")[1] == []  # no change, nothing recorded
    assert len(service.history(orders)) == 7


def test_a_spark_pass_over_the_same_table_and_job_keeps_their_annotations(index: SolrIndex, unique: str) -> None:
    """The Spark extractor's records of a captured CTAS (the table it creates, the execution that
    ran it) written again, as a second pass over the same logs writes them."""
    cluster = f"sp{unique}"
    _run, records = process_lines(fixture_lines("ctas_expression"), cluster=cluster, default_fs=DEFAULT_FS,
                                  extractor_run_id=f"spark-{unique}")
    records = [*records, *stubs_for(records, f"spark-{unique}")]

    def spark_pass() -> None:
        writer = IndexWriter(index)
        writer.write_all(records)
        assert writer.close(60)
        index.commit("elements")

    spark_pass()
    execution = next(r for r in records if isinstance(r, Element) and r.type is ElementType.OPERATION_EXECUTION)
    table = identity("HIVE", f"sales.t@{cluster}")
    service = AnnotationService(index)
    service.add_tags(table, ["derived"], "eddie")
    service.set_description(execution.identity, "the nightly churn CTAS", "eddie")
    spark_pass()
    assert names(index, f"tags:derived AND qualifiedName:*@{cluster}") == {f"sales.t@{cluster}"}
    assert names(index, f"description:*churn* AND identity:{execution.identity}") == {execution.qualified_name}


def _file(path: str, *, deleted: bool = False) -> Element:
    return Element(SourceType.HDFS, ElementType.FILE, f"hdfs://ns{path}", path.rsplit("/", 1)[-1],
                   file_system_path=path, size=10, deleted=deleted)


def test_an_edit_made_while_a_writer_writes_the_element_is_projected_again_after_it(
        index: SolrIndex, unique: str) -> None:
    """The writer loaded what people wrote before the edit and writes the element after it: the
    document it writes lacks the edit, and its flush projects the edit again."""
    element = _file(f"/ann/{unique}/race.csv")
    writer = IndexWriter(index)
    writer.write_all([element])
    writer.flush()
    AnnotationService(index).add_tags(element.identity, ["late"], "eddie")
    writer.write_all([element])  # the carried-over copy it holds is from before the edit
    assert writer.close(60)
    index.commit("elements")
    assert names(index, f'tags:late AND fileSystemPath:"/ann/{unique}/race.csv"') == {element.qualified_name}


def test_a_purged_element_gets_its_annotation_back_when_it_is_indexed_again(index: SolrIndex, unique: str) -> None:
    element = _file(f"/ann/{unique}/purged.csv")
    writer = IndexWriter(index)
    writer.write_all([element])
    assert writer.close(60)
    AnnotationService(index).set_description(element.identity, "churn sample", "eddie")
    long_ago = datetime(2001, 1, 1, tzinfo=UTC)  # older than any other test's deletions: only this one is purged
    writer = IndexWriter(index)
    writer.write(Deletion(EntityRef(SourceType.HDFS, element.qualified_name, ElementType.FILE), long_ago))
    assert writer.close(60)
    Purger(index, threshold=datetime(2001, 6, 1, tzinfo=UTC)).run()
    assert index.get("elements", [element.identity]) == []
    writer = IndexWriter(index)
    writer.write_all([element])  # the file is back
    assert writer.close(60)
    index.commit("elements")
    assert names(index, f'description:*churn* AND fileSystemPath:"/ann/{unique}/purged.csv"') == \
        {element.qualified_name}


def test_edits_of_one_entity_at_once_are_all_kept(index: SolrIndex, unique: str) -> None:
    """Four people tag one entity at the same moment: the record's version makes each edit that
    lost the race read again and retry, so every tag is there and every change recorded."""
    element = _file(f"/ann/{unique}/shared.csv")
    writer = IndexWriter(index)
    writer.write_all([element])
    assert writer.close(60)
    service = AnnotationService(index)
    start = threading.Barrier(4)

    def tag(number: int) -> None:
        start.wait()
        service.add_tags(element.identity, [f"t{number}"], f"user{number}")

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(tag, range(4)))
    assert service.get(element.identity).tags == ("t0", "t1", "t2", "t3")
    assert sorted(c.actor for c in service.history(element.identity)) == ["user0", "user1", "user2", "user3"]
