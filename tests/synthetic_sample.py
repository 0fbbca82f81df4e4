"""Test data: a small synthetic pipeline written straight through navd's writer (one Spark job
that turns raw order files and a Hive table into a daily revenue table, with column lineage and
one unlinked input), for tests that need a known graph in Solr without running Spark (the
server's API tests). The product's own demo is the real PySpark pipeline of `navd quickstart`
(navd/sample.py, navd/sample_job.py)."""

from __future__ import annotations

from collections.abc import Iterator
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
    path_qualified_name,
)

SAMPLE_FS = "hdfs://nameservice1"
SAMPLE_RUN_ID = "sample##1"
#: The final (adaptive) physical plan of the sample run, shortened, as the Spark extractor keeps it.
_SAMPLE_PLAN = """== Physical Plan ==
AdaptiveSparkPlan (9)
+- == Final Plan ==
   Execute InsertIntoHiveTable (8)
   +- WriteFiles (7)
      +- * HashAggregate (6)
         +- AQEShuffleRead (5)
            +- ShuffleQueryStage (4), Statistics(sizeInBytes=2.1 KiB, rowCount=90)
               +- Exchange (3)
                  +- * HashAggregate (2)
                     +- Scan hive spark_catalog.sales.orders (1)
"""


def index_sample(index: SolrIndex, cluster: str) -> dict[str, int]:
    """Write the sample and make it visible; what Solr acknowledged, per kind."""
    from navd.runner import make_visible  # noqa: PLC0415 - the runner imports the extractors' contract

    writer = IndexWriter(index)
    writer.write_all(sample_records(cluster))
    if not writer.close():
        raise SolrError("the sample was not completely written to Solr (see the log)")
    make_visible(index)
    return dict(writer.counts)


def sample_records(cluster: str) -> Iterator[Element | Relation]:
    """Elements first, then relations, as an extractor would emit them."""
    now = datetime(2026, 11, 1, 6, 0, tzinfo=UTC)
    run = SAMPLE_RUN_ID

    def directory(path: str, parent: Element | None) -> Element:
        return Element(SourceType.HDFS, ElementType.DIRECTORY, path_qualified_name(path, SAMPLE_FS),
                       name=path.rstrip("/").rsplit("/", 1)[-1] or "/",
                       parent=parent.ref if parent else None, file_system_path=path, owner="etl",
                       group="hadoop", permissions="rwxr-x---", last_modified=now,
                       extractor_run_id=run)

    root = directory("/data", None)
    raw = directory("/data/raw", root)
    orders_dir = directory("/data/raw/orders", raw)
    warehouse = directory("/user/hive/warehouse/sales.db/daily_revenue", None)
    files = [
        Element(SourceType.HDFS, ElementType.FILE,
                path_qualified_name(f"/data/raw/orders/orders_2026-11-0{day}.csv", SAMPLE_FS),
                name=f"orders_2026-11-0{day}.csv", parent=orders_dir.ref,
                file_system_path=f"/data/raw/orders/orders_2026-11-0{day}.csv", owner="etl",
                group="hadoop", permissions="rw-r-----", size=1_048_576 * day, block_size=134_217_728,
                replication=3, last_modified=now - timedelta(days=3 - day), extractor_run_id=run)
        for day in (1, 2, 3)
    ]
    database = Element(SourceType.HIVE, ElementType.DATABASE, hive_qualified_name(cluster, "sales"),
                       name="sales", owner="hive", extractor_run_id=run)
    orders = _table(cluster, database, "orders", ["order_id", "customer", "amount", "order_date"], run)
    revenue = _table(cluster, database, "daily_revenue", ["day", "revenue"], run)
    template = Element(SourceType.SPARK, ElementType.OPERATION,
                       operation_qualified_name(SourceType.SPARK, "daily_revenue_job"),
                       name="daily_revenue_job", extractor_run_id=run)
    execution = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION,
                        operation_qualified_name(SourceType.SPARK, "application_1730440000000_0042", "1"),
                        name="daily_revenue_job (application_1730440000000_0042)", principal="etl",
                        started=now, ended=now + timedelta(minutes=4), extractor_run_id=run,
                        query_text="INSERT OVERWRITE TABLE sales.daily_revenue "
                                   "SELECT order_date, sum(amount) FROM sales.orders GROUP BY order_date",
                        execution_plan=_SAMPLE_PLAN,
                        properties={"outcome": "SUCCEEDED", "sparkVersion": "4.0.1"})
    tables = [orders[0], revenue[0]]
    columns = orders[1] + revenue[1]
    yield from [root, raw, orders_dir, warehouse, *files, database, *tables, *columns, template, execution]

    def rel(kind: RelationType, one: Element, two: Element, **extra: object) -> Relation:
        return Relation(kind, one.ref, two.ref, extractor_run_id=run, **extra)  # type: ignore[arg-type]

    for parent, child in [(root, raw), (raw, orders_dir), *[(orders_dir, f) for f in files]]:
        yield rel(RelationType.PARENT_CHILD, parent, child)
    yield rel(RelationType.PARENT_CHILD, database, orders[0])
    yield rel(RelationType.PARENT_CHILD, database, revenue[0])
    for table, cols in (orders, revenue):
        for column in cols:
            yield rel(RelationType.PARENT_CHILD, table, column)
    yield rel(RelationType.LOGICAL_PHYSICAL, revenue[0], warehouse)
    # The orders table's directory is not in the sample: an unlinked relation, as Navigator keeps
    # until the HDFS extractor indexes the directory.
    orders_location = EntityRef(SourceType.HDFS, path_qualified_name(
        "/user/hive/warehouse/sales.db/orders", SAMPLE_FS), ElementType.DIRECTORY)
    yield Relation(RelationType.LOGICAL_PHYSICAL, orders[0].ref, orders_location, linked2=False,
                   extractor_run_id=run)
    yield rel(RelationType.INSTANCE_OF, template, execution)
    for source in (orders_dir, orders[0]):
        yield rel(RelationType.DATA_FLOW, source, execution)
    yield rel(RelationType.DATA_FLOW, execution, revenue[0])
    by_name = {c.name: c for c in columns}
    yield rel(RelationType.DATA_FLOW, by_name["order_date"], by_name["day"],
              dependency_type=DependencyType.SIMPLE, discriminator=execution.qualified_name)
    yield rel(RelationType.DATA_FLOW, by_name["amount"], by_name["revenue"],
              dependency_type=DependencyType.EXPRESSION, expression="sum(amount)",
              discriminator=execution.qualified_name)
    yield rel(RelationType.CONTROL_FLOW, by_name["order_date"], by_name["revenue"],
              discriminator=execution.qualified_name)


def _table(cluster: str, database: Element, table: str, column_names: list[str],
           run: str) -> tuple[Element, list[Element]]:
    element = Element(SourceType.HIVE, ElementType.TABLE,
                      hive_qualified_name(cluster, database.name, table), name=table,
                      parent=database.ref, owner="etl", extractor_run_id=run,
                      file_system_path=f"/user/hive/warehouse/sales.db/{table}",
                      properties={"tableType": "MANAGED_TABLE", "format": "parquet"})
    columns = [
        Element(SourceType.HIVE, ElementType.FIELD,
                hive_qualified_name(cluster, database.name, table, name), name=name,
                parent=element.ref, data_type="string" if name == "customer" else "bigint",
                extractor_run_id=run, properties={"position": str(position)})
        for position, name in enumerate(column_names)
    ]
    return element, columns
