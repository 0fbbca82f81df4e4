"""Writing OpenLineage events to Solr, or to the spool while Solr is down (nothing lost).

`Intake.accept(body)` (an event already validated) answers 201 once Solr acknowledged the
event's documents (flushed through navd's one writer, IndexWriter, as the extractors flush), or
202 once the event is in the durable spool because Solr could not be reached. While the spool
holds events, new ones join it behind them, and one thread drains it in order when Solr answers
again.

Group commit: requests hand their mapped events to one writer thread, which takes every event
waiting (up to WRITE_BATCH) and writes them with one read-back of their runs' executions and one
flush; each request returns when the flush covering its event is acknowledged (201) or its event
is spooled (202). One event per flush cost a read and three acknowledged posts per event (28
events/s against 278 for a raw bulk post of the same documents, tests/bench/bench_openlineage.py).
Batches are written one at a time, in arrival order, under one lock shared with the drain: a
run's execution is read back, merged with its events in order (mapping.merge_execution) and
written whole, so no two events of a run race.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import orjson

from navd.config import NavdConfig, openlineage_spool_path
from navd.errors import ConfigError, SolrError, SolrUnavailable, first_line
from navd.index.client import IndexWriter, SolrIndex
from navd.index.documents import element_document
from navd.model import Element
from navd.logs import get_logger
from navd.names import InvalidName
from navd.openlineage.mapping import (
    SPARK_APPLICATION_ID,
    EventRecords,
    MappingSettings,
    map_event,
    merge_execution,
)
from navd.openlineage.schema import InvalidEvent, validate
from navd.openlineage.spool import Spool
from navd.openlineage.supersede import SparkCoverage

log = get_logger("navd.openlineage")
WRITTEN, SPOOLED = 201, 202
#: the drain's pauses while Solr stays down: doubling from the first to the last
DRAIN_PAUSE_SECONDS = (0.5, 30.0)
#: spooled events written with one flush (a backlog drains in batches, not an event a request)
DRAIN_BATCH = 200
#: the most posted events one flush of the writer thread covers
WRITE_BATCH = 200


@dataclasses.dataclass(frozen=True)
class _Pending:
    """A posted event waiting for the writer thread; `outcome` gets WRITTEN, SPOOLED or the error."""

    event: dict[str, Any]
    kind: str
    body: bytes
    outcome: Future[int] = dataclasses.field(default_factory=Future)


def writer_index(config: NavdConfig) -> SolrIndex:
    """The intake's Solr client: navd's admin user (as the extractors write), no retries: an
    event Solr cannot take at once goes to the spool instead of holding its client."""
    from navd.solr.server import effective_solr_config

    return SolrIndex(dataclasses.replace(effective_solr_config(config.solr), retries=0))


class Intake:
    """The OpenLineage intake of one server: its Solr writer, its spool and the drain thread."""

    def __init__(self, config: NavdConfig, index: SolrIndex, spool: Spool | None = None) -> None:
        self.index = index
        self.settings = MappingSettings(dict(config.openlineage.namespaces), config.cluster.name)
        self.spool = spool if spool is not None else Spool(openlineage_spool_path(config))
        self.coverage = SparkCoverage(index)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drain_loop, name="navd-openlineage-spool", daemon=True)
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._writer_lock = threading.Lock()

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Start draining (what a previous process left in the spool first). ConfigError when
        the spool directory cannot be made or read: fail at start, not at the first outage."""
        try:
            self.spool.pending()
        except OSError as exc:
            raise ConfigError(f"[openlineage] spool_dir: {self.spool.directory}: {exc.strerror or exc}") from None
        self._thread.start()
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        with self._writer_lock:
            writer, self._writer = self._writer, None
        if writer is not None:  # what was posted before is written (or spooled) first
            self._queue.put(None)
            writer.join(timeout)
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self.index.close()

    # -- intake ---------------------------------------------------------------------------------

    def accept(self, event: dict[str, Any], kind: str, body: bytes) -> int:
        """WRITTEN (201) once Solr holds the event, SPOOLED (202) once it is on disk. Raises
        InvalidName for a dataset name navd cannot normalise (before anything is stored),
        SolrError when Solr refuses the documents (not an outage: spooling would not help), and
        OSError when the spool cannot store an event Solr could not take."""
        pending = _Pending(event, kind, body)
        self._writer_thread()
        self._queue.put(pending)
        return pending.outcome.result()

    # -- the writer thread (group commit) -------------------------------------------------------

    def _writer_thread(self) -> None:
        """Started with the first event (an Intake that takes none has no writer thread)."""
        with self._writer_lock:
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, name="navd-openlineage-writer", daemon=True)
                self._writer.start()

    def _write_loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch, last = [first], False
            while len(batch) < WRITE_BATCH:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    last = True
                    break
                batch.append(item)
            try:
                with self._lock:
                    self._commit(self._mapped(batch))
            except BaseException as exc:  # noqa: BLE001 - each request answers its own error; the thread goes on
                for pending in batch:
                    if not pending.outcome.done():
                        pending.outcome.set_exception(exc)
            if last:
                return

    def _mapped(self, batch: list[_Pending]) -> list[tuple[_Pending, EventRecords]]:
        """The batch's events mapped here, in the writer thread: mapping is CPU work, and done in
        each request's thread it holds the GIL the writer needs between its Solr round trips
        (measured: the writer then waited ~5 ms, Python's switch interval, at each step). An
        event navd cannot name (InvalidName) is answered so and left out, before anything is
        stored."""
        mapped: list[tuple[_Pending, EventRecords]] = []
        for pending in batch:
            try:
                mapped.append((pending, map_event(pending.event, pending.kind, self.settings)))
            except InvalidName as exc:
                pending.outcome.set_exception(exc)
        return mapped

    def _commit(self, batch: list[tuple[_Pending, EventRecords]]) -> None:
        """Write the batch with one flush (the caller holds the lock), or spool it, in order,
        behind what the spool holds or when Solr is unreachable. A batch Solr refuses is
        written one event at a time, so only the refused event gets the SolrError."""
        if not batch:
            return
        if not self.spool.pending():
            try:
                self._write([mapped for _pending, mapped in batch])
            except SolrUnavailable as exc:
                log.warning("Solr unreachable: OpenLineage events spooled", events=len(batch), reason=first_line(exc))
            except SolrError as exc:
                if len(batch) == 1:
                    batch[0][0].outcome.set_exception(exc)
                    return
                for one in batch:
                    self._commit([one])
                return
            else:
                for pending, _mapped in batch:
                    pending.outcome.set_result(WRITTEN)
                return
        for pending, _mapped in batch:
            try:
                self.spool.put(pending.body)
            except OSError as exc:
                pending.outcome.set_exception(exc)
            else:
                pending.outcome.set_result(SPOOLED)
        self._wake.set()

    def _superseded(self, mapped: EventRecords) -> EventRecords:
        """A Spark listener event of an application navd's Spark extractor wrote: its lineage
        left out (docs/sources/openlineage.md: the event log wins; supersede.py)."""
        run = mapped.spark_application_run
        if run is None:
            return mapped
        app_id = mapped.execution.properties.get(SPARK_APPLICATION_ID) if mapped.execution is not None else None
        return mapped.without_lineage() if self.coverage.covered(run, app_id) else mapped

    def _write(self, events: list[EventRecords]) -> None:
        """The events' documents into Solr, acknowledged, in one flush; the caller holds the
        lock. A run's execution is read back once and merged with each of its events in order."""
        events = [self._superseded(m) for m in events]
        ids = sorted({m.execution.identity for m in events if m.execution is not None})
        merged: dict[str, Element] = {}
        stored = {doc["identity"]: doc for doc in self.index.get("elements", ids)} if ids else {}
        for mapped in events:
            if mapped.execution is not None:
                key = mapped.execution.identity
                before = element_document(merged[key]) if key in merged else stored.get(key)
                merged[key] = merge_execution(mapped.execution, before)
        writer = IndexWriter(self.index, threads=1)
        try:
            writer.write_all(merged.values())
            for mapped in events:
                writer.write_all(mapped.records)
            writer.flush_together()
        finally:
            writer.abandon()  # flushed, or failed: either way nothing is left to send

    # -- the drain ------------------------------------------------------------------------------

    def drain(self) -> int:
        """Write the spooled events in order, DRAIN_BATCH at a time, until the spool is empty
        (their count) or Solr is unreachable (SolrUnavailable, the events from the first
        unwritten batch left)."""
        done = 0
        while True:
            with self._lock:
                pending = self.spool.pending()[:DRAIN_BATCH]
                if not pending:
                    return done
                loaded: list[tuple[Path, EventRecords]] = []
                for path in pending:
                    try:
                        event = orjson.loads(path.read_bytes())
                        loaded.append((path, map_event(event, validate(event), self.settings)))
                    except (OSError, orjson.JSONDecodeError, InvalidEvent, InvalidName) as exc:
                        self._set_aside(path, "spooled OpenLineage event unreadable: set aside", exc)
                try:
                    self._write([mapped for _path, mapped in loaded])
                except SolrUnavailable:
                    raise
                except SolrError:  # refused by Solr: find which, one at a time; retrying refuses it again
                    for path, mapped in loaded:
                        try:
                            self._write([mapped])
                        except SolrUnavailable:
                            raise
                        except SolrError as exc:
                            self._set_aside(path, "spooled OpenLineage event refused by Solr: set aside", exc)
                            continue
                        self.spool.remove([path])
                        done += 1
                    continue
                self.spool.remove([path for path, _mapped in loaded])
                done += len(loaded)

    def _set_aside(self, path: Path, message: str, exc: BaseException) -> None:
        kept = self.spool.reject(path)
        log.error(message, path=str(kept), reason=first_line(exc))

    def _drain_loop(self) -> None:
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
