"""The Navigator-compatible subset of navd's HTTP API, under /api/v{9..19}/ (Cloudera Navigator's
paths, parameters and field names; docs/navigator-api.md says what was checked and what is
inferred):

    GET  /api/v{N}/entities?query=&offset=&limit=     -> [entity, ...] (SOURCE entities too)
    GET  /api/v{N}/entities/{identity}                 -> entity (404 if none)
    POST /api/v{N}/entities/paging  {query, limit, cursorMark} -> {results, cursorMark}
    POST /api/v{N}/interactive/entities?limit=&offset= {query, filterQueries, facetFields, ...}
                                                       -> {results, totalMatched, facets, ...}
    GET  /api/v{N}/interactive/suggestions?query=      -> {query, suggestions, totalMatched}
    GET  /api/v{N}/relations?query=&offset=&limit=     -> [relation, ...]
    POST /api/v{N}/relations/paging {query, limit, cursorMark} -> {results, cursorMark}
    GET  /api/v{N}/lineage?entityIds=ID[&entityIds=ID2 | ,ID2][&length=] -> {entities, relations}
    GET  /api/v{N}/models                              -> {packages, classes, ...}
    GET  /api/version                                  -> the newest version served, `v19`

The routes only parse and answer: every read is a function of navd/catalog/navigator.py and
the vocabulary is navd/navigator.py. A bad parameter answers 400, an unknown entity or API
version 404, with navd's error body `{"error": "<parameter>: <what is wrong>", "parameter":
"<parameter>"}`; Solr down answers 503.

navd/server/app.py mounts it behind the server's authentication with the dependency that gives
the request its SolrIndex: `mount(app, navigator_router(api.index_of))`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from starlette.concurrency import run_in_threadpool

from navd import navigator
from navd.catalog import navigator as reads
from navd.errors import EntityNotFound, NavdError, SolrError, SolrUnavailable, UsageError, first_line
from navd.index.client import SolrIndex
from navd.names import InvalidName
from navd.server.errors import error_response, parse_time

__all__ = ["navigator_router", "navigator_version_router"]

_VERSION = re.compile(r"\d{1,3}")
_PARAMETER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


#: Hue's Navigator client keeps one dict of parameters for all its calls and never clears it, so a
#: request carries what earlier calls set: `query`, `offset`, `limit` of a search, `entityIds` of a
#: lineage call. Each route accepts those it has no use for, and ignores them.
CARRIED_BY_HUE = "sent along by Hue's Navigator client from an earlier call; ignored here"
Ignored = Annotated[str | None, Query(description=CARRIED_BY_HUE)]


def _carried_search_parameters(query: Ignored = None, offset: Ignored = None, limit: Ignored = None) -> None:
    """A search's parameters, as Hue sends them with every later call."""


def _carried_query_and_limit(query: Ignored = None, limit: Ignored = None) -> None:
    """A search's parameters Hue sends along to a lineage call (its `offset` is the lineage's own)."""


def _carried_lineage_parameters(
        entityIds: Annotated[list[str] | None, Query(description=CARRIED_BY_HUE)] = None,  # noqa: N803
) -> None:
    """A lineage call's parameter, as Hue sends it with every later call."""


NOT_IMPLEMENTED = "Navigator's lineage option; not implemented, ignored (docs/navigator-api.md)"


def _ignored_lineage_options(
        removeUsageEndPointTypes: Annotated[str | None, Query(description=NOT_IMPLEMENTED)] = None,  # noqa: N803
) -> None:
    """Navigator's lineage option that changes nothing navd shows (navd has no usage end points)."""


def _source_cache_of(request: Request) -> reads.SourceCache | None:
    """The app's cache of the sources (create_app); a router mounted on its own finds them each time."""
    return getattr(request.app.state, "navigator_sources", None)


SourceCacheOf = Annotated[reads.SourceCache | None, Depends(_source_cache_of)]


def _max_length_of(request: Request) -> int | None:
    """`[server] max_depth`: the longest lineage `length` (None: a router mounted without a config)."""
    config = getattr(request.app.state, "config", None)
    return config.server.max_depth if config is not None else None


def _cluster_of(request: Request) -> str:
    """`[cluster] name` of the app's config: the cluster of the sources one per cluster (a
    router mounted without a config: no cluster)."""
    config = getattr(request.app.state, "config", None)
    return config.cluster.name if config is not None else ""


