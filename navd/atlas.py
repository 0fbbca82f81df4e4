"""navd's elements in Apache Atlas' v2 vocabulary (docs/atlas-api.md): the type of each element,
an element as Atlas' entity and entity header, a lineage graph as Atlas' AtlasLineageInfo, and
the searches Atlas' clients send (basic search, the simple DSL forms) turned into navd's parsed
query tree (the type definitions and classification bodies: navd/atlas_typedefs.py). Pure: no I/O; navd/catalog/atlas.py reads, the routes
(navd/server/atlas_routes.py) translate requests.

The guid of an entity is navd's identity. Atlas' Hive model names entities as navd does
(`db@cluster`, `db.table@cluster`, `db.table.column@cluster`), so qualifiedName is navd's.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from navd.errors import EntityNotFound, UsageError
from navd.index.documents import endpoint_field, parse_solr_date
from navd.index.query_syntax import Clause, Group, Phrase, Query, Term, escape, parse
from navd.lineage.rules import LineageGraph, Node
from navd.model import ElementType, RelationType, SourceType
from navd.names import relation_identity, shown

# -- errors ---------------------------------------------------------------------------------------

#: Atlas' error codes (AtlasErrorCode) for what navd answers: an unknown guid, an unknown entity
#: by unique attribute, an unknown type name, a bad parameter
GUID_NOT_FOUND = "ATLAS-404-00-005"
UNIQUE_ATTRIBUTE_NOT_FOUND = "ATLAS-404-00-009"
TYPE_NOT_FOUND = "ATLAS-404-00-001"
BAD_REQUEST = "ATLAS-400-00-001"


class AtlasNotFound(EntityNotFound):
    """What an Atlas request names does not exist: 404 with Atlas' `errorCode`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


# -- types ----------------------------------------------------------------------------------------

#: Atlas' own type names where Atlas' models have one (the Hive, HDFS, Impala, Spark and AWS
#: models); every other (source type, element type) pair is `navd_<source>_<type>`.
_ATLAS_TYPES: Mapping[tuple[str, str], str] = {
    (SourceType.HIVE, ElementType.DATABASE): "hive_db",
    (SourceType.HIVE, ElementType.TABLE): "hive_table",
    (SourceType.HIVE, ElementType.VIEW): "hive_table",
    (SourceType.HIVE, ElementType.FIELD): "hive_column",
    (SourceType.HIVE, ElementType.OPERATION): "hive_process",
    (SourceType.HIVE, ElementType.OPERATION_EXECUTION): "hive_process_execution",
    (SourceType.IMPALA, ElementType.OPERATION): "impala_process",
    (SourceType.IMPALA, ElementType.OPERATION_EXECUTION): "impala_process_execution",
    (SourceType.SPARK, ElementType.OPERATION): "spark_process",
    (SourceType.SPARK, ElementType.OPERATION_EXECUTION): "spark_process_execution",
    (SourceType.HDFS, ElementType.DIRECTORY): "hdfs_path",
    (SourceType.HDFS, ElementType.FILE): "hdfs_path",
    (SourceType.S3, ElementType.DIRECTORY): "aws_s3_v2_directory",
    (SourceType.S3, ElementType.FILE): "aws_s3_v2_object",
}
#: the type of the process Atlas puts between two columns
COLUMN_LINEAGE_TYPE = "hive_column_lineage"
#: what navd's element types are in Atlas' type system: a process runs, a data set is read/written
PROCESS_TYPES = frozenset({ElementType.OPERATION.value, ElementType.OPERATION_EXECUTION.value})
DATASET_SUPERTYPE = "DataSet"
PROCESS_SUPERTYPE = "Process"


def atlas_type(source_type: str, element_type: str) -> str:
    """The Atlas type name of navd's elements of `source_type` and `element_type`."""
    return _ATLAS_TYPES.get((source_type, element_type)) or f"navd_{source_type.lower()}_{element_type.lower()}"


def _all_pairs() -> dict[str, tuple[tuple[str, str], ...]]:
    pairs: dict[str, list[tuple[str, str]]] = {}
    for source_type, element_type in itertools.product(SourceType, ElementType):
        pairs.setdefault(atlas_type(source_type.value, element_type.value), []).append(
            (source_type.value, element_type.value))
    return {name: tuple(found) for name, found in sorted(pairs.items())}


