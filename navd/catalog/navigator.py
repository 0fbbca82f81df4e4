"""The catalog's reads in Cloudera Navigator's vocabulary (navd/navigator.py: the translation;
docs/navigator-api.md): the entities, an entity, the lineage of entities, as the
Navigator-compatible API (navd/server/navigator_routes.py) answers them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from navd import navigator
from navd.catalog import store
from navd.catalog.service import user_search
from navd.errors import EntityNotFound, SolrError, UsageError, first_line
from navd.index.client import SolrIndex
from navd.index.documents import endpoint_field
from navd.lineage.hub_cache import HubCache
from navd.lineage.rules import LineageOptions, Node
from navd.lineage.service import lineage
from navd.names import shown

#: Solr's order for Navigator's pages: cursorMark needs the unique key, and offset pages need a
#: total order, or an entity could show on two pages and another on none.
_PAGE_ORDER = "identity asc"
#: What GET lineage walks: Navigator's lineage shows operations and deleted entities.
_NAVIGATOR_LINEAGE = LineageOptions(direction="both", operations=True, deleted=True)


def navigator_entities(index: SolrIndex, query: str = "*:*", *, offset: int = 0,
                       limit: int = navigator.DEFAULT_LIMIT) -> list[dict[str, Any]]:
    """GET entities: the elements matching Navigator's `query`, `limit` from `offset`, in
    identity order, as Navigator entities."""
    offset = navigator.bounded_int("offset", offset, 0, navigator.MAX_OFFSET)
    limit = navigator.bounded_int("limit", limit, 0, navigator.MAX_LIMIT)
    body = _search(index, query, rows=limit, start=offset)
    return [navigator.entity(doc) for doc in body["response"]["docs"]]


def navigator_entity_page(index: SolrIndex, query: str = "*:*", *, limit: int = navigator.DEFAULT_LIMIT,
                          cursor_mark: str = navigator.FIRST_CURSOR) -> navigator.CursorPage:
    """POST entities/paging: one page from `cursor_mark` (`*` first). The last page is the one
    shorter than `limit`; a request after it gets no results and the same cursorMark."""
    limit = navigator.bounded_int("limit", limit, 1, navigator.MAX_LIMIT)
    cursor_mark = navigator.check_cursor_mark(cursor_mark)
    body = _search(index, query, rows=limit, cursor_mark=cursor_mark)
    return navigator.CursorPage(tuple(navigator.entity(doc) for doc in body["response"]["docs"]),
                                str(body["nextCursorMark"]))


def _search(index: SolrIndex, query: str, *, rows: int, start: int = 0,
            cursor_mark: str | None = None) -> dict[str, Any]:
    # parsed (refusals: QuerySyntaxError naming `query`), rewritten as a tree, written back
    translated = navigator.translate_query(query)
    params: dict[str, Any] = {"defType": "lucene"}  # as search(): the parser the query was parsed for
    if cursor_mark is not None:
        params["cursorMark"] = cursor_mark
    try:
        return user_search(index, "elements", translated, rows=rows, start=start, sort=_PAGE_ORDER, params=params)
    except SolrError as exc:
        if exc.status != 400:
            raise
        # Solr's 400 is the request's fault (a bad query or cursorMark): the caller's to fix.
        parameter = "cursorMark" if "cursorMark" in str(exc) else "query"
        raise UsageError(f"{parameter}: Solr refused it: {first_line(exc, 300)}") from None


def navigator_entity(index: SolrIndex, identity: str) -> dict[str, Any]:
    """GET entities/{identity}: the element with that identity as a Navigator entity."""
    docs = index.get("elements", [identity]) if identity else []
    if not docs:
        raise EntityNotFound(f"no entity with identity {shown(identity)}")
    return navigator.entity(docs[0])


def navigator_lineage(index: SolrIndex, entity_ids: Sequence[str], hubs: HubCache | None = None) -> dict[str, Any]:
    """GET lineage: the relations of the lineage of each entity (navd's walk, with operations
    and deleted entities) and the entities they connect, as Navigator relations and entities.
    An entity that is not indexed: EntityNotFound."""
    nodes: dict[str, Node] = {}
    walked: set[tuple[str, frozenset[str]]] = set()
    truncated = False
    for entity_id in entity_ids:
        graph = lineage(index, entity_id, _NAVIGATOR_LINEAGE, hubs=hubs)
        nodes.update((node.id, node) for node in graph.nodes)
        walked.update((edge.type, frozenset((edge.source, edge.target))) for edge in graph.edges)
        truncated = truncated or graph.truncated
    relations = _relations_walked(index, walked)
    stored = {str(doc["identity"]): doc for doc in index.get("elements", sorted(nodes))}
    entities = [navigator.entity(stored[i]) if i in stored else
                navigator.placeholder(i, n.qualified_name, n.type, n.source_type, n.name)
                for i, n in sorted(nodes.items())]
    answer: dict[str, Any] = {"entities": entities, "relations": relations}
    if truncated:
        answer["truncated"] = True  # navd's: the walk stopped at LineageOptions.max_nodes
    return answer


def _relations_walked(index: SolrIndex, walked: set[tuple[str, frozenset[str]]]) -> list[dict[str, Any]]:
    """The stored relations behind the walk's edges (type and the two ends; an edge does not
    say which end is endpoint 1), as Navigator relations in identity order."""
    if not walked:
        return []
    ends = {end for _type, pair in walked for end in pair}
    types = {relation_type for relation_type, _pair in walked}
    found: dict[str, dict[str, Any]] = {}
    for doc in store.relations_among(index, ends, types):
        key = (str(doc["type"]), frozenset((str(doc[endpoint_field(1, "Id")]), str(doc[endpoint_field(2, "Id")]))))
        if key in walked:
            found[str(doc["identity"])] = doc
    return [navigator.relation(found[identity]) for identity in sorted(found)]
