"""Annotations, the pure part: what people write on an entity (tags, a description, a display
name, user properties, namespaced custom properties, classification attributes), how an edit
changes it, the changes it records, and the fields it puts on the entity's element document.

No I/O: navd/annotations/store.py keeps annotations and their history in Solr, service.py is
what the CLI and the server call.

- A classification (Atlas) is a tag with optional attributes: adding one adds the tag, removing
  the tag removes its attributes. Navigator's and navd's tags and Atlas' classifications are
  one list.
- User properties (`key -> value`) are Navigator's `properties`; custom properties are its
  managed metadata, `namespace.key -> value`.
- Values are checked here, so every caller (CLI, navd's API, Navigator's PUT, Atlas) refuses the
  same input with the same one-line message naming the field.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from navd.errors import UsageError
from navd.index.query_syntax import Clause, Group, Query

#: Tags: a word character first, then word characters, spaces, `.`, `-` (Atlas' classification
#: names are a subset; Hue's tag box sends words). Longer ones are refused, not cut.
_TAG = re.compile(r"[^\W][\w .\-]*")
MAX_TAG_CHARS = 100
MAX_TAGS = 100
#: user property keys: what Navigator's `up_<key>` field can be searched by
_PROPERTY_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
MAX_KEY_CHARS = 100
MAX_VALUE_CHARS = 4000
MAX_PROPERTIES = 200
#: custom property: `namespace.key`, the namespace a word (Navigator's managed metadata)
_NAMESPACE = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
MAX_DESCRIPTION_CHARS = 10_000
MAX_NAME_CHARS = 500
#: classification attributes: a name and a JSON scalar each
MAX_ATTRIBUTES = 50
_SCALARS = (str, int, float, bool)

#: The fields of an element document the annotation is projected to (solr_conf's nav_elements).
TAGS_FIELD = "tags"
DESCRIPTION_FIELD = "userDescription"
NAME_FIELD = "displayName"
#: the whole annotation as JSON (stored only): what entity readers show without another request
JSON_FIELD = "annotation"
USER_PROPERTY_PREFIX = "up_"
CUSTOM_PROPERTY_PREFIX = "cp_"
_FIELD_CHARS = re.compile(r"[^A-Za-z0-9_.]")
_FIXED_FIELDS = (TAGS_FIELD, DESCRIPTION_FIELD, NAME_FIELD, JSON_FIELD)


class _Keep:
    """An edit's "leave this as it is" (None means "clear it")."""

    def __repr__(self) -> str:
        return "KEEP"


KEEP: Final = _Keep()


@dataclasses.dataclass(frozen=True)
class Annotation:
    """What people wrote on one entity (its identity). Mappings are never mutated: an edit
    makes a new Annotation (`apply`)."""

    identity: str
    tags: tuple[str, ...] = ()  # sorted, each once
    description: str | None = None
    display_name: str | None = None
    properties: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: `namespace.key` -> value
    custom_properties: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: a tag's classification attributes (only tags in `tags`)
    attributes: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.tags or self.description or self.display_name or self.properties
                    or self.custom_properties or self.attributes)

    def custom_by_namespace(self) -> dict[str, dict[str, str]]:
        """Navigator's `customProperties`: {namespace: {key: value}}."""
        found: dict[str, dict[str, str]] = {}
        for name, value in sorted(self.custom_properties.items()):
            namespace, key = name.split(".", 1)
            found.setdefault(namespace, {})[key] = value
        return found

    def as_dict(self) -> dict[str, Any]:
        """As the CLI's and navd's API JSON show it (and as stored)."""
        return {"identity": self.identity, "tags": list(self.tags), "description": self.description,
                "name": self.display_name, "properties": dict(sorted(self.properties.items())),
                "customProperties": self.custom_by_namespace(),
                "classificationAttributes": {t: dict(a) for t, a in sorted(self.attributes.items())}}


def annotation_from_dict(data: Mapping[str, Any]) -> Annotation:
    """The stored JSON (as_dict) back as an Annotation."""
    custom = {f"{ns}.{key}": str(value) for ns, values in (data.get("customProperties") or {}).items()
              for key, value in values.items()}
    return Annotation(str(data["identity"]), tuple(data.get("tags") or ()), data.get("description"),
                      data.get("name"), dict(data.get("properties") or {}), custom,
                      {t: dict(a) for t, a in (data.get("classificationAttributes") or {}).items()})


