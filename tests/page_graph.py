"""Lineage graphs for the page's browser tests (tests/test_page.py) and its benchmark
(tests/bench/bench_page.py), written through navd's own model and writer.

`pipeline`: the temporary-tables pipeline's shape with everything the page draws differently: Hive tables with
columns, a temporary table dropped after use (deleted, with its columns), executions of an
operation with queryText and a run history, an input nobody indexed (unlinked), a control-flow
column edge, and an application named like an HTML tag. `fan`: a table written from many inputs,
each with its own upstream source, for the node cap. `tree`: a graph of a given size for the benchmark.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from navd.errors import SolrError
from navd.index.client import IndexWriter, SolrIndex
from navd.model import (
    DependencyType,
    Element,
    ElementType,
    EntityRef,
    Relation,
    RelationType,
    SourceType,
    hive_qualified_name,
    operation_qualified_name,
)

XSS_NAME = "<img src=x onerror=alert(1)>"
STARTED = datetime(2026, 11, 20, 6, tzinfo=UTC)
DROPPED = datetime(2026, 11, 20, 7, tzinfo=UTC)


def write(index: SolrIndex, records: Iterable[Element | Relation]) -> None:
    """Write the records through navd's writer and make them visible."""
    writer = IndexWriter(index)
    writer.write_all(records)
    if not writer.close():
        raise SolrError("the page's test graph was not completely written to Solr (see the log)")
    for core in ("elements", "relations"):
        index.commit(core, soft=True)


@dataclasses.dataclass(frozen=True)
class Pipeline:
    """raw -> (create) -> tmp [deleted] -> (merge) -> merged -> (<img ...>) -> report; the merge
    also reads `ghost`, which no extractor indexed. Identities by short name."""

    records: tuple[Element | Relation, ...]
    ids: dict[str, str]  # short name -> identity
    names: dict[str, str]  # short name -> originalName

    def id(self, short: str) -> str:
        return self.ids[short]


def pipeline(prefix: str) -> Pipeline:
    cluster = prefix
    records: list[Element | Relation] = []
    ids: dict[str, str] = {}
    names: dict[str, str] = {}

    def add(short: str, element: Element) -> Element:
        records.append(element)
        ids[short] = element.identity
        names[short] = element.name
        return element

    def table(short: str, columns: list[str], *, deleted: bool = False) -> tuple[Element, dict[str, Element]]:
        name = f"{prefix}_{short}"
        table = add(short, Element(SourceType.HIVE, ElementType.TABLE, hive_qualified_name(cluster, "shop", name),
                                   name=name, deleted=deleted, delete_time=DROPPED if deleted else None,
                                   properties={"tableType": "MANAGED_TABLE"}))
        cols = {}
        for position, column in enumerate(columns):
            cols[column] = add(f"{short}.{column}", Element(
                SourceType.HIVE, ElementType.FIELD, hive_qualified_name(cluster, "shop", name, column), name=column,
                parent=table.ref, data_type="bigint", deleted=deleted, delete_time=DROPPED if deleted else None,
                properties={"position": str(position)}))
        return table, cols

    def execution(short: str, name: str, started: datetime, query: str | None = None) -> Element:
        return add(short, Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION,
                                  operation_qualified_name(SourceType.SPARK, f"application_{prefix}_{short}", "1"),
                                  name=name, started=started, ended=started + timedelta(minutes=3), principal="etl",
                                  query_text=query, properties={"outcome": "SUCCEEDED"}))

    raw, raw_c = table("raw", ["id", "amount", "day"])
    tmp, tmp_c = table("tmp", ["id", "amount"], deleted=True)
    merged, merged_c = table("merged", ["id", "total", "day"])
    report, report_c = table("report", ["total_sum"])
    merge_query = f"INSERT OVERWRITE TABLE shop.{prefix}_merged SELECT id, sum(amount) AS total, day " \
                  f"FROM shop.{prefix}_tmp JOIN shop.{prefix}_ghost USING (id) WHERE day > '2026-11-01' GROUP BY id, day"
    template = add("merge_job", Element(SourceType.SPARK, ElementType.OPERATION,
                                        operation_qualified_name(SourceType.SPARK, f"{prefix}_merge_job"),
                                        name=f"{prefix}_merge_job", query_text=merge_query))
    create = execution("create", f"{prefix}_create_tmp", STARTED - timedelta(hours=1),
                       f"CREATE TABLE shop.{prefix}_tmp AS SELECT id, amount FROM shop.{prefix}_raw")
    merge = execution("merge", f"{prefix}_merge_job run 3", STARTED, merge_query)
    older = [execution(f"merge_{n}", f"{prefix}_merge_job run {n}", STARTED - timedelta(days=3 - n), merge_query)
             for n in (1, 2)]
    publish = execution("publish", XSS_NAME, STARTED + timedelta(hours=1))
    ghost = EntityRef(SourceType.HIVE, hive_qualified_name(cluster, "shop", f"{prefix}_ghost"), ElementType.TABLE)
    ids["ghost"] = ghost.identity

    def rel(kind: RelationType, one: Element | EntityRef, two: Element | EntityRef, **extra: object) -> None:
        records.append(Relation(kind, one.ref if isinstance(one, Element) else one,  # type: ignore[arg-type]
                                two.ref if isinstance(two, Element) else two, **extra))

    for owner, cols in ((raw, raw_c), (tmp, tmp_c), (merged, merged_c), (report, report_c)):
        for column in cols.values():
            rel(RelationType.PARENT_CHILD, owner, column)
    rel(RelationType.DATA_FLOW, raw, create)
    rel(RelationType.DATA_FLOW, create, tmp)
    rel(RelationType.DATA_FLOW, tmp, merge)
    rel(RelationType.DATA_FLOW, ghost, merge, linked1=False)
    rel(RelationType.DATA_FLOW, merge, merged)
    rel(RelationType.DATA_FLOW, merged, publish)
    rel(RelationType.DATA_FLOW, publish, report)
    for run in (merge, *older):
        rel(RelationType.INSTANCE_OF, template, run)

    def column_flow(source: Element, target: Element, job: Element, expression: str | None = None) -> None:
        rel(RelationType.DATA_FLOW, source, target, discriminator=job.qualified_name,
            dependency_type=DependencyType.EXPRESSION if expression else DependencyType.SIMPLE, expression=expression)

    column_flow(raw_c["id"], tmp_c["id"], create)
    column_flow(raw_c["amount"], tmp_c["amount"], create)
    column_flow(tmp_c["id"], merged_c["id"], merge)
    column_flow(tmp_c["amount"], merged_c["total"], merge, "sum(amount)")
    column_flow(merged_c["total"], report_c["total_sum"], publish, "sum(total)")
    # `day` filters the merge: a control-flow edge into total (the WHERE), and day itself is copied.
    rel(RelationType.CONTROL_FLOW, raw_c["day"], merged_c["total"], discriminator=merge.qualified_name)
    column_flow(raw_c["day"], merged_c["day"], merge)
    return Pipeline(tuple(records), ids, names)


