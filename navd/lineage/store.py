"""The lineage walk's store on Solr (navd/lineage/rules.py's LineageStore): batched terms
queries, streamed. An in-memory store for tests is navd/lineage/memory_store.py.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
import dataclasses
import json
from datetime import datetime
from typing import Any

from navd.index.client import SolrIndex, batches
from navd.index.documents import FIRST_SEEN, endpoint_field
from navd.index.filters import by_time_filter, terms_filter
from navd.index.lookup import find_entity, oldest_execution_facet, oldest_execution_from_facets
from navd.lineage.rules import ANSWER_CHUNK, RelationAsk, RelationsByAsk
from navd.lineage.stored import ELEMENT_FIELDS, RELATION_FIELDS, StoredElement, StoredRelation

#: Ids per terms clause: the unit the answers are ordered by (as if asked one chunk at a time,
#: the order every store answers in: rules.ANSWER_CHUNK).
_CHUNK = ANSWER_CHUNK
#: Ids per request, over all the clauses of one request: few round trips, bodies of ~100 kB.
_REQUEST_IDS = 4000
#: What an `ends_only` ask reads of a relation.
_ENDS_FIELDS = ",".join(["identity", "type", *(endpoint_field(end, suffix) for end in (1, 2)
                                                for suffix in ("Id", "Type"))])
#: Rows of a level's first read, and per page of a cursor: most levels fit in one.
_PAGE = 5000
#: The most relations one level reads in one unsorted page (rows Solr collects at once);
#: above, it pages with the cursor.
_ONE_READ = 100_000
#: Rows of the first cursor page of a piece read in the walk's order (`related_pages`): about
#: what a hub's level shows under the API's 3,000-node cap takes, in two pages.
_PIECE_PAGE = 1000
#: A first piece of at most this many ids is read before the others (a function sort): few
#: nodes whose answers could fill a page are a hub (a level's first piece is the root alone).
#: Either order is exact; measured at 10M, the function sort costs an ordinary level about 10%.
_HUB_PIECE = 10

#: (piece number, ask number, ids): one terms clause of a request
_Piece = tuple[int, int, list[str]]


@dataclasses.dataclass(frozen=True)
class _Query:
    """The relations request of some pieces: one OR of their terms clauses."""

    filters: list[str]
    params: dict[str, str]
    #: each piece's clause, in the pieces' order (the first of `filters` is their OR)
    clauses: list[str]
    #: only the endpoints when that is all the asks read (a level's columns, the columns' tables):
    #: measured, most of a hub's time is Solr writing stored fields nobody reads
    fields: str

    @classmethod
    def of(cls, asks: Sequence[RelationAsk], pieces: Sequence[_Piece]) -> _Query:
        clauses: list[str] = []
        params: dict[str, str] = {}
        # One moment for every ask (the walk's case): a filter of its own, which Solr caches
        moments = {asks[n].as_of for _, n, _ in pieces}
        filters = [by_time_filter(FIRST_SEEN, moment) for moment in moments if moment is not None] \
            if len(moments) == 1 else []
        for number, n, chunk in pieces:
            ask = asks[n]
            # named ids<number>: a parameter named `ids` alone would make Solr return only those documents
            params[f"ids{number}"] = ",".join(chunk)
            clause = [f'_query_:"{{!terms f={endpoint_field(ask.near_end, "Id")} v=$ids{number}}}"',
                      f"type:({' OR '.join(ask.types)})"]
            if ask.near_type is not None:
                clause.append(f"{endpoint_field(ask.near_end, 'Type')}:{ask.near_type}")
            if ask.far_type is not None:
                clause.append(f"{endpoint_field(3 - ask.near_end, 'Type')}:{ask.far_type}")
            if ask.as_of is not None and len(moments) > 1:
                clause.append(f"({by_time_filter(FIRST_SEEN, ask.as_of)})")
            clauses.append(f"({' AND '.join(clause)})")
        fields = _ENDS_FIELDS if all(asks[n].ends_only for _, n, _ in pieces) else RELATION_FIELDS
        return cls([" OR ".join(clauses), *filters], params, clauses, fields)


def _told(asks: Sequence[RelationAsk], pieces: Sequence[_Piece], docs: Iterable[Mapping[str, Any]],
          ) -> Iterator[tuple[int, StoredRelation]]:
    """(piece number, relation) for every piece each document answers, as asked alone."""
    sets = [(number, asks[n], frozenset(chunk)) for number, n, chunk in pieces]
    for doc in docs:
        relation = StoredRelation.from_doc(doc)
        for number, ask, ids in sets:
            if relation.endpoint(ask.near_end).id in ids and ask.matches(relation):
                yield number, relation


class SolrLineageStore(RelationsByAsk):
    """`LineageStore` over the elements and relations cores."""

    def __init__(self, index: SolrIndex, known: Iterable[Mapping[str, Any]] = (), *,
                 oldest_execution: bool = False) -> None:
        self.index = index
        #: with `oldest_execution`, the first element read also asks the oldest execution's start
        #: (the as-of note's history kept, navd/lineage/service.py): a walk reads its nodes anyway,
        #: so the note costs no request of its own. Unasked or not yet read: `oldest_execution_read` False.
        self._oldest_wanted = oldest_execution
        self.oldest_execution_read = False
        self.oldest_execution: datetime | None = None
        #: element documents the caller already read (the root it resolved): not asked again
        self._known = {str(doc["identity"]): StoredElement.from_doc(doc) for doc in known}
        #: the relations of the walk's own asks (not `ends_only`) whose near end is a known
        #: element: the root's degree, which tells the hub cache a hub (navd/lineage/hub_cache.py)
        self.known_degree = 0

    def find(self, entity: str) -> StoredElement | None:
        if entity in self._known:
            return self._known[entity]
        matches = find_entity(self.index, entity)
        return StoredElement.from_doc(matches[0]) if matches else None

    def elements(self, ids: Collection[str]) -> Mapping[str, StoredElement]:
        found: dict[str, StoredElement] = {}
        for chunk in batches(list(ids), _REQUEST_IDS):
            for doc in self._element_docs(chunk):
                element = StoredElement.from_doc(doc)
                found[element.id] = element
        return found

    def _element_docs(self, chunk: list[str]) -> Iterable[Mapping[str, Any]]:
        filters = [terms_filter("identity", chunk)]
        # One page holds the chunk (identities are unique): no sort, no cursor
        if not self._oldest_wanted or self.oldest_execution_read:
            return list(self.index.search("elements", "*:*", rows=len(chunk), fl=ELEMENT_FIELDS,
                                          filters=filters)["response"]["docs"])
        body = self.index.search("elements", "*:*", rows=len(chunk), fl=ELEMENT_FIELDS, filters=filters,
                                 params={"json.facet": json.dumps(oldest_execution_facet())})
        self.oldest_execution = oldest_execution_from_facets(body)
        self.oldest_execution_read = True
        return list(body["response"]["docs"])

    def related(self, asks: Sequence[RelationAsk]) -> Iterator[tuple[int, StoredRelation]]:
        """Several asks in as few requests as their ids allow: one OR of terms clauses per
        request, each answer told to the asks it matches, in the order of asking one after the other."""
        for page in self._pages(asks, in_parts=False):
            yield from page

    def related_pages(self, asks: Sequence[RelationAsk]) -> Iterator[list[tuple[int, StoredRelation]]]:
        """`related`, each request's answer one part when it holds one page (`_PAGE`); a larger
        one (a hub's level) goes on piece by piece in identity order (the order the walk takes
        it in), a cursor page at a time, so a walk stopping at its node cap reads about what it
        shows. Measured (tests/bench/README.md): at 10M a hub's level with columns is 140,000
        relations, of which a 3,000-node cap walks the first 3,000."""
        return self._pages(asks, in_parts=True)

    def _pages(self, asks: Sequence[RelationAsk], *, in_parts: bool) -> Iterator[list[tuple[int, StoredRelation]]]:
        pieces = [(n, chunk) for n, ask in enumerate(asks) for chunk in batches(ask.ids, _CHUNK)]
        requests: list[list[_Piece]] = [[]]
        for number, (n, chunk) in enumerate(pieces):
            if requests[-1] and sum(len(ids) for _, _, ids in requests[-1]) + len(chunk) > _REQUEST_IDS:
                requests.append([])
            requests[-1].append((number, n, chunk))
        # The requests hold consecutive pieces: in request order, each answer sorted by piece
        # (stable, over identity order), is the order of asking each piece alone.
        for request in requests:
            if not request:
                continue
            if in_parts:
                yield from self._parts(asks, request)
                continue
            query = _Query.of(asks, request)
            body = self.index.search("relations", "*:*", rows=_PAGE, fl=query.fields, filters=query.filters,
                                     params=query.params)
            docs: list[dict[str, Any]] = body["response"]["docs"]
            if int(body["response"]["numFound"]) <= len(docs):
                docs.sort(key=lambda doc: str(doc["identity"]))
            else:
                docs = self._relation_docs(query, int(body["response"]["numFound"]))
            found = sorted(_told(asks, request, docs), key=lambda item: item[0])
            yield self._counted(asks, [(pieces[number][0], relation) for number, relation in found])

    def _parts(self, asks: Sequence[RelationAsk], request: list[_Piece]) -> Iterator[list[tuple[int, StoredRelation]]]:
        """One request's answer in the walk's order (piece by piece, each in identity order),
        read as the caller goes. The first page is sorted by identity, a hub's own piece's
        answers first (`_HUB_PIECE`): if the first piece's answers fill it, they go on by its
        cursor and the other pieces are asked again the same way; if not, the page holds every
        piece's answers up to its last identity (the hub's whole), and each goes on after it."""
        pending = list(request)
        while pending:
            first = pending[0]
            query = _Query.of(asks, pending)
            params = dict(query.params)
            sort = "identity asc"
            hub_first = len(pending) > 1 and len(first[2]) <= _HUB_PIECE
            if hub_first:
                params["first"] = query.clauses[0]
                sort = f"if(query($first,0),0,1) asc,{sort}"
            body = self.index.search("relations", "*:*", rows=_PAGE, fl=query.fields, filters=query.filters,
                                     sort=sort, params=params)
            docs: list[dict[str, Any]] = body["response"]["docs"]
            told = list(_told(asks, pending, docs))
            if int(body["response"]["numFound"]) <= len(docs):  # the whole answer
                ask_of = {number: n for number, n, _ in pending}
                yield self._counted(asks, [(ask_of[number], relation) for number, relation
                                           in sorted(told, key=lambda item: (item[0], item[1].id))])
                return
            firsts = [relation for number, relation in told if number == first[0]]
            if len(firsts) == len(docs):  # the first piece fills the page: it may go on
                yield self._counted(asks, [(first[1], relation) for relation in firsts])
                yield from self._piece_pages(asks, first, str(docs[-1]["identity"]), len(docs))
                pending = pending[1:]
                continue
            after = str(docs[-1]["identity"])
            if hub_first:  # the first piece's answers came first: it is whole
                if firsts:
                    yield self._counted(asks, [(first[1], relation) for relation in firsts])
                pending = pending[1:]
            for piece in pending:
                held = sorted((relation for number, relation in told if number == piece[0] and relation.id <= after),
                              key=lambda relation: relation.id)
                if held:
                    yield self._counted(asks, [(piece[1], relation) for relation in held])
                yield from self._piece_pages(asks, piece, after, len(held))
            return

    def _piece_pages(self, asks: Sequence[RelationAsk], piece: _Piece, after: str, held: int,
                     ) -> Iterator[list[tuple[int, StoredRelation]]]:
        """One piece's answer after the identity `after` (of which `held` were read before), in
        identity order, a cursor page at a time, pages growing from `_PIECE_PAGE` to `_PAGE`
        (the first is what a capped walk mostly reads). The cursor starts at the beginning,
        its first page `held` longer: a filter `identity > after` would cost Solr a pass over
        every identity in that range (measured at 10M: 850 ms, for each new `after`)."""
        query = _Query.of(asks, [piece])
        cursor, rows = "*", held + _PIECE_PAGE
        while True:
            body = self.index.search("relations", "*:*", rows=rows, fl=query.fields, filters=query.filters,
                                     sort="identity asc", params={**query.params, "cursorMark": cursor})
            docs = body["response"]["docs"]
            page = [(piece[1], relation) for _, relation in _told(asks, [piece], docs) if relation.id > after]
            if page:
                yield self._counted(asks, page)
            following = str(body.get("nextCursorMark", cursor))
            if len(docs) < rows or following == cursor:
                return
            cursor, rows = following, max(min(2 * rows, _PAGE), _PIECE_PAGE)

    def _counted(self, asks: Sequence[RelationAsk], page: list[tuple[int, StoredRelation]],
                 ) -> list[tuple[int, StoredRelation]]:
        """`page`, its relations from a known element counted in `known_degree`."""
        self.known_degree += sum(1 for n, relation in page if not asks[n].ends_only
                                 and relation.endpoint(asks[n].near_end).id in self._known)
        return page

    def _relation_docs(self, query: _Query, matches: int) -> list[dict[str, Any]]:
        """The matching relation documents of an answer larger than one page (`matches` in the
        first), in identity order, read unsorted and ordered here.

        Measured (tests/bench/bench_walk_representation.py), sorting the matches by identity
        for a cursor cost Solr several times the query itself and made it read the stored
        documents out of index order. So: the answer once more in one page of its size; one
        unsorted page is one searcher's view, whole if it holds every match. Only an answer
        that outgrows even that (writes in between) or `_ONE_READ` is read with the cursor,
        which is stable under writes."""
        if matches <= _ONE_READ:
            body = self.index.search("relations", "*:*", rows=matches + _PAGE, fl=query.fields,
                                     filters=query.filters, params=query.params)
            docs: list[dict[str, Any]] = body["response"]["docs"]
            if int(body["response"]["numFound"]) <= len(docs):
                docs.sort(key=lambda doc: str(doc["identity"]))
                return docs
        return list(self.index.scan("relations", "*:*", fl=query.fields, filters=query.filters, page_size=_PAGE,
                                    params=query.params))
