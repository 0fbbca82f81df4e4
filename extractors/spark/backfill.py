"""`navd extract spark --backfill`: a history of finished applications' event logs read by a
PySpark job, one task per log, so a first start over years of logs takes what the cluster's
executors take instead of one tailer's pass.

The index it leaves is the tailer's over the same logs, document for document (only
`extractorRunId` and the times Solr took them differ), and the tailer goes on after it:

1. The driver lists `[spark] event_log_dirs` as the tailer does and takes every finished log the
   tailer has not read to its end (its positions say so); logs still being written are left to
   the tailer, as are logs owned by users outside `[spark] allowed_log_owners`.
2. One task per log reads it with the tailer's own reader and processor (a SparkExtractor over
   that log alone, positions kept in memory), writes its elements and relations through its own
   IndexWriter, withdraws the OpenLineage listener's lineage of its application as a tailer pass
   does, and hands back its stubs, its DROPs, the tables it created and its files' final positions.
3. A stub is written only if its element is absent, so the tailer's document is the one of the
   first log (in its reading order) that named it; the job keeps that one per identity (a
   shuffle by identity) and writes it from the executors.
4. The driver applies the DROPs in the tailer's order, each checked as the tailer checks it
   (`why_untrusted`) against the index as the tailer would have found it then: an element whose
   stub this backfill wrote counts only from the record that first named it on.
   Then it records the re-creations among the tables the logs created, in the same order, as
   the tailer's commits do (extractor.apply_creations).
5. Once Solr has everything, the driver commits the positions to the tailer's cursor store:
   the tailer reads none of these logs again. The Spark extractor keeps nothing else per
   application once its log is finished (its processor state lives only while a log is open).

The executors read the logs themselves (local paths on their host, hdfs:// through WebHDFS with
`[hdfs] urls`), and reach Solr at `[solr] url`; see docs/operations/yarn.md.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from navd.config import NavdConfig, SolrConfig
from navd.errors import NavdError
from navd.extractors import Checkpoint, run_pass
from navd.extractors.common.cursors import LogCursor, MemoryCursorStore
from navd.extractors.common.tailing import remote_directories, tailing_file_system
from navd.extractors.hdfs.settings import HdfsConfig, hdfs_settings
from navd.extractors.spark.component import POST_COMMIT_HOOKS
from navd.extractors.spark.extractor import (SparkExtractor, apply_creations, file_owners, report_refused_drop,
                                            why_untrusted)
from navd.extractors.spark.logfiles import EventLog, EventLogCursorStore, EventLogTailer, discover
from navd.extractors.spark.settings import spark_settings
from navd.index.client import IndexWriter, SolrIndex
from navd.index.documents import is_stub
from navd.logs import get_logger
from navd.model import Deletion, ElementStub, Record
from navd.names import field_table
from navd.spark_jobs import failure_cause, spark_session
from navd.webhdfs import make_client

log = get_logger("navd.extractor.spark")

#: what a backfill task hands back, each row tagged with one of these
STUB, DROP, CREATE, POSITION, COUNTS = "stub", "drop", "create", "position", "counts"

#: where a record stands in the tailer's stream over the same logs: (the log's place in the
#: tailer's reading order, the record's place among that log's records)
Position = tuple[int, int]


class BackfillError(NavdError):
    """The backfill could not list the event logs, or its Spark job failed."""


@dataclasses.dataclass(frozen=True)
class BackfillReport:
    #: finished logs read by the job
    applications: int
    lines: int
    #: records the applications' logs gave (elements, relations, stubs, deletions)
    records: int
    warnings: int
    #: logs still being written: the tailer reads them
    in_progress: int
    #: finished logs the tailer (or an earlier backfill) read to their end already
    already_read: int
    #: logs not read because a file's owner is not in `[spark] allowed_log_owners`
    owner_not_allowed: int


@dataclasses.dataclass(frozen=True)
class BackfillPlan:
    """Which logs the job reads, in the tailer's reading order, and what it leaves."""

    logs: tuple[EventLog, ...]
    in_progress: int
    already_read: int
    owner_not_allowed: int


