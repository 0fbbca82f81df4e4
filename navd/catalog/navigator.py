"""The catalog's reads in Cloudera Navigator's vocabulary (navd/navigator.py: the translation;
docs/navigator-api.md): the entities (with the SOURCE entities derived from them), an entity,
the interactive search with its facets, suggestions, the relations, the lineage of entities,
the model, as the Navigator-compatible API (navd/server/navigator_routes.py) answers them."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from navd import navigator
from navd.catalog import store
from navd.catalog.service import user_search
from navd.errors import EntityNotFound, SolrError, UsageError, first_line
from navd.index import query_syntax
from navd.index.client import SolrIndex
from navd.index.documents import display_document, endpoint_field
from navd.lineage.hub_cache import Generation, HubCache, generation
from navd.lineage.rules import LineageOptions, Node
from navd.lineage.service import lineage
from navd.model import ElementType, RelationType, SourceType
from navd.names import shown

#: Solr's order for Navigator's pages: cursorMark needs the unique key, and offset pages need a
#: total order, or an entity could show on two pages and another on none.
_PAGE_ORDER = "identity asc"
#: The interactive search's order: Hue boosts the fields it searches, so the best match first
_RELEVANCE_ORDER = "score desc, identity asc"
#: What GET lineage walks: Navigator's lineage shows operations and deleted entities.
_NAVIGATOR_LINEAGE = LineageOptions(direction="both", operations=True, deleted=True)
#: What each kind of source is discovered among; the key of each is navigator.source_of's
_FILE_SYSTEMS = f"sourceType:({' OR '.join(navigator.PATH_SOURCE_TYPES)})"
_OPERATIONS = f"type:({ElementType.OPERATION.value} OR {ElementType.OPERATION_EXECUTION.value})"
_METASTORES = f"sourceType:{SourceType.HIVE.value} AND -{_OPERATIONS}"
_NAMESPACES = f"sourceType:{SourceType.OPENLINEAGE.value} AND prop_namespace:[* TO *]"
#: The most sources of one kind navd lists (each costs a request to find)
_MOST_SOURCES = 200
#: What a `firstClassEntitiesOnly` search leaves out: the parts of an entity
_NOT_FIRST_CLASS = f"-type:({ElementType.FIELD.value} OR {ElementType.PARTITION.value})"
#: Names a suggestion list holds
_SUGGESTIONS = 10


# -- sources -------------------------------------------------------------------------------------

def navigator_sources(index: SolrIndex, cluster: str) -> list[navigator.Source]:
    """Every source of what navd holds, derived from the elements (navigator.source_of): each
    file system of the paths, each cluster of the Hive catalogue names, each OpenLineage
    namespace, and one per service of `cluster` with elements (YARN, Spark, Impala, Oozie, Hive's
    queries, OpenLineage elements of no namespace)."""
    fields = "identity,qualifiedName,sourceType,type,properties"

    def described(doc: dict[str, Any]) -> tuple[navigator.Source, str]:
        # the names come from the data (a namespace an OpenLineage event named): parsed as any query
        source = navigator.source_of(display_document(doc), cluster)
        return source, query_syntax.lucene_query(navigator.source_match(source))

    found: list[navigator.Source] = []
    for kind_filter in (_FILE_SYSTEMS, _METASTORES, _NAMESPACES):
        found += store.distinct_by_exclusion(index, [kind_filter], described, fl=fields, most=_MOST_SOURCES)
    by_type = store.counts_by(index, "sourceType")
    for source_type in sorted(by_type):
        if source_type in navigator.PATH_SOURCE_TYPES:
            continue
        service = navigator.Source(source_type, navigator.SourceKind.SERVICE, cluster)
        # Hive and OpenLineage elements may all belong to metastores and namespaces
        held = [query_syntax.lucene_query(navigator.source_match(service))]
        if source_type in (SourceType.HIVE.value, SourceType.OPENLINEAGE.value) and not index.count(
                "elements", "*:*", filters=held):
            continue
        found.append(service)
    return sorted(set(found))


class SourceCache:
    """The sources of one index generation (navd/lineage/hub_cache.py's `generation`: two cheap
    requests), shared by a server's requests: finding them costs a request per source, and a Hue
    configured with a cluster name names them in every query."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entry: tuple[Generation, str, tuple[navigator.Source, ...]] | None = None

    def sources(self, index: SolrIndex, cluster: str) -> list[navigator.Source]:
        now = generation(index)  # before finding them: what they are read from is at least this new
        with self._lock:
            entry = self._entry
        if entry is not None and entry[:2] == (now, cluster):
            return list(entry[2])
        found = navigator_sources(index, cluster)
        with self._lock:
            self._entry = (now, cluster, tuple(found))
        return found


