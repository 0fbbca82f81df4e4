"""Sensitivity under /api: tag, clear, explain, from the same service as `navd tag`
(navd/sensitivity/service.py). Search finds levels already: GET /api/entities?query=sensitivity:pii.

Tagging writes (a tag record, levels on elements): it goes through a write-capable client of
its own (navd's admin user, as the OpenLineage intake), made on first use; the read routes keep
the reader. Every route is behind the server's authentication (app.mount), as the intake is.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from navd.catalog.service import lookup_scope
from navd.sensitivity import service as sensitivity
from navd.sensitivity.component import sensitivity_settings
from navd.server.api import Config, Index, Writer
from navd.server.errors import blame

router = APIRouter(prefix="/api", tags=["sensitivity"])


@router.put("/sensitivity/tags", summary="Tag a table or column with a sensitivity level (as navd tag "
                                         "ENTITY --sensitivity LEVEL); it flows downstream")
def put_tag(writer: Writer, config: Config,
            entity: Annotated[str, Body(description="a table, view or column: identity, qualifiedName or "
                                                    "db.table[.column]")],
            level: Annotated[str, Body(description="one of [sensitivity] levels")]) -> dict[str, Any]:
    """`{identity, qualifiedName, type, tag, columnsChanged, tablesChanged}`."""
    with blame("level"):
        sensitivity_settings(config).ordered.rank(level)
    with blame("entity"):
        return sensitivity.tag(writer, config, entity, level, lookup_scope(config)).as_dict()


@router.delete("/sensitivity/tags", summary="Clear the user's sensitivity tag on a table or column (as navd "
                                            "tag ENTITY --clear); withdrawn downstream")
def delete_tag(writer: Writer, config: Config,
               entity: Annotated[str, Query(description="identity, qualifiedName or db.table[.column]")],
               ) -> dict[str, Any]:
    with blame("entity"):
        return sensitivity.clear(writer, config, entity, lookup_scope(config)).as_dict()


@router.get("/sensitivity/explain", summary="A column's sensitivity level and the path that carried it "
                                            "(as navd tag --explain COLUMN)")
def get_explain(index: Index, config: Config,
                column: Annotated[str, Query(description="identity, qualifiedName or db.table.column")],
                ) -> dict[str, Any]:
    with blame("column"):
        return sensitivity.explain_column(index, config, column, lookup_scope(config)).as_dict()
