"""The catalog's reads and classification edits in Apache Atlas' v2 vocabulary (navd/atlas.py:
the translation; docs/atlas-api.md), as the Atlas-compatible API (navd/server/atlas_routes.py)
answers them: entities by guid, by unique attribute and in bulk, lineage, basic and DSL search,
type definitions, classifications added and removed through the annotation service."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from navd import atlas
from navd.annotations.rules import widened
from navd.annotations.service import AnnotationService
from navd.catalog import store
from navd.catalog.service import user_search
from navd.errors import UsageError
from navd.index.client import SolrIndex
from navd.index.documents import display_document
from navd.index.lookup import Scope
from navd.index.query_syntax import write
from navd.lineage.hub_cache import HubCache
from navd.lineage.rules import LineageOptions
from navd.lineage.service import lineage
from navd.model import ElementType, RelationType
from navd.names import shown

#: Solr's order for Atlas' pages: offset pages need a total order
_PAGE_ORDER = "identity asc"
#: the most guids one bulk read takes
MAX_BULK = 500


def _doc(index: SolrIndex, guid: str) -> dict[str, Any]:
    # Solr's real-time get splits its ids at commas: `a,b` would answer a's document
    docs = [d for d in index.get("elements", [guid]) if d.get("identity") == guid] if guid else []
    if not docs:
        raise atlas.AtlasNotFound(atlas.GUID_NOT_FOUND, f"Given instance guid {shown(guid, 80)} is invalid/not found")
    return display_document(docs[0])


def _flows(index: SolrIndex, docs: Iterable[Mapping[str, Any]]) -> dict[str, atlas.Flows]:
    """The inputs and outputs of the processes among `docs`, from the stored DATA_FLOW relations."""
    processes = [str(d["identity"]) for d in docs if atlas.is_process(d)]
    if not processes:
        return {}
    return atlas.process_flows(processes, store.relations_touching(index, processes, [RelationType.DATA_FLOW.value]))


def entity_by_guid(index: SolrIndex, guid: str) -> dict[str, Any]:
    """Atlas' AtlasEntityWithExtInfo of the element whose identity is `guid`."""
    doc = _doc(index, guid)
    return atlas.with_ext_info(doc, _flows(index, [doc]))


def entity_header_by_guid(index: SolrIndex, guid: str) -> dict[str, Any]:
    """Atlas' AtlasEntityHeader of the element whose identity is `guid`."""
    return atlas.entity_header(_doc(index, guid))


def _by_unique_attribute(index: SolrIndex, type_name: str, qualified_name: str) -> dict[str, Any]:
    if not qualified_name:
        raise UsageError("attr:qualifiedName: required (the entity's qualifiedName)")
    query = atlas.unique_attribute_query(type_name, qualified_name)
    docs = user_search(index, "elements", write(query, "attr:qualifiedName"), rows=2, sort=_PAGE_ORDER,
                       params={"defType": "lucene"})["response"]["docs"]
    if not docs:
        raise atlas.AtlasNotFound(atlas.UNIQUE_ATTRIBUTE_NOT_FOUND,
                                  f"Instance {type_name} with unique attribute {{qualifiedName={shown(qualified_name, 200)}}} "
                                  f"does not exist")
    return display_document(docs[0])


def entity_by_unique_attribute(index: SolrIndex, type_name: str, qualified_name: str) -> dict[str, Any]:
    """Atlas' AtlasEntityWithExtInfo of the element of `type_name` named `qualified_name`."""
    doc = _by_unique_attribute(index, type_name, qualified_name)
    return atlas.with_ext_info(doc, _flows(index, [doc]))


def entities_by_unique_attributes(index: SolrIndex, type_name: str, qualified_names: Sequence[str]) -> dict[str, Any]:
    """Atlas' AtlasEntitiesWithExtInfo of the elements of `type_name` named `qualified_names`, in
    their order; names navd does not hold are left out (as Atlas)."""
    if not qualified_names:
        raise UsageError("attr_0:qualifiedName: at least one qualifiedName (attr_0:qualifiedName, attr_1:...)")
    query = atlas.unique_attributes_query(type_name, qualified_names)
    docs = user_search(index, "elements", write(query, "attr_0:qualifiedName"), rows=len(qualified_names),
                       sort=_PAGE_ORDER, params={"defType": "lucene"})["response"]["docs"]
    by_name = {str(d["qualifiedName"]): display_document(d) for d in docs}
    return atlas.entities_with_ext_info([by_name[n] for n in dict.fromkeys(qualified_names) if n in by_name],
                                        _flows(index, by_name.values()))


def entities_by_guids(index: SolrIndex, guids: Sequence[str]) -> dict[str, Any]:
    """Atlas' AtlasEntitiesWithExtInfo of `guids`, in their order; AtlasNotFound for the first
    guid navd does not hold (as Atlas)."""
    if not guids:
        raise UsageError("guid: at least one guid")
    if len(guids) > MAX_BULK:
        raise UsageError(f"guid: at most {MAX_BULK} guids, got {len(guids)}")
    found = {str(d["identity"]): display_document(d) for d in index.get("elements", list(dict.fromkeys(guids)))}
    for guid in guids:
        if guid not in found:
            raise atlas.AtlasNotFound(atlas.GUID_NOT_FOUND, f"Given instance guid {shown(guid, 80)} is invalid/not found")
    return atlas.entities_with_ext_info([found[g] for g in dict.fromkeys(guids)], _flows(index, found.values()))


