"""Spark event logs on HDFS: a real PySpark job writes its event log to the real dev HDFS, navd
tails it through WebHDFS while the job runs (the NameNode's length of the file being written
lags what readers can see) and after it ends."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hdfs import Client

from navd.config import parse_config
from navd.extractors.hdfs.settings import HdfsConfig
from navd.errors import ConfigError
from navd.extractors.spark.extractor import SparkExtractor
from navd.model import Element, ElementType, Relation, RelationType
from navd.process import free_port
from navd.webhdfs import make_client
from navd_devstack.hadoop import DevHdfs


def data_flows(records: list[object]) -> set[tuple[str, str]]:
    return {(r.endpoint1.qualified_name, r.endpoint2.qualified_name) for r in records
            if isinstance(r, Relation) and r.type is RelationType.DATA_FLOW}


def wait_for(path: Path, job: subprocess.Popen[str], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if job.poll() is not None:
            pytest.fail(f"the Spark job ended early: {job.stderr.read()[-3000:] if job.stderr else ''}")
        assert time.monotonic() < deadline, f"the Spark job did not reach {path.name}"
        time.sleep(0.2)


def test_event_log_on_hdfs_is_tailed_while_written_and_after(hdfs: DevHdfs, hdfs_client: Client,
                                                              tmp_path: Path, unique: str) -> None:
    fs = hdfs.default_fs
    events, data = f"/{unique}/spark-logs", f"/{unique}/data"
    hdfs_client.makedirs(events)
    first_done, gate = tmp_path / "first-done", tmp_path / "gate"
    script = textwrap.dedent(f"""
        import os, time
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[1]").appName("hdfs_tail_job")
                 .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1")
                 .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                 .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", "{fs}{events}")
                 .config("spark.sql.warehouse.dir", {(tmp_path / 'warehouse').as_uri()!r}).getOrCreate())
        spark.range(5).selectExpr("id as a", "id * 2 as b").write.parquet("{fs}{data}/in")
        spark.read.parquet("{fs}{data}/in").selectExpr("a + b as c").write.parquet("{fs}{data}/out1")
        open({str(first_done)!r}, "w").close()
        while not os.path.exists({str(gate)!r}):
            time.sleep(0.2)
        spark.read.parquet("{fs}{data}/in").selectExpr("a * b as d").write.parquet("{fs}{data}/out2")
        spark.stop()
    """)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "HADOOP_USER_NAME": hdfs.superuser}
    job = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, env=env, text=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(first_done, job)
        state = tmp_path / "state"
        extractor = SparkExtractor(cluster="primary", directories=[f"{fs}{events}"], state_dir=state,
                                   default_fs=fs, hdfs_client=hdfs_client)
        while_running = list(extractor.extract())
        extractor.commit()
        # The application is still running: its log is in progress on HDFS, and its current file's
        # listed length is behind what Spark has flushed; the first write is there all the same.
        flows = data_flows(while_running)
        assert f"{fs}{data}/in" in {src for src, _ in flows}
        assert f"{fs}{data}/out1" in {dst for _, dst in flows}
        assert not any(dst.endswith("/out2") for _, dst in data_flows(while_running))
        # Who wrote the log, as HDFS says (docs/sources/spark.md, "Trust model of event-log directories").
        assert {r.properties.get("logOwner") for r in while_running if isinstance(r, Element)
                and r.type is ElementType.OPERATION_EXECUTION} == {hdfs.superuser}
        [cursor] = extractor.tailer.committed.values()
        listed = hdfs_client.status(cursor.path.removeprefix(fs))["length"]
        assert cursor.resume > listed, "the lagging-length case was not exercised"
        gate.touch()
        assert job.wait(timeout=300) == 0, job.stderr.read()[-3000:] if job.stderr else ""
    finally:
        if job.poll() is None:
            job.kill()
    after = list(extractor.extract())
    extractor.commit()
    flows_after = data_flows(after)
    assert any(dst == f"{fs}{data}/out2" for _, dst in flows_after)
    assert not any(dst == f"{fs}{data}/out1" for _, dst in flows_after), "re-emitted an execution"
    restarted = SparkExtractor(cluster="primary", directories=[f"{fs}{events}"], state_dir=state,
                               default_fs=fs, hdfs_client=hdfs_client)
    assert list(restarted.extract()) == []  # finished and committed: not read again


def test_unreachable_webhdfs_is_a_logged_skip(tmp_path: Path, log_stream: io.StringIO) -> None:
    client = make_client(HdfsConfig(urls=(f"http://127.0.0.1:{free_port()}",), user="navd"),
                         timeout=(2.0, 2.0))
    extractor = SparkExtractor(cluster="primary", directories=["hdfs://nn.example.com/spark-logs"],
                               state_dir=tmp_path, hdfs_client=client)
    assert list(extractor.extract()) == []
    [warning] = [json.loads(line) for line in log_stream.getvalue().splitlines()
                 if json.loads(line)["level"] == "warning"]
    assert warning["event"] == "event log directory unreadable"
    assert warning["directory"] == "hdfs://nn.example.com/spark-logs"
    assert "WebHDFS unreachable" in warning["reason"]


def test_an_hdfs_event_log_dir_needs_a_webhdfs_url(tmp_path: Path) -> None:
    config = parse_config({"spark": {"enabled": True, "event_log_dirs": ["hdfs://nn/spark-logs"]}}, environ={})
    with pytest.raises(ConfigError, match=r"\[hdfs\] urls"):
        SparkExtractor.from_config(config, tmp_path)
    with pytest.raises(ConfigError, match="not an HDFS path"):
        SparkExtractor(cluster="primary", directories=["s3a://bucket/logs"], state_dir=tmp_path,
                       hdfs_client=make_client(HdfsConfig(urls=("http://127.0.0.1:1",))))
