"""Annotations on Solr: the records that are the truth, their history, and the copy on the
element documents that search reads.

Kept apart from extracted metadata: an annotation is a record of the runs core (kind
ANNOTATION, one per entity, keyed by the entity's identity), and each change a record of its
own (kind ANNOTATION_CHANGE). Extractors rewrite element documents whole, flag them deleted and
purge them; none of that touches these records, and purge removes only run records.

Search needs the annotation on the element document (`tags:pii`, `description:*churn*`), so it
is projected there (rules.element_fields) and carried over by the one writer: `Carryover` is
loaded when an IndexWriter starts and put into every element document it writes (a dict lookup
per element), and after each flush the annotations changed since it was loaded (with a margin)
are projected again, so an edit made while a run was writing is never lost to it. The cost and
the alternatives are in docs/features/annotations.md.

This module imports no Solr client (the writer in navd/index/client.py imports it): the index
is passed in and used through its methods.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from navd.annotations.rules import Annotation, Change, annotation_from_dict, changes, element_fields, projection_update
from navd.errors import SolrError, UsageError
from navd.index.documents import parse_solr_date, solr_date
from navd.index.filters import term_filter
from navd.logs import get_logger

if TYPE_CHECKING:
    from navd.index.client import SolrIndex

log = get_logger("navd.annotations")

ANNOTATION_KIND = "ANNOTATION"
CHANGE_KIND = "ANNOTATION_CHANGE"
#: a classification defined by name (Atlas' POST types/typedefs), whether or not an entity has it
DEFINITION_KIND = "CLASSIFICATION_DEFINITION"
COMPONENT = "annotations"
TARGET = "annotation_target"
JSON = "annotation_json"
TIME = "annotation_time"
#: how far back of its load time a writer projects annotations again: a record written just
#: before the load may not have been visible to it yet (soft commits, clocks of two hosts)
CARRY_MARGIN = timedelta(minutes=5)
#: attempts of an edit that lost a race with another edit of the same entity
_ATTEMPTS = 10
_IDS = 2000


def record_identity(target: str) -> str:
    return f"annotation|{target}"


def _annotation(doc: Mapping[str, Any]) -> Annotation:
    return annotation_from_dict(json.loads(str(doc[JSON])))


# -- reads -------------------------------------------------------------------------------------

def current(index: SolrIndex, target: str) -> tuple[Annotation, int | None]:
    """The annotation of `target` and its record's Solr version (None: no record yet), by
    real-time get (sees the last edit before any commit)."""
    docs = index.get("runs", [record_identity(target)])
    if not docs:
        return Annotation(target), None
    return _annotation(docs[0]), int(docs[0]["_version_"])


def annotations_of(index: SolrIndex, targets: Iterable[str]) -> dict[str, Annotation]:
    """The non-empty annotations of `targets`, by identity."""
    found: dict[str, Annotation] = {}
    ids = [record_identity(t) for t in targets]
    for chunk in [ids[i:i + _IDS] for i in range(0, len(ids), _IDS)]:
        for doc in index.get("runs", chunk):
            annotation = _annotation(doc)
            if not annotation.empty:
                found[annotation.identity] = annotation
    return found


def history(index: SolrIndex, target: str) -> list[Change]:
    """Every recorded change of `target`'s annotation, oldest first (a change record's identity
    sorts by its time, then its place in its edit)."""
    return [Change(str(d[TARGET]), str(d.get("change_actor", "")), parse_solr_date(d[TIME]), str(d["change_field"]),
                   json.loads(d["change_before"]), json.loads(d["change_after"]))
            for d in index.scan("runs", f"kind:{CHANGE_KIND}", filters=[term_filter(TARGET, target)])]


def tag_names(index: SolrIndex) -> list[str]:
    """Every tag some entity has, spelt as written (the element documents' `tags` field is
    analysed: lower case). Read from the annotation records, one per annotated entity."""
    names: set[str] = set()
    for doc in index.scan("runs", f"kind:{ANNOTATION_KIND}", fl=f"identity,{JSON}"):
        names.update(_annotation(doc).tags)
    return sorted(names)


def classification_definitions(index: SolrIndex) -> dict[str, str | None]:
    """Every classification people defined (Atlas' classification types made before any entity
    has the tag): name -> description."""
    return {str(doc[TARGET]): json.loads(str(doc[JSON])).get("description")
            for doc in index.scan("runs", f"kind:{DEFINITION_KIND}", fl=f"identity,{TARGET},{JSON}")}


def define_classification(index: SolrIndex, name: str, description: str | None, actor: str) -> None:
    """Record the classification `name` (a tag's name, checked by the caller) and its
    description; defining it again replaces the description."""
    at = datetime.now(UTC)
    index.add("runs", [{"identity": f"classification-definition|{name}", "kind": DEFINITION_KIND,
                        "component": COMPONENT, TARGET: name, TIME: solr_date(at), "change_actor": actor,
                        JSON: json.dumps({"name": name, "description": description}, ensure_ascii=False)}])
    index.commit("runs", soft=True)


# -- writes ------------------------------------------------------------------------------------

def annotation_record(annotation: Annotation, at: datetime, version: int | None) -> dict[str, Any]:
    """The truth record; `_version_` makes the write fail (409) if another edit came first."""
    return {"identity": record_identity(annotation.identity), "kind": ANNOTATION_KIND, "component": COMPONENT,
            TARGET: annotation.identity, JSON: json.dumps(annotation.as_dict(), ensure_ascii=False, sort_keys=True),
            TIME: solr_date(at), "_version_": version if version is not None else -1}


def change_record(change: Change, number: int) -> dict[str, Any]:
    return {"identity": f"annotation-change|{change.identity}|{solr_date(change.at)}|{number:04d}|"
                        f"{uuid.uuid4().hex[:8]}",
            "kind": CHANGE_KIND, "component": COMPONENT, TARGET: change.identity, TIME: solr_date(change.at),
            "change_actor": change.actor, "change_field": change.field,
            "change_before": json.dumps(change.before, ensure_ascii=False),
            "change_after": json.dumps(change.after, ensure_ascii=False)}


def write(index: SolrIndex, edit: Callable[[Annotation], Annotation], target: str,
          actor: str) -> tuple[Annotation, list[Change]]:
    """Apply `edit` (the annotation before -> after) to `target`'s annotation and record
    it: the truth record (guarded by its version: a concurrent edit of the same entity makes
    this one read again and retry), one change record per changed field, then the copy on the
    element document. Returns the new annotation and the changes (none: nothing was written)."""
    for _attempt in range(_ATTEMPTS):
        before, version = current(index, target)
        after = edit(before)
        at = datetime.now(UTC)
        found = changes(before, after, actor, at)
        if not found:
            return after, []
        docs = [annotation_record(after, at, version), *(change_record(c, n) for n, c in enumerate(found))]
        try:
            index.add("runs", docs)  # the truth record first: a conflict on it writes nothing
        except SolrError as exc:
            if exc.status == 409:
                continue
            raise
        index.commit("runs", soft=True)
        project(index, [(before, after)])
        return after, found
    raise UsageError(f"annotation of {target}: edited by others {_ATTEMPTS} times meanwhile; try again")


def project(index: SolrIndex, pairs: Iterable[tuple[Annotation, Annotation]], *, commit: bool = True) -> int:
    """Put `after`'s fields on each element document (removing those `before` put there): atomic
    updates guarded by `_version_: 1`, so an entity not indexed (yet) gets no bare document
    (Solr skips it; the writer carries the annotation into it when it is written)."""
    updates = [{**projection_update(after.identity, before, after), "_version_": 1} for before, after in pairs]
    if not updates:
        return 0
    body = json.dumps(updates, ensure_ascii=False).encode()
    index.post_update("elements", body, params={"failOnVersionConflicts": "false"})
    if commit:
        index.commit("elements", soft=True)
    return len(updates)


# -- the writer's carry-over ---------------------------------------------------------------------

class Carryover:
    """The annotations an IndexWriter puts into the element documents it writes (module
    docstring): read on the first document (a writer that never writes asks nothing), projected
    again by `reproject()` after each flush."""

    def __init__(self, index: SolrIndex) -> None:
        self.index = index
        self._annotations: dict[str, Annotation] = {}
        self._fields: dict[str, dict[str, Any]] | None = None
        self.loaded_at: datetime | None = None

    @property
    def fields(self) -> Mapping[str, Mapping[str, Any]]:
        """identity -> the fields its annotation puts on its element document."""
        if self._fields is None:
            started = datetime.now(UTC)
            found = (_annotation(d) for d in self.index.scan("runs", f"kind:{ANNOTATION_KIND}",
                                                              fl=f"identity,{JSON}", page_size=5000))
            self._annotations = {a.identity: a for a in found if not a.empty}
            self._fields = {identity: element_fields(a) for identity, a in self._annotations.items()}
            self.loaded_at = started
        return self._fields

    def reproject(self) -> int:
        """Project again the annotations changed since this was loaded (less the margin): call
        after the writer's documents are acknowledged. Returns how many."""
        if self._fields is None or self.loaded_at is None:
            return 0  # nothing written with it
        started = datetime.now(UTC)
        since = solr_date(self.loaded_at - CARRY_MARGIN)
        changed = [_annotation(d) for d in self.index.scan(
            "runs", f"kind:{ANNOTATION_KIND}", fl=f"identity,{JSON}",
            filters=[f"{TIME}:[{since} TO *]"], page_size=5000)]
        pairs = [(self._annotations.get(a.identity, Annotation(a.identity)), a) for a in changed]
        written = project(self.index, pairs, commit=False)
        for annotation in changed:
            if annotation.empty:
                self._annotations.pop(annotation.identity, None)
                self._fields.pop(annotation.identity, None)
            else:
                self._annotations[annotation.identity] = annotation
                self._fields[annotation.identity] = element_fields(annotation)
        self.loaded_at = started
        return written