def lineage_info(index: SolrIndex, guid: str, direction: atlas.Direction, depth: int, max_nodes: int,
                 hubs: HubCache | None = None) -> dict[str, Any]:
    """Atlas' AtlasLineageInfo of the element whose identity is `guid`, walked `depth` hops in
    `direction` by navd's lineage (with operations: Atlas shows processes; with deleted entities:
    Atlas shows them marked DELETED; with column edges when the entity is a column)."""
    root = _doc(index, guid)
    return _lineage_of(index, root, direction, depth, max_nodes, hubs)


def lineage_by_unique_attribute(index: SolrIndex, type_name: str, qualified_name: str, direction: atlas.Direction,
                                depth: int, max_nodes: int, hubs: HubCache | None = None) -> dict[str, Any]:
    root = _by_unique_attribute(index, type_name, qualified_name)
    return _lineage_of(index, root, direction, depth, max_nodes, hubs)


def _lineage_of(index: SolrIndex, root: dict[str, Any], direction: atlas.Direction, depth: int, max_nodes: int,
                hubs: HubCache | None) -> dict[str, Any]:
    options = LineageOptions(direction=atlas.NAVD_DIRECTION[direction], depth=depth, operations=True, deleted=True,
                             columns=root.get("type") == ElementType.FIELD.value, max_nodes=max_nodes)
    identity = str(root["identity"])
    graph = lineage(index, identity, options, Scope(), hubs)
    docs = {str(d["identity"]): display_document(d) for d in index.get("elements", [n.id for n in graph.nodes])}
    return atlas.lineage_info(graph, docs, direction, depth)


def search(index: SolrIndex, search: atlas.Search, parameter: str = "query") -> tuple[list[dict[str, Any]], int]:
    """The elements `search` matches (its page) and how many match in all."""
    # `description` also searches what people wrote, as every search of navd's does
    body = user_search(index, "elements", write(widened(search.query), parameter), rows=search.limit,
                       start=search.offset,
                       sort=_PAGE_ORDER, params={"defType": "lucene"})
    return [display_document(d) for d in body["response"]["docs"]], int(body["response"]["numFound"])


def basic_search(index: SolrIndex, params: dict[str, Any]) -> dict[str, Any]:
    """Atlas' basic search (navd/atlas.py basic_search) as AtlasSearchResult."""
    asked = atlas.basic_search(params)
    docs, found = search(index, asked)
    return atlas.search_result(asked, docs, found, "BASIC", params.get("query"), params)


def dsl_search(index: SolrIndex, query: str, limit: object = None, offset: object = None) -> dict[str, Any]:
    """Atlas' DSL search, in the forms navd answers (navd/atlas.py dsl_search)."""
    asked = atlas.dsl_search(query, limit, offset)
    docs, found = search(index, asked)
    return atlas.search_result(asked, docs, found, "DSL", query)


def classifications(index: SolrIndex) -> dict[str, str | None]:
    """Atlas' classification types: every tag some entity has and every classification defined
    (name -> description)."""
    service = AnnotationService(index)
    return {**{name: None for name in service.tag_names()}, **service.classification_definitions()}


def typedefs(index: SolrIndex, category: str | None = None) -> dict[str, Any]:
    return atlas.typedefs(classifications(index) if category in (None, "classification") else {}, category)


def typedef_headers(index: SolrIndex, category: str | None = None) -> list[dict[str, Any]]:
    return atlas.typedef_headers(classifications(index) if category in (None, "classification") else {}, category)


def typedef_by_name(index: SolrIndex, name: str) -> dict[str, Any]:
    return atlas.typedef_by_name(name, classifications(index))


def create_typedefs(writer: SolrIndex, body: Any, actor: str) -> dict[str, Any]:
    """Atlas' POST (and PUT) types/typedefs: the classification definitions of `body` defined
    (a definition again replaces its description); answers them as Atlas' AtlasTypesDef."""
    wanted = atlas.classification_defs_body(body)
    service = AnnotationService(writer)
    defined = {service.define_classification(name, description, actor): description for name, description in wanted}
    return atlas.typedefs(defined, "classification")


def entity_classifications(index: SolrIndex, guid: str) -> dict[str, Any]:
    """Atlas' AtlasClassifications (a PList) of one entity."""
    found = atlas.classifications(_doc(index, guid))
    return {"list": found, "startIndex": 0, "pageSize": len(found), "totalCount": len(found),
            "sortType": "NONE"}


def add_classifications(writer: SolrIndex, guid: str, body: Any, actor: str) -> None:
    """Atlas' POST (and PUT) entity/guid/{guid}/classifications: each classification the tag of
    its name, with its attributes, written and recorded by the annotation service."""
    wanted = atlas.classifications_body(body)
    service = AnnotationService(writer)
    _doc(writer, guid)
    for name, attributes in wanted:
        service.add_classification(guid, name, attributes, actor)


def remove_classification(writer: SolrIndex, guid: str, name: str, actor: str) -> None:
    """Atlas' DELETE entity/guid/{guid}/classification/{name}: the tag and its attributes removed;
    a classification the entity does not have is a UsageError naming it (as Atlas' 400)."""
    service = AnnotationService(writer)
    _doc(writer, guid)
    if name not in service.get(guid).tags:
        raise UsageError(f"classification: {shown(name, 80)} is not associated with entity {shown(guid, 80)}")
    service.remove_classification(guid, name, actor)
