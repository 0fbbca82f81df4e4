"""Pieces of Solr queries built from values: identities, names people typed, paths.

A value reaches Solr quoted, escaped or as the list of a terms filter, never as query syntax.
The stores of the features (navd/lineage/solr_store.py, navd/taint/store.py, navd/usage/store.py,
...) build their queries from these pieces; what a user types as a query is checked by
navd/index/query_syntax.py instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: the characters Lucene's standard parser reads as syntax (and whitespace, which ends a term)
_LUCENE_SPECIAL = re.compile(r'([\\+\-!():^\[\]"{}~*?|&/\s])')


def terms_filter(field: str, ids: Iterable[str]) -> str:
    """A filter matching documents whose `field` is one of `ids` (Solr's terms parser: one
    query for hundreds of ids, where a boolean query would hit maxBooleanClauses)."""
    return f"{{!terms f={field}}}{','.join(ids)}"


def term_filter(field: str, value: str) -> str:
    """A filter matching documents whose `field` is exactly `value`, read as it is (no analysis,
    no syntax: a path with spaces or colons needs no escaping)."""
    return f"{{!term f={field}}}{value}"


def prefix_filter(field: str, prefix: str) -> str:
    """A filter matching documents whose `field` starts with `prefix`, read as it is."""
    return f"{{!prefix f={field}}}{prefix}"


def solr_quote(value: str) -> str:
    """A Lucene phrase: the value in double quotes, with backslashes and quotes escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def escape_term(text: str) -> str:
    """`text` as one Lucene term: every character the parser reads as syntax escaped."""
    return _LUCENE_SPECIAL.sub(r"\\\1", text)


def wildcard(pattern: str) -> str:
    """A Lucene wildcard term: every character literal (escaped) but '*'."""
    return "*".join(escape_term(part) for part in pattern.split("*"))
