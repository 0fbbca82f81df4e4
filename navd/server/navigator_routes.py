"""The Navigator-compatible subset of navd's HTTP API, under /api/v{9..19}/ (Cloudera Navigator's
paths, parameters and field names; docs/navigator-api.md says what was checked and what is
inferred):

    GET  /api/v{N}/entities?query=&offset=&limit=     -> [entity, ...]
    GET  /api/v{N}/entities/{identity}                 -> entity (404 if none)
    POST /api/v{N}/entities/paging  {query, limit, cursorMark} -> {results, cursorMark}
    GET  /api/v{N}/lineage?entityIds=ID[&entityIds=ID2 | ,ID2] -> {entities, relations}

The routes only parse and answer: every read is a function of the read facade (navd/query.py)
and the vocabulary is navd/navigator.py. A bad parameter answers 400, an unknown entity or API
version 404, with navd's error body `{"error": "<parameter>: <what is wrong>", "parameter":
"<parameter>"}`; Solr down answers 503.

navd/server/app.py mounts it behind the server's authentication with the dependency that gives
the request its SolrIndex: `mount(app, navigator_router(api.index_of))`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from navd import navigator, query
from navd.errors import NavdError, SolrError, SolrUnavailable, UsageError, first_line
from navd.index.client import SolrIndex
from navd.lineage import EntityNotFound
from navd.names import InvalidName
from navd.server.errors import error_response

__all__ = ["navigator_router"]

_VERSION = re.compile(r"\d{1,3}")
_PARAMETER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def navigator_router(get_index: Callable[[], SolrIndex]) -> APIRouter:
    """The routes, reading the index `get_index` (a FastAPI dependency) returns."""
    router = APIRouter(prefix="/api/v{version}", tags=["navigator"])

    @router.get("/entities", summary="Navigator: entities matching `query` (Solr syntax), paged by `offset` and `limit`",
                description="`[entity, ...]` with Navigator's field names (docs/navigator-api.md).")
    def entities(version: str, request: Request, index: SolrIndex = Depends(get_index)) -> JSONResponse:
        params = request.query_params
        return _answer(version, lambda: query.navigator_entities(
            index, navigator.check_query("query", params.get("query")),
            offset=navigator.bounded_int("offset", params.get("offset", "0"), 0, navigator.MAX_OFFSET),
            limit=navigator.bounded_int("limit", params.get("limit", str(navigator.DEFAULT_LIMIT)), 0,
                                        navigator.MAX_LIMIT)))

    @router.post("/entities/paging", summary="Navigator: entities paged with a cursor",
                 description="Body `{query, limit, cursorMark}` (`*` first); answers `{results, cursorMark}`.")
    async def entities_paging(version: str, request: Request,
                              index: SolrIndex = Depends(get_index)) -> JSONResponse:
        raw = await request.body()

        def page() -> dict[str, Any]:
            body = _json_object(raw)
            return query.navigator_entity_page(
                index, navigator.check_query("query", body.get("query")),
                limit=navigator.bounded_int("limit", body.get("limit", navigator.DEFAULT_LIMIT), 1,
                                            navigator.MAX_LIMIT),
                cursor_mark=navigator.check_cursor_mark(body.get("cursorMark"))).as_dict()

        # the facade blocks on Solr: off the event loop, as FastAPI runs the plain `def` routes
        return await run_in_threadpool(_answer, version, page)

    @router.get("/entities/{identity}", summary="Navigator: one entity by identity (404 when unknown)")
    def entity(version: str, identity: str, index: SolrIndex = Depends(get_index)) -> JSONResponse:
        return _answer(version, lambda: query.navigator_entity(index, identity))

    @router.get("/lineage", summary="Navigator: the lineage of `entityIds` (repeated or comma-separated)",
                description="`{entities, relations}` in Navigator's vocabulary.")
    def lineage(version: str, request: Request, index: SolrIndex = Depends(get_index)) -> JSONResponse:
        ids = request.query_params.getlist("entityIds")
        # the app's hub cache (create_app); a router mounted on its own walks every time
        hubs = getattr(request.app.state, "hubs", None)
        return _answer(version, lambda: query.navigator_lineage(index, navigator.entity_ids(ids), hubs))

    return router


def _json_object(raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested past the parser's depth
        raise UsageError(f"body: not JSON ({first_line(exc, 200)})") from None
    if not isinstance(body, dict):
        raise UsageError("body: must be a JSON object {query, limit, cursorMark}")
    return body


def _answer(version: str, read: Callable[[], Any]) -> JSONResponse:
    """`read()`'s JSON, or the error a client can act on: 400 for its request, 404 for what does
    not exist, 503 while Solr is unreachable, 502 when Solr failed otherwise; one line each."""
    if not _VERSION.fullmatch(version) or int(version) not in navigator.VERSIONS:
        return _error(404, f"version: v{version[:20]} is not served: navd answers Navigator's API "
                           f"v{navigator.VERSIONS[0]}..v{navigator.VERSIONS[-1]}")
    try:
        return JSONResponse(read())
    except (UsageError, InvalidName) as exc:
        return _error(400, str(exc))
    except EntityNotFound as exc:
        return _error(404, str(exc))
    except SolrUnavailable as exc:
        return _error(503, str(exc))
    except (SolrError, NavdError) as exc:
        return _error(502, str(exc))


def _error(status: int, message: str) -> JSONResponse:
    """navd's one error body (navd/server/errors.py); the messages here start with the parameter
    to blame (`limit: ...`), which becomes its `parameter` (null when the message names none)."""
    name, sep, _ = message.partition(": ")
    return error_response(status, message, name if sep and _PARAMETER.fullmatch(name) else None)
