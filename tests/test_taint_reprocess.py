"""Taint and reprocess on the real services: PySpark jobs build an hourly ->
daily -> monthly chain of partitioned datasets on HDFS (3 days x 10 hours, tiny rows), Hive
tables sit on them with their partitions, navd extracts Spark's event logs, the metastore and
HDFS; then `navd reprocess` of 10 tainted hours lists exactly the daily and monthly partitions
they touch and the runs that wrote them, in dependency order. One pipeline for the module."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import requests
from pyhive import hive

from conftest import serving, write_navd_config
from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr, free_port
from navd_devstack.hadoop import DevHdfs
from navd_devstack.spark_thrift import SparkThriftServer
from test_lineage_across_sources import run_job

DAYS = ("2026-10-31", "2026-11-01", "2026-11-02")
HOURS = (0, 1, 2, 3, 4, 19, 20, 21, 22, 23)
MONTHS = ("2026-10", "2026-11")
#: 10 bad hours across midnight: 19-23 of Nov 1st and 00-04 of Nov 2nd
TAINT = ("2026-11-01T19:00:00Z", "2026-11-02T05:00:00Z")
TAINTED_HOURS = [f"dt=2026-11-01/hr={h:02d}" for h in (19, 20, 21, 22, 23)] + \
                [f"dt=2026-11-02/hr={h:02d}" for h in (0, 1, 2, 3, 4)]


NAVD = str(Path(sys.executable).parent / "navd")


@dataclasses.dataclass(frozen=True)
class Pipeline:
    env: dict[str, str]
    config: Path
    database: str
    cluster: str
    paths: dict[str, str]  # hourly, daily, monthly -> their directory URI


@pytest.fixture(scope="module")
def pipeline(hdfs: DevHdfs, hdfs_client: Any, spark_thrift: SparkThriftServer, solr_server: EmbeddedSolr,
             index: SolrIndex, tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    import uuid

    unique = "t" + uuid.uuid4().hex[:10]
    tmp_path = tmp_path_factory.mktemp("reprocess")
    base = f"{hdfs.default_fs}/{unique}/w"
    paths = {name: f"{base}/{name}" for name in ("hourly", "daily", "monthly")}
    rows = [(day, f"{hour:02d}", hour + 1) for day in DAYS for hour in HOURS]
    # One application: the hourly load (one write of every hour), one daily run per day reading
    # that day's hours, one monthly run per month reading the daily dataset whole.
    events = run_job("hourly_daily_monthly", f"""
        from pyspark.sql import functions as F
        spark.createDataFrame({rows!r}, "dt string, hr string, v long").write.partitionBy("dt", "hr") \\
            .parquet({paths['hourly']!r})
        for day in {DAYS!r}:
            spark.read.parquet({paths['hourly']!r} + "/dt=" + day).groupBy().agg(F.sum("v").alias("v")) \\
                .write.parquet({paths['daily']!r} + "/dt=" + day)
        for month in {MONTHS!r}:
            daily = spark.read.parquet({paths['daily']!r})
            daily.where(F.col("dt").cast("string").startswith(month)).groupBy().agg(F.sum("v").alias("v")) \\
                .write.parquet({paths['monthly']!r} + "/month=" + month)
    """, hdfs, tmp_path)
    database = f"{unique}_chain"
    with hive.connect("127.0.0.1", spark_thrift.port, username="navd") as conn:
        cursor = conn.cursor()
        cursor.execute(f"CREATE DATABASE {database}")
        for name, keys in (("hourly", "dt STRING, hr STRING"), ("daily", "dt STRING"), ("monthly", "month STRING")):
            cursor.execute(f"CREATE TABLE {database}.{name} (v BIGINT, {keys}) USING parquet "
                           f"PARTITIONED BY ({', '.join(k.split()[0] for k in keys.split(', '))}) "
                           f"LOCATION '{paths[name]}'")
            cursor.execute(f"MSCK REPAIR TABLE {database}.{name}")
    config = tmp_path / "navd.toml"
    write_navd_config(config, solr_server, f'[hdfs]\nurls = ["{hdfs.webhdfs_url}"]\n'
                      f'user = "{hdfs.superuser}"\nroots = ["/{unique}"]\n'
                      f'[hive]\nhost = "127.0.0.1"\nport = {spark_thrift.port}\ndatabase_regex = "{database}"\n'
                      f'[spark]\nevent_log_dirs = ["{events}"]\nstate_dir = "{tmp_path / "spark-state"}"\n',
                      cluster=unique, default_fs=hdfs.default_fs)
    env = {**os.environ, "NAVD_CONFIG": str(config)}
    for command in (("extract", "spark", "--once"), ("extract", "hms"), ("extract", "hdfs"), ("link",)):
        result = navd_command(env, *command)
        assert result.returncode == 0, f"{command}: {result.stderr[-2000:]}"
    return Pipeline(env, config, database, unique, paths)


def navd_command(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The installed `navd` command, as a user runs it."""
    return subprocess.run([NAVD, *args], env=env, capture_output=True, text=True, timeout=600, check=False)


