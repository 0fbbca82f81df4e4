"""One run, one lineage, with the real OpenLineage Spark listener (docs/sources/openlineage.md).

One small PySpark application (tests/fixtures/spark_events/capture.py's `ctas_expression`: a
table written from values, then `create table sales.t as select upper(c) ... from sales.s
where ...`; local, Hive support, its event log on) runs with the listener
(`io.openlineage:openlineage-spark_2.13` from Maven Central) posting over HTTP to a real
`navd serve`, and a copy of each event to a file. Then navd's Spark extractor reads the
application's event log into the same Solr. The table edges of both sources agree, and once
the log is extracted each write has one lineage: the Spark extractor's (the listener's lineage
withdrawn, its runs kept); a listener event posted again afterwards does not bring it back.
Slow (one Spark session, ~1 min).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

from bench.compare_openlineage import CAPTURE, LISTENER, listener_jar
from navd.extractors import run_pass
from navd.extractors.spark.component import POST_COMMIT_HOOKS
from navd.extractors.spark.extractor import SparkExtractor
from navd.index.client import IndexWriter, SolrIndex
from navd.index.query_syntax import quote
from navd.model import ElementType, EntityRef, SourceType, hive_qualified_name
from navd.solr.server import EmbeddedSolr
from conftest import Served, serve_on_free_port

NAMESPACE = "navd-spark-test"
CASE = "ctas_expression"
#: what the Spark run and the listener's posts may take, each
SPARK_SECONDS = 600
VISIBLE_SECONDS = 60

#: a table edge: (source table, target table) by qualified name; a write with no table input
#: (values) has source ""
TableEdge = tuple[str, str]


@pytest.fixture(scope="module")
def cluster() -> str:
    return f"olspark{os.getpid()}"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr, index: SolrIndex,
           cluster: str) -> Iterator[Served]:
    """`navd serve` with the intake on; the listener's catalog tables (named in a `file:` warehouse
    namespace no map names) land in `[cluster] name`, as the Spark extractor names them."""
    del index  # the session's cores exist before the server writes to them
    tmp = tmp_path_factory.mktemp("ol-spark-serve")
    with serve_on_free_port(tmp, solr_server, extra=f'[cluster]\nname = "{cluster}"\n[openlineage]\nenabled = true\n'
                            f'spool_dir = "{tmp / "spool"}"\n') as served:
        yield served


def run_spark(root: Path, url: str, copy: Path) -> None:
    """The case's application under the listener: HTTP to navd, and each event to `copy`."""
    out = root / "out"
    out.mkdir(parents=True)
    conf = {"spark.jars": str(listener_jar()), "spark.extraListeners": LISTENER,
            "spark.openlineage.namespace": NAMESPACE,
            "spark.openlineage.transport.type": "composite",
            "spark.openlineage.transport.continueOnFailure": "false",
            "spark.openlineage.transport.transports.navd.type": "http",
            "spark.openlineage.transport.transports.navd.url": url,
            "spark.openlineage.transport.transports.copy.type": "file",
            "spark.openlineage.transport.transports.copy.location": str(copy)}
    command = [sys.executable, str(CAPTURE), "--run", CASE, "--root", str(root), "--out", str(out)]
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=SPARK_SECONDS, check=False)
    (root / "spark.stderr").write_text(done.stderr, encoding="utf-8")
    assert done.returncode == 0, done.stderr[-3000:]


def table(cluster: str, name: str) -> EntityRef:
    database, _, table_name = name.partition(".")
    return EntityRef(SourceType.HIVE, hive_qualified_name(cluster, database, table_name), ElementType.TABLE)


def flows(index: SolrIndex, query: str) -> list[dict[str, object]]:
    return index.search("relations", query, rows=1000, filters=["type:DATA_FLOW"])["response"]["docs"]


def table_edges(index: SolrIndex, outputs: list[EntityRef], source: SourceType) -> dict[str, set[TableEdge]]:
    """execution -> its table edges into `outputs`, for the executions of `source`."""
    edges: dict[str, set[TableEdge]] = {}
    for output in outputs:
        for into in flows(index, f"endpoint2Id:{quote(output.identity)} AND endpoint1SourceType:{source.value}"):
            execution = str(into["endpoint1QualifiedName"])
            inputs = [str(doc["endpoint1QualifiedName"]) for doc in
                      flows(index, f"endpoint2Id:{quote(str(into['endpoint1Id']))} AND endpoint1Type:TABLE")]
            edges.setdefault(execution, set()).update((i, output.qualified_name) for i in inputs or [""])
    return edges