@dataclasses.dataclass(frozen=True)
class BackfillJob:
    """What every task needs, shipped with its closure (frozen dataclasses of navd's own)."""

    cluster: str
    default_fs: str
    extractor_run_id: str
    directories: tuple[str, ...]
    solr: SolrConfig
    #: the WebHDFS settings when a directory is on HDFS
    hdfs: HdfsConfig | None


def plan_backfill(tailer: EventLogTailer) -> BackfillPlan:
    """The finished logs of the tailer's directories that it has not read to their end."""
    logs: list[EventLog] = []
    in_progress = already_read = disowned = 0
    for directory in tailer.directories:
        try:
            found = discover(tailer.fs, directory)
        except OSError as exc:
            raise BackfillError(f"[spark] event_log_dirs: {directory}: cannot list it: "
                                f"{exc.strerror or exc}") from None
        for event_log in found:
            if not event_log.complete:
                in_progress += 1
            elif tailer.allowed_owners and not file_owners(event_log) <= tailer.allowed_owners:
                disowned += 1
                log.warning("event log skipped: its owner is not in [spark] allowed_log_owners",
                            log=event_log.path, owner=",".join(sorted(file_owners(event_log))))
            elif all(_read_to_end(tailer.cursor(f.key), f.status) for f in event_log.files):
                already_read += 1
            else:
                logs.append(event_log)
    return BackfillPlan(tuple(logs), in_progress, already_read, disowned)


def _read_to_end(cursor: LogCursor | None, status: Any) -> bool:
    return (cursor is not None and cursor.done and cursor.file_id == status.file_id
            and cursor.size == status.size and cursor.mtime_ns == status.mtime_ns)


# --- executor side ------------------------------------------------------------------------------

def read_logs(logs: Iterable[tuple[int, EventLog]], job: BackfillJob) -> Iterator[tuple[Any, ...]]:
    """A task: read its logs (one, as the job splits them), write their elements and relations,
    and give back the rest tagged (STUB, DROP, POSITION, COUNTS rows)."""
    client = make_client(job.hdfs) if job.hdfs is not None else None
    with SolrIndex(job.solr) as index:
        for order, event_log in logs:
            yield from _read_log(order, event_log, job, index, client)


def _read_log(order: int, event_log: EventLog, job: BackfillJob, index: SolrIndex,
              client: Any) -> Iterator[tuple[Any, ...]]:
    extractor = SparkExtractor(cluster=job.cluster, directories=job.directories, state_dir=None,
                               default_fs=job.default_fs, extractor_run_id=job.extractor_run_id,
                               hdfs_client=client, index=index, cursor_store=MemoryCursorStore(),
                               check_drops=False, post_commit=POST_COMMIT_HOOKS)
    owner = ",".join(sorted(file_owners(event_log)))
    held: list[tuple[Any, ...]] = []
    produced = 0

    def routed(records: Iterable[Record | Checkpoint]) -> Iterator[Record | Checkpoint]:
        nonlocal produced
        for record in records:
            if isinstance(record, Checkpoint):
                yield record
                continue
            seq, produced = produced, produced + 1
            if isinstance(record, ElementStub):
                held.append((STUB, record.element.identity, (order, seq), record))
            elif isinstance(record, Deletion):
                held.append((DROP, (order, seq), record, owner, event_log.app_id, event_log.path))
            else:
                yield record

    writer = IndexWriter(index)
    try:
        run_pass(_LogRead(extractor, lambda: routed(extractor.extract_logs([event_log]))), writer)
    finally:
        complete = writer.close()
    if not complete:
        # Failing the task makes Spark retry it; upserts by identity make that harmless.
        raise BackfillError(f"{event_log.path}: not every document reached Solr at {index.base_url}")
    yield from held
    # the tables it created, after all its records as the tailer's commit has them
    yield from ((CREATE, (order, produced + i), owner, creation) for i, (owner, creation)
                in enumerate(extractor.creations))
    yield from ((POSITION, cursor) for cursor in extractor.tailer.committed.values())
    yield (COUNTS, extractor.lines_read, produced, extractor.warnings_given)


