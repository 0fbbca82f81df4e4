"""Finding elements by what users type: an identity, a qualified name, or a path alias of one."""

from __future__ import annotations

from typing import Any

from navd.index.client import SolrIndex
from navd.names import is_path_name, lookup_name, path_qualified_name


def entity_candidates(name: str) -> set[str]:
    """The identities or qualified names `name` may stand for: itself, its lower-case spelling
    (Hive names are lower case) and its normalised path. InvalidName (one line) for a name no
    element can have: not UTF-8, or a file system URI that does not parse (`hdfs://h:99999/x`)."""
    candidates = {lookup_name(name)}
    if "@" in name and "://" not in name:
        candidates.add(name.lower())  # Hive names are lower case
    if is_path_name(name):
        candidates.add(path_qualified_name(name))
    return candidates


def find_entity(index: SolrIndex, name: str) -> list[dict[str, Any]]:
    """Elements whose identity or qualifiedName is `name` (or its normalised spelling)."""
    terms = " OR ".join(solr_quote(c) for c in sorted(entity_candidates(name)))
    body = index.search("elements", f"identity:({terms}) OR qualifiedName:({terms})", rows=50)
    return list(body["response"]["docs"])


def solr_quote(value: str) -> str:
    """A Lucene phrase: the value in double quotes, with backslashes and quotes escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
