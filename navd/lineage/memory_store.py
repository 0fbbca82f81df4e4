"""The lineage walk's store in memory: for tests of the rules and for small, local graphs.

Built from records through the same document builders the index writer uses, and read back
through the same views, so a graph here is what Solr would hold after writing those records.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from datetime import datetime

from navd.index.documents import deletion_update, element_document, relation_document, stub_document
from navd.index.lookup import matches, name_queries
from navd.lineage.rules import RelationAsk, RelationPool
from navd.lineage.stored import StoredElement, StoredRelation
from navd.model import Deletion, Element, ElementStub, Record, Relation


class MemoryLineageStore:
    """`navd.lineage.rules.LineageStore` over elements and relations held in dicts."""

    def __init__(self, elements: Iterable[StoredElement] = (), relations: Iterable[StoredRelation] = (), *,
                 part: int | None = None) -> None:
        self._elements: dict[str, StoredElement] = {e.id: e for e in elements}
        self._relations = RelationPool(relations)
        #: answers per part of `related_pages` (None: all in one, as Solr reads an ordinary level)
        self.part = part

    @classmethod
    def of(cls, records: Iterable[Record]) -> MemoryLineageStore:
        """The store after an index writer wrote `records` in order: an element replaces its
        document, a stub is written only if absent, a deletion flags only what exists."""
        element_docs: dict[str, dict[str, object]] = {}
        relation_docs: list[dict[str, object]] = []
        for record in records:
            if isinstance(record, Element):
                doc = element_document(record)
                element_docs[str(doc["identity"])] = doc
            elif isinstance(record, ElementStub):
                doc = {k: v for k, v in stub_document(record).items() if k != "_version_"}
                element_docs.setdefault(str(doc["identity"]), doc)
            elif isinstance(record, Deletion):
                update = deletion_update(record)
                existing = element_docs.get(str(update["identity"]))
                if existing is not None:
                    existing.update({k: v["set"] for k, v in update.items() if isinstance(v, dict)})
            elif isinstance(record, Relation):
                relation_docs.append(relation_document(record))
            else:
                raise TypeError(f"cannot store {type(record).__name__}: expected Element, Relation, ElementStub "
                                f"or Deletion")
        return cls(map(StoredElement.from_doc, element_docs.values()), map(StoredRelation.from_doc, relation_docs))

    def find(self, entity: str) -> StoredElement | None:
        for query in (q for q in name_queries(entity) if q.rule == "exact"):  # as SolrLineageStore.find
            found = sorted((e for e in self._elements.values() if matches(query, e.id, e.qualified_name)),
                           key=lambda e: e.qualified_name)
            if found:
                return found[0]
        return None

    def elements(self, ids: Collection[str]) -> Mapping[str, StoredElement]:
        return {i: self._elements[i] for i in ids if i in self._elements}

    def relations(self, ids: Collection[str], types: Collection[str], near_end: int, *,
                  near_type: str | None = None, far_type: str | None = None,
                  ends_only: bool = False, as_of: datetime | None = None) -> Iterable[StoredRelation]:
        return self._relations.relations(ids, types, near_end, near_type=near_type, far_type=far_type,
                                         ends_only=ends_only, as_of=as_of)

    def related(self, asks: Sequence[RelationAsk]) -> Iterable[tuple[int, StoredRelation]]:
        return self._relations.related(asks)

    def related_pages(self, asks: Sequence[RelationAsk]) -> Iterator[Sequence[tuple[int, StoredRelation]]]:
        answers = self._relations.related(asks)
        size = self.part or max(len(answers), 1)
        for start in range(0, len(answers), size):
            yield answers[start:start + size]
