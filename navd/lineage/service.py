"""Lineage as the CLI (`navd lineage`) and the server (/api/lineage, the page) ask for it: the
name people typed resolved to one element (navd/index/lookup.py), then walked on Solr, a hub's
graph served from the hub cache while the index is unchanged."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime

from navd.index.client import SolrIndex
from navd.index.lookup import oldest_execution_start
from navd.index.lookup import Scope, resolve_one
from navd.lineage.hub_cache import Generation, HubCache, generation
from navd.lineage.rules import LineageChanges, LineageGraph, LineageOptions, changes
from navd.lineage.rules import lineage as walk
from navd.lineage.store import SolrLineageStore


def lineage(index: SolrIndex, entity: str, options: LineageOptions = LineageOptions(),
            scope: Scope = Scope(), hubs: HubCache | None = None) -> LineageGraph:
    """The lineage graph of the element `entity` stands for (an identity, a qualifiedName or a
    shorter spelling resolved in `scope`). With `hubs` (the server's), a hub's graph comes from
    the cache while the index is unchanged."""
    root = resolve_one(index, entity, scope)
    identity = str(root["identity"])
    read_at: Generation | None = None
    if hubs is not None and hubs.enabled and hubs.is_hub(identity, options):
        read_at = generation(index)  # before the walk: what it reads is at least this new
        cached = hubs.get(identity, options, read_at)
        if cached is not None:
            return _kept_note(cached, options.as_of, lambda: oldest_execution_start(index))
    store = SolrLineageStore(index, known=[root], oldest_execution=options.as_of is not None)
    graph = walk(store, identity, options)
    if hubs is not None:
        hubs.put(identity, options, store.known_degree, graph, read_at)
    return _kept_note(graph, options.as_of, lambda: store.oldest_execution if store.oldest_execution_read
                      else oldest_execution_start(index))


def _kept_note(graph: LineageGraph, as_of: datetime | None, oldest_start: Callable[[], datetime | None],
               ) -> LineageGraph:
    """The graph with a note when `as_of` is older than the oldest execution kept (`oldest_start`,
    asked only with `as_of`): purge removed the executions before it (its retention window), so
    the graph may lack what ran then."""
    if as_of is None:
        return graph
    oldest = oldest_start()
    if oldest is None or as_of >= oldest:
        return graph
    return dataclasses.replace(graph, note=f"as of {as_of.isoformat()} is before the oldest execution kept "
                                           f"({oldest.isoformat()}): what ran earlier may be purged")


def lineage_changes(index: SolrIndex, entity: str, since: datetime, until: datetime,
                    options: LineageOptions = LineageOptions(), scope: Scope = Scope()) -> LineageChanges:
    """What changed in the lineage of the element `entity` stands for between `since` and
    `until` (navd/lineage/rules.py's `changes`), walked on Solr."""
    root = resolve_one(index, entity, scope)
    return changes(SolrLineageStore(index, known=[root]), str(root["identity"]), since, until, options)
