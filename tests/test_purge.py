"""Purge on crafted aged data in a real Solr: each of Navigator's purge rules, what must never be removed,
--dry-run, and a run stopped by its cap then continued."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from navd.index.client import IndexWriter, SolrIndex, serialise
from navd.model import Element, ElementType, Record, Relation, RelationType, SourceType
from navd.purge.purge import Purger
from navd.status import status
from navd.runs import Run

NOW = datetime.now(UTC)
OLD, RECENT = NOW - timedelta(days=100), NOW - timedelta(days=10)
THRESHOLD = NOW - timedelta(days=60)


def hive_table(name: str, deleted_at: datetime | None = None) -> Element:
    return Element(SourceType.HIVE, ElementType.TABLE, f"db.{name}@purge", name=name,
                   deleted=deleted_at is not None, delete_time=deleted_at)


def hdfs(kind: ElementType, path: str, deleted_at: datetime | None = None) -> Element:
    return Element(SourceType.HDFS, kind, f"hdfs://ns/{path}", name=path.rsplit("/", 1)[-1],
                   deleted=deleted_at is not None, delete_time=deleted_at)


def execution(name: str, ended: datetime) -> Element:
    return Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION, f"spark://{name}/1", name=name,
                   started=ended - timedelta(minutes=5), ended=ended)


def crafted() -> dict[str, Record]:
    template = Element(SourceType.SPARK, ElementType.OPERATION, "spark://nightly", name="nightly")
    source, table, gone_table = hive_table("src"), hive_table("out"), hive_table("old_temp", OLD)
    producer, reader, recent_reader = execution("producer", OLD), execution("reader", OLD), execution("recent", RECENT)
    old_file = hdfs(ElementType.FILE, "old/part-0", OLD)
    old_dir = hdfs(ElementType.DIRECTORY, "old", OLD)
    backing_dir, backing_file = hdfs(ElementType.DIRECTORY, "wh/t2", OLD), hdfs(ElementType.FILE, "wh/t2/p", RECENT)
    recent_dir, recent_file = hdfs(ElementType.DIRECTORY, "new", RECENT), hdfs(ElementType.FILE, "new/p", RECENT)
    t2 = hive_table("t2")
    R = RelationType
    return {
        "template": template, "source": source, "table": table, "gone_table": gone_table,
        "producer": producer, "reader": reader, "recent_reader": recent_reader,
        "old_dir": old_dir, "old_file": old_file, "backing_dir": backing_dir, "backing_file": backing_file,
        "recent_dir": recent_dir, "recent_file": recent_file, "t2": t2,
        "producer_instance": Relation(R.INSTANCE_OF, template.ref, producer.ref),
        "reader_instance": Relation(R.INSTANCE_OF, template.ref, reader.ref),
        "recent_instance": Relation(R.INSTANCE_OF, template.ref, recent_reader.ref),
        "producer_in": Relation(R.DATA_FLOW, source.ref, producer.ref),
        "producer_out": Relation(R.DATA_FLOW, producer.ref, table.ref),
        "producer_temp": Relation(R.DATA_FLOW, producer.ref, gone_table.ref),
        "reader_in": Relation(R.DATA_FLOW, source.ref, reader.ref),
        "recent_in": Relation(R.DATA_FLOW, source.ref, recent_reader.ref),
        "old_child": Relation(R.PARENT_CHILD, old_dir.ref, old_file.ref),
        "backing_child": Relation(R.PARENT_CHILD, backing_dir.ref, backing_file.ref),
        "recent_child": Relation(R.PARENT_CHILD, recent_dir.ref, recent_file.ref),
        "physical": Relation(R.LOGICAL_PHYSICAL, t2.ref, backing_dir.ref),
    }


def crafted_runs(component: str) -> dict[str, dict[str, object]]:
    """Run records of a component that stopped long ago: its last run failed, its last success
    came before that, and older runs of both kinds; plus another component's old and recent runs."""
    def record(name: str, state: str, ended: datetime, of: str = component) -> dict[str, object]:
        return Run(f"{of}##{name}", of, ended - timedelta(minutes=1)).document(state, ended=ended)

    return {
        "older_success": record("older_success", "SUCCEEDED", OLD - timedelta(days=3)),
        "older_failure": record("older_failure", "FAILED", OLD - timedelta(days=2)),
        "last_success": record("last_success", "SUCCEEDED", OLD - timedelta(days=1)),
        "last_run": record("last_run", "FAILED", OLD),
        "other_old": record("old", "SUCCEEDED", OLD, of=f"{component}.other"),
        "other_recent": record("recent", "SUCCEEDED", RECENT, of=f"{component}.other"),
    }


def present(index: SolrIndex, records: dict[str, Record]) -> set[str]:
    for core in ("elements", "relations"):
        index.commit(core)
    alive = set()
    for key, record in records.items():
        core = "relations" if isinstance(record, Relation) else "elements"
        if index.get(core, [record.identity]):
            alive.add(key)
    return alive


def test_purge_rules_dry_run_and_cap(clean_index: SolrIndex, navd) -> None:  # type: ignore[no-untyped-def]
    index = clean_index
    records = crafted()
    writer = IndexWriter(index)
    writer.write_all(records.values())
    assert writer.close(60)
    assert present(index, records) == set(records)
    component = f"test.purge.{NOW:%H%M%S%f}"
    runs = crafted_runs(component)
    index.post_update("runs", serialise(list(runs.values())))
    index.commit("runs")

    dry = Purger(index, threshold=THRESHOLD, dry_run=True).run()
    assert present(index, records) == set(records)  # nothing removed
    assert dry.complete and dry.removed == {"instance_of": 2, "data_flow": 1, "executions": 1,
                                            "hdfs_parent_child": 2, "deleted_entities": 2, "run_records": 3,
                                            "openlineage_events": 0}

    stopped = Purger(index, threshold=THRESHOLD, runtime_cap_seconds=0).run()
    assert not stopped.complete and sum(stopped.removed.values()) == 0

    done = Purger(index, threshold=THRESHOLD).run()
    assert done.complete and done.removed == dry.removed
    removed = set(records) - present(index, records)
    assert removed == {
        "producer_instance", "reader_instance",  # INSTANCE_OF to executions run before the threshold
        "reader", "reader_in",                   # an old execution without output, and its data flow
        "old_child", "backing_child",            # PARENT_CHILD below directories deleted long ago
        "old_dir", "old_file",                   # HDFS entities deleted before the threshold
    }
    # Never removed: the producer of a table (and its flows), Hive tables even when deleted, the
    # logical-physical relation and its directory, recent executions, recently deleted entities.
    for kept in ("producer", "producer_in", "producer_out", "producer_temp", "gone_table", "table",
                 "physical", "backing_dir", "recent_reader", "recent_instance", "recent_in",
                 "recent_dir", "recent_file", "recent_child", "backing_file"):
        assert kept not in removed, kept
    # Run records: old ones go, except what `navd status` shows (last run, last success).
    remaining = {key for key, doc in runs.items() if index.get("runs", [str(doc["identity"])])}
    assert remaining == {"last_success", "last_run", "other_recent"}
    shown = status(index)["components"][component]
    assert shown["last_run"]["identity"] == runs["last_run"]["identity"]
    assert shown["last_success"] == runs["last_success"]["ended"]

    again = Purger(index, threshold=THRESHOLD).run()  # idempotent
    assert sum(again.removed.values()) == 0

    cli = navd("purge", "--dry-run", "--json")
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["dry_run"] is True