def navigator_router(get_index: Callable[[], SolrIndex]) -> APIRouter:
    """The routes, reading the index `get_index` (a FastAPI dependency) returns. Numbers are taken
    as text and checked by navd.navigator, whose messages give the range."""
    router = APIRouter(prefix="/api/v{version}", tags=["navigator"])

    @router.get("/entities", dependencies=[Depends(_carried_lineage_parameters)],
                summary="Navigator: entities matching `query` (Solr syntax), paged by `offset` and `limit`",
                description="`[entity, ...]` with Navigator's field names (docs/navigator-api.md).")
    def entities(version: str, index: SolrIndex = Depends(get_index),
                 query: Annotated[str | None, Query(description="Solr syntax over Navigator's field names; "
                                                                "absent: every entity")] = None,
                 offset: Annotated[str, Query(description=f"0..{navigator.MAX_OFFSET}")] = "0",
                 limit: Annotated[str, Query(description=f"0..{navigator.MAX_LIMIT}")] = str(navigator.DEFAULT_LIMIT),
                 cluster: str = Depends(_cluster_of), cache: SourceCacheOf = None) -> JSONResponse:
        return _answer(version, lambda: reads.navigator_entities(
            index, navigator.check_query("query", query),
            offset=navigator.bounded_int("offset", offset, 0, navigator.MAX_OFFSET),
            limit=navigator.bounded_int("limit", limit, 0, navigator.MAX_LIMIT), cluster=cluster, cache=cache))

    @router.post("/entities/paging", summary="Navigator: entities paged with a cursor",
                 description="Body `{query, limit, cursorMark}` (`*` first); answers `{results, cursorMark}`.")
    async def entities_paging(version: str, request: Request, index: SolrIndex = Depends(get_index),
                              cluster: str = Depends(_cluster_of), cache: SourceCacheOf = None) -> JSONResponse:
        raw = await request.body()

        def page() -> dict[str, Any]:
            query, limit, cursor_mark = _paging_request(raw)
            return reads.navigator_entity_page(index, query, limit=limit, cursor_mark=cursor_mark,
                                               cluster=cluster, cache=cache).as_dict()

        # the read blocks on Solr: off the event loop, as FastAPI runs the plain `def` routes
        return await run_in_threadpool(_answer, version, page)

    @router.get("/entities/{identity}", summary="Navigator: one entity by identity (404 when unknown)",
                dependencies=[Depends(_carried_search_parameters), Depends(_carried_lineage_parameters)])
    def entity(version: str, identity: str, index: SolrIndex = Depends(get_index),
               cluster: str = Depends(_cluster_of), cache: SourceCacheOf = None) -> JSONResponse:
        return _answer(version, lambda: reads.navigator_entity(index, identity, cluster, cache))

    @router.post("/interactive/entities", summary="Navigator: the search box's search, with facets",
                 description="Body `{query, filterQueries, facetFields, facetPrefix, firstClassEntitiesOnly}`; "
                             "answers `{results, totalMatched, facets, offset, limit}`.")
    async def interactive_entities(
            version: str, request: Request, index: SolrIndex = Depends(get_index), cluster: str = Depends(_cluster_of),
            cache: SourceCacheOf = None,
            offset: Annotated[str, Query(description=f"0..{navigator.MAX_OFFSET}")] = "0",
            limit: Annotated[str, Query(description=f"0..{navigator.MAX_LIMIT}")] = str(navigator.DEFAULT_LIMIT),
    ) -> JSONResponse:
        raw = await request.body()

        def search() -> dict[str, Any]:
            body = _json_object(raw, "{query, filterQueries, facetFields}")
            filters = body.get("filterQueries")
            # the texts that may name a source; the request itself is checked by interactive_search
            texts = [str(body.get("query") or ""), *(str(f) for f in (filters if isinstance(filters, list) else []))]
            context = reads.query_context(index, texts, cluster, cache)
            return reads.navigator_interactive(index, navigator.interactive_search(body, limit, offset, context),
                                               cluster, cache)

        return await run_in_threadpool(_answer, version, search)

    @router.get("/interactive/suggestions", summary="Navigator: entity names starting with `query`")
    def suggestions(version: str, index: SolrIndex = Depends(get_index),
                    query: Annotated[str, Query(description="a name's first characters; `*`: any")] = "*",
                    ) -> JSONResponse:
        return _answer(version, lambda: reads.navigator_suggestions(index, _short("query", query)))

    @router.get("/relations", summary="Navigator: relations matching `query`, paged by `offset` and `limit`")
    def relations(version: str, index: SolrIndex = Depends(get_index),
                  query: Annotated[str | None, Query(
                      description="Solr syntax over Navigator's relation fields")] = None,
                  offset: Annotated[str, Query(description=f"0..{navigator.MAX_OFFSET}")] = "0",
                  limit: Annotated[str, Query(description=f"0..{navigator.MAX_LIMIT}")] = str(navigator.DEFAULT_LIMIT),
                  ) -> JSONResponse:
        return _answer(version, lambda: reads.navigator_relations(
            index, navigator.check_query("query", query),
            offset=navigator.bounded_int("offset", offset, 0, navigator.MAX_OFFSET),
            limit=navigator.bounded_int("limit", limit, 0, navigator.MAX_LIMIT)))

    @router.post("/relations/paging", summary="Navigator: relations paged with a cursor",
                 description="Body `{query, limit, cursorMark}` (`*` first); answers `{results, cursorMark}`.")
    async def relations_paging(version: str, request: Request,
                               index: SolrIndex = Depends(get_index)) -> JSONResponse:
        raw = await request.body()

        def page() -> dict[str, Any]:
            query, limit, cursor_mark = _paging_request(raw)
            return reads.navigator_relation_page(index, query, limit=limit, cursor_mark=cursor_mark).as_dict()

        return await run_in_threadpool(_answer, version, page)

    @router.get("/lineage", dependencies=[Depends(_carried_query_and_limit), Depends(_ignored_lineage_options)],
                summary="Navigator: the lineage of `entityIds` (repeated or comma-separated)",
                description="`{entities, relations}` in Navigator's vocabulary.")
    def lineage(version: str, request: Request, index: SolrIndex = Depends(get_index),
                cluster: str = Depends(_cluster_of), max_length: int | None = Depends(_max_length_of),
                entityIds: Annotated[list[str] | None, Query(  # noqa: N803 - Navigator's name
                    description=f"identities or qualified names, repeated or comma-separated, at most "
                                f"{navigator.MAX_LINEAGE_IDS}")] = None,
                length: Annotated[str | None, Query(
                    description="hops walked each way, 1..[server] max_depth; absent: navd's default")] = None,
                offset: Annotated[str | None, Query(description="0 only: navd's lineage is one answer")] = None,
                mergeDeletedEntities: Annotated[str | None, Query(  # noqa: N803 - Navigator's name
                    description="false only: navd shows deleted entities apart")] = None,
                asOf: Annotated[str | None, Query(  # noqa: N803 - named as Navigator names parameters
                    description="navd's: the lineage as it stood then (ISO 8601 or a date; "
                                "docs/features/lineage-as-of.md)")] = None,
                ) -> JSONResponse:
        # the app's hub cache (create_app); a router mounted on its own walks every time
        hubs = getattr(request.app.state, "hubs", None)
        return _answer(version, lambda: reads.navigator_lineage(
            index, navigator.entity_ids(entityIds or []), hubs, cluster=cluster,
            length=navigator.lineage_options(length, offset, mergeDeletedEntities, max_length),
            as_of=parse_time("asOf", asOf)))

    @router.get("/models", summary="Navigator: the metadata model (package and meta classes)")
    def models(version: str) -> JSONResponse:
        return _answer(version, reads.navigator_model)

    return router


