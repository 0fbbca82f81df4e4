"""Cloudera Navigator's API vocabulary, pure: navd's stored element and relation documents as
Navigator's entity and relation JSON, Navigator's entity and relation queries as navd's Solr
queries, the SOURCE entities (derived from the elements: `source_of`, `source_match`) and the
queries over them, the interactive search's request, and the checks of the API's paging and
lineage parameters. No I/O: navd/catalog/navigator.py fetches, the HTTP
routes (navd/server/navigator_routes.py) parse and answer. docs/navigator-api.md says which
names were checked against Navigator's published API and clients and which are inferred.

navd's documents already use Navigator's field names (documents.py), so most of the mapping is
the identity; what differs:
- Navigator's `parentPath` of a Hive table is `/db`, of a column or partition `/db/table`; navd
  stores `parentPath` only for files and directories, a Hive element's place is in its
  qualified name (`db.table.column@cluster`). Entities get the Navigator spelling, and a query
  on `parentPath` also matches the Hive elements under the path it names.
- Navigator's user-managed metadata (`name`, `description`, `tags`, `properties`,
  `customProperties`) is navd's annotations (navd/annotations), copied onto the element
  document; the properties an extractor found are `technicalProperties`, the description it
  found `originalDescription`. A query on `name`, `description`, `tags` searches what people
  wrote, on `up_<key>` a user or an extracted property, on `namespace.key` a custom property.
- Relations name each end's ids as a list (`endpoint1Ids`), navd stores one id per end.
- Hue sends a bare type name as a clause (`FIELD AND (sourceType:HIVE)...`): on navd it also
  matches the type.
- S3 entities (sourceType S3; types S3BUCKET, DIRECTORY, FILE) carry Navigator's `bucketName`,
  `eTag` and `implicit` as fields; navd keeps them as properties.
"""

from __future__ import annotations

import dataclasses
import enum
import fnmatch
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from navd.annotations import rules as annotation_rules
from navd.errors import UsageError
from navd.index import query_syntax
from navd.index.documents import display_document
from navd.index.query_syntax import Clause, Group, Node, Phrase, Query, Range, Term
from navd.model import ElementType, SourceType
from navd.names import parse_hive_name, source_identity

#: Navigator's API versions navd answers under /api/v{N}/ (Hue pins v9, the last is v19).
VERSIONS = range(9, 20)
#: GET entities without `limit` (inferred: the default of Navigator's API console).
DEFAULT_LIMIT = 100
#: The largest page: a page is one Solr response held in memory.
MAX_LIMIT = 10_000
#: The deepest `offset`: Solr sorts offset+limit documents for each offset page; deeper paging
#: goes through POST entities/paging (cursorMark), which costs the same on every page.
MAX_OFFSET = 100_000
#: entityIds per lineage request: each is its own walk of the graph.
MAX_LINEAGE_IDS = 50
#: The cursorMark of a first page (Solr's and Navigator's).
FIRST_CURSOR = "*"

#: A query that matches nothing: what a field navd does not keep stands for.
_MATCH_NOTHING = "*:* -*:*"
NOTHING = f"({_MATCH_NOTHING})"
#: Navigator fields whose value navd has another name for.
_RENAMED = {"srcId": "sourceId", "originalDescription": "description"}
#: Navigator's user-managed fields, on the fields navd copies annotations to (navd/annotations).
#: (Navigator's `description` is the person's; the extractor's is `originalDescription`.)
_USER_MANAGED: Mapping[str, str] = {"name": annotation_rules.NAME_FIELD, "tags": annotation_rules.TAGS_FIELD,
                                    "description": annotation_rules.DESCRIPTION_FIELD}
#: Fields whose values are navd's upper-case enum names (`type:table` means `type:TABLE`).
_ENUM_FIELDS = frozenset({"type", "sourceType"})
_USER_PROPERTY_PREFIX, _NAVD_PROPERTY_PREFIX = "up_", "prop_"
#: Navigator's field of a source's cluster (Hue sends `clusterName:"..."` to find its sources)
CLUSTER_NAME = "clusterName"
_SOURCE_ID_FIELDS = frozenset({"sourceId", "srcId"})
#: the package of every entity's meta class (Navigator's built-in classes are in `nav`)
PACKAGE_NAME = "nav"
_PARENT_PATH = "parentPath"
#: a custom property (Navigator's managed metadata) named in a query: `namespace.key`
_CUSTOM_PROPERTY = re.compile(r"[A-Za-z][A-Za-z0-9_]*\.[A-Za-z0-9_][A-Za-z0-9_.\-]*")

#: What a bare term may name to also match the type (`FIELD AND ...`).
_TYPE_NAMES = frozenset(t.value for t in ElementType)
_HIVE_TABLE_TYPES = (ElementType.TABLE.value, ElementType.VIEW.value)
_HIVE_CHILD_TYPES = (ElementType.FIELD.value, ElementType.PARTITION.value)


# -- documents -> Navigator JSON ----------------------------------------------------------------

