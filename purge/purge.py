"""Purge: retire old executions and long-deleted entities by Navigator's purge
rules, relative to a threshold date:

- instance_of: INSTANCE_OF relations (operation -> execution) of executions run before it;
- data_flow / executions: an execution run before it that produced no output entity (neither it
  nor the executions inside it has a DATA_FLOW to a dataset) loses its DATA_FLOW relations and
  its PARENT_CHILD links, and the execution itself goes. Executions that produced something (a
  Hive table, a file) are never removed, so the lineage of what exists stays whole;
- hdfs_parent_child: PARENT_CHILD relations below an HDFS directory deleted before it;
- deleted_entities: entities deleted before it go with their relations, except Hive databases,
  tables, views and columns (never removed, even deleted) and any entity that is an end of a
  LOGICAL_PHYSICAL relation: those relations are never removed, so neither are their ends.

navd adds one rule of its own, for its run records (`nav_runs`), which Navigator keeps elsewhere:

- run_records: runs that ended before it, except each component's last run and last success
  (what `navd status` shows). The Spark tailer records a run per pass that read something, so a
  busy cluster adds thousands a day;
- openlineage_events: OpenLineage events kept as posted (navd/openlineage/kept.py) from before it
  whose execution is gone (removed by the rules above), or that belong to no run; and the oldest
  past `[openlineage] keep_events`.

Everything is found by queries and removed by id, relations before the elements they touch, in
batches: an interrupted run (or one stopped by the runtime cap) leaves a consistent index, and
the next run continues. `dry_run` counts what a run would remove and removes nothing.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from navd.index.client import SolrIndex, batches
from navd.index.documents import endpoint_field, solr_date
from navd.lineage.stored import StoredRelation
from navd.openlineage import kept
from navd.logs import get_logger
from navd.runs import shown_run_ids
from navd.purge import store

log = get_logger("navd.purge")

CATEGORIES = ("instance_of", "data_flow", "executions", "hdfs_parent_child", "deleted_entities", "run_records",
              "openlineage_events")
_CORES = ("elements", "relations", "runs")
_BATCH = 500
_END1_ID = endpoint_field(1, "Id")
_ENDS = f"{_END1_ID},{endpoint_field(2, 'Id')}"


@dataclasses.dataclass
class PurgeReport:
    threshold: str
    dry_run: bool
    removed: dict[str, int] = dataclasses.field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    complete: bool = False
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class _CapReached(Exception):
    pass


class Purger:
    def __init__(self, index: SolrIndex, *, threshold: datetime, dry_run: bool = False,
                 runtime_cap_seconds: float = 720 * 60.0, clock: Callable[[], float] = time.monotonic,
                 stop: threading.Event | None = None, keep_events: int | None = None) -> None:
        self.index = index
        #: the bound of kept OpenLineage events (`[openlineage] keep_events`); None: not trimmed
        self.keep_events = keep_events
        #: set when navd is stopping: the run ends between batches as at the runtime cap
        self.stop = stop
        self.threshold = solr_date(threshold)
        self.dry_run = dry_run
        self.clock = clock
        self.deadline = clock() + runtime_cap_seconds
        self.report = PurgeReport(self.threshold, dry_run)

    def run(self) -> PurgeReport:
        started = self.clock()
        for core in _CORES:
            self.index.commit(core, soft=True)
        try:
            self._old_executions()
            self._deleted_directories()
            self._deleted_entities()
            self._old_run_records()
            self._old_openlineage_events()
            self.report.complete = True
        except _CapReached:
            log.warning("purge stopped at its runtime cap; the next run continues", **self.report.removed)
        finally:
            if not self.dry_run:
                for core in _CORES:
                    self.index.commit(core, soft=True)
            self.report.seconds = round(self.clock() - started, 3)
        log.info("purge done", dry_run=self.dry_run, complete=self.report.complete, threshold=self.threshold,
                 **self.report.removed)
        return self.report

    # -- the rules ------------------------------------------------------------------------------

    def _old_executions(self) -> None:
        for batch in self._batches("elements", store.executions_before(self.threshold)):
            self._remove_relations("instance_of", store.INSTANCE_OF, batch, ends=(2,))
            idle = set(batch) - self._producing(batch) - self._physical_ends(batch)
            if not idle:
                continue
            ids = sorted(idle)
            self._remove_relations("data_flow", store.LINEAGE, ids)
            self._remove_relations(None, store.PARENT_CHILD, ids)
            self._remove_documents("executions", ids)

    def _deleted_directories(self) -> None:
        for batch in self._batches("elements", store.directories_deleted_before(self.threshold)):
            self._remove_relations("hdfs_parent_child", store.PARENT_CHILD, batch, ends=(1,))

    def _deleted_entities(self) -> None:
        for batch in self._batches("elements", store.entities_deleted_before(self.threshold)):
            ids = sorted(set(batch) - self._physical_ends(batch))
            if not ids:
                continue
            self._remove_relations(None, store.NOT_LOGICAL_PHYSICAL, ids)
            self._remove_documents("deleted_entities", ids)

    def _old_run_records(self) -> None:
        kept = shown_run_ids(self.index)
        for batch in self._batches("runs", store.runs_ended_before(self.threshold)):
            self._remove_documents("run_records", sorted(set(batch) - kept), core="runs")

    def _old_openlineage_events(self) -> None:
        if not self.dry_run:
            self.index.commit("elements", soft=True)  # the executions removed above: gone for the lookup
        for batch in kept.purgeable(self.index, self.threshold):
            if self.clock() > self.deadline or (self.stop is not None and self.stop.is_set()):
                raise _CapReached
            self._remove_documents("openlineage_events", batch, core="runs")
        if self.keep_events is None:
            return
        if self.dry_run:
            excess = kept.count(self.index) - self.keep_events
            self.report.removed["openlineage_events"] += max(0, excess)
        else:
            self.index.commit("runs", soft=True)  # what the bound counts: the events just purged gone
            self.report.removed["openlineage_events"] += kept.trim(self.index, self.keep_events)

    # -- lookups --------------------------------------------------------------------------------

    def _producing(self, executions: list[str]) -> set[str]:
        """Those of `executions` that, or whose child executions, wrote a dataset."""
        children: dict[str, str] = {}
        for relation in self._relations(_ENDS, filters=store.child_executions_of(executions)):
            children[relation.endpoint2.id] = relation.endpoint1.id
        producing: set[str] = set()
        sources = executions + sorted(children)
        for chunk in batches(sources, _BATCH):
            for relation in self._relations(_END1_ID, filters=store.dataset_writes_of(chunk)):
                source = relation.endpoint1.id
                producing.add(children.get(source, source))
        return producing

    def _physical_ends(self, ids: list[str]) -> set[str]:
        ends: set[str] = set()
        for end in (1, 2):
            for relation in self._relations(_ENDS, filters=store.logical_physical_at(end, ids)):
                ends.update((relation.endpoint1.id, relation.endpoint2.id))
        return ends & set(ids)

    def _relations(self, fields: str, filters: list[str]) -> Iterator[StoredRelation]:
        for doc in self.index.scan("relations", "*:*", fl=f"identity,{fields}", filters=filters):
            yield StoredRelation.from_doc(doc)

    # -- removal --------------------------------------------------------------------------------

    def _batches(self, core: str, query: str) -> Iterator[list[str]]:
        """Identities matching `query`, a batch at a time. Matches are listed before anything is
        removed (ids only, so memory stays small per batch of the scan) and the cap is checked
        between batches."""
        for batch in batches((str(d["identity"]) for d in self.index.scan(core, query, fl="identity")), _BATCH):
            if self.clock() > self.deadline or (self.stop is not None and self.stop.is_set()):
                raise _CapReached
            yield batch

    def _remove_relations(self, category: str | None, type_filter: str, element_ids: list[str],
                          ends: tuple[int, ...] = (1, 2)) -> None:
        """Relations matching `type_filter` with an end (of `ends`) among `element_ids`."""
        ids = sorted({str(d["identity"]) for end in ends for d in self.index.scan(
            "relations", "*:*", fl="identity", filters=[type_filter, store.with_end_in(end, element_ids)])})
        if category is not None:
            self.report.removed[category] += len(ids)
        if ids and not self.dry_run:
            for chunk in batches(ids, _BATCH):
                self.index.delete_ids("relations", chunk)

    def _remove_documents(self, category: str, ids: list[str], core: str = "elements") -> None:
        self.report.removed[category] += len(ids)
        if ids and not self.dry_run:
            self.index.delete_ids(core, ids)