@dataclasses.dataclass(frozen=True)
class _LogRead:
    """A task's read of its log as the runner's run_pass drives a pass: `records` (the
    extractor's, with the stubs and deletions held back for the driver), the extractor's commits."""

    extractor: SparkExtractor
    records: Callable[[], Iterator[Record | Checkpoint]]

    def extract(self, *, full: bool = False) -> Iterator[Record | Checkpoint]:
        del full
        return self.records()

    def commit(self) -> None:
        self.extractor.commit()

    def rollback(self) -> None:
        self.extractor.rollback()

    def finished(self, records: int) -> int:
        return records

    def close(self) -> None:
        self.extractor.close()


def _first_stub(a: tuple[Position, ElementStub], b: tuple[Position, ElementStub]) -> tuple[Position, ElementStub]:
    return a if a[0] <= b[0] else b


def write_stubs(rows: Iterable[tuple[str, tuple[Position, ElementStub]]], solr: SolrConfig) -> None:
    """A task: write the first stub of each identity (only if its element is absent)."""
    with SolrIndex(solr) as index:
        writer = IndexWriter(index)
        try:
            for _identity, (_position, stub) in rows:
                writer.write(stub)
        finally:
            complete = writer.close()
        if not complete:
            raise BackfillError(f"not every stub reached Solr at {index.base_url}")


# --- the driver --------------------------------------------------------------------------------

