"""Apache Atlas' type definitions of the types navd serves (navd/atlas.py names them) and the
classification bodies Atlas' clients send (docs/atlas-api.md). Pure: no I/O; navd/catalog/atlas.py
reads the classifications in use."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from navd.atlas import (
    COLUMN_LINEAGE_TYPE,
    DATASET_SUPERTYPE,
    ENTITY_TYPES,
    PROCESS_SUPERTYPE,
    PROCESS_TYPES,
    TYPE_NOT_FOUND,
    AtlasNotFound,
)
from navd.errors import UsageError
from navd.names import shown

# -- type definitions -----------------------------------------------------------------------------

TYPE_CATEGORIES = ("enum", "struct", "classification", "entity", "relationship", "business_metadata")
_TYPE_GUID_PREFIX = "navd-type-"


def _entity_def(name: str) -> dict[str, Any]:
    pairs = ENTITY_TYPES.get(name, ())
    process = bool(pairs) and pairs[0][1] in PROCESS_TYPES
    supertype = PROCESS_SUPERTYPE if process or name == COLUMN_LINEAGE_TYPE else DATASET_SUPERTYPE
    attribute_names = {"hive_table": ("db", "tableType", "lastAccessTime"), "hive_column": ("table", "type"),
                       "hdfs_path": ("path", "isFile", "fileSize", "group", "posixPermissions", "modifiedTime"),
                       COLUMN_LINEAGE_TYPE: ("depenendencyType", "expression")}.get(name, ())
    if process:
        attribute_names = ("queryText", "userName", "startTime", "endTime")
    return {"category": "ENTITY", "guid": _TYPE_GUID_PREFIX + name, "name": name,
            "description": "navd: " + (", ".join(f"{s} {t}" for s, t in pairs) if pairs else "column-level lineage"),
            "typeVersion": "1.0", "serviceType": name.split("_", 1)[0], "superTypes": [supertype],
            "attributeDefs": [{"name": a, "typeName": "string", "isOptional": True, "cardinality": "SINGLE",
                               "isUnique": False, "isIndexable": False} for a in attribute_names],
            "subTypes": []}


def _classification_def(name: str, description: str | None = None) -> dict[str, Any]:
    return {"category": "CLASSIFICATION", "guid": _TYPE_GUID_PREFIX + "classification-" + name, "name": name,
            "description": description or name, "typeVersion": "1.0", "attributeDefs": [], "superTypes": [],
            "entityTypes": [], "subTypes": []}


def entity_type_names() -> list[str]:
    return sorted({*ENTITY_TYPES, COLUMN_LINEAGE_TYPE})


def typedefs(classifications: Mapping[str, str | None], category: str | None = None) -> dict[str, Any]:
    """Atlas' AtlasTypesDef: the entity types navd serves and the classifications (name ->
    description: the tags in use and those defined); `category` (Atlas' `type` filter) keeps one
    category."""
    if category is not None and category.lower() not in TYPE_CATEGORIES:
        raise UsageError(f"type: {shown(category, 40)} is not a type category (use {', '.join(TYPE_CATEGORIES)})")
    wanted = category.lower() if category else None
    return {"enumDefs": [], "structDefs": [], "relationshipDefs": [], "businessMetadataDefs": [],
            "entityDefs": [_entity_def(n) for n in entity_type_names()] if wanted in (None, "entity") else [],
            "classificationDefs": [_classification_def(n, d) for n, d in sorted(classifications.items())]
            if wanted in (None, "classification") else []}


def typedef_headers(classifications: Mapping[str, str | None], category: str | None = None) -> list[dict[str, Any]]:
    """Atlas' AtlasTypeDefHeader list."""
    defs = typedefs(classifications, category)
    return [{"guid": d["guid"], "name": d["name"], "category": d["category"]}
            for d in [*defs["entityDefs"], *defs["classificationDefs"]]]


def typedef_by_name(name: str, classifications: Mapping[str, str | None]) -> dict[str, Any]:
    if name in ENTITY_TYPES or name == COLUMN_LINEAGE_TYPE:
        return _entity_def(name)
    if name in classifications:
        return _classification_def(name, classifications[name])
    raise AtlasNotFound(TYPE_NOT_FOUND, f"name: {shown(name, 80)} is not a type navd serves")


def classification_defs_body(body: Any) -> list[tuple[str, str | None]]:
    """The (name, description) of each classification definition in Atlas' AtlasTypesDef body;
    definitions of any other category are refused, naming it (navd's entity types are its own)."""
    if not isinstance(body, Mapping):
        raise UsageError("body: a JSON object (Atlas' AtlasTypesDef) with classificationDefs")
    for key in ("entityDefs", "enumDefs", "structDefs", "relationshipDefs", "businessMetadataDefs"):
        if body.get(key):
            raise UsageError(f"{key}: navd's types are the elements it extracts; only classificationDefs "
                             f"can be created")
    definitions = body.get("classificationDefs")
    if not isinstance(definitions, list) or not definitions:
        raise UsageError("classificationDefs: a non-empty list of {name, description}")
    found: list[tuple[str, str | None]] = []
    for definition in definitions:
        if not isinstance(definition, Mapping) or not isinstance(definition.get("name"), str):
            raise UsageError("classificationDefs: each definition is an object with a name")
        if definition.get("attributeDefs"):
            raise UsageError(f"classificationDefs: attributeDefs of {shown(definition['name'], 40)}: navd keeps a "
                             f"classification's attributes as they are given, without definitions")
        description = definition.get("description")
        found.append((definition["name"], description if isinstance(description, str) else None))
    return found


# -- classifications written ----------------------------------------------------------------------

def classifications_body(body: Any) -> list[tuple[str, dict[str, Any]]]:
    """Atlas' list of AtlasClassification (`[{typeName, attributes}]`) as (name, attributes)."""
    if not isinstance(body, list) or not body:
        raise UsageError("body: a non-empty list of classifications [{\"typeName\": ..., \"attributes\": {...}}]")
    found: list[tuple[str, dict[str, Any]]] = []
    for item in body:
        if not isinstance(item, Mapping) or not isinstance(item.get("typeName"), str):
            raise UsageError("body: each classification is an object with a typeName")
        attributes_given = item.get("attributes") or {}
        if not isinstance(attributes_given, Mapping):
            raise UsageError(f"body: attributes of {shown(item['typeName'], 40)}: an object")
        found.append((item["typeName"], dict(attributes_given)))
    return found
