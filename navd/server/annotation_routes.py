"""Annotations over HTTP, from the same service as `navd annotate` and `navd entity --history`
(navd/annotations/service.py):

    GET   /api/annotations?entity=NAME            -> the annotation (empty when nobody wrote one)
    PATCH /api/annotations?entity=NAME  {addTags, removeTags, description, name, properties,
                                         customProperties}  -> the annotation after the edit
    GET   /api/annotations/history?entity=NAME    -> {changes: [{actor, at, field, before, after}]}
    PUT   /api/v{9..19}/entities/{identity}      Navigator's edit, with Hue's body
                                                  {name, description, properties, customProperties, tags}

Writes need the editor role (navd/server/roles.py) and pass the request checks every write
does (Host, Origin, a JSON body); they go through the write-capable client and are recorded
with the authenticated user's name (`auth = "none"`: "anonymous"). Entities are named as
`navd entity` names them, Navigator's by identity.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool

from navd import navigator
from navd.annotations.rules import KEEP, Annotation, Edit
from navd.annotations.service import AnnotationService, navigator_edit
from navd.catalog.navigator import navigator_entity
from navd.catalog.service import lookup_scope
from navd.config import NavdConfig
from navd.errors import UsageError, first_line
from navd.index.client import SolrIndex
from navd.server.api import Config, Index, Writer
from navd.server.errors import ApiError, blame
from navd.server.navigator_routes import CARRIED_BY_HUE, Ignored

router = APIRouter(tags=["annotations"])
#: who an edit is recorded as when the server has no users (`[server] auth = "none"`, loopback)
ANONYMOUS = "anonymous"
_ENTITY = Annotated[str, Query(description="identity, qualifiedName, /path, db.table[.column], as `navd entity`")]


def actor_of(request: Request) -> str:
    return getattr(request.state, "user", None) or ANONYMOUS


@contextmanager
def blame_field() -> Iterator[None]:
    """A refused value: 400 naming the field the message starts with (`tags: ...`)."""
    try:
        yield
    except UsageError as exc:
        message = first_line(exc)
        field, sep, _ = message.partition(": ")
        raise ApiError(400, message, field if sep and " " not in field else "body") from None


async def _json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        body = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError) as exc:
        raise ApiError(400, f"body: not JSON ({first_line(exc, 200)})", "body") from None
    if not isinstance(body, dict):
        raise ApiError(400, "body: must be a JSON object", "body")
    return body


def _shown(annotation: Annotation, target: Mapping[str, Any]) -> dict[str, Any]:
    return {**annotation.as_dict(), "qualifiedName": target.get("qualifiedName"), "type": target.get("type")}


@router.get("/api/annotations", summary="What people wrote on an entity (as `navd entity` shows it)")
def get_annotation(index: Index, config: Config, entity: _ENTITY) -> dict[str, Any]:
    service = AnnotationService(index)
    with blame("entity"):
        target = service.resolve(entity, lookup_scope(config))
    return _shown(service.get(str(target["identity"])), target)


@router.get("/api/annotations/history", summary="Every change of an entity's annotation, oldest first "
                                                "(as `navd entity --history`)")
def get_history(index: Index, config: Config, entity: _ENTITY) -> dict[str, Any]:
    service = AnnotationService(index)
    with blame("entity"):
        target = service.resolve(entity, lookup_scope(config))
    return {"identity": target["identity"], "qualifiedName": target.get("qualifiedName"),
            "changes": [c.as_dict() for c in service.history(str(target["identity"]))]}


@router.patch("/api/annotations", summary="Edit an entity's annotation (as `navd annotate`); recorded")
async def patch_annotation(request: Request, writer: Writer, config: Config, entity: _ENTITY) -> dict[str, Any]:
    """Body (every key optional): `addTags`, `removeTags` (lists), `description`, `name` (text;
    null or "" clears), `properties` ({key: value, or null to remove}), `customProperties`
    ({namespace: {key: value or null}})."""
    body = await _json_body(request)
    return await run_in_threadpool(_patch, writer, config, entity, body, actor_of(request))


def _patch(writer: SolrIndex, config: NavdConfig, entity: str, body: Mapping[str, Any], actor: str) -> dict[str, Any]:
    service = AnnotationService(writer)
    with blame_field():
        edit = navd_edit(body)
    with blame("entity"):
        target = service.resolve(entity, lookup_scope(config))
    with blame_field():
        annotation, _ = service.edit(str(target["identity"]), edit, actor)
    return _shown(annotation, target)


_PATCH_KEYS = frozenset({"addTags", "removeTags", "description", "name", "properties", "customProperties"})


def navd_edit(body: Mapping[str, Any]) -> Edit:
    """navd's PATCH body as an Edit (UsageError naming the key for a bad one)."""
    unknown = sorted(set(body) - _PATCH_KEYS)
    if unknown:
        raise UsageError(f"{unknown[0]}: not a key of an annotation edit (use {', '.join(sorted(_PATCH_KEYS))})")

    def strings(key: str) -> tuple[str, ...]:
        value = body.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UsageError(f"{key}: a list of strings")
        return tuple(value)

    def updates(key: str, value: Any) -> tuple[dict[str, str], tuple[str, ...]]:
        if value is None:
            return {}, ()
        if not isinstance(value, Mapping):
            raise UsageError(f"{key}: an object of key -> value (null removes the key)")
        return ({k: v for k, v in value.items() if v is not None}, tuple(k for k, v in value.items() if v is None))

    set_properties, unset_properties = updates("properties", body.get("properties"))
    custom = body.get("customProperties") or {}
    if not isinstance(custom, Mapping):
        raise UsageError("customProperties: an object of namespace -> {key: value}")
    set_custom: dict[str, str] = {}
    unset_custom: list[str] = []
    for namespace, values in custom.items():
        put, removed = updates(f"customProperties: {namespace}", values)
        set_custom.update({f"{namespace}.{k}": v for k, v in put.items()})
        unset_custom += [f"{namespace}.{k}" for k in removed]
    return Edit(add_tags=strings("addTags"), remove_tags=strings("removeTags"),
                description=body["description"] if "description" in body else KEEP,
                display_name=body["name"] if "name" in body else KEEP,
                set_properties=set_properties, unset_properties=unset_properties,
                set_custom=set_custom, unset_custom=tuple(unset_custom))