@dataclasses.dataclass(frozen=True)
class Edit:
    """A change asked for. `replace_*`: the new whole value (Navigator's PUT); `add_*`/`remove_*`
    and `set_*`/`unset_*` change parts; replacements apply first. `description`/`display_name`:
    KEEP, a text, or None/"" to clear."""

    add_tags: tuple[str, ...] = ()
    remove_tags: tuple[str, ...] = ()
    replace_tags: tuple[str, ...] | None = None
    description: str | None | _Keep = KEEP
    display_name: str | None | _Keep = KEEP
    set_properties: Mapping[str, str] = dataclasses.field(default_factory=dict)
    unset_properties: tuple[str, ...] = ()
    replace_properties: Mapping[str, str] | None = None
    set_custom: Mapping[str, str] = dataclasses.field(default_factory=dict)
    unset_custom: tuple[str, ...] = ()
    replace_custom: Mapping[str, str] | None = None
    #: classifications: tag -> its attributes (the tag is added too)
    set_attributes: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self == Edit()


@dataclasses.dataclass(frozen=True)
class Change:
    """One recorded change of one field of an entity's annotation."""

    identity: str
    actor: str
    at: datetime
    field: str  # tags, description, name, properties.<key>, customProperties.<ns.key>, attributes.<tag>
    before: Any
    after: Any

    def as_dict(self) -> dict[str, Any]:
        return {"identity": self.identity, "actor": self.actor, "at": self.at.isoformat(),
                "field": self.field, "before": self.before, "after": self.after}


# -- checks ------------------------------------------------------------------------------------

def check_tag(tag: str, field: str = "tags") -> str:
    """The tag, surrounding spaces stripped; UsageError naming `field` otherwise."""
    if not isinstance(tag, str):
        raise UsageError(f"{field}: a tag is a string, not {type(tag).__name__}")
    text = tag.strip()
    if not text:
        raise UsageError(f"{field}: a tag cannot be empty")
    if len(text) > MAX_TAG_CHARS:
        raise UsageError(f"{field}: tag {text[:40]!r}... is longer than {MAX_TAG_CHARS} characters")
    if not _TAG.fullmatch(text):
        raise UsageError(f"{field}: tag {text[:60]!r}: use letters, digits, '_', '-', '.' and spaces, "
                         f"starting with a letter or digit")
    return text


def check_property_key(key: str, field: str = "properties") -> str:
    if not isinstance(key, str) or not _PROPERTY_KEY.fullmatch(key) or len(key) > MAX_KEY_CHARS:
        raise UsageError(f"{field}: key {str(key)[:60]!r}: use up to {MAX_KEY_CHARS} letters, digits, '_', '.', "
                         f"'-', not starting with '.' or '-'")
    return key


def check_custom_key(name: str, field: str = "customProperties") -> str:
    """`namespace.key` checked."""
    namespace, dot, key = str(name).partition(".")
    if not dot or not _NAMESPACE.fullmatch(namespace):
        raise UsageError(f"{field}: {str(name)[:60]!r} is not NAMESPACE.KEY (a namespace of letters, digits, "
                         f"'_', starting with a letter)")
    check_property_key(key, field)
    return name


