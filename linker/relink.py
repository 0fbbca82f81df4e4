"""Rewriting one unlinked relation document onto the elements its endpoints resolve to.

Pure: documents in, documents out. The incremental linker and the Spark job both call these, so
they produce byte-for-byte the same relations. Documents are read through the typed views and
built by navd.index.documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from navd.index.documents import endpoint_field, relinked_document

from .aliases import AliasRules, Candidate, candidate_elements


class Target(NamedTuple):
    """The indexed element an endpoint resolved to: what the relation records of it
    (`documents.LinkTarget`). A named tuple, not a StoredElement: a pass makes one per
    relation, and the frozen dataclass's constructor cost several times as much."""

    id: str
    qualified_name: str
    type: str
    source_type: str


#: Per end: (end, its Linked, QualifiedName, SourceType and Type fields).
_END_FIELDS = tuple((end, *(endpoint_field(end, suffix) for suffix in ("Linked", "QualifiedName", "SourceType", "Type")))
                    for end in (1, 2))


def endpoint_candidates(doc: Mapping[str, Any], rules: AliasRules) -> dict[int, list[Candidate]]:
    """Candidate elements, best first, of each unlinked endpoint of a relation.

    Reads the document's fields directly rather than through `StoredRelation`: this runs once per
    relation of a pass, and the typed view was a third of its cost."""
    found: dict[int, list[Candidate]] = {}
    for end, linked, name_field, source_field, type_field in _END_FIELDS:
        if doc.get(linked) is not False:
            continue
        name, source = doc.get(name_field), doc.get(source_field)
        if not name or not source:
            continue
        found[end] = candidate_elements(str(name), str(source), str(doc.get(type_field) or "") or None, rules)
    return found


def relink(doc: Mapping[str, Any], targets: Mapping[int, Target]) -> dict[str, Any] | None:
    """The linked relation document (see `documents.relinked_document`), or None when no endpoint
    resolved. The caller writes it and then deletes the old document if the identity changed."""
    if not targets:
        return None
    return relinked_document(doc, targets)


def choose(candidates: Mapping[int, list[Candidate]], found: Mapping[str, Target]) -> dict[int, Target]:
    """The first indexed (non-stub) candidate of each endpoint; `found` (by identity) holds only
    real elements."""
    chosen: dict[int, Target] = {}
    for end, ends_candidates in candidates.items():
        for candidate in ends_candidates:
            target = found.get(candidate.id)
            if target is not None:
                chosen[end] = target
                break
    return chosen