@router.put("/api/v{version}/entities/{identity}", tags=["navigator"],
            summary="Navigator: edit an entity's name, description, tags, properties, customProperties "
                    "(Hue's body; keys absent are kept)")
async def put_navigator_entity(
        version: str, identity: str, request: Request, writer: Writer,
        query: Ignored = None, offset: Ignored = None, limit: Ignored = None,
        entityIds: Annotated[list[str] | None, Query(description=CARRIED_BY_HUE)] = None,  # noqa: N803
) -> dict[str, Any]:
    """The entity after the edit, as GET entities/{identity} answers it. Query parameters Hue's
    client carries from earlier calls are accepted and ignored."""
    if not version.isdigit() or int(version) not in navigator.VERSIONS:
        raise ApiError(404, f"version: v{version[:20]} is not served: navd answers Navigator's API "
                            f"v{navigator.VERSIONS[0]}..v{navigator.VERSIONS[-1]}", "version")
    body = await _json_body(request)
    return await run_in_threadpool(_put_navigator, writer, identity, body, actor_of(request))


def _put_navigator(writer: SolrIndex, identity: str, body: Mapping[str, Any], actor: str) -> dict[str, Any]:
    service = AnnotationService(writer)
    with blame_field():
        edit = navigator_edit(body)
    with blame("identity"):
        service.require_indexed(identity)
    with blame_field():
        service.edit(identity, edit, actor)
    return navigator_entity(writer, identity)
