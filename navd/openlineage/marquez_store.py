"""The queries behind Marquez's namespace, job and run reads (navd/server/marquez_routes.py): the
jobs and runs the OpenLineage intake wrote, in Marquez's shapes (MarquezProject/marquez,
spec/openapi.yml at commit a89b89cad: Namespace, Job, Run).

A job is an OPERATION of source type OPENLINEAGE (`openlineage://<namespace>/<name>`), a run an
OPERATION_EXECUTION under it; both carry the OpenLineage namespace (and a run its job and runId)
as properties (navd/openlineage/mapping.py), which these queries filter on. A namespace is a
namespace of such jobs. Names reach Solr only through the term parser (navd.index.filters).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from navd.errors import EntityNotFound
from navd.index.client import SolrIndex
from navd.index.filters import term_filter
from navd.names import openlineage_job_ref
from navd.openlineage.export import stored_properties

_JOBS = "sourceType:OPENLINEAGE AND type:OPERATION"
_RUNS = "sourceType:OPENLINEAGE AND type:OPERATION_EXECUTION"
_EPOCH = "1970-01-01T00:00:00Z"
#: OpenLineage eventType -> Marquez's RunState (Marquez's RunState.java)
RUN_STATES = {"START": "RUNNING", "RUNNING": "RUNNING", "COMPLETE": "COMPLETED", "FAIL": "FAILED",
              "ABORT": "ABORTED", "OTHER": "RUNNING"}
OWNER = "navd"


@dataclasses.dataclass(frozen=True)
class Listing:
    """One page of a listing in Marquez's shape and how many there are in all."""

    items: tuple[dict[str, Any], ...]
    total: int


def namespaces(index: SolrIndex) -> tuple[dict[str, Any], ...]:
    """Every namespace of an OpenLineage job, by name, with the times of its jobs."""
    found = index.search("elements", _JOBS, rows=0, params={
        "facet": "true", "facet.field": "prop_namespace", "facet.limit": -1, "facet.mincount": 1})
    names = found["facet_counts"]["facet_fields"]["prop_namespace"][::2]
    return tuple(namespace(index, str(name)) for name in sorted(names))


def namespace(index: SolrIndex, name: str) -> dict[str, Any]:
    """Marquez's Namespace of `name`; EntityNotFound when no job has it."""
    docs = index.search("elements", _JOBS, rows=1, fl="lastIndexed", sort="lastIndexed asc",
                        filters=[term_filter("prop_namespace", name)])["response"]
    if not docs["numFound"]:
        raise EntityNotFound(f"namespace: no OpenLineage job in the namespace {name[:200]!r}")
    newest = index.search("elements", _JOBS, rows=1, fl="lastIndexed", sort="lastIndexed desc",
                          filters=[term_filter("prop_namespace", name)])["response"]["docs"]
    return {"name": name, "createdAt": str(docs["docs"][0].get("lastIndexed") or _EPOCH),
            "updatedAt": str(newest[0].get("lastIndexed") or _EPOCH), "ownerName": OWNER, "description": None,
            "isHidden": False}


def jobs(index: SolrIndex, namespace_name: str | None, *, limit: int, offset: int) -> Listing:
    """The OpenLineage jobs (of a namespace, or all), by namespace then name."""
    filters = [term_filter("prop_namespace", namespace_name)] if namespace_name is not None else []
    found = index.search("elements", _JOBS, rows=limit, start=offset, filters=filters,
                         sort="qualifiedName asc")["response"]
    return Listing(tuple(_job(index, doc) for doc in found["docs"]), int(found["numFound"]))


def job_names(index: SolrIndex) -> list[tuple[str, str, str]]:
    """(namespace, name, updatedAt) of every OpenLineage job."""
    return [(stored_properties(d).get("namespace", ""), _job_name(d), str(d.get("lastIndexed") or _EPOCH))
            for d in index.scan("elements", _JOBS, fl="identity,name,qualifiedName,properties,lastIndexed")]


def job(index: SolrIndex, namespace_name: str, name: str) -> dict[str, Any]:
    docs = index.get("elements", [openlineage_job_ref(namespace_name, name).identity])
    if not docs:
        raise EntityNotFound(f"job: no OpenLineage job {name[:200]!r} in the namespace {namespace_name[:200]!r}")
    return _job(index, docs[0])


