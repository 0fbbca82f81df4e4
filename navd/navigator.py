"""Cloudera Navigator's API vocabulary, pure: navd's stored element and relation documents as
Navigator's entity and relation JSON, Navigator's entity queries as navd's Solr queries, and the
checks of the API's paging parameters. No I/O: navd/catalog/navigator.py fetches, the HTTP
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
import re
from collections.abc import Mapping
from typing import Any

from navd.annotations import rules as annotation_rules
from navd.errors import UsageError
from navd.index import query_syntax
from navd.index.documents import display_document
from navd.index.query_syntax import Clause, Group, Node, Phrase, Query, Range, Term
from navd.model import ElementType, SourceType
from navd.names import parse_hive_name

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


def entity(doc: Mapping[str, Any]) -> dict[str, Any]:
    """An element document as Navigator's entity JSON."""
    shown = display_document(doc)
    out: dict[str, Any] = {field: shown.get(field) for field in _SAME_NAME}
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

def translate_query(query: str, parameter: str = "query") -> str:
    """Navigator's entity query (Solr's Lucene syntax over Navigator's field names) as the text
    navd sends Solr: parsed (navd/index/query_syntax.py refuses local parameters, magic fields,
    deep nesting: QuerySyntaxError naming `parameter`), translated (`translate`), written back."""
    return query_syntax.write(translate(query_syntax.parse(query, parameter)), parameter)


def translate(query: Query) -> Query:
    """Navigator's field clauses as navd's, on the parsed query: `srcId`/`originalDescription`/
    `up_<key>` renamed, `name`/`description`/`tags` matching nothing, `type`/`sourceType` values
    upper-cased (regular expressions as typed), `parentPath` also matching a Hive parent, a bare
    type name (`FIELD`) also matching the type. Everything else is kept (navd's own field names
    work too); a group's field applies to the clauses inside it, as in Solr."""
    return Query(tuple(_clause(clause, None) for clause in query.clauses))


def _clause(clause: Clause, outer: str | None) -> Clause:
    """`clause` translated; `outer`: the field of the group it is in (Navigator's name)."""
    if clause.field is None:
        name = _bare_type(clause.node) if outer is None else None
        if name is not None:
            # Hue's find_entity sends `DATABASE AND (sourceType:HIVE)AND...` (no `type:` for
            # types other than TABLE), so on Navigator a bare type name matches the type.
            return dataclasses.replace(clause, node=_group(f"{name} OR type:{name}"))
        return dataclasses.replace(clause, node=_value(clause.node, outer))
    if clause.field in _USER_MANAGED:
        return dataclasses.replace(clause, field=_USER_MANAGED[clause.field], node=_value(clause.node, clause.field))
    if clause.field.startswith(_USER_PROPERTY_PREFIX):
        # a user property (annotations, `up_<key>`) or, as before annotations, an extracted one
        key = clause.field[len(_USER_PROPERTY_PREFIX):]
        inner = (Clause(clause.node, clause.field),
                 Clause(clause.node, _NAVD_PROPERTY_PREFIX + key, conjunction="OR"))
        return dataclasses.replace(clause, field=None, node=Group(Query(inner)))
    field = _field(clause.field)
    node = _value(clause.node, clause.field)
    hive = _hive_parent_clause(node) if field == _PARENT_PATH else None
    if hive is None:
        return dataclasses.replace(clause, field=field, node=node)
    own = Clause(node, field)
    return dataclasses.replace(clause, field=None, node=Group(Query((own, Clause(_group(hive), conjunction="OR")))))


def _field(name: str) -> str:
    if name.startswith(_USER_PROPERTY_PREFIX):
        name = _NAVD_PROPERTY_PREFIX + name[len(_USER_PROPERTY_PREFIX):]
    elif _CUSTOM_PROPERTY.fullmatch(name) and not name.startswith(
            (_NAVD_PROPERTY_PREFIX, annotation_rules.CUSTOM_PROPERTY_PREFIX)):
        # managed metadata, `namespace.key` (no field of navd's has a dot outside a prefix)
        return annotation_rules.CUSTOM_PROPERTY_PREFIX + annotation_rules.field_key(name)
    return _RENAMED.get(name, name)


def _value(node: Node, field: str | None) -> Node:
    """A clause's value under Navigator's `field`: a group's clauses translated with it, an
    enum field's values upper-cased."""
    if isinstance(node, Group):
        return dataclasses.replace(node, query=Query(tuple(_clause(c, field) for c in node.query.clauses)))
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
