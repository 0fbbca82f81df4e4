"""The hub cache: lineage graphs of hubs (tables read by hundreds of jobs), kept between queries.

Measured (tests/bench/bench_lineage.py): a hub's walk is wide at every level, not only at the
hub (146 relations at the hub itself, then 300, 500, 900 per level and 3,000 elements to load
for the node cap), so caching the hub's own relations would save one request of ten; what is
cached is the hub's neighbourhood as a query shows it: the graph of (root, options). Only walks
whose root has at least `[lineage] hub_min_degree` relations of its own are cached, and only
from their second query on (the first one tells that the root is a hub); every other query pays
nothing for the cache. Bounded by entries and by nodes + edges held, LRU; never the whole graph.

Invalidation: before a known hub's query the cache reads the index's generation, per core
(elements and relations): its document count and highest `_version_` (one request each, see
`generation`). Any change of either empties the cache, so a written edge is never hidden behind
a cached graph. Why that is a sound change signal, on one node and on SolrCloud:
- every add, replace and atomic update (navd's deletion flags are atomic updates) gets a new
  `_version_` from its shard leader, above every version that leader gave before (Solr's
  VersionInfo clock: milliseconds << 20, and at least the last version + 1); `lastIndexed`
  would not do, an atomic update keeps its old value;
- on SolrCloud the query goes to the collection, so the count and the highest version are
  merged over every shard (sort by `_version_` across shards); a write on a shard whose clock
  is behind another's by more than the time since that one's last write could leave the
  highest version as it was, but it changes the count unless a delete of the same moment
  offsets it: `hub_cache_seconds` bounds that case (and a replica behind its leader) in time;
- a delete lowers the count.
The generation is read before the walk, so a graph stored under it was read from a searcher at
least as new: a commit in between only makes the entry fresher than its generation says.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from navd.config import LineageConfig
from navd.index.client import SolrIndex
from navd.lineage.rules import LineageGraph, LineageOptions

#: (count, highest _version_) of the elements core, then of the relations core
Generation = tuple[tuple[int, int], tuple[int, int]]
_Key = tuple[str, LineageOptions]


def generation(index: SolrIndex) -> Generation:
    """The index's generation: for each core, its document count and highest `_version_`."""
    def core(name: str) -> tuple[int, int]:
        body = index.search(name, "*:*", rows=1, sort="_version_ desc", fl="_version_")
        response = body.get("response", {})
        docs = response.get("docs", [])
        return int(response.get("numFound", 0)), int(docs[0].get("_version_", 0)) if docs else 0

    return core("elements"), core("relations")


@dataclasses.dataclass(frozen=True)
class _Entry:
    graph: LineageGraph
    size: int  # nodes + edges: what the bound counts
    stored: float  # time.monotonic()


class HubCache:
    """Lineage graphs of hub roots by (root identity, options), valid for one index generation.
    Shared by the queries of one process (the server's requests run on several threads)."""

    def __init__(self, settings: LineageConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self._clock = clock
        self._lock = threading.Lock()
        self._graphs: OrderedDict[_Key, _Entry] = OrderedDict()
        #: queries whose root proved a hub: their next walk reads the generation first
        self._hubs: OrderedDict[_Key, None] = OrderedDict()
        self._generation: Generation | None = None
        self._size = 0
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.settings.hub_cache_entries > 0 and self.settings.hub_cache_items > 0

    def is_hub(self, root: str, options: LineageOptions) -> bool:
        with self._lock:
            return (root, options) in self._hubs

    def get(self, root: str, options: LineageOptions, current: Generation) -> LineageGraph | None:
        """The cached graph of the query, if stored under the `current` generation and not too old."""
        key = (root, options)
        with self._lock:
            self._sync(current)
            entry = self._graphs.get(key)
            if entry is not None and self._clock() - entry.stored > self.settings.hub_cache_seconds:
                self._drop(key)
                entry = None
            if entry is None:
                self.misses += 1
                return None
            self._graphs.move_to_end(key)
            self.hits += 1
            return entry.graph

    def put(self, root: str, options: LineageOptions, degree: int, graph: LineageGraph,
            read_at: Generation | None) -> None:
        """After a walk: remember a hub root (`degree`: its own relations walked); store its graph
        if the generation was read before the walk (`read_at`) and has not changed since."""
        if degree < self.settings.hub_min_degree or not self.enabled:
            return
        key = (root, options)
        size = len(graph.nodes) + len(graph.edges)
        with self._lock:
            self._hubs[key] = None
            self._hubs.move_to_end(key)
            while len(self._hubs) > 4 * self.settings.hub_cache_entries:
                self._hubs.popitem(last=False)
            if read_at is None or read_at != self._generation or size > self.settings.hub_cache_items:
                return
            if key in self._graphs:
                self._drop(key)
            self._graphs[key] = _Entry(graph, size, self._clock())
            self._size += size
            while len(self._graphs) > self.settings.hub_cache_entries or self._size > self.settings.hub_cache_items:
                self._drop(next(iter(self._graphs)))

    def _sync(self, current: Generation) -> None:
        if current != self._generation:  # the index changed: nothing cached may be shown any more
            self._graphs.clear()
            self._size = 0
            self._generation = current

    def _drop(self, key: _Key) -> None:
        self._size -= self._graphs.pop(key).size

    def __len__(self) -> int:
        with self._lock:
            return len(self._graphs)