def runs(index: SolrIndex, namespace_name: str, name: str, *, limit: int, offset: int) -> Listing:
    """A job's runs, the latest started first; EntityNotFound for a job navd does not hold."""
    job(index, namespace_name, name)
    found = index.search("elements", _RUNS, rows=limit, start=offset, sort="started desc,identity asc",
                         filters=[term_filter("prop_namespace", namespace_name), term_filter("prop_job", name)]
                         )["response"]
    return Listing(tuple(_run(doc) for doc in found["docs"]), int(found["numFound"]))


def latest_run_of(index: SolrIndex, namespace_name: str, name: str) -> dict[str, Any] | None:
    """The latest started run of an OpenLineage job in Marquez's shape; None for a job with none
    (or one not from the intake: its executions carry no OpenLineage runId)."""
    latest = index.search("elements", _RUNS, rows=1, sort="started desc,identity asc", filters=[
        term_filter("prop_namespace", namespace_name), term_filter("prop_job", name)])["response"]["docs"]
    return _run(latest[0]) if latest else None


def run(index: SolrIndex, run_id: str) -> dict[str, Any]:
    docs = index.search("elements", _RUNS, rows=1, filters=[term_filter("prop_runId", run_id.lower())]
                        )["response"]["docs"]
    if not docs:
        raise EntityNotFound(f"runId: no OpenLineage run {run_id[:100]!r}")
    return _run(docs[0])


def _job(index: SolrIndex, doc: Mapping[str, Any]) -> dict[str, Any]:
    props = stored_properties(doc)
    namespace_name = props.get("namespace", "")
    name = _job_name(doc)
    at = str(doc.get("lastIndexed") or _EPOCH)
    latest_run = latest_run_of(index, namespace_name, name)
    return {"id": {"namespace": namespace_name, "name": name}, "type": "BATCH", "name": name, "simpleName": name,
            "parentJobName": None, "parentJobUuid": None, "createdAt": str(doc.get("created") or at),
            "updatedAt": at, "namespace": namespace_name, "inputs": [], "outputs": [], "location": None,
            "context": {"sql": doc["queryText"]} if doc.get("queryText") else {},
            "description": doc.get("description"), "latestRun": latest_run,
            "latestRuns": [latest_run] if latest_run else [], "facets": job_facets(doc), "currentVersion": None,
            "tags": []}


def job_facets(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The job facets navd keeps, as OpenLineage names them: `sql` (the query text)."""
    return {"sql": {"query": doc["queryText"]}} if doc.get("queryText") else {}


def run_facets(props: Mapping[str, str]) -> dict[str, Any]:
    """The run facets navd keeps (navd/openlineage/mapping.py), as OpenLineage names them:
    `nominalTime`, `parent` and `errorMessage`."""
    facets: dict[str, Any] = {}
    if props.get("parentRunId"):
        facets["parent"] = {"run": {"runId": props["parentRunId"]},
                            "job": {"namespace": props.get("parentJobNamespace", ""), "name": props.get("parentJobName", "")}}
    if props.get("nominalStartTime"):
        facets["nominalTime"] = {"nominalStartTime": props["nominalStartTime"],
                                 **({"nominalEndTime": props["nominalEndTime"]} if props.get("nominalEndTime") else {})}
    if props.get("error"):
        facets["errorMessage"] = {"message": props["error"],
                                  **({"programmingLanguage": props["errorLanguage"]} if props.get("errorLanguage")
                                     else {})}
    return facets


def _job_name(doc: Mapping[str, Any]) -> str:
    return str(doc.get("name") or str(doc["qualifiedName"]).rsplit("/", 1)[-1])


def _run(doc: Mapping[str, Any]) -> dict[str, Any]:
    props = stored_properties(doc)
    started, ended = doc.get("started"), doc.get("ended")
    duration = None
    if started and ended:
        duration = int((_parse(str(ended)) - _parse(str(started))).total_seconds() * 1000)
    at = str(doc.get("lastIndexed") or started or _EPOCH)
    return {"id": props.get("runId", ""), "createdAt": str(started or at), "updatedAt": at,
            "nominalStartTime": props.get("nominalStartTime"), "nominalEndTime": props.get("nominalEndTime"),
            "state": RUN_STATES.get(props.get("state", ""), "NEW"), "startedAt": started, "endedAt": ended,
            "durationMs": duration, "args": {}, "jobVersion": None, "inputDatasetVersions": [],
            "outputDatasetVersions": [], "context": {}, "facets": run_facets(props)}


def _parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
