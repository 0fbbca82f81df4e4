"""`navd export openlineage` on a real extraction: a captured Spark event log extracted by
`navd extract spark` into the session Solr, exported as NDJSON RunEvents, each checked against
the vendored OpenLineage schema, the columnLineage facets equal to navd's column edges; then the
events posted to a real `navd serve` intake land on the same navd elements (round trip)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from datetime import datetime, timezone
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from conftest import NavdRunner
from navd.index.client import IndexWriter, SolrIndex
from navd.model import (
    DependencyType,
    Element,
    ElementType,
    EntityRef,
    Relation,
    RelationType,
    SourceType,
    hive_qualified_name,
)
from navd.names import field_ref, openlineage_dataset_name, openlineage_dataset_ref
from navd.openlineage.schema import validate
from navd.solr.server import EmbeddedSolr
from conftest import Served, serve_on_free_port
from test_spark_extractor import extract_captured

#: the captured application: filters, joins, aggregates, windows (tests/fixtures/spark_events)
CASE = "column_filters_joins"


def run_navd(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The installed `navd` command (as conftest's `navd`, which is per test; this is for a
    module's fixture)."""
    return subprocess.run([str(Path(sys.executable).parent / "navd"), *args], env=env, capture_output=True,
                          text=True, timeout=240, check=False)


@pytest.fixture(scope="module")
def exported(solr_server: EmbeddedSolr, index: SolrIndex,
             tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str], list[dict[str, Any]]]:
    """The captured log extracted; its application's events exported to a file with --validate:
    (the application id, the environment, the events)."""
    tmp = tmp_path_factory.mktemp("ol-export")
    app_id, env, _ = extract_captured(run_navd, CASE, tmp, solr_server)
    for core in ("elements", "relations"):
        index.commit(core)
    out = tmp / "events.ndjson"
    result = run_navd("export", "openlineage", "--entity", f"spark://{app_id}/1", "--validate", "--output",
                      str(out), env=env)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return app_id, env, events


def navd_column_edges(index: SolrIndex, executions: list[str]) -> set[tuple[str, str, str, str, str, str]]:
    """navd's column edges written by `executions`: (type, source, target, subtype, dependency, expression)."""
    filters = ["type:(DATA_FLOW OR CONTROL_FLOW)", "endpoint1Type:FIELD",
               "{!terms f=discriminator}" + ",".join(executions)]
    return {(d["type"], d["endpoint1QualifiedName"], d["endpoint2QualifiedName"],
             json.loads(d.get("properties") or "{}").get("subtype", ""), d.get("dependencyType", ""),
             d.get("expression", "")) for d in index.scan("relations", "*:*", filters=filters)}


def hive_field(namespace: str, name: str, field: str) -> str:
    """An exported Hive column back to navd's name, by hand (`hive://primary` + `db.t` + `c`)."""
    assert namespace == "hive://primary", namespace
    return f"{name}.{field}@primary"


def facet_edges(events: list[dict[str, Any]]) -> set[tuple[str, str, str, str, str, str]]:
    """The columnLineage facets of `events` as navd edges: DIRECT -> DATA_FLOW (IDENTITY SIMPLE,
    else EXPRESSION with the description), INDIRECT -> CONTROL_FLOW, subtypes of one pair joined
    in the order navd writes them."""
    control_order = ["FILTER", "JOIN", "GROUP_BY", "SORT", "WINDOW", "CONDITIONAL"]
    edges = set()
    for event in events:
        for output in event["outputs"]:
            lineage = output.get("facets", {}).get("columnLineage")
            if not lineage:
                continue
            for column, spec in lineage["fields"].items():
                target = hive_field(output["namespace"], output["name"], column)
                for source in spec["inputFields"]:
                    origin = hive_field(source["namespace"], source["name"], source["field"])
                    direct = [t for t in source["transformations"] if t["type"] == "DIRECT"]
                    control = [t["subtype"] for t in source["transformations"] if t["type"] == "INDIRECT"]
                    for t in direct:
                        simple = t["subtype"] == "IDENTITY"
                        edges.add(("DATA_FLOW", origin, target, t["subtype"], "SIMPLE" if simple else "EXPRESSION",
                                   "" if simple else t.get("description", "")))
                    if control:
                        edges.add(("CONTROL_FLOW", origin, target, ",".join(sorted(control, key=control_order.index)),
                                   "", ""))
    return edges


