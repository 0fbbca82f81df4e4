"""Filters built from values (identities, paths) with Solr's own parsers for them: a terms list,
one exact term, a prefix. A value given so is never read as query syntax.

The stores of the features (navd/lineage/store.py, navd/taint/store.py, navd/usage/store.py, ...)
build their queries from these and from navd/index/query_syntax.py's `quote`, `escape` and
`range_bound`, which put a value into the Lucene syntax itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from navd.index.documents import solr_date

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


def by_time_filter(field: str, moment: datetime) -> str:
    """A filter matching documents whose date `field` is at or before `moment`, and those with
    no such date (a relation no execution dated: structure, which counts from always). On the
    field's docValues; the same moment gives the same filter, which Solr caches."""
    return f"{field}:[* TO {solr_date(moment)}] OR (*:* -{field}:[* TO *])"
