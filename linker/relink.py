"""Rewriting one unlinked relation document onto the elements its endpoints resolve to.

Pure: documents in, documents out. The incremental linker and the Spark job both call these, so
they produce byte-for-byte the same relations.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from navd import names

from .aliases import AliasRules, candidate_ids

# Solr-maintained or derived fields that must not be copied into the rewritten document.
_DROP = frozenset({"_version_", "lastIndexed", "score"})
#: Element fields the linker reads.
ELEMENT_FIELDS = "identity,qualifiedName,type,sourceType,properties"


@dataclasses.dataclass(frozen=True)
class Target:
    """The indexed element an endpoint resolved to."""

    identity: str
    qualified_name: str
    type: str
    source_type: str

    @classmethod
    def of(cls, doc: Mapping[str, Any]) -> Target:
        return cls(str(doc["identity"]), str(doc["qualifiedName"]), str(doc["type"]), str(doc["sourceType"]))


def unlinked_ends(doc: Mapping[str, Any]) -> list[int]:
    return [end for end in (1, 2) if doc.get(f"endpoint{end}Linked") is False]


def endpoint_candidates(doc: Mapping[str, Any], rules: AliasRules) -> dict[int, list[str]]:
    """Candidate element identities, best first, of each unlinked endpoint of a relation."""
    found: dict[int, list[str]] = {}
    for end in unlinked_ends(doc):
        name = doc.get(f"endpoint{end}QualifiedName")
        source = doc.get(f"endpoint{end}SourceType")
        if not name or not source:
            continue
        found[end] = candidate_ids(str(name), str(source), doc.get(f"endpoint{end}Type"), rules)
    return found


def relation_identity(doc: Mapping[str, Any]) -> str:
    """The identity of a relation document, as `Relation.identity` computes it."""
    return names.relation_identity(str(doc["type"]), str(doc["endpoint1Id"]), str(doc["endpoint2Id"]),
                                   str(doc.get("discriminator", "")))


def relink(doc: Mapping[str, Any], targets: Mapping[int, Target]) -> dict[str, Any] | None:
    """The linked relation document, or None when no endpoint resolved.

    A resolved endpoint takes the element's identity, qualifiedName, type and source type (so
    lineage, which follows endpoint ids, walks through it) and is marked linked; the identity is
    recomputed from the new endpoints, exactly as the extractor would have computed it had it
    known the element. The caller writes it and then deletes the old document if the identity
    changed.
    """
    if not targets:
        return None
    new = {k: v for k, v in doc.items() if k not in _DROP}
    for end, target in targets.items():
        new[f"endpoint{end}Id"] = target.identity
        new[f"endpoint{end}QualifiedName"] = target.qualified_name
        new[f"endpoint{end}Type"] = target.type
        new[f"endpoint{end}SourceType"] = target.source_type
        new[f"endpoint{end}Linked"] = True
    new["unlinked"] = not (new.get("endpoint1Linked", True) and new.get("endpoint2Linked", True))
    new["identity"] = relation_identity(new)
    return new


def choose(candidates: Mapping[int, list[str]], found: Mapping[str, Target]) -> dict[int, Target]:
    """The first indexed (non-stub) candidate of each endpoint; `found` holds only real elements."""
    chosen: dict[int, Target] = {}
    for end, ids in candidates.items():
        for candidate in ids:
            if candidate in found:
                chosen[end] = found[candidate]
                break
    return chosen


def needs_write(doc: Mapping[str, Any], targets: Mapping[int, Target]) -> bool:
    """False when every resolved endpoint already points at its element and is marked linked
    (cannot happen for an endpoint still `endpointNLinked: false`, kept for safety)."""
    return any(doc.get(f"endpoint{end}Id") != t.identity or doc.get(f"endpoint{end}Linked") is not True
               for end, t in targets.items())
