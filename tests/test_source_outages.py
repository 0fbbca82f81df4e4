"""Each source down in turn under `navd run`: the NameNode, HiveServer2 and the ResourceManager
are stopped one after the other while the HDFS, HMS and YARN extractors run every 2.4 s. Only the
stopped source's runs fail (FAILED in the runs core, one error line naming the source and the
cause, no traceback), the other two go on writing, and once the source is back its next run
succeeds by itself, without a daemon restart.

The NameNode and the ResourceManager are this module's own (DevHdfs and DevYarn on free ports: a
NameNode + DataNode and a ResourceManager + NodeManager, ~30-60 s to start on a busy host), so
stopping them disturbs no other test; only the NameNode and the ResourceManager are stopped, the
DataNode and the NodeManager reconnect by themselves. HiveServer2 is the session's Spark Thrift
Server (a second one would cost another ~1 GB Spark driver and a minute): it is stopped and
restarted here, its restart and readiness guaranteed by a `finally`, as
test_daemon.py's earlier HiveServer2 test did."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import started
from navd.extractors.hdfs.settings import HdfsConfig
from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr
from navd.webhdfs import make_client
from navd_devstack.hadoop import DevHdfs, HdfsPorts
from navd_devstack.spark_thrift import SparkThriftServer
from navd_devstack.yarn import DevYarn, YarnPorts
from test_daemon import (INTERVAL_MINUTES, hdfs_section, lay_pull_inputs, log_lines, navd_status, now, parse, runs, start, stop,
                         succeeded, wait_until, write_config)

COMPONENTS = ("extractor.hdfs", "extractor.hms", "extractor.yarn")


@pytest.fixture(scope="module")
def own_hdfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevHdfs]:
    """An HDFS of this module's own, whose NameNode the test stops."""
    cluster = DevHdfs(tmp_path_factory.mktemp("own-hdfs"), HdfsPorts.free(), namenode_heap="256m",
                      datanode_heap="192m")
    started(cluster, "HDFS")
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def own_yarn(tmp_path_factory: pytest.TempPathFactory, own_hdfs: DevHdfs) -> Iterator[DevYarn]:
    """A YARN of this module's own, whose ResourceManager the test stops."""
    cluster = DevYarn(tmp_path_factory.mktemp("own-yarn"), YarnPorts.free(), own_hdfs, heap="256m",
                      node_memory_mb=2048, node_vcores=2)
    started(cluster, "YARN")
    yield cluster
    cluster.stop()


@dataclass(frozen=True)
class Source:
    name: str
    component: str
    address: str  # host:port the error line names
    cause: str  # how the error line says it could not connect
    stop: Callable[[], object]
    start: Callable[[], object]


def test_each_source_down_in_turn_fails_only_its_own_runs_which_recover_by_themselves(
        solr_server: EmbeddedSolr, index: SolrIndex, own_hdfs: DevHdfs, own_yarn: DevYarn,
        spark_thrift: SparkThriftServer, unique: str, tmp_path: Path) -> None:
    root = f"/{unique}"
    client = make_client(HdfsConfig(urls=(own_hdfs.webhdfs_url,), user=own_hdfs.superuser))
    lay_pull_inputs(client, root, spark_thrift.port, unique, "orders")
    body = (hdfs_section(own_hdfs, root) +
            f'[hive]\nenabled = true\nhost = "127.0.0.1"\nport = {spark_thrift.port}\n'
            f'database_regex = "{unique}"\ninterval_minutes = {INTERVAL_MINUTES}\n'
            f'[yarn]\nenabled = true\nurls = ["{own_yarn.rm_url}"]\ninterval_minutes = {INTERVAL_MINUTES}\n')
    config = write_config(tmp_path / "navd.toml", solr_server, tmp_path / "state", body)
    sources = (
        Source("NameNode", "extractor.hdfs", f"127.0.0.1:{own_hdfs.ports.http}", "connection refused",
               lambda: own_hdfs.namenode.stop(timeout=30), own_hdfs.start),
        Source("HiveServer2", "extractor.hms", f"127.0.0.1:{spark_thrift.port}", "could not connect",
               spark_thrift.stop,
               spark_thrift.start),
        Source("ResourceManager", "extractor.yarn", f"127.0.0.1:{own_yarn.ports.rm_web}", "connection refused",
               lambda: own_yarn.resourcemanager.stop(timeout=30), own_yarn.start),
    )
    log = tmp_path / "navd.log"
    began = now()
    proc = start(config, log)
    try:
        wait_until(lambda: all(succeeded(index, c, began) for c in COMPONENTS), 180, "a run of every extractor",
                   proc, log)
        for source in sources:
            others = [c for c in COMPONENTS if c != source.component]
            seen = len(log_lines(log))
            source.stop()
            try:
                stopped = now()
                failed = wait_until(
                    lambda: [r for r in runs(index, source.component, stopped) if r["state"] == "FAILED"],  # noqa: B023
                    120, f"a failed {source.component} run with the {source.name} down", proc, log)
                # The others go on writing: two of their runs succeed after the failure.
                wait_until(lambda: all(succeeded(index, c, parse(failed[0]["ended"]), 2) for c in others),  # noqa: B023
                           120, f"the other extractors' runs with the {source.name} down", proc, log)
                assert source.address in failed[0]["error"], failed[0]
                shown = navd_status(config)["components"]
                assert shown[source.component]["last_run"]["state"] == "FAILED", shown
                assert all(shown[c]["last_run"]["state"] in ("SUCCEEDED", "RUNNING") for c in others), shown
                assert proc.poll() is None
            finally:
                source.start()
            back = now()
            wait_until(lambda: succeeded(index, source.component, back), 180,  # noqa: B023
                       f"a {source.component} run after the {source.name} came back", proc, log)
            errors = [e for e in log_lines(log)[seen:] if e.get("level") in ("error", "critical")]
            assert errors and {e["logger"] for e in errors} == {f"navd.{source.component}"}, errors
            # One short line a failed run, naming the source and the cause. (A NameNode coming back
            # may also fail a run in safe mode, a HiveServer2 going away fail the query in flight:
            # causes of their own, in lines of their own.)
            assert any(source.address in e["event"] and source.cause in e["event"].lower() for e in errors), errors
            assert all(len(e["event"]) < 400 for e in errors), errors
            failures = [r for r in runs(index, source.component, stopped) if r["state"] == "FAILED"]
            print(f"{source.name} down: {len(failures)} failed {source.component} runs, {len(errors)} error lines:",
                  *sorted({e["event"] for e in errors}), sep="\n  ")
    finally:
        code, _ = stop(proc)
    assert code == 0
    text = log.read_text()
    assert "Traceback" not in text, text[-3000:]
