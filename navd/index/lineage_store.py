"""The lineage walk's store on Solr: batched terms queries, streamed (navd/lineage.py)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping

from navd.index.client import SolrIndex, batches
from navd.index.documents import ELEMENT_FIELDS, RELATION_FIELDS, StoredElement, StoredRelation, endpoint_field
from navd.index.lookup import find_entity

#: Ids per terms query: well below Solr's maxBooleanClauses, few enough round trips.
_CHUNK = 500


class SolrLineageStore:
    """`navd.lineage.LineageStore` over the elements and relations cores."""

    def __init__(self, index: SolrIndex) -> None:
        self.index = index

    def find(self, entity: str) -> StoredElement | None:
        matches = find_entity(self.index, entity)
        return StoredElement.from_doc(matches[0]) if matches else None

    def elements(self, ids: Collection[str]) -> Mapping[str, StoredElement]:
        found: dict[str, StoredElement] = {}
        for chunk in batches(list(ids), _CHUNK):
            for doc in self.index.scan("elements", "*:*", fl=ELEMENT_FIELDS, filters=[terms_filter("identity", chunk)]):
                element = StoredElement.from_doc(doc)
                found[element.id] = element
        return found

    def relations(self, ids: Collection[str], types: Collection[str], near_end: int, *,
                  near_type: str | None = None, far_type: str | None = None) -> Iterable[StoredRelation]:
        return self._relations(list(ids), list(types), near_end, near_type, far_type)

    def _relations(self, ids: list[str], types: list[str], near_end: int, near_type: str | None,
                   far_type: str | None) -> Iterator[StoredRelation]:
        type_filters = [f"type:({' OR '.join(types)})"]
        if near_type is not None:
            type_filters.append(f"{endpoint_field(near_end, 'Type')}:{near_type}")
        if far_type is not None:
            type_filters.append(f"{endpoint_field(3 - near_end, 'Type')}:{far_type}")
        for chunk in batches(ids, _CHUNK):
            filters = [*type_filters, terms_filter(endpoint_field(near_end, "Id"), chunk)]
            for doc in self.index.scan("relations", "*:*", fl=RELATION_FIELDS, filters=filters):
                yield StoredRelation.from_doc(doc)


def terms_filter(field: str, ids: Iterable[str]) -> str:
    """A filter matching documents whose `field` is one of `ids` (Solr's terms parser: one
    query for hundreds of ids, where a boolean query would hit maxBooleanClauses)."""
    return f"{{!terms f={field}}}{','.join(ids)}"