#: Element fields shown under the same name (Navigator's, as documents.py stores them).
_SAME_NAME = ("identity", "originalName", "sourceId", "sourceType", "type", "fileSystemPath", "deleted",
              "deleteTime", "extractorRunId", "owner", "group", "permissions", "size", "blockSize",
              "replication", "created", "lastModified", "lastAccessed", "started", "ended", "principal",
              "queryText", "dataType", "internalType")
#: navd's own fields, kept in the entity (a Navigator client ignores keys it does not know).
_NAVD_EXTRAS = ("qualifiedName", "parentId", "parentQualifiedName")
#: S3 entities' fields in Navigator, properties in navd.
_S3_FIELDS = ("bucketName", "eTag", "implicit")


def entity(doc: Mapping[str, Any], cluster: str = "") -> dict[str, Any]:
    """An element document as Navigator's entity JSON; `cluster` (`[cluster] name`) names the
    sources that are one per cluster (`source_of`)."""
    shown = display_document(doc)
    out: dict[str, Any] = {field: shown.get(field) for field in _SAME_NAME}
    out["sourceId"] = source_of(shown, cluster).identity
    out["metaClassName"] = meta_class_name(str(shown.get("sourceType", "")), str(shown.get("type", "")))
    out["packageName"] = PACKAGE_NAME
    out["deleted"] = bool(shown.get("deleted", False))
    out["parentPath"] = parent_path(shown)
    out["originalDescription"] = shown.get("description")
    # user-managed in Navigator: what people wrote (navd/annotations); null when nobody did
    annotation = annotation_rules.stored_annotation(doc)
    out["name"] = annotation.display_name if annotation else None
    out["description"] = annotation.description if annotation else None
    out["tags"] = list(annotation.tags) if annotation and annotation.tags else None
    out["userEntity"] = False
    out["properties"] = dict(annotation.properties) if annotation else {}
    out["customProperties"] = annotation.custom_by_namespace() if annotation else {}
    out["technicalProperties"] = shown.get("properties") or {}
    out["firstClassParentId"] = shown.get("parentId") if shown.get("type") in _HIVE_CHILD_TYPES else None
    out.update({field: shown[field] for field in _NAVD_EXTRAS if field in shown})
    if shown.get("sourceType") == SourceType.S3.value:
        technical = out["technicalProperties"]
        out.update({field: technical[field] for field in _S3_FIELDS if field in technical})
        if "implicit" in out:
            out["implicit"] = out["implicit"] == "true"
    return out


def parent_path(doc: Mapping[str, Any]) -> str | None:
    """Navigator's parentPath: the stored one of a file or directory; `/db` for a Hive table or
    view, `/db/table` for a column or partition. The Hive ones come from the element's own
    qualified name, so a stub (which knows no parent) has one too."""
    if doc.get("parentPath"):
        return str(doc["parentPath"])
    if doc.get("sourceType") != SourceType.HIVE.value:
        return None
    name = parse_hive_name(str(doc.get("qualifiedName", "")))
    if name is None or name.table is None:
        return None
    if doc.get("type") in _HIVE_TABLE_TYPES:
        return f"/{name.database}"
    if doc.get("type") in _HIVE_CHILD_TYPES:
        return f"/{name.database}/{name.table}"
    return None


