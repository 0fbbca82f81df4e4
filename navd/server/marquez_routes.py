"""Marquez's read endpoints (docs/sources/openlineage.md): `GET /api/v1/lineage` and `GET
/api/v1/column-lineage` in Marquez's response shape, from navd/openlineage/service.py, with the
caps of /api/lineage (`[server] max_depth`, `max_nodes`); `GET /api/v1/events/lineage`, the
events kept as posted (navd/openlineage/kept.py); namespaces, jobs and runs of the OpenLineage
intake (navd/openlineage/marquez_store.py); the datasets OpenLineage events reported
(navd/openlineage/marquez.py). Served whether or not the intake is on: they read
what any extractor wrote. Marquez's own writes (PUT, POST, DELETE under /api/v1 but the intake)
answer 405 with a message: navd takes lineage as OpenLineage events only.

The routes only translate: every query is in the store modules."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from urllib.parse import unquote

from fastapi import APIRouter, Query, Request

from navd.errors import EntityNotFound
from navd.openlineage import kept, marquez, marquez_store
from navd.openlineage.service import export_settings, marquez_column_lineage, marquez_lineage
from navd.server.api import Config, Index
from navd.server.errors import ApiError, blame, check_range, time_parameter

router = APIRouter(tags=["marquez"])
NODE_ID = "nodeId"
#: Marquez's default depth (LineageResource, ColumnLineageResource), within [server] max_depth
MARQUEZ_DEPTH = 20
#: Marquez's defaults of `GET /api/v1/events/lineage` (OpenLineageResource.getLineageEvents)
EVENTS_BEFORE, EVENTS_AFTER = datetime(2030, 1, 1, tzinfo=UTC), datetime(1970, 1, 1, tzinfo=UTC)
#: the most events one page returns (a kept event may be megabytes)
MAX_EVENTS_PAGE = 1000


def _depth(depth: int | None, config: Any) -> int:
    limit = config.server.max_depth
    if depth is None:
        return min(MARQUEZ_DEPTH, limit)
    check_range("depth", depth, 1, limit, "max_depth")
    return depth


@router.get("/api/v1/lineage", summary="Marquez's lineage graph of a dataset or job node")
def get_marquez_lineage(index: Index, config: Config,
                        nodeId: Annotated[str, Query(description="dataset:<namespace>:<name> or "  # noqa: N803
                                                                 "job:<namespace>:<name>")],
                        depth: Annotated[int | None, Query(description="dataset hops either way (default 20, "
                                                                       "at most [server] max_depth)")] = None,
                        asOf: Annotated[str | None, Query(description="navd's: the lineage as it stood then "  # noqa: N803
                                                                       "(ISO 8601 or a date; "
                                                                       "docs/features/lineage-as-of.md)")] = None,
                        ) -> dict[str, Any]:
    """`{"graph": [{"id", "type", "data", "inEdges", "outEdges"}]}` (Marquez's LineageGraph)."""
    steps = _depth(depth, config)
    as_of = time_parameter("asOf", asOf)
    with blame(NODE_ID):
        return marquez_lineage(index, config, nodeId, depth=steps, max_nodes=config.server.max_nodes, as_of=as_of)


@router.get("/api/v1/column-lineage", summary="Marquez's column-lineage graph of a dataset field, dataset or job node")
def get_marquez_column_lineage(index: Index, config: Config,
                               nodeId: Annotated[str, Query(description="datasetField:<namespace>:<name>:<field>, "  # noqa: N803
                                                                        "dataset:<namespace>:<name> or "
                                                                        "job:<namespace>:<name>")],
                               depth: Annotated[int | None, Query(description="column hops (default 20, at most "
                                                                              "[server] max_depth)")] = None,
                               withDownstream: bool = False,  # noqa: N803 - Marquez's parameter name
                               ) -> dict[str, Any]:
    steps = _depth(depth, config)
    with blame(NODE_ID):
        return marquez_column_lineage(index, config, nodeId, depth=steps, with_downstream=withDownstream,
                                      max_nodes=config.server.max_nodes)


@router.get("/api/v1/events/lineage", summary="OpenLineage events as posted, by eventTime (Marquez's "
                                                "getLineageEvents)")
def get_marquez_lineage_events(index: Index,
                               before: Annotated[str | None, Query(description="events before this time "
                                                                               "(ISO 8601)")] = None,
                               after: Annotated[str | None, Query(description="events at or after this time "
                                                                              "(ISO 8601)")] = None,
                               sortDirection: Annotated[str, Query(description="desc (default) or asc")] = "desc",  # noqa: N803
                               limit: Annotated[int, Query(description="at most this many (default 100)")] = 100,
                               offset: Annotated[int, Query(description="from this position (default 0)")] = 0,
                               ) -> dict[str, Any]:
    """`{"events": [...], "totalCount": n}` (Marquez's LineageEventList): the events kept as
    posted (`[openlineage] keep_events`), eventTime in [after, before)."""
    direction = sortDirection.lower()
    if direction not in ("asc", "desc"):
        raise ApiError(400, f"sortDirection: must be asc or desc, got {sortDirection[:40]!r}", "sortDirection")
    check_range("limit", limit, 0, MAX_EVENTS_PAGE)
    check_range("offset", offset, 0, 1_000_000)
    found = kept.page(index, before=time_parameter("before", before) or EVENTS_BEFORE,
                      after=time_parameter("after", after) or EVENTS_AFTER,
                      descending=direction == "desc", limit=limit, offset=offset)
    return {"events": list(found.events), "totalCount": found.total}


#: a page of Marquez's listings: its default size and navd's cap
LIST_LIMIT, MAX_LIST_LIMIT = 100, 1000
_NAMESPACES = "/api/v1/namespaces/"


def _page(limit: int, offset: int) -> None:
    check_range("limit", limit, 0, MAX_LIST_LIMIT)
    check_range("offset", offset, 0, 1_000_000)


@router.get("/api/v1/namespaces", summary="Marquez's namespaces: those of the OpenLineage jobs and "
                                             "reported datasets navd holds")
def get_marquez_namespaces(index: Index, config: Config, limit: int = LIST_LIMIT, offset: int = 0) -> dict[str, Any]:
    """The namespaces of OpenLineage jobs and of the datasets events reported, by name."""
    _page(limit, offset)
    found = {**marquez.dataset_namespaces(index, export_settings(config), config.cluster.name),
             **{n["name"]: n for n in marquez_store.namespaces(index)}}
    return {"namespaces": [found[name] for name in sorted(found)][offset:offset + limit]}


@router.get("/api/v1/namespaces/{path:path}", summary="Marquez's namespace, its jobs, a job, a job's runs, "
                                                       "its datasets, a dataset, a dataset's versions")
def get_marquez_namespace_path(request: Request, index: Index, config: Config, path: str, limit: int = LIST_LIMIT,
                               offset: int = 0) -> dict[str, Any]:
    """`/namespaces/{ns}`, `/namespaces/{ns}/jobs`, `/namespaces/{ns}/jobs/{job}`,
    `/namespaces/{ns}/jobs/{job}/runs`, `/namespaces/{ns}/datasets`, `/namespaces/{ns}/datasets/{name}`,
    its `/versions` and `/versions/{version}` (one: navd keeps a dataset's current state only).
    Namespaces hold `/` (`airflow://scheduler`, sent percent-encoded, as Marquez's clients send
    them), so the parts are split on the path as sent."""
    del path  # decoded, its encoded slashes lost: the raw path is split instead
    raw = request.scope.get("raw_path") or request.url.path.encode()
    parts = [unquote(part) for part in raw.decode("latin-1").split("?", 1)[0][len(_NAMESPACES):].split("/")]
    _page(limit, offset)
    with blame("path"):
        match parts:
            case [namespace]:
                try:
                    return marquez_store.namespace(index, namespace)
                except EntityNotFound:  # a namespace of datasets only
                    found = marquez.dataset_namespace(index, export_settings(config), config.cluster.name, namespace)
                    if found is None:
                        raise
                    return found
            case [namespace, "jobs"]:
                try:
                    marquez_store.namespace(index, namespace)
                except EntityNotFound:  # a namespace of datasets only has no jobs, as Marquez answers
                    if marquez.dataset_namespace(index, export_settings(config), config.cluster.name,
                                                 namespace) is None:
                        raise
                found = marquez_store.jobs(index, namespace, limit=limit, offset=offset)
                return {"jobs": list(found.items), "totalCount": found.total}
            case [namespace, "jobs", name]:
                return marquez_store.job(index, namespace, name)
            case [namespace, "jobs", name, "runs"]:
                found = marquez_store.runs(index, namespace, name, limit=limit, offset=offset)
                return {"runs": list(found.items), "totalCount": found.total}
            case [namespace, "datasets"]:
                found = marquez.datasets(index, export_settings(config), config.cluster.name, namespace, limit=limit,
                                         offset=offset)
                return {"datasets": list(found.items), "totalCount": found.total}
            case [namespace, "datasets", name]:
                return marquez.dataset(index, export_settings(config), config.cluster.name, namespace, name)
            case [namespace, "datasets", name, "versions"]:
                versions = marquez.dataset_versions(index, export_settings(config), config.cluster.name, namespace,
                                                    name)
                return {"versions": versions[offset:offset + limit], "totalCount": len(versions)}
            case [namespace, "datasets", name, "versions", version]:
                versions = marquez.dataset_versions(index, export_settings(config), config.cluster.name, namespace,
                                                    name)
                if versions[0]["version"] != version.lower():
                    raise ApiError(404, f"version: navd keeps only the current version of {name[:200]!r}, "
                                        f"{versions[0]['version']}", "version")
                return versions[0]
    raise ApiError(404, f"path: navd serves no Marquez resource at {request.url.path[:200]!r}", "path")


@router.get("/api/v1/search", summary="Marquez's search of jobs and datasets by name")
def get_marquez_search(index: Index, config: Config,
                       q: Annotated[str, Query(description="a part of the name, any case")],
                       filter: Annotated[str | None,  # noqa: A002 - Marquez's parameter name
                                         Query(description="DATASET or JOB (default both)")] = None,
                       sort: Annotated[str, Query(description="NAME (default) or UPDATE_AT")] = "NAME",
                       limit: Annotated[int, Query(description="at most this many (default 10)")] = 10,
                       ) -> dict[str, Any]:
    """`{"totalCount": n, "results": [{"type", "name", "updatedAt", "namespace", "nodeId"}]}`."""
    if not q.strip():
        raise ApiError(400, "q: give a part of a job's or dataset's name to search for", "q")
    if len(q) > marquez.MAX_SEARCH_CHARS:
        raise ApiError(400, f"q: at most {marquez.MAX_SEARCH_CHARS} characters, got {len(q)}", "q")
    kind = filter.upper() if filter is not None else None
    if kind is not None and kind not in marquez.SEARCH_FILTERS:
        raise ApiError(400, f"filter: must be DATASET or JOB, got {filter[:40]!r}", "filter")
    if sort.upper() not in marquez.SEARCH_SORTS:
        raise ApiError(400, f"sort: must be NAME or UPDATE_AT, got {sort[:40]!r}", "sort")
    check_range("limit", limit, 0, MAX_LIST_LIMIT)
    return marquez.search(index, export_settings(config), q, kind, sort.upper(), limit)


@router.get("/api/v1/jobs", summary="Marquez's jobs of every namespace")
def get_marquez_jobs(index: Index, limit: int = LIST_LIMIT, offset: int = 0) -> dict[str, Any]:
    _page(limit, offset)
    found = marquez_store.jobs(index, None, limit=limit, offset=offset)
    return {"jobs": list(found.items), "totalCount": found.total}


@router.get("/api/v1/jobs/runs/{run_id}", summary="Marquez's run by its id")
def get_marquez_run(index: Index, run_id: str) -> dict[str, Any]:
    with blame("runId"):
        return marquez_store.run(index, run_id)


#: Marquez's writes (spec/openapi.yml): namespaces, sources, datasets, jobs, runs, tags and their
#: deletes; listed, not a catch-all of /api/v1, which would stop the redirect of a GET with a
#: trailing slash (`/api/v1/lineage/`, as Marquez's UI asks it)
_WRITES = (("/api/v1/namespaces/{path:path}", ["PUT", "POST", "DELETE"]),
           ("/api/v1/jobs/runs/{path:path}", ["POST"]), ("/api/v1/tags/{path:path}", ["PUT", "DELETE"]),
           ("/api/v1/sources/{path:path}", ["PUT"]))


def refuse_marquez_writes(request: Request) -> None:
    raise ApiError(405, f"{request.method} {request.url.path[:200]}: navd serves Marquez's API read-only; lineage "
                        "comes in as OpenLineage events (POST /api/v1/lineage), tags and descriptions through "
                        "navd annotate or /api/annotations")


for _path, _methods in _WRITES:
    router.add_api_route(_path, refuse_marquez_writes, methods=_methods, include_in_schema=False)
