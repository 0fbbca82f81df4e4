"""The queries of linker/store.py: each as Solr reads it, a date or a range staying one bound."""

from __future__ import annotations

import threading
import time
from typing import Any

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


@pytest.mark.parametrize("readers", [1, 2, 3])
def test_ranges_read_ahead_come_back_in_order_with_bounded_reads(readers: int) -> None:
    """However many reads run at once, the ranges come back in their order, never more than
    `readers` reads are in flight, and a caller that stops early leaves no read running."""
    lock = threading.Lock()
    running, most, started = 0, 0, []

    def read(identity_range: str) -> list[dict[str, Any]]:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            started.append(identity_range)
        time.sleep(0.02 * (3 - int(identity_range) % 3))  # later ranges finish first
        with lock:
            running -= 1
        return [{"identity": identity_range}]

    ranges = [str(i) for i in range(9)]
    assert [docs[0]["identity"] for docs in store.read_ahead(read, ranges, readers)] == ranges
    assert most <= readers
    started.clear()
    early = store.read_ahead(read, ranges, readers)
    assert next(early) == [{"identity": "0"}]
    early.close()
    assert running == 0
    assert len(started) <= readers + 1  # the first range and `readers` ahead of it, no more
