"""Usage, unused tables, job dependencies and impact under /api: the JSON `navd
usage/unused/deps/impact --format json` prints, from the same service (navd/usage/service.py).
Reads, behind the server's read authentication like /api/lineage."""

from __future__ import annotations

import itertools
from typing import Annotated, Any

from fastapi import APIRouter, Query

from navd.catalog.service import lookup_scope
from navd.server.api import Config, Index
from navd.server.errors import blame, check_range
from navd.usage.service import deps, impact, unused, usage

router = APIRouter(prefix="/api", tags=["usage"])
#: the longest window asked for, in days (ten years)
MAX_DAYS = 3660


@router.get("/usage", summary="Reads and writes per day of a table or column, last read and write, generation time")
def get_usage(index: Index, config: Config,
              entity: Annotated[str, Query(description="a table, directory, file or column: identity, "
                                                       "qualifiedName or db.table[.column]")],
              days: Annotated[int, Query(description="the window: the last N days")] = 30) -> dict[str, Any]:
    check_range("days", days, 1, MAX_DAYS)
    with blame("entity"):
        return usage(index, entity, lookup_scope(config), days=days).as_dict()


@router.get("/unused", summary="Tables no job read in the last N days, with owner and size, paged with a cursor")
def get_unused(index: Index, config: Config,
               days: Annotated[int, Query(description="the window: the last N days")] = 30,
               database: Annotated[str | None, Query(description="only this database's tables")] = None,
               rows: Annotated[int, Query(description="page size, 1 to [server] max_rows")] = 100,
               cursor: Annotated[str | None, Query(description="`nextCursor` of the previous page")] = None,
               ) -> dict[str, Any]:
    """`{tables, nextCursor}`: `nextCursor` (the last table's identity) is null on the last page."""
    check_range("days", days, 1, MAX_DAYS)
    check_range("rows", rows, 1, config.server.max_rows, "max_rows")
    tables = list(itertools.islice(unused(index, days=days, database=database, after=cursor), rows + 1))
    following = tables[rows - 1].identity if len(tables) > rows else None
    return {"tables": [t.as_dict() for t in tables[:rows]], "nextCursor": following}


@router.get("/deps", summary="The jobs producing a job's inputs, with the last producing run of each")
def get_deps(index: Index, config: Config,
             job: Annotated[str, Query(description="an operation or one of its executions")]) -> dict[str, Any]:
    with blame("job"):
        return deps(index, job, lookup_scope(config)).as_dict()


@router.get("/impact", summary="Downstream datasets of an entity, the jobs reading them, their users and owners")
def get_impact(index: Index, config: Config,
               entity: Annotated[str, Query(description="identity, qualifiedName or db.table[.column]")],
               depth: Annotated[int, Query(description="dataset hops downstream")] = 5) -> dict[str, Any]:
    check_range("depth", depth, 1, config.server.max_depth, "max_depth")
    with blame("entity"):
        return impact(index, entity, lookup_scope(config), depth=depth, max_nodes=config.server.max_nodes).as_dict()
