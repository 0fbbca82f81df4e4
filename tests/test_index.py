"""The index client and the cores, against the session's real Solr 9."""

from __future__ import annotations

import shutil
import time
from concurrent.futures import Future
from datetime import UTC, datetime
from pathlib import Path

import pytest

from navd.errors import SolrError
from navd.index.admin import configset_dir, init_solr
from navd.index.client import CoreWriter, IndexWriter, SolrIndex
from navd.index.documents import element_document
from navd.model import (
    Deletion,
    Element,
    ElementStub,
    ElementType,
    EntityRef,
    Relation,
    RelationType,
    SourceType,
    identity,
)


def file_element(qualified_name: str, name: str, **extra: object) -> Element:
    return Element(SourceType.HDFS, ElementType.FILE, qualified_name, name=name, **extra)  # type: ignore[arg-type]


def test_second_init_is_a_no_op(index: SolrIndex) -> None:
    results = init_solr(index)
    assert [(r.core, r.action) for r in results] == [
        ("nav_elements", "unchanged"), ("nav_relations", "unchanged"), ("nav_runs", "unchanged")]


def test_changed_schema_is_applied_and_reverted(index: SolrIndex, tmp_path: Path, unique: str) -> None:
    conf_root = tmp_path / "solr_conf"
    for configset in ("nav_elements", "nav_relations", "nav_runs"):
        shutil.copytree(configset_dir(configset), conf_root / configset / "conf")
    schema = conf_root / "nav_elements" / "conf" / "schema.xml"
    schema.write_text(schema.read_text().replace(
        '<field name="dataType"', '<field name="navdTestField" type="string" indexed="true" stored="true"/>\n'
                                  '  <field name="dataType"'))
    try:
        changed = {r.core: r.action for r in init_solr(index, conf_root=conf_root)}
        assert changed == {"nav_elements": "updated", "nav_relations": "unchanged", "nav_runs": "unchanged"}
        doc = {**element_document(file_element(f"file:///{unique}", unique)), "navdTestField": "x"}
        index.add("elements", [doc])
        index.commit("elements")
        assert index.count("elements", "navdTestField:x") == 1
    finally:
        index.delete_query("elements", "navdTestField:*")
        index.commit("elements")
        reverted = {r.core: r.action for r in init_solr(index)}
    assert reverted["nav_elements"] == "updated"
    with pytest.raises(SolrError, match="undefined field navdTestField"):
        index.search("elements", "navdTestField:x")


def test_broken_schema_is_refused_and_the_core_keeps_working(index: SolrIndex, tmp_path: Path) -> None:
    conf_root = tmp_path / "solr_conf"
    for configset in ("nav_elements", "nav_relations", "nav_runs"):
        shutil.copytree(configset_dir(configset), conf_root / configset / "conf")
    schema = conf_root / "nav_relations" / "conf" / "schema.xml"
    schema.write_text(schema.read_text().replace('type="string"', 'type="no_such_type"', 1))
    with pytest.raises(SolrError, match="reload core nav_relations"):
        init_solr(index, conf_root=conf_root)
    assert index.count("relations") >= 0  # the previous configset was restored and reloaded
    assert {r.core: r.action for r in init_solr(index)}["nav_relations"] == "unchanged"


def test_indexing_the_same_element_twice_leaves_one_document(index: SolrIndex, unique: str) -> None:
    element = file_element(f"hdfs://ns/{unique}/a.csv", "a.csv", size=1)
    writer = IndexWriter(index)
    writer.write(element)
    writer.write(element)
    assert writer.close()
    again = IndexWriter(index)
    again.write(file_element(f"hdfs://ns/{unique}/a.csv", "a.csv", size=2))
    assert again.close()
    index.add("elements", [element_document(element)])  # and once more through the plain add
    index.commit("elements")
    docs = index.search("elements", f'qualifiedName:"hdfs://ns/{unique}/a.csv"')["response"]["docs"]
    assert len(docs) == 1
    assert docs[0]["identity"] == identity(SourceType.HDFS, f"hdfs://ns/{unique}/a.csv")


