"""The linker's store: what it reads from Solr (whole relation documents, a range at a time, and
the elements their endpoints may name) and the queries it asks, each a named function of the
values it takes (a date through `range_bound`, identities through the terms parser).

Unlinked relations are read from their stored fields, one select per identity range of about
`per_range` documents (`client.identity_ranges`, so memory stays bounded by a range whatever
the backlog), sorted by `_docid_` (index order: neighbouring documents share a compressed
stored-fields block, decompressed once; on SolrCloud, where a distributed query cannot sort by
`_docid_`, by identity) with `useDocValuesAsStored=false`. Every field of
nav_relations is stored except the `prop_*` property fields, which are rebuilt from the stored
`properties` (`documents.with_property_fields`). Measured on 50,000 relations, that costs Solr
about a sixth of what it cost to read the same documents by `/export` from docValues (a dynamic
field glob, `prop_*`, in an export's `fl` is most of an export's cost, and high-cardinality
strings are decoded term by term) plus a second query per page for the stored-only fields.
On SolrCloud it is the same request but for the sort (the shards' answers merged by Solr),
where `/export` would answer from one shard only.

A cursor (`SolrIndex.scan`) is not used for the relations: sorted by identity (an MD5) it reads
stored fields in random order, one block per document, and pays the sort again per page.

Link targets are looked up by identity with a terms query returning `identity,type` only: the
candidate a target was looked up as already gives its qualifiedName and source type (an
element's identity is the MD5 of those two), and `type` has few distinct values. A page's
candidates go in one request (`TARGET_CHUNK` covers a page of 2,000 relations with two
candidates per end), its identities in a parameter of their own separated by spaces
(`terms_param`): a form-encoded value of hex digits and spaces is encoded as it is, where the
same list in the query, with its braces and commas, was encoded character by character (0.3 s
of navd's CPU per 100,000 identities, measured here, on the page's critical path).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import islice
from typing import Any

from navd.errors import SolrError
from navd.index.client import SolrIndex, batches, identity_ranges
from navd.index.documents import NOT_STUB_FILTER, UNLINKED_FILTER, endpoint_field, with_property_fields
from navd.index.query_syntax import range_bound

from .aliases import Candidate
from .relink import Target

#: The element fields the Spark pass joins on (all docValues, so an export reads no stored field).
TARGET_FIELDS = "identity,qualifiedName,type,sourceType"
#: What a link target's lookup returns (see the module docstring).
_TARGET_LOOKUP_FIELDS = "identity,type"
#: The request parameter holding a lookup's identities; not `ids`, which Solr's query component
#: takes as the documents to return (a distributed search's second phase), whatever the query.
_TARGETS_PARAM = "targets"
#: A relation read whole from its stored fields, in index order (see the module docstring).
_STORED_READ = {"useDocValuesAsStored": "false"}

#: unlinked relations per read (see the module docstring)
RANGE_DOCUMENTS = 10_000
#: identities per link-target lookup: a page's candidates in one request (see the module docstring)
TARGET_CHUNK = 10_000
#: relations with an end not linked yet: what a pass works on
UNLINKED = UNLINKED_FILTER


# -- the queries --------------------------------------------------------------------------------

def terms(field: str, values: Iterable[str]) -> str:
    """A `{!terms}` query; `cache=false` so page-sized id lists never crowd the filter cache."""
    return f"{{!terms f={field} cache=false}}{','.join(values)}"


def terms_param(field: str, param: str) -> str:
    """A `{!terms}` query on the space-separated values of request parameter `param` (see the
    module docstring); `cache=false` as `terms`. The values must hold no whitespace (identities)."""
    return f"{{!terms f={field} cache=false separator=' ' v=${param}}}"


def indexed_since(since: str) -> str:
    """Documents indexed at or after `since` (a Solr date, date math allowed: `...Z-60SECONDS`)."""
    return f"lastIndexed:[{range_bound(since)} TO *]"


def end_unlinked(end: int) -> str:
    """Relations whose end `end` (1: from, 2: to) is not linked."""
    return f"{endpoint_field(end, 'Linked')}:false"


def in_identity_range(identity_range: str, *, cached: bool = True) -> str:
    """Documents whose identity is in `identity_range` (a range of `client.identity_ranges`);
    not `cached`: a range read once would only add to every new searcher's warming."""
    return f"{'' if cached else '{!cache=false}'}identity:{identity_range}"


# -- reading -------------------------------------------------------------------------------------


