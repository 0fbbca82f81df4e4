"""Writing OpenLineage events to Solr, or to the spool while Solr is down (nothing lost).

`Intake.accept(event, ...)` (an event already validated) answers 201 once Solr acknowledged the
event's documents (flushed through navd's one writer, IndexWriter, as the extractors flush), or
202 once the event is in the durable spool (fsync'd file and directory) because Solr could not be
reached. While the spool holds events, new ones join it behind them, and one thread drains it in
order when Solr answers again. Every 2xx is durable before it is answered, whichever path the
event took; an event written only in part when Solr fails is spooled whole (a replay overwrites
the same documents).

One intake per state directory: it holds the lock `openlineage-intake` there (navd.locks) for
its life, so a second server (or `navd run`) on the same state directory refuses to start
instead of sharing the spool (two processes draining and numbering one spool lost events).

Group commit: requests hand their events to one writer thread, which takes every event waiting
(up to WRITE_BATCH events, about BATCH_DOCUMENTS documents) and writes them with one read-back of
their runs' executions and one flush; each request returns when the flush covering its event is
acknowledged (201) or its event is spooled (202). One event per flush cost a read and three
acknowledged posts per event (28 events/s against 278 for a raw bulk post of the same documents,
tests/bench/bench_openlineage.py).

Pipelined: the writer thread posts a group's documents (and the events as kept, beside them) and,
before waiting for their acknowledgement, takes, maps, reads back and posts the next group, so
Solr takes one group while the thread prepares the next; then it waits for the first group and
answers its requests. A group that writes a document of the group in flight (a run's next event,
a job's or a dataset's) waits for that group's acknowledgement before it is read back and posted,
so the later event lands last and merges with the earlier one's execution (remembered once
acknowledged). Before, each group waited for four round trips one after the other (the read-back,
the flush, the re-projection of annotations, the events as kept) and the thread did nothing
meanwhile. While groups follow each other, the annotations are projected again after a flush at
most every REPROJECT_SECONDS (the last group of a burst always does; navd/annotations/store.py).

Large events (more than LARGE_EVENT_DOCUMENTS documents, from the event's size in
navd.openlineage.limits) do not hold up the others: each is mapped in its own request's thread,
then written by the writer thread one slice of STEP_DOCUMENTS documents at a time, with the small
events that arrived meanwhile written between two slices. Order is kept where it matters: a small
event that writes a document a large event before it also writes (the same run, job, dataset or
column) waits behind it. A run's execution is read back, merged with its events in order
(mapping.merge_execution) and with the execution as this intake last wrote it, and written whole under one lock shared with the drain, so no two
events of a run race; a large event's execution is written with its last slice.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import queue
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from navd.annotations.store import Carryover
from navd.config import NavdConfig, extractor_state_dir, openlineage_spool_path
from navd.errors import ConfigError, NavdError, SolrError, SolrUnavailable, first_line
from navd.index.client import IndexWriter, SolrIndex
from navd.index.documents import (
    FIRST_SEEN,
    LAST_SEEN,
    MAX_TERM_BYTES,
    element_document,
    oversized_term,
    relation_document,
    solr_date,
    stub_document,
)
from navd.locks import LockBusy, component_lock
from navd.logs import get_logger
from navd.model import Deletion, Element, ElementStub, Record, Relation, execution_times
from navd.names import InvalidName, shown
from navd.openlineage import kept
from navd.openlineage.limits import EventSize, event_size
from navd.openlineage.mapping import (
    SPARK_APPLICATION_ID,
    EventRecords,
    MappingSettings,
    map_event,
    merge_execution,
    remembered,
)
from navd.openlineage.schema import CheckedEvent, InvalidEvent, check_event
from navd.openlineage.spool import Spool
from navd.openlineage.supersede import SparkCoverage

log = get_logger("navd.openlineage")
WRITTEN, SPOOLED = 201, 202
#: the lock (navd.locks) the intake of a state directory holds
INTAKE_LOCK = "openlineage-intake"
#: the drain's pauses while Solr stays down: doubling from the first to the last
DRAIN_PAUSE_SECONDS = (0.5, 30.0)
#: spooled events written with one flush (a backlog drains in batches, not an event a request)
DRAIN_BATCH = 200
#: the most posted events one flush of the writer thread covers
WRITE_BATCH = 200
#: about the most documents one flush of small events covers (a batch is closed once past it)
BATCH_DOCUMENTS = 20_000
#: an event of more documents than this is large (written in slices, see the module's doc)
LARGE_EVENT_DOCUMENTS = 2_000
#: the documents of one slice of a large event: what a small event may wait for
STEP_DOCUMENTS = 2_000
#: large events mapped or written at once (each holds its records in memory; more wait)
LARGE_EVENTS_AT_ONCE = 2
#: a hive:// namespace of an unknown metastore, a producer's nonconforming facet, is warned of
#: at most once in this time
WARNING_SECONDS = 3600.0
#: how many of each are remembered for that (a bound against a flood of made-up ones)
WARNINGS_KEPT = 1024
#: the longest the writer thread goes, while groups of events follow each other, without
#: projecting the annotations again after a flush (Carryover.reproject: a scan of the runs core
#: each time); the last group of a burst always does
REPROJECT_SECONDS = 1.0
#: documents of the records the mapping remembers kept built (see _Documents): as many as the
#: mapping keeps records (mapping.DATASET_MEMO_RECORDS), with room for those it dropped lately
DOCUMENTS_KEPT = 40_000
#: the executions this intake wrote last, kept to merge the next event of each run with (see
#: Intake._write): seconds of events at thousands a second, a few megabytes
RECENT_EXECUTIONS = 10_000


@dataclasses.dataclass(frozen=True)
class ReplayReport:
    """What `Intake.replay` did: events mapped and written again, events the checks now refuse."""

    replayed: int
    refused: int


class IntakeStopping(NavdError):
    """The server is stopping: no more events are taken (503, the client retries)."""


class UnindexableEvent(NavdError):
    """An event one of whose documents holds a term longer than Solr indexes (400)."""


@dataclasses.dataclass(frozen=True)
class _Pending:
    """A posted event waiting for the writer thread; `outcome` gets WRITTEN, SPOOLED or the error.
    A large event comes mapped (`mapped`), a small one is mapped by the writer thread."""

    event: dict[str, Any]
    kind: str
    body: bytes
    documents: int
    mapped: EventRecords | None = None
    large: bool = False
    outcome: Future[int] = dataclasses.field(default_factory=Future)


@dataclasses.dataclass(frozen=True)
class _Sent:
    """Documents posted and not yet known acknowledged (Intake._send, then Intake._acknowledged):
    the writer they went through, the post of the events as kept, the runs' executions as they
    were written (remembered once acknowledged)."""

    writer: IndexWriter
    kept: Future[None] | None
    kept_count: int
    executions: tuple[Element, ...]


@dataclasses.dataclass(frozen=True)
class _InFlight:
    """A group of small events whose documents are posted while the writer thread prepares the
    next group; `identities` are the documents they write (a next group writing one of them
    waits for this one's acknowledgement)."""

    batch: list[tuple[_Pending, EventRecords]]
    sent: _Sent
    identities: frozenset[str]


def _identities(mapped: EventRecords) -> set[str]:
    """The documents an event writes, by identity (what orders it behind another event)."""
    ids = {record.element.identity if isinstance(record, ElementStub) else record.identity
           for record in mapped.records if not isinstance(record, Deletion)}
    if mapped.execution is not None:
        ids.add(mapped.execution.identity)
    return ids


class _Documents:
    """The documents of the records the mapping remembers (mapping.remembered: a dataset's
    element, columns and their links, the same objects in event after event), kept by the
    record's id with the record itself, so an id reused by another object is never taken for
    it: built once, then copied (the writer adds the annotations to the copy it posts). At most
    DOCUMENTS_KEPT, all forgotten when full. Used by the thread holding the intake's lock."""

    def __init__(self) -> None:
        self._kept: dict[int, tuple[Record, dict[str, Any]]] = {}

    def write(self, writer: IndexWriter, records: Iterable[Record], dated: Element | None = None) -> None:
        """`records` into `writer`'s cores, in order (IndexWriter.write_all); with `dated`, the
        relations of that execution (through it, or column edges it showed) dated by its start
        and end as all its events so far tell them (mapping.dated), on their documents rather
        than on copies of the relations (dataclasses.replace of each was a tenth of the writer
        thread's time)."""
        first, last = execution_times(dated.started, dated.ended) if dated is not None else (None, None)
        seen = {FIRST_SEEN: solr_date(first), LAST_SEEN: solr_date(last)} if first and last else None
        through = (dated.identity, dated.qualified_name) if seen and dated is not None else ("", "")
        kept, write = self._kept, writer.write
        for record in records:
            if seen is not None and type(record) is Relation and (
                    through[0] in (record.endpoint1.identity, record.endpoint2.identity)
                    or record.discriminator == through[1]):
                doc = relation_document(record)
                doc.update(seen)
                writer.relations.add(doc)
            elif remembered(record):
                kind = type(record)
                found = kept.get(id(record))
                if found is None or found[0] is not record:
                    if len(kept) >= DOCUMENTS_KEPT:
                        kept.clear()
                    found = kept[id(record)] = (record, _document(record))
                (writer.elements if kind is Element else writer.relations if kind is Relation
                 else writer.stubs).add(dict(found[1]))
            else:
                write(record)


def _document(record: Record) -> dict[str, Any]:
    """What IndexWriter.write makes of an Element, Relation or ElementStub."""
    if isinstance(record, Element):
        return element_document(record)
    if isinstance(record, Relation):
        return relation_document(record)
    if isinstance(record, ElementStub):
        return stub_document(record)
    raise TypeError(f"no document of a {type(record).__name__} is kept")


def _documents(mapped: EventRecords) -> int:
    return len(mapped.records) + (mapped.execution is not None)


def _due(warned: dict[Any, float], key: Any, now: float) -> bool:
    """Whether `key` is due a warning (none in the last WARNING_SECONDS), recorded as warned now
    if so. At most WARNINGS_KEPT keys are remembered (a bound against a flood of made-up names):
    beyond them, a new key is not warned of until old ones expire. The caller holds the lock."""
    last = warned.get(key)
    if last is not None and now - last < WARNING_SECONDS:
        return False
    if last is None and len(warned) >= WARNINGS_KEPT:
        for old in [k for k, t in warned.items() if now - t >= WARNING_SECONDS]:
            del warned[old]
        if len(warned) >= WARNINGS_KEPT:
            return False
    warned[key] = now
    return True


#: what Solr answers when it refuses the documents themselves (a field it cannot parse, a body
#: too large): sending them again is refused again. Every other failure (5xx, a core not loaded
#: yet after a restart, an expired ticket, a broken answer) is Solr failing to take them now.
REFUSED_STATUSES = frozenset({400, 413})


def refused(exc: SolrError) -> bool:
    """Whether Solr refused an event's documents (it is answered so, or a spooled one is set
    aside) rather than failed to take them now (it waits in the spool: nothing is set aside,
    and so lost to the index until an admin acts, for a fault that passes)."""
    return not isinstance(exc, SolrUnavailable) and exc.status in REFUSED_STATUSES


def _not_now(exc: SolrError) -> SolrUnavailable:
    return SolrUnavailable(f"{first_line(exc)} (the spooled events stay for the next attempt)")


def _answer_unanswered(events: list[_Pending], exc: BaseException) -> None:
    for pending in events:
        if not pending.outcome.done():
            pending.outcome.set_exception(exc)


class Intake:
    """The OpenLineage intake of one server: its Solr writer, its spool and the drain thread."""

    def __init__(self, config: NavdConfig, index: SolrIndex, spool: Spool | None = None) -> None:
        self.index = index
        # what people wrote on entities, carried into the documents of every batch: read once,
        # kept current by each writer's flush (navd/annotations/store.py)
        self._carryover = Carryover(index)
        self.settings = MappingSettings(dict(config.openlineage.namespaces), config.cluster.name)
        self.state_root = extractor_state_dir(config)
        self.spool = spool if spool is not None else Spool(openlineage_spool_path(config))
        self.coverage = SparkCoverage(index)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._drain_loop, name="navd-openlineage-spool", daemon=True),
                         threading.Thread(target=self._write_loop, name="navd-openlineage-writer", daemon=True)]
        #: held from start() until stop() and both threads are done
        self._state_lock: contextlib.ExitStack | None = None
        self._lifecycle = threading.Lock()
        self._running = 0
        self._closing = False
        self._large_slots = threading.BoundedSemaphore(LARGE_EVENTS_AT_ONCE)
        self._counts = threading.Lock()
        #: large events taken and not yet answered (a gauge of /metrics)
        self.large_events_in_flight = 0
        #: events that named a hive:// namespace of an unknown metastore (a counter of /metrics)
        self.unknown_metastore_events = 0
        self._warned: dict[str, float] = {}
        #: facets of taken events that did not conform to their schema, left out of the mapping
        #: (a counter of /metrics), and when each (producer, facet) was last warned of
        self.nonconforming_facets = 0
        self._warned_facets: dict[tuple[str, str], float] = {}
        #: events kept as posted (navd/openlineage/kept.py): at most this many, trimmed every
        #: `_trim_every` kept events (a count query each time, so not at every flush)
        self.keep_events = config.openlineage.keep_events
        self._trim_every = max(1, min(1000, self.keep_events // 10))
        self._kept_since_trim = 0
        self._sequence = kept.Sequence()
        #: identity -> the document of an execution as this intake last wrote it (after Solr
        #: acknowledged it), oldest first, at most RECENT_EXECUTIONS (Intake._write)
        self._recent_executions: collections.OrderedDict[str, dict[str, Any]] = collections.OrderedDict()
        #: posts the events as kept (runs core) beside the writer's flush of their documents, so
        #: the two cost one round trip of waiting; two: a group in flight and the next one
        self._keeper = ThreadPoolExecutor(2, thread_name_prefix="navd-openlineage-kept")
        #: writers (one thread per core each) whose last flush Solr acknowledged, for the next
        #: groups: a writer made per group started four threads for it (measured: a tenth of
        #: the writer thread's time); one that failed is abandoned, not kept
        self._idle_writers: list[IndexWriter] = []
        #: the documents of records the mapping remembers, built once (used under self._lock)
        self._documents = _Documents()
        #: when the annotations were last projected again after a flush (monotonic)
        self._reprojected = time.monotonic()

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Take the state directory's intake lock and start writing and draining (what a
        previous process left in the spool first). NavdError naming the other process when
        another intake holds the lock; ConfigError when the spool directory cannot be made or
        read: fail at start, not at the first outage."""
        held = contextlib.ExitStack()
        try:
            held.enter_context(component_lock(self.state_root, INTAKE_LOCK, wait=False))
        except LockBusy as busy:
            other = f"pid {busy.holder}" if busy.holder is not None else "pid unknown"
            raise NavdError(f"[openlineage] another navd ({other}) runs the OpenLineage intake of the state directory "
                            f"{self.state_root}: one intake per state directory (it holds the spool "
                            f"{self.spool.directory}); stop it, or give this server another [daemon] state_dir"
                            ) from None
        except OSError as exc:
            raise ConfigError(f"[daemon] state_dir: {self.state_root}: {exc.strerror or exc}") from None
        try:
            self.spool.pending()
        except OSError as exc:
            held.close()
            raise ConfigError(f"[openlineage] spool_dir: {self.spool.directory}: {exc.strerror or exc}") from None
        self._state_lock = held
        self._running = len(self._threads)
        for thread in self._threads:
            thread.start()
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Take no more events, write (or spool) those taken, stop draining; the state
        directory's lock is released once both threads are done (at once, unless one is still
        in a Solr call after `timeout`: then when it ends)."""
        with self._lifecycle:
            started, self._closing = self._state_lock is not None and not self._closing, True
        if started:
            self._queue.put(None)  # after every event taken: accept() checks _closing under the same lock
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            if thread.is_alive():
                thread.join(timeout)
        if any(thread.is_alive() for thread in self._threads):
            log.warning("OpenLineage intake still writing after the stop timeout: its state directory lock is "
                        "released when it ends", timeout_seconds=timeout)
        else:
            self._keeper.shutdown(wait=False)
            while self._idle_writers:
                self._idle_writers.pop().abandon()
        self.index.close()

    def _thread_done(self) -> None:
        with self._lifecycle:
            self._running -= 1
            if self._running == 0 and self._state_lock is not None:
                self._state_lock.close()
                self._state_lock = None

    # -- intake ---------------------------------------------------------------------------------

    def accept(self, event: dict[str, Any], kind: str, body: bytes, size: EventSize | None = None) -> int:
        """WRITTEN (201) once Solr holds the event, SPOOLED (202) once it is on disk. `size`
        (navd.openlineage.limits.check_size) tells a large event. Raises InvalidName for a
        dataset name navd cannot normalise and UnindexableEvent for a name too long for the
        index (before anything is stored), SolrError when Solr refuses the documents (not an
        outage: spooling would not help), OSError when the spool cannot store an event Solr
        could not take, and IntakeStopping once the server stops."""
        documents = (size or event_size(event)).documents
        if documents <= LARGE_EVENT_DOCUMENTS:
            return self._hand_over(_Pending(event, kind, body, documents))
        with self._counts:
            self.large_events_in_flight += 1
        try:
            with self._large_slots:
                # mapped here: its CPU time is this request's, not the writer thread's
                return self._hand_over(_Pending(event, kind, body, documents, self._map(event, kind), large=True))
        finally:
            with self._counts:
                self.large_events_in_flight -= 1

    def _hand_over(self, pending: _Pending) -> int:
        with self._lifecycle:
            if self._closing or self._state_lock is None:
                raise IntakeStopping("the OpenLineage intake is not running (the server is stopping): retry later")
            self._queue.put(pending)
        return pending.outcome.result()

    def _map(self, event: dict[str, Any], kind: str, *, taken: bool = True) -> EventRecords:
        """The event's records, every document within Solr's term limit (UnindexableEvent
        naming the first that is not); the unknown metastores of an event `taken` now (not one
        read back from the spool: it was when it came) warned of and counted."""
        mapped = map_event(event, kind, self.settings)
        for record in (*mapped.records, *filter(None, [mapped.execution])):
            if remembered(record):  # checked when the mapping kept it
                continue
            problem = oversized_term(record)
            if problem is not None:
                element = record.element if isinstance(record, ElementStub) else record
                what = (f"the {element.type.value} {shown(element.qualified_name, 80)}" if isinstance(element, Element)
                        else f"the {element.type.value} relation into {shown(element.endpoint2.qualified_name, 80)}")
                raise UnindexableEvent(f"body: {what} does not fit the index: its {problem[0]} holds a term of "
                                       f"{problem[1]:,} bytes, and Solr indexes at most {MAX_TERM_BYTES:,} bytes "
                                       "as one term")
        if taken:
            self._warn_unknown_metastores(mapped)
        return mapped

    def _warn_unknown_metastores(self, mapped: EventRecords) -> None:
        """Once per namespace an hour: datasets of a hive:// namespace no [openlineage]
        namespaces entry names were kept in their own namespace, not taken for this cluster's."""
        if not mapped.unknown_metastores:
            return
        now = time.monotonic()
        with self._counts:
            self.unknown_metastore_events += 1
            due = [namespace for namespace in sorted(mapped.unknown_metastores) if _due(self._warned, namespace, now)]
        for namespace in due:
            log.warning("OpenLineage datasets of a hive:// namespace that is no metastore navd knows: kept in their "
                        "own namespace, not taken for Hive tables of a navd cluster; if it is one, map it in "
                        "[openlineage.namespaces]", namespace=namespace[:200])

    def note_nonconforming(self, checked: CheckedEvent) -> None:
        """Count the facets of a taken event that do not conform to their schema (left out of the
        mapping; the event was taken all the same), and warn once per producer and facet name an
        hour, so a producer's bad facet is heard of without a line per event."""
        if not checked.nonconforming:
            return
        producer = str(checked.mappable.get("producer", ""))[:200]
        now = time.monotonic()
        with self._counts:
            self.nonconforming_facets += len(checked.nonconforming)
            due = [facet for facet in checked.nonconforming
                   if _due(self._warned_facets, (producer, facet.name[:200]), now)]
        for facet in due:
            log.warning("OpenLineage facet that does not conform to its schema: the event is taken, the facet is "
                        "left out of navd's mapping", producer=producer, facet=facet.name[:200],
                        problem=facet.problem[:300])

    # -- the writer thread (group commit, large events in slices) ------------------------------

    def _write_loop(self) -> None:
        try:
            self._write_events()
        finally:
            self._thread_done()

    def _write_events(self) -> None:
        # large events, and the small events that must follow one, in arrival order; the head is
        # being written, one slice a round
        ordered: collections.deque[_Pending] = collections.deque()
        steps: Iterator[bool] | None = None
        held: dict[str, int] = {}  # identity -> how many events in `ordered` write it
        # the group of small events posted last, acknowledged after the next group is posted:
        # the next group is mapped, read back and posted while Solr takes this one
        in_flight: _InFlight | None = None
        stopping = False
        while True:
            batch: list[tuple[_Pending, EventRecords]] = []
            for pending in self._take(block=not ordered and not stopping and in_flight is None):
                if pending is None:
                    stopping = True
                    break
                mapped = pending.mapped or self._mapped(pending)
                if mapped is None:
                    continue
                if pending.large or (held and not held.keys().isdisjoint(_identities(mapped))):
                    ordered.append(pending if pending.large else dataclasses.replace(pending, mapped=mapped))
                    for identity in _identities(mapped):
                        held[identity] = held.get(identity, 0) + 1
                else:
                    batch.append((pending, mapped))
            sent: _InFlight | None = None
            if batch:
                identities = frozenset().union(*(_identities(mapped) for _pending, mapped in batch))
                if in_flight is not None and not in_flight.identities.isdisjoint(identities):
                    # a document of the group in flight written again (a run's next event, a
                    # job's next run): after its acknowledgement, so the later event's lands last
                    # and merges with the earlier one's execution
                    self._settle_in_flight(in_flight)
                    in_flight = None
                try:
                    with self._lock:
                        posted = self._start(batch)
                except BaseException as exc:  # noqa: BLE001 - each request answers its own error; the thread goes on
                    _answer_unanswered([pending for pending, _mapped in batch], exc)
                else:
                    sent = _InFlight(batch, posted, identities) if posted is not None else None
            if in_flight is not None:
                # the group posted since projects the annotations again after its flush, which
                # covers this one's documents too (within REPROJECT_SECONDS)
                self._settle_in_flight(in_flight, last=sent is None)
            in_flight = sent
            if ordered:
                if in_flight is not None:  # the ordered lane writes after what was taken before it
                    self._settle_in_flight(in_flight)
                    in_flight = None
                head = ordered[0]
                steps = steps or self._write_ordered(head)
                try:
                    with self._lock:
                        more = next(steps, False)
                except BaseException as exc:  # noqa: BLE001 - as above
                    more = False
                    _answer_unanswered([head], exc)
                if not more:
                    _answer_unanswered([head], RuntimeError("the OpenLineage event was left unwritten"))
                    ordered.popleft()
                    steps = None
                    assert head.mapped is not None
                    for identity in _identities(head.mapped):
                        held[identity] -= 1
                        if not held[identity]:
                            del held[identity]
            elif stopping and in_flight is None:
                return

    def _settle_in_flight(self, in_flight: _InFlight, *, last: bool = True) -> None:
        """Wait for the group's acknowledgement and answer its requests (201, or 202 spooled).
        Unless it is the `last` group in flight, the annotations are projected again after it
        only when REPROJECT_SECONDS passed since they last were."""
        reproject = last or time.monotonic() - self._reprojected >= REPROJECT_SECONDS
        try:
            with self._lock:
                self._settle(in_flight.batch, in_flight.sent, reproject=reproject)
        except BaseException as exc:  # noqa: BLE001 - each request answers its own error; the thread goes on
            _answer_unanswered([pending for pending, _mapped in in_flight.batch], exc)

    def _take(self, *, block: bool) -> list[_Pending | None]:
        """The events waiting, in arrival order (blocking for the first when `block`): at most
        WRITE_BATCH, closed once past BATCH_DOCUMENTS documents, or at the stop marker."""
        taken: list[_Pending | None] = []
        documents = 0
        while len(taken) < WRITE_BATCH and documents < BATCH_DOCUMENTS:
            try:
                item = self._queue.get() if block and not taken else self._queue.get_nowait()
            except queue.Empty:
                break
            taken.append(item)
            if item is None:
                break
            documents += item.documents
        return taken

    def _mapped(self, pending: _Pending) -> EventRecords | None:
        """A small event mapped here, in the writer thread: mapping is CPU work, and done in
        each request's thread it holds the GIL the writer needs between its Solr round trips
        (measured: the writer then waited ~5 ms, Python's switch interval, at each step). An
        event navd cannot name or index is answered so and left out (None), before anything
        is stored."""
        try:
            return self._map(pending.event, pending.kind)
        except (InvalidName, UnindexableEvent) as exc:
            pending.outcome.set_exception(exc)
        except Exception as exc:  # noqa: BLE001 - answered as its own error, the thread goes on
            pending.outcome.set_exception(exc)
        return None

    def _commit(self, batch: list[tuple[_Pending, EventRecords]]) -> None:
        """Write the batch with one flush (the caller holds the lock), or spool it, in order,
        behind what the spool holds or when Solr is unreachable. A batch Solr refuses is
        written one event at a time, so only the refused event gets the SolrError."""
        self._settle(batch, self._start(batch))

    def _start(self, batch: list[tuple[_Pending, EventRecords]]) -> _Sent | None:
        """Post the batch's documents (`_settle` waits for them; the caller holds the lock), or
        spool it behind what the spool holds (None: answered, or failed and dealt with)."""
        if not batch:
            return None
        if self.spool.holds_events():
            self._spool([pending for pending, _mapped in batch])
            return None
        try:
            return self._send([mapped for _pending, mapped in batch],
                              kept_docs=self._kept_docs([(p.event, p.body, m) for p, m in batch]))
        except SolrError as exc:
            self._failed(batch, exc)
            return None

    def _settle(self, batch: list[tuple[_Pending, EventRecords]], sent: _Sent | None, *,
                reproject: bool = True) -> None:
        """Once Solr acknowledged what `_start` posted, answer the batch's requests (201); the
        caller holds the lock."""
        if sent is None:
            return
        try:
            self._acknowledged(sent, reproject=reproject)
        except SolrError as exc:
            self._failed(batch, exc)
        else:
            for pending, _mapped in batch:
                pending.outcome.set_result(WRITTEN)

    def _failed(self, batch: list[tuple[_Pending, EventRecords]], exc: SolrError) -> None:
        """Solr did not take the batch: spooled (unreachable, or failing to take them now), or,
        refused, written again one event at a time so only the refused event gets the error."""
        if isinstance(exc, SolrUnavailable):
            log.warning("Solr unreachable: OpenLineage events spooled", events=len(batch), reason=first_line(exc))
        elif not refused(exc):  # Solr failed to take them now (not their content): they wait
            log.warning("Solr failed to take OpenLineage events: spooled", events=len(batch), reason=first_line(exc))
        elif len(batch) == 1:
            batch[0][0].outcome.set_exception(exc)
            return
        else:
            for one in batch:
                self._commit([one])
            return
        self._spool([pending for pending, _mapped in batch])

    def _spool(self, events: list[_Pending]) -> None:
        for pending in events:
            try:
                self.spool.put(pending.body)
            except OSError as exc:
                pending.outcome.set_exception(exc)
            else:
                pending.outcome.set_result(SPOOLED)
        self._wake.set()

    def _write_ordered(self, pending: _Pending) -> Iterator[bool]:
        """One event of the ordered lane, each next() under the lock: True while there is more
        to write. A small event is written in one go; a large one slice by slice, its outcome
        set with the last, or spooled whole (202) when the spool holds events or Solr fails part
        way."""
        assert pending.mapped is not None
        if not pending.large:
            self._commit([(pending, pending.mapped)])
            return
        if self.spool.holds_events():
            self._spool([pending])
            return
        try:
            for _ in self._slices(pending.mapped, self._kept_docs([(pending.event, pending.body, pending.mapped)])):
                yield True
                if self.spool.holds_events():  # Solr failed a small batch since: the spool keeps the order
                    self._spool([pending])
                    return
        except SolrError as exc:
            if refused(exc):
                pending.outcome.set_exception(exc)
                return
            log.warning("Solr unreachable: a large OpenLineage event spooled", documents=pending.documents,
                        reason=first_line(exc))
            self._spool([pending])
        except Exception as exc:  # noqa: BLE001 - the request answers it
            pending.outcome.set_exception(exc)
        else:
            pending.outcome.set_result(WRITTEN)

    def _slices(self, mapped: EventRecords, kept_docs: list[dict[str, Any]]) -> Iterator[bool]:
        """Write an event's documents STEP_DOCUMENTS at a time, each slice acknowledged, yielding
        True between two (the caller holds the lock at each step); its execution, merged with
        the stored one, and the event as kept go with the last slice."""
        mapped = self._superseded(mapped)
        records = mapped.records
        starts = list(range(0, len(records), STEP_DOCUMENTS)) or [0]
        for start in starts[:-1]:
            self._flush(records[start:start + STEP_DOCUMENTS])
            yield True
        self._write([dataclasses.replace(mapped, records=records[starts[-1]:])], superseded=True,
                    kept_docs=kept_docs)

    def _superseded(self, mapped: EventRecords) -> EventRecords:
        """A Spark listener event of an application navd's Spark extractor wrote: its lineage
        left out (docs/sources/openlineage.md: the event log wins; supersede.py)."""
        run = mapped.spark_application_run
        if run is None:
            return mapped
        app_id = mapped.execution.properties.get(SPARK_APPLICATION_ID) if mapped.execution is not None else None
        return mapped.without_lineage() if self.coverage.covered(run, app_id) else mapped

    def _kept_docs(self, taken: list[tuple[dict[str, Any], bytes, EventRecords]]) -> list[dict[str, Any]]:
        """The kept-event documents of taken events (none when `[openlineage] keep_events` is 0)."""
        if not self.keep_events:
            return []
        return [kept.kept_document(event, body, mapped.execution.identity if mapped.execution is not None else None,
                                   self._sequence.next()) for event, body, mapped in taken]

    def _write(self, events: list[EventRecords], *, superseded: bool = False,
               kept_docs: list[dict[str, Any]] | None = None) -> None:
        """The events' documents into Solr, acknowledged, in one flush, and the events as kept;
        the caller holds the lock. A run's execution is read back once and merged with each of
        its events in order."""
        self._acknowledged(self._send(events, superseded=superseded, kept_docs=kept_docs))

    def _send(self, events: list[EventRecords], *, superseded: bool = False,
              kept_docs: list[dict[str, Any]] | None = None) -> _Sent:
        """`_write` up to the posts: the executions read back and merged, every document and the
        events as kept posted, nothing waited for (`_acknowledged` waits); the caller holds the
        lock."""
        if not superseded:
            events = [self._superseded(m) for m in events]
        ids = sorted({m.execution.identity for m in events if m.execution is not None})
        merged: dict[str, Element] = {}
        stored = {doc["identity"]: doc for doc in self.index.get("elements", ids)} if ids else {}
        for mapped in events:
            if mapped.execution is not None:
                key = mapped.execution.identity
                if key in merged:
                    merged[key] = merge_execution(mapped.execution, element_document(merged[key]))
                    continue
                # Also merged with the run's execution as this intake last wrote it: a START
                # written by the previous flush was once missing from the stored read of the
                # next (CI: the COMPLETE's document then lost the start). merge_execution is
                # idempotent and independent of order, so merging with both is never wrong.
                execution = merge_execution(mapped.execution, self._recent_executions.get(key))
                merged[key] = merge_execution(execution, stored.get(key))
        writer = self._writer()
        try:
            writer.write_all(merged.values())
            for mapped in events:
                self._documents.write(writer, mapped.records, merged[mapped.execution.identity]
                                      if mapped.execution is not None else None)
            writer.submit()
            posted = self._keeper.submit(kept.keep, self.index, kept_docs) if kept_docs else None
        except BaseException:
            writer.abandon()
            raise
        return _Sent(writer, posted, len(kept_docs or ()), tuple(merged.values()))

    def _acknowledged(self, sent: _Sent, *, reproject: bool = True) -> None:
        """Wait until Solr acknowledged what `_send` posted (the documents, then the events as
        kept), remember the executions written, trim the kept events now and then; the caller
        holds the lock. The annotations are projected again after the documents unless told
        not to (`reproject`: a flush of the same carry-over follows and does)."""
        try:
            sent.writer.flush_together(reproject=reproject)
            if reproject:
                self._reprojected = time.monotonic()
        except BaseException:
            sent.writer.abandon()  # failed: nothing is left to send, and it is not used again
            raise
        self._idle_writers.append(sent.writer)
        # (failed, the kept post is left to end on its own: the event is spooled, and written
        # again the kept document is the same one, by the body's hash)
        if sent.kept is not None:
            sent.kept.result()
        self._remember(sent.executions)
        if sent.kept_count:
            self._kept_since_trim += sent.kept_count
            if self._kept_since_trim >= self._trim_every:
                self._kept_since_trim = 0
                try:
                    kept.trim(self.index, self.keep_events)
                except SolrError as exc:  # the events are written; the next trim catches up
                    log.warning("kept OpenLineage events not trimmed to [openlineage] keep_events",
                                reason=first_line(exc))

    def _remember(self, executions: Iterable[Element]) -> None:
        """Executions Solr acknowledged: the last RECENT_EXECUTIONS kept for the next merge."""
        recent = self._recent_executions
        for execution in executions:
            recent[execution.identity] = element_document(execution)
            recent.move_to_end(execution.identity)
        while len(recent) > RECENT_EXECUTIONS:
            recent.popitem(last=False)

    def _flush(self, records: list[Record] | tuple[Record, ...]) -> None:
        writer = self._writer()
        try:
            writer.write_all(records)
            writer.flush_together()
        except BaseException:
            writer.abandon()  # failed: nothing is left to send, and it is not used again
            raise
        self._idle_writers.append(writer)

    def _writer(self) -> IndexWriter:
        """An idle writer (its last flush acknowledged), or a new one: one thread per core, so
        a group's batches of a core go one after the other (two groups in flight use two)."""
        try:
            return self._idle_writers.pop()
        except IndexError:
            return IndexWriter(self.index, threads=1, carryover=self._carryover)

    # -- replay ---------------------------------------------------------------------------------

    def replay(self, *, after: datetime | None = None, before: datetime | None = None) -> ReplayReport:
        """Map the kept events (eventTime in [after, before), all by default) again, in the order
        they were kept, and write what the mapping makes of them now (after a mapping change). Holds the state directory's intake lock, so
        it never races a running intake over a run's execution: NavdError naming the holder
        while a server with the intake runs on the same state directory. An event the
        checks now refuse is counted and logged, the others go on."""
        replayed = refused = 0
        with contextlib.ExitStack() as held:
            try:
                held.enter_context(component_lock(self.state_root, INTAKE_LOCK, wait=False))
            except LockBusy as busy:
                other = f"pid {busy.holder}" if busy.holder is not None else "pid unknown"
                raise NavdError(f"[openlineage] another navd ({other}) runs the OpenLineage intake of the state "
                                f"directory {self.state_root}: stop its server (or turn [openlineage] enabled off) "
                                "and replay again") from None
            batch: list[EventRecords] = []
            for body in kept.bodies(self.index, after=after, before=before):
                try:
                    checked = check_event(orjson.loads(body))
                    mapped = self._map(checked.mappable, checked.kind, taken=False)
                except (orjson.JSONDecodeError, InvalidEvent, InvalidName, UnindexableEvent) as exc:
                    refused += 1
                    log.warning("kept OpenLineage event not replayed", reason=first_line(exc))
                    continue
                if _documents(mapped) > LARGE_EVENT_DOCUMENTS:
                    for _ in self._slices(mapped, []):
                        pass
                    replayed += 1
                    continue
                batch.append(mapped)
                if len(batch) >= WRITE_BATCH:
                    self._write(batch)
                    replayed, batch = replayed + len(batch), []
            if batch:
                self._write(batch)
                replayed += len(batch)
        return ReplayReport(replayed, refused)

    # -- the drain ------------------------------------------------------------------------------

    def drain(self) -> int:
        """Write the spooled events in order, in batches, until the spool is empty (their count)
        or Solr is unreachable (SolrUnavailable, the events from the first unwritten batch
        left). A large spooled event is written slice by slice, the lock taken for each, so
        the events that arrive meanwhile are spooled behind it without waiting for all of it."""
        done = 0
        while True:
            loaded = self._load(self.spool.pending())
            if not loaded:
                if not self.spool.pending():
                    return done
                continue  # all set aside: the next ones
            if len(loaded) == 1 and _documents(loaded[0][1]) > LARGE_EVENT_DOCUMENTS:
                done += self._drain_large(*loaded[0])
                continue
            with self._lock:
                done += self._drain_batch(loaded)

    def _load(self, paths: list[Path]) -> list[tuple[Path, EventRecords, list[dict[str, Any]]]]:
        """The first spooled events, read and mapped (outside the lock: only this thread removes
        spooled files): up to DRAIN_BATCH, about BATCH_DOCUMENTS documents, or a large one alone.
        An unreadable one is set aside."""
        loaded: list[tuple[Path, EventRecords, list[dict[str, Any]]]] = []
        documents = 0
        for path in paths[:DRAIN_BATCH]:
            try:
                body = path.read_bytes()
                checked = check_event(orjson.loads(body))
                mapped = self._map(checked.mappable, checked.kind, taken=False)
                kept_docs = self._kept_docs([(checked.mappable, body, mapped)])
            except (OSError, orjson.JSONDecodeError, InvalidEvent, InvalidName, UnindexableEvent) as exc:
                self._set_aside(path, "spooled OpenLineage event unreadable: set aside", exc)
                continue
            size = _documents(mapped)
            if size > LARGE_EVENT_DOCUMENTS and loaded:
                break  # next round, alone
            loaded.append((path, mapped, kept_docs))
            documents += size
            if size > LARGE_EVENT_DOCUMENTS or documents >= BATCH_DOCUMENTS:
                break
        return loaded

    def _drain_batch(self, loaded: list[tuple[Path, EventRecords, list[dict[str, Any]]]]) -> int:
        try:
            self._write([mapped for _path, mapped, _kept in loaded], kept_docs=[d for *_x, ds in loaded for d in ds])
        except SolrError as exc:
            if not refused(exc):
                raise _not_now(exc) from None
            # refused by Solr: find which, one at a time; retrying refuses it again
            done = 0
            for path, mapped, kept_docs in loaded:
                try:
                    self._write([mapped], kept_docs=kept_docs)
                except SolrError as exc:
                    if not refused(exc):
                        raise _not_now(exc) from None
                    self._set_aside(path, "spooled OpenLineage event refused by Solr: set aside", exc)
                    continue
                self.spool.remove([path])
                done += 1
            return done
        self.spool.remove([path for path, _mapped, _kept in loaded])
        return len(loaded)

    def _drain_large(self, path: Path, mapped: EventRecords, kept_docs: list[dict[str, Any]]) -> int:
        steps, more = self._slices(mapped, kept_docs), True
        try:
            while more:
                with self._lock:
                    more = next(steps, False)
        except SolrError as exc:
            if not refused(exc):
                raise _not_now(exc) from None
            self._set_aside(path, "spooled OpenLineage event refused by Solr: set aside", exc)
            return 0
        self.spool.remove([path])
        return 1

    def _set_aside(self, path: Path, message: str, exc: BaseException) -> None:
        kept = self.spool.reject(path)
        log.error(message, path=str(kept), reason=first_line(exc))

    def _drain_loop(self) -> None:
        try:
            self._drain_until_stopped()
        finally:
            self._thread_done()

    def _drain_until_stopped(self) -> None:
        backoff: float | None = None  # None: Solr answered last time; wait for an event to drain
        while not self._stop.is_set():
            if backoff is None:
                self._wake.wait()
                self._wake.clear()
            else:  # Solr is down: new events join the spool without waking this thread early
                self._stop.wait(backoff)
            if self._stop.is_set():
                return
            try:
                written = self.drain()
            except SolrUnavailable as exc:
                backoff = DRAIN_PAUSE_SECONDS[0] if backoff is None else min(backoff * 2, DRAIN_PAUSE_SECONDS[1])
                log.info("OpenLineage spool waits for Solr", pending=len(self.spool), retry_in_seconds=backoff,
                         reason=first_line(exc))
                continue
            except Exception as exc:  # noqa: BLE001 - the thread must outlive a fault; logged
                log.exception(f"OpenLineage spool drain failed: {first_line(exc)}")
                backoff = DRAIN_PAUSE_SECONDS[1]
                continue
            if written:
                log.info("OpenLineage spool drained", events=written)
            backoff = None
