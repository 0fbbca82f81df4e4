"""Stored elements and relations as the readers see them: typed views of the documents in the
elements and relations cores, read through the field names of navd/index/documents.py.

The lineage walk reads only these (navd/lineage/rules.py); so do the linker, purge and the HMS
extractor's incarnation moves. Fields a query did not fetch read as empty.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from navd.index.documents import endpoint_field, is_stub, property_field

_ENDPOINT_SUFFIXES = ("Id", "QualifiedName", "Type", "SourceType", "Linked")
#: The fields `StoredElement.from_doc` reads (for Solr's `fl`).
ELEMENT_FIELDS = "identity,qualifiedName,type,sourceType,originalName,deleted,properties"
#: The fields `StoredRelation.from_doc` reads (for Solr's `fl`).
RELATION_FIELDS = ",".join(["identity", "type", *(endpoint_field(end, suffix) for end in (1, 2)
                                                  for suffix in _ENDPOINT_SUFFIXES),
                            "dependencyType", "expression", "discriminator", property_field("subtype")])


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

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> StoredElement:
        return cls(str(doc["identity"]), str(doc.get("qualifiedName", "")), str(doc.get("type", "")),
                   str(doc.get("sourceType", "")), str(doc.get("originalName", "")),
                   bool(doc.get("deleted", False)), is_stub(doc))


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

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> StoredRelation:
        def end(n: int) -> StoredEndpoint:
            return StoredEndpoint(str(doc.get(endpoint_field(n, "Id"), "")),
                                  str(doc.get(endpoint_field(n, "QualifiedName"), "")),
                                  str(doc.get(endpoint_field(n, "SourceType"), "")),
                                  str(doc.get(endpoint_field(n, "Type"), "")),
                                  doc.get(endpoint_field(n, "Linked")) is not False)

        return cls(str(doc["identity"]), str(doc.get("type", "")), end(1), end(2), doc.get("dependencyType"),
                   doc.get("expression"), str(doc.get("discriminator", "")), doc.get(property_field("subtype")))

    def endpoint(self, end: int) -> StoredEndpoint:
        if end == 1:
            return self.endpoint1
        if end == 2:
            return self.endpoint2
        raise ValueError(f"relation endpoint {end!r}: relations have endpoints 1 and 2")

    @property
    def unlinked_ends(self) -> tuple[int, ...]:
        return tuple(end for end in (1, 2) if not self.endpoint(end).linked)
