"""Annotations as the CLI (`navd annotate`, `navd entity`), navd's API (/api/annotations),
Navigator's PUT entities/{id} and Atlas' classifications ask for them. Entities are named by
identity; `resolve` turns what a person types (as `navd entity` takes it) into one."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from navd.annotations import store
from navd.annotations.rules import KEEP, MAX_DESCRIPTION_CHARS, Annotation, Change, Edit, apply, check_tag, check_text
from navd.errors import EntityNotFound, UsageError
from navd.index.client import SolrIndex
from navd.index.lookup import Scope, resolve_one
from navd.names import shown


class AnnotationService:
    """Reads and edits of annotations on one Solr (`index`: a write-capable client for edits)."""

    def __init__(self, index: SolrIndex) -> None:
        self.index = index

    # -- names -----------------------------------------------------------------------------------

    def resolve(self, entity: str, scope: Scope = Scope()) -> dict[str, Any]:
        """The element document `entity` stands for (identity, qualifiedName, a shorter spelling):
        EntityNotFound, AmbiguousEntity as `navd entity`."""
        return resolve_one(self.index, entity, scope)

    def require_indexed(self, identity: str) -> dict[str, Any]:
        """The element with exactly this identity; EntityNotFound otherwise (Navigator's and
        Atlas' routes name entities by identity only)."""
        # Solr's real-time get splits its ids at commas: `a,b` would answer a's document
        docs = [d for d in self.index.get("elements", [identity]) if d.get("identity") == identity] if identity else []
        if not docs:
            raise EntityNotFound(f"no entity with identity {shown(identity)}")
        return docs[0]

    # -- reads -----------------------------------------------------------------------------------

    def get(self, identity: str) -> Annotation:
        """The annotation of `identity` (empty when nobody wrote one)."""
        return store.current(self.index, identity)[0]

    def get_many(self, identities: Collection[str]) -> dict[str, Annotation]:
        """The non-empty annotations of `identities`."""
        return store.annotations_of(self.index, identities)

    def tag_names(self) -> list[str]:
        """Every tag in use (Atlas' classification types), as written."""
        return store.tag_names(self.index)

    def classification_definitions(self) -> dict[str, str | None]:
        """Classifications defined by name (name -> description), whether or not an entity has one."""
        return store.classification_definitions(self.index)

    def define_classification(self, name: str, description: str | None, actor: str) -> str:
        """Define the classification `name` (a tag's name, checked as tags are) with a
        description; returns the name as kept."""
        kept = check_tag(name, "classificationDefs: name")
        store.define_classification(self.index, kept, check_text(
            description, f"classificationDefs: description of {kept}", MAX_DESCRIPTION_CHARS, one_line=False),
            actor)
        return kept

    def history(self, identity: str) -> list[Change]:
        """Every recorded change of `identity`'s annotation, oldest first."""
        return store.history(self.index, identity)

    # -- edits (each returns the annotation after it; a no-op records nothing) ----------------------

    def edit(self, identity: str, change: Edit, actor: str) -> tuple[Annotation, list[Change]]:
        """Apply `change` and record what it changed (UsageError naming the field for a bad value)."""
        apply(Annotation(identity), change)  # refuse bad input before anything is read or written
        return store.write(self.index, lambda current: apply(current, change), identity, actor)

    def add_tags(self, identity: str, tags: Collection[str], actor: str) -> Annotation:
        return self.edit(identity, Edit(add_tags=tuple(tags)), actor)[0]

    def remove_tags(self, identity: str, tags: Collection[str], actor: str) -> Annotation:
        return self.edit(identity, Edit(remove_tags=tuple(tags)), actor)[0]

    def set_description(self, identity: str, description: str | None, actor: str) -> Annotation:
        return self.edit(identity, Edit(description=description), actor)[0]

    def set_name(self, identity: str, name: str | None, actor: str) -> Annotation:
        return self.edit(identity, Edit(display_name=name), actor)[0]

    def set_properties(self, identity: str, properties: Mapping[str, str], actor: str,
                       unset: Collection[str] = ()) -> Annotation:
        return self.edit(identity, Edit(set_properties=dict(properties), unset_properties=tuple(unset)), actor)[0]

    def set_custom_properties(self, identity: str, properties: Mapping[str, str], actor: str,
                              unset: Collection[str] = ()) -> Annotation:
        """Navigator's managed metadata: keys `namespace.key`."""
        return self.edit(identity, Edit(set_custom=dict(properties), unset_custom=tuple(unset)), actor)[0]

    def add_classification(self, identity: str, name: str, attributes: Mapping[str, Any], actor: str) -> Annotation:
        """Atlas' classification: the tag `name`, with `attributes` (replacing those it had)."""
        return self.edit(identity, Edit(set_attributes={name: dict(attributes)}, add_tags=(name,)), actor)[0]

    def remove_classification(self, identity: str, name: str, actor: str) -> Annotation:
        return self.remove_tags(identity, (name,), actor)


def navigator_edit(body: Mapping[str, Any]) -> Edit:
    """Navigator's PUT entities/{id} body (as Hue sends it: `name`, `description`, `tags`,
    `properties`, `customProperties`, each optional) as an Edit: a key present replaces that
    part whole, a key absent keeps it; null clears. Other keys (the entity's own fields, which
    Hue sends back as it read them) are not people's metadata and are ignored."""
    def mapping(key: str) -> Mapping[str, Any] | None:
        value = body.get(key)
        if value is None:
            return {} if key in body else None
        if not isinstance(value, Mapping):
            raise UsageError(f"{key}: an object, not {type(value).__name__}")
        return value

    tags = body.get("tags")
    if tags is not None and not isinstance(tags, list):
        raise UsageError(f"tags: a list of strings, not {type(tags).__name__}")
    custom = mapping("customProperties")
    flat_custom: dict[str, str] | None = None
    if custom is not None:
        flat_custom = {}
        for namespace, values in custom.items():
            if values is None:
                continue
            if not isinstance(values, Mapping):
                raise UsageError(f"customProperties: {str(namespace)[:40]}: an object of key -> value")
            flat_custom.update({f"{namespace}.{key}": value for key, value in values.items()})
    properties = mapping("properties")
    return Edit(replace_tags=None if "tags" not in body else tuple(tags or ()),
                description=body["description"] if "description" in body else KEEP,
                display_name=body["name"] if "name" in body else KEEP,
                replace_properties=None if properties is None else dict(properties),
                replace_custom=flat_custom)
