"""The development services navd's own scripts start: real servers, loopback only."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import zstandard
from hdfs import Client
from pyhive import hive

from navd.webhdfs import list_status_batch, request_count
from navd_devstack.hadoop import FSSHELL_CLASS, DevHdfs
from navd_devstack.spark_thrift import SparkThriftServer
from navd_devstack.yarn import DevYarn

from net import listening_addresses


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
    assert listening_addresses(spark_thrift.port) == {"127.0.0.1"}
    pid = spark_thrift.process.running_pid()
    spark_thrift.start()  # already running: returns at once, same process
    assert spark_thrift.process.running_pid() == pid


def test_dev_hdfs_is_a_real_hdfs_on_loopback(hdfs: DevHdfs, hdfs_client: Client, unique: str) -> None:
    """The NameNode and DataNode run from Hadoop's jars; a second start finds them running."""
    pids = (hdfs.namenode.running_pid(), hdfs.datanode.running_pid())
    hdfs.start()
    assert (hdfs.namenode.running_pid(), hdfs.datanode.running_pid()) == pids
    hdfs_client.write(f"/{unique}/a b ü.csv", data=b"x,y\n1,2\n")
    [entry] = hdfs_client.list(f"/{unique}", status=True)
    assert entry[0] == "a b ü.csv" and entry[1]["length"] == 8 and entry[1]["owner"] == hdfs.superuser
    with hdfs_client.read(f"/{unique}/a b ü.csv") as reader:
        assert reader.read() == b"x,y\n1,2\n"
    # Hadoop's own CLI from the same jars sees the same file.
    listing = hdfs.run_tool(FSSHELL_CLASS, "-ls", f"{hdfs.default_fs}/{unique}")
    assert f"/{unique}/a b ü.csv" in listing
    for port in dataclasses.asdict(hdfs.ports).values():
        assert listening_addresses(port) == {"127.0.0.1"}, port


def test_directory_listings_come_in_pages(hdfs: DevHdfs, hdfs_client: Client, unique: str) -> None:
    names = [f"d{i:04d}" for i in range(2345)]
    hdfs.run_tool(FSSHELL_CLASS, "-mkdir", "-p", *(f"{hdfs.default_fs}/{unique}/{name}" for name in names))
    before = request_count(hdfs_client)
    listed = [status["pathSuffix"] for status in list_status_batch(hdfs_client, f"/{unique}")]
    assert listed == names
    assert request_count(hdfs_client) - before == 3  # dfs.ls.limit = 1000 entries a page


def test_dev_yarn_listens_on_loopback_only_and_restart_is_idempotent(yarn: DevYarn) -> None:
    for port in dataclasses.asdict(yarn.ports).values():
        assert listening_addresses(port) <= {"127.0.0.1"}, port
    assert listening_addresses(yarn.ports.rm_web) == {"127.0.0.1"}
    pids = (yarn.resourcemanager.running_pid(), yarn.nodemanager.running_pid())
    yarn.start()
    assert (yarn.resourcemanager.running_pid(), yarn.nodemanager.running_pid()) == pids
    assert (yarn.conf_dir / "yarn-site.xml").is_file() and (yarn.conf_dir / "core-site.xml").is_file()