def relation(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A relation document as Navigator's relation JSON (endpoint ids as lists, as Navigator's
    relations may have several elements at one end)."""
    shown = display_document(doc)
    out: dict[str, Any] = {"identity": shown["identity"], "type": shown.get("type")}
    for end in (1, 2):
        out[f"endpoint{end}Ids"] = [shown[f"endpoint{end}Id"]] if shown.get(f"endpoint{end}Id") else []
        out[f"endpoint{end}SourceType"] = shown.get(f"endpoint{end}SourceType")
        out[f"endpoint{end}Type"] = shown.get(f"endpoint{end}Type")
    out["unlinked"] = bool(shown.get("unlinked", False))
    out["extractorRunId"] = shown.get("extractorRunId")
    out["userSpecified"] = False
    out["properties"] = shown.get("properties") or {}
    # navd's column lineage detail (Atlas' vocabulary), absent from Navigator's relations
    for field in ("dependencyType", "expression"):
        if field in shown:
            out[field] = shown[field]
    return out


def placeholder(identity: str, qualified_name: str, type_: str, source_type: str, name: str) -> dict[str, Any]:
    """An entity a relation names that no extractor indexed (Navigator draws a placeholder)."""
    return {"identity": identity, "originalName": name, "type": type_, "sourceType": source_type,
            "deleted": False, "qualifiedName": qualified_name, "unlinked": True}


# -- Navigator queries -> navd queries -----------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class QueryContext:
    """What a query's `clusterName` and `sourceId` clauses are read against: navd's `[cluster]
    name` and the sources by identity (`sources_by_identity`). Empty: `clusterName` matches
    nothing and `sourceId` only the stored field."""

    cluster: str = ""
    sources: Mapping[str, Source] = dataclasses.field(default_factory=dict)


def translate_query(query: str, parameter: str = "query", context: QueryContext | None = None) -> str:
    """Navigator's entity query (Solr's Lucene syntax over Navigator's field names) as the text
    navd sends Solr: parsed (navd/index/query_syntax.py refuses local parameters, magic fields,
    deep nesting: QuerySyntaxError naming `parameter`), translated (`translate`), written back."""
    return query_syntax.write(translate(query_syntax.parse(query, parameter), context), parameter)


def translate(query: Query, context: QueryContext | None = None) -> Query:
    """Navigator's field clauses as navd's, on the parsed query: `srcId`/`originalDescription`/
    `up_<key>` renamed, `name`/`description`/`tags` matching nothing, `type`/`sourceType` values
    upper-cased (regular expressions as typed), `parentPath` also matching a Hive parent, a bare
    type name (`FIELD`) also matching the type, `clusterName` matching every entity when it names
    navd's cluster (nothing otherwise), `sourceId:<a source's identity>` matching what the source
    holds. Everything else is kept (navd's own field names work too); a group's field applies to
    the clauses inside it, as in Solr."""
    context = context or QueryContext()
    return Query(tuple(_clause(clause, None, context) for clause in query.clauses))


def _clause(clause: Clause, outer: str | None, context: QueryContext) -> Clause:
    """`clause` translated; `outer`: the field of the group it is in (Navigator's name)."""
    if clause.field is None:
        name = _bare_type(clause.node) if outer is None else None
        if name is not None:
            # Hue's find_entity sends `DATABASE AND (sourceType:HIVE)AND...` (no `type:` for
            # types other than TABLE), so on Navigator a bare type name matches the type.
            return dataclasses.replace(clause, node=_group(f"{name} OR type:{name}"))
        field_of_value = outer
    else:
        field_of_value = clause.field
    if field_of_value == CLUSTER_NAME and not isinstance(clause.node, Group):
        # every entity navd holds is of its one cluster (`[cluster] name`)
        cluster_matches = _value_matches(clause.node, context.cluster) if context.cluster else False
        return dataclasses.replace(clause, field=None, node=_group("*:*" if cluster_matches else _MATCH_NOTHING))
    if field_of_value in _SOURCE_ID_FIELDS and not isinstance(clause.node, Group):
        source = context.sources.get(_plain_value(clause.node) or "")
        if source is not None:
            return dataclasses.replace(clause, field=None, node=_group(source_match(source)))
    if clause.field is None:
        return dataclasses.replace(clause, node=_value(clause.node, outer, context))
    if clause.field in _USER_MANAGED:
        return dataclasses.replace(clause, field=_USER_MANAGED[clause.field],
                                   node=_value(clause.node, clause.field, context))
    if clause.field.startswith(_USER_PROPERTY_PREFIX):
        # a user property (annotations, `up_<key>`) or, as before annotations, an extracted one
        key = clause.field[len(_USER_PROPERTY_PREFIX):]
        inner = (Clause(clause.node, clause.field),
                 Clause(clause.node, _NAVD_PROPERTY_PREFIX + key, conjunction="OR"))
        return dataclasses.replace(clause, field=None, node=Group(Query(inner)))
    field = _field(clause.field)
    node = _value(clause.node, clause.field, context)
    hive = _hive_parent_clause(node) if field == _PARENT_PATH else None
    if hive is None:
        return dataclasses.replace(clause, field=field, node=node)
    own = Clause(node, field)
    return dataclasses.replace(clause, field=None, node=Group(Query((own, Clause(_group(hive), conjunction="OR")))))


def _plain_value(node: Node) -> str | None:
    """The literal value of a plain term or phrase (no wildcard, boost, slop or fuzziness)."""
    if isinstance(node, Term) and node.kind == "term" and node.boost is None and node.fuzzy is None:
        return node.text
    if isinstance(node, Phrase) and node.boost is None and node.slop is None:
        return node.text
    return None


def _field(name: str) -> str:
    if name.startswith(_USER_PROPERTY_PREFIX):
        name = _NAVD_PROPERTY_PREFIX + name[len(_USER_PROPERTY_PREFIX):]
    elif _CUSTOM_PROPERTY.fullmatch(name) and not name.startswith(
            (_NAVD_PROPERTY_PREFIX, annotation_rules.CUSTOM_PROPERTY_PREFIX)):
        # managed metadata, `namespace.key` (no field of navd's has a dot outside a prefix)
        return annotation_rules.CUSTOM_PROPERTY_PREFIX + annotation_rules.field_key(name)
    return _RENAMED.get(name, name)


def _value(node: Node, field: str | None, context: QueryContext) -> Node:
    """A clause's value under Navigator's `field`: a group's clauses translated with it, an
    enum field's values upper-cased."""
    if isinstance(node, Group):
        return dataclasses.replace(node, query=Query(tuple(_clause(c, field, context) for c in node.query.clauses)))
    if field is None or _field(field) not in _ENUM_FIELDS:
        return node
    if isinstance(node, Term):
        if node.kind == "term":
            return dataclasses.replace(node, image=query_syntax.escape(node.text.upper()))
        if node.kind == "prefix":
            return dataclasses.replace(node, image=query_syntax.escape(node.text.upper()) + "*")
        if node.kind == "wildcard":  # `\x` is a literal x in a wildcard term: upper-cased, still literal
            return dataclasses.replace(node, image=node.image.upper())
        return node
    if isinstance(node, Phrase):
        return dataclasses.replace(node, image=query_syntax.quote(node.text.upper())[1:-1])
    if isinstance(node, Range):
        return dataclasses.replace(node, low=None if node.low is None else node.low.upper(),
                                   high=None if node.high is None else node.high.upper())
    return node


def _bare_type(node: Node) -> str | None:
    """The element type a bare term names (`FIELD`, not `FIELD^2`, `foo-FIELD` or `*FIELD`)."""
    if isinstance(node, Term) and node.kind == "term" and node.boost is None and node.fuzzy is None \
            and node.image in _TYPE_NAMES:
        return node.image
    return None


def _group(text: str) -> Group:
    """navd's own query text (values escaped) as a group."""
    return Group(query_syntax.parse(text))


def _hive_parent_clause(value: Node) -> str | None:
    """The Hive elements whose Navigator parentPath is `value`, `/db` or `/db/table` (a term or a
    phrase, without wildcards, a boost or a slop), by their own qualified name (`db.table@cluster`,
    `db.table.column@cluster`, `db.table@cluster/k=v`; database and table names hold no '.').
    None for any other value (a group, a range, a wildcard, a path with '.' or '@')."""
    if isinstance(value, Phrase) and value.boost is None and value.slop is None:
        path = value.text
    elif isinstance(value, Term) and value.kind == "term" and value.boost is None and value.fuzzy is None:
        path = value.text
    else:
        return None
    parts = path.strip().rstrip("/").split("/")
    if len(parts) not in (2, 3) or parts[0] != "" or not all(parts[1:]) or any(c in path for c in ".@"):
        return None
    names = [query_syntax.escape(part.lower()) for part in parts[1:]]
    hive = f"sourceType:{SourceType.HIVE.value}"
    if len(names) == 1:
        return f"{hive} AND type:({' OR '.join(_HIVE_TABLE_TYPES)}) AND qualifiedName:{names[0]}.*"
    db_table = ".".join(names)
    return (f"{hive} AND ((type:{ElementType.FIELD.value} AND qualifiedName:{db_table}.*) OR "
            f"(type:{ElementType.PARTITION.value} AND qualifiedName:{db_table}@*))")


# -- paging parameters -------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class CursorPage:
    """One page of POST entities/paging: Navigator's `{results, cursorMark}`."""

    results: tuple[dict[str, Any], ...]
    cursor_mark: str  # the mark of the next page; the same mark again once the last page was read

    def as_dict(self) -> dict[str, Any]:
        return {"results": list(self.results), "cursorMark": self.cursor_mark}


def bounded_int(parameter: str, value: object, low: int, high: int) -> int:
    """`value` (a query-string text or a JSON number) as an int in [low, high]; UsageError naming
    `parameter` otherwise."""
    if isinstance(value, bool):
        value = str(value)
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d{1,12}\s*", value):
        number = int(value)
    else:
        raise UsageError(f"{parameter}: {str(value)[:40]!r} is not an integer ({low}..{high})")
    if not low <= number <= high:
        raise UsageError(f"{parameter}: {number} is out of range ({low}..{high})")
    return number


def check_query(parameter: str, value: object) -> str:
    """The entity query of a request: a string; none or blank means every entity."""
    if value is None:
        return "*:*"
    if not isinstance(value, str):
        raise UsageError(f"{parameter}: must be a string (Solr's Lucene syntax), not {type(value).__name__}")
    return value if value.strip() else "*:*"


def check_cursor_mark(value: object) -> str:
    """A cursorMark from a previous page, or `*` (also when absent) for the first page."""
    if value is None:
        return FIRST_CURSOR
    if not isinstance(value, str) or not value or len(value) > 4096:
        raise UsageError("cursorMark: must be '*' or the cursorMark of the previous page")
    return value


def entity_ids(values: list[str]) -> tuple[str, ...]:
    """`entityIds` given repeated (`?entityIds=a&entityIds=b`) or comma-separated, in order,
    without repeats; UsageError when none or too many."""
    ids: dict[str, None] = {}
    for value in values:
        for part in value.split(","):
            if part.strip():
                ids[part.strip()] = None
    if not ids:
        raise UsageError("entityIds: give at least one entity identity")
    if len(ids) > MAX_LINEAGE_IDS:
        raise UsageError(f"entityIds: {len(ids)} identities, at most {MAX_LINEAGE_IDS} per request")
    return tuple(ids)


# -- meta classes --------------------------------------------------------------------------------

#: Navigator's meta class of each (sourceType, type); a pair not listed is `<source>_<type>`.
_META_CLASSES: Mapping[tuple[str, str], str] = {
    (SourceType.HIVE.value, ElementType.DATABASE.value): "hv_database",
    (SourceType.HIVE.value, ElementType.TABLE.value): "hv_table",
    (SourceType.HIVE.value, ElementType.VIEW.value): "hv_view",
    (SourceType.HIVE.value, ElementType.FIELD.value): "hv_column",
    (SourceType.HIVE.value, ElementType.PARTITION.value): "hv_partition",
    (SourceType.HDFS.value, ElementType.FILE.value): "fselement",
    (SourceType.HDFS.value, ElementType.DIRECTORY.value): "fselement",
    (SourceType.S3.value, ElementType.FILE.value): "fselement",
    (SourceType.S3.value, ElementType.DIRECTORY.value): "fselement",
}


def meta_class_name(source_type: str, type_: str) -> str:
    """The `metaClassName` of an entity of `source_type` and `type_` (docs/navigator-api.md)."""
    return _META_CLASSES.get((source_type, type_), f"{source_type.lower()}_{type_.lower()}")


def meta_classes() -> list[dict[str, Any]]:
    """Every meta class navd's entities carry, as the `classes` of Navigator's model (name,
    package, the source and entity type it stands for), by name."""
    pairs = {(st.value, t.value) for st in SourceType for t in ElementType}
    classes = {meta_class_name(st, t): (st, t) for st, t in sorted(pairs)}
    return [{"name": name, "package": PACKAGE_NAME, "sourceType": st, "entityType": t}
            for name, (st, t) in sorted(classes.items())]


# -- sources -------------------------------------------------------------------------------------

#: Navigator's entity type of a source
SOURCE_ENTITY_TYPE = "SOURCE"
#: The source types the Navigator SDK's `SourceType` enum knows: a SOURCE entity of any other
#: type makes its `getAllSources` fail (Jackson refuses an unknown enum value).
SDK_SOURCE_TYPES = frozenset({"NONE", "MAPREDUCE", "YARN", "HDFS", "HIVE", "PIG", "IMPALA", "OOZIE", "SDK",
                              "SQOOP", "SPARK", "S3", "CLUSTER"})
#: What an OpenLineage namespace is to the SDK: an external application's metadata
_SDK_CUSTOM_SOURCE = "SDK"
_OPERATION_TYPES = (ElementType.OPERATION.value, ElementType.OPERATION_EXECUTION.value)
#: Source types whose elements are named by a file system URI (`hdfs://ns/path`)
PATH_SOURCE_TYPES = (SourceType.HDFS.value, SourceType.S3.value)


