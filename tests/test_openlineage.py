"""The OpenLineage intake as users run it: a real `navd serve` with `[openlineage] enabled` over
the session Solr, fed by the real openlineage-python client's HTTP transport; then `navd lineage`
and `navd entity` show what it wrote. Bodies the intake must refuse, by name."""

from __future__ import annotations

import gzip
import json
import os
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import RunState
from openlineage.client.transport.http import HttpCompression, HttpConfig, HttpTransport

from conftest import NavdRunner
from navd.index.filters import term_filter
from navd.index.client import IndexWriter, SolrIndex
from navd.model import Element, ElementType, EntityRef, SourceType, hive_qualified_name
from navd.solr.server import EmbeddedSolr, free_port
from openlineage_events import HDFS, HIVE, JOB_NAMESPACE, as_json, job_run
from test_daemon import Notifications
from conftest import START_SECONDS, Served, serve_on_free_port, start_navd, stop_navd, write_server_config

#: the intake's body cap in these tests (the smallest it takes is 1024)
MAX_BODY = 64 * 1024


@pytest.fixture(scope="module")
def cluster() -> str:
    return f"ol{os.getpid()}"


@pytest.fixture(scope="module")
def ol_served(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr, index: SolrIndex,
              cluster: str) -> Iterator[Served]:
    """`navd serve` with the intake on, the test metastore's namespace mapped to `cluster`."""
    del index  # the session's cores exist before the server writes to them
    tmp = tmp_path_factory.mktemp("ol-serve")
    with serve_on_free_port(tmp, solr_server, extra=f'[cluster]\nname = "{cluster}"\n[openlineage]\nenabled = true\n'
                            f'max_body_bytes = {MAX_BODY}\nspool_dir = "{tmp / "spool"}"\n'
                            f'[openlineage.namespaces]\n"{HIVE}" = "{cluster}"\n') as served:
        yield served


def client_for(url: str, **settings: Any) -> OpenLineageClient:
    return OpenLineageClient(transport=HttpTransport(HttpConfig(url=url, **settings)))


def visible(index: SolrIndex) -> None:
    """What the intake flushed (acknowledged, in Solr's log), searchable now."""
    for core in ("elements", "relations"):
        index.commit(core, soft=True)


