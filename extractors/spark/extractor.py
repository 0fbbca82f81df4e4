"""The Spark push extractor: tails event logs, turns them into records, checkpoints positions.

One pass (`extract`) reads what is new in every event log (extractors.spark.logfiles over
extractors.common), feeds each application's lines to its processor (extractors.spark.events), and
yields the records (extractors.spark.records) of the applications that changed, plus stubs for
the datasets and columns they touched (so lineage
can start from a table only a Spark job has mentioned so far). The caller writes the records,
flushes the writer, then calls `commit()`: positions become durable only after Solr has the
records of the lines before them.

Restarts: an application's processor state lives in memory. A log that was complete when last
read is never read again; a log still in progress is read again from its start after a restart,
so the records of its first part are rebuilt with the context of the whole application (app
name, user, open executions). Records are idempotent upserts: nothing is lost or duplicated.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from hdfs import Client

from navd.config import NavdConfig
from navd.index.client import IndexWriter
from navd.extractors import write_checkpointed
from navd.extractors.common.cursors import LogCursor
from navd.extractors.common.tailing import remote_directories, tailing_file_system
from navd.extractors.hdfs.settings import hdfs_settings
from navd.extractors.spark.events import ApplicationProcessor, SqlExecution
from navd.extractors.spark.logfiles import EventLog, EventLogCursorStore, EventLogTailer
from navd.extractors.spark.records import dropped, records, stubs_for
from navd.extractors.spark.settings import spark_settings
from navd.webhdfs import make_client
from navd.logs import get_logger
from navd.model import Record

log = get_logger("navd.extractor.spark")


@dataclasses.dataclass
class _Application:
    processor: ApplicationProcessor
    #: per SQL execution id: the snapshot last emitted, to emit only what changed
    emitted: dict[int, SqlExecution] = dataclasses.field(default_factory=dict)
    touched: bool = False
    skipped_reported: int = 0


@dataclasses.dataclass(frozen=True)
class PassReport:
    lines: int
    records: int
    #: lines, events or files skipped as unreadable, each logged with its file (repeats of one
    #: kind in one file summarised in one count line) and counted here
    warnings: int


class SparkExtractor:
    name = "spark"

    def __init__(self, *, cluster: str, directories: Iterable[str], state_dir: Path, default_fs: str = "",
                 extractor_run_id: str | None = None, hdfs_client: Client | None = None) -> None:
        self.cluster = cluster
        self.default_fs = default_fs
        self.extractor_run_id = extractor_run_id or f"spark##{datetime.now(UTC):%Y%m%dT%H%M%S}"
        fs, directories = tailing_file_system(directories, hdfs_client, key="[spark] event_log_dirs")
        self.tailer = EventLogTailer(fs, directories, EventLogCursorStore(state_dir))
        self._apps: dict[str, _Application] = {}
        self._lines = 0
        self._warnings = 0
        # An application's processor state lives in memory: one whose log was unfinished when
        # navd stopped is read from its start, so its records get the whole application's context.
        self.tailer.rewind_unfinished()

    @classmethod
    def from_config(cls, config: NavdConfig, state_dir: Path, *,
                    extractor_run_id: str | None = None) -> SparkExtractor:
        spark, hdfs = spark_settings(config), hdfs_settings(config)
        on_hdfs = bool(remote_directories(spark.event_log_dirs))
        return cls(cluster=config.cluster.name, directories=spark.event_log_dirs, state_dir=state_dir,
                   default_fs=hdfs.default_fs, extractor_run_id=extractor_run_id,
                   hdfs_client=make_client(hdfs) if on_hdfs and hdfs.urls else None)

    def extract(self) -> Iterator[Record]:
        """Records of everything new in the event logs since the last pass: positions say what
        is new."""
        finished: list[str] = []
        for event_log, line in self.tailer.poll():
            app = self._apps.get(event_log.path)
            if app is None:
                app = self._apps[event_log.path] = _Application(
                    ApplicationProcessor(cluster=self.cluster, default_fs=self.default_fs, source_name=event_log.path))
            if line.text:
                app.processor.feed_line(line.text)
                self._lines += 1
            app.touched = True
            self.tailer.advance(line.cursor)
            if event_log.complete and _is_last(event_log, line.cursor):
                finished.append(event_log.path)
        for path, app in list(self._apps.items()):
            if app.touched:
                yield from self._records_of(app)
                app.touched = False
        for path in finished:
            self._apps.pop(path, None)  # complete: never read again, its state is not needed

    def _records_of(self, app: _Application) -> Iterator[Record]:
        run = app.processor.finish()
        changed = tuple(e for e in run.executions if app.emitted.get(e.execution_id) != e)
        for execution in changed:
            app.emitted[execution.execution_id] = execution
        skipped = sum(run.skipped.values())
        self._warnings += skipped - app.skipped_reported
        app.skipped_reported = skipped
        partial = dataclasses.replace(run, executions=changed)
        emitted = list(records(partial, extractor_run_id=self.extractor_run_id))
        yield from stubs_for(emitted, self.extractor_run_id)
        yield from emitted
        yield from dropped(run, changed)  # after the stubs: a deletion flags only what is indexed

    def commit(self) -> None:
        """Make the positions of everything extracted so far durable. Call after the writer flushed."""
        self.tailer.checkpoint()

    def close(self) -> None:
        """Nothing to release: each pass commits its positions, and the WebHDFS client holds no
        connection between requests worth closing."""

    def run_pass(self, writer: IndexWriter, *, full: bool = False,
                 stop: threading.Event | None = None) -> PassReport:
        """One pass: extract, write, flush, then commit positions. Raises if Solr did not take it
        (or navd is stopping); then positions stay where they were and this extractor must be
        discarded."""
        del full  # positions say what is new: a tail has no full pass
        lines, warnings = self._lines, self._warnings + self.tailer.warnings
        count = write_checkpointed(self.extract(), writer, commit=self.commit, stop=stop)
        return PassReport(lines=self._lines - lines, records=count,
                          warnings=self._warnings + self.tailer.warnings - warnings)


def _is_last(event_log: EventLog, cursor: LogCursor) -> bool:
    return cursor.done and bool(event_log.files) and cursor.key == event_log.files[-1].key
