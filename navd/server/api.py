"""navd's own API under /api: the JSON the CLI prints (`navd search/entity/lineage/status
--json`), from the same service calls (navd/catalog, navd/lineage, navd/taint, navd/status.py).
Routes parse, call and return; caps come from `[server]`. Sync routes: FastAPI runs them in its
thread pool, as the services block on Solr.
"""

from __future__ import annotations

import dataclasses
import threading
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request

from navd.catalog.service import SearchPage, executions, lookup_scope, search_page, shown_entity
from navd.config import NavdConfig, extractor_state_dir
from navd.index.client import SolrIndex
from navd.index.clients import client_for
from navd.lineage.hub_cache import HubCache
from navd.lineage.responsibility import extracted_namespaces
from navd.lineage.rules import LineageOptions
from navd.lineage.service import lineage, lineage_changes
from navd.server.errors import ApiError, blame, check_range, time_parameter
from navd.status import run_history, status

router = APIRouter(prefix="/api", tags=["navd"])
_WRITER_LOCK = threading.Lock()


def index_of(request: Request) -> SolrIndex:
    """The app's read-only Solr client (navd-reader on the embedded Solr)."""
    return request.app.state.index


def writer_of(request: Request) -> SolrIndex:
    """The app's write-capable client (navd's admin user, as the OpenLineage intake's), for the
    routes that write navd's own records (sensitivity tags, taints): made on the first write, so
    a read-only server never opens one."""
    state = request.app.state
    with _WRITER_LOCK:
        if getattr(state, "writer", None) is None:
            state.writer = client_for(state.config, "admin")
        return state.writer


def config_of(request: Request) -> NavdConfig:
    return request.app.state.config


def hubs_of(request: Request) -> HubCache:
    """The app's hub cache of lineage graphs (navd/lineage/hub_cache.py)."""
    return request.app.state.hubs


Index = Annotated[SolrIndex, Depends(index_of)]
Writer = Annotated[SolrIndex, Depends(writer_of)]
Hubs = Annotated[HubCache, Depends(hubs_of)]
Config = Annotated[NavdConfig, Depends(config_of)]


@router.get("/entities", summary="Search elements (Solr Lucene syntax), paged with a cursor")
def search_entities(index: Index, config: Config,
                    query: Annotated[str, Query(description="Solr (Lucene) query, e.g. queryText:*temp*; "
                                                            "no local parameters")] = "*:*",
                    rows: Annotated[int, Query(description="page size, 1 to [server] max_rows")] = 20,
                    cursor: Annotated[str, Query(description="`nextCursor` of the previous page; "
                                                             "* for the first")] = "*") -> dict[str, Any]:
    """`{numFound, docs, nextCursor}`; `nextCursor` is null on the last page."""
    check_range("rows", rows, 1, config.server.max_rows, "max_rows")
    try:
        with blame("query"):
            return _page(search_page(index, "elements", query, rows=rows, cursor=cursor))
    except ApiError as exc:
        if "cursorMark" not in exc.message:
            raise
        # Solr names its own parameter: the cursor is what the client sent wrong
        raise ApiError(400, "cursor: not a cursor this API returned (use nextCursor, or * to start)",
                       "cursor") from None


def _page(page: SearchPage) -> dict[str, Any]:
    return {"numFound": page.found, "docs": list(page.docs), "nextCursor": page.next_cursor}


@router.get("/entities/{name:path}", summary="One element by identity or qualifiedName",
            responses={404: {"description": "no such element"},
                       300: {"description": "several elements match: `candidates` lists them"}})
def get_entity(name: str, index: Index, config: Config) -> dict[str, Any]:
    """The element (as `navd entity --json`): by identity, qualifiedName or a shorter spelling
    (a bare path, `db.table`, an application id: navd/index/lookup.py). Several matches answer
    300 Multiple Choices with the `candidates`, never a guess."""
    with blame("name"):
        return shown_entity(index, name, lookup_scope(config))


