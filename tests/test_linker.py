"""The linker against a real Solr: aliases, idempotency, incremental passes, lineage, Spark mode."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any



from navd.index.client import IndexWriter, SolrIndex
from navd.lineage.rules import LineageOptions
from navd.lineage.service import lineage
from navd.linker.linker import Linker
from navd.index.documents import FIRST_SEEN, LAST_SEEN, parse_solr_date, relation_document
from navd.model import (DependencyType, Element, ElementStub, ElementType, EntityRef, Relation, RelationType,
                        SourceType)

H, D, T = SourceType.HDFS, ElementType.DIRECTORY, ElementType.TABLE
EXE = ElementType.OPERATION_EXECUTION


def write(index: SolrIndex, *records: Any) -> None:
    writer = IndexWriter(index)
    writer.write_all(records)
    assert writer.close()


def make_linker(index: SolrIndex, u: str, **kw: Any) -> Linker:
    return Linker(index, cluster=u, default_fs=f"hdfs://{u}ns", fs_aliases={f"{u}nn:8020": f"hdfs://{u}ns"},
                  state_id=f"linker-{u}", **kw)


def relations_of(index: SolrIndex, exe_id: str) -> list[dict[str, Any]]:
    index.commit("relations", soft=True)
    docs = index.search("relations", "*:*", rows=100, filters=[f"endpoint1Id:{exe_id} OR endpoint2Id:{exe_id}"])
    return sorted(docs["response"]["docs"], key=lambda d: d["identity"])


def scenario(u: str) -> tuple[list[Any], Element, dict[str, Element]]:
    """A Spark execution reading/writing datasets under spellings other than their indexed names."""
    exe = Element(SourceType.SPARK, EXE, f"spark://{u}app/1", name="1")
    real = {
        "nn": Element(H, D, f"hdfs://{u}ns/wh/sales.db/orders", name="orders"),
        "bare": Element(H, D, f"hdfs://{u}ns/bare/p", name="p"),
        "file": Element(H, ElementType.FILE, "file:///tmp/" + u + "/x", name="x"),
        "catalog": Element(SourceType.HIVE, T, f"sales.orders@{u}", name="orders"),
        "case": Element(SourceType.HIVE, T, f"sales.items@{u}", name="items"),
        "slash": Element(H, D, f"hdfs://{u}ns/slash/d", name="d"),
    }
    seen = {
        "nn": EntityRef(H, f"hdfs://{u}nn:8020/wh/sales.db/orders", D),
        "bare": EntityRef(H, "/bare/p/", D),
        "file": EntityRef(H, f"file:/tmp/{u}/x", ElementType.FILE),
        "catalog": EntityRef(SourceType.SPARK, f"spark_catalog.sales.orders@{u}", T),
        "case": EntityRef(SourceType.HIVE, f"Sales.ITEMS@{u.upper()}", T),
        "slash": EntityRef(H, f"hdfs://{u}ns/slash/d/", D),
    }
    records: list[Any] = [exe]
    for key, ref in seen.items():
        records.append(Relation(RelationType.DATA_FLOW, ref, exe.ref, linked1=False))
    records.append(Relation(RelationType.DATA_FLOW, exe.ref, EntityRef(H, f"hdfs://{u}ns/never", D), linked2=False))
    return records, exe, real


def test_every_alias_kind_links_and_twice_is_once(index: SolrIndex, unique: str) -> None:
    records, exe, real = scenario(unique)
    write(index, *records, *real.values())
    linker = make_linker(index, unique)
    first = linker.link(full=True)
    docs = relations_of(index, exe.identity)
    assert len(docs) == 7
    linked = {d["endpoint1Id"] for d in docs if not d["unlinked"]}
    assert linked == {e.identity for e in real.values()}
    never = [d for d in docs if d["unlinked"]]
    assert [d["endpoint2QualifiedName"] for d in never] == [f"hdfs://{unique}ns/never"]
    expected = {Relation(RelationType.DATA_FLOW, e.ref, exe.ref).identity for e in real.values()}
    assert expected <= {d["identity"] for d in docs}
    assert first.linked >= 6

    again = linker.link(full=True)
    assert again.linked == 0
    after = relations_of(index, exe.identity)
    assert [(d["identity"], d["unlinked"]) for d in after] == [(d["identity"], d["unlinked"]) for d in docs]


def test_incremental_far_end_appears_later(index: SolrIndex, unique: str) -> None:
    records, exe, real = scenario(unique)
    write(index, *records)
    linker = make_linker(index, unique, overlap_seconds=0)
    assert linker.link().linked == 0  # first pass: full, nothing to link to yet
    # nothing new: the incremental pass touches nothing
    quiet = linker.link()
    assert quiet.examined == 0 and not quiet.full
    # the far ends appear (old relations, new elements): found from the elements' side
    write(index, *real.values())
    report = linker.link()
    # every alias except a mixed-case Hive name (no extractor writes one): that waits for a full pass
    assert not report.full and report.linked == 5
    docs = relations_of(index, exe.identity)
    assert sum(1 for d in docs if d["unlinked"]) == 2 and len(docs) == 7
    assert linker.link(full=True).linked == 1
    docs = relations_of(index, exe.identity)
    assert sum(1 for d in docs if d["unlinked"]) == 1 and len(docs) == 7


def test_incremental_new_relation_to_old_element(index: SolrIndex, unique: str) -> None:
    records, exe, real = scenario(unique)
    write(index, real["nn"])
    linker = make_linker(index, unique, overlap_seconds=0)
    linker.link()
    write(index, exe, records[1])
    report = linker.link()
    assert (report.examined, report.linked, report.still_unlinked) == (1, 1, 0)


def test_stub_is_not_a_target_and_lineage_walks_through(index: SolrIndex, unique: str) -> None:
    u = unique
    exe = Element(SourceType.SPARK, EXE, f"spark://{u}app/2", name="2")
    src = Element(SourceType.HIVE, T, f"raw.events@{u}", name="events")
    seen_out = EntityRef(H, f"hdfs://{u}nn:8020/wh/sales.db/orders", D)
    dir_real = Element(H, D, f"hdfs://{u}ns/wh/sales.db/orders", name="orders")
    stub = ElementStub(Element(H, D, seen_out.qualified_name, name="orders", properties={"knownFrom": "spark"}))
    write(index, exe, src, stub, Relation(RelationType.DATA_FLOW, src.ref, exe.ref),
          Relation(RelationType.DATA_FLOW, exe.ref, seen_out, linked2=False))
    linker = make_linker(index, u)
    assert linker.link(full=True).linked == 0  # only the stub has that name: not a target
    write(index, dir_real)
    assert linker.link(full=True).linked == 1
    index.commit("relations", soft=True)
    graph = lineage(index, src.identity, LineageOptions(direction="downstream"))
    assert dir_real.identity in {n.id for n in graph.nodes}
    assert index.get("elements", [stub.element.identity])  # the stub stays


def test_linked_document_keeps_every_field(index: SolrIndex, unique: str) -> None:
    """The linked document is the one the extractor would have written knowing the element: the
    stored-only fields (expression, properties), the property fields and the times the relation
    was seen (firstSeen, lastSeen) survive the rewrite."""
    u = unique
    exe = Element(SourceType.SPARK, EXE, f"spark://{u}app/3", name="3")
    real = Element(H, D, f"hdfs://{u}ns/wh/kept", name="kept")
    seen = EntityRef(H, f"hdfs://{u}nn:8020/wh/kept", D)
    kinds = [
        {"properties": {"mark": "x y", "odd key": "é"}},
        {"dependency_type": DependencyType.EXPRESSION, "expression": "upper(a) + 1"},
        {"dependency_type": DependencyType.SIMPLE, "expression": "a", "properties": {"subtype": "FILTER"},
         "discriminator": "c1", "extractor_run_id": "run-1"},
        {"first_seen": datetime(2026, 3, 1, 8, 0, tzinfo=timezone.utc),
         "last_seen": datetime(2026, 3, 2, 9, 30, 15, tzinfo=timezone.utc)},
        {},
    ]
    unlinked = [Relation(RelationType.DATA_FLOW, exe.ref, seen, linked2=False,
                         **{"discriminator": f"d{i}", **kind}) for i, kind in enumerate(kinds)]
    write(index, exe, real, *unlinked)
    assert make_linker(index, u).link(full=True).linked >= len(kinds)
    expected = [relation_document(Relation(RelationType.DATA_FLOW, exe.ref, real.ref, **{"discriminator": f"d{i}", **kind}))
                for i, kind in enumerate(kinds)]
    index.commit("relations", soft=True)
    got = index.get("relations", [doc["identity"] for doc in expected])

    def comparable(doc: dict[str, Any]) -> dict[str, Any]:
        # times as instants: Solr renders 08:00:00Z where navd writes 08:00:00.000Z
        return {k: parse_solr_date(v) if k in (FIRST_SEEN, LAST_SEEN) else v for k, v in doc.items()
                if k not in ("lastIndexed", "_version_")}

    assert sorted(map(comparable, got), key=lambda d: d["identity"]) == sorted(map(comparable, expected),
                                                                               key=lambda d: d["identity"])
    assert not index.get("relations", [r.identity for r in unlinked])


def test_spark_mode_equals_incremental(index: SolrIndex, unique: str) -> None:
    from navd.linker.spark_link import spark_link  # noqa: PLC0415

    results = []
    for run in ("a", "b"):
        u = unique + run
        records, exe, real = scenario(u)
        write(index, *records, *real.values())
        if run == "a":
            report = make_linker(index, u).link(full=True)
        else:
            report = spark_link(index, cluster=u, default_fs=f"hdfs://{u}ns", fs_aliases={f"{u}nn:8020": f"hdfs://{u}ns"},
                                master="local[2]", state_id=f"linker-{u}")
        docs = relations_of(index, exe.identity)
        shape = sorted((d["endpoint1QualifiedName"].replace(u, "U"), d["endpoint2QualifiedName"].replace(u, "U"),
                        d["unlinked"]) for d in docs)
        results.append(shape)
        assert report.linked == 6
    assert results[0] == results[1]