def navigator_version_router() -> APIRouter:
    """GET /api/version: the newest Navigator API version navd serves, as text (`v19`)."""
    router = APIRouter(prefix="/api", tags=["navigator"])

    @router.get("/version", summary="Navigator: the newest API version served", response_class=PlainTextResponse)
    def version() -> PlainTextResponse:
        return PlainTextResponse(f"v{navigator.VERSIONS[-1]}")

    return router


def _short(parameter: str, value: str) -> str:
    if len(value) > 200:
        raise UsageError(f"{parameter}: at most 200 characters, got {len(value)}")
    return value


def _paging_request(raw: bytes) -> tuple[str, int, str]:
    """(query, limit, cursorMark) of a paging body `{query, limit, cursorMark}`, checked."""
    body = _json_object(raw)
    return (navigator.check_query("query", body.get("query")),
            navigator.bounded_int("limit", body.get("limit", navigator.DEFAULT_LIMIT), 1, navigator.MAX_LIMIT),
            navigator.check_cursor_mark(body.get("cursorMark")))


def _json_object(raw: bytes, fields: str = "{query, limit, cursorMark}") -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested past the parser's depth
        raise UsageError(f"body: not JSON ({first_line(exc, 200)})") from None
    if not isinstance(body, dict):
        raise UsageError(f"body: must be a JSON object {fields}")
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