def _sources(index: SolrIndex, cluster: str, cache: SourceCache | None) -> list[navigator.Source]:
    return cache.sources(index, cluster) if cache is not None else navigator_sources(index, cluster)


def query_context(index: SolrIndex, query_texts: Sequence[str], cluster: str,
                  cache: SourceCache | None = None) -> navigator.QueryContext:
    """What Navigator queries are translated against: the sources, looked up only when a query
    names a source id."""
    if any("sourceId" in text or "srcId" in text for text in query_texts):
        return navigator.QueryContext(cluster, navigator.sources_by_identity(_sources(index, cluster, cache)))
    return navigator.QueryContext(cluster)


def _source_entities(index: SolrIndex, query: query_syntax.Query, cluster: str,
                     cache: SourceCache | None) -> list[dict[str, Any]]:
    entities = [navigator.source_entity(s, cluster) for s in _sources(index, cluster, cache)]
    return sorted((e for e in entities if navigator.matches(query, e)), key=lambda e: str(e["identity"]))


# -- entities ------------------------------------------------------------------------------------

def navigator_entities(index: SolrIndex, query: str = "*:*", *, offset: int = 0,
                       limit: int = navigator.DEFAULT_LIMIT, cluster: str = "",
                       cache: SourceCache | None = None) -> list[dict[str, Any]]:
    """GET entities: the elements matching Navigator's `query`, `limit` from `offset`, in
    identity order, as Navigator entities; a query for SOURCE entities (`type:SOURCE`,
    `clusterName:"..."`: navigator.is_source_query) answers the sources it matches."""
    offset = navigator.bounded_int("offset", offset, 0, navigator.MAX_OFFSET)
    limit = navigator.bounded_int("limit", limit, 0, navigator.MAX_LIMIT)
    parsed = query_syntax.parse(query, "query")
    if navigator.is_source_query(parsed):
        return _source_entities(index, parsed, cluster, cache)[offset:offset + limit]
    context = query_context(index, [query], cluster, cache)
    body = _search(index, navigator.translate_query(query, "query", context), rows=limit, start=offset)
    return [navigator.entity(doc, cluster) for doc in body["response"]["docs"]]


def navigator_entity_page(index: SolrIndex, query: str = "*:*", *, limit: int = navigator.DEFAULT_LIMIT,
                          cursor_mark: str = navigator.FIRST_CURSOR, cluster: str = "",
                          cache: SourceCache | None = None) -> navigator.CursorPage:
    """POST entities/paging: one page from `cursor_mark` (`*` first). The last page is the one
    shorter than `limit`; a request after it gets no results and the same cursorMark."""
    limit = navigator.bounded_int("limit", limit, 1, navigator.MAX_LIMIT)
    cursor_mark = navigator.check_cursor_mark(cursor_mark)
    context = query_context(index, [query], cluster, cache)
    body = _search(index, navigator.translate_query(query, "query", context), rows=limit, cursor_mark=cursor_mark)
    return navigator.CursorPage(tuple(navigator.entity(doc, cluster) for doc in body["response"]["docs"]),
                                str(body["nextCursorMark"]))


def _search(index: SolrIndex, translated: str, *, rows: int, start: int = 0, cursor_mark: str | None = None,
            core: str = "elements", sort: str = _PAGE_ORDER, filters: Sequence[str] = (),
            params: dict[str, Any] | None = None) -> dict[str, Any]:
    """`translated` (navd's query text, written by query_syntax) on `core`; Solr's 400 is the
    request's fault: a UsageError naming `query` (or `cursorMark`)."""
    solr_params: dict[str, Any] = {"defType": "lucene", **(params or {})}  # the parser the query was parsed for
    if cursor_mark is not None:
        solr_params["cursorMark"] = cursor_mark
    try:
        return user_search(index, core, translated, rows=rows, start=start, sort=sort, filters=list(filters),
                           params=solr_params)
    except SolrError as exc:
        if exc.status != 400:
            raise
        parameter = "cursorMark" if "cursorMark" in str(exc) else "query"
        raise UsageError(f"{parameter}: Solr refused it: {first_line(exc, 300)}") from None


def navigator_entity(index: SolrIndex, identity: str, cluster: str = "",
                     cache: SourceCache | None = None) -> dict[str, Any]:
    """GET entities/{identity}: the element (or the source) with that identity as a Navigator entity."""
    docs = index.get("elements", [identity]) if identity else []
    if docs:
        return navigator.entity(docs[0], cluster)
    for source in _sources(index, cluster, cache) if identity else ():
        if source.identity == identity:
            return navigator.source_entity(source, cluster)
    raise EntityNotFound(f"no entity with identity {shown(identity)}")


