"""The catalog's Solr reads: an operation's executions (INSTANCE_OF relations from the template),
the stored relations between elements, and what the elements are grouped by (the distinct
values of a derived key, the counts of a field)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any, TypeVar

from navd.index.client import SolrIndex, batches
from navd.index.documents import display_document, endpoint_field
from navd.index.filters import terms_filter
from navd.index.query_syntax import escape
from navd.model import ElementType, RelationType

_INSTANCE_OF = f"type:{RelationType.INSTANCE_OF.value}"
_EXECUTION = ElementType.OPERATION_EXECUTION.value
#: element ids per terms filter of the relations between elements
_ENDS_PER_REQUEST = 500
K = TypeVar("K")


def templates_of(index: SolrIndex, execution: str) -> list[str]:
    """The operations (templates) the execution `execution` is an instance of."""
    return [str(doc[endpoint_field(1, "Id")]) for doc in index.scan(
        "relations", "*:*", fl=endpoint_field(1, "Id"),
        filters=[_INSTANCE_OF, terms_filter(endpoint_field(2, "Id"), [execution])])]


def instances_of(index: SolrIndex, template: str) -> list[str]:
    """The executions of the operation `template`, sorted by identity."""
    return sorted({str(doc[endpoint_field(2, "Id")]) for doc in index.scan(
        "relations", "*:*", fl=endpoint_field(2, "Id"),
        filters=[_INSTANCE_OF, terms_filter(endpoint_field(1, "Id"), [template])])})


def execution_page(index: SolrIndex, executions: Collection[str], *, rows: int,
                   start: int) -> tuple[int, tuple[dict[str, Any], ...]]:
    """(how many, the page as users see it) of `executions`, newest first, executions with no
    start time last, ties by identity. A POST with the ids as one terms filter: thousands of
    runs of a daily job fit."""
    body = index.search("elements", "*:*", rows=rows, start=start, sort="started desc, identity asc",
                        filters=[f"type:{_EXECUTION}", terms_filter("identity", executions)])
    return int(body["response"]["numFound"]), tuple(display_document(d) for d in body["response"]["docs"])


def relations_among(index: SolrIndex, ends: Collection[str], types: Collection[str]) -> Iterator[dict[str, Any]]:
    """The relations of `types` whose endpoint 1 is one of `ends` (their documents, streamed)."""
    for chunk in batches(sorted(ends), _ENDS_PER_REQUEST):
        filters = [f"type:({' OR '.join(sorted(types))})", terms_filter(endpoint_field(1, "Id"), chunk)]
        yield from index.scan("relations", "*:*", filters=filters)


def relations_touching(index: SolrIndex, ids: Collection[str], types: Collection[str]) -> Iterator[dict[str, Any]]:
    """The relations of `types` with either endpoint among `ids` (their documents, streamed;
    a relation between two of them comes once per end it is found by)."""
    for chunk in batches(sorted(ids), _ENDS_PER_REQUEST):
        for end in (1, 2):
            filters = [f"type:({' OR '.join(sorted(types))})", terms_filter(endpoint_field(end, "Id"), chunk)]
            yield from index.scan("relations", "*:*", filters=filters)


def distinct_by_exclusion(index: SolrIndex, filters: Sequence[str], describe: Callable[[dict[str, Any]], tuple[K, str]],
                          *, fl: str, most: int) -> list[K]:
    """The distinct keys of the elements matching `filters`, one request per key: the first
    element still matching gives a key and the query of every element of that key
    (`describe`), which the next request excludes. For what has few values over many
    elements (the file systems of paths, the clusters of Hive names) and no field of its own
    to count by. At most `most` keys."""
    excluded: list[str] = []
    keys: list[K] = []
    while len(keys) < most:
        body = index.search("elements", "*:*", rows=1, fl=fl, sort="identity asc", filters=[*filters, *excluded])
        docs = body["response"]["docs"]
        if not docs:
            break
        key, query = describe(docs[0])
        if key not in keys:
            keys.append(key)
        # the element itself too: a query that misses it must not return it again
        excluded += [f"-({query})", f"-identity:{escape(str(docs[0]['identity']))}"]
    return keys


def counts_by(index: SolrIndex, field: str, filters: Sequence[str] = ()) -> dict[str, int]:
    """How many elements matching `filters` have each value of `field` (values with none left out)."""
    body = index.search("elements", "*:*", rows=0, filters=list(filters),
                        params={"facet": "true", "facet.field": field, "facet.limit": -1, "facet.mincount": 1})
    pairs = body["facet_counts"]["facet_fields"][field]
    return {str(pairs[n]): int(pairs[n + 1]) for n in range(0, len(pairs), 2)}
