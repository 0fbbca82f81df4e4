"""A generated lineage graph for benchmarks: Spark jobs over Hive tables, written through navd's
own model (navd.model records, navd.names qualified names) and writer (IndexWriter).

Streaming and deterministic: job `t` writes table `t`, and everything about job `t` (its table's
columns, whether the table is a temporary, which tables it reads) is a pure function of `(seed,
t)`. So the generator never holds more than one job's records, and any consumer (a benchmark
picking roots, a later run checking the index) can ask about table `t` without the graph.
It grows to 10M elements: memory stays flat, only the time grows.

The shape, per job `t` (about 33 elements and 70 relations per job on average):
- one Hive TABLE `db_<t // 1000>.t_<t>` with 10-50 columns (FIELD, PARENT_CHILD from the table),
  its warehouse DIRECTORY (LOGICAL_PHYSICAL), its DATABASE for every 1000th table;
- one Spark OPERATION_EXECUTION writing it (DATA_FLOW execution -> table), an INSTANCE_OF from
  its application's OPERATION (one of `FAMILIES`), the INSERT ... SELECT as its queryText;
- inputs: the first `HUBS` jobs are ingestion jobs reading one raw HDFS directory nobody indexed
  (an unlinked DATA_FLOW); every other job reads 1-5 tables (DATA_FLOW table -> execution):
  for half of the jobs one of them is a hub table (so each hub is read by hundreds of jobs), the
  others are recent tables (exponential look-back, mean `LOOKBACK`); 8% of the jobs also read an
  unlinked raw directory;
- column lineage: each output column from one input column (DATA_FLOW, SIMPLE or EXPRESSION,
  discriminated by the execution), and a CONTROL_FLOW from the first input's first column (the
  join key) when there are several inputs;
- temporaries: 8% of the tables are temporaries, dropped after the next job read them: their
  table and columns are stored deleted (deleteTime set), and job `t + 1` reads table `t`.

Run as a script to print the counts of a shape without Solr:
    python tests/bench/lineage_graph.py --elements 100000 --seed 1
"""

from __future__ import annotations

import argparse
import dataclasses
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from navd.model import (
    DependencyType,
    Element,
    ElementType,
    EntityRef,
    Record,
    Relation,
    RelationType,
    SourceType,
    hive_qualified_name,
    operation_qualified_name,
    path_qualified_name,
)

#: Bumped whenever the records generated for a (elements, seed) change: caches keyed on it.
GENERATOR_VERSION = 1
CLUSTER = "bench"
DEFAULT_FS = "hdfs://ns1"
#: Ingestion jobs: their tables are the hubs every other job may read.
HUBS = 20
#: Spark applications (OPERATION templates) the executions are runs of.
FAMILIES = 500
TABLES_PER_DATABASE = 1000
#: Mean look-back, in jobs, of a non-hub input.
LOOKBACK = 500
TEMPORARY_SHARE = 0.08
UNLINKED_SHARE = 0.08
HUB_READ_SHARE = 0.5
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclasses.dataclass(frozen=True)
class Shape:
    elements: int  # at least this many elements (the last job completes)
    seed: int = 1


# -- pure facts about job t ------------------------------------------------------------------

def _rng(seed: int, t: int, what: str) -> random.Random:
    return random.Random(f"{seed}/{what}/{t}")  # str seeds hash with SHA-512: stable across runs


def column_count(seed: int, t: int) -> int:
    return _rng(seed, t, "columns").randint(10, 50)


def is_temporary(seed: int, t: int) -> bool:
    return t >= HUBS and _rng(seed, t, "temporary").random() < TEMPORARY_SHARE


def table_name(seed: int, t: int) -> tuple[str, str]:
    """(database, table) of table t."""
    return f"db_{t // TABLES_PER_DATABASE}", (f"tmp_{t}" if is_temporary(seed, t) else f"t_{t}")


def table_ref(seed: int, t: int) -> EntityRef:
    return EntityRef(SourceType.HIVE, hive_qualified_name(CLUSTER, *table_name(seed, t)), ElementType.TABLE)


def column_ref(seed: int, t: int, i: int) -> EntityRef:
    return EntityRef(SourceType.HIVE, hive_qualified_name(CLUSTER, *table_name(seed, t), f"c{i}"),
                     ElementType.FIELD)


def inputs(seed: int, t: int) -> tuple[list[int], bool]:
    """The tables job t reads, in order without repeats, and whether it also reads an unlinked
    raw directory."""
    if t < HUBS:
        return [], True
    rng = _rng(seed, t, "inputs")
    wanted = rng.choices((1, 2, 3, 4, 5), weights=(30, 30, 20, 12, 8))[0]
    chosen: dict[int, None] = {}
    if is_temporary(seed, t - 1):
        chosen[t - 1] = None  # the temporary the previous job left for this one
    if rng.random() < HUB_READ_SHARE:
        chosen[rng.randrange(HUBS)] = None
    for _ in range(wanted * 3):  # bounded: early jobs have few tables to pick from
        if len(chosen) >= wanted:
            break
        back = 1 + int(rng.expovariate(1 / LOOKBACK))
        chosen[t - back if t - back >= HUBS else rng.randrange(t)] = None
    return list(chosen), rng.random() < UNLINKED_SHARE


def job_counts(seed: int, t: int) -> tuple[int, int]:
    """(elements, relations) job t writes: what `job_records` yields, without building it."""
    columns = column_count(seed, t)
    tables, unlinked = inputs(seed, t)
    elements = 1 + columns + 1 + 1 + (t % TABLES_PER_DATABASE == 0) + (t < FAMILIES)
    relations = (1 + columns + 1 + 1 + len(tables) + unlinked + 1 + (columns if tables else 0)
                 + (len(tables) > 1))
    return elements, relations


