"""The linker's store: what it reads from Solr (whole relation documents, streamed, and the
elements their endpoints may name) and the queries it asks, each a named function of the values
it takes (a date through `range_bound`, identities through the terms parser).

Why not a cursor scan of `fl=*`: a cursor page sorted by identity (an MD5) reads its documents'
stored fields in random order, one compressed block per document, and pays the sort over every
match again per page; on the benchmark that was most of Solr's CPU in a pass. Standalone Solr
reads instead with `/export` (one sorted pass over docValues per request), one request per
identity range of about `per_range` documents, so memory stays bounded by a range whatever the
backlog. Every field of nav_relations has docValues except `expression` and `properties`
(stored only): those two are fetched apart, in one query per page, and only for the documents
that carry them (`expression:[* TO *]` is answered from the field's norms; `properties` always
comes with its `prop_*` docValues fields, which the export returns).

On SolrCloud `/export` answers from one shard only, so there the linker keeps the cursor scan
(`SolrIndex.scan`, identity-partitioned), which sees every shard.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from navd.errors import SolrError
from navd.index.client import SolrIndex, batches, identity_ranges
from navd.index.documents import NOT_STUB_FILTER, UNLINKED_FILTER, endpoint_field
from navd.index.query_syntax import range_bound
from navd.lineage.stored import StoredElement

#: Every docValues field of nav_relations a rewritten relation keeps (`lastIndexed` and
#: `_version_` are Solr's own), and the property fields.
EXPORT_FIELDS = ",".join([
    "identity", "type", *(endpoint_field(end, suffix) for end in (1, 2)
                          for suffix in ("Id", "QualifiedName", "Type", "SourceType", "Linked")),
    "unlinked", "dependencyType", "discriminator", "extractorRunId", "prop_*"])
#: The stored-only fields of nav_relations, fetched apart for the documents that have them.
STORED_ONLY = ("expression", "properties")
#: The element fields a link target needs; all docValues, so Solr reads no stored fields.
TARGET_FIELDS = "identity,qualifiedName,type,sourceType"

_RANGE_DOCUMENTS = 10_000
#: relations with an end not linked yet: what a pass works on
UNLINKED = UNLINKED_FILTER
#: relations with an `expression` (answered from the field's norms)
_HAS_EXPRESSION = "expression:[* TO *]"


# -- the queries --------------------------------------------------------------------------------

def terms(field: str, values: Iterable[str]) -> str:
    """A `{!terms}` query; `cache=false` so page-sized id lists never crowd the filter cache."""
    return f"{{!terms f={field} cache=false}}{','.join(values)}"


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


def export_docs(index: SolrIndex, core: str, filters: list[str], fl: str,
                per_range: int = _RANGE_DOCUMENTS) -> Iterator[dict[str, Any]]:
    """Matching documents of a standalone core, `fl` fields (docValues only), identity order,
    one `/export` per identity range."""
    total = index.count(core, "*:*", filters)
    if not total:
        return
    for identity_range in identity_ranges(total, per_range):
        yield from export_range(index, core, filters, fl, identity_range)


def export_range(index: SolrIndex, core: str, filters: list[str], fl: str, identity_range: str
                 ) -> list[dict[str, Any]]:
    """The matching documents of one identity range (`client.identity_ranges`), by `/export`."""
    name = index.core(core)
    body = index.request("POST", f"{name}/export", what=f"export of {name}", data={
        "q": "*:*", "fq": [*filters, in_identity_range(identity_range, cached=False)], "fl": fl,
        "sort": "identity asc"})
    docs: list[dict[str, Any]] = body.get("response", {}).get("docs", [])
    # /export reports a failure after its header as a last document (the status is 200).
    if docs and "EXCEPTION" in docs[-1]:
        raise SolrError(f"export of {name}: {docs[-1]['EXCEPTION']}")
    return docs


def add_stored_only(index: SolrIndex, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Complete exported relation documents with their stored-only fields (in place)."""
    if not docs:
        return docs
    by_id = {str(doc["identity"]): doc for doc in docs}
    fetched: set[str] = set()

    def fetch(query: str, ids: Iterable[str]) -> None:
        body = index.search("relations", query, rows=len(by_id), fl="identity," + ",".join(STORED_ONLY),
                            filters=[terms("identity", ids)])
        for stored in body["response"]["docs"]:
            doc = by_id.get(str(stored["identity"]))
            if doc is not None:
                fetched.add(doc["identity"])
                doc.update((k, stored[k]) for k in STORED_ONLY if k in stored)

    fetch(_HAS_EXPRESSION, by_id)
    with_properties = [i for i, doc in by_id.items() if i not in fetched and any(k.startswith("prop_") for k in doc)]
    if with_properties:
        fetch("*:*", with_properties)
    return docs


def relation_pages(index: SolrIndex, filters: list[str], page_size: int, *, cloud: bool
                   ) -> Iterator[list[dict[str, Any]]]:
    """Pages of relation documents matching `filters`, identity order, streamed. On standalone
    Solr they lack the stored-only fields until `complete_page` (run it where the page is
    worked on, so that query overlaps with the reading of the next pages)."""
    if cloud:
        yield from batches(index.scan("relations", "*:*", filters=filters, page_size=page_size), page_size)
        return
    yield from batches(export_docs(index, "relations", filters, EXPORT_FIELDS), page_size)


def complete_page(index: SolrIndex, page: list[dict[str, Any]], *, cloud: bool) -> list[dict[str, Any]]:
    """A page of `relation_pages` as whole documents (the cursor scan of SolrCloud reads them whole)."""
    return page if cloud else add_stored_only(index, page)


def fetch_targets(index: SolrIndex, ids: Iterable[str], chunk: int = 2000) -> dict[str, StoredElement]:
    """Indexed, non-stub elements among `ids`, by identity: one terms query per `chunk` ids,
    stubs left out by Solr (`NOT_STUB_FILTER`), docValues fields only."""
    found: dict[str, StoredElement] = {}
    for part in batches(sorted(set(ids)), chunk):
        body = index.search("elements", terms("identity", part), rows=len(part), fl=TARGET_FIELDS,
                            filters=[NOT_STUB_FILTER])
        for doc in body["response"]["docs"]:
            element = StoredElement.from_doc(doc)
            found[element.id] = element
    return found
