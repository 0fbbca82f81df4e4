"""The one place where records become Solr documents (field names as in Navigator), and where
the fields of stored documents are named for the readers (`endpoint_field`, `is_stub`): the typed
read views built from them (navd/lineage/stored.py) and the stores spell no field again.
"""

from __future__ import annotations

import functools
import json
import operator
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from itertools import compress
from typing import Any, Protocol

import orjson

from navd.annotations.rules import is_projection_field, stored_annotation
from navd.model import Deletion, Element, ElementStub, ElementType, Record, Relation, relation_identity

_PROPERTY_KEY = re.compile(r"[^A-Za-z0-9_.]")
_FILE_SYSTEM_TYPES = frozenset({ElementType.DIRECTORY, ElementType.FILE})


def solr_date(value: datetime) -> str:
    """Solr's date format: UTC, ISO-8601, `Z` suffix, milliseconds."""
    if value.tzinfo is UTC:
        # Nearly every time navd writes is already in UTC: formatted directly, at about half the
        # cost of utcoffset() + replace() + isoformat(timespec=...), which took 40% of
        # element_document's time. Milliseconds truncated, as isoformat does.
        return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (  # noqa: UP031 - measured faster than f-strings here
            value.year, value.month, value.day, value.hour, value.minute, value.second, value.microsecond // 1000)
    offset = value.utcoffset()
    if offset is None:
        raise ValueError(f"naive datetime {value!r}: navd stores only timezone-aware times")
    if offset:
        value = value.astimezone(UTC)
    return value.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


# Property keys come from a small vocabulary per source (the regex is per key and document on
# the indexing hot path); bounded, since a source may also send keys of its own.
@functools.lru_cache(maxsize=4096)
def property_field(key: str) -> str:
    """The searchable field of one property key: `prop_<key>` with odd characters as `_`."""
    return "prop_" + _PROPERTY_KEY.sub("_", key)


# One encoder for every document: json.dumps with options builds a new JSONEncoder per call.
# The stored text stays exactly what json.dumps(..., ensure_ascii=False, sort_keys=True) gives.
_encode_properties = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


def _put_properties(doc: dict[str, Any], properties: Mapping[str, str]) -> None:
    if not properties:
        return
    doc["properties"] = _encode_properties(dict(properties))
    for key, value in properties.items():
        doc[property_field(key)] = value


_ELEMENT_SCALARS: tuple[tuple[str, str], ...] = (
    ("file_system_path", "fileSystemPath"), ("owner", "owner"), ("group", "group"),
    ("permissions", "permissions"), ("size", "size"), ("block_size", "blockSize"),
    ("replication", "replication"), ("principal", "principal"), ("query_text", "queryText"),
    ("description", "description"), ("data_type", "dataType"), ("internal_type", "internalType"),
    ("source_id", "sourceId"), ("extractor_run_id", "extractorRunId"), ("execution_plan", "executionPlan"),
)
_ELEMENT_DATES: tuple[tuple[str, str], ...] = (
    ("created", "created"), ("last_modified", "lastModified"), ("last_accessed", "lastAccessed"),
    ("started", "started"), ("ended", "ended"), ("delete_time", "deleteTime"),
)


# One C-level call fetches all optional values of an element (this is the indexing hot path).
_scalar_values = operator.attrgetter(*(attr for attr, _ in _ELEMENT_SCALARS))
_date_values = operator.attrgetter(*(attr for attr, _ in _ELEMENT_DATES))
_SCALAR_FIELDS = tuple(field for _, field in _ELEMENT_SCALARS)
_DATE_FIELDS = tuple(field for _, field in _ELEMENT_DATES)
# `value is not None` as a C-level predicate: with itertools.compress the (mostly absent) optional
# fields are filtered without a Python-level loop over all 21 of them.
_present = functools.partial(operator.is_not, None)


_ELEMENT_FIELD_OF: Mapping[str, str] = {
    "identity": "identity", "qualified_name": "qualifiedName", "source_type": "sourceType", "type": "type",
    "name": "originalName", "deleted": "deleted", **dict(_ELEMENT_SCALARS), **dict(_ELEMENT_DATES)}


def element_field(attribute: str) -> str:
    """The document field of an Element attribute (`last_modified` -> `lastModified`)."""
    try:
        return _ELEMENT_FIELD_OF[attribute]
    except KeyError:
        raise ValueError(f"Element attribute {attribute!r} is not stored as a field of its own") from None


def element_document(element: Element) -> dict[str, Any]:
    # The indexing hot path (every element of every extractor): enum values are read as
    # `_value_` (an instance attribute; `.value` goes through a Python-level descriptor), and
    # the optional fields are filtered in C (see _present).
    doc: dict[str, Any] = {
        "identity": element.identity,
        "qualifiedName": element.qualified_name,
        "sourceType": element.source_type._value_,
        "type": element.type._value_,
        "originalName": element.name,
        "deleted": element.deleted,
    }
    parent = element.parent
    if parent is not None:
        doc["parentId"] = parent.identity
        doc["parentQualifiedName"] = parent.qualified_name
        if element.file_system_path is not None and element.type in _FILE_SYSTEM_TYPES:
            doc["parentPath"] = _parent_path(element.file_system_path)
    values = _scalar_values(element)
    doc.update(compress(zip(_SCALAR_FIELDS, values), map(_present, values)))
    dates = _date_values(element)
    for field, value in compress(zip(_DATE_FIELDS, dates), map(_present, dates)):
        doc[field] = solr_date(value)
    if element.properties:
        _put_properties(doc, element.properties)
    return doc


def _parent_path(path: str) -> str:
    head = path.rstrip("/").rsplit("/", 1)[0]
    return head or "/"


def parse_solr_date(value: object) -> datetime:
    """A Solr date (`2026-11-23T05:00:00.123Z`, as `solr_date` writes it and Solr returns it) as
    an aware datetime; ValueError if it is not one."""
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def stored_time(value: object) -> datetime | None:
    """A stored date (Solr's `2026-11-23T05:00:00.123Z`) as an aware datetime; None if absent."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value
    return parse_solr_date(value)


#: A relation's first and last execution times (model.Relation.first_seen / last_seen).
FIRST_SEEN = "firstSeen"
LAST_SEEN = "lastSeen"


def relation_document(relation: Relation) -> dict[str, Any]:
    ep1, ep2 = relation.endpoint1, relation.endpoint2
    kind = relation.type._value_  # `_value_`: see element_document
    doc: dict[str, Any] = {
        "identity": relation.identity,
        "type": kind,
        "endpoint1Id": ep1.identity,
        "endpoint2Id": ep2.identity,
        "endpoint1QualifiedName": ep1.qualified_name,
        "endpoint2QualifiedName": ep2.qualified_name,
        "endpoint1Type": ep1.type._value_,
        "endpoint2Type": ep2.type._value_,
        "endpoint1SourceType": ep1.source_type._value_,
        "endpoint2SourceType": ep2.source_type._value_,
        "endpoint1Linked": relation.linked1,
        "endpoint2Linked": relation.linked2,
        "unlinked": relation.unlinked,
    }
    if relation.dependency_type is not None:
        doc["dependencyType"] = relation.dependency_type._value_
    if relation.expression is not None:
        doc["expression"] = relation.expression
    if relation.discriminator:
        doc["discriminator"] = relation.discriminator
    if relation.extractor_run_id is not None:
        doc["extractorRunId"] = relation.extractor_run_id
    if relation.first_seen is not None:
        doc[FIRST_SEEN] = solr_date(relation.first_seen)
    if relation.last_seen is not None:
        doc[LAST_SEEN] = solr_date(relation.last_seen)
    if relation.properties:
        _put_properties(doc, relation.properties)
    return doc


def display_document(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A stored document as users see it: internal fields dropped, properties decoded, the copy
    of what people wrote (navd/annotations) shown once, as `annotations`."""
    shown = {k: v for k, v in doc.items()
             if k != "_version_" and not k.startswith("prop_") and not is_projection_field(k)}
    if isinstance(shown.get("properties"), str):
        try:
            shown["properties"] = json.loads(shown["properties"])
        except ValueError:
            pass
    annotation = stored_annotation(doc)
    if annotation is not None and not annotation.empty:
        shown["annotations"] = annotation.as_dict()
    return shown


#: `kind` of run records in the runs core.
RUN_KIND = "run"


def stub_document(stub: ElementStub) -> dict[str, Any]:
    """An ElementStub's document: written only if no document with its identity exists
    (`_version_: -1`), so it never overwrites the owning extractor's richer one."""
    return {**element_document(stub.element), "_version_": -1}


def deletion_update(deletion: Deletion) -> dict[str, Any]:
    """An atomic update flagging an element deleted, only if it exists (`_version_: 1`): flagging
    must never create a bare document for an element that was never indexed."""
    return {"identity": deletion.ref.identity, "_version_": 1, "deleted": {"set": True},
            "deleteTime": {"set": solr_date(deletion.delete_time)}}


def revival_update(identity: str, created: datetime, *, alive: bool = True) -> dict[str, Any]:
    """An atomic update of an element created again at `created` (a table dropped and created
    again under its name): `alive`, its deletion flag cleared. Only if it exists (`_version_: 1`)."""
    update: dict[str, Any] = {"identity": identity, "_version_": 1, "created": {"set": solr_date(created)}}
    if alive:
        update.update({"deleted": {"set": False}, "deleteTime": {"set": None}})
    return update


def run_document(run_id: str, component: str, state: str, *, started: datetime, host: str,
                 ended: datetime | None = None, error: str | None = None,
                 counts: Mapping[str, int] | None = None, refused: str = "") -> dict[str, Any]:
    """A run record in the runs core: counts as `count_<name>`, the error and what the run refused
    to do (the deletion fail-safe's reasons) cut to 2,000 chars."""
    doc: dict[str, Any] = {"identity": run_id, "kind": RUN_KIND, "component": component, "state": state,
                           "started": solr_date(started), "host": host}
    if ended is not None:
        doc["ended"] = solr_date(ended)
    if error:
        doc["error"] = error[:2000]
    if refused:
        doc["refused"] = refused[:2000]
    doc.update({f"count_{name}": int(value) for name, value in (counts or {}).items()})
    return doc


# -- what Solr refuses to index ----------------------------------------------------------------

#: Lucene's limit on one indexed term, in UTF-8 bytes: a string field's value, a keyword field's
#: lower-cased value, one token of a text field. Solr refuses a document holding a longer one
#: ("immense term"), and with it the whole batch it was posted in.
MAX_TERM_BYTES = 32766
#: a string of at most this many characters fits whatever it holds (4 UTF-8 bytes a character at
#: most, lower-cased too)
_FITS_CHARS = MAX_TERM_BYTES // 4
# How solr_conf's schema.xml analyses the string fields of navd's documents; any other string
# field is a StrField, its whole value one term.
_STORED_ONLY = frozenset({"properties", "executionPlan"})
#: text_substr: the whole value, lower-cased, one term
_ONE_LOWER_CASED_TERM = frozenset({"originalName", "fileSystemPath"})
#: text_ws_lower: tokens split at whitespace, lower-cased
_WHITESPACE_TOKENS = frozenset({"queryText", "expression"})
#: text_general: the standard tokenizer cuts tokens at 255 characters
_SHORT_TOKENS = frozenset({"description"})
#: copied into the catch-all `text` (text_words): runs of letters and digits, lower-cased
_COPIED_TO_TEXT = frozenset({"originalName", "qualifiedName", "fileSystemPath", "description", "queryText",
                             "endpoint1QualifiedName", "endpoint2QualifiedName", "expression"})
_WORDS = re.compile(r"[^\W_]+")
#: Java's Character.isWhitespace, which Lucene's WhitespaceTokenizer splits at (no-break spaces
#: are no whitespace there, unlike in Python's str.split)
_JAVA_WHITESPACE = re.compile("[\t\n\x0b\x0c\r\x1c-\x1f \u1680\u2000-\u2006\u2008-\u200a\u2028\u2029"
                              "\u205f\u3000]+")


def utf8_length_above(value: object, limit: int) -> int | None:
    """The UTF-8 length of a string longer than `limit` bytes; None for a shorter one (or no
    string). Encodes only strings long enough to need it."""
    if not isinstance(value, str) or len(value) * 4 <= limit:
        return None
    size = len(value.encode("utf-8", "surrogatepass"))
    return size if size > limit else None


def oversized_term(record: Record) -> tuple[str, int] | None:
    """(field, bytes) of the first term of the record's document longer than MAX_TERM_BYTES, as
    Solr would analyse it; None when every term fits (at once for a record of short strings)."""
    if _longest_string(record) <= _FITS_CHARS:
        return None
    if isinstance(record, Element):
        doc = element_document(record)
    elif isinstance(record, ElementStub):
        doc = element_document(record.element)
    elif isinstance(record, Relation):
        doc = relation_document(record)
    else:
        return None
    for field, value in doc.items():
        if not isinstance(value, str) or len(value) <= _FITS_CHARS or field in _STORED_ONLY:
            continue
        size = _longest_term(field, value)
        if size > MAX_TERM_BYTES:
            return field, size
    return None


def _longest_string(record: Record) -> int:
    if isinstance(record, ElementStub):
        record = record.element
    if isinstance(record, Element):
        texts = [record.qualified_name, record.name, *(v for v in _scalar_values(record) if isinstance(v, str))]
        if record.parent is not None:
            texts.append(record.parent.qualified_name)
    elif isinstance(record, Relation):
        texts = [record.endpoint1.qualified_name, record.endpoint2.qualified_name, record.expression or "",
                 record.discriminator, record.extractor_run_id or ""]
    else:
        return 0
    return max(map(len, [*texts, *record.properties.values()]))


def _longest_term(field: str, value: str) -> int:
    if field in _WHITESPACE_TOKENS:
        size = _longest_token(_JAVA_WHITESPACE.split(value.lower()))
    elif field in _SHORT_TOKENS:
        size = 0
    else:
        size = len((value.lower() if field in _ONE_LOWER_CASED_TERM else value).encode("utf-8", "surrogatepass"))
    if field in _COPIED_TO_TEXT:
        size = max(size, _longest_token(_WORDS.findall(value.lower())))
    return size


def _longest_token(tokens: list[str]) -> int:
    return max((len(token.encode("utf-8", "surrogatepass")) for token in tokens if len(token) > _FITS_CHARS),
               default=0)


# -- reading stored documents back --------------------------------------------------------------

#: The property that marks a stub (see model.ElementStub and `is_stub`).
STUB_MARK = "knownFrom"


def endpoint_field(end: int, suffix: str) -> str:
    """`endpoint1Id`, `endpoint2QualifiedName`, ...: a relation's field of endpoint `end`."""
    if end not in (1, 2):
        raise ValueError(f"relation endpoint {end!r}: relations have endpoints 1 and 2")
    return f"endpoint{end}{suffix}"


#: A Solr filter leaving stubs out (the query-side twin of `is_stub`).
NOT_STUB_FILTER = f"-{property_field(STUB_MARK)}:*"
#: Elements flagged deleted (a Deletion set `deleted`), and the filter leaving them out.
DELETED_FILTER = "deleted:true"
NOT_DELETED_FILTER = f"-{DELETED_FILTER}"
#: Relations with an endpoint not resolved to an indexed element (the linker's work).
UNLINKED_FILTER = "unlinked:true"


def stored_relation_identity(doc: Mapping[str, Any]) -> str:
    """A relation document's identity recomputed from its fields, as `Relation.identity`."""
    return relation_identity(str(doc["type"]), str(doc["endpoint1Id"]), str(doc["endpoint2Id"]),
                             str(doc.get("discriminator", "")))


# Solr-maintained or derived fields that must not be copied into a rewritten document.
_SOLR_MAINTAINED = frozenset({"_version_", "lastIndexed", "score"})


class LinkTarget(Protocol):
    """The element an unlinked endpoint resolved to, as far as the relation records it (the
    linker's navd.lineage.stored.StoredElement)."""

    @property
    def id(self) -> str: ...

    @property
    def qualified_name(self) -> str: ...

    @property
    def type(self) -> str: ...

    @property
    def source_type(self) -> str: ...


def relinked_document(doc: Mapping[str, Any], targets: Mapping[int, LinkTarget]) -> dict[str, Any]:
    """A relation document with endpoints `targets` (end -> the element it resolved to) linked.

    A resolved endpoint takes the element's identity, qualifiedName, type and source type and is
    marked linked; the identity is recomputed from the new endpoints, exactly as the extractor
    would have computed it had it known the element."""
    # Runs once per relation of a link pass: the field names come from `_RELINKED_FIELDS`, and the
    # copy drops the Solr-maintained fields after copying (the same keys in the same order).
    new = dict(doc)
    for key in _SOLR_MAINTAINED:
        if key in new:
            del new[key]
    for end, target in targets.items():
        fields = _RELINKED_FIELDS.get(end)
        if fields is None:
            endpoint_field(end, "Id")  # raises, naming the endpoint
            continue
        id_field, name_field, type_field, source_field, linked_field = fields
        new[id_field] = target.id
        new[name_field] = target.qualified_name
        new[type_field] = target.type
        new[source_field] = target.source_type
        new[linked_field] = True
    new["unlinked"] = not (new.get("endpoint1Linked", True) and new.get("endpoint2Linked", True))
    new["identity"] = stored_relation_identity(new)
    return new


#: Per end: the Id, QualifiedName, Type, SourceType and Linked fields `relinked_document` sets.
_RELINKED_FIELDS: Mapping[int, tuple[str, str, str, str, str]] = {
    end: (f"endpoint{end}Id", f"endpoint{end}QualifiedName", f"endpoint{end}Type", f"endpoint{end}SourceType",
          f"endpoint{end}Linked") for end in (1, 2)}


def with_property_fields(doc: dict[str, Any]) -> dict[str, Any]:
    """A relation document read from its stored fields alone (`useDocValuesAsStored=false`) made
    whole: its property fields (`prop_*`, docValues only, not stored) rebuilt from the stored
    `properties`, as `relation_document` writes them. `doc` itself when it has no properties."""
    properties = doc.get("properties")
    if not isinstance(properties, str):
        return doc
    whole = dict(doc)
    try:  # orjson: this runs once per relation a link pass reads
        parsed = orjson.loads(properties)
    except orjson.JSONDecodeError:  # what only the json module reads (NaN, integers past 64 bits)
        parsed = json.loads(properties)
    for key, value in parsed.items():
        whole[property_field(key)] = value
    return whole


def is_stub(doc: Mapping[str, Any]) -> bool:
    """Whether an element document is a stub (an ElementStub: known only from another source's
    reference, marked by the STUB_MARK property). Stubs are not link targets: they carry the
    unresolved name itself. The owning extractor's document replaces a stub wholesale, so the
    mark disappears once the real element is indexed under the same identity."""
    properties = doc.get("properties")
    if not isinstance(properties, str) or STUB_MARK not in properties:
        return False
    try:
        return STUB_MARK in json.loads(properties)
    except ValueError:
        return False