def navd_json(pipeline: Pipeline, *args: str) -> Any:
    result = navd_command(pipeline.env, *args, *(() if args[0] == "entity" else ("--format",)),
                          *(("--json",) if args[0] == "entity" else ("json",)))
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def writer_of(index: SolrIndex, directory: str) -> str:
    """The execution the Spark extractor recorded writing `directory` (its DATA_FLOW in)."""
    [relation] = index.search("relations", "type:DATA_FLOW AND endpoint1Type:OPERATION_EXECUTION", rows=5,
                              filters=[f'endpoint2QualifiedName:"{directory}"'],
                              fl="endpoint1Id")["response"]["docs"]
    return str(relation["endpoint1Id"])


def expected_plan(pipeline: Pipeline, index: SolrIndex) -> dict[str, Any]:
    daily, monthly = pipeline.paths["daily"], pipeline.paths["monthly"]
    table = f"{pipeline.database}.{{}}@{pipeline.cluster}".format
    runs = [(writer_of(index, f"{daily}/dt=2026-11-01"), table("daily"), ["dt=2026-11-01"],
             "2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z"),
            (writer_of(index, f"{daily}/dt=2026-11-02"), table("daily"), ["dt=2026-11-02"],
             "2026-11-02T00:00:00Z", "2026-11-03T00:00:00Z"),
            (writer_of(index, f"{monthly}/month=2026-11"), table("monthly"), ["month=2026-11"],
             "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z")]
    return {"datasets": [(table("hourly"), "tainted", TAINTED_HOURS, [None] * 10),
                         (table("daily"), "affected", ["dt=2026-11-01", "dt=2026-11-02"], [runs[0][0], runs[1][0]]),
                         (table("monthly"), "affected", ["month=2026-11"], [runs[2][0]])],
            "runs": runs}


def shown_plan(plan: dict[str, Any]) -> dict[str, Any]:
    return {"datasets": [(d["dataset"], d["role"], [p["partition"] for p in d["partitions"]],
                          [p["run"] for p in d["partitions"]]) for d in plan["datasets"]],
            "runs": [(r["run"], r["dataset"], r["partitions"], r["from"], r["to"]) for r in plan["runs"]]}


def test_reprocess_of_ten_tainted_hours_lists_the_days_and_the_month_and_their_runs_in_order(
        pipeline: Pipeline, index: SolrIndex) -> None:
    hourly = f"{pipeline.database}.hourly"
    plan = navd_json(pipeline, "reprocess", hourly, "--from", TAINT[0], "--to", TAINT[1])
    assert shown_plan(plan) == expected_plan(pipeline, index)
    assert plan["periods"] == [{"from": TAINT[0], "to": TAINT[1]}]
    daily = plan["datasets"][1]
    assert daily["upstream"] == [f"{pipeline.database}.hourly@{pipeline.cluster}"]
    assert daily["periods"] == [{"from": "2026-11-01T00:00:00Z", "to": "2026-11-03T00:00:00Z"}]
    assert [p["granularity"] for p in daily["partitions"]] == ["day", "day"]
    assert all(r["started"] and r["ended"] and r["started"] <= r["ended"] for r in plan["runs"])
    # the text a person reads: the same order
    text = navd_command(pipeline.env, "reprocess", hourly, "--from", TAINT[0], "--to", TAINT[1])
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[1].startswith(f"1. {pipeline.database}.hourly@") and "(tainted, 10 partitions)" in lines[1]
    assert any(line.startswith(f"2. {pipeline.database}.daily@") for line in lines)
    assert lines[lines.index("runs to redo, in order:") + 3].startswith("3. ")


def test_one_tainted_day_of_the_daily_dataset_and_a_bad_range(pipeline: Pipeline, index: SolrIndex) -> None:
    """Tainting a partition by its name: its own period; downstream only the month holding it."""
    partition = f"{pipeline.database}.daily@{pipeline.cluster}/dt=2026-10-31"
    plan = navd_json(pipeline, "reprocess", partition)
    assert [(d["dataset"], [p["partition"] for p in d["partitions"]]) for d in plan["datasets"]] == [
        (f"{pipeline.database}.daily@{pipeline.cluster}", ["dt=2026-10-31"]),
        (f"{pipeline.database}.monthly@{pipeline.cluster}", ["month=2026-10"])]
    assert [r["run"] for r in plan["runs"]] == [writer_of(index, f"{pipeline.paths['monthly']}/month=2026-10")]
    bad = navd_command(pipeline.env, "reprocess", f"{pipeline.database}.hourly", "--from", TAINT[1], "--to", TAINT[0])
    assert bad.returncode == 2 and bad.stderr.strip().endswith(f"must be after --from {TAINT[1]}"), bad.stderr
    assert "Traceback" not in bad.stderr