def jobs_for(shape: Shape) -> int:
    """How many jobs make at least `shape.elements` elements."""
    total = jobs = 0
    while total < shape.elements:
        total += job_counts(shape.seed, jobs)[0]
        jobs += 1
    return jobs


# -- records ---------------------------------------------------------------------------------

def job_records(seed: int, t: int) -> Iterator[Record]:
    """Job t's elements, then its relations, as an extractor would emit them."""
    database, table = table_name(seed, t)
    temporary = is_temporary(seed, t)
    started = EPOCH + timedelta(minutes=t)
    ended = started + timedelta(seconds=30 + t % 300)
    dropped = {"deleted": True, "delete_time": ended + timedelta(minutes=2)} if temporary else {}
    run = f"bench##{t // 1000}"
    db_ref = EntityRef(SourceType.HIVE, hive_qualified_name(CLUSTER, database), ElementType.DATABASE)
    if t % TABLES_PER_DATABASE == 0:
        yield Element(SourceType.HIVE, ElementType.DATABASE, db_ref.qualified_name, name=database, owner="hive",
                      extractor_run_id=run)
    location = f"/user/hive/warehouse/{database}.db/{table}"
    directory = Element(SourceType.HDFS, ElementType.DIRECTORY, path_qualified_name(location, DEFAULT_FS),
                        name=table, file_system_path=location, owner="etl", group="hadoop",
                        permissions="rwxr-x---", last_modified=ended, extractor_run_id=run, **dropped)
    output = Element(SourceType.HIVE, ElementType.TABLE, table_ref(seed, t).qualified_name, name=table,
                     parent=db_ref, owner="etl", file_system_path=location, created=ended, extractor_run_id=run,
                     properties={"tableType": "MANAGED_TABLE", "format": "parquet"}, **dropped)
    width = column_count(seed, t)
    columns = [Element(SourceType.HIVE, ElementType.FIELD, column_ref(seed, t, i).qualified_name, name=f"c{i}",
                       parent=output.ref, data_type=("bigint", "string", "double", "date")[i % 4],
                       extractor_run_id=run, properties={"position": str(i)}, **dropped)
               for i in range(width)]
    family = t % FAMILIES
    template = Element(SourceType.SPARK, ElementType.OPERATION,
                       operation_qualified_name(SourceType.SPARK, f"job_{family}"), name=f"job_{family}",
                       extractor_run_id=run)
    app = f"application_1767225600000_{t:06d}"
    tables, unlinked = inputs(seed, t)
    sources = [".".join(table_name(seed, s)) for s in tables] or [f"parquet.`/raw/feed_{t}`"]
    execution = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION,
                        operation_qualified_name(SourceType.SPARK, app, "1"), name=f"job_{family} ({app})",
                        principal="etl", started=started, ended=ended, extractor_run_id=run,
                        query_text=f"INSERT OVERWRITE TABLE {database}.{table} SELECT * FROM {' JOIN '.join(sources)}",
                        properties={"outcome": "SUCCEEDED", "sparkVersion": "4.0.1"})
    if t < FAMILIES:
        yield template
    yield from (output, *columns, directory, execution)

    def rel(kind: RelationType, one: EntityRef, two: EntityRef, **extra: object) -> Relation:
        return Relation(kind, one, two, extractor_run_id=run, **extra)  # type: ignore[arg-type]

    yield rel(RelationType.PARENT_CHILD, db_ref, output.ref)
    for column in columns:
        yield rel(RelationType.PARENT_CHILD, output.ref, column.ref)
    yield rel(RelationType.LOGICAL_PHYSICAL, output.ref, directory.ref)
    yield rel(RelationType.INSTANCE_OF, template.ref, execution.ref)
    for source in tables:
        yield rel(RelationType.DATA_FLOW, table_ref(seed, source), execution.ref)
    if unlinked:
        raw = EntityRef(SourceType.HDFS, path_qualified_name(f"/raw/feed_{t}", DEFAULT_FS), ElementType.DIRECTORY)
        yield Relation(RelationType.DATA_FLOW, raw, execution.ref, linked1=False, extractor_run_id=run)
    yield rel(RelationType.DATA_FLOW, execution.ref, output.ref)
    if not tables:
        return
    for i, column in enumerate(columns):
        source = tables[i % len(tables)]
        from_column = column_ref(seed, source, i % column_count(seed, source))
        if i % 3:
            yield rel(RelationType.DATA_FLOW, from_column, column.ref, dependency_type=DependencyType.SIMPLE,
                      discriminator=execution.qualified_name)
        else:
            yield rel(RelationType.DATA_FLOW, from_column, column.ref, dependency_type=DependencyType.EXPRESSION,
                      expression=f"upper({from_column.qualified_name.split('@')[0].rsplit('.', 1)[-1]})",
                      discriminator=execution.qualified_name)
    if len(tables) > 1:
        yield rel(RelationType.CONTROL_FLOW, column_ref(seed, tables[0], 0), columns[0].ref,
                  discriminator=execution.qualified_name)


def records(shape: Shape) -> Iterator[Record]:
    """Every record of the graph, job by job (streaming)."""
    for t in range(jobs_for(shape)):
        yield from job_records(shape.seed, t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    shape = Shape(args.elements, args.seed)
    jobs = jobs_for(shape)
    elements = relations = 0
    for t in range(jobs):
        e, r = job_counts(shape.seed, t)
        elements += e
        relations += r
    print(f"{jobs} jobs: {elements} elements, {relations} relations")


if __name__ == "__main__":
    main()