class SparkBackfill:
    """The backfill as one run of the Spark component (`navd extract spark --backfill`): the runner
    locks it against the tailer, records it and links after it."""

    def __init__(self, config: NavdConfig, state_dir: Path, index: SolrIndex, *, extractor_run_id: str,
                 master: str | None) -> None:
        self.config = config
        self.index = index
        self.extractor_run_id = extractor_run_id
        self.master = master
        spark, hdfs = spark_settings(config), hdfs_settings(config)
        self.hdfs = hdfs if remote_directories(spark.event_log_dirs) and hdfs.urls else None
        fs, directories = tailing_file_system(spark.event_log_dirs,
                                              make_client(self.hdfs) if self.hdfs is not None else None,
                                              key="[spark] event_log_dirs")
        self.tailer = EventLogTailer(fs, directories, EventLogCursorStore(state_dir),
                                     allowed_owners=spark.allowed_log_owners)
        #: per element a DROP names, where this backfill's stub of it was first named (stage 3)
        self._first_named: dict[str, Position] = {}

    def run_pass(self, writer: IndexWriter, *, full: bool = False,
                 stop: threading.Event | None = None) -> BackfillReport:
        del full, stop  # a Spark job is not stopped half-way: its upserts are idempotent
        plan = plan_backfill(self.tailer)
        lines = records = warnings = 0
        if plan.logs:
            log.info("Spark history backfill", logs=len(plan.logs), in_progress=plan.in_progress,
                     already_read=plan.already_read)
            drops, creations, positions, counts = self._job(plan)
            lines, records, warnings = (sum(c[i] for c in counts) for i in range(3))
            refused, not_applied = self._apply_drops(drops, writer)
            # Counted as the tailer counts: what went to the writer (a refused DROP never does).
            records -= not_applied
            warnings += refused
            writer.flush()
            # Re-creations once Solr has the lineage and the DROPs, in the tailer's order, as its
            # commits apply them (the result does not depend on which commit one falls in).
            apply_creations(self.index, [(owner, creation) for _tag, _position, owner, creation in creations],
                            extractor_run_id=self.extractor_run_id)
            # Solr has every record of these logs: from here on the tailer goes on after them.
            for cursor in positions:
                self.tailer.advance(cursor)
            self.tailer.checkpoint()
        report = BackfillReport(applications=len(plan.logs), lines=lines, records=records, warnings=warnings,
                                in_progress=plan.in_progress, already_read=plan.already_read,
                                owner_not_allowed=plan.owner_not_allowed)
        log.info("Spark history backfill done", **dataclasses.asdict(report))
        return report

    def _job(self, plan: BackfillPlan) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[LogCursor],
                                                list[tuple[Any, ...]]]:
        from pyspark import StorageLevel  # noqa: PLC0415 - PySpark, only for the backfill

        spark_config = spark_settings(self.config)
        job = BackfillJob(cluster=self.config.cluster.name, default_fs=self.config.cluster.default_fs,
                          extractor_run_id=self.extractor_run_id,
                          directories=tuple(spark_config.event_log_dirs),
                          solr=self.index.config, hdfs=self.hdfs)
        solr = self.index.config
        with spark_session(self.config.spark_jobs, self.master, f"navd-spark-backfill-{self.extractor_run_id}") as spark:
            try:
                ordered = list(enumerate(plan.logs))
                # One task per log; kept (memory, else disk) so the stubs' stage does not read
                # and write the logs again.
                rows = (spark.sparkContext.parallelize(ordered, len(ordered))
                        .mapPartitions(lambda part: read_logs(part, job))
                        .persist(StorageLevel.MEMORY_AND_DISK))
                small = rows.filter(lambda row: row[0] != STUB).collect()
                firsts = (rows.filter(lambda row: row[0] == STUB).map(lambda row: (row[1], (row[2], row[3])))
                          .reduceByKey(_first_stub))
                firsts.foreachPartition(lambda part: write_stubs(part, solr))
                drops = sorted((row for row in small if row[0] == DROP), key=lambda row: row[1])
                dropped = {identity for row in drops for identity in _drop_identities(row[2])}
                self._first_named = dict(firsts.filter(lambda kv: kv[0] in dropped)
                                         .map(lambda kv: (kv[0], kv[1][0])).collect())
                rows.unpersist()
            except Exception as exc:  # noqa: BLE001 - Py4J/PySpark errors: one line; no position moves
                raise BackfillError(f"the Spark history backfill failed: {failure_cause(exc)}") from exc
        creations = sorted((row for row in small if row[0] == CREATE), key=lambda row: row[1])
        positions = [row[1] for row in small if row[0] == POSITION]
        counts = [row[1:] for row in small if row[0] == COUNTS]
        return drops, creations, positions, counts

    def _apply_drops(self, drops: list[tuple[Any, ...]], writer: IndexWriter) -> tuple[int, int]:
        """Write the DROPs the tailer would have applied, in its order; (the warnings it would
        have given for the others, the deletions it would not have handed to its writer)."""
        if not drops:
            return 0, 0
        docs = {str(d["identity"]): d for d in self.index.get(
            "elements", sorted({i for row in drops for i in _drop_identities(row[2])}))}
        warnings = not_applied = 0
        refused_once: set[tuple[int, str]] = set()
        for _tag, position, deletion, owner, app_id, path in drops:
            subject = field_table(deletion.ref) or deletion.ref
            subject_doc = self._present(docs, subject.identity, position)
            why = why_untrusted(subject_doc, owner) if subject_doc is not None else ""
            if why:
                not_applied += 1
                if (position[0], subject.identity) not in refused_once:
                    refused_once.add((position[0], subject.identity))
                    warnings += report_refused_drop(subject.qualified_name, why, log_path=path, owner=owner,
                                                    app_id=app_id)
                continue
            # The tailer hands it to its writer; if the element was not indexed at that point, the
            # writer's "only if it exists" makes it a no-op there: here it is not written at all.
            if self._present(docs, deletion.ref.identity, position) is not None:
                writer.write(deletion)
        return warnings, not_applied

    def _present(self, docs: dict[str, dict[str, Any]], identity: str, position: Position) -> dict[str, Any] | None:
        """The element as the tailer would have found it at `position`: a stub this backfill
        wrote exists only from the record that first named it on."""
        doc = docs.get(identity)
        if doc is None:
            return None
        if doc.get("extractorRunId") == self.extractor_run_id and is_stub(doc):
            first = self._first_named.get(identity)
            if first is None or first > position:
                return None
        return doc

    def close(self) -> None:
        """Nothing held: the job's session is stopped when the pass ends."""


def _drop_identities(deletion: Deletion) -> tuple[str, ...]:
    """The element a deletion flags and the one whose trust decides it (a column's table)."""
    subject = field_table(deletion.ref) or deletion.ref
    return (deletion.ref.identity, subject.identity)
