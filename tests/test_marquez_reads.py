"""Marquez's namespace, job and run reads as marquez-python (unmodified) asks them of a real
`navd serve` over the session Solr, after the intake took events; Marquez's own writes refused
with a 405 that says why."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from marquez_client import MarquezClient
from openlineage.client.event_v2 import RunState

from conftest import Served, serve_on_free_port
from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr
from openlineage_events import as_json, job_run


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr, index: SolrIndex) -> Iterator[Served]:
    del index  # the session's cores exist before the server writes to them
    tmp = tmp_path_factory.mktemp("marquez")
    with serve_on_free_port(tmp, solr_server, extra=f'[openlineage]\nenabled = true\nspool_dir = "{tmp / "spool"}"\n'
                            ) as serving:
        yield serving


@pytest.fixture(scope="module")
def namespace() -> str:
    return f"airflow://scheduler-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def runs(served: Served, index: SolrIndex, namespace: str) -> dict[str, list[str]]:
    """Two jobs of a namespace of their own: `load` run twice (the second failed), `report` once."""
    posted: dict[str, list[str]] = {"load": [], "report": []}
    for job, state, offset in (("load", RunState.COMPLETE, 0), ("load", RunState.FAIL, 600),
                               ("report", RunState.COMPLETE, 1200)):
        run_id = str(uuid.uuid4())
        for event_state, at in ((RunState.START, offset), (state, offset + 30)):
            error = "disk full" if event_state == RunState.FAIL else None
            body: dict[str, Any] = as_json(job_run(run_id, job, event_state, offset=at, database="marquez",
                                                   error=error))
            body["job"]["namespace"] = namespace
            answer = requests.post(f"{served.url}/api/v1/lineage", data=json.dumps(body), timeout=60,
                                   headers={"Content-Type": "application/json"})
            assert answer.status_code == 201, answer.text
        posted[job].append(run_id)
    for core in ("elements", "relations"):
        index.commit(core, soft=True)
    return posted


def test_marquez_python_lists_namespaces_jobs_and_runs(served: Served, namespace: str,
                                                       runs: dict[str, list[str]]) -> None:
    client = MarquezClient(url=served.url)
    listed = client.list_namespaces()["namespaces"]
    assert namespace in {n["name"] for n in listed}
    assert client.get_namespace(namespace)["name"] == namespace

    jobs = client.list_jobs(namespace)
    assert jobs["totalCount"] == 2
    assert [(j["namespace"], j["name"]) for j in jobs["jobs"]] == [(namespace, "load"), (namespace, "report")]
    load = client.get_job(namespace, "load")
    assert load["id"] == {"namespace": namespace, "name": "load"}
    assert load["latestRun"]["id"] == runs["load"][1] and load["latestRun"]["state"] == "FAILED"
    assert load["facets"] == {"sql": {"query": "insert into marquez.revenue select ..."}}
    assert load["latestRun"]["facets"]["errorMessage"] == {"message": "disk full", "programmingLanguage": "PYTHON"}

    load_runs = client.list_job_runs(namespace, "load")
    assert load_runs["totalCount"] == 2
    assert [(r["id"], r["state"]) for r in load_runs["runs"]] == [(runs["load"][1], "FAILED"),
                                                                  (runs["load"][0], "COMPLETED")]
    first = client.get_job_run(runs["load"][0])
    assert (first["startedAt"], first["endedAt"], first["durationMs"]) == (
        "2026-11-23T06:00:00Z", "2026-11-23T06:00:30Z", 30_000)
    assert first["facets"] == {"nominalTime": {"nominalStartTime": "2026-11-23T05:00:00.000Z",
                                               "nominalEndTime": "2026-11-23T06:00:00.000Z"}}


def test_jobs_of_every_namespace_page(served: Served, namespace: str, runs: dict[str, list[str]]) -> None:
    del runs
    first = served.get("/api/v1/jobs", params={"limit": 1}).json()
    assert len(first["jobs"]) == 1 and first["totalCount"] >= 2
    names = set()
    offset = 0
    while offset < first["totalCount"]:
        page = served.get("/api/v1/jobs", params={"limit": 100, "offset": offset}).json()
        names |= {(j["namespace"], j["name"]) for j in page["jobs"]}
        offset += 100
    assert {(namespace, "load"), (namespace, "report")} <= names


@pytest.mark.parametrize(("path", "word"), [
    ("/api/v1/namespaces/{ns}/jobs/nosuchjob", "job"),
    ("/api/v1/namespaces/nosuchnamespace", "namespace"),
    ("/api/v1/jobs/runs/0b3f5c4e-0000-4000-8000-000000000000", "runId"),
    ("/api/v1/namespaces/{ns}/jobs/load/versions/x/y", "path"),
])
def test_what_navd_does_not_hold_is_404(served: Served, namespace: str, runs: dict[str, list[str]], path: str,
                                        word: str) -> None:
    del runs
    answer = served.get(path.replace("{ns}", requests.utils.quote(namespace, safe="")))
    assert answer.status_code == 404, answer.text
    assert answer.json()["error"].startswith(word)


def test_marquez_writes_are_405_with_a_message(served: Served, namespace: str) -> None:
    client = MarquezClient(url=served.url)
    with pytest.raises(Exception):  # noqa: B017, PT011 - marquez-python raises its own error type for a 4xx
        client.create_namespace("new_namespace", "me")
    for method, path in (("PUT", "/api/v1/namespaces/new_namespace"), ("DELETE", f"/api/v1/namespaces/{namespace}"),
                         ("PUT", "/api/v1/tags/pii"), ("POST", "/api/v1/namespaces/ns/datasets/d/tags/pii"), ("POST", "/api/v1/jobs/runs/x/complete")):
        answer = requests.request(method, served.url + path, timeout=30)
        assert answer.status_code == 405, (method, path, answer.text)
        assert "read-only" in answer.json()["error"], (method, path)


def test_marquez_python_lists_and_reads_the_datasets_events_reported(served: Served, runs: dict[str, list[str]]
                                                                     ) -> None:
    """The events' unknown metastore keeps its datasets under its own namespace; the HDFS output
    is a path of `hdfs://nn:8020`."""
    del runs
    client = MarquezClient(url=served.url)
    hive = "hive://metastore:9083"
    listed = client.list_datasets(hive, limit=1000)
    names = [d["name"] for d in listed["datasets"]]
    assert {"marquez.orders", "marquez.customers", "marquez.revenue"} <= set(names)
    assert names == sorted(names) and listed["totalCount"] >= 3
    assert all(d["namespace"] == hive for d in listed["datasets"])
    revenue = client.get_dataset(hive, "marquez.revenue")
    assert revenue["id"] == {"namespace": hive, "name": "marquez.revenue"}
    assert [(f["name"], f["type"]) for f in revenue["fields"]] == [("region", "STRING"), ("total", "DECIMAL(20,2)")]
    assert revenue["facets"]["schema"] == {"fields": [{"name": "region", "type": "STRING"},
                                                      {"name": "total", "type": "DECIMAL(20,2)"}]}
    versions = client.list_dataset_versions(hive, "marquez.revenue")
    assert versions["totalCount"] == 1
    current = versions["versions"][0]
    assert current["version"] == revenue["currentVersion"] and uuid.UUID(current["version"])
    assert current["id"] == {"namespace": hive, "name": "marquez.revenue", "version": revenue["currentVersion"]}
    assert current["fields"] == revenue["fields"]
    assert client.get_dataset_version(hive, "marquez.revenue", current["version"]) == current
    orders = client.get_dataset(hive, "marquez.orders")
    assert orders["currentVersion"] != revenue["currentVersion"]
    assert client.get_dataset(hive, "marquez.revenue")["currentVersion"] == revenue["currentVersion"]
    export = client.get_dataset("hdfs://nn:8020", "/data/marquez/revenue_export")
    assert export["id"] == {"namespace": "hdfs://nn:8020", "name": "/data/marquez/revenue_export"}
    # the namespaces of datasets are Marquez's namespaces too: the UI's namespace picker lists them
    assert {hive, "hdfs://nn:8020"} <= {n["name"] for n in client.list_namespaces(limit=1000)["namespaces"]}
    assert client.get_namespace(hive)["name"] == hive
    paths = {d["name"] for d in client.list_datasets("hdfs://nn:8020", limit=1000)["datasets"]}
    assert "/data/marquez/revenue_export" in paths and "marquez.revenue" not in paths


def test_a_dataset_navd_does_not_hold_is_404(served: Served, runs: dict[str, list[str]]) -> None:
    del runs
    for path in ("/api/v1/namespaces/hive%3A%2F%2Fmetastore%3A9083/datasets/marquez.nosuch",
                 "/api/v1/namespaces/hive%3A%2F%2Fmetastore%3A9083/datasets/marquez.nosuch/versions"):
        answer = served.get(path)
        assert answer.status_code == 404, answer.text
        assert answer.json()["error"].startswith("dataset"), answer.text
    answer = served.get("/api/v1/namespaces/hive%3A%2F%2Fmetastore%3A9083/datasets/marquez.revenue/versions/"
                        "0b3f5c4e-0000-4000-8000-000000000000")
    assert answer.status_code == 404 and answer.json()["error"].startswith("version"), answer.text


def test_lineage_job_nodes_carry_their_latest_run(served: Served, namespace: str, runs: dict[str, list[str]]) -> None:
    graph = served.get("/api/v1/lineage", params={"nodeId": f"job:{namespace}:load", "depth": 1}).json()["graph"]
    load = next(n for n in graph if n["id"] == f"job:{namespace}:load")
    assert load["data"]["latestRun"]["id"] == runs["load"][1]
    assert load["data"]["latestRun"]["state"] == "FAILED"
    assert [r["id"] for r in load["data"]["latestRuns"]] == [runs["load"][1]]
    assert load["data"]["facets"]["sql"] == {"query": "insert into marquez.revenue select ..."}


def test_search_finds_jobs_and_datasets_by_a_part_of_their_name(served: Served, namespace: str,
                                                                 runs: dict[str, list[str]]) -> None:
    del runs
    found = served.get("/api/v1/search", params={"q": "LOA", "filter": "JOB", "limit": 1000}).json()
    assert {"type": "JOB", "name": "load", "namespace": namespace, "nodeId": f"job:{namespace}:load"} in [
        {k: r[k] for k in ("type", "name", "namespace", "nodeId")} for r in found["results"]]
    assert all(r["type"] == "JOB" and "loa" in r["name"].lower() for r in found["results"])
    assert found["totalCount"] == len(found["results"])
    datasets = served.get("/api/v1/search", params={"q": "marquez.rev", "filter": "DATASET"}).json()["results"]
    assert [(r["namespace"], r["name"], r["nodeId"]) for r in datasets] == [
        ("hive://metastore:9083", "marquez.revenue", "dataset:hive://metastore:9083:marquez.revenue")]
    both = served.get("/api/v1/search", params={"q": "marquez"}).json()
    assert {r["type"] for r in both["results"]} == {"DATASET"} and len(both["results"]) <= 10


@pytest.mark.parametrize(("params", "word"), [({"q": ""}, "q"), ({"q": "x", "filter": "TABLE"}, "filter"),
                                              ({"q": "x", "sort": "SIZE"}, "sort")])
def test_search_refuses_what_marquez_does_not_know(served: Served, params: dict[str, str], word: str) -> None:
    answer = served.get("/api/v1/search", params=params)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"].startswith(word)


def _enc(value: str) -> str:
    """JavaScript's encodeURIComponent, as Marquez's web UI encodes path parts."""
    return requests.utils.quote(value, safe="!'()*-._~")


#: what the UI's lineage page reads of each answer (web/src/types/api.ts: Job, Run, Dataset, ...)
JOB_READ = {"id", "name", "namespace", "type", "latestRun", "updatedAt", "description", "facets", "location"}
RUN_READ = {"id", "state", "startedAt", "endedAt", "durationMs", "createdAt", "facets", "nominalStartTime"}
DATASET_READ = {"id", "name", "namespace", "type", "fields", "facets", "updatedAt", "description", "tags",
                "currentVersion"}
NODE_READ = {"id", "type", "data", "inEdges", "outEdges"}


def test_the_marquez_web_ui_requests_of_a_jobs_lineage_page(served: Served, namespace: str,
                                                            runs: dict[str, list[str]]) -> None:
    """The requests Marquez's web UI (web/src/store/requests: lineage.ts, jobs.ts, search.ts)
    sends opening the lineage page of a job, sent as it spells them: the nodeId not encoded,
    the trailing slashes of `lineage/` and `search/`."""
    del runs
    lineage = served.get(f"/api/v1/lineage/?nodeId=job:{namespace}:load&depth=5")
    assert lineage.status_code == 200, lineage.text
    nodes = {n["id"]: n for n in lineage.json()["graph"]}
    job = nodes[f"job:{namespace}:load"]
    assert set(job) == NODE_READ and set(job["data"]) >= JOB_READ
    assert job["data"]["latestRun"]["state"] == "FAILED" and set(job["data"]["latestRun"]) >= RUN_READ
    assert "dataset:hive://metastore:9083:marquez.revenue" in {e["destination"] for e in job["outEdges"]}
    jobs = served.get(f"/api/v1/namespaces/{_enc(namespace)}/jobs?limit=25&offset=0")
    assert jobs.status_code == 200 and all(set(j) >= JOB_READ for j in jobs.json()["jobs"])
    listed_runs = served.get(f"/api/v1/namespaces/{_enc(namespace)}/jobs/load/runs?limit=100&offset=0")
    assert listed_runs.status_code == 200 and [set(r) >= RUN_READ for r in listed_runs.json()["runs"]] == [True, True]
    search = served.get("/api/v1/search/?q=load&sort=NAME&limit=100")
    assert search.status_code == 200
    assert f"job:{namespace}:load" in {r["nodeId"] for r in search.json()["results"]}


def test_the_marquez_web_ui_requests_of_a_datasets_lineage_page(served: Served, runs: dict[str, list[str]]) -> None:
    """As above for a dataset (lineage.ts, datasets.ts, columnlineage.ts): the column lineage's
    nodeId carries the namespace and name encoded (encodeURIComponent), the lineage's not."""
    del runs
    hive, name = "hive://metastore:9083", "marquez.revenue"
    lineage = served.get(f"/api/v1/lineage/?nodeId=dataset:{hive}:{name}&depth=5")
    assert lineage.status_code == 200, lineage.text
    node = {n["id"]: n for n in lineage.json()["graph"]}[f"dataset:{hive}:{name}"]
    assert set(node) == NODE_READ and set(node["data"]) >= DATASET_READ
    assert [f["name"] for f in node["data"]["fields"]] == ["region", "total"]
    dataset = served.get(f"/api/v1/namespaces/{_enc(hive)}/datasets/{_enc(name)}")
    assert dataset.status_code == 200 and set(dataset.json()) >= DATASET_READ
    versions = served.get(f"/api/v1/namespaces/{_enc(hive)}/datasets/{_enc(name)}/versions?limit=100&offset=0")
    assert versions.status_code == 200
    assert [v["version"] for v in versions.json()["versions"]] == [dataset.json()["currentVersion"]]
    assert node["data"]["currentVersion"] == dataset.json()["currentVersion"]
    listed = served.get(f"/api/v1/namespaces/{_enc(hive)}/datasets?limit=20&offset=0")
    assert listed.status_code == 200 and all(set(d) >= DATASET_READ for d in listed.json()["datasets"])
    columns = served.get(f"/api/v1/column-lineage?nodeId=dataset:{_enc(hive)}:{_enc(name)}&depth=5"
                         "&withDownstream=true")
    assert columns.status_code == 200, columns.text
    fields = {n["id"]: n for n in columns.json()["graph"]}
    total = fields[f"datasetField:{hive}:{name}:total"]["data"]
    assert {(f["dataset"], f["field"]) for f in total["inputFields"]} >= {("marquez.orders", "amount")}


