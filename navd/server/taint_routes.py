"""Taints and the reprocess plan under /api/: the same service as `navd taint` and `navd
reprocess` (navd/taint/service.py), the same JSON as their `--format json`.

Reads use the app's read-only client. Recording and clearing a taint write navd's own records,
with the write-capable client the OpenLineage intake uses too (navd's admin user), made on the
first write; like every route they are behind the server's authentication, and the taint
carries the authenticated user's name.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from navd.catalog.service import lookup_scope
from navd.server.api import Config, Index, Writer
from navd.server.errors import ApiError, blame
from navd.taint.service import clear_taints, reprocess, taint, taints

router = APIRouter(prefix="/api", tags=["taint"])


class TaintRequest(BaseModel):
    entity: str = Field(description="identity, qualifiedName, /path, db.table or a partition's name")
    start: datetime | None = Field(None, alias="from", description="start of the bad range (ISO 8601), with `to`")
    end: datetime | None = Field(None, alias="to", description="end of the range (excluded)")
    reason: str = Field("", max_length=2000)


def _utc(at: datetime | None) -> datetime | None:
    return at if at is None or at.tzinfo is not None else at.replace(tzinfo=UTC)


@router.post("/taints", summary="Taint a dataset or its partitions in a range (as `navd taint`)", status_code=201)
def post_taint(body: TaintRequest, request: Request, index: Writer, config: Config) -> dict[str, Any]:
    with blame("entity"):
        return taint(index, body.entity, lookup_scope(config), start=_utc(body.start), end=_utc(body.end),
                     reason=body.reason, user=getattr(request.state, "user", None))


@router.get("/taints", summary="The taints, newest first; with `entity`, those covering it")
def get_taints(index: Index, config: Config,
               entity: Annotated[str | None, Query(description="identity or qualifiedName")] = None,
               rows: Annotated[int, Query(description="at most this many")] = 1000) -> dict[str, Any]:
    if not 1 <= rows <= 10_000:
        raise ApiError(400, "rows: must be 1 to 10000", "rows")
    with blame("entity"):
        return {"taints": taints(index, entity, lookup_scope(config), rows=rows)}


@router.delete("/taints/{taint_id}", summary="Clear one taint (as `navd taint --clear --id`); idempotent")
def delete_taint(taint_id: str, index: Writer) -> dict[str, Any]:
    """`{cleared}`: the taint removed, or nothing when there was none by that id (already cleared)."""
    return {"cleared": clear_taints(index, taint_id=taint_id)}


@router.delete("/taints", summary="Clear the taints of an entity (as `navd taint ENTITY --clear`)")
def delete_taints(index: Writer, config: Config,
                  entity: Annotated[str, Query(description="identity or qualifiedName")]) -> dict[str, Any]:
    with blame("entity"):
        return {"cleared": clear_taints(index, entity, lookup_scope(config))}


@router.get("/reprocess", summary="Datasets, partitions and runs to redo downstream of a taint, in dependency "
                                  "order (as `navd reprocess --format json`)")
def get_reprocess(index: Index, config: Config,
                  entity: Annotated[str | None, Query(description="the tainted table, directory or partition")] = None,
                  start: Annotated[datetime | None, Query(alias="from", description="start (ISO 8601)")] = None,
                  end: Annotated[datetime | None, Query(alias="to", description="end, excluded")] = None,
                  taint: Annotated[str | None, Query(description="a recorded taint's id instead")] = None,
                  ) -> dict[str, Any]:
    with blame("taint" if taint else "entity"):
        return reprocess(index, entity, lookup_scope(config), start=_utc(start), end=_utc(end),
                         taint_id=taint).as_dict()
