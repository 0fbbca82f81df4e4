"""The development services navd's own scripts start: real servers, loopback only."""

from __future__ import annotations

import json
from pathlib import Path

import zstandard
from pyhive import hive

from navd.dev.spark_thrift import SparkThriftServer


def event_lines(event_log_dir: Path) -> list[dict[str, object]]:
    """Every event of the Thrift Server's (rolling, zstd) event logs, decoded plainly."""
    events = []
    for path in sorted(event_log_dir.glob("eventlog_v2_*/events_*")):
        with path.open("rb") as raw:
            data = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True).read()
        events += [json.loads(line) for line in data.decode().splitlines() if line.strip()]
    return events


def test_thrift_server_runs_sql_and_logs_its_text(spark_thrift: SparkThriftServer) -> None:
    statement = ("CREATE TABLE devsvc.merged AS SELECT upper(code) AS code FROM devsvc.temp_sample_08 "
                 "WHERE salary > 0")
    with hive.connect("127.0.0.1", spark_thrift.port, username="navd") as conn:
        cursor = conn.cursor()
        cursor.execute("CREATE DATABASE IF NOT EXISTS devsvc")
        cursor.execute("CREATE TABLE devsvc.temp_sample_08 (code STRING, salary INT) USING parquet")
        cursor.execute("INSERT INTO devsvc.temp_sample_08 VALUES ('a', 1)")
        cursor.execute(statement)
        cursor.execute("SHOW TABLES IN devsvc")
        assert sorted(row[1] for row in cursor.fetchall()) == ["merged", "temp_sample_08"]
    descriptions = {e.get("description") for e in event_lines(spark_thrift.event_log_dir)
                    if str(e["Event"]).endswith("SparkListenerSQLExecutionStart")}
    assert statement in descriptions


def test_thrift_server_is_loopback_only_and_restart_is_idempotent(spark_thrift: SparkThriftServer) -> None:
    listening = [line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:]]
    listening += [line.split() for line in Path("/proc/net/tcp6").read_text().splitlines()[1:]]
    ours = [f[1] for f in listening if f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == spark_thrift.port]
    assert ours and all(a.rsplit(":", 1)[0] in {"0100007F", "0000000000000000FFFF00000100007F"} for a in ours)
    pid = spark_thrift.process.running_pid()
    spark_thrift.start()  # already running: returns at once, same process
    assert spark_thrift.process.running_pid() == pid