def test_a_recorded_taint_shows_in_entity_drives_reprocess_and_clears(pipeline: Pipeline, index: SolrIndex) -> None:
    hourly = f"{pipeline.database}.hourly"
    record = navd_json(pipeline, "taint", hourly, "--from", TAINT[0], "--to", TAINT[1], "--reason", "bad feed")
    assert (record["from"], record["to"], record["reason"]) == (*TAINT, "bad feed")
    inside = f"{hourly}@{pipeline.cluster}/dt=2026-11-01/hr=20"
    outside = f"{hourly}@{pipeline.cluster}/dt=2026-11-01/hr=04"
    assert [t["id"] for t in navd_json(pipeline, "entity", inside)["tainted"]] == [record["id"]]
    assert "tainted" not in navd_json(pipeline, "entity", outside)
    assert [t["id"] for t in navd_json(pipeline, "entity", hourly)["tainted"]] == [record["id"]]
    by_taint = navd_json(pipeline, "reprocess", "--taint", record["id"])
    assert shown_plan(by_taint) == expected_plan(pipeline, index)
    assert record["id"] in {t["id"] for t in navd_json(pipeline, "taint", "--list")}
    cleared = navd_json(pipeline, "taint", hourly, "--clear")
    assert [t["id"] for t in cleared] == [record["id"]]
    assert "tainted" not in navd_json(pipeline, "entity", inside)
    gone = navd_command(pipeline.env, "reprocess", "--taint", record["id"])
    assert gone.returncode == 1 and f"no taint '{record['id']}'" in gone.stderr


def test_the_api_taints_reprocesses_and_clears(pipeline: Pipeline, index: SolrIndex, tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "navd.toml"
    config.write_text(Path(pipeline.config).read_text() + f"[server]\nport = {port}\n")
    config.chmod(0o600)
    with serving(config, f"http://127.0.0.1:{port}") as served:
        url = served.url
        partition = f"{pipeline.database}.hourly@{pipeline.cluster}/dt=2026-11-02/hr=03"
        made = requests.post(f"{url}/api/taints", json={"entity": partition, "reason": "late data"}, timeout=60)
        assert made.status_code == 201, made.text
        taint = made.json()
        assert (taint["from"], taint["to"]) == ("2026-11-02T03:00:00Z", "2026-11-02T04:00:00Z")
        listed = requests.get(f"{url}/api/taints", params={"entity": partition}, timeout=60).json()
        assert [t["id"] for t in listed["taints"]] == [taint["id"]]
        entity = requests.get(f"{url}/api/entities/{partition}", timeout=60).json()
        assert [t["id"] for t in entity["tainted"]] == [taint["id"]]
        plan = requests.get(f"{url}/api/reprocess", params={"taint": taint["id"]}, timeout=60).json()
        assert [(d["dataset"].split("@")[0], [p["partition"] for p in d["partitions"]]) for d in plan["datasets"]] \
            == [(f"{pipeline.database}.hourly", ["dt=2026-11-02/hr=03"]),
                (f"{pipeline.database}.daily", ["dt=2026-11-02"]),
                (f"{pipeline.database}.monthly", ["month=2026-11"])]
        ranged = requests.get(f"{url}/api/reprocess", timeout=60, params={
            "entity": f"{pipeline.database}.hourly", "from": TAINT[0], "to": TAINT[1]}).json()
        assert shown_plan(ranged) == expected_plan(pipeline, index)
        bad = requests.get(f"{url}/api/reprocess", params={"entity": "no_such.table"}, timeout=60)
        assert bad.status_code == 404 and bad.json()["parameter"] == "entity"
        cleared = requests.delete(f"{url}/api/taints/{taint['id']}", timeout=60).json()
        assert [t["id"] for t in cleared["cleared"]] == [taint["id"]]
        assert requests.get(f"{url}/api/taints", params={"entity": partition}, timeout=60).json() == {"taints": []}
        spec = requests.get(f"{url}/openapi.json", timeout=60).json()
        assert {"/api/taints", "/api/taints/{taint_id}", "/api/reprocess"} <= set(spec["paths"])
        assert spec["paths"]["/api/reprocess"]["get"]["summary"].startswith("Datasets, partitions and runs")

