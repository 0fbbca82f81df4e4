"""kill -9 at random moments of each component that writes, then a restart to completion: the
index ends up document by document as after one clean run (0 lost, 0 duplicated, 0 changed).

CI runs this fixed-seed slice (CHAOS_KILLS=2 kill points per component); `make chaos` the full
campaign (tests/chaos.py says how a round goes)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hdfs import Client

from chaos import Outcome, Scenario, campaign, empty, navd_env, summary
from conftest import solr_section
from lineage_logs import HIVE, impala_cases, impala_line
from navd.index.client import IndexWriter, SolrIndex
from navd.model import Element, ElementType, EntityRef, Relation, RelationType, SourceType
from navd.solr.server import EmbeddedSolr
from navd_devstack.hadoop import DevHdfs
from test_spark_extractor import captured_log

KILLS = int(os.environ.get("CHAOS_KILLS", "2"))
SEED = int(os.environ.get("CHAOS_SEED", "24"))
SPARK_COPIES = 40
LINEAGE_QUERIES = 200
PURGED = 1_500
HDFS_DIRECTORIES, HDFS_FILES = 30, 10
CTAS = "create table lineage_test_tbl as select int_col, tinyint_col from functional.alltypes"
OUTCOMES: list[Outcome] = []


@pytest.fixture(scope="module", autouse=True)
def campaign_summary() -> Iterator[None]:
    yield
    if OUTCOMES:
        print("\n" + "\n".join(o.line() for o in OUTCOMES) + "\n" + summary(OUTCOMES))


def scenario(index: SolrIndex, tmp: Path, name: str, command: tuple[str, ...], solr: str, body: str,
             lay: Callable[[], None] | None = None) -> Scenario:
    def reset(label: str) -> Mapping[str, str]:
        empty(index)
        if lay is not None:
            lay()
        return navd_env(tmp, label, solr, body)

    return Scenario(name, command, reset)


def check(index: SolrIndex, chosen: Scenario) -> None:
    outcome = campaign(index, chosen, kills=KILLS, seed=SEED)
    OUTCOMES.append(outcome)
    assert outcome.kill_points >= 1, outcome.line()
    assert (outcome.lost, outcome.duplicated, outcome.changed) == (0, 0, 0), outcome.line()


def test_spark_tail(index: SolrIndex, solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    logs = tmp_path / "events"
    app_id, lines = captured_log("column_shapes", logs)
    (logs / app_id).unlink()
    text = b"".join(lines)
    for number in range(SPARK_COPIES):  # each copy another application: its own documents
        copy_id = f"{app_id}{number:03d}"
        (logs / copy_id).write_bytes(text.replace(app_id.encode(), copy_id.encode()))
    check(index, scenario(index, tmp_path, "spark", ("extract", "spark", "--once"), solr_section(solr_server),
                          f'[spark]\nevent_log_dirs = ["{logs}"]\npoll_seconds = 0.2\n'))


def test_impala_lineage_log(index: SolrIndex, solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    logs = tmp_path / "impala"
    logs.mkdir()
    case = impala_cases()[CTAS]
    with (logs / "impala_lineage_log_1.0-1700000000000").open("w") as fh:
        for i in range(LINEAGE_QUERIES):  # each query its own id and target, one of 20 sources
            line = impala_line(case, query_id=f"{i:016x}:0000000000000000", end_time=case["timestamp"] + 2)
            fh.write(line.replace("lineage_test_tbl", f"out_{i}").replace("functional.alltypes",
                                                                          f"functional.src_{i % 20}") + "\n")
    check(index, scenario(index, tmp_path, "impala", ("extract", "impala", "--once"), solr_section(solr_server),
                          f'[impala]\nlineage_dirs = ["{logs}"]\n'))


def test_hive_lineage_log(index: SolrIndex, solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    logs = tmp_path / "hive"
    logs.mkdir()
    [_, record, *_] = (HIVE / "hiveserver2-lineage.log").read_text().splitlines(keepends=True)
    with (logs / "lineage.log").open("w") as fh:
        for i in range(LINEAGE_QUERIES):  # each query its own hash, job, time and target
            fh.write(record.replace("87921246fb098d44c05e0ccd9ecb0676", f"{i:032x}")
                     .replace("job_1700000000000_0001", f"job_1700000000000_{i:04d}")
                     .replace('"timestamp":1700000000', f'"timestamp":{1700000000 + i}')
                     .replace("src2", f"src2_{i}"))
    check(index, scenario(index, tmp_path, "hive-lineage", ("extract", "hive-lineage", "--once"),
                          solr_section(solr_server), f'[hive_lineage]\nlog_paths = ["{logs}/lineage.log*"]\n'))


def aged_documents(index: SolrIndex, now: datetime) -> None:
    """What purge removes and what it keeps (tests/test_purge.py's rules, many times over): old
    executions of a template with their flows, old deleted files, recent executions."""
    old, recent = now - timedelta(days=100), now - timedelta(days=10)
    source = Element(SourceType.HIVE, ElementType.TABLE, "db.src@chaos", name="src")
    template = Element(SourceType.SPARK, ElementType.OPERATION, "spark://nightly", name="nightly")
    directory = EntityRef(SourceType.HDFS, "hdfs://ns/old", ElementType.DIRECTORY)
    writer = IndexWriter(index)
    writer.write(source)
    writer.write(template)
    for i in range(PURGED):
        ended = old if i % 5 else recent
        run = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION, f"spark://reader{i}/1", name=f"reader{i}",
                      started=ended - timedelta(minutes=5), ended=ended)
        gone = Element(SourceType.HDFS, ElementType.FILE, f"hdfs://ns/old/part-{i}", name=f"part-{i}",
                       deleted=True, delete_time=old if i % 3 else recent)
        for record in (run, gone, Relation(RelationType.INSTANCE_OF, template.ref, run.ref),
                       Relation(RelationType.DATA_FLOW, source.ref, run.ref),
                       Relation(RelationType.PARENT_CHILD, directory, gone.ref)):
            writer.write(record)
    assert writer.close()
    for core in ("elements", "relations"):
        index.commit(core)


def test_purge(index: SolrIndex, solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    now = datetime.now(UTC)  # one time for every round: the clean run's documents and the killed runs' alike
    check(index, scenario(index, tmp_path, "purge", ("purge",), solr_section(solr_server), "",
                          lay=lambda: aged_documents(index, now)))


def test_hdfs(index: SolrIndex, solr_server: EmbeddedSolr, hdfs: DevHdfs, hdfs_client: Client, unique: str,
              tmp_path: Path) -> None:
    root = f"/{unique}"
    for directory in range(HDFS_DIRECTORIES):
        for number in range(HDFS_FILES):
            hdfs_client.write(f"{root}/d{directory}/part-{number}", data=b"x")
    check(index, scenario(index, tmp_path, "hdfs", ("extract", "hdfs"), solr_section(solr_server),
                          f'[hdfs]\nurls = ["{hdfs.webhdfs_url}"]\ndefault_fs = "{hdfs.default_fs}"\n'
                          f'roots = ["{root}"]\nuser = "{hdfs.superuser}"\n'))