def execution_names(index: SolrIndex, app_id: str) -> list[str]:
    return sorted(str(d["qualifiedName"]) for d in index.scan(
        "elements", f'qualifiedName:"spark://{app_id}/1" OR parentQualifiedName:"spark://{app_id}/1"',
        filters=["type:OPERATION_EXECUTION"]))


def test_the_export_of_a_spark_extraction_is_valid_and_carries_navds_column_edges(
        exported: tuple[str, dict[str, str], list[dict[str, Any]]], index: SolrIndex) -> None:
    app_id, _env, events = exported
    for event in events:
        assert validate(event) == "RunEvent"  # --validate checked them too; this is the test's own check
    executions = execution_names(index, app_id)
    run_ids = {e["run"]["runId"] for e in events}
    assert len(run_ids) == len(executions)  # every execution, and each under one runId
    # every run starts, and ends as its Spark outcome says
    for run in run_ids:
        assert [e["eventType"] for e in events if e["run"]["runId"] == run] in (["START", "COMPLETE"],
                                                                                ["START", "FAIL"])
    # the SQL executions name their application run as parent, the job is the application
    [app] = {e["run"]["runId"] for e in events if "parent" not in e["run"].get("facets", {})}
    children = [e for e in events if e["run"]["runId"] != app]
    assert children and all(e["run"]["facets"]["parent"]["run"]["runId"] == app for e in children)
    assert {(e["job"]["namespace"], e["job"]["name"]) for e in events} == {("spark", CASE)}
    expected = navd_column_edges(index, executions)
    assert len(expected) > 20
    assert facet_edges(events) == expected
    # inputs and outputs: the tables each execution read and wrote, with their columns
    written = {(o["namespace"], o["name"]) for e in events for o in e["outputs"]}
    assert ("hive://primary", "cl.t_join") in written
    join = next(o for e in events for o in e["outputs"] if o["name"] == "cl.t_join")
    assert {f["name"] for f in join["facets"]["schema"]["fields"]} >= {"order_id", "name"}


def test_an_unknown_entity_and_a_bad_since_are_one_line(navd: NavdRunner,
                                                        exported: tuple[str, dict[str, str], list[dict[str, Any]]]) -> None:
    _app_id, env, _events = exported
    missing = navd("export", "openlineage", "--entity", "no.such_table@primary", env=env)
    assert missing.returncode != 0 and missing.stderr.count("\n") == 1 and "no.such_table" in missing.stderr
    bad = navd("export", "openlineage", "--since", "yesterday", env=env)
    assert bad.returncode == 2 and "--since" in bad.stderr and "Traceback" not in bad.stderr
    later = navd("export", "openlineage", "--since", "2100-01-01", env=env)
    assert later.returncode == 0 and later.stdout == ""
    nowhere = navd("export", "openlineage", "--output", "/nonexistent-dir/x.ndjson", env=env)
    assert nowhere.returncode == 2 and nowhere.stderr.startswith("navd: error: --output: /nonexistent-dir/x.ndjson")
    assert nowhere.stderr.count("\n") == 1


def index_hive_view(index: SolrIndex, database: str) -> None:
    """A table and a view over it with the view's lineage, as the HMS extractor indexes them
    (extractors/hms/extractor.py `_view_lineage`: DATA_FLOW table -> view, column DATA_FLOW
    without an execution)."""
    base = EntityRef(SourceType.HIVE, hive_qualified_name("primary", database, "base"), ElementType.TABLE)
    view = EntityRef(SourceType.HIVE, hive_qualified_name("primary", database, "v"), ElementType.VIEW)
    writer = IndexWriter(index)
    writer.write(Element(SourceType.HIVE, ElementType.TABLE, base.qualified_name, name="base"))
    writer.write(Element(SourceType.HIVE, ElementType.VIEW, view.qualified_name, name="v",
                         query_text=f"select a as x, upper(b) as y from {database}.base",
                         created=datetime(2026, 11, 1, tzinfo=timezone.utc)))
    for table, columns in ((base, ("a", "b")), (view, ("x", "y"))):
        for column in columns:
            field = field_ref(table, column)
            writer.write(Element(SourceType.HIVE, ElementType.FIELD, field.qualified_name, name=column, parent=table,
                                 data_type="string"))
            writer.write(Relation(RelationType.PARENT_CHILD, table, field))
    writer.write(Relation(RelationType.DATA_FLOW, base, view, properties={"via": "view"}))
    writer.write(Relation(RelationType.DATA_FLOW, field_ref(base, "a"), field_ref(view, "x"),
                          dependency_type=DependencyType.SIMPLE))
    writer.write(Relation(RelationType.DATA_FLOW, field_ref(base, "b"), field_ref(view, "y"),
                          dependency_type=DependencyType.EXPRESSION, expression="upper(b)"))
    assert writer.close()
    for core in ("elements", "relations"):
        index.commit(core)


