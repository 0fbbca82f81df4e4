"""Marquez's read endpoints (docs/sources/openlineage.md): `GET /api/v1/lineage` and `GET
/api/v1/column-lineage` in Marquez's response shape, from navd/openlineage/service.py, with the
caps of /api/lineage (`[server] max_depth`, `max_nodes`), and `GET /api/v1/events/lineage`, the
events kept as posted (navd/openlineage/kept.py). Served whether or not the intake is on: they
read what any extractor wrote."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from navd.openlineage import kept
from navd.openlineage.service import marquez_column_lineage, marquez_lineage
from navd.server.api import Config, Index
from navd.server.errors import ApiError, blame, check_range

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
                        ) -> dict[str, Any]:
    """`{"graph": [{"id", "type", "data", "inEdges", "outEdges"}]}` (Marquez's LineageGraph)."""
    steps = _depth(depth, config)
    with blame(NODE_ID):
        return marquez_lineage(index, config, nodeId, depth=steps, max_nodes=config.server.max_nodes)


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


def _time(parameter: str, value: str | None, default: datetime) -> datetime:
    if value is None:
        return default
    try:
        at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ApiError(400, f"{parameter}: {value[:100]!r} is not an ISO 8601 date-time "
                            "(2022-09-15T07:47:19Z)", parameter) from None
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


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
    found = kept.page(index, before=_time("before", before, EVENTS_BEFORE), after=_time("after", after, EVENTS_AFTER),
                      descending=direction == "desc", limit=limit, offset=offset)
    return {"events": list(found.events), "totalCount": found.total}
