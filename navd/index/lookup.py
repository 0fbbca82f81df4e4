"""Finding elements by what users type: an identity, a qualified name, or a path alias of one."""

from __future__ import annotations

from typing import Any

from navd.index.client import SolrIndex
from navd.model import InvalidName, path_qualified_name


def entity_candidates(name: str) -> set[str]:
    """The identities or qualified names `name` may stand for: itself, its lower-case spelling
    (Hive names are lower case) and its normalised path."""
    candidates = {name}
    if "@" in name and "://" not in name:
        candidates.add(name.lower())  # Hive names are lower case
    if "://" in name or name.startswith("file:"):
        try:
            candidates.add(path_qualified_name(name))
        except InvalidName:
            pass
    return candidates


def find_entity(index: SolrIndex, name: str) -> list[dict[str, Any]]:
    """Elements whose identity or qualifiedName is `name` (or its normalised spelling)."""
    terms = " OR ".join(solr_quote(c) for c in sorted(entity_candidates(name)))
    body = index.search("elements", f"identity:({terms}) OR qualifiedName:({terms})", rows=50)
    return list(body["response"]["docs"])


def solr_quote(value: str) -> str:
    """A Lucene phrase: the value in double quotes, with backslashes and quotes escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