@router.get("/lineage", summary="The lineage graph of an entity (as `navd lineage --format json`)")
def get_lineage(index: Index, config: Config, hubs: Hubs,
                entity: Annotated[str, Query(description="identity or qualifiedName")],
                direction: Literal["upstream", "downstream", "both"] = "both",
                depth: Annotated[int, Query(description="dataset hops per direction")] = 5,
                columns: bool = False, operations: bool = False, deleted: bool = False,
                max_nodes: Annotated[int | None, Query(description="node cap (default and maximum: "
                                                                   "[server] max_nodes)")] = None,
                as_of: Annotated[str | None, Query(description="the graph as it stood then (ISO 8601 or a "
                                                               "date)")] = None,
                latest: Annotated[bool, Query(description="of each dataset's writers, only its latest run "
                                                          "(at or before as_of)")] = False,
                ) -> dict[str, Any]:
    options = _lineage_options(config, direction, depth, columns, operations, deleted, max_nodes)
    options = dataclasses.replace(options, as_of=time_parameter("as_of", as_of), latest=latest)
    with blame("entity"):
        return lineage(index, entity, options, lookup_scope(config), hubs).as_dict()


@router.get("/lineage/changes", summary="What changed in an entity's lineage between two moments (as `navd "
                                        "lineage --changes --format json`)")
def get_lineage_changes(index: Index, config: Config,
                        entity: Annotated[str, Query(description="identity or qualifiedName")],
                        since: Annotated[str, Query(description="the window's start (ISO 8601 or a date)")],
                        until: Annotated[str | None, Query(description="the window's end; default now")] = None,
                        direction: Literal["upstream", "downstream", "both"] = "both",
                        depth: Annotated[int, Query(description="dataset hops per direction")] = 5,
                        columns: bool = False, deleted: bool = False,
                        max_nodes: Annotated[int | None, Query(description="node cap (default and maximum: "
                                                                           "[server] max_nodes)")] = None,
                        ) -> dict[str, Any]:
    options = _lineage_options(config, direction, depth, columns, False, deleted, max_nodes)
    start = time_parameter("since", since)
    if start is None:  # FastAPI refuses the request first: `since` is required
        raise ApiError(400, "since: required", "since")
    end = time_parameter("until", until) or datetime.now(UTC)
    if end < start:
        raise ApiError(400, f"until: {end.isoformat()} is before since {start.isoformat()}", "until")
    with blame("entity"):
        return lineage_changes(index, entity, start, end, options, lookup_scope(config)).as_dict()


def _lineage_options(config: NavdConfig, direction: Literal["upstream", "downstream", "both"], depth: int,
                     columns: bool, operations: bool, deleted: bool, max_nodes: int | None) -> LineageOptions:
    limits = config.server
    check_range("depth", depth, 1, limits.max_depth, "max_depth")
    if max_nodes is not None:
        check_range("max_nodes", max_nodes, 1, limits.max_nodes, "max_nodes")
    return LineageOptions(direction=direction, depth=depth, columns=columns, operations=operations,
                          deleted=deleted, max_nodes=limits.max_nodes if max_nodes is None else max_nodes,
                          extracted=extracted_namespaces(config))


@router.get("/executions", summary="An operation's executions (its run history), newest first",
            responses={404: {"description": "no such element"},
                       300: {"description": "several elements match: `candidates` lists them"}})
def get_executions(index: Index, config: Config,
                   operation: Annotated[str, Query(description="the operation (or one of its executions): "
                                                               "identity or qualifiedName")],
                   rows: int = 20, start: int = 0) -> dict[str, Any]:
    """`{operation, numFound, start, executions}`: `operation` is the template's identity."""
    check_range("rows", rows, 1, config.server.max_rows, "max_rows")
    check_range("start", start, 0, 10_000_000)
    with blame("operation"):
        page = executions(index, operation, lookup_scope(config), rows=rows, start=start)
    return {"operation": page.operation, "numFound": page.found, "start": page.start,
            "executions": list(page.executions)}


@router.get("/status", summary="Last run, last success and next run per component; totals (navd status --json)")
def get_status(index: Index, config: Config) -> dict[str, Any]:
    return dict(status(index, extractor_state_dir(config)))


@router.get("/runs", summary="A component's run records, newest first")
def get_runs(index: Index, config: Config,
             component: Annotated[str, Query(description="e.g. hdfs, hms, spark, yarn, linker, purge")],
             rows: int = 20, start: int = 0) -> dict[str, Any]:
    check_range("rows", rows, 1, config.server.max_rows, "max_rows")
    check_range("start", start, 0, 10_000_000)
    page = run_history(index, component, rows=rows, start=start)
    return {"numFound": page.found, "start": page.start, "runs": list(page.runs)}