def test_writer_streams_many_batches_and_counts(index: SolrIndex, unique: str) -> None:
    writer = IndexWriter(index, batch_size=100, threads=2)
    root = EntityRef(SourceType.HDFS, f"hdfs://ns/{unique}", ElementType.DIRECTORY)
    for number in range(2_345):
        child = file_element(f"hdfs://ns/{unique}/f{number}", f"f{number}", parent=root)
        writer.write(child)
        writer.write(Relation(RelationType.PARENT_CHILD, root, child.ref))
    assert writer.close()
    assert writer.counts == {"elements": 2_345, "relations": 2_345, "stubs": 0, "deletions": 0}
    for core in ("elements", "relations"):
        index.commit(core)
    assert index.count("elements", f"parentQualifiedName:\"hdfs://ns/{unique}\"") == 2_345
    assert index.count("relations", f"endpoint1QualifiedName:\"hdfs://ns/{unique}\"") == 2_345


def test_stubs_never_overwrite_the_owners_document(index: SolrIndex, unique: str) -> None:
    """A Spark job's reference to a table creates it only if the HMS extractor has not."""
    owned = Element(SourceType.HIVE, ElementType.TABLE, f"{unique}.owned@primary", name="owned", owner="hms")
    only_referenced = Element(SourceType.HIVE, ElementType.TABLE, f"{unique}.temp@primary", name="temp")
    first = IndexWriter(index)
    first.write(owned)
    assert first.close()
    writer = IndexWriter(index, batch_size=2)
    writer.write_all([ElementStub(Element(SourceType.HIVE, ElementType.TABLE, owned.qualified_name, name="owned")),
                      ElementStub(only_referenced), ElementStub(only_referenced)])
    assert writer.close()
    docs = {d["qualifiedName"]: d for d in index.get("elements", [owned.identity, only_referenced.identity])}
    assert docs[owned.qualified_name]["owner"] == "hms"  # kept, not replaced by the stub
    assert docs[only_referenced.qualified_name]["originalName"] == "temp"
    owner = IndexWriter(index)
    owner.write(Element(SourceType.HIVE, ElementType.TABLE, only_referenced.qualified_name, name="temp",
                        owner="hms"))  # the owner's document wins
    assert owner.close()
    assert index.get("elements", [only_referenced.identity])[0]["owner"] == "hms"


def test_deletions_flag_indexed_elements_and_never_create_documents(index: SolrIndex, unique: str) -> None:
    kept = file_element(f"hdfs://nn/{unique}/gone.csv", "gone.csv", owner="etl", size=7)
    first = IndexWriter(index)
    first.write(kept)
    assert first.close()
    when = datetime(2026, 11, 22, 7, 0, tzinfo=UTC)
    never_indexed = EntityRef(SourceType.HDFS, f"hdfs://nn/{unique}/never.csv", ElementType.FILE)
    writer = IndexWriter(index, batch_size=1)
    writer.write_all([Deletion(kept.ref, when), Deletion(never_indexed, when)])
    assert writer.close() and writer.counts["deletions"] == 2
    [flagged] = index.get("elements", [kept.identity])
    assert flagged["deleted"] is True and flagged["deleteTime"] == "2026-11-22T07:00:00Z"
    assert (flagged["owner"], flagged["size"]) == ("etl", 7)  # the rest of the document stays
    assert index.get("elements", [never_indexed.identity]) == []


def test_scan_returns_every_document_once(index: SolrIndex, unique: str) -> None:
    index.add("elements", (element_document(file_element(f"hdfs://ns/{unique}/{n}", f"{unique}-{n}"))
                           for n in range(2_500)))
    index.commit("elements")
    seen = [d["qualifiedName"] for d in index.scan("elements", f"originalName:{unique}-*",
                                                      fl="qualifiedName", page_size=1000)]
    assert len(seen) == 2_500 and len(set(seen)) == 2_500


def test_real_time_get_of_more_ids_than_a_url_holds(index: SolrIndex, unique: str) -> None:
    """A real-time get of 1,200 identities (33 bytes each in the list: more than a request line
    Solr's Jetty takes) returns every one indexed, nothing else."""
    elements = [file_element(f"hdfs://ns/{unique}/g{n}", f"g{n}") for n in range(1_200)]
    index.add("elements", [element_document(e) for e in elements])
    asked = [e.identity for e in elements] + ["0" * 32]  # one never indexed
    found = index.get("elements", asked)
    assert sorted(d["identity"] for d in found) == sorted(e.identity for e in elements)