def check_value(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise UsageError(f"{field}: the value is a string, not {type(value).__name__}")
    if len(value) > MAX_VALUE_CHARS:
        raise UsageError(f"{field}: the value is longer than {MAX_VALUE_CHARS} characters")
    return value


def check_text(value: str | None, field: str, limit: int, *, one_line: bool) -> str | None:
    """A description or display name: None or "" clear it."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise UsageError(f"{field}: a string, not {type(value).__name__}")
    if len(value) > limit:
        raise UsageError(f"{field}: longer than {limit} characters")
    if one_line and ("\n" in value or "\r" in value):
        raise UsageError(f"{field}: one line, no line breaks")
    return value.strip() or None


def check_attributes(tag: str, attributes: Mapping[str, Any]) -> dict[str, Any]:
    field = f"attributes of {tag}"
    if not isinstance(attributes, Mapping):
        raise UsageError(f"{field}: an object of name -> value")
    if len(attributes) > MAX_ATTRIBUTES:
        raise UsageError(f"{field}: more than {MAX_ATTRIBUTES}")
    checked: dict[str, Any] = {}
    for name, value in attributes.items():
        check_property_key(name, field)
        if value is not None and not isinstance(value, _SCALARS):
            raise UsageError(f"{field}: {name}: a string, number or boolean, not {type(value).__name__}")
        if isinstance(value, str):
            check_value(value, f"{field}: {name}")
        checked[name] = value
    return checked


def parse_property(text: str, field: str = "--property") -> tuple[str, str]:
    """`key=value` (the CLI's form) as (key, value)."""
    key, equals, value = text.partition("=")
    if not equals:
        raise UsageError(f"{field}: {text[:60]!r} is not KEY=VALUE")
    return key.strip(), value


# -- applying an edit ----------------------------------------------------------------------------

def apply(current: Annotation, edit: Edit) -> Annotation:
    """The annotation after `edit` (every value checked: UsageError naming the field)."""
    tags = list(current.tags) if edit.replace_tags is None else [check_tag(t) for t in edit.replace_tags]
    tags += [check_tag(t) for t in edit.add_tags]
    tags += [check_tag(t, "attributes") for t in edit.set_attributes]
    removed = {check_tag(t) for t in edit.remove_tags}
    kept = sorted({t for t in tags if t not in removed})
    if len(kept) > MAX_TAGS:
        raise UsageError(f"tags: more than {MAX_TAGS} on one entity")

    properties = _merged(current.properties, edit.replace_properties, edit.set_properties, edit.unset_properties,
                         check_property_key, "properties")
    custom = _merged(current.custom_properties, edit.replace_custom, edit.set_custom, edit.unset_custom,
                     check_custom_key, "customProperties")
    attributes = {t: a for t, a in current.attributes.items() if t in kept}
    for tag, values in edit.set_attributes.items():
        checked = check_attributes(tag, values)
        if checked:
            attributes[tag.strip()] = checked
        else:
            attributes.pop(tag.strip(), None)
    description = current.description if isinstance(edit.description, _Keep) else \
        check_text(edit.description, "description", MAX_DESCRIPTION_CHARS, one_line=False)
    name = current.display_name if isinstance(edit.display_name, _Keep) else \
        check_text(edit.display_name, "name", MAX_NAME_CHARS, one_line=True)
    return Annotation(current.identity, tuple(kept), description, name, properties, custom, attributes)


def _merged(current: Mapping[str, str], replace: Mapping[str, str] | None, updates: Mapping[str, str],
            unset: Sequence[str], check_key: Callable[[str, str], str], field: str) -> dict[str, str]:
    if replace is not None and not isinstance(replace, Mapping):
        raise UsageError(f"{field}: an object of key -> value")
    merged = dict(current) if replace is None else {}
    for key, value in [*(replace or {}).items(), *updates.items()]:
        merged[check_key(key, field)] = check_value(value, f"{field}: {key}")
    for key in unset:
        merged.pop(key, None)
    if len(merged) > MAX_PROPERTIES:
        raise UsageError(f"{field}: more than {MAX_PROPERTIES} on one entity")
    return merged


def changes(before: Annotation, after: Annotation, actor: str, at: datetime) -> list[Change]:
    """One Change per field that differs, in a fixed order (tags, description, name, then keys)."""
    found: list[Change] = []

    def add(field: str, old: Any, new: Any) -> None:
        if old != new:
            found.append(Change(after.identity, actor, at, field, old, new))

    add("tags", list(before.tags), list(after.tags))
    add("description", before.description, after.description)
    add("name", before.display_name, after.display_name)
    for prefix, old_map, new_map in (("properties", before.properties, after.properties),
                                     ("customProperties", before.custom_properties, after.custom_properties),
                                     ("attributes", before.attributes, after.attributes)):
        for key in sorted(set(old_map) | set(new_map)):
            old, new = old_map.get(key), new_map.get(key)
            add(f"{prefix}.{key}", dict(old) if isinstance(old, Mapping) else old,
                dict(new) if isinstance(new, Mapping) else new)
    return found


# -- the element fields -----------------------------------------------------------------------------

def field_key(key: str) -> str:
    """A property key as the tail of a field name (`up_<key>`, `cp_<ns.key>`): other characters `_`."""
    return _FIELD_CHARS.sub("_", key)


def element_fields(annotation: Annotation) -> dict[str, Any]:
    """The fields the annotation puts on its element document: searchable (`tags`,
    `userDescription`, `displayName`, `up_<key>`, `cp_<namespace>.<key>`) and the whole as JSON.
    An empty annotation puts none."""
    if annotation.empty:
        return {}
    fields: dict[str, Any] = {JSON_FIELD: json.dumps(annotation.as_dict(), ensure_ascii=False, sort_keys=True)}
    if annotation.tags:
        fields[TAGS_FIELD] = list(annotation.tags)
    if annotation.description:
        fields[DESCRIPTION_FIELD] = annotation.description
    if annotation.display_name:
        fields[NAME_FIELD] = annotation.display_name
    for key, value in annotation.properties.items():
        fields[USER_PROPERTY_PREFIX + field_key(key)] = value
    for key, value in annotation.custom_properties.items():
        fields[CUSTOM_PROPERTY_PREFIX + field_key(key)] = value
    return fields


def projection_update(identity: str, before: Annotation, after: Annotation) -> dict[str, Any]:
    """An atomic update moving an element document from `before`'s fields to `after`'s: fields
    `after` has set, the others removed (`{"set": null}`): the fixed ones always, the property
    fields `before` put there."""
    new = element_fields(after)
    gone = (set(element_fields(before)) | set(_FIXED_FIELDS)) - set(new)
    update: dict[str, Any] = {"identity": identity}
    update.update({field: {"set": value} for field, value in new.items()})
    update.update({field: {"set": None} for field in sorted(gone)})
    return update


def stored_annotation(doc: Mapping[str, Any]) -> Annotation | None:
    """The annotation an element document carries (its JSON field), if any."""
    text = doc.get(JSON_FIELD)
    if not isinstance(text, str):
        return None
    try:
        return annotation_from_dict(json.loads(text))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def is_projection_field(field: str) -> bool:
    """Whether an element document's field is part of the annotation's copy (display code shows
    the annotation from its JSON, not these)."""
    return field in (TAGS_FIELD, DESCRIPTION_FIELD, NAME_FIELD, JSON_FIELD) or \
        field.startswith((USER_PROPERTY_PREFIX, CUSTOM_PROPERTY_PREFIX))


# -- search ---------------------------------------------------------------------------------------

#: What a field of a user's query also searches: a description is the extractor's (a Hive
#: comment) or a person's, and `description:*churn*` finds either.
SEARCH_ALTERNATIVES: Mapping[str, tuple[str, ...]] = {"description": ("description", DESCRIPTION_FIELD)}


def widened(query: Query, alternatives: Mapping[str, tuple[str, ...]] = SEARCH_ALTERNATIVES) -> Query:
    """`query` with each clause on a field of `alternatives` replaced by a group of the same
    value on each alternative field, OR-ed (`description:x` -> `(description:x OR
    userDescription:x)`); modifiers, conjunctions and boosts kept; groups without a field
    rewritten inside."""
    return Query(tuple(_widened_clause(clause, alternatives) for clause in query.clauses))


def _widened_clause(clause: Clause, alternatives: Mapping[str, tuple[str, ...]]) -> Clause:
    if clause.field is None:
        if isinstance(clause.node, Group):
            return dataclasses.replace(clause, node=dataclasses.replace(
                clause.node, query=widened(clause.node.query, alternatives)))
        return clause
    fields = alternatives.get(clause.field)
    if not fields:
        return clause
    inner = tuple(Clause(clause.node, field, conjunction="OR" if n else None) for n, field in enumerate(fields))
    return dataclasses.replace(clause, field=None, node=Group(Query(inner)))
