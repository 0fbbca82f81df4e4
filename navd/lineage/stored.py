"""Stored elements and relations as the readers see them: typed views of the documents in the
elements and relations cores, read through the field names of navd/index/documents.py.

The lineage walk reads only these (navd/lineage/rules.py); so do the linker, purge and the HMS
extractor's incarnation moves. Fields a query did not fetch read as empty.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from navd.index.documents import (
    FIRST_SEEN,
    LAST_SEEN,
    element_field,
    endpoint_field,
    is_stub,
    property_field,
    stored_time,
)

_ENDPOINT_SUFFIXES = ("Id", "QualifiedName", "Type", "SourceType", "Linked")
# An endpoint's fields in _ENDPOINT_SUFFIXES' order, named once: a lineage level reads
# thousands of relations, and naming them per document was a third of StoredRelation.from_doc.
_ENDPOINT1, _ENDPOINT2 = (tuple(endpoint_field(end, suffix) for suffix in _ENDPOINT_SUFFIXES) for end in (1, 2))
_SUBTYPE = property_field("subtype")
#: The fields `StoredElement.from_doc` reads (for Solr's `fl`).
ELEMENT_FIELDS = ",".join(["identity", "qualifiedName", "type", "sourceType", "originalName", "deleted", "properties",
                           element_field("created"), element_field("delete_time")])
#: The fields `StoredRelation.from_doc` reads (for Solr's `fl`).
RELATION_FIELDS = ",".join(["identity", "type", *(endpoint_field(end, suffix) for end in (1, 2)
                                                  for suffix in _ENDPOINT_SUFFIXES),
                            "dependencyType", "expression", "discriminator", property_field("subtype"),
                            FIRST_SEEN, LAST_SEEN])


@dataclasses.dataclass(frozen=True, slots=True)
class StoredElement:
    """An element document as the readers see it. Fields a query did not fetch read as empty."""

    id: str
    qualified_name: str
    type: str
    source_type: str
    name: str = ""
    deleted: bool = False
    stub: bool = False
    #: when the source says it was created (HMS createTime, ...); None when it does not say
    created: datetime | None = None
    #: when it was flagged deleted
    delete_time: datetime | None = None

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> StoredElement:
        return cls(str(doc["identity"]), str(doc.get("qualifiedName", "")), str(doc.get("type", "")),
                   str(doc.get("sourceType", "")), str(doc.get("originalName", "")),
                   bool(doc.get("deleted", False)), is_stub(doc), stored_time(doc.get(element_field("created"))),
                   stored_time(doc.get(element_field("delete_time"))))

    def exists_at(self, moment: datetime) -> bool:
        """Whether the element existed at `moment`: created by then (or its creation unknown)."""
        return self.created is None or self.created <= moment

    def deleted_at(self, moment: datetime) -> bool:
        """Whether the element was deleted by `moment` (deleted with no time told: deleted)."""
        return self.deleted and (self.delete_time is None or self.delete_time <= moment)


@dataclasses.dataclass(frozen=True, slots=True)
class StoredEndpoint:
    """One end of a stored relation: the element's identity and what the relation knows of it."""

    id: str
    qualified_name: str
    source_type: str
    type: str
    #: False when the extractor did not know the element was indexed (see model.Relation).
    linked: bool


@dataclasses.dataclass(frozen=True, slots=True)
class StoredRelation:
    """A relation document as the readers see it. Fields a query did not fetch read as empty."""

    id: str
    type: str
    endpoint1: StoredEndpoint
    endpoint2: StoredEndpoint
    dependency_type: str | None = None
    expression: str | None = None
    discriminator: str = ""
    #: how a column is used, on column edges (the `subtype` property: IDENTITY, FILTER, ...)
    subtype: str | None = None
    #: when the first / last execution that showed it ran (model.Relation.first_seen)
    first_seen: datetime | None = None
    last_seen: datetime | None = None

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> StoredRelation:
        def end(fields: tuple[str, ...]) -> StoredEndpoint:
            id_, qualified_name, type_, source_type, linked = fields
            return StoredEndpoint(str(doc.get(id_, "")), str(doc.get(qualified_name, "")),
                                  str(doc.get(source_type, "")), str(doc.get(type_, "")),
                                  doc.get(linked) is not False)

        return cls(str(doc["identity"]), str(doc.get("type", "")), end(_ENDPOINT1), end(_ENDPOINT2),
                   doc.get("dependencyType"), doc.get("expression"), str(doc.get("discriminator", "")),
                   doc.get(_SUBTYPE), stored_time(doc.get(FIRST_SEEN)), stored_time(doc.get(LAST_SEEN)))

    def seen_by(self, moment: datetime) -> bool:
        """Whether the relation existed at `moment`: its first execution ran by then. A relation
        with no time (structure, such as a table's columns) counts from always."""
        return self.first_seen is None or self.first_seen <= moment

    def endpoint(self, end: int) -> StoredEndpoint:
        if end == 1:
            return self.endpoint1
        if end == 2:
            return self.endpoint2
        raise ValueError(f"relation endpoint {end!r}: relations have endpoints 1 and 2")

    @property
    def unlinked_ends(self) -> tuple[int, ...]:
        return tuple(end for end in (1, 2) if not self.endpoint(end).linked)