def fan(prefix: str, inputs: int) -> tuple[list[Element | Relation], str, list[str]]:
    """`{prefix}_hub` written by one job from `inputs` tables, each written by its own job from its
    own source table. The records, the hub's identity and the inputs' identities."""
    cluster = prefix
    records: list[Element | Relation] = []

    def table(name: str) -> Element:
        element = Element(SourceType.HIVE, ElementType.TABLE, hive_qualified_name(cluster, "fan", name), name=name)
        records.append(element)
        return element

    def job(name: str) -> Element:
        element = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION,
                          operation_qualified_name(SourceType.SPARK, f"application_{prefix}_{name}", "1"), name=name,
                          started=STARTED)
        records.append(element)
        return element

    hub, into_hub = table(f"{prefix}_hub"), job(f"{prefix}_load_hub")
    relations = [Relation(RelationType.DATA_FLOW, into_hub.ref, hub.ref)]
    input_ids = []
    for n in range(inputs):
        source, middle, feeder = table(f"{prefix}_src{n}"), table(f"{prefix}_in{n}"), job(f"{prefix}_feed{n}")
        relations += [Relation(RelationType.DATA_FLOW, source.ref, feeder.ref),
                      Relation(RelationType.DATA_FLOW, feeder.ref, middle.ref),
                      Relation(RelationType.DATA_FLOW, middle.ref, into_hub.ref)]
        input_ids.append(middle.identity)
    return [*records, *relations], hub.identity, input_ids


def tree(prefix: str, nodes: int, fanout: int = 3) -> tuple[list[Element | Relation], str, int]:
    """A root table with about `nodes` nodes of lineage shown with operations: upstream, each
    table is written by one job from `fanout` tables; downstream, each table is read by one job
    that writes `fanout` tables; breadth first until half the nodes are on each side. The
    records, the root's identity and the depth that reaches every table."""
    cluster = prefix
    records: list[Element | Relation] = []
    count = 0

    def table(name: str) -> Element:
        nonlocal count
        count += 1
        element = Element(SourceType.HIVE, ElementType.TABLE, hive_qualified_name(cluster, "bench", name),
                          name=f"{prefix}_{name}")
        records.append(element)
        return element

    def job(name: str) -> Element:
        nonlocal count
        count += 1
        element = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION,
                          operation_qualified_name(SourceType.SPARK, f"application_{prefix}_{name}", "1"),
                          name=f"job {name}", started=STARTED)
        records.append(element)
        return element

    root = table("root")
    depth = 0
    for side, limit in (("up", nodes // 2), ("down", nodes)):
        level, hops = [root], 0
        while count < limit and level:
            hops += 1
            following = []
            for near in level:
                if count >= limit:
                    break
                runner = job(f"{side}_{near.name.removeprefix(prefix + '_')}")
                for n in range(fanout):
                    far = table(f"{side}{hops}_{len(following)}_{n}")
                    following.append(far)
                    one, two = (far, runner) if side == "up" else (runner, far)
                    records.append(Relation(RelationType.DATA_FLOW, one.ref, two.ref))
                one, two = (runner, near) if side == "up" else (near, runner)
                records.append(Relation(RelationType.DATA_FLOW, one.ref, two.ref))
            level = following
        depth = max(depth, hops)
    return records, root.identity, depth