# -- interactive search --------------------------------------------------------------------------

def navigator_interactive(index: SolrIndex, search: navigator.InteractiveSearch, cluster: str = "",
                          cache: SourceCache | None = None) -> dict[str, Any]:
    """POST interactive/entities: the page of entities matching the query and every filter, by
    relevance, with `totalMatched` and a `facets` object of each facet field asked (value ->
    count; a field navd does not count has an empty one)."""
    tags = [f.tag for f in search.filters if f.tag]
    facet_params = {name: navigator.facet_field_param(name, tags) for name in search.facet_fields}
    counted = [param for param in facet_params.values() if param is not None]
    sources = _sources(index, cluster, cache) if "sourceId" in search.facet_fields else []
    source_queries = {query_syntax.lucene_query(navigator.source_match(s)): s.identity for s in sources}
    params: dict[str, Any] = {}
    if counted or source_queries:
        params = {"facet": "true", "facet.mincount": 1, "facet.limit": navigator.FACET_LIMIT,
                  "facet.field": counted, "facet.query": list(source_queries)}
        if search.facet_prefix:
            params["facet.prefix"] = search.facet_prefix
    filters = [navigator.solr_filter(f) for f in search.filters]
    if search.first_class_only:
        filters.append(_NOT_FIRST_CLASS)
    try:
        body = _search(index, search.query, rows=search.limit, start=search.offset, sort=_RELEVANCE_ORDER,
                       filters=filters, params=params)
    except UsageError as exc:
        # Solr's refusal names no part of the request: the query alone tells whether it was a filter's
        if not filters or not str(exc).startswith("query: "):
            raise
        _search(index, search.query, rows=0)
        raise UsageError("filterQueries: " + str(exc).removeprefix("query: ")) from None
    counts = body.get("facet_counts", {})
    facets: dict[str, dict[str, int]] = {}
    for name, param in facet_params.items():
        if name == "sourceId":
            by_query = counts.get("facet_queries", {})
            facets[name] = {identity: int(by_query.get(q, 0)) for q, identity in source_queries.items()
                            if by_query.get(q, 0)}
        elif param is None:
            facets[name] = {}
        else:
            pairs = counts.get("facet_fields", {}).get(param.rpartition("}")[2], [])
            facets[name] = {str(pairs[n]).lower() if isinstance(pairs[n], bool) else str(pairs[n]): int(pairs[n + 1])
                            for n in range(0, len(pairs), 2)}
    return {"results": [navigator.entity(doc, cluster) for doc in body["response"]["docs"]],
            "totalMatched": int(body["response"]["numFound"]), "facets": facets,
            "offset": search.offset, "limit": search.limit}


def navigator_suggestions(index: SolrIndex, prefix: str) -> dict[str, Any]:
    """GET interactive/suggestions: the names (originalName) of entities that start with
    `prefix` (`*` or empty: any), the most common first (ties by name)."""
    text = prefix.strip().rstrip("*")
    query = f"originalName:{query_syntax.escape(text)}*" if text else "*:*"
    body = _search(index, query_syntax.lucene_query(query), rows=0,
                   params={"facet": "true", "facet.field": "originalName", "facet.limit": _SUGGESTIONS * 20,
                           "facet.mincount": 1})
    pairs = body["facet_counts"]["facet_fields"]["originalName"]
    # originalName is indexed whole and lower case: its terms are the names
    terms = [(str(pairs[n]), int(pairs[n + 1])) for n in range(0, len(pairs), 2)
             if str(pairs[n]).startswith(text.lower())]
    names = sorted(terms, key=lambda pair: (-pair[1], pair[0]))[:_SUGGESTIONS]
    return {"query": prefix, "suggestions": [name for name, _count in names],
            "totalMatched": int(body["response"]["numFound"])}


# -- relations -----------------------------------------------------------------------------------

def navigator_relations(index: SolrIndex, query: str = "*:*", *, offset: int = 0,
                        limit: int = navigator.DEFAULT_LIMIT) -> list[dict[str, Any]]:
    """GET relations: the relations matching Navigator's relation `query`, `limit` from
    `offset`, in identity order, as Navigator relations."""
    body = _search(index, navigator.translate_relation_query(query), rows=limit, start=offset, core="relations")
    return [navigator.relation(doc) for doc in body["response"]["docs"]]