#: every Atlas type name navd answers -> the (source type, element type) pairs it stands for
ENTITY_TYPES: Mapping[str, tuple[tuple[str, str], ...]] = _all_pairs()
#: Atlas' abstract supertypes, which a search may name: every type under them (Hue's search box
#: asks for `Asset`, the supertype of both data sets and processes, when it filters by tag)
SUPERTYPES: Mapping[str, tuple[str, ...]] = {
    DATASET_SUPERTYPE: tuple(n for n, pairs in ENTITY_TYPES.items() if pairs[0][1] not in PROCESS_TYPES),
    PROCESS_SUPERTYPE: tuple(n for n, pairs in ENTITY_TYPES.items() if pairs[0][1] in PROCESS_TYPES),
    "Asset": tuple(ENTITY_TYPES),
    "Referenceable": tuple(ENTITY_TYPES),
}


def type_pairs(type_name: str, parameter: str = "typeName") -> tuple[tuple[str, str], ...]:
    """The (source type, element type) pairs of an Atlas type name (or supertype); UsageError
    naming `parameter` for a name navd does not serve (Atlas answers an unknown type with 400)."""
    if type_name in ENTITY_TYPES:
        return ENTITY_TYPES[type_name]
    if type_name in SUPERTYPES:
        return tuple(pair for name in SUPERTYPES[type_name] for pair in ENTITY_TYPES[name])
    raise UsageError(f"{parameter}: {shown(type_name, 80)} is not a type navd serves "
                     f"(GET /api/atlas/v2/types/typedefs lists them)")


def type_query(type_name: str, parameter: str = "typeName") -> Query:
    """Elements of `type_name` as a query tree: `(sourceType:S AND type:(T ...)) OR ...`."""
    by_source: dict[str, list[str]] = {}
    for source_type, element_type in type_pairs(type_name, parameter):
        by_source.setdefault(source_type, []).append(element_type)
    clauses: list[Clause] = []
    for source_type, element_types in sorted(by_source.items()):
        types = Query(tuple(Clause(_term(t), conjunction="OR" if i else None) for i, t in enumerate(element_types)))
        pair = Query((Clause(_term(source_type), field="sourceType"),
                      Clause(Group(types), field="type", conjunction="AND")))
        clauses.append(Clause(Group(pair), conjunction="OR" if clauses else None))
    return Query(tuple(clauses))


def _term(value: str) -> Term:
    return Term("term", escape(value))


def type_of_doc(doc: Mapping[str, Any]) -> str:
    return atlas_type(str(doc.get("sourceType", "")), str(doc.get("type", "")))


# -- entities -------------------------------------------------------------------------------------

def epoch_millis(value: Any) -> int | None:
    """A stored Solr date (`2026-11-28T10:00:00.000Z`) as Atlas' epoch milliseconds."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return int(parse_solr_date(value).timestamp() * 1000)
    except ValueError:
        return None


def _cluster_of(qualified_name: str) -> str | None:
    head, sep, cluster = qualified_name.rpartition("@")
    return cluster if sep and head else None


def _reference(guid: str | None, type_name: str, qualified_name: str | None) -> dict[str, Any] | None:
    """Atlas' AtlasObjectId: how one entity names another in its attributes."""
    if not guid:
        return None
    return {"guid": guid, "typeName": type_name, "uniqueAttributes": {"qualifiedName": qualified_name}}


def _parent_type(doc: Mapping[str, Any]) -> str:
    source_type = str(doc.get("sourceType", ""))
    parent = {ElementType.FIELD.value: ElementType.TABLE.value, ElementType.TABLE.value: ElementType.DATABASE.value,
              ElementType.VIEW.value: ElementType.DATABASE.value}.get(str(doc.get("type")), ElementType.DIRECTORY.value)
    return atlas_type(source_type, parent)