def test_a_hive_views_definition_exports_as_one_run(navd: NavdRunner, index: SolrIndex) -> None:
    database = f"vw{uuid.uuid4().hex[:8]}"
    index_hive_view(index, database)
    result = navd("export", "openlineage", "--entity", f"{database}.v@primary", "--validate")
    assert result.returncode == 0, result.stderr
    [event] = [json.loads(line) for line in result.stdout.splitlines()]
    assert validate(event) == "RunEvent"
    assert (event["eventType"], event["eventTime"]) == ("COMPLETE", "2026-11-01T00:00:00Z")
    assert event["job"]["namespace"] == "hive://primary" and event["job"]["name"] == f"{database}.v"
    assert event["job"]["facets"]["sql"]["query"].startswith("select a as x")
    assert [(i["namespace"], i["name"]) for i in event["inputs"]] == [("hive://primary", f"{database}.base")]
    [output] = event["outputs"]
    assert output["facets"]["schema"]["fields"] == [{"name": "x", "type": "string"}, {"name": "y", "type": "string"}]
    assert output["facets"]["columnLineage"]["fields"] == {
        "x": {"inputFields": [{"namespace": "hive://primary", "name": f"{database}.base", "field": "a",
                               "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}]},
        "y": {"inputFields": [{"namespace": "hive://primary", "name": f"{database}.base", "field": "b",
                               "transformations": [{"type": "DIRECT", "subtype": "TRANSFORMATION",
                                                    "description": "upper(b)"}]}]}}
    # from the table: the view reading it
    from_table = navd("export", "openlineage", "--entity", f"{database}.base@primary")
    assert [json.loads(line)["job"]["name"] for line in from_table.stdout.splitlines()] == [f"{database}.v"]


@pytest.mark.parametrize("ref", [
    EntityRef(SourceType.HDFS, "hdfs://nn:8020/data/x", ElementType.DIRECTORY),
    EntityRef(SourceType.HDFS, "file:///tmp/x y", ElementType.DIRECTORY),
    EntityRef(SourceType.S3, "s3a://bucket/k/v", ElementType.DIRECTORY),
    EntityRef(SourceType.S3, "s3a://bucket/", ElementType.S3BUCKET),
    EntityRef(SourceType.HIVE, "db.t@primary", ElementType.TABLE),
    EntityRef(SourceType.HIVE, "db.t@east", ElementType.TABLE),
    EntityRef(SourceType.OPENLINEAGE, "postgres://db:5432/shop.public.orders", ElementType.TABLE),
    EntityRef(SourceType.OPENLINEAGE, "warehouse://orders", ElementType.TABLE),
])
def test_dataset_names_read_back_to_the_same_element(ref: EntityRef) -> None:
    clusters = {"hive://metastore-east:9083": "east"}
    namespace, name = openlineage_dataset_name(ref, clusters)
    assert openlineage_dataset_ref(namespace, name, clusters, "primary").identity == ref.identity


def test_an_s3_object_is_named_as_openlineage_names_s3_datasets() -> None:
    ref = EntityRef(SourceType.S3, "s3a://bucket/k/v w", ElementType.FILE)
    assert openlineage_dataset_name(ref, {}) == ("s3://bucket", "k/v w")


@pytest.fixture(scope="module")
def intake(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr, index: SolrIndex) -> Iterator[Served]:
    """`navd serve` with the OpenLineage intake on, the default cluster `primary`."""
    del index
    tmp = tmp_path_factory.mktemp("ol-export-serve")
    with serve_on_free_port(tmp, solr_server,
                            extra=f'[openlineage]\nenabled = true\nspool_dir = "{tmp / "spool"}"\n') as served:
        yield served


def test_exported_events_posted_to_the_intake_land_on_the_same_elements(
        exported: tuple[str, dict[str, str], list[dict[str, Any]]], intake: Served, index: SolrIndex) -> None:
    app_id, _env, events = exported
    for event in events:
        answer = requests.post(f"{intake.url}/api/v1/lineage", json=event, timeout=30)
        assert answer.status_code == 201, answer.text
    for core in ("elements", "relations"):
        index.commit(core)
    # the runs the intake made of them: openlineage://spark/<app>/<runId>
    runs = sorted({f"openlineage://spark/{CASE}/{e['run']['runId']}" for e in events})
    by_intake = {edge[:4] for edge in navd_column_edges(index, runs)}
    by_spark = {edge[:4] for edge in navd_column_edges(index, execution_names(index, app_id))}
    assert by_intake == by_spark  # the same columns (identities from the same names), the same subtypes
    # the table edges too: each dataset a run read or wrote is the element Spark's execution did
    for end, other in ((1, 2), (2, 1)):
        spark = {d[f"endpoint{other}Id"] for d in index.scan("relations", "*:*", filters=[
            "type:DATA_FLOW", "{!terms f=endpoint%dQualifiedName}%s" % (end, ",".join(execution_names(index, app_id)))])}
        intake_side = {d[f"endpoint{other}Id"] for d in index.scan("relations", "*:*", filters=[
            "type:DATA_FLOW", "{!terms f=endpoint%dQualifiedName}%s" % (end, ",".join(runs))])}
        assert spark and intake_side == spark
    # the runs the intake took export again under their own runIds, parents and column lineage
    again = run_navd("export", "openlineage", "--entity", f"openlineage://spark/{CASE}", "--validate", env=_env)
    assert again.returncode == 0, again.stderr
    events_again = [json.loads(line) for line in again.stdout.splitlines()]
    assert sorted((e["run"]["runId"], e["eventType"]) for e in events_again) == sorted(
        (e["run"]["runId"], e["eventType"]) for e in events)
    assert {e["run"]["runId"]: e["run"].get("facets", {}).get("parent", {}).get("run") for e in events_again} == {
        e["run"]["runId"]: e["run"].get("facets", {}).get("parent", {}).get("run") for e in events}
    assert facet_edges(events_again) == facet_edges(events)


# -- Marquez's read endpoints -------------------------------------------------------------------

#: the properties of Marquez's schemas (MarquezProject/marquez spec/openapi.yml: GraphNode,
#: GraphEdge, Dataset, Job; ColumnLineageNodeData.java for a DATASET_FIELD node's data)
GRAPH_NODE = {"id", "type", "data", "inEdges", "outEdges"}
GRAPH_EDGE = {"origin", "destination"}
DATASET = {"id", "type", "name", "physicalName", "createdAt", "updatedAt", "namespace", "sourceName", "fields",
           "tags", "lastModifiedAt", "lastLifecycleState", "description", "facets", "currentVersion", "deleted"}
JOB = {"id", "type", "name", "simpleName", "parentJobName", "parentJobUuid", "createdAt", "updatedAt", "namespace",
       "inputs", "outputs", "location", "context", "description", "latestRun", "latestRuns", "facets",
       "currentVersion"}
FIELD_DATA = {"namespace", "dataset", "datasetVersion", "field", "fieldType", "transformationDescription",
              "transformationType", "inputFields"}
INPUT_FIELD = {"namespace", "dataset", "datasetVersion", "field", "transformationDescription", "transformationType"}


def graph_of(served: Served, path: str, **params: Any) -> dict[str, dict[str, Any]]:
    answer = served.get(path, params=params)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert set(body) == {"graph"}
    nodes = {node["id"]: node for node in body["graph"]}
    for node in nodes.values():
        assert set(node) == GRAPH_NODE
        for edge in (*node["inEdges"], *node["outEdges"]):
            assert set(edge) == GRAPH_EDGE
    return nodes


def test_marquez_lineage_of_a_dataset_and_of_a_job(exported: tuple[str, dict[str, str], list[dict[str, Any]]],
                                                   intake: Served) -> None:
    del exported  # extracted: the index holds the application
    orders, joined = "dataset:hive://primary:cl.orders", "dataset:hive://primary:cl.t_join"
    job = f"job:spark:{CASE}"
    nodes = graph_of(intake, "/api/v1/lineage", nodeId=joined, depth=1)
    assert {orders, joined, job} <= set(nodes)
    assert {n["type"] for n in nodes.values()} == {"DATASET", "JOB"}
    for node in nodes.values():
        assert set(node["data"]) >= (DATASET if node["type"] == "DATASET" else JOB)
    # upstream -> downstream, as Marquez's LineageService: the job reads orders and writes t_join
    assert {"origin": orders, "destination": job} in nodes[job]["inEdges"]
    assert {"origin": job, "destination": joined} in nodes[job]["outEdges"]
    assert {"origin": job, "destination": joined} in nodes[joined]["inEdges"]
    assert {"namespace": "hive://primary", "name": "cl.orders"} in nodes[job]["data"]["inputs"]
    assert nodes[joined]["data"]["id"] == {"namespace": "hive://primary", "name": "cl.t_join"}
    for node in nodes.values():  # each edge is told by both its ends when both are in the graph
        for edge in node["outEdges"]:
            if edge["destination"] in nodes:
                assert edge in nodes[edge["destination"]]["inEdges"]
    from_job = graph_of(intake, "/api/v1/lineage", nodeId=job)
    assert {orders, joined} <= set(from_job)


def test_marquez_column_lineage_of_a_field(exported: tuple[str, dict[str, str], list[dict[str, Any]]],
                                           intake: Served) -> None:
    del exported
    target = "datasetField:hive://primary:cl.t_filter:double_amount"
    amount, status = "datasetField:hive://primary:cl.orders:amount", "datasetField:hive://primary:cl.orders:status"
    nodes = graph_of(intake, "/api/v1/column-lineage", nodeId=target, depth=3)
    assert {target, amount, status} <= set(nodes)
    assert {n["type"] for n in nodes.values()} == {"DATASET_FIELD"}
    data = nodes[target]["data"]
    assert set(data) >= FIELD_DATA and all(set(f) >= INPUT_FIELD for f in data["inputFields"])
    inputs = {(f["field"], f["transformationType"], f.get("transformationSubtype"), f["transformationDescription"])
              for f in data["inputFields"]}
    assert ("amount", "DIRECT", "TRANSFORMATION", "(amount * 2.0)") in inputs
    assert ("status", "INDIRECT", "FILTER", None) in inputs
    # as Marquez's ColumnLineageService: a node is the origin of its edges
    assert {"origin": target, "destination": amount} in nodes[target]["inEdges"]
    assert nodes[target]["outEdges"] == [] and target not in graph_of(
        intake, "/api/v1/column-lineage", nodeId=amount, depth=1)
    downstream = graph_of(intake, "/api/v1/column-lineage", nodeId=amount, depth=1, withDownstream="true")
    assert {"origin": amount, "destination": target} in downstream[amount]["outEdges"]


@pytest.mark.parametrize("path, params, status, parameter", [
    ("/api/v1/lineage", {"nodeId": "table:x"}, 400, "nodeId"),
    ("/api/v1/lineage", {"nodeId": "dataset:hive://primary"}, 400, "nodeId"),
    ("/api/v1/lineage", {"nodeId": "datasetField:hive://primary:cl.orders:amount"}, 400, "nodeId"),
    ("/api/v1/lineage", {}, 400, "nodeId"),
    ("/api/v1/lineage", {"nodeId": "dataset:hive://primary:cl.no_such_table"}, 404, "nodeId"),
    ("/api/v1/lineage", {"nodeId": "job:spark:no_such_application"}, 404, "nodeId"),
    ("/api/v1/lineage", {"nodeId": "dataset:hive://primary:cl.orders", "depth": 0}, 400, "depth"),
    ("/api/v1/lineage", {"nodeId": "dataset:hive://primary:cl.orders", "depth": 10_000}, 400, "depth"),
    ("/api/v1/column-lineage", {"nodeId": "run:0d2ab0b6-4b1a-4b2a-9d07-5c8e2ee7c9a1"}, 400, "nodeId"),
    ("/api/v1/column-lineage", {"nodeId": "job:spark:no_such_application"}, 404, "nodeId"),
    ("/api/v1/column-lineage", {"nodeId": "datasetField:hive://primary:cl.orders:nope"}, 404, "nodeId"),
])
def test_marquez_endpoints_refuse_by_name(exported: tuple[str, dict[str, str], list[dict[str, Any]]],
                                          intake: Served, path: str, params: dict[str, Any], status: int,
                                          parameter: str) -> None:
    del exported
    answer = intake.get(path, params=params)
    assert answer.status_code == status, answer.text
    assert answer.json()["parameter"] == parameter
    assert parameter in answer.json()["error"]


def test_the_marquez_python_client_reads_navds_column_lineage(
        exported: tuple[str, dict[str, str], list[dict[str, Any]]], intake: Served) -> None:
    """Marquez's own Python client (marquez-python from PyPI), unmodified, pointed at navd."""
    from marquez_client import MarquezClient

    del exported
    client = MarquezClient(url=intake.url)
    target = "datasetField:hive://primary:cl.t_filter:double_amount"
    by_field = client.get_column_lineage_by_dataset_field("hive://primary", "cl.t_filter", "double_amount", depth=2)
    nodes = {n["id"]: n for n in by_field["graph"]}
    assert {target, "datasetField:hive://primary:cl.orders:amount"} <= set(nodes)
    by_dataset = client.get_column_lineage_by_dataset("hive://primary", "cl.t_filter", depth=2)
    assert {target, "datasetField:hive://primary:cl.t_filter:order_id"} <= {n["id"] for n in by_dataset["graph"]}
    by_job = client.get_column_lineage_by_job("spark", CASE, depth=1)
    assert {target, "datasetField:hive://primary:cl.t_join:name"} <= {n["id"] for n in by_job["graph"]}


def execution_doc(source: str, qualified: str, properties: dict[str, str], **times: str) -> dict[str, Any]:
    return {"identity": "x", "qualifiedName": qualified, "sourceType": source, "type": "OPERATION_EXECUTION",
            "properties": json.dumps(properties), "lastIndexed": "2026-11-23T09:00:00Z", **times}


@pytest.mark.parametrize("doc, states, error", [
    (execution_doc("YARN", "yarn://application_1_0001", {"finalStatus": "KILLED", "diagnostics": "killed by alice"},
                   started="2026-11-23T08:00:00Z", ended="2026-11-23T08:05:00Z"), ["START", "ABORT"], "killed by alice"),
    (execution_doc("SPARK", "spark://local-1/1/sql/3", {"outcome": "FAILED", "error": "boom"},
                   started="2026-11-23T08:00:00Z", ended="2026-11-23T08:05:00Z"), ["START", "FAIL"], "boom"),
    (execution_doc("SPARK", "spark://local-1/1", {"outcome": "RUNNING"}, started="2026-11-23T08:00:00Z"),
     ["START"], None),
    (execution_doc("OPENLINEAGE", "openlineage://ns/job/0d2ab0b6-4b1a-4b2a-9d07-5c8e2ee7c9a1",
                   {"namespace": "ns", "job": "job", "runId": "0d2ab0b6-4b1a-4b2a-9d07-5c8e2ee7c9a1",
                    "state": "COMPLETE", "stateTime": "2026-11-23T08:05:00Z"}, ended="2026-11-23T08:05:00Z"),
     ["COMPLETE"], None),
])
def test_run_events_say_each_sources_outcome(doc: dict[str, Any], states: list[str], error: str | None) -> None:
    from navd.openlineage.export import Execution, ExportSettings, job_name, run_events

    events = run_events(Execution(doc, job_name(None, doc), None, (), (), ()), ExportSettings())
    assert [e["eventType"] for e in events] == states
    for event in events:
        assert validate(event) == "RunEvent"
    assert events[-1]["run"].get("facets", {}).get("errorMessage", {}).get("message") == error
    assert len({e["run"]["runId"] for e in events}) == 1
    if doc["sourceType"] == "OPENLINEAGE":
        assert (events[0]["run"]["runId"], events[0]["job"]) == (
            "0d2ab0b6-4b1a-4b2a-9d07-5c8e2ee7c9a1", {"namespace": "ns", "name": "job"})


def test_pages_of_two_executions_give_the_same_events(exported: tuple[str, dict[str, str], list[dict[str, Any]]],
                                                      index: SolrIndex) -> None:
    """The export reads a page of executions at a time: page boundaries change nothing."""
    from navd.openlineage.export import ExportSettings, execution_filters, export_events

    app_id, _env, events = exported
    identities = sorted(str(d["identity"]) for d in index.scan(
        "elements", f'qualifiedName:"spark://{app_id}/1" OR parentQualifiedName:"spark://{app_id}/1"',
        filters=["type:OPERATION_EXECUTION"]))
    paged = list(export_events(index, ExportSettings(), execution_filters(None, identities), page=2))
    assert len(identities) > 4 and paged == events