def test_partial_update_real_time_get_and_deletes(index: SolrIndex, unique: str) -> None:
    element = file_element(f"hdfs://ns/{unique}/p", "p", owner="etl")
    index.add("elements", [element_document(element)])
    now = "2026-11-22T10:00:00.000Z"
    index.atomic_update("elements", [{"identity": element.identity, "deleted": {"set": True},
                                      "deleteTime": {"set": now}}])
    [doc] = index.get("elements", [element.identity])  # real-time get: no commit needed
    assert doc["deleted"] is True and doc["deleteTime"] == "2026-11-22T10:00:00Z"
    assert doc["owner"] == "etl"
    with pytest.raises(SolrError, match="HTTP 409"):
        index.atomic_update("elements", [{"identity": "0" * 32, "deleted": {"set": True}}])
    assert index.get("elements", ["0" * 32]) == []  # no stub document was created
    index.delete_ids("elements", [element.identity])
    assert index.get("elements", [element.identity]) == []


def test_substring_and_free_text_search(index: SolrIndex, unique: str) -> None:
    when = datetime(2026, 11, 3, tzinfo=UTC)
    records = [
        file_element(f"hdfs://ns/data/raw/2026/11/{unique}-Orders.csv", f"{unique}-Orders.csv",
                     file_system_path=f"/data/raw/2026/11/{unique}-Orders.csv", last_modified=when),
        Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION, f"spark://{unique}/1", name=f"{unique} job",
                query_text=f"INSERT INTO sample_merge SELECT * FROM default.temp_sample_08_{unique};"),
        file_element(f"hdfs://ns/data/{unique}/données été.csv", "données été.csv"),
    ]
    writer = IndexWriter(index)
    writer.write_all(records)
    assert writer.close()
    index.commit("elements")

    def found(query: str) -> set[str]:
        return {d["qualifiedName"] for d in index.search("elements", query, rows=50)["response"]["docs"]}

    assert found(f"originalName:*{unique}-ORD*") == {records[0].qualified_name}
    assert found(f"fileSystemPath:*2026/11/{unique}*") == {records[0].qualified_name}
    assert found(f"queryText:*temp_sample_08_{unique}*") == {records[1].qualified_name}
    assert found(f'originalName:"données été.csv" AND qualifiedName:*{unique}*') == {records[2].qualified_name}
    assert records[0].qualified_name in found(f"{unique} orders")  # catch-all text field
    assert found(f"lastModified:[2026-11-01T00:00:00Z TO 2026-11-05T00:00:00Z] AND originalName:{unique}*") \
        == {records[0].qualified_name}


def test_solr_errors_are_one_clear_line(index: SolrIndex) -> None:
    with pytest.raises(SolrError) as bad_query:
        index.search("elements", "type:(")
    assert bad_query.value.status == 400
    assert "Cannot parse" in str(bad_query.value) and "\n" not in str(bad_query.value)
    with pytest.raises(SolrError, match=r"update of nav_elements: HTTP 400: \[doc=x\] missing required field: qualifiedName$"):
        index.add("elements", [{"identity": "x", "type": "FILE", "sourceType": "HDFS"}])


def test_a_failed_batch_fails_the_flush_even_before_its_callback_ran(index: SolrIndex, unique: str) -> None:
    """A future wakes whoever waits on it before it runs its done-callbacks; on a busy host the
    writer's callback can come after flush() woke up. flush must still report the failed batch,
    or a tailer commits positions past records Solr never got (CI ci11: "positions advanced
    while Solr was down")."""
    writer = CoreWriter(index, "elements", batch_size=10, threads=1)
    on_time = writer._done

    def late(future: Future[None]) -> None:
        time.sleep(0.5)  # the scheduling delay of a loaded host, made certain
        on_time(future)

    writer._done = late  # type: ignore[method-assign]
    writer.add({"identity": f"{unique}-no-name", "type": "FILE", "sourceType": "HDFS"})  # Solr refuses: HTTP 400
    with pytest.raises(SolrError, match="missing required field: qualifiedName"):
        writer.flush()
    with pytest.raises(SolrError, match="missing required field"):  # and every later flush says so too
        writer.flush()
    assert not writer.close()
