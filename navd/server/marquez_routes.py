"""Marquez's read endpoints (docs/sources/openlineage.md): `GET /api/v1/lineage` and `GET
/api/v1/column-lineage` in Marquez's response shape, from navd/openlineage/service.py, with the
caps of /api/lineage (`[server] max_depth`, `max_nodes`). Served whether or not the intake is on:
they read what any extractor wrote."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from navd.openlineage.service import marquez_column_lineage, marquez_lineage
from navd.server.api import Config, Index
from navd.server.errors import blame, check_range

router = APIRouter(tags=["marquez"])
NODE_ID = "nodeId"
#: Marquez's default depth (LineageResource, ColumnLineageResource), within [server] max_depth
MARQUEZ_DEPTH = 20


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