class SourceKind(enum.StrEnum):
    """What one source is: a file system (each HDFS nameservice, each S3 bucket), a metastore
    (its cluster's Hive catalogue), a service of the cluster (YARN, Spark, Impala, Oozie, Hive's
    queries), an OpenLineage namespace."""

    FILE_SYSTEM = "filesystem"
    METASTORE = "metastore"
    SERVICE = "service"
    NAMESPACE = "namespace"


@dataclasses.dataclass(frozen=True, order=True)
class Source:
    """One of Navigator's sources, derived from what navd holds: `name` is the file system
    (`hdfs://ns`), the metastore's cluster, the service's cluster, or the namespace."""

    source_type: str
    kind: SourceKind
    name: str

    @property
    def identity(self) -> str:
        return source_identity(self.source_type, f"{self.kind.value}:{self.name}")


def source_of(doc: Mapping[str, Any], cluster: str) -> Source:
    """The source an element document belongs to; `cluster` is `[cluster] name`, the cluster of
    the services (their elements' names carry none)."""
    source_type = str(doc.get("sourceType", ""))
    name = str(doc.get("qualifiedName", ""))
    if source_type in PATH_SOURCE_TYPES:
        return Source(source_type, SourceKind.FILE_SYSTEM, file_system_of(name))
    if source_type == SourceType.HIVE.value and doc.get("type") not in _OPERATION_TYPES:
        return Source(source_type, SourceKind.METASTORE, hive_cluster_of(name) or cluster)
    if source_type == SourceType.OPENLINEAGE.value:
        properties = doc.get("properties")
        namespace = properties.get("namespace") if isinstance(properties, Mapping) else None
        if isinstance(namespace, str) and namespace:
            return Source(source_type, SourceKind.NAMESPACE, namespace)
    return Source(source_type, SourceKind.SERVICE, cluster)


