"""Apache Atlas' v2 REST API, read-mostly, under /api/atlas/v2 (docs/atlas-api.md):

    GET    entity/guid/{guid}                                      -> AtlasEntityWithExtInfo
    GET    entity/uniqueAttribute/type/{type}?attr:qualifiedName=  -> AtlasEntityWithExtInfo
    GET    entity/guid/{guid}/header                               -> AtlasEntityHeader
    GET    entity/bulk?guid=G1&guid=G2                             -> AtlasEntitiesWithExtInfo
    GET    entity/guid/{guid}/classifications                      -> AtlasClassifications
    POST   entity/guid/{guid}/classifications  [{typeName, attributes}]   (PUT: the same)
    DELETE entity/guid/{guid}/classification/{name}
    GET    lineage/{guid}?direction=INPUT|OUTPUT|BOTH&depth=N      -> AtlasLineageInfo
    GET    lineage/uniqueAttribute/type/{type}?attr:qualifiedName=
    GET    search/basic?typeName=&query=&classification=&limit=&offset=   (POST: SearchParameters)
    GET    search/dsl?query=TYPE where qualifiedName = '...'&limit=&offset=
    GET    types/typedefs[?type=classification], types/typedefs/headers, types/typedef/name/{name}

The routes only parse and answer: every read is a function of navd/catalog/atlas.py, the
vocabulary is navd/atlas.py; classifications are written by the annotation service, with the
role and request checks of every write (navd/server/roles.py, request_checks.py). Errors carry
Atlas' `errorCode` and `errorMessage` besides navd's `error` and `parameter`: an unknown guid is
404 ATLAS-404-00-005, a bad parameter 400 naming it, Solr down 503.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from navd import atlas
from navd.catalog import atlas as reads
from navd.config import NavdConfig
from navd.errors import AmbiguousEntity, EntityNotFound, NavdError, SolrError, SolrUnavailable, UsageError, first_line
from navd.index.client import SolrIndex
from navd.names import InvalidName
from navd.server.annotation_routes import actor_of
from navd.server.api import Config, Hubs, Index, Writer
from navd.server.errors import error_response

router = APIRouter(prefix="/api/atlas/v2", tags=["atlas"])

_QUALIFIED_NAME = Annotated[str | None, Query(alias="attr:qualifiedName", description="the entity's qualifiedName")]
_DIRECTION = Annotated[str | None, Query(description="INPUT, OUTPUT or BOTH (default)")]
_DEPTH = Annotated[str | None, Query(description="hops walked each way, 1..[server] max_depth (default 3)")]
#: Atlas' entity read options: navd's answer is the same either way (no referred entities)
_EXT_INFO = Annotated[str | None, Query(description="Atlas' option; navd answers no referred entities either way")]
_LIMIT = Annotated[str | None, Query(description=f"1..{atlas.MAX_LIMIT} (default {atlas.DEFAULT_LIMIT})")]
_OFFSET = Annotated[str | None, Query(description="0.. (default 0)")]
#: Atlas' default lineage depth
_DEFAULT_DEPTH = 3
#: what pyapacheatlas' get_entity_lineage sends along: Atlas' lineage width (navd caps a graph
#: by [server] max_nodes instead) and two options navd has nothing for, taken only as false
_WIDTH = Annotated[str | None, Query(description="Atlas' width; ignored: the graph is capped by [server] max_nodes")]
_FALSE_ONLY = Annotated[str | None, Query(description="false only: navd has no parent chains or derived lineage")]


def _answer(read: Callable[[], Any], status: int = 200) -> Response:
    """`read()`'s JSON (204 with nothing when `status` is 204), or Atlas' error: 400 for the
    request, 404 for what does not exist, 503 while Solr is unreachable, 502 when it failed."""
    try:
        found = read()
    except atlas.AtlasNotFound as exc:
        return _error(404, first_line(exc), exc.code)
    except EntityNotFound as exc:
        return _error(404, first_line(exc), atlas.GUID_NOT_FOUND)
    except (UsageError, InvalidName, AmbiguousEntity) as exc:
        return _error(400, first_line(exc), atlas.BAD_REQUEST)
    except SolrUnavailable as exc:
        return _error(503, first_line(exc), "ATLAS-503-00-001")
    except (SolrError, NavdError) as exc:
        return _error(502, first_line(exc), "ATLAS-502-00-001")
    if status == 204:
        return Response(status_code=204)
    return JSONResponse(found, status_code=status)


def _error(status: int, message: str, code: str) -> JSONResponse:
    """navd's error body with Atlas' fields: its clients read `errorCode` and `errorMessage`."""
    name, sep, _ = message.partition(": ")
    parameter = name if sep and " " not in name else None
    return error_response(status, message, parameter, errorCode=code, errorMessage=message)


def _direction(value: str | None) -> atlas.Direction:
    text = (value or "BOTH").upper()
    if text not in atlas.NAVD_DIRECTION:
        raise UsageError(f"direction: {value!s:.40} is not INPUT, OUTPUT or BOTH")
    return text  # type: ignore[return-value]  # checked against the three above


def _false_only(parameter: str, value: str | None) -> None:
    if atlas.check_bool(value, parameter, False):
        raise UsageError(f"{parameter}: only false is supported")


def _depth(value: str | None, config: NavdConfig) -> int:
    return atlas.bounded_int(value, "depth", 1, config.server.max_depth, _DEFAULT_DEPTH)


# -- entities ---------------------------------------------------------------------------------------

@router.get("/entity/guid/{guid}", summary="Atlas: one entity by guid (navd's identity)")
def entity_by_guid(guid: str, index: Index, minExtInfo: _EXT_INFO = None,  # noqa: N803 - Atlas' names
                   ignoreRelationships: _EXT_INFO = None) -> Response:
    return _answer(lambda: reads.entity_by_guid(index, guid))


@router.get("/entity/guid/{guid}/header", summary="Atlas: one entity's header by guid")
def entity_header_by_guid(guid: str, index: Index) -> Response:
    return _answer(lambda: reads.entity_header_by_guid(index, guid))


@router.get("/entity/uniqueAttribute/type/{type_name}", summary="Atlas: one entity by type and qualifiedName")
def entity_by_unique_attribute(type_name: str, index: Index, qualified_name: _QUALIFIED_NAME = None,
                               minExtInfo: _EXT_INFO = None,  # noqa: N803
                               ignoreRelationships: _EXT_INFO = None) -> Response:  # noqa: N803
    return _answer(lambda: reads.entity_by_unique_attribute(index, type_name, qualified_name or ""))


@router.get("/entity/bulk", summary="Atlas: entities by guid (`guid` repeated)")
def entities_by_guids(index: Index, guid: Annotated[list[str] | None, Query(description="guids, repeated")] = None,
                      minExtInfo: _EXT_INFO = None, ignoreRelationships: _EXT_INFO = None) -> Response:  # noqa: N803
    return _answer(lambda: reads.entities_by_guids(index, guid or []))


#: the most qualified names one bulk read by unique attribute takes (`attr_0:` .. `attr_49:`)
MAX_UNIQUE_ATTRIBUTES = 50


def _indexed_qualified_names(**given: str | None) -> list[str]:
    """`attr_0:qualifiedName`, `attr_1:qualifiedName`, ... in their order (pyapacheatlas' bulk
    read sends them so)."""
    return [value for _, value in sorted(given.items(), key=lambda item: int(item[0].split("_")[1])) if value]


# Each name a declared query parameter, so the check that refuses undeclared ones passes them and
# /openapi.json lists them: the signature FastAPI reads is made here, not written 50 times.
_indexed_qualified_names.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
    inspect.Parameter(f"attr_{n}", inspect.Parameter.KEYWORD_ONLY, annotation=str | None,
                      default=Query(None, alias=f"attr_{n}:qualifiedName",
                                    description="qualifiedNames: attr_0:qualifiedName, attr_1:qualifiedName, ..."))
    for n in range(MAX_UNIQUE_ATTRIBUTES)])


@router.get("/entity/bulk/uniqueAttribute/type/{type_name}",
            summary="Atlas: entities of a type by qualifiedName (`attr_0:qualifiedName`, `attr_1:...`)")
def entities_by_unique_attributes(type_name: str, index: Index,
                                  qualified_names: Annotated[list[str], Depends(_indexed_qualified_names)],
                                  minExtInfo: _EXT_INFO = None,  # noqa: N803
                                  ignoreRelationships: _EXT_INFO = None) -> Response:  # noqa: N803
    return _answer(lambda: reads.entities_by_unique_attributes(index, type_name, qualified_names))


@router.get("/entity/guid/{guid}/classifications", summary="Atlas: an entity's classifications (its tags)")
def entity_classifications(guid: str, index: Index) -> Response:
    return _answer(lambda: reads.entity_classifications(index, guid))


async def _body(request: Request) -> Any:
    raw = await request.body()
    try:
        return json.loads(raw) if raw.strip() else None
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"body: not JSON ({first_line(exc, 200)})") from None


async def _add_classifications(guid: str, request: Request, writer: SolrIndex) -> Response:
    try:
        body = await _body(request)
    except UsageError as exc:
        return _error(400, str(exc), atlas.BAD_REQUEST)
    actor = actor_of(request)
    return await run_in_threadpool(_answer, lambda: reads.add_classifications(writer, guid, body, actor), 204)


@router.post("/entity/guid/{guid}/classifications", status_code=204,
             summary="Atlas: add classifications (tags with attributes) to an entity; recorded")
async def add_classifications(guid: str, request: Request, writer: Writer) -> Response:
    return await _add_classifications(guid, request, writer)


@router.put("/entity/guid/{guid}/classifications", status_code=204,
            summary="Atlas: update classifications' attributes on an entity; recorded")
async def update_classifications(guid: str, request: Request, writer: Writer) -> Response:
    return await _add_classifications(guid, request, writer)


@router.delete("/entity/guid/{guid}/classification/{name}", status_code=204,
               summary="Atlas: remove a classification (the tag and its attributes) from an entity; recorded")
def remove_classification(guid: str, name: str, request: Request, writer: Writer) -> Response:
    return _answer(lambda: reads.remove_classification(writer, guid, name, actor_of(request)), 204)


# -- lineage ----------------------------------------------------------------------------------------

@router.get("/lineage/{guid}", summary="Atlas: the lineage of an entity (AtlasLineageInfo)")
def lineage_by_guid(guid: str, index: Index, config: Config, hubs: Hubs, direction: _DIRECTION = None,
                    depth: _DEPTH = None, width: _WIDTH = None,
                    includeParent: _FALSE_ONLY = None,  # noqa: N803 - Atlas' names
                    getDerivedLineage: _FALSE_ONLY = None) -> Response:  # noqa: N803
    def read() -> dict[str, Any]:
        _false_only("includeParent", includeParent)
        _false_only("getDerivedLineage", getDerivedLineage)
        return reads.lineage_info(index, guid, _direction(direction), _depth(depth, config),
                                  config.server.max_nodes, hubs)

    return _answer(read)


@router.get("/lineage/uniqueAttribute/type/{type_name}", summary="Atlas: the lineage of an entity by qualifiedName")
def lineage_by_unique_attribute(type_name: str, index: Index, config: Config, hubs: Hubs,
                                qualified_name: _QUALIFIED_NAME = None, direction: _DIRECTION = None,
                                depth: _DEPTH = None) -> Response:
    return _answer(lambda: reads.lineage_by_unique_attribute(
        index, type_name, qualified_name or "", _direction(direction), _depth(depth, config),
        config.server.max_nodes, hubs))


# -- search -----------------------------------------------------------------------------------------

_TEXT = Annotated[str | None, Query()]
_UNSORTED = Annotated[str | None, Query(description="not supported (a 400): answers are ordered by guid")]


@router.get("/search/basic", summary="Atlas: basic search (typeName, query, classification, limit, offset)")
def basic_search_get(index: Index, typeName: _TEXT = None, query: _TEXT = None,  # noqa: N803 - Atlas' names
                     classification: _TEXT = None, excludeDeletedEntities: _TEXT = None,  # noqa: N803
                     limit: _LIMIT = None, offset: _OFFSET = None,
                     sortBy: _UNSORTED = None, sortOrder: _UNSORTED = None,  # noqa: N803
                     ) -> Response:
    params = {k: v for k, v in {"typeName": typeName, "query": query, "classification": classification,
                                "excludeDeletedEntities": excludeDeletedEntities, "limit": limit,
                                "offset": offset, "sortBy": sortBy, "sortOrder": sortOrder}.items() if v is not None}
    return _answer(lambda: reads.basic_search(index, params))


@router.post("/search/basic", summary="Atlas: basic search with a SearchParameters body (entityFilters too)")
async def basic_search_post(request: Request, index: Index) -> Response:
    try:
        body = await _body(request)
        if not isinstance(body, dict):
            raise UsageError("body: a JSON object (Atlas' SearchParameters)")
    except UsageError as exc:
        return _error(400, str(exc), atlas.BAD_REQUEST)
    return await run_in_threadpool(_answer, lambda: reads.basic_search(index, body))


@router.get("/search/dsl", summary="Atlas: DSL search, the forms `TYPE [where ATTR = 'v' | like 'p*'] [limit N]`")
def dsl_search(index: Index, query: _TEXT = None, limit: _LIMIT = None, offset: _OFFSET = None,
               typeName: _TEXT = None, classification: _TEXT = None) -> Response:  # noqa: N803
    def search() -> dict[str, Any]:
        text = query or typeName
        if not text:
            raise UsageError("query: required (e.g. hive_table where name = 'orders')")
        if classification:
            raise UsageError("classification: not supported with DSL search (use search/basic)")
        return reads.dsl_search(index, text, limit, offset)

    return _answer(search)


# -- types ------------------------------------------------------------------------------------------

_CATEGORY = Annotated[str | None, Query(alias="type", description="a category: entity, classification, ...")]


@router.get("/types/typedefs", summary="Atlas: the type definitions (entity types; a classification per tag)")
def typedefs(index: Index, category: _CATEGORY = None) -> Response:
    return _answer(lambda: reads.typedefs(index, category.lower() if category else None))


@router.get("/types/typedefs/headers", summary="Atlas: the type definitions' headers")
def typedef_headers(index: Index, category: _CATEGORY = None) -> Response:
    return _answer(lambda: reads.typedef_headers(index, category.lower() if category else None))


@router.get("/types/typedef/name/{name}", summary="Atlas: one type definition by name")
def typedef_by_name(name: str, index: Index) -> Response:
    return _answer(lambda: reads.typedef_by_name(index, name))


async def _create_typedefs(request: Request, writer: SolrIndex) -> Response:
    try:
        body = await _body(request)
    except UsageError as exc:
        return _error(400, str(exc), atlas.BAD_REQUEST)
    actor = actor_of(request)
    return await run_in_threadpool(_answer, lambda: reads.create_typedefs(writer, body, actor))


@router.post("/types/typedefs", summary="Atlas: define classifications (only classificationDefs); recorded")
async def create_typedefs(request: Request, writer: Writer) -> Response:
    return await _create_typedefs(request, writer)


@router.put("/types/typedefs", summary="Atlas: update classification definitions' descriptions")
async def update_typedefs(request: Request, writer: Writer) -> Response:
    return await _create_typedefs(request, writer)
