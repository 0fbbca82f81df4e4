"""The one place where records become Solr documents (field names as in Navigator)."""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from navd.model import Element, ElementType, Relation

_PROPERTY_KEY = re.compile(r"[^A-Za-z0-9_.]")
_FILE_SYSTEM_TYPES = frozenset({ElementType.DIRECTORY, ElementType.FILE})


def solr_date(value: datetime) -> str:
    """Solr's date format: UTC, ISO-8601, `Z` suffix, milliseconds."""
    offset = value.utcoffset()
    if offset is None:
        raise ValueError(f"naive datetime {value!r}: navd stores only timezone-aware times")
    if offset:
        value = value.astimezone(UTC)
    return value.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def property_field(key: str) -> str:
    """The searchable field of one property key: `prop_<key>` with odd characters as `_`."""
    return "prop_" + _PROPERTY_KEY.sub("_", key)


def _put_properties(doc: dict[str, Any], properties: Mapping[str, str]) -> None:
    if not properties:
        return
    doc["properties"] = json.dumps(dict(properties), ensure_ascii=False, sort_keys=True)
    for key, value in properties.items():
        doc[property_field(key)] = value


_ELEMENT_SCALARS: tuple[tuple[str, str], ...] = (
    ("file_system_path", "fileSystemPath"), ("owner", "owner"), ("group", "group"),
    ("permissions", "permissions"), ("size", "size"), ("block_size", "blockSize"),
    ("replication", "replication"), ("principal", "principal"), ("query_text", "queryText"),
    ("description", "description"), ("data_type", "dataType"), ("internal_type", "internalType"),
    ("source_id", "sourceId"), ("extractor_run_id", "extractorRunId"),
)
_ELEMENT_DATES: tuple[tuple[str, str], ...] = (
    ("created", "created"), ("last_modified", "lastModified"), ("last_accessed", "lastAccessed"),
    ("started", "started"), ("ended", "ended"), ("delete_time", "deleteTime"),
)


# One C-level call fetches all optional values of an element (this is the indexing hot path).
_scalar_values = operator.attrgetter(*(attr for attr, _ in _ELEMENT_SCALARS))
_date_values = operator.attrgetter(*(attr for attr, _ in _ELEMENT_DATES))
_SCALAR_FIELDS = tuple(field for _, field in _ELEMENT_SCALARS)
_DATE_FIELDS = tuple(field for _, field in _ELEMENT_DATES)


def element_document(element: Element) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "identity": element.identity,
        "qualifiedName": element.qualified_name,
        "sourceType": element.source_type.value,
        "type": element.type.value,
        "originalName": element.name,
        "deleted": element.deleted,
    }
    if element.parent is not None:
        doc["parentId"] = element.parent.identity
        doc["parentQualifiedName"] = element.parent.qualified_name
        if element.file_system_path is not None and element.type in _FILE_SYSTEM_TYPES:
            doc["parentPath"] = _parent_path(element.file_system_path)
    for field, value in zip(_SCALAR_FIELDS, _scalar_values(element)):
        if value is not None:
            doc[field] = value
    for field, value in zip(_DATE_FIELDS, _date_values(element)):
        if value is not None:
            doc[field] = solr_date(value)
    _put_properties(doc, element.properties)
    return doc


def _parent_path(path: str) -> str:
    head = path.rstrip("/").rsplit("/", 1)[0]
    return head or "/"


def relation_document(relation: Relation) -> dict[str, Any]:
    ep1, ep2 = relation.endpoint1, relation.endpoint2
    doc: dict[str, Any] = {
        "identity": relation.identity,
        "type": relation.type.value,
        "endpoint1Id": ep1.identity,
        "endpoint2Id": ep2.identity,
        "endpoint1QualifiedName": ep1.qualified_name,
        "endpoint2QualifiedName": ep2.qualified_name,
        "endpoint1Type": ep1.type.value,
        "endpoint2Type": ep2.type.value,
        "endpoint1SourceType": ep1.source_type.value,
        "endpoint2SourceType": ep2.source_type.value,
        "endpoint1Linked": relation.linked1,
        "endpoint2Linked": relation.linked2,
        "unlinked": relation.unlinked,
    }
    if relation.dependency_type is not None:
        doc["dependencyType"] = relation.dependency_type.value
    if relation.expression is not None:
        doc["expression"] = relation.expression
    if relation.discriminator:
        doc["discriminator"] = relation.discriminator
    if relation.extractor_run_id is not None:
        doc["extractorRunId"] = relation.extractor_run_id
    _put_properties(doc, relation.properties)
    return doc


def display_document(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A stored document as users see it: internal fields dropped, properties decoded."""
    shown = {k: v for k, v in doc.items() if k != "_version_" and not k.startswith("prop_")}
    if isinstance(shown.get("properties"), str):
        try:
            shown["properties"] = json.loads(shown["properties"])
        except ValueError:
            pass
    return shown


def is_stub(doc: Mapping[str, Any]) -> bool:
    """Whether an element document is a stub (an ElementStub: known only from another source's
    reference, marked by the `knownFrom` property). Stubs are not link targets: they carry the
    unresolved name itself. The owning extractor's document replaces a stub wholesale, so the
    mark disappears once the real element is indexed under the same identity."""
    properties = doc.get("properties")
    if not isinstance(properties, str) or "knownFrom" not in properties:
        return False
    try:
        return "knownFrom" in json.loads(properties)
    except ValueError:
        return False