def _annotations(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """What people wrote on the element, as display_document shows it (navd/annotations)."""
    found = doc.get("annotations")
    return found if isinstance(found, Mapping) else {}


def classifications(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The element's tags as Atlas' classifications, with the attributes they were given."""
    annotation = _annotations(doc)
    attributes = annotation.get("classificationAttributes") or {}
    return [{"typeName": tag, "attributes": dict(attributes.get(tag) or {}), "entityGuid": doc.get("identity"),
             "entityStatus": status(doc), "propagate": False}
            for tag in annotation.get("tags") or ()]


def status(doc: Mapping[str, Any]) -> Literal["ACTIVE", "DELETED"]:
    return "DELETED" if doc.get("deleted") else "ACTIVE"


def _properties(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    found = doc.get("properties")
    return found if isinstance(found, Mapping) else {}


def _table_type(element_type: str, hive_type: Any) -> str:
    """Atlas' `tableType` (Hive's enum: MANAGED_TABLE, EXTERNAL_TABLE, VIRTUAL_VIEW) of the
    metastore's `Type` (MANAGED, EXTERNAL, VIEW) navd keeps."""
    if element_type == ElementType.VIEW.value or hive_type == "VIEW":
        return "VIRTUAL_VIEW"
    return f"{hive_type}_TABLE" if hive_type in ("MANAGED", "EXTERNAL") else "MANAGED_TABLE"


def attributes(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The Atlas attributes of an element: those of Atlas' model for its type that navd knows."""
    annotation = _annotations(doc)
    qualified_name = str(doc.get("qualifiedName", ""))
    element_type = str(doc.get("type", ""))
    found: dict[str, Any] = {
        "qualifiedName": qualified_name,
        "name": annotation.get("name") or doc.get("originalName"),
        "description": annotation.get("description") or doc.get("description"),
        "owner": doc.get("owner"),
        "createTime": epoch_millis(doc.get("created")),
    }
    parent = _reference(doc.get("parentId"), _parent_type(doc), doc.get("parentQualifiedName"))
    if element_type in (ElementType.TABLE.value, ElementType.VIEW.value):
        found["db"] = parent
        found["tableType"] = _table_type(element_type, _properties(doc).get("tableType"))
        found["lastAccessTime"] = epoch_millis(doc.get("lastAccessed"))
    elif element_type == ElementType.FIELD.value:
        found["table"] = parent
        found["type"] = doc.get("dataType")
        position = _properties(doc).get("position")
        found["position"] = int(position) if isinstance(position, str) and position.isdigit() else None
    elif element_type in (ElementType.DIRECTORY.value, ElementType.FILE.value):
        found["path"] = doc.get("fileSystemPath") or qualified_name
        found["isFile"] = element_type == ElementType.FILE.value
        found["fileSize"] = doc.get("size")
        found["group"] = doc.get("group")
        found["posixPermissions"] = doc.get("permissions")
        found["modifiedTime"] = epoch_millis(doc.get("lastModified"))
        found["numberOfReplicas"] = doc.get("replication")
    elif element_type in PROCESS_TYPES:
        found["queryText"] = doc.get("queryText")
        found["userName"] = doc.get("principal")
        found["startTime"] = epoch_millis(doc.get("started"))
        found["endTime"] = epoch_millis(doc.get("ended"))
    cluster = _cluster_of(qualified_name)
    if cluster and doc.get("sourceType") == SourceType.HIVE.value:
        found["clusterName"] = cluster
    return found


def is_process(doc: Mapping[str, Any]) -> bool:
    return doc.get("type") in PROCESS_TYPES


@dataclasses.dataclass(frozen=True)
class Flows:
    """What a process read and wrote, as Atlas object ids (its `inputs` and `outputs`)."""

    inputs: tuple[dict[str, Any], ...] = ()
    outputs: tuple[dict[str, Any], ...] = ()


def process_flows(processes: Iterable[str], relation_docs: Iterable[Mapping[str, Any]]) -> dict[str, Flows]:
    """The data sets each of `processes` read (DATA_FLOW into it) and wrote (DATA_FLOW out of
    it), from the stored relation documents; columns are left out (their flows are column
    lineage). Each end as the relation names it: a data set no extractor indexed has one too."""
    wanted = set(processes)
    inputs: dict[str, dict[str, dict[str, Any]]] = {}
    outputs: dict[str, dict[str, dict[str, Any]]] = {}
    for doc in relation_docs:
        if doc.get("type") != RelationType.DATA_FLOW.value:
            continue
        ends = {end: (str(doc.get(endpoint_field(end, "Id"), "")), str(doc.get(endpoint_field(end, "Type"), "")),
                      str(doc.get(endpoint_field(end, "SourceType"), "")),
                      doc.get(endpoint_field(end, "QualifiedName"))) for end in (1, 2)}
        for near, far, found in ((2, 1, inputs), (1, 2, outputs)):
            near_id = ends[near][0]
            far_id, far_type, far_source, far_name = ends[far]
            if near_id in wanted and far_type != ElementType.FIELD.value:
                reference = _reference(far_id, atlas_type(far_source, far_type), far_name)
                if reference is not None:
                    found.setdefault(near_id, {})[far_id] = reference
    return {p: Flows(tuple(v for _, v in sorted(inputs.get(p, {}).items())),
                     tuple(v for _, v in sorted(outputs.get(p, {}).items()))) for p in wanted}


def entity(doc: Mapping[str, Any], flows: Flows | None = None) -> dict[str, Any]:
    """Atlas' AtlasEntity of an element document (display_document's form); a process with
    its `flows` as its `inputs` and `outputs`."""
    annotation = _annotations(doc)
    shown_attributes = attributes(doc)
    if flows is not None:
        shown_attributes.update(inputs=list(flows.inputs), outputs=list(flows.outputs))
    return {
        "typeName": type_of_doc(doc),
        "guid": doc.get("identity"),
        "status": status(doc),
        "attributes": shown_attributes,
        "classifications": classifications(doc),
        "createTime": epoch_millis(doc.get("created")),
        "updateTime": epoch_millis(doc.get("lastModified")),
        "version": 0,
        "relationshipAttributes": {},
        "customAttributes": dict(annotation.get("properties") or {}),
        "businessAttributes": {ns: dict(values) for ns, values in (annotation.get("customProperties") or {}).items()},
        "labels": [],
    }


def entity_header(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Atlas' AtlasEntityHeader: what searches and lineage list of an entity."""
    found = attributes(doc)
    tags = classifications(doc)
    return {
        "typeName": type_of_doc(doc),
        "guid": doc.get("identity"),
        "status": status(doc),
        "displayText": found.get("name") or found["qualifiedName"],
        "attributes": {key: found.get(key) for key in ("qualifiedName", "name", "description", "owner", "createTime")},
        "classificationNames": [c["typeName"] for c in tags],
        "classifications": tags,
        "meaningNames": [],
        "meanings": [],
        "labels": [],
        "isIncomplete": False,
    }


def with_ext_info(doc: Mapping[str, Any], flows: Mapping[str, Flows] | None = None) -> dict[str, Any]:
    """Atlas' AtlasEntityWithExtInfo of one entity (`flows`: of the processes among them)."""
    return {"entity": entity(doc, (flows or {}).get(str(doc.get("identity")))), "referredEntities": {}}


def entities_with_ext_info(docs: Iterable[Mapping[str, Any]], flows: Mapping[str, Flows] | None = None
                           ) -> dict[str, Any]:
    """Atlas' AtlasEntitiesWithExtInfo."""
    return {"entities": [entity(d, (flows or {}).get(str(d.get("identity")))) for d in docs], "referredEntities": {}}


# -- lineage --------------------------------------------------------------------------------------

Direction = Literal["INPUT", "OUTPUT", "BOTH"]
#: Atlas' lineage direction -> navd's
NAVD_DIRECTION: Mapping[str, Literal["upstream", "downstream", "both"]] = {
    "INPUT": "upstream", "OUTPUT": "downstream", "BOTH": "both"}
#: the edges of navd's graph that are lineage in Atlas': what data is made from. The others place
#: an execution in its application or under its template, or (CONTROL_FLOW) say that a column
#: filtered or joined rows, which Atlas' column lineage has no dependency type for.
_FLOW_EDGES = frozenset({RelationType.DATA_FLOW.value, RelationType.LOGICAL_PHYSICAL.value})


def _node_doc(node: Node) -> dict[str, Any]:
    return {"identity": node.id, "qualifiedName": node.qualified_name, "sourceType": node.source_type,
            "type": node.type, "originalName": node.name, "deleted": node.deleted}


def lineage_info(graph: LineageGraph, docs: Mapping[str, Mapping[str, Any]], direction: Direction,
                 depth: int) -> dict[str, Any]:
    """navd's lineage graph (walked with operations) as Atlas' AtlasLineageInfo. An execution is
    shown as its operation (Atlas' process) when the graph places it under one; a column edge
    becomes a `hive_column_lineage` process between the two columns, with Atlas' (misspelt)
    `depenendencyType` and the `expression`. `docs`: the stored documents of the nodes, for
    their classifications and attributes (a node without one is shown from the graph)."""
    nodes = {n.id: n for n in graph.nodes}
    template_of = {e.target: e.source for e in graph.edges
                   if e.type == RelationType.INSTANCE_OF.value and e.source in nodes}

    def shown_as(node_id: str) -> str:
        return template_of.get(node_id, node_id)

    guid_entity_map: dict[str, dict[str, Any]] = {}

    def put(node_id: str) -> None:
        if node_id not in guid_entity_map and node_id in nodes:
            guid_entity_map[node_id] = entity_header(docs.get(node_id) or _node_doc(nodes[node_id]))

    relations: dict[tuple[str, str], dict[str, Any]] = {}

    def relate(source: str, target: str) -> None:
        if source != target and (source, target) not in relations:
            relations[(source, target)] = {"fromEntityId": source, "toEntityId": target,
                                           "relationshipId": relation_identity("lineage", source, target)}

    put(graph.root)
    for edge in graph.edges:
        if edge.type not in _FLOW_EDGES:
            continue
        source, target = shown_as(edge.source), shown_as(edge.target)
        column_edge = nodes.get(edge.source) is not None and nodes[edge.source].type == ElementType.FIELD.value \
            and nodes.get(edge.target) is not None and nodes[edge.target].type == ElementType.FIELD.value
        put(source)
        put(target)
        if not column_edge:
            relate(source, target)
            continue
        process = column_lineage_header(nodes[edge.source], nodes[edge.target], edge.dependency_type, edge.expression)
        guid_entity_map.setdefault(process["guid"], process)
        relate(source, process["guid"])
        relate(process["guid"], target)
    return {"baseEntityGuid": graph.root, "lineageDirection": direction, "lineageDepth": depth,
            "guidEntityMap": guid_entity_map, "relations": list(relations.values()),
            "relationsOnDemand": {}, "lineageOnDemandPayload": {}}


def column_lineage_header(source: Node, target: Node, dependency_type: str | None,
                          expression: str | None) -> dict[str, Any]:
    """The `hive_column_lineage` process Atlas shows between two columns: its guid is a function
    of the two columns' identities, its qualifiedName Atlas' `<target column>:<source column>`."""
    guid = relation_identity(COLUMN_LINEAGE_TYPE, source.id, target.id)
    qualified_name = f"{target.qualified_name}:{source.qualified_name}"
    return {"typeName": COLUMN_LINEAGE_TYPE, "guid": guid, "status": "ACTIVE", "displayText": qualified_name,
            "attributes": {"qualifiedName": qualified_name, "name": qualified_name,
                           "inputs": [_reference(source.id, atlas_type(source.source_type, source.type),
                                                 source.qualified_name)],
                           "outputs": [_reference(target.id, atlas_type(target.source_type, target.type),
                                                  target.qualified_name)],
                           # Atlas' Hive model spells the attribute so
                           "depenendencyType": dependency_type or "SIMPLE", "expression": expression},
            "classificationNames": [], "classifications": [], "meaningNames": [], "meanings": [], "labels": [],
            "isIncomplete": False}


# -- searches -------------------------------------------------------------------------------------

#: Atlas' attributes a search may filter on -> navd's fields
_SEARCH_FIELDS: Mapping[str, str] = {"qualifiedName": "qualifiedName", "name": "originalName", "owner": "owner",
                                     "description": "description", "__guid": "identity"}
MAX_LIMIT = 1000
DEFAULT_LIMIT = 100


@dataclasses.dataclass(frozen=True)
class Search:
    """An Atlas search as navd runs it: the query tree (parsed, never concatenated text) and the
    page."""

    query: Query
    offset: int
    limit: int
    #: the type name searched (Atlas' searchParameters / DSL answer name it)
    type_name: str | None


def all_of(*queries: Query | None) -> Query:
    """The queries (None and empty ones left out) AND-ed, each grouped; one: itself; none:
    every element."""
    present = [q for q in queries if q is not None and q.clauses]
    if len(present) == 1:
        return present[0]
    clauses = tuple(Clause(Group(q), conjunction="AND" if n else None) for n, q in enumerate(present))
    return Query(clauses) if clauses else parse("*:*")


def unique_attribute_query(type_name: str, qualified_name: str) -> Query:
    """The element of `type_name` whose qualifiedName is `qualified_name` (Atlas' unique attribute)."""
    return all_of(type_query(type_name, "type"), _field_match("qualifiedName", qualified_name, "="))


def unique_attributes_query(type_name: str, qualified_names: Sequence[str]) -> Query:
    """The elements of `type_name` whose qualifiedName is one of `qualified_names`."""
    names = Query(tuple(Clause(Group(_field_match("qualifiedName", name, "=")), conjunction="OR" if i else None)
                        for i, name in enumerate(qualified_names)))
    return all_of(type_query(type_name, "type"), names)


def _field_match(field: str, value: str, operator: str) -> Query:
    """`field` equal to / like (Atlas' `*` and `?` wildcards) / containing `value`."""
    if operator in ("=", "eq"):
        return Query((Clause(Phrase(_phrase(value)), field=field),))
    if not value:
        raise UsageError(f"{field}: an empty value matches nothing navd holds")
    if operator == "like":
        # the text between Atlas' wildcards escaped as one run (a whole `AND` stays a term)
        image = "".join(part if part in ("*", "?") else escape(part) for part in re.split(r"([*?])", value) if part)
    elif operator in ("startsWith", "endsWith", "contains"):
        image = ("*" if operator in ("endsWith", "contains") else "") + escape(value) + \
            ("*" if operator in ("startsWith", "contains") else "")
    else:
        image = ""
    if image:
        # the escaped pattern parsed as one term: the parse says whether it is a prefix, a
        # wildcard or `*`, as Solr will read it
        term = parse(image, "query").clauses
        if len(term) != 1:
            raise UsageError(f"{field}: {shown(value, 40)} is not one pattern")
        return Query((Clause(term[0].node, field=field),))
    raise UsageError(f"operator: {shown(operator, 40)} is not supported (use =, like, startsWith, endsWith, contains)")


def _phrase(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _search_field(attribute: str, parameter: str) -> str:
    field = _SEARCH_FIELDS.get(attribute)
    if field is None:
        raise UsageError(f"{parameter}: {shown(attribute, 40)} is not an attribute navd searches "
                         f"(use {', '.join(_SEARCH_FIELDS)})")
    return field


#: what a term of basic search's `query` without a field searches besides the catch-all field
#: (whose words are split at every `_`, `.`, `-`, so Hue's `orders_2026*` finds nothing there):
#: the whole name, display name and tags, as one lower-cased term each
_FULL_TEXT_FIELDS = ("originalName", "displayName", "tags")


def full_text(query: Query) -> Query:
    """Atlas' full-text `query`: each term or phrase without a field searched in the catch-all
    field or any of _FULL_TEXT_FIELDS (`orders*` -> `(orders* OR originalName:orders* OR ...)`);
    fielded clauses as written, groups rewritten inside."""
    clauses: list[Clause] = []
    for clause in query.clauses:
        if clause.field is None and isinstance(clause.node, Group):
            clause = dataclasses.replace(clause, node=dataclasses.replace(clause.node, query=full_text(clause.node.query)))
        elif clause.field is None and isinstance(clause.node, (Term, Phrase)) and not (
                isinstance(clause.node, Term) and clause.node.kind in ("bare", "star")):
            alternatives = (Clause(clause.node),) + tuple(
                Clause(clause.node, field=field, conjunction="OR") for field in _FULL_TEXT_FIELDS)
            clause = dataclasses.replace(clause, node=Group(Query(alternatives)))
        clauses.append(clause)
    return Query(tuple(clauses))


def check_limit(value: object, parameter: str = "limit", default: int = DEFAULT_LIMIT) -> int:
    return bounded_int(value, parameter, 1, MAX_LIMIT, default)


def check_offset(value: object, parameter: str = "offset") -> int:
    return bounded_int(value, parameter, 0, 100_000, 0)


def bounded_int(value: object, parameter: str, low: int, high: int, default: int) -> int:
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        raise UsageError(f"{parameter}: a whole number {low}..{high}, not {value}")
    try:
        number = int(str(value).strip())
    except ValueError:
        raise UsageError(f"{parameter}: a whole number {low}..{high}, not {shown(str(value), 40)}") from None
    if not low <= number <= high:
        raise UsageError(f"{parameter}: {number} is out of range {low}..{high}")
    return number


def check_bool(value: object, parameter: str, default: bool) -> bool:
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise UsageError(f"{parameter}: true or false, not {shown(str(value), 40)}")


def basic_search(params: Mapping[str, Any]) -> Search:
    """Atlas' basic search (GET query parameters or the POST body SearchParameters): `typeName`,
    `classification`, `query` (Solr syntax, parsed by navd), `entityFilters` on qualifiedName,
    name, owner, description, `excludeDeletedEntities`, `offset`, `limit`."""
    type_name = params.get("typeName")
    if type_name is not None and not isinstance(type_name, str):
        raise UsageError("typeName: a type name")
    classification = params.get("classification")
    if classification is not None and not isinstance(classification, str):
        raise UsageError("classification: a classification name")
    text = params.get("query")
    if text is not None and not isinstance(text, str):
        raise UsageError("query: text")
    exclude_deleted = check_bool(params.get("excludeDeletedEntities"), "excludeDeletedEntities", False)
    # what would change the answer and navd cannot do; other SearchParameters keys (the
    # `attributes` to show, includeSubTypes...) change nothing navd answers
    for unsupported in ("sortBy", "sortOrder", "tagFilters", "termName"):
        if params.get(unsupported):
            raise UsageError(f"{unsupported}: not supported by navd's basic search"
                             + (" (answers are ordered by guid)" if unsupported.startswith("sort") else ""))
    parts: list[Query | None] = [
        type_query(type_name) if type_name and type_name not in ("_ALL_ENTITY_TYPES",) else None,
        full_text(parse(text, "query")) if text and text.strip() not in ("", "*") else None,
    ]
    if classification and classification not in ("_ALL_CLASSIFICATION_TYPES", "*"):
        parts.append(Query((Clause(Term("term", escape(classification)), field="tags"),)))
    elif classification:
        parts.append(Query((Clause(Term("star", "*"), field="tags"),)))
    if exclude_deleted:
        parts.append(Query((Clause(Term("term", "false"), field="deleted"),)))
    parts.append(entity_filters(params.get("entityFilters")))
    return Search(all_of(*parts), check_offset(params.get("offset")), check_limit(params.get("limit")),
                  type_name if isinstance(type_name, str) else None)


def entity_filters(filters: Any, parameter: str = "entityFilters") -> Query | None:
    """Atlas' FilterCriteria: `{attributeName, operator, attributeValue}` or `{condition: AND|OR,
    criterion: [...]}`."""
    if filters is None:
        return None
    if not isinstance(filters, Mapping):
        raise UsageError(f"{parameter}: an object {{attributeName, operator, attributeValue}} or "
                         f"{{condition, criterion}}")
    if "criterion" in filters:
        condition = str(filters.get("condition") or "AND").upper()
        if condition not in ("AND", "OR"):
            raise UsageError(f"{parameter}: condition {shown(condition, 20)} is not AND or OR")
        criteria = filters.get("criterion")
        if not isinstance(criteria, list) or not criteria or len(criteria) > 20:
            raise UsageError(f"{parameter}: criterion is a list of 1..20 filters")
        queries = [q for q in (entity_filters(c, parameter) for c in criteria) if q is not None]
        return Query(tuple(Clause(Group(q), conjunction=condition if i else None) for i, q in enumerate(queries)))
    attribute, operator, value = (filters.get("attributeName"), filters.get("operator"),
                                  filters.get("attributeValue"))
    if not isinstance(attribute, str) or not isinstance(operator, str) or not isinstance(value, str):
        raise UsageError(f"{parameter}: attributeName, operator and attributeValue are text")
    field = _search_field(attribute, f"{parameter}: attributeName")
    try:
        return _field_match(field, value, operator)
    except UsageError as exc:
        raise UsageError(f"{parameter}: {exc}") from None


# Atlas' DSL, the forms Hue and the clients send:
#   TYPE | from TYPE
#   TYPE where ATTRIBUTE = 'value' | "value"   (also `like 'pattern*'`, `and`/`or` between conditions)
#   ... limit N [offset M]
_DSL_TOKEN = re.compile(r"""\s*(?:(?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(?P<op>=|!=)|(?P<word>[A-Za-z_][\w.]*)|(?P<number>\d+)|(?P<other>\S))""")


def _dsl_tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        match = _DSL_TOKEN.match(text, position)
        if match is None:
            break
        position = match.end()
        kind = match.lastgroup or "other"
        value = match.group(kind)
        if kind == "other":
            raise UsageError(f"query: {shown(value, 10)} at character {match.start(kind) + 1} is not part of "
                             f"the DSL navd answers (TYPE [where ATTRIBUTE = 'value' | like 'pattern'] [limit N])")
        if kind == "string":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        tokens.append((kind, value))
    return tokens


def dsl_search(text: str, limit: object = None, offset: object = None) -> Search:
    """Atlas' DSL query `text` in the forms Hue and Atlas' clients send; anything else a
    UsageError naming what is not supported."""
    if len(text) > 2000:
        raise UsageError(f"query: at most 2000 characters, got {len(text)}")
    tokens = _dsl_tokens(text)
    position = 0

    def peek() -> tuple[str, str] | None:
        return tokens[position] if position < len(tokens) else None

    def take(expected: str) -> str:
        nonlocal position
        token = peek()
        if token is None or token[0] != expected:
            found = "the end" if token is None else shown(token[1], 40)
            raise UsageError(f"query: expected {'a type name' if expected == 'word' else expected} at {found}")
        position += 1
        return token[1]

    def keyword(word: str) -> bool:
        nonlocal position
        token = peek()
        if token is not None and token[0] == "word" and token[1].lower() == word:
            position += 1
            return True
        return False

    if not tokens:
        raise UsageError("query: empty: name a type (`hive_table where name = 'orders'`)")
    keyword("from")
    type_name = take("word")
    conditions: list[Query] = [type_query(type_name, "query")]
    if keyword("where"):
        # `and` binds tighter than `or`, as in Atlas' DSL: a list of alternatives, each a list of
        # conditions that must all hold
        alternatives: list[list[Query]] = [[]]
        while True:
            attribute = take("word")
            field = _search_field(attribute, "query")
            token = peek()
            if token is not None and token[0] == "op" and token[1] == "=":
                position += 1
                operator = "="
            elif keyword("like"):
                operator = "like"
            else:
                raise UsageError(f"query: after {shown(attribute, 40)} navd answers = or like, not "
                                 f"{'the end' if token is None else shown(token[1], 40)}")
            alternatives[-1].append(_field_match(field, take("string"), operator))
            if keyword("or"):
                alternatives.append([])
            elif not keyword("and"):
                break
        conditions.append(all_of(*alternatives[0]) if len(alternatives) == 1 else Query(tuple(
            Clause(Group(all_of(*conjunction)), conjunction="OR" if n else None)
            for n, conjunction in enumerate(alternatives))))
    if keyword("limit"):
        limit = take("number")
        if keyword("offset"):
            offset = take("number")
    token = peek()
    if token is not None:
        raise UsageError(f"query: {shown(token[1], 40)} is not supported by navd's DSL "
                         f"(TYPE [where ATTRIBUTE = 'value' | like 'pattern' [and|or ...]] [limit N [offset M]])")
    return Search(all_of(*conditions), check_offset(offset), check_limit(limit), type_name)


def search_result(search: Search, docs: Sequence[Mapping[str, Any]], found: int, query_type: str,
                  query_text: str | None, parameters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Atlas' AtlasSearchResult."""
    answer: dict[str, Any] = {"queryType": query_type, "queryText": query_text,
                              "entities": [entity_header(d) for d in docs], "approximateCount": found}
    if search.type_name:
        answer["type"] = search.type_name
    if parameters is not None:
        answer["searchParameters"] = dict(parameters)
    return answer