def file_system_of(qualified_name: str) -> str:
    """`scheme://authority` of a path's qualified name (`hdfs://ns` of `hdfs://ns/data/x#col`)."""
    parts = urlsplit(qualified_name)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme else ""


def hive_cluster_of(qualified_name: str) -> str | None:
    """The cluster of a Hive name: what follows the `@` up to a partition's `/` or a function's `#`
    (database and table names hold no `@`)."""
    _name, at, rest = qualified_name.partition("@")
    return re.split(r"[/#]", rest, maxsplit=1)[0] or None if at else None


def source_match(source: Source) -> str:
    """The elements of `source`, as navd's query text (its values escaped): what `source_of` says
    of each element, the other way round."""
    kind = source.kind
    if kind is SourceKind.FILE_SYSTEM:
        return (f"sourceType:{source.source_type} AND (qualifiedName:{query_syntax.quote(source.name)} OR "
                f"qualifiedName:{query_syntax.escape(source.name + '/')}*)")
    operations = f"type:({' OR '.join(_OPERATION_TYPES)})"
    if kind is SourceKind.METASTORE:
        at = query_syntax.escape("@" + source.name)
        return (f"sourceType:{SourceType.HIVE.value} AND -{operations} AND "
                f"(qualifiedName:*{at} OR qualifiedName:*{at}\\/* OR qualifiedName:*{at}\\#*)")
    if kind is SourceKind.NAMESPACE:
        return f"sourceType:{SourceType.OPENLINEAGE.value} AND prop_namespace:{query_syntax.quote(source.name)}"
    if source.source_type == SourceType.HIVE.value:
        return f"sourceType:{SourceType.HIVE.value} AND {operations}"
    if source.source_type == SourceType.OPENLINEAGE.value:
        return f"sourceType:{SourceType.OPENLINEAGE.value} AND -prop_namespace:[* TO *]"
    return f"sourceType:{query_syntax.escape(source.source_type)}"