def export_range(index: SolrIndex, core: str, filters: list[str], fl: str, identity_range: str
                 ) -> list[dict[str, Any]]:
    """The matching documents of one identity range (`client.identity_ranges`) of a standalone
    core, `fl` fields (docValues only), by `/export`."""
    name = index.core(core)
    body = index.request("POST", f"{name}/export", what=f"export of {name}", data={
        "q": "*:*", "fq": [*filters, in_identity_range(identity_range, cached=False)], "fl": fl,
        "sort": "identity asc"})
    docs: list[dict[str, Any]] = body.get("response", {}).get("docs", [])
    # /export reports a failure after its header as a last document (the status is 200).
    if docs and "EXCEPTION" in docs[-1]:
        raise SolrError(f"export of {name}: {docs[-1]['EXCEPTION']}")
    return docs


def relation_range(index: SolrIndex, filters: list[str], identity_range: str, expected: int = RANGE_DOCUMENTS,
                   *, cloud: bool = False) -> list[dict[str, Any]]:
    """The whole relation documents matching `filters` in one identity range, read from their
    stored fields (see the module docstring): in index order on a standalone core, by identity
    on SolrCloud (a distributed query cannot sort by `_docid_`). `expected`: about how many
    match; a range holding more is asked again for all of them (one request, not pages: pages
    sorted by `_docid_` would shift under merges)."""
    ranged = [*filters, in_identity_range(identity_range, cached=False)]
    rows = expected + expected // 2 + 100
    while True:
        body = index.search("relations", "*:*", rows=rows, fl="*", sort="identity asc" if cloud else "_docid_ asc",
                            filters=ranged, params=_STORED_READ)
        docs: list[dict[str, Any]] = body["response"]["docs"]
        matches = int(body["response"]["numFound"])
        if len(docs) >= matches:
            return [with_property_fields(doc) for doc in docs]
        rows = matches + matches // 10 + 100  # more were written since the count: ask for all


def relation_pages(index: SolrIndex, filters: list[str], page_size: int, *, cloud: bool,
                   per_range: int = RANGE_DOCUMENTS, readers: int = 1) -> Iterator[list[dict[str, Any]]]:
    """Pages of whole relation documents matching `filters`, streamed a range at a time, in
    range order (`cloud`: the index is SolrCloud, see `relation_range`). `readers` > 1: that
    many ranges are read at once, ahead of the pages the caller takes (see `read_ahead`)."""
    total = index.count("relations", "*:*", filters)
    if not total:
        return
    ranges = identity_ranges(total, per_range)
    expected = -(-total // len(ranges))

    def read(identity_range: str) -> list[dict[str, Any]]:
        return relation_range(index, filters, identity_range, expected, cloud=cloud)

    yield from batches((doc for docs in read_ahead(read, ranges, readers) for doc in docs), page_size)


def read_ahead(read: Callable[[str], list[dict[str, Any]]], ranges: list[str], readers: int) -> Iterator[list[dict[str, Any]]]:
    """`read(range)` of each range, in order, with up to `readers` reads in flight: while the
    caller works on one range's documents, the next ones are being read (a read is mostly Solr
    writing its answer and this process parsing it, one core each; one at a time, the pass's
    workers waited for every range). Memory: `readers` ranges besides the one the caller has."""
    if readers <= 1:
        yield from map(read, ranges)
        return
    pool = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="navd-linker-read")
    in_flight: deque[Future[list[dict[str, Any]]]] = deque()
    queued = iter(ranges)
    try:
        in_flight.extend(pool.submit(read, identity_range) for identity_range in islice(queued, readers))
        while in_flight:
            docs = in_flight.popleft().result()
            following = next(queued, None)
            if following is not None:  # before handing `docs` over: `readers` reads go on meanwhile
                in_flight.append(pool.submit(read, following))
            yield docs
    finally:  # the caller stopped early (a failed page) or is done: no read is left running
        pool.shutdown(wait=True, cancel_futures=True)


def fetch_targets(index: SolrIndex, candidates: Iterable[Candidate], chunk: int = TARGET_CHUNK
                  ) -> dict[str, Target]:
    """Indexed, non-stub elements among `candidates`, by identity: one terms query per `chunk`
    identities (the identities in a parameter, `terms_param`), stubs left out by Solr
    (`NOT_STUB_FILTER`), only `identity,type` returned (the candidate gives the rest, see the
    module docstring)."""
    by_id = {candidate.id: candidate for candidate in candidates}
    found: dict[str, Target] = {}
    for part in batches(sorted(by_id), chunk):
        body = index.search("elements", terms_param("identity", _TARGETS_PARAM), rows=len(part), fl=_TARGET_LOOKUP_FIELDS,
                            filters=[NOT_STUB_FILTER], params={_TARGETS_PARAM: " ".join(part)})
        for doc in body["response"]["docs"]:
            candidate = by_id[str(doc["identity"])]
            found[candidate.id] = Target(candidate.id, candidate.qualified_name, str(doc.get("type", "")),
                                         candidate.source_type)
    return found
