"""The intake's work per event bounded, and what Solr cannot take refused by name: a real `navd
serve` with `[openlineage] enabled` over the session Solr, its caps set low enough for events of a
test's size, the events sent by openlineage-python's HTTP transport.

- An event past `max_datasets`, `max_fields` or `max_column_edges` is answered 413 naming the
  cap and the count, before any work is spent on it.
- A large event is written in slices: a small event sent while it is in flight is answered
  before it, one of the same run after it.
- A name longer than Solr indexes as one term is answered 400 naming the field, not 502 with
  Solr's own message.
- A `hive://` namespace of a metastore navd was not told about keeps its own namespace (its
  tables are not taken for this cluster's), with one warning an hour and a metric.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset, schema_dataset, sql_job, symlinks_dataset
from openlineage.client.transport.http import HttpConfig, HttpTransport

from navd.index.client import SolrIndex
from navd.index.documents import MAX_TERM_BYTES, oversized_term
from navd.model import Element, ElementType, Relation, RelationType, SourceType
from navd.names import EntityRef
from navd.openlineage.limits import EventSize, event_size
from navd.solr.server import EmbeddedSolr
from openlineage_events import HDFS, HIVE, JOB_NAMESPACE, PRODUCER, as_json, job_run, wide_job_run
from conftest import Served, serve_on_free_port

#: the caps of this module's server: low, so that events past them stay small
MAX_DATASETS, MAX_FIELDS, MAX_COLUMN_EDGES = 2000, 20_000, 5000
#: how long a test waits for the server to show a large event in flight (a bound, not a measure)
IN_FLIGHT_SECONDS = 120
#: how long the client waits for an answer (a large event's takes seconds on a busy host)
ANSWER_SECONDS = 300
OTHER_METASTORE = "hive://metastore.elsewhere:9083"


@pytest.fixture(scope="module")
def cluster() -> str:
    return f"lim{os.getpid()}"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr, index: SolrIndex,
           cluster: str) -> Iterator[Served]:
    del index  # the session's cores exist before the server writes to them
    tmp = tmp_path_factory.mktemp("ol-limits")
    with serve_on_free_port(tmp, solr_server, extra=f'[cluster]\nname = "{cluster}"\n[openlineage]\nenabled = true\n'
                            f'spool_dir = "{tmp / "spool"}"\nmax_body_bytes = {64 * 1024 * 1024}\n'
                            f"max_datasets = {MAX_DATASETS}\nmax_fields = {MAX_FIELDS}\n"
                            f"max_column_edges = {MAX_COLUMN_EDGES}\n"
                            f'[openlineage.namespaces]\n"{HIVE}" = "{cluster}"\n') as served:
        yield served


def emit(url: str, event: RunEvent) -> requests.Response:
    """The intake's answer to the client's post (no retries), whatever its status."""
    transport = OpenLineageClient(transport=HttpTransport(HttpConfig(url=url, retry={"total": 0}, timeout=ANSWER_SECONDS))).transport
    try:
        return transport.emit(event)  # type: ignore[no-any-return]
    except requests.HTTPError as exc:
        assert exc.response is not None
        return exc.response


def metric(served: Served, name: str) -> float | None:
    """A metric of the server's /metrics (None: not there)."""
    for line in served.get("/metrics").text.splitlines():
        if line.startswith(f"{name} "):
            return float(line.split()[1])
    return None


def visible(index: SolrIndex) -> None:
    for core in ("elements", "relations"):
        index.commit(core, soft=True)


def execution_count(index: SolrIndex, run_id: str) -> int:
    """The executions of the run in Solr (found by runId: a name too long to index is too long to
    search for too)."""
    visible(index)
    return index.count("elements", f'sourceId:"{run_id.lower()}" AND type:OPERATION_EXECUTION')


def run_event(job: str, *, outputs: list[OutputDataset] | None = None, inputs: list[InputDataset] | None = None,
              job_facets: dict[str, Any] | None = None, namespace: str = JOB_NAMESPACE) -> RunEvent:
    return RunEvent(eventType=RunState.COMPLETE, eventTime="2026-11-23T06:00:30Z", producer=PRODUCER,
                    run=Run(runId=str(uuid.uuid4())), job=Job(namespace=namespace, name=job, facets=job_facets or {}),
                    inputs=inputs or [], outputs=outputs or [])


