"""The linker pass: resolve unlinked relations whose missing endpoint is now indexed.

What a pass examines
- full (`link(full=True)`, or no earlier pass): every relation with `unlinked:true`;
- incremental: (a) unlinked relations indexed since the last pass, and (b) unlinked relations
  naming an element indexed since the last pass. (b) goes from the new elements to the relations,
  by endpoint id: each new element's alias spellings (`aliases.endpoint_spellings`) give the
  identities an extractor would have written as endpoint ids, and `{!terms f=endpointNId}` finds
  them. That direction is the cheap one (new elements are few, the unlinked backlog can be
  large, and endpoint ids are indexed), and it is correct for every spelling navd's extractors
  write; a spelling outside that set (say a mixed-case Hive name from a foreign writer) is still
  linked when its relation is re-indexed or by a full pass.

Reading (linker/store.py): unlinked relations come out of Solr a range of identities at a time,
read whole from their stored fields (in index order on a standalone core), the next `readers`
ranges read while the workers link the current one; the elements their endpoints may name come
back in one terms query per page (identity and type only), stubs filtered out by Solr.

The watermark: a document `<state_id>` in the runs core holds the Solr time at which the last
complete pass started (`started`). The time comes from Solr itself (lastIndexed of a clock
document the pass writes), so it is comparable with the lastIndexed of the data whatever the
clocks of the hosts; a pass looks back `overlap_seconds` further to cover clock differences
between SolrCloud nodes. A pass first soft-commits both data cores, so everything Solr
acknowledged before the pass started is visible to its queries. A failed pass leaves the
watermark where it was.

Writing: a linked relation has a new identity (it is a function of the endpoint identities), so
the linker adds the linked document, and once Solr acknowledged it deletes the unlinked one by
id. Only adds and deletes by id, never delete-by-query, so extraction can run at the same time:
an unlinked relation an extractor re-emits later is linked again by the next pass, to the same
identity (an upsert). Re-running a pass changes nothing.

Stubs: elements written as `ElementStub` (properties.knownFrom) carry the unresolved name and
are never link targets. When the real element exists under an alias, the relation moves to the
real element and the stub stays as it is (still a valid node for other relations naming that
spelling, e.g. its columns' PARENT_CHILD); when the owning extractor indexes the element under
the stub's own identity, it replaces the stub and the relation is linked in place.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import orjson

from navd.index.admin import solr_mode
from navd.index.client import SolrIndex, batches, serialise
from navd.index.documents import NOT_STUB_FILTER, endpoint_field
from navd.lineage.stored import StoredElement
from navd.logs import get_logger
from navd.model import identity as element_identity

from .aliases import AliasRules, endpoint_spellings
from .store import RANGE_DOCUMENTS, UNLINKED, end_unlinked, fetch_targets, indexed_since, relation_pages, terms
from .relink import Target, choose, endpoint_candidates, relink

log = get_logger("navd.linker")

_TERMS_CHUNK = 2000


@dataclasses.dataclass(frozen=True)
class LinkReport:
    examined: int
    linked: int
    still_unlinked: int
    full: bool = False
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class PageResult:
    """What linking one page of relations gives: documents to add, then ids to delete."""

    adds: list[dict[str, Any]]
    deletes: list[str]
    examined: int
    linked: int  # relations that got at least one endpoint linked
    still_unlinked: int


def plan_page(resolved: Iterable[tuple[Mapping[str, Any], Mapping[int, Target]]]) -> PageResult:
    """Pure: adds and deletes for relations whose endpoints were resolved to `targets`
    (shared by the incremental pass and the Spark job)."""
    adds: dict[str, dict[str, Any]] = {}
    deletes: list[str] = []
    examined = still = linked = 0
    for doc, targets in resolved:
        examined += 1
        new = relink(doc, targets)
        if new is None:
            still += 1
            continue
        linked += 1
        still += bool(new["unlinked"])
        adds[new["identity"]] = new
        if new["identity"] != doc["identity"]:
            deletes.append(str(doc["identity"]))
    # Never delete what this page (re)writes: two spellings can link to the same relation.
    return PageResult(list(adds.values()), [d for d in deletes if d not in adds], examined, linked, still)


def write_result(index: SolrIndex, result: PageResult) -> None:
    """Adds first, deletes only once Solr acknowledged the adds: a crash in between leaves both
    documents, and the next pass (the old one is still unlinked) repairs it."""
    if result.adds:
        index.post_update("relations", serialise(result.adds))
    if result.deletes:
        index.post_update("relations", orjson.dumps({"delete": result.deletes}))


class Linker:
    """Resolves unlinked relations; see the module docstring.

    `fs_aliases`: authority -> canonical file system, e.g. {"nn1:8020": "hdfs://nameservice1"};
    the configured `default_fs` is canonical for itself.
    """

    def __init__(self, index: SolrIndex, *, cluster: str, default_fs: str = "",
                 fs_aliases: Mapping[str, str] | None = None, state_id: str = "linker",
                 overlap_seconds: float = 60.0, threads: int = 4, page_size: int = 2000,
                 range_size: int = RANGE_DOCUMENTS, readers: int = 2) -> None:
        self.index = index
        self.rules = AliasRules(cluster=cluster, default_fs=default_fs, fs_aliases=dict(fs_aliases or {}))
        self.state_id = state_id
        self.overlap_seconds = overlap_seconds
        self.threads = threads
        self.page_size = page_size
        #: unlinked relations per read, and reads in flight ahead of the workers (store.read_ahead)
        self.range_size = range_size
        self.readers = readers

    # -- state --------------------------------------------------------------------------------

    def solr_now(self) -> str:
        """Solr's current time, as it stamps lastIndexed (see the module docstring)."""
        clock = f"{self.state_id}-clock"
        self.index.post_update("runs", serialise([{"identity": clock, "kind": "linker-clock",
                                                   "component": "linker"}]))
        docs = self.index.get("runs", [clock])
        return str(docs[0]["lastIndexed"])

    def watermark(self) -> str | None:
        """Solr time at which the last complete pass started, or None."""
        docs = self.index.get("runs", [self.state_id])
        return str(docs[0]["started"]) if docs and docs[0].get("started") else None

    def _save_watermark(self, started: str, report: LinkReport) -> None:
        self.index.post_update("runs", serialise([{
            "identity": self.state_id, "kind": "linker", "component": "linker", "state": "completed",
            "started": started, "count_examined": report.examined, "count_linked": report.linked,
            "count_still_unlinked": report.still_unlinked}]))

    def prepare(self) -> tuple[str, str | None]:
        """(this pass's start, the last pass's start) and everything acknowledged made visible."""
        started = self.solr_now()
        for core in ("elements", "relations"):
            self.index.commit(core, soft=True)
        return started, self.watermark()

    def finish(self, started: str, report: LinkReport) -> None:
        self._save_watermark(started, report)
        self.index.commit("runs", soft=True)

    # -- the pass -----------------------------------------------------------------------------

    def link(self, full: bool = False) -> LinkReport:
        clock = time.monotonic()
        started, last = self.prepare()
        full = full or last is None
        since = None if full else f"{last}-{int(self.overlap_seconds)}SECONDS"
        examined = linked = still = 0
        self.examined_so_far = 0
        lock = threading.Lock()
        cloud = solr_mode(self.index) == "cloud"

        def work(page: list[dict[str, Any]]) -> None:
            nonlocal examined, linked, still
            # Candidates once per relation: the alias rules are most of navd's own CPU per relation.
            candidates = [endpoint_candidates(doc, self.rules) for doc in page]
            found = fetch_targets(self.index, [c for ends in candidates for cs in ends.values() for c in cs])
            result = plan_page([(doc, choose(ends, found)) for doc, ends in zip(page, candidates)])
            write_result(self.index, result)
            with lock:
                examined += result.examined
                linked += result.linked
                still += result.still_unlinked
                self.examined_so_far = examined  # read by the progress line of `navd link`

        _run_pages(self._pages(since, cloud), work, self.threads)
        report = LinkReport(examined, linked, still, full, round(time.monotonic() - clock, 3))
        self.finish(started, report)
        log.info("link pass done", **report.as_dict())
        return report

    def _pages(self, since: str | None, cloud: bool) -> Iterator[list[dict[str, Any]]]:
        filters = [UNLINKED]
        if since is None:
            yield from self._relation_pages(filters, cloud)
            return
        seen: set[str] = set()

        def fresh(pages: Iterable[list[dict[str, Any]]]) -> Iterator[list[dict[str, Any]]]:
            for page in pages:
                new = [doc for doc in page if doc["identity"] not in seen]
                seen.update(str(doc["identity"]) for doc in new)
                if new:
                    yield new

        yield from fresh(self._relation_pages([*filters, indexed_since(since)], cloud))
        # (b) old unlinked relations naming elements indexed since the last pass.
        elements = self.index.scan("elements", "*:*", fl="identity,qualifiedName,type,sourceType",
                                   filters=[indexed_since(since), NOT_STUB_FILTER],
                                   page_size=self.page_size)
        for chunk in batches(map(StoredElement.from_doc, elements), self.page_size):
            ids = sorted({element_identity(s, n) for element in chunk
                          for s, n in endpoint_spellings(element.qualified_name, element.source_type, element.type,
                                                         self.rules)})
            for end in (1, 2):
                for id_chunk in batches(ids, _TERMS_CHUNK):
                    yield from fresh(self._relation_pages([
                        *filters, end_unlinked(end), terms(endpoint_field(end, "Id"), id_chunk)], cloud))


    def _relation_pages(self, filters: list[str], cloud: bool) -> Iterator[list[dict[str, Any]]]:
        return relation_pages(self.index, filters, self.page_size, cloud=cloud, per_range=self.range_size,
                              readers=self.readers)


def _run_pages(pages: Iterator[list[dict[str, Any]]], work: Any, threads: int) -> None:
    """Run `work(page)` on a few threads, at most 2 pages per thread in memory; re-raise the
    first failure (then the watermark does not move)."""
    slots = threading.BoundedSemaphore(threads * 2)
    futures: list[Future[None]] = []
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="navd-linker") as pool:
        for page in pages:
            slots.acquire()
            future = pool.submit(work, page)
            future.add_done_callback(lambda _f: slots.release())
            futures.append(future)
            if any(f.done() and f.exception() is not None for f in futures):
                break
            futures = [f for f in futures if not f.done() or f.exception() is not None]
    for future in futures:
        future.result()