def wait_for(what: str, check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + VISIBLE_SECONDS
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {VISIBLE_SECONDS}s")
        time.sleep(1)


def test_listener_and_event_log_lineage_agree_and_are_not_doubled(
        served: Served, index: SolrIndex, cluster: str, tmp_path: Path) -> None:
    copy = tmp_path / "openlineage.jsonl"
    run_spark(tmp_path / "spark", served.url, copy)
    events = [json.loads(line) for line in copy.read_text(encoding="utf-8").splitlines() if line.strip()]
    # the application's own run: its job is named after the application, the others' after
    # `<application>.<action>`
    application = [e for e in events if e["job"]["name"] == CASE and e["eventType"] == "START"]
    assert application and "spark_applicationDetails" in application[0]["run"]["facets"], application
    app_id = application[0]["run"]["facets"]["spark_applicationDetails"]["applicationId"]
    outputs = [table(cluster, "sales.s"), table(cluster, "sales.t")]

    # 1. the listener's lineage, as navd's intake wrote it
    def listener_edges() -> dict[str, set[TableEdge]]:
        return table_edges(index, outputs, SourceType.OPENLINEAGE)
    wait_for("the listener's lineage of sales.t", lambda: any(
        e[1] == outputs[1].qualified_name for edges in listener_edges().values() for e in edges))
    listener = set().union(*listener_edges().values())
    assert (outputs[0].qualified_name, outputs[1].qualified_name) in listener

    # 2. navd's Spark extractor over the application's own event log, with the hooks the Spark
    # component builds it with
    extractor = SparkExtractor(cluster=cluster, directories=[str(tmp_path / "spark" / "eventlog")],
                               state_dir=tmp_path / "spark-state", index=index, post_commit=POST_COMMIT_HOOKS)
    writer = IndexWriter(index)
    try:
        report = run_pass(extractor, writer)
    finally:
        writer.close()
    assert report.records > 0
    for core in ("elements", "relations"):
        index.commit(core)
    navd = table_edges(index, outputs, SourceType.SPARK)
    assert set().union(*navd.values()) == listener  # the two sources agree on the table edges

    # 3. one run, one lineage: each write has the Spark extractor's execution only; the
    # listener's runs stay (its application run names the application id)
    assert table_edges(index, outputs, SourceType.OPENLINEAGE) == {}
    for output in outputs:
        writers = flows(index, f"endpoint2Id:{quote(output.identity)}")
        assert len(writers) == 1 and str(writers[0]["endpoint1QualifiedName"]).startswith(f"spark://{app_id}/"), writers
    app_run = quote(application[0]["run"]["runId"].lower())
    assert index.count("relations", f"prop_sparkApplicationRun:{app_run}") == 0
    named = index.count("elements", f"prop_sparkApplicationId:{quote(app_id)}")
    assert named >= 1
    assert index.count("elements", f"prop_sparkApplicationId:{quote(app_id)} AND "
                                   f"prop_sparkApplicationRun:{app_run}") == named
    assert index.count("elements", f"sourceType:OPENLINEAGE AND type:OPERATION_EXECUTION AND "
                                   f"prop_sparkApplicationRun:{app_run}") > 1

    # 4. a listener event posted again after the extraction (a late retry) adds no lineage
    ctas = [e for e in events if e["eventType"] == "COMPLETE" and any(
        (o.get("facets") or {}).get("symlinks", {}).get("identifiers", [{}])[0].get("name") == "sales.t"
        for o in e.get("outputs") or ())]
    assert ctas, "the listener reported no COMPLETE writing sales.t"
    answer = requests.post(served.url + "/api/v1/lineage", json=ctas[-1], timeout=30)
    assert answer.status_code == 201, answer.text
    index.commit("relations")
    assert table_edges(index, outputs, SourceType.OPENLINEAGE) == {}
    assert len(flows(index, f"endpoint2Id:{quote(outputs[1].identity)}")) == 1