def navigator_relation_page(index: SolrIndex, query: str = "*:*", *, limit: int = navigator.DEFAULT_LIMIT,
                            cursor_mark: str = navigator.FIRST_CURSOR) -> navigator.CursorPage:
    """POST relations/paging: as navigator_entity_page, over the relations."""
    body = _search(index, navigator.translate_relation_query(query), rows=limit, cursor_mark=cursor_mark,
                   core="relations")
    return navigator.CursorPage(tuple(navigator.relation(doc) for doc in body["response"]["docs"]),
                                str(body["nextCursorMark"]))


# -- the model -----------------------------------------------------------------------------------

def navigator_model() -> dict[str, Any]:
    """GET models: Navigator's MetadataModel as far as navd has one: its package and the meta
    classes its entities carry; no namespaces, custom properties or mappings."""
    return {"packages": [{"name": navigator.PACKAGE_NAME}], "classes": navigator.meta_classes(),
            "namespaces": [], "properties": [], "mappings": {}}


def navigator_lineage(index: SolrIndex, entity_ids: Sequence[str], hubs: HubCache | None = None, *,
                      cluster: str = "", length: int | None = None, as_of: datetime | None = None) -> dict[str, Any]:
    """GET lineage: the relations of the lineage of each entity (navd's walk, with operations
    and deleted entities, `length` hops each way, navd's default when None) and the entities
    they connect, as Navigator relations and entities; operations and executions carry
    Navigator's `inputs` and `outputs` (navigator.with_flows); as it stood at `as_of` when given
    (navd's own parameter). An entity that is not indexed: EntityNotFound."""
    options = _NAVIGATOR_LINEAGE if length is None else dataclasses.replace(_NAVIGATOR_LINEAGE, depth=length)
    options = dataclasses.replace(options, as_of=as_of)
    nodes: dict[str, Node] = {}
    walked: set[tuple[str, frozenset[str]]] = set()
    truncated = False
    for entity_id in entity_ids:
        graph = lineage(index, entity_id, options, hubs=hubs)
        nodes.update((node.id, node) for node in graph.nodes)
        walked.update((edge.type, frozenset((edge.source, edge.target))) for edge in graph.edges)
        truncated = truncated or graph.truncated
    relations = _relations_walked(index, walked)
    stored = {str(doc["identity"]): doc for doc in index.get("elements", sorted(nodes))}
    operations = {i for i, n in nodes.items() if n.type in (ElementType.OPERATION.value,
                                                            ElementType.OPERATION_EXECUTION.value)}
    flows = _flows(index, operations)
    entities = []
    for identity, node in sorted(nodes.items()):
        shown_entity = navigator.entity(stored[identity], cluster) if identity in stored else \
            navigator.placeholder(identity, node.qualified_name, node.type, node.source_type, node.name)
        if identity in operations:
            inputs, outputs = flows.get(identity, ((), ()))
            shown_entity = navigator.with_flows(shown_entity, inputs, outputs)
        entities.append(shown_entity)
    answer: dict[str, Any] = {"entities": entities, "relations": relations}
    if truncated:
        answer["truncated"] = True  # navd's: the walk stopped at LineageOptions.max_nodes
    return answer


def _flows(index: SolrIndex, operations: Collection[str]) -> dict[str, tuple[list[str], list[str]]]:
    """The names of the datasets each operation or execution reads (DATA_FLOW into it) and
    writes (DATA_FLOW out of it), from the stored relations: all of them, not only those the
    walk crossed. Columns are left out (their flows are the column lineage)."""
    if not operations:
        return {}
    reads: dict[str, set[str]] = {}
    writes: dict[str, set[str]] = {}
    #: a dataset no extractor indexed is named by its qualified name, as the relation carries it
    qualified: dict[str, str] = {}
    for doc in store.relations_touching(index, operations, [RelationType.DATA_FLOW.value]):
        source, target = str(doc[endpoint_field(1, "Id")]), str(doc[endpoint_field(2, "Id")])
        qualified.update({source: str(doc.get(endpoint_field(1, "QualifiedName")) or source),
                          target: str(doc.get(endpoint_field(2, "QualifiedName")) or target)})
        if target in operations and doc.get(endpoint_field(1, "Type")) != ElementType.FIELD.value:
            reads.setdefault(target, set()).add(source)
        if source in operations and doc.get(endpoint_field(2, "Type")) != ElementType.FIELD.value:
            writes.setdefault(source, set()).add(target)
    datasets = {d for ends in (*reads.values(), *writes.values()) for d in ends}
    names = {d: qualified[d] for d in datasets}
    names.update({str(doc["identity"]): str(doc.get("originalName") or doc.get("qualifiedName"))
                  for doc in index.get("elements", sorted(datasets))})
    return {op: ([names[d] for d in sorted(reads.get(op, ()))], [names[d] for d in sorted(writes.get(op, ()))])
            for op in operations}


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