def source_entity(source: Source, cluster: str) -> dict[str, Any]:
    """A source as Navigator's SOURCE entity: the fields the SDK's `SourceAttrs` reads
    (`identity`, `originalName`, `sourceType`, `sourceUrl`, `clusterName`,
    `sourceExtractIteration`, `sourceTemplate`) and Hue's `sourceId`."""
    sdk_type = source.source_type if source.source_type in SDK_SOURCE_TYPES else _SDK_CUSTOM_SOURCE
    if source.kind in (SourceKind.FILE_SYSTEM, SourceKind.NAMESPACE):
        url = source.name
    elif source.kind is SourceKind.METASTORE:
        url = f"metastore://{source.name}"
    else:
        url = f"{source.source_type.lower()}://{source.name}"
    out: dict[str, Any] = {
        "identity": source.identity, "sourceId": source.identity, "originalName": source.name,
        "name": None, "type": SOURCE_ENTITY_TYPE, "sourceType": sdk_type, "sourceUrl": url,
        "clusterName": source.name if source.kind is SourceKind.METASTORE else cluster,
        # navd's extractor run ids are not `<source>##<iteration>`: no iteration to offer
        "sourceExtractIteration": None, "deleted": False, "userEntity": False,
        "metaClassName": "source", "packageName": PACKAGE_NAME,
        "navdSourceType": source.source_type, "navdSourceKind": source.kind.value}
    if source.kind is SourceKind.METASTORE:
        # the SDK's getHMSSource picks the Hive source with sourceTemplate true (its catalogue),
        # getHiveSource the one without (its queries)
        out["sourceTemplate"] = True
    return out


def sources_by_identity(sources: Iterable[Source]) -> dict[str, Source]:
    return {source.identity: source for source in sources}


# -- queries over the SOURCE entities ------------------------------------------------------------

def is_source_query(query: Query) -> bool:
    """Whether Navigator's query asks for SOURCE entities (which are not in Solr): it names
    `type:SOURCE` anywhere, or it is made of `clusterName` clauses only (Hue's lookup of its
    cluster's sources)."""
    return _names_source_type(query, None) or (
        bool(query.clauses) and all(c.field == CLUSTER_NAME for c in query.clauses))


def _names_source_type(query: Query, outer: str | None) -> bool:
    for clause in query.clauses:
        field = clause.field or outer
        if isinstance(clause.node, Group):
            if _names_source_type(clause.node.query, field):
                return True
        elif field == "type" and (_plain_value(clause.node) or "").upper() == SOURCE_ENTITY_TYPE:
            return True
    return False


def matches(query: Query, entity: Mapping[str, Any]) -> bool:
    """Whether `entity` (a JSON object) matches the parsed query, with Lucene's rules for `AND`,
    `OR`, `+`, `-`, `NOT` and its default operator OR: what a query over the SOURCE entities
    selects. Values compare as text, enum fields (type, sourceType) without case; wildcards as
    in Solr; a range matches a field that has a value; a field the entity lacks matches nothing."""
    return _query_matches(query, entity, None)


