"""The queries of linker/store.py: each as Solr reads it, a date or a range staying one bound."""

from __future__ import annotations

import pytest

from navd.index.query_syntax import Range, parse
from navd.linker import store


@pytest.mark.parametrize(("query", "expected"), [
    (store.UNLINKED, "unlinked:true"),
    (store.indexed_since("2026-01-01T00:00:00Z-60SECONDS"), "lastIndexed:[2026-01-01T00:00:00Z-60SECONDS TO *]"),
    (store.end_unlinked(1), "endpoint1Linked:false"),
    (store.end_unlinked(2), "endpoint2Linked:false"),
    (store.in_identity_range('["08" TO "10"}'), 'identity:["08" TO "10"}'),
    (store.in_identity_range('[* TO "08"}', cached=False), '{!cache=false}identity:[* TO "08"}'),
    (store.terms("endpoint2Id", ["a", "b"]), "{!terms f=endpoint2Id cache=false}a,b"),
    (store.terms_param("identity", "targets"), "{!terms f=identity cache=false separator=' ' v=$targets}"),
])
def test_each_query_as_solr_reads_it(query: str, expected: str) -> None:
    assert query == expected


def test_a_since_that_is_not_a_plain_date_stays_one_bound() -> None:
    query = parse(store.indexed_since("x TO *] OR kind:*"))
    assert len(query.clauses) == 1
    node = query.clauses[0].node
    assert isinstance(node, Range) and node.low == "x TO *] OR kind:*" and node.high is None