#: more datasets than one page of the listings below
PAGED_TABLES, PAGED_PATHS, PAGE = 7, 4, 3


@pytest.fixture(scope="module")
def paged(served: Served, index: SolrIndex) -> tuple[str, str, str]:
    """A STREAMING job of a namespace of its own reading PAGED_TABLES tables of a database of
    their own (a namespace only OpenLineage knows) and writing PAGED_PATHS paths of a file
    system of their own: (the job's namespace, the tables', the paths')."""
    suffix = uuid.uuid4().hex[:8]
    jobs, tables, paths = f"flink://jobmanager-{suffix}", f"postgres://db-{suffix}:5432", f"hdfs://nn-{suffix}:8020"
    for state, at in ((RunState.START, 0), (RunState.COMPLETE, 30)):
        body: dict[str, Any] = as_json(job_run(str(uuid.UUID(int=int(suffix, 16))), "stream", state, offset=at))
        body["job"]["namespace"] = jobs
        body["job"]["facets"]["jobType"] = {"_producer": "https://flink.apache.org", "_schemaURL":
                                            "https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json",
                                            "processingType": "STREAMING", "integration": "FLINK", "jobType": "JOB"}
        body["inputs"] = [{"namespace": tables, "name": f"public.t{n:02d}"} for n in range(PAGED_TABLES)]
        body["inputs"][0]["facets"] = {"schema": {
            "_producer": "https://flink.apache.org", "_schemaURL":
            "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
            "fields": [{"name": "id", "type": "BIGINT", "description": "the order's number"}]}}
        body["outputs"] = [{"namespace": paths, "name": f"/out/p{n:02d}"} for n in range(PAGED_PATHS)]
        answer = requests.post(f"{served.url}/api/v1/lineage", data=json.dumps(body), timeout=60,
                               headers={"Content-Type": "application/json"})
        assert answer.status_code == 201, answer.text
    for core in ("elements", "relations"):
        index.commit(core, soft=True)
    return jobs, tables, paths