def _query_matches(query: Query, entity: Mapping[str, Any], outer: str | None) -> bool:
    required: list[bool] = []
    prohibited: list[bool] = []
    optional: list[bool] = []
    occurs: list[str] = []
    results: list[bool] = []
    for clause in query.clauses:
        hit = _clause_matches(clause, entity, outer)
        if clause.conjunction == "AND" and occurs and occurs[-1] == "should":
            occurs[-1] = "must"
        if clause.modifier in ("-", "NOT"):
            occur = "must_not"
        elif clause.modifier == "+" or clause.conjunction == "AND":
            occur = "must"
        else:
            occur = "should"
        occurs.append(occur)
        results.append(hit)
    for occur, hit in zip(occurs, results):
        {"must": required, "must_not": prohibited, "should": optional}[occur].append(hit)
    if any(prohibited) or not all(required):
        return False
    if required:
        return True
    return any(optional) if optional else bool(prohibited) or not query.clauses


def _clause_matches(clause: Clause, entity: Mapping[str, Any], outer: str | None) -> bool:
    field = clause.field or outer
    if isinstance(clause.node, Group):
        return _query_matches(clause.node.query, entity, field)
    if field == "*":
        return isinstance(clause.node, Term) and clause.node.image == "*"
    if field is None or entity.get(field) is None:
        return False
    value = entity[field]
    text = str(value).lower() if isinstance(value, bool) else str(value)
    if isinstance(clause.node, Range):
        return clause.node.low is None and clause.node.high is None
    return _value_matches(clause.node, text, ignore_case=field in _ENUM_FIELDS)


def _value_matches(node: Node, text: str, *, ignore_case: bool = False) -> bool:
    """Whether a term or phrase value matches `text` (wildcards as Solr's, on the whole value)."""
    if ignore_case:
        text = text.upper()
    if isinstance(node, Phrase):
        wanted = node.text
    elif isinstance(node, Term) and node.kind == "term":
        wanted = node.text
    elif isinstance(node, Term) and node.kind in ("prefix", "wildcard"):
        pattern = node.text + "*" if node.kind == "prefix" else node.image
        pattern = pattern.upper() if ignore_case else pattern
        # `\x` is a literal x in a wildcard term; `[` has no meaning to Solr
        return fnmatch.fnmatchcase(text, pattern.replace("[", "[[]").replace("\\", ""))
    else:
        return False
    return text == (wanted.upper() if ignore_case else wanted)


# -- relations -----------------------------------------------------------------------------------

#: Navigator's relation fields that navd names otherwise
_RELATION_RENAMED = {"endpoint1Ids": "endpoint1Id", "endpoint2Ids": "endpoint2Id"}


def translate_relation_query(query: str, parameter: str = "query") -> str:
    """Navigator's relation query (the SDK's `identity:*`, `type:DATA_FLOW`, `endpoint1Ids:x`,
    joined with `extractorRunId:(...)`) as navd's: parsed (refusals as `translate_query`), the
    list fields renamed to navd's one id per end, type values upper-cased, written back."""
    return query_syntax.write(Query(tuple(_relation_clause(c) for c in query_syntax.parse(query, parameter).clauses)),
                              parameter)


def _relation_clause(clause: Clause) -> Clause:
    node = clause.node
    if isinstance(node, Group):
        node = dataclasses.replace(node, query=Query(tuple(_relation_clause(c) for c in node.query.clauses)))
    elif clause.field in ("type", "endpoint1Type", "endpoint2Type", "endpoint1SourceType", "endpoint2SourceType"):
        node = _value(node, "type", QueryContext())
    field = _RELATION_RENAMED.get(clause.field, clause.field) if clause.field else None
    return dataclasses.replace(clause, field=field, node=node)


# -- interactive search --------------------------------------------------------------------------

#: A filter query's Solr tag, as Hue writes it: `{!tag=type} type:TABLE OR type:VIEW`. The only
#: local parameter navd takes from a client; the rest of the filter is parsed as any query.
_TAGGED_FILTER = re.compile(r"\s*\{!tag=([A-Za-z_][A-Za-z0-9_]{0,40})\}\s*(.*)", re.DOTALL)
#: The fields navd answers facets of (string and boolean fields Solr counts by value; `tags`, the
#: annotations' tags, lower case as indexed); a Navigator field navd does not keep (name,
#: outputFormat, ...) gets an empty facet.
FACET_FIELDS = frozenset({"type", "sourceType", "owner", "group", "parentPath", "extractorRunId", "deleted",
                          "dataType", "internalType", "principal", "permissions", "sensitivity", "tags"})
MAX_FACET_FIELDS = 50
MAX_FILTER_QUERIES = 50
#: values per facet (Navigator's interactive search shows the top ones)
FACET_LIMIT = 100


@dataclasses.dataclass(frozen=True)
class FilterQuery:
    """One of `filterQueries`: navd's translated query text and the tag Hue gave it, if any."""

    text: str
    tag: str | None = None


@dataclasses.dataclass(frozen=True)
class InteractiveSearch:
    """POST interactive/entities: Hue's body `{query, facetFields, filterQueries, facetPrefix,
    firstClassEntitiesOnly}` (`facetRanges` refused), with `limit` and `offset` from the URL."""

    query: str
    filters: tuple[FilterQuery, ...]
    facet_fields: tuple[str, ...]
    facet_prefix: str | None
    first_class_only: bool
    limit: int
    offset: int