def lineage(navd: NavdRunner, name: str, *args: str) -> tuple[set[str], set[tuple[str, str, str, str]]]:
    """`navd lineage NAME ... --format json`: node names, and edges as (type, source, target, subtype)."""
    shown = navd("lineage", name, *args, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    graph = json.loads(shown.stdout)
    names = {node["id"]: node["qualifiedName"] for node in graph["nodes"]}
    return set(names.values()), {(e["type"], names[e["source"]], names[e["target"]], e.get("subtype", ""))
                                 for e in graph["edges"]}


def index_metastore_tables(index: SolrIndex, cluster: str, database: str) -> None:
    """The job's input tables with their columns, as the HMS extractor indexes them (lineage
    shows indexed datasets; one only a job mentioned is shown with --operations)."""
    writer = IndexWriter(index)
    for table, columns in (("orders", ("customer_id", "amount", "status")), ("customers", ("id", "region"))):
        ref = EntityRef(SourceType.HIVE, hive_qualified_name(cluster, database, table), ElementType.TABLE)
        writer.write(Element(SourceType.HIVE, ElementType.TABLE, ref.qualified_name, name=table))
        for column in columns:
            writer.write(Element(SourceType.HIVE, ElementType.FIELD,
                                 hive_qualified_name(cluster, database, table, column), name=column, parent=ref))
    assert writer.close()


def test_a_clients_start_and_complete_show_in_navd_lineage(ol_served: Served, index: SolrIndex, navd: NavdRunner,
                                                           cluster: str) -> None:
    database = f"db{uuid.uuid4().hex[:8]}"
    run_id = str(uuid.uuid4())
    index_metastore_tables(index, cluster, database)
    client = client_for(ol_served.url, compression=HttpCompression.GZIP)  # gzip bodies, as sites configure it
    for state, offset in ((RunState.START, 0), (RunState.COMPLETE, 60)):
        answer = client.transport.emit(job_run(run_id, "load_revenue", state, offset=offset, database=database))
        assert answer.status_code == 201, answer.text
    visible(index)

    revenue = f"{database}.revenue@{cluster}"
    execution = f"openlineage://{JOB_NAMESPACE}/load_revenue/{run_id}"
    names, edges = lineage(navd, revenue, "--direction", "upstream", "--operations")
    assert {f"{database}.orders@{cluster}", f"{database}.customers@{cluster}", execution} <= names
    assert ("DATA_FLOW", execution, revenue, "") in edges

    names, edges = lineage(navd, revenue, "--direction", "upstream", "--columns")
    assert ("DATA_FLOW", f"{database}.orders.amount@{cluster}", f"{database}.revenue.total@{cluster}",
            "AGGREGATION") in edges
    assert ("CONTROL_FLOW", f"{database}.orders.status@{cluster}", f"{database}.revenue.total@{cluster}",
            "FILTER") in edges
    export = f"{HDFS}/data/{database}/revenue_export"
    _, downstream = lineage(navd, f"{database}.customers@{cluster}", "--direction", "downstream")
    assert {target for _type, _source, target, _subtype in downstream} >= {revenue, export}

    shown = navd("entity", execution, "--json")
    assert shown.returncode == 0, shown.stderr
    run = json.loads(shown.stdout)
    assert (run["type"], run["sourceType"], run["started"], run["ended"]) == (
        "OPERATION_EXECUTION", "OPENLINEAGE", "2026-11-23T06:00:00Z", "2026-11-23T06:01:00Z")
    assert run["properties"]["state"] == "COMPLETE"
    # the run's relations are dated by its START and COMPLETE, not by the last event alone
    flows = index.search("relations", "type:DATA_FLOW", filters=[term_filter("endpoint1Id", run["identity"])],
                         fl="firstSeen,lastSeen", rows=10)["response"]["docs"]
    assert flows and {(d["firstSeen"], d["lastSeen"]) for d in flows} == {
        ("2026-11-23T06:00:00Z", "2026-11-23T06:01:00Z")}
    as_of_start = navd("lineage", revenue, "--direction", "upstream", "--as-of", "2026-11-23T05:59:59Z")
    assert as_of_start.returncode == 0 and "(no lineage)" in as_of_start.stdout, as_of_start.stdout


def test_a_fail_event_shows_the_error_on_the_execution(ol_served: Served, index: SolrIndex, navd: NavdRunner,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = str(uuid.uuid4())
    # configured as the docs say: OPENLINEAGE_URL, nothing else
    monkeypatch.setenv("OPENLINEAGE_URL", ol_served.url)
    client = OpenLineageClient()
    assert client.transport.kind == "http"
    database = f"db{uuid.uuid4().hex[:8]}"
    client.emit(job_run(run_id, "load_revenue", RunState.START, database=database))
    client.emit(job_run(run_id, "load_revenue", RunState.FAIL, offset=5, database=database,
                        error="ZeroDivisionError: division by zero"))
    visible(index)
    shown = navd("entity", f"openlineage://{JOB_NAMESPACE}/load_revenue/{run_id}", "--json")
    assert shown.returncode == 0, shown.stderr
    run = json.loads(shown.stdout)
    assert run["properties"]["state"] == "FAIL"
    assert run["properties"]["error"] == "ZeroDivisionError: division by zero"
    assert run["ended"] == "2026-11-23T06:00:05Z"


def test_concurrent_posts_are_written_together_each_run_merged(ol_served: Served, index: SolrIndex) -> None:
    """Group commit: 40 events posted at once by 8 clients share flushes; each is answered 201
    only once Solr holds it; START and COMPLETE of one run, whichever batch each lands in, make
    one execution with both times; an event navd cannot name is refused alone (400)."""
    database = f"db{uuid.uuid4().hex[:8]}"
    runs = [str(uuid.uuid4()) for _ in range(20)]
    bodies = [as_json(job_run(run, f"group_{n}", state, offset=offset, database=database))
              for n, run in enumerate(runs) for state, offset in ((RunState.START, 0), (RunState.COMPLETE, 60))]
    bad = json.loads(json.dumps(bodies[0]))
    bad["inputs"][0]["name"] = ""  # a dataset without a name
    posts = [json.dumps(b).encode() for b in (*bodies, bad)]

    def post(body: bytes) -> int:
        return requests.post(ol_served.url + "/api/v1/lineage", data=body, timeout=60,
                             headers={"Content-Type": "application/json"}).status_code

    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(post, posts))
    assert codes == [201] * len(bodies) + [400]
    visible(index)
    found = {doc["qualifiedName"]: doc for doc in index.scan(
        "elements", "sourceType:OPENLINEAGE AND type:OPERATION_EXECUTION",
        filters=[f"prop_runId:({' OR '.join(runs)})"], fl="qualifiedName,started,ended,properties")}
    assert len(found) == len(runs)
    for doc in found.values():
        assert (doc["started"], doc["ended"], json.loads(doc["properties"])["state"]) == (
            "2026-11-23T06:00:00Z", "2026-11-23T06:01:00Z", "COMPLETE")


def nonconforming_count(served: Served) -> float:
    for line in served.get("/metrics").text.splitlines():
        if line.startswith("navd_openlineage_nonconforming_facets_total "):
            return float(line.split()[1])
    raise AssertionError("no navd_openlineage_nonconforming_facets_total in /metrics")


def test_events_as_trino_and_custom_producers_shape_them_are_taken(ol_served: Served, index: SolrIndex,
                                                                    navd: NavdRunner) -> None:
    """As Marquez takes them: Trino's FAIL with an errorMessage lacking programmingLanguage, a
    custom facet without _schemaURL, a hive:// name that is not db.table: 201; the facet that does
    not conform is counted and warned of once per producer and facet, not mapped."""
    database = f"db{uuid.uuid4().hex[:8]}"
    producer = f"https://github.com/trinodb/trino/{uuid.uuid4().hex[:6]}"
    before = nonconforming_count(ol_served)
    runs = [str(uuid.uuid4()) for _ in range(2)]
    for run_id in runs:
        event = as_json(job_run(run_id, "trino_query", RunState.FAIL, database=database, error="line 1:8: no such column"))
        event["producer"] = producer
        del event["run"]["facets"]["errorMessage"]["programmingLanguage"]
        event["run"]["facets"]["trino_metadata"] = {"_producer": producer, "queryId": "20261123_060000_00001_abcde"}
        event["inputs"][0]["name"] = f"iceberg.{database}.orders"  # catalog.schema.table: not db.table
        answer = requests.post(f"{ol_served.url}/api/v1/lineage", json=event, timeout=30)
        assert answer.status_code == 201, answer.text
    assert nonconforming_count(ol_served) == before + 2
    visible(index)
    execution = f"openlineage://{JOB_NAMESPACE}/trino_query/{runs[0]}"
    shown = navd("entity", execution, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["properties"]["state"] == "FAIL"
    # the catalog name is a dataset of its own, in the flow into the run
    assert index.count("relations", f'type:DATA_FLOW AND endpoint2QualifiedName:"{execution}" AND '
                                    f'endpoint1QualifiedName:"{HIVE}/iceberg.{database}.orders"') == 1
    warnings = [line for line in ol_served.log.read_text().splitlines()
                if "does not conform to its schema" in line and producer in line]
    assert len(warnings) == 1 and "errorMessage" in warnings[0] and "programmingLanguage" in warnings[0]


def test_posting_an_event_twice_writes_it_once(ol_served: Served, index: SolrIndex) -> None:
    run_id = str(uuid.uuid4())
    event = as_json(job_run(run_id, "twice", RunState.COMPLETE, database=f"db{uuid.uuid4().hex[:8]}"))
    for _ in range(2):
        assert requests.post(f"{ol_served.url}/api/v1/lineage", json=event, timeout=30).status_code == 201
    visible(index)
    execution = f"openlineage://{JOB_NAMESPACE}/twice/{run_id}"
    assert index.count("elements", f'qualifiedName:"{execution}"') == 1
    flows = index.count("relations", f'endpoint1QualifiedName:"{execution}" OR endpoint2QualifiedName:"{execution}"')
    assert flows == 1 + 2 + 2  # INSTANCE_OF, two inputs, two outputs
    # column edges through the run: 3 DATA_FLOW, a JOIN, JOIN, FILTER and GROUP_BY control of each of 2 columns
    assert index.count("relations", f'discriminator:"{execution}"') == 3 + 4 * 2


def test_the_linker_links_a_table_indexed_after_the_event(ol_served: Served, index: SolrIndex, navd: NavdRunner,
                                                         cluster: str) -> None:
    """An input no extractor had indexed when the event came is an unlinked endpoint; once the
    HMS side indexes the table, `navd link` resolves it as it does the Spark extractor's."""
    database = f"db{uuid.uuid4().hex[:8]}"
    run_id = str(uuid.uuid4())
    assert client_for(ol_served.url).transport.emit(
        job_run(run_id, "late_tables", RunState.COMPLETE, database=database)).status_code == 201
    visible(index)
    execution = f"openlineage://{JOB_NAMESPACE}/late_tables/{run_id}"
    query = f'type:DATA_FLOW AND endpoint2QualifiedName:"{execution}"'
    assert index.count("relations", query + " AND unlinked:true") == 2
    index_metastore_tables(index, cluster, database)
    linked = navd("link", "--full")
    assert linked.returncode == 0, linked.stderr
    visible(index)
    assert index.count("relations", query + " AND unlinked:false") == 2
    assert index.count("relations", query + " AND unlinked:true") == 0


@pytest.mark.parametrize(("body", "headers", "status", "parameter", "error"), [
    (b'{"eventTime": "2026-11-23T06:00:00Z", "producer": "https://x", "schemaURL": "https://y", '
     b'"eventType": "START", "run": {"runId": "nope"}, "job": {"namespace": "n", "name": "j"}}', {}, 400,
     "$.run.runId", "$.run.runId: 'nope' is not a 'uuid'"),
    (b'{"eventTime": "2026-11-23T06:00:00Z", "producer": "https://x", "schemaURL": "https://y", "job": {"name": "j"}}',
     {}, 400, "$.job", "$.job: 'namespace' is a required property"),
    (b'{"eventTime": "2026-11-23T06:00:00Z", "producer": "https://x", "sche', {}, 400, "body", "body: not JSON ("),
    (b"[1, 2]", {}, 400, "$", "$: an OpenLineage event is a JSON object, got list"),
    (b"not gzip at all", {"Content-Encoding": "gzip"}, 400, "body", "body: not valid gzip data ("),
    (gzip.compress(b'{"eventTime": "2026-11-23T06:00:00Z"}')[:-12], {"Content-Encoding": "gzip"}, 400, "body",
     "body: truncated gzip data"),
    (gzip.compress(b"{}") + b"more", {"Content-Encoding": "gzip"}, 400, "body",
     "body: data after the end of the gzip stream"),
    (b"{" + b" " * MAX_BODY + b"}", {}, 413, "body",
     f"body: the event as sent is larger than [openlineage] max_body_bytes ({MAX_BODY} bytes)"),
    (gzip.compress(b"{" + b" " * (4 * MAX_BODY) + b"}"), {"Content-Encoding": "gzip"}, 413, "body",
     f"body: the event once gunzipped is larger than [openlineage] max_body_bytes ({MAX_BODY} bytes)"),
    (b"{}", {"Content-Encoding": "br"}, 415, "Content-Encoding", "Content-Encoding 'br': only gzip is taken"),
], ids=["schema", "required", "cut-json", "not-object", "bad-gzip", "truncated-gzip", "trailing-gzip", "oversized",
        "oversized-gunzipped", "encoding"])
def test_bodies_the_intake_refuses_are_named(ol_served: Served, body: bytes, headers: dict[str, str], status: int,
                                             parameter: str, error: str) -> None:
    answer = requests.post(f"{ol_served.url}/api/v1/lineage", data=body,
                           headers={"Content-Type": "application/json", **headers}, timeout=30)
    assert answer.status_code == status, answer.text
    assert answer.json()["parameter"] == parameter
    assert answer.json()["error"].startswith(error), answer.json()


def test_the_intake_serves_inside_navd_run(tmp_path: Path, solr_server: EmbeddedSolr, index: SolrIndex) -> None:
    port = free_port()
    config = write_server_config(tmp_path, solr_server, f"enabled = true\nport = {port}",
                          f'[openlineage]\nenabled = true\nspool_dir = "{tmp_path / "spool"}"\n')
    notify = Notifications(Path(f"/tmp/navd-ol-{os.getpid()}-{time.monotonic_ns()}.sock"))
    log = tmp_path / "run.log"
    proc = start_navd(["run"], config, log, {"NOTIFY_SOCKET": str(notify.path)})
    run_id = str(uuid.uuid4())
    try:
        notify.wait_for("READY=1", START_SECONDS)
        answer = client_for(f"http://127.0.0.1:{port}").transport.emit(
            job_run(run_id, "in_daemon", RunState.START, database=f"db{uuid.uuid4().hex[:8]}"))
        assert answer.status_code == 201, answer.text
    finally:
        code = stop_navd(proc)
        notify.close()
    assert code == 0, log.read_text()
    assert "Traceback" not in log.read_text()
    visible(index)
    assert index.count("elements", f'qualifiedName:"openlineage://{JOB_NAMESPACE}/in_daemon/{run_id}"') == 1


def test_the_intake_is_off_unless_enabled(tmp_path: Path, solr_server: EmbeddedSolr) -> None:
    with serve_on_free_port(tmp_path, solr_server) as served:
        answer = requests.post(f"{served.url}/api/v1/lineage", json={}, timeout=30)
        assert answer.status_code == 404, answer.text
        assert "[openlineage] enabled" in answer.json()["error"]