def test_dataset_listings_page_as_marquez_does(served: Served, paged: tuple[str, str, str]) -> None:
    """limit and offset cut the namespace's datasets in name order; totalCount counts them all,
    on every page, past the last one and at limit 0 too."""
    _jobs, tables, paths = paged
    for namespace, names in ((tables, [f"public.t{n:02d}" for n in range(PAGED_TABLES)]),
                             (paths, [f"/out/p{n:02d}" for n in range(PAGED_PATHS)])):
        seen = []
        for offset in range(0, len(names) + PAGE, PAGE):
            page = served.get(f"/api/v1/namespaces/{_enc(namespace)}/datasets",
                              params={"limit": PAGE, "offset": offset}).json()
            assert page["totalCount"] == len(names), page
            assert [d["name"] for d in page["datasets"]] == names[offset:offset + PAGE]
            assert all(d["namespace"] == namespace for d in page["datasets"])
            seen += [d["name"] for d in page["datasets"]]
        assert seen == names
        empty = served.get(f"/api/v1/namespaces/{_enc(namespace)}/datasets", params={"limit": 0}).json()
        assert (empty["datasets"], empty["totalCount"]) == ([], len(names))
    first = served.get(f"/api/v1/namespaces/{_enc(tables)}/datasets", params={"limit": 1}).json()["datasets"][0]
    assert first["fields"] == [{"name": "id", "type": "BIGINT", "tags": [], "description": "the order's number"}]