def schema(*names: str) -> schema_dataset.SchemaDatasetFacet:
    return schema_dataset.SchemaDatasetFacet(fields=[schema_dataset.SchemaDatasetFacetFields(name=n, type="STRING")
                                                     for n in names])


# -- caps ---------------------------------------------------------------------------------------

def _too_many_datasets(database: str) -> RunEvent:
    return run_event(f"{database}_datasets", inputs=[InputDataset(namespace=HIVE, name=f"{database}.i{n}")
                                                     for n in range(MAX_DATASETS // 2)],
                     outputs=[OutputDataset(namespace=HIVE, name=f"{database}.o{n}")
                              for n in range(MAX_DATASETS // 2 + 1)])


def _too_many_fields(database: str) -> RunEvent:
    return wide_job_run(str(uuid.uuid4()), f"{database}_fields", database, outputs=4, columns=MAX_FIELDS // 4 + 1)


def _too_many_column_edges(database: str) -> RunEvent:
    """A small body that would expand to many edges: each dataset-wide input is an edge into each
    written column (101 inputs x 50 columns = 5,050)."""
    wide = [column_lineage_dataset.InputField(namespace=HIVE, name=f"{database}.src", field=f"k{n}",
                                              transformations=[column_lineage_dataset.Transformation(
                                                  type="INDIRECT", subtype="FILTER")]) for n in range(101)]
    lineage = column_lineage_dataset.ColumnLineageDatasetFacet(fields={}, dataset=wide)
    return run_event(f"{database}_edges", outputs=[OutputDataset(
        namespace=HIVE, name=f"{database}.out",
        facets={"schema": schema(*(f"c{n}" for n in range(50))), "columnLineage": lineage})])


@pytest.mark.parametrize(("build", "key", "what"), [
    (_too_many_datasets, "max_datasets", f"{MAX_DATASETS + 1:,} datasets (inputs and outputs)"),
    (_too_many_fields, "max_fields", f"{4 * (MAX_FIELDS // 4 + 1):,} schema fields"),
    (_too_many_column_edges, "max_column_edges", f"{101 * 50:,} column-lineage edges"),
])
def test_an_event_past_a_cap_is_refused_413_naming_the_cap_and_the_count(
        served: Served, index: SolrIndex, build: Any, key: str, what: str) -> None:
    database = f"cap{uuid.uuid4().hex[:8]}"
    event = build(database)
    answer = emit(served.url, event)
    assert answer.status_code == 413, answer.text
    cap = {"max_datasets": MAX_DATASETS, "max_fields": MAX_FIELDS, "max_column_edges": MAX_COLUMN_EDGES}[key]
    assert answer.json()["error"] == f"body: the event has {what}, more than [openlineage] {key} ({cap:,})"
    assert execution_count(index, event.run.runId) == 0


def test_an_event_at_the_caps_is_taken(served: Served, index: SolrIndex) -> None:
    database = f"at{uuid.uuid4().hex[:8]}"
    event = wide_job_run(str(uuid.uuid4()), f"{database}_at", database, outputs=4, columns=MAX_FIELDS // 4)
    assert event_size(as_json(event)).fields == MAX_FIELDS
    answer = emit(served.url, event)
    assert answer.status_code == 201, answer.text
    assert execution_count(index, event.run.runId) == 1


@pytest.mark.parametrize(("event", "size"), [
    ({"inputs": [{}, {}], "outputs": [{"facets": {"schema": {"fields": [{"name": "a", "fields": [{"name": "b"}]}]}}}]},
     EventSize(3, 2, 0)),
    ({"outputs": [{"facets": {"columnLineage": {
        "fields": {"x": {"inputFields": [{"transformations": [{}, {}]}, {}]}},
        "dataset": [{}, {"transformations": [{}, {}, {}]}]}, "schema": {"fields": [{"name": "y"}, {"name": "x"}]}}}]},
     EventSize(1, 2, 3 + 4 * 2)),
    ({"dataset": {"facets": {"schema": {"fields": "not a list"}}}}, EventSize(1, 0, 0)),
    ({"outputs": "not a list", "inputs": [1, None]}, EventSize(0, 0, 0)),
    ([], EventSize(0, 0, 0)),
])
def test_event_size_counts_what_the_mapping_expands_and_nothing_of_a_bad_shape(event: Any, size: EventSize) -> None:
    assert event_size(event) == size


# -- large events beside small ones -------------------------------------------------------------

def test_small_events_are_not_queued_behind_a_large_one(served: Served, index: SolrIndex) -> None:
    """A large event (1,900 tables of 8 columns: about 34,000 documents) is being written (its
    first tables searchable); a small event of other datasets is answered before it, the
    COMPLETE of the large event's own run after it, and the run is merged from both."""
    database = f"hol{uuid.uuid4().hex[:8]}"
    big_run, big_job = str(uuid.uuid4()), f"{database}_big"
    big = wide_job_run(big_run, big_job, database, outputs=1900, columns=8, state=RunState.START)
    answered: list[tuple[str, int]] = []

    def post(name: str, event: RunEvent) -> None:
        answered.append((name, emit(served.url, event).status_code))

    def being_written() -> bool:
        """Some of the large event's tables written (its first slices), the rest not."""
        assert big_post.is_alive(), f"the large event was answered before it was seen in flight: {answered}"
        if metric(served, "navd_openlineage_large_events_in_flight") != 1:
            return False
        # Made searchable now: waiting for the 1 s soft commit would leave the large event
        # less to write (a race the test lost when writes got faster).
        index.commit("elements", soft=True)
        return index.count("elements", f"qualifiedName:{database}.t* AND type:TABLE") > 0

    big_post = threading.Thread(target=post, args=("big", big))
    big_post.start()
    try:
        deadline = time.monotonic() + IN_FLIGHT_SECONDS
        while not being_written():
            assert time.monotonic() < deadline, f"the large event never showed in flight: {answered}"
            time.sleep(0.05)
        post("small", job_run(str(uuid.uuid4()), f"{database}_small", RunState.COMPLETE, database=f"{database}s"))
        assert answered == [("small", 201)]
        same_run = threading.Thread(target=post, args=(
            "same run", wide_job_run(big_run, big_job, database, outputs=1, columns=8)))
        same_run.start()
        same_run.join(IN_FLIGHT_SECONDS)
    finally:
        big_post.join(IN_FLIGHT_SECONDS)
    assert answered == [("small", 201), ("big", 201), ("same run", 201)]
    assert metric(served, "navd_openlineage_large_events_in_flight") == 0
    visible(index)
    doc = index.get("elements", [EntityRef(SourceType.OPENLINEAGE, f"openlineage://{JOB_NAMESPACE}/{big_job}/{big_run}",
                                           ElementType.OPERATION_EXECUTION).identity])[0]
    assert json.loads(doc["properties"])["state"] == "COMPLETE" and doc["started"] == "2026-11-23T06:00:00Z"
    assert index.count("elements", f"qualifiedName:{database}.t*") == 1900 * 9  # tables and columns


# -- names Solr cannot index ----------------------------------------------------------------------

LONG = 100_000


@pytest.mark.parametrize(("build", "parameter", "field"), [
    (lambda: run_event("j" * LONG), "$.job.name", "$.job.name"),
    (lambda: run_event("load", outputs=[OutputDataset(namespace="postgres://db:5432", name="t" * LONG)]),
     "$.outputs[0].name", "$.outputs[0].name"),
    (lambda: run_event("load", outputs=[OutputDataset(namespace=HDFS, name="/data/out", facets={"schema": schema("c" * LONG)})]),
     "$.outputs[0].facets.schema.fields[0].name", "$.outputs[0].facets.schema.fields[0].name"),
    # each part fits, the name they make does not
    (lambda: run_event("j" * 17_000, namespace="n" * 17_000), "body", "qualifiedName"),
    (lambda: run_event("load", job_facets={"sql": sql_job.SQLJobFacet(query="select " + "x" * 40_000)}),
     "body", "queryText"),
])
def test_a_name_too_long_for_the_index_is_refused_400_naming_the_field(
        served: Served, index: SolrIndex, build: Any, parameter: str, field: str) -> None:
    event = build()
    answer = emit(served.url, event)
    assert answer.status_code == 400, answer.text[:500]
    body = answer.json()
    assert body["parameter"] == parameter
    assert field in body["error"] and f"{MAX_TERM_BYTES:,} bytes" in body["error"], body["error"][:500]
    assert "immense" not in body["error"] and len(body["error"]) < 1000  # not Solr's own words
    assert execution_count(index, event.run.runId) == 0
    assert served.get("/healthz").status_code == 200


def test_oversized_terms_are_found_as_solr_analyses_each_field() -> None:
    element = Element(SourceType.OPENLINEAGE, ElementType.OPERATION, "openlineage://n/j", name="j")
    fits = [element, Element(SourceType.OPENLINEAGE, ElementType.OPERATION, "q", name="q",
                             query_text="select " * 20_000, description="word " * 20_000,
                             execution_plan="p" * 100_000, properties={"k": "v" * 8000})]
    assert [oversized_term(e) for e in fits] == [None, None]
    relation = Relation(RelationType.DATA_FLOW, EntityRef(SourceType.HDFS, "hdfs://nn/" + "a" * 40_000, ElementType.FILE),
                        EntityRef(SourceType.HDFS, "hdfs://nn/b", ElementType.FILE))
    too_long = {
        "qualifiedName": Element(SourceType.OPENLINEAGE, ElementType.OPERATION, "q" * 40_000, name="q"),
        "queryText": Element(SourceType.OPENLINEAGE, ElementType.OPERATION, "q", name="q", query_text="s," * 20_000),
        "description": Element(SourceType.OPENLINEAGE, ElementType.OPERATION, "q", name="q", description="w" * 40_000),
        "prop_k": Element(SourceType.OPENLINEAGE, ElementType.OPERATION, "q", name="q", properties={"k": "v" * 40_000}),
        "endpoint1QualifiedName": relation,
        # two bytes a character in UTF-8: 20,000 of them are 40,000 bytes
        "originalName": Element(SourceType.OPENLINEAGE, ElementType.OPERATION, "q", name="é" * 20_000),
    }
    assert {field: (oversized_term(record) or ("", 0))[0] for field, record in too_long.items()} == {
        field: field for field in too_long}


# -- another metastore's tables -----------------------------------------------------------------

def test_an_unknown_metastore_keeps_its_own_namespace_with_one_warning(
        served: Served, index: SolrIndex, cluster: str) -> None:
    """Three events name tables of a metastore no [openlineage.namespaces] entry maps (also as
    the symlink of a path): their datasets are OPENLINEAGE tables of that namespace, the path
    stays a path, nothing lands on `[cluster] name`'s Hive tables; one warning, a counter of
    three. `hive://<cluster>` (navd's own export of a cluster) is that cluster's."""
    database = f"meta{uuid.uuid4().hex[:8]}"
    before = metric(served, "navd_openlineage_unknown_metastore_events_total") or 0.0
    symlink = symlinks_dataset.SymlinksDatasetFacet(identifiers=[symlinks_dataset.Identifier(
        namespace=OTHER_METASTORE, name=f"{database}.linked", type="TABLE")])
    for n in range(3):
        answer = emit(served.url, run_event(
            f"{database}_{n}", inputs=[InputDataset(namespace=OTHER_METASTORE, name=f"{database}.orders"),
                                       InputDataset(namespace=HDFS, name=f"/warehouse/{database}.db/linked",
                                                    facets={"symlinks": symlink})],
            outputs=[OutputDataset(namespace=f"hive://{cluster}", name=f"{database}.exported")]))
        assert answer.status_code == 201, answer.text
    visible(index)
    elsewhere = f"{OTHER_METASTORE}/{database}.orders"
    assert index.count("elements", f'qualifiedName:"{elsewhere}" AND sourceType:OPENLINEAGE AND type:TABLE') == 1
    assert index.count("elements", f'qualifiedName:"{database}.orders@{cluster}"') == 0
    assert index.count("elements", f'qualifiedName:"{database}.linked@{cluster}"') == 0
    assert index.count("relations", f'endpoint1QualifiedName:"{HDFS}/warehouse/{database}.db/linked" '
                                    "AND type:DATA_FLOW") == 3
    assert index.count("relations", f'endpoint2QualifiedName:"{database}.exported@{cluster}" AND type:DATA_FLOW') == 3
    warnings = [json.loads(line) for line in served.log.read_text().splitlines()
                if OTHER_METASTORE in line and "no metastore navd knows" in line]
    assert [(w["level"], w["namespace"]) for w in warnings] == [("warning", OTHER_METASTORE)]
    assert metric(served, "navd_openlineage_unknown_metastore_events_total") == before + 3
