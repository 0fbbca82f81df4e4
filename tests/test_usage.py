"""Usage, unused tables, job dependencies and impact, on a real pipeline: PySpark jobs
over Hive tables (the session metastore, its warehouse on the session HDFS), extracted by navd's
Spark, HMS and HDFS extractors. One pipeline run for the module:

    load_a  writes a          load_b  writes b          load_old  writes old_t
    load_p  writes p (two partitions, one execution each)
    read_old  reads old_t, its event log's times moved 40 days back (time through the index)
    join_ab   reads a and b, writes c                   count_a  reads a three times
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests

from conftest import serve_on_free_port, write_navd_config
from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr
from navd.usage.rules import DayCount, latest, per_day, window_start
from navd_devstack.hadoop import DevHdfs
from navd_devstack.metastore import HiveMetastore
from navd_devstack.spark_thrift import SparkThriftServer

NAVD = str(Path(sys.executable).parent / "navd")
#: how far back read_old's event log is moved
OLD_DAYS = 40
#: the keys of Spark's listener events that hold epoch milliseconds
TIME_KEYS = frozenset({"Timestamp", "time", "Submission Time", "Completion Time", "Launch Time", "Finish Time",
                       "Getting Result Time"})


# -- the pure rules -------------------------------------------------------------------------------

@pytest.mark.parametrize(("now", "days", "start"), [
    (datetime(2026, 11, 23, 20, 5, tzinfo=UTC), 1, datetime(2026, 11, 23, tzinfo=UTC)),
    (datetime(2026, 11, 23, 0, 0, tzinfo=UTC), 1, datetime(2026, 11, 23, tzinfo=UTC)),
    (datetime(2026, 11, 23, 20, 5, tzinfo=UTC), 30, datetime(2026, 10, 25, tzinfo=UTC)),
    (datetime(2026, 3, 1, 1, 0, tzinfo=UTC), 2, datetime(2026, 2, 28, tzinfo=UTC)),
])
def test_window_starts_at_midnight_utc(now: datetime, days: int, start: datetime) -> None:
    assert window_start(now, days) == start


def test_a_window_of_no_days_is_refused() -> None:
    with pytest.raises(ValueError, match="days=0"):
        window_start(datetime(2026, 11, 23, tzinfo=UTC), 0)


@pytest.mark.parametrize(("current", "candidate", "later"), [
    (None, None, None), (None, "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"),
    ("2026-01-02T00:00:00.000Z", "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z"),
    ("2026-01-01T00:00:00.000Z", None, "2026-01-01T00:00:00.000Z"),
])
def test_latest(current: str | None, candidate: str | None, later: str | None) -> None:
    assert latest(current, candidate) == later


def test_per_day_lists_the_days_with_reads_or_writes_oldest_first() -> None:
    assert per_day({"2026-01-02": 3, "2026-01-01": 1}, {"2026-01-03": 2}) == (
        DayCount("2026-01-01", 1, 0), DayCount("2026-01-02", 3, 0), DayCount("2026-01-03", 0, 2))


# -- the pipeline ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Pipeline:
    database: str
    cluster: str
    env: dict[str, str]
    apps: dict[str, str]  # app name -> application id

    def table(self, name: str) -> str:
        return f"{self.database}.{name}@{self.cluster}"

    def navd(self, *args: str) -> Any:
        ran = subprocess.run([NAVD, *args, "--format", "json"], env=self.env, capture_output=True, text=True,
                             timeout=240, check=False)
        assert ran.returncode == 0, (args, ran.stderr[-2000:])
        return json.loads(ran.stdout) if args[0] != "unused" else [json.loads(line) for line in ran.stdout.splitlines()]


def _apps(database: str) -> list[tuple[str, list[str]]]:
    db = database
    return [
        ("load_a", [f"CREATE DATABASE {db}", f"CREATE TABLE {db}.a (k INT, v INT) USING parquet",
                    f"INSERT INTO {db}.a VALUES (1, 10), (2, 20)"]),
        ("load_b", [f"CREATE TABLE {db}.b (k INT, w INT) USING parquet", f"INSERT INTO {db}.b VALUES (1, 5), (2, 6)"]),
        ("load_old", [f"CREATE TABLE {db}.old_t (k INT) USING parquet", f"INSERT INTO {db}.old_t VALUES (1)"]),
        ("load_p", [f"CREATE TABLE {db}.p (k INT, dt STRING) USING parquet PARTITIONED BY (dt)",
                    f"INSERT INTO {db}.p PARTITION (dt = '2026-01-01') VALUES (1)",
                    f"INSERT INTO {db}.p PARTITION (dt = '2026-01-02') VALUES (2)"]),
        ("read_old", [f"SELECT sum(k) FROM {db}.old_t"]),
        ("join_ab", [f"CREATE TABLE {db}.c (k INT, v INT, w INT) USING parquet",
                     f"INSERT INTO {db}.c SELECT a.k, a.v, b.w FROM {db}.a a JOIN {db}.b b ON a.k = b.k"]),
        ("count_a", [f"SELECT sum(v) FROM {db}.a"] * 3),
    ]


def run_apps(apps: list[tuple[str, list[str]]], events: Path, metastore: HiveMetastore, hdfs: DevHdfs) -> dict[str, str]:
    """The applications one after the other in one PySpark process (one JVM start); each an
    application of its own with its own event log, uncompressed so a test can move its times."""
    events.mkdir()
    script = textwrap.dedent(f"""
        import json, sys
        from pyspark.sql import SparkSession
        ids = {{}}
        for name, statements in json.loads(sys.argv[1]):
            spark = (SparkSession.builder.master("local[1]").appName(name)
                     .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
                     .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                     .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", {events.as_uri()!r})
                     .config("spark.eventLog.compress", "false").config("spark.eventLog.rolling.enabled", "false")
                     .config("spark.sql.warehouse.dir", {metastore.warehouse!r})
                     .config("spark.hadoop.hive.metastore.uris", {metastore.uri!r})
                     .enableHiveSupport().getOrCreate())
            ids[name] = spark.sparkContext.applicationId
            for statement in statements:
                spark.sql(statement).collect()
            spark.stop()
        print(json.dumps(ids))
    """)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "HADOOP_USER_NAME": hdfs.superuser}
    ran = subprocess.run([sys.executable, "-c", script, json.dumps(apps)], env=env, capture_output=True, text=True,
                         timeout=900, check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    return json.loads(ran.stdout.strip().splitlines()[-1])


def _shifted(value: Any, by_ms: int) -> Any:
    if isinstance(value, dict):
        return {k: (v - by_ms if k in TIME_KEYS and isinstance(v, int) and v > 10 ** 12 else _shifted(v, by_ms))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_shifted(v, by_ms) for v in value]
    return value


def move_back(log: Path, days: int) -> None:
    """Every time in an event log `days` days earlier: the run happened then, as far as the index knows."""
    by_ms = days * 86_400_000
    lines = [json.dumps(_shifted(json.loads(line), by_ms)) for line in log.read_text().splitlines() if line.strip()]
    log.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def pipeline(index: SolrIndex, solr_server: EmbeddedSolr, tmp_path_factory: pytest.TempPathFactory,
             hive_metastore: HiveMetastore, hdfs: DevHdfs, spark_thrift: SparkThriftServer) -> Pipeline:
    # `index` first: the session's cores created before the metastore, HDFS and Spark load the host
    tmp = tmp_path_factory.mktemp("usage")
    cluster = "u" + os.urandom(4).hex()
    database = f"{cluster}_use"
    events = tmp / "events"
    apps = run_apps(_apps(database), events, hive_metastore, hdfs)
    move_back(events / apps["read_old"], OLD_DAYS)
    config = tmp / "navd.toml"
    write_navd_config(config, solr_server, cluster=cluster, default_fs=hdfs.default_fs, body=
                      f'[hdfs]\nurls = ["{hdfs.webhdfs_url}"]\n'
                      f'user = "{hdfs.superuser}"\nroots = ["/user/hive/warehouse/{database}.db"]\n'
                      f'[hive]\nhost = "127.0.0.1"\nport = {spark_thrift.port}\ndatabase_regex = "{database}"\n'
                      f'[spark]\nevent_log_dirs = ["{events}"]\nstate_dir = "{tmp / "spark-state"}"\n')
    env = {**os.environ, "NAVD_CONFIG": str(config)}
    for command in (("extract", "spark", "--once"), ("extract", "hms"), ("extract", "hdfs"), ("link",)):
        ran = subprocess.run([NAVD, *command], env=env, capture_output=True, text=True, timeout=300, check=False)
        assert ran.returncode == 0, (command, ran.stderr[-2000:])
    return Pipeline(database, cluster, env, apps)


def test_usage_counts_every_read_and_write(pipeline: Pipeline, index: SolrIndex) -> None:
    found = pipeline.navd("usage", pipeline.table("a"), "--days", "7")
    # join_ab read a once, count_a three times: four reads, all in the window
    assert found["reads"] == 4, found
    assert sum(day["reads"] for day in found["byDay"]) == 4
    assert found["writes"] >= 1 and found["lastRead"] and found["lastWrite"]
    # generated: the end of the last execution that wrote it, load_a's INSERT
    writers = {d["identity"]: d for d in index.scan("elements", "*:*", fl="identity,qualifiedName,ended",
                                                        filters=["type:OPERATION_EXECUTION"])
               if d["qualifiedName"].startswith(f"spark://{pipeline.apps['load_a']}/")}
    assert found["generatedBy"] in writers and found["generated"] == writers[found["generatedBy"]]["ended"]
    columns = {c["column"]: c for c in found["columns"]}
    # column edges: join_ab copied a.v into c (count_a wrote nothing, so it has no column edges)
    assert columns[f"{pipeline.database}.a.v@{pipeline.cluster}"]["reads"] == 1
    column = pipeline.navd("usage", f"{pipeline.database}.a.v", "--days", "7")
    assert column["type"] == "FIELD" and column["reads"] == 1 and column["writes"] == 0


def test_usage_of_a_partitioned_table_gives_each_partition_its_generation_time(pipeline: Pipeline) -> None:
    found = pipeline.navd("usage", pipeline.table("p"), "--days", "7")
    assert found["writes"] >= 2, found
    partitions = {p["partition"].rsplit("/", 1)[-1]: p for p in found["partitions"]}
    assert set(partitions) == {"dt=2026-01-01", "dt=2026-01-02"}, found["partitions"]
    for partition in partitions.values():
        assert partition["directoryModified"] and partition["generated"]
    # each partition by the INSERT that wrote it: two different executions of load_p
    by = {p["execution"] for p in partitions.values()}
    assert None not in by and len(by) == 2, found["partitions"]


def test_unused_lists_a_table_last_read_before_the_window_not_one_read_in_it(pipeline: Pipeline) -> None:
    listed = {t["table"]: t for t in pipeline.navd("unused", "--days", "30", "--database", pipeline.database)}
    old = listed[pipeline.table("old_t")]
    read_on = datetime.now(UTC) - timedelta(days=OLD_DAYS)
    assert old["lastRead"][:10] in {(read_on + timedelta(days=d)).strftime("%Y-%m-%d") for d in (-1, 0, 1)}, old
    assert old["owner"] and old["size"] and old["size"] > 0, old
    assert pipeline.table("a") not in listed and pipeline.table("b") not in listed
    assert pipeline.table("c") in listed and listed[pipeline.table("c")]["lastRead"] is None
    # a window reaching back to the old read: it was read then
    longer = {t["table"] for t in pipeline.navd("unused", "--days", str(OLD_DAYS + 5), "--database", pipeline.database)}
    assert pipeline.table("old_t") not in longer and pipeline.table("c") in longer


def test_deps_of_a_job_reading_two_tables_written_by_two_other_jobs(pipeline: Pipeline) -> None:
    found = pipeline.navd("deps", "spark://join_ab")
    assert set(found["inputs"]) >= {pipeline.table("a"), pipeline.table("b")}, found
    producers = {p["qualifiedName"]: p for p in found["producers"]}
    assert set(producers) == {"spark://load_a", "spark://load_b"}, found
    assert producers["spark://load_a"]["datasets"] == [pipeline.table("a")]
    for name in ("load_a", "load_b"):
        run = producers[f"spark://{name}"]["lastRun"]
        assert run["qualifiedName"].startswith(f"spark://{pipeline.apps[name]}/") and run["ended"] and run["user"]
    # an execution of the job stands for it
    assert pipeline.navd("deps", pipeline.apps["join_ab"])["producers"] == found["producers"]


def test_impact_of_a_table_read_by_two_jobs(pipeline: Pipeline) -> None:
    found = pipeline.navd("impact", pipeline.table("a"))
    assert pipeline.table("c") in {d["qualifiedName"] for d in found["datasets"]}, found
    jobs = {j["qualifiedName"]: j for j in found["jobs"]}
    assert {"spark://join_ab", "spark://count_a"} <= set(jobs), found
    assert jobs["spark://count_a"]["datasets"] == [pipeline.table("a")]
    assert jobs["spark://join_ab"]["users"] and jobs["spark://count_a"]["lastRun"]["user"] in jobs["spark://count_a"]["users"]
    owners = {d["qualifiedName"]: d["owner"] for d in found["datasets"]}
    assert owners[pipeline.table("c")], found


def test_the_api_answers_as_the_cli(pipeline: Pipeline, solr_server: EmbeddedSolr,
                                    tmp_path: Path) -> None:
    with serve_on_free_port(tmp_path, solr_server, extra=f'[cluster]\nname = "{pipeline.cluster}"\n') as served:
        url = served.url
        spec = requests.get(f"{url}/openapi.json", timeout=30).json()
        assert {"/api/usage", "/api/unused", "/api/deps", "/api/impact"} <= set(spec["paths"])
        usage = requests.get(f"{url}/api/usage", params={"entity": pipeline.table("a"), "days": 7}, timeout=60).json()
        assert usage["reads"] == 4
        first = requests.get(f"{url}/api/unused", params={"days": 30, "database": pipeline.database, "rows": 1},
                             timeout=60).json()
        assert len(first["tables"]) == 1 and first["nextCursor"]
        rest = requests.get(f"{url}/api/unused", params={"days": 30, "database": pipeline.database, "rows": 50,
                                                         "cursor": first["nextCursor"]}, timeout=60).json()
        names = {t["table"] for t in first["tables"] + rest["tables"]}
        assert rest["nextCursor"] is None and {pipeline.table("old_t"), pipeline.table("c")} <= names
        assert pipeline.table("a") not in names
        deps = requests.get(f"{url}/api/deps", params={"job": "spark://join_ab"}, timeout=60).json()
        assert {p["qualifiedName"] for p in deps["producers"]} == {"spark://load_a", "spark://load_b"}
        impact = requests.get(f"{url}/api/impact", params={"entity": pipeline.table("a")}, timeout=60).json()
        assert impact == pipeline.navd("impact", pipeline.table("a"))
        bad = requests.get(f"{url}/api/usage", params={"entity": pipeline.table("a"), "days": 0}, timeout=60)
        assert bad.status_code == 400 and bad.json()["parameter"] == "days"
        missing = requests.get(f"{url}/api/deps", params={"job": "spark://no_such_job"}, timeout=60)
        assert missing.status_code == 404
        not_a_job = requests.get(f"{url}/api/deps", params={"job": pipeline.table("a")}, timeout=60)
        assert not_a_job.status_code == 400 and not_a_job.json()["parameter"] == "job"
