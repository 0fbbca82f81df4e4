"""Rewriting one unlinked relation document onto the elements its endpoints resolve to.

Pure: documents in, documents out. The incremental linker and the Spark job both call these, so
they produce byte-for-byte the same relations. Documents are read through the typed views and
built by navd.index.documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from navd.index.documents import StoredElement, StoredRelation, relinked_document

from .aliases import AliasRules, candidate_ids

#: The indexed element an endpoint resolved to.
Target = StoredElement


def endpoint_candidates(doc: Mapping[str, Any], rules: AliasRules) -> dict[int, list[str]]:
    """Candidate element identities, best first, of each unlinked endpoint of a relation."""
    relation = StoredRelation.from_doc(doc)
    found: dict[int, list[str]] = {}
    for end in relation.unlinked_ends:
        endpoint = relation.endpoint(end)
        if not endpoint.qualified_name or not endpoint.source_type:
            continue
        found[end] = candidate_ids(endpoint.qualified_name, endpoint.source_type, endpoint.type or None, rules)
    return found


def relink(doc: Mapping[str, Any], targets: Mapping[int, Target]) -> dict[str, Any] | None:
    """The linked relation document (see `documents.relinked_document`), or None when no endpoint
    resolved. The caller writes it and then deletes the old document if the identity changed."""
    if not targets:
        return None
    return relinked_document(doc, targets)


def choose(candidates: Mapping[int, list[str]], found: Mapping[str, Target]) -> dict[int, Target]:
    """The first indexed (non-stub) candidate of each endpoint; `found` holds only real elements."""
    chosen: dict[int, Target] = {}
    for end, ids in candidates.items():
        for candidate in ids:
            if candidate in found:
                chosen[end] = found[candidate]
                break
    return chosen