def test_search_counts_every_match_and_returns_one_page(served: Served, paged: tuple[str, str, str]) -> None:
    _jobs, tables, _paths = paged
    found = served.get("/api/v1/search", params={"q": "PUBLIC.T0", "filter": "DATASET", "limit": 2}).json()
    assert found["totalCount"] >= PAGED_TABLES and len(found["results"]) == 2
    every = served.get("/api/v1/search", params={"q": "public.t0", "filter": "DATASET", "limit": 1000}).json()
    ours = sorted(r["name"] for r in every["results"] if r["namespace"] == tables)
    assert ours == [f"public.t{n:02d}" for n in range(PAGED_TABLES)]
    assert every["totalCount"] == len(every["results"])
    # a part of the root is no part of a path's name
    outside = served.get("/api/v1/search", params={"q": paged[2].split("//")[1], "filter": "DATASET"}).json()
    assert outside["totalCount"] == 0, outside


def test_namespaces_of_datasets_only_are_listed_and_have_no_jobs(served: Served, paged: tuple[str, str, str],
                                                                 runs: dict[str, list[str]]) -> None:
    """Every file system's namespace is listed (two here: the skip from one root to the next)."""
    del runs  # their HDFS output is the other file system
    jobs, tables, paths = paged
    listed = {n["name"] for n in served.get("/api/v1/namespaces", params={"limit": 1000}).json()["namespaces"]}
    assert {jobs, tables, paths, "hdfs://nn:8020"} <= listed
    for namespace in (tables, paths):
        answer = served.get(f"/api/v1/namespaces/{_enc(namespace)}/jobs")
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"jobs": [], "totalCount": 0}
    assert served.get("/api/v1/namespaces/nosuchnamespace/jobs").status_code == 404


def test_a_streaming_job_is_marquez_s_stream(served: Served, paged: tuple[str, str, str]) -> None:
    jobs, _tables, _paths = paged
    job = MarquezClient(url=served.url).get_job(jobs, "stream")
    assert job["type"] == "STREAM"
    assert job["facets"]["jobType"] == {"processingType": "STREAMING", "integration": "FLINK", "jobType": "JOB"}
    graph = served.get("/api/v1/lineage", params={"nodeId": f"job:{jobs}:stream", "depth": 1}).json()["graph"]
    assert {n["id"]: n for n in graph}[f"job:{jobs}:stream"]["data"]["type"] == "STREAM"
    load = MarquezClient(url=served.url).list_jobs(jobs)["jobs"][0]
    assert load["type"] == "STREAM"
