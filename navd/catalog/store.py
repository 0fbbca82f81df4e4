"""The catalog's Solr reads: an operation's executions (INSTANCE_OF relations from the template)
and the stored relations between elements."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

from navd.index.client import SolrIndex, batches
from navd.index.documents import display_document, endpoint_field
from navd.index.filters import terms_filter
from navd.model import ElementType, RelationType

_INSTANCE_OF = f"type:{RelationType.INSTANCE_OF.value}"
_EXECUTION = ElementType.OPERATION_EXECUTION.value
#: element ids per terms filter of the relations between elements
_ENDS_PER_REQUEST = 500


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