_INTERACTIVE_KEYS = frozenset({"query", "facetFields", "filterQueries", "facetPrefix", "facetRanges",
                               "firstClassEntitiesOnly", "limit", "offset"})


def interactive_search(body: Mapping[str, Any], limit: object, offset: object,
                       context: QueryContext | None = None) -> InteractiveSearch:
    """The checked request of POST interactive/entities; UsageError naming the field otherwise."""
    unknown = sorted(set(body) - _INTERACTIVE_KEYS)
    if unknown:
        raise UsageError(f"{unknown[0][:40]}: not a field of interactive/entities "
                         f"(it takes {', '.join(sorted(_INTERACTIVE_KEYS))})")
    query = translate_query(check_query("query", body.get("query")), "query", context)
    facet_fields = _string_list("facetFields", body.get("facetFields"), MAX_FACET_FIELDS)
    filters = tuple(filter_query(text, "filterQueries", context)
                    for text in _string_list("filterQueries", body.get("filterQueries"), MAX_FILTER_QUERIES))
    if body.get("facetRanges"):
        raise UsageError("facetRanges: not supported by navd (facets count values only)")
    prefix = body.get("facetPrefix")
    if prefix is not None and (not isinstance(prefix, str) or len(prefix) > 200):
        raise UsageError("facetPrefix: must be a string of at most 200 characters")
    first_class = body.get("firstClassEntitiesOnly")
    if first_class is not None and not isinstance(first_class, bool):
        raise UsageError("firstClassEntitiesOnly: must be true or false")
    return InteractiveSearch(
        query, filters, tuple(facet_fields), prefix or None, bool(first_class),
        limit=bounded_int("limit", body.get("limit", limit), 0, MAX_LIMIT),
        offset=bounded_int("offset", body.get("offset", offset), 0, MAX_OFFSET))


def filter_query(text: str, parameter: str, context: QueryContext | None = None) -> FilterQuery:
    """One filter query: an optional leading `{!tag=NAME}` (kept as navd writes it), the rest a
    Navigator query translated as `translate_query` does (a refusal's character positions count
    from the rest)."""
    tagged = _TAGGED_FILTER.fullmatch(text)
    tag, rest = (tagged.group(1), tagged.group(2)) if tagged else (None, text)
    return FilterQuery(translate_query(check_query(parameter, rest), parameter, context), tag)


def solr_filter(fq: FilterQuery) -> str:
    """A filter as Solr's `fq`: the tag navd checked, then the query navd wrote."""
    return f"{{!tag={fq.tag}}}{fq.text}" if fq.tag else fq.text


def _string_list(parameter: str, value: object, most: int) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{parameter}: must be a list of strings")
    if len(value) > most:
        raise UsageError(f"{parameter}: at most {most} entries, got {len(value)}")
    return list(value)


def facet_field_param(field: str, tags: Iterable[str]) -> str | None:
    """Solr's `facet.field` of Navigator's facet `field`, excluding the filters tagged with its
    name (Hue tags its type filter `type`, so the type facet still counts every type); None for
    a field navd does not count."""
    navd_field = _field(field)
    if navd_field not in FACET_FIELDS:
        return None
    return f"{{!ex={field}}}{navd_field}" if field in set(tags) else navd_field


# -- lineage ---------------------------------------------------------------------------------------

def with_flows(entity_json: dict[str, Any], inputs: Iterable[str], outputs: Iterable[str]) -> dict[str, Any]:
    """An operation or execution entity with Navigator's `inputs` and `outputs`: the names of
    the datasets it reads and writes, upper-cased (Hue's lineage panel compares them with a
    table's `originalName.upper()`), sorted."""
    return {**entity_json, "inputs": sorted({i.upper() for i in inputs}),
            "outputs": sorted({o.upper() for o in outputs})}


def lineage_options(length: object, offset: object, merge_deleted: object,
                    max_length: int | None = None) -> int | None:
    """Navigator's lineage options, checked: `length` (the hops walked each way, 1..`max_length`,
    the server's `[server] max_depth`, else MAX_LINEAGE_LENGTH; None: navd's default), `offset` (0
    only: navd's lineage is one answer) and `mergeDeletedEntities` (false only: navd shows a
    deleted entity apart from its successor)."""
    if offset is not None and bounded_int("offset", offset, 0, MAX_OFFSET) != 0:
        raise UsageError(f"offset: {offset}: navd's lineage is not paged: only offset=0 is served")
    if merge_deleted is not None and str(merge_deleted).strip().lower() != "false":
        raise UsageError(f"mergeDeletedEntities: {str(merge_deleted)[:20]!r} is not supported: navd shows "
                         "deleted entities apart (only false is served)")
    return None if length is None else bounded_int("length", length, 1, max_length or MAX_LINEAGE_LENGTH)


#: The longest lineage `length` navd walks (hops each way) without a server's `[server] max_depth`
MAX_LINEAGE_LENGTH = 20
