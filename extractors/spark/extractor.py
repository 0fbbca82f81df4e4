"""The Spark push extractor: tails event logs, turns them into records, checkpoints positions.

One pass (`extract`) reads what is new in the event logs (extractors.spark.logfiles over
extractors.common) one application at a time: it feeds the application's new lines to its
processor (extractors.spark.events) and yields that application's records
(extractors.spark.records), plus stubs for the datasets and columns they touched (so lineage
can start from a table only a Spark job has mentioned so far), before it reads the next log. So a
first start over years of history holds one application at a time, and parsing overlaps with
the writer's threads posting the records before. After an application's records, once
`checkpoint_seconds` went by since the last commit, it yields a CHECKPOINT: the runner
(navd.extractors.run_pass) flushes the writer there, then calls `commit()`, so positions become
durable only after Solr has the records of the lines before them, and a crash during a long first
start resumes after the applications committed so far.

Restarts: an application's processor state lives in memory. A log that was complete when last
read is never read again; a log still in progress is read again from its start after a restart,
so the records of its first part are rebuilt with the context of the whole application (app
name, user, open executions). Records are idempotent upserts: nothing is lost or duplicated.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path

from hdfs import Client

from navd.config import NavdConfig
from navd.index.client import SolrIndex
from navd.index.documents import STUB_MARK, element_field, is_stub, solr_date, stored_time, stub_document
from navd.extractors import CHECKPOINT, Checkpoint
from navd.extractors.common.cursors import CursorStore, LogCursor
from navd.extractors.common.lines import Line
from navd.extractors.common.tailing import remote_directories, tailing_file_system
from navd.extractors.hdfs.settings import hdfs_settings
from navd.extractors.spark.application_run import ApplicationRun, SqlExecution
from navd.extractors.spark.events import ApplicationProcessor
from navd.extractors.spark.logfiles import EventLog, EventLogCursorStore, EventLogTailer
from navd.extractors.hms.incarnations import Recreation, recreate
from navd.extractors.spark.records import (LOG_OWNER, TableCreation, created, created_tables, dropped, records,
                                           stubs_for)
from navd.extractors.spark.replaced_views import (ViewDefinition, revive_defined_again, view_definitions,
                                                   withdraw_replaced)
from navd.extractors.spark.settings import spark_settings
from navd.webhdfs import make_client
from navd.logs import get_logger
from navd.model import Deletion, ElementStub, Record
from navd.names import field_table

log = get_logger("navd.extractor.spark")

#: an application's ended executions go to the writer every this many of its lines (besides at
#: the end of what a pass reads of its log), so parsing overlaps with posting within one log
EMIT_EVERY_LINES = 2000

#: What runs at each commit once Solr has the records written since the previous one, before the
#: positions are made durable: given the index and the ids of the Spark applications those
#: records came from. The Spark component registers them (component.POST_COMMIT_HOOKS): the
#: extractor knows no other source's data. A hook that raises leaves the positions uncommitted,
#: so the next pass writes the records and runs it again.
PostCommitHook = Callable[[SolrIndex, frozenset[str]], None]

#: `[spark] checkpoint_seconds`' default: how long a pass goes on before it commits positions at
#: the end of an application's records (a crash redoes at most about this much of a first start)
DEFAULT_CHECKPOINT_SECONDS = 30.0


@dataclasses.dataclass
class _Application:
    processor: ApplicationProcessor
    #: per SQL execution id: the snapshot last emitted, to emit only what changed
    emitted: dict[int, SqlExecution] = dataclasses.field(default_factory=dict)
    touched: bool = False
    skipped_reported: int = 0
    #: the owners of the log's files its lines came from (one, unless someone else wrote a part)
    owners: set[str] = dataclasses.field(default_factory=set)
    #: tables and databases whose DROP was not applied and said so (once each)
    refused: set[str] = dataclasses.field(default_factory=set)
    #: identities of the stubs (and their PARENT_CHILD relations) written for this application:
    #: written once, not again with every batch of its executions
    stubbed: set[str] = dataclasses.field(default_factory=set)
    #: lines fed since its records were last taken
    unemitted_lines: int = 0

    @property
    def owner(self) -> str:
        return ",".join(sorted(self.owners))


@dataclasses.dataclass(frozen=True)
class PassReport:
    lines: int
    records: int
    #: lines, events or files skipped as unreadable, each logged with its file (repeats of one
    #: kind in one file summarised in one count line) and counted here
    warnings: int


class SparkExtractor:
    name = "spark"

    def __init__(self, *, cluster: str, directories: Iterable[str], state_dir: Path | None, default_fs: str = "",
                 extractor_run_id: str | None = None, hdfs_client: Client | None = None,
                 index: SolrIndex | None = None, allowed_log_owners: Iterable[str] = (),
                 checkpoint_seconds: float = DEFAULT_CHECKPOINT_SECONDS, cursor_store: CursorStore | None = None,
                 check_drops: bool = True, post_commit: Sequence[PostCommitHook] = ()) -> None:
        """`state_dir` holds the positions (`cursor_store` instead: kept elsewhere, state_dir None).
        `check_drops` False: a DROP's deletions are yielded unchecked, for a caller that checks
        them itself with `why_untrusted` (the Spark history backfill, once all its stubs are in).
        `post_commit`: run at each commit, with an index only (PostCommitHook)."""
        self.cluster = cluster
        self.check_drops = check_drops
        #: a pass commits positions at the end of an application's records once this long has
        #: gone by since the last commit (0: after every application). Each commit waits for the
        #: writer to drain and rewrites the cursor file, so not after every one by default.
        self.checkpoint_seconds = checkpoint_seconds
        self._last_commit = time.monotonic()
        #: set when a CHECKPOINT was yielded, until the commit it asks for
        self._marked = False
        #: commits made during passes, before their end (reports and benchmarks say so)
        self.checkpoints = 0
        self.default_fs = default_fs
        self.extractor_run_id = extractor_run_id or f"spark##{datetime.now(UTC):%Y%m%dT%H%M%S}"
        fs, directories = tailing_file_system(directories, hdfs_client, key="[spark] event_log_dirs")
        if cursor_store is None:
            if state_dir is None:
                raise ValueError("the Spark extractor needs a state_dir or a cursor_store for its positions")
            cursor_store = EventLogCursorStore(state_dir)
        self.tailer = EventLogTailer(fs, directories, cursor_store, allowed_owners=allowed_log_owners)
        #: asked before a DROP in a log flags a table it did not create (see _trusted_drops);
        #: without it only an application's own tables are flagged
        self.index = index
        self._apps: dict[str, _Application] = {}
        self.post_commit = tuple(post_commit)
        #: applications whose records were written since the last commit: what the post-commit
        #: hooks are given
        self._written_apps: set[str] = set()
        #: the views the records written since the last commit define (replaced_views)
        self._view_definitions: list[ViewDefinition] = []
        self._lines = 0
        self._warnings = 0
        #: the stubs handed to the writer since the last commit, by identity, the first one of
        #: each (the one the index keeps): a DROP's trust is decided against what the index holds
        #: once the writer has posted them, not against whichever batch has reached Solr yet
        self._unposted_stubs: dict[str, dict[str, object]] = {}
        #: the tables created since the last commit, each with the owner of its log, in reading
        #: order: re-creations are recorded at the commit (apply_creations); with `check_drops`
        #: False they are left here for the caller, as the DROPs are
        self.creations: list[tuple[str, TableCreation]] = []
        #: (lines, warnings) when the pass began: its report is what they grew by
        self._pass_start = (0, 0)
        # An application's processor state lives in memory: one whose log was unfinished when
        # navd stopped is read from its start, so its records get the whole application's context.
        self.tailer.rewind_unfinished()

    @classmethod
    def from_config(cls, config: NavdConfig, state_dir: Path, *, extractor_run_id: str | None = None,
                    index: SolrIndex | None = None, post_commit: Sequence[PostCommitHook] = ()) -> SparkExtractor:
        spark, hdfs = spark_settings(config), hdfs_settings(config)
        on_hdfs = bool(remote_directories(spark.event_log_dirs))
        return cls(cluster=config.cluster.name, directories=spark.event_log_dirs, state_dir=state_dir,
                   default_fs=config.cluster.default_fs, extractor_run_id=extractor_run_id,
                   hdfs_client=make_client(hdfs) if on_hdfs and hdfs.urls else None, index=index,
                   allowed_log_owners=spark.allowed_log_owners, checkpoint_seconds=spark.checkpoint_seconds,
                   post_commit=post_commit)

    @property
    def lines_read(self) -> int:
        """Lines of event logs read so far, over all passes."""
        return self._lines

    @property
    def warnings_given(self) -> int:
        """Warnings so far (skipped lines and events, refused DROPs, unreadable files)."""
        return self._warnings + self.tailer.warnings

    @property
    def applications_in_memory(self) -> int:
        """Applications whose state is held: those whose logs are still being written (a Spark
        Thrift Server running for months among them) and, during a pass, the one being read."""
        return len(self._apps)

    def extract(self, *, full: bool = False) -> Iterator[Record | Checkpoint]:
        """Records of everything new in the event logs since the last pass (positions say what
        is new; `full` changes nothing), one application after the other: an application's
        records are yielded once its new lines are read, before the next log is read, and a
        finished application's state is dropped then (its log is never read again)."""
        del full
        self._pass_start = (self._lines, self.warnings_given)
        self._last_commit = time.monotonic()
        return self._records_of_lines(self.tailer.poll())

    def extract_logs(self, event_logs: Iterable[EventLog]) -> Iterator[Record | Checkpoint]:
        """The records of just `event_logs`, read as a pass reads them (what is new in each since
        its position: all of it without one). A Spark history backfill task's read."""
        return self._records_of_lines(chain.from_iterable(self.tailer.read_log(e) for e in event_logs))

    def _records_of_lines(self, lines: Iterable[tuple[EventLog, Line]]) -> Iterator[Record | Checkpoint]:
        current: EventLog | None = None
        app: _Application | None = None
        finished = False
        for event_log, line in lines:
            if event_log is not current:  # once per log and poll, not per line
                if current is not None and app is not None:
                    yield from self._end_of(current, app, finished)
                current, finished = event_log, False
                app = self._apps.get(event_log.path)
                if app is None:
                    app = self._apps[event_log.path] = _Application(ApplicationProcessor(
                        cluster=self.cluster, default_fs=self.default_fs, source_name=event_log.path))
                # Every data file's owner: a file of a log written by someone else makes the
                # log's owner a mixed one, which no table's first log matches.
                app.owners.update(file_owners(event_log))
            assert app is not None
            if line.text:
                app.processor.feed_line(line.text)
                self._lines += 1
                app.unemitted_lines += 1
                if app.unemitted_lines >= EMIT_EVERY_LINES:
                    # The executions ended so far go to the writer while the rest is read, and
                    # their state is dropped: a long log is neither held whole nor written at once.
                    yield from self._records_of(app, finished_only=True)
            app.touched = True
            self.tailer.advance(line.cursor)
            if event_log.complete and _is_last(event_log, line.cursor):
                finished = True
        if current is not None and app is not None:
            yield from self._end_of(current, app, finished)

    def _end_of(self, event_log: EventLog, app: _Application, finished: bool) -> Iterator[Record | Checkpoint]:
        """The records of `app` once this poll's lines of its log are read, then a CHECKPOINT if
        `checkpoint_seconds` went by since the last commit: every position advanced so far is of
        a line whose records were yielded before the mark."""
        if app.touched:
            app.touched = False
            wrote = False
            for record in self._records_of(app):
                wrote = True
                yield record
            if wrote and time.monotonic() - self._last_commit >= self.checkpoint_seconds:
                self._marked = True
                yield CHECKPOINT
        if finished:
            self._apps.pop(event_log.path, None)  # complete: never read again, its state is not needed

    def _records_of(self, app: _Application, *, finished_only: bool = False) -> Iterator[Record]:
        """The records of what changed in `app` since they were last taken (`finished_only`: of
        the executions that ended only); ended executions are retired from memory after."""
        app.unemitted_lines = 0
        run = app.processor.finish(finished_only=finished_only)
        changed = tuple(e for e in run.executions if app.emitted.get(e.execution_id) != e)
        for execution in changed:
            app.emitted[execution.execution_id] = execution
        skipped = sum(run.skipped.values())
        self._warnings += skipped - app.skipped_reported
        app.skipped_reported = skipped
        partial = dataclasses.replace(run, executions=changed)
        emitted = list(records(partial, extractor_run_id=self.extractor_run_id, log_owner=app.owner))
        if emitted and run.app_id:
            self._written_apps.add(run.app_id)
            self._view_definitions.extend(view_definitions(partial, app.owner))
        for stub in stubs_for(emitted, self.extractor_run_id, app.owner):
            key = stub.element.identity if isinstance(stub, ElementStub) else stub.identity  # type: ignore[union-attr]
            if key not in app.stubbed:
                app.stubbed.add(key)
                if isinstance(stub, ElementStub):
                    self._unposted_stubs.setdefault(key, stub_document(stub))
                yield stub
        yield from emitted
        # After the stubs: a deletion flags only what is indexed.
        drops = list(dropped(run, changed))
        yield from self._trusted_drops(app, run, drops) if self.check_drops else drops
        # Applied at the commit, once Solr has this lineage and these DROPs (apply_creations).
        self.creations.extend((app.owner, creation) for creation in created_tables(run, changed))
        if run.app_id is not None and run.app_name is not None:  # else no records were made of them
            for root_id in app.processor.retire_ended(run.executions):
                app.emitted.pop(root_id, None)  # ended: never built again

    def _trusted_drops(self, app: _Application, run: ApplicationRun, drops: list[Deletion]) -> Iterator[Deletion]:
        """The deletions of a DROP in the log that it may make: anyone who can write the log
        directory can write a DropTableEvent (docs/sources/spark.md, "Trust model of event-log directories").

        A DROP flags a table (a database; a table's columns follow it) only when the index holds
        it as nothing but a stub Spark extraction made from a log of this log's owner, or not at
        all (the flag then applies to nothing, or to the stub this pass writes). Never what the
        HMS extractor indexed (its next pass flags what is really gone) or what a log of another
        owner first named, even if this log says it created it (a forger writes a CREATE first
        too). Without an index to ask, only what the application created is flagged. Each
        refused table or database is one warning, counted in the pass's warnings.
        """
        if not drops:
            return
        subject = {d.ref.identity: field_table(d.ref) or d.ref for d in drops}
        ask = {ref.identity: ref for ref in subject.values()}
        refused: dict[str, str] = {}
        if self.index is None:
            # Nothing to ask who else knows them: only what the application itself created.
            own = created(run)
            refused = {i: "navd has no index to ask who knows it" for i, ref in ask.items()
                       if ref.qualified_name not in own}
        else:
            # Asked also for what the log says it created: a forger writes a CREATE first too.
            indexed = {str(doc["identity"]): doc for doc in self.index.get("elements", ask)}
            for identity in ask:
                # Absent from Solr but with the writer: the stub it is about to post is what counts.
                doc = indexed.get(identity) or self._unposted_stubs.get(identity)
                why = why_untrusted(doc, app.owner) if doc is not None else ""
                if why:
                    refused[identity] = why
        for identity, why in refused.items():
            if identity not in app.refused:
                app.refused.add(identity)
                if report_refused_drop(ask[identity].qualified_name, why, log_path=app.processor.source_name,
                                       owner=app.owner, app_id=run.app_id):
                    self._warnings += 1
        for deletion in drops:
            if subject[deletion.ref.identity].identity not in refused:
                yield deletion

    def commit(self) -> None:
        """Make the positions of everything extracted so far durable. Call after the writer flushed.

        First the post-commit hooks run over the applications written since the last commit (the
        Spark component's withdraws the OpenLineage listener's lineage of them), then the lineage
        of earlier definitions of the views they defined is withdrawn (replaced_views): if Solr
        fails either, the positions stay and the next pass writes and withdraws again."""
        if self.index is not None and self._written_apps:
            written = frozenset(self._written_apps)
            for hook in self.post_commit:
                hook(self.index, written)
        self._written_apps.clear()
        self._unposted_stubs.clear()  # the writer flushed: Solr has them
        if self.check_drops:  # else the caller applies them, with the DROPs
            if self.index is not None and self.creations:
                apply_creations(self.index, self.creations, extractor_run_id=self.extractor_run_id)
            self.creations.clear()  # without an index nothing tells a re-creation: nothing to move
        if self.index is not None and self._view_definitions:
            self._withdraw_replaced_views(self.index)
        self._view_definitions.clear()
        self.tailer.checkpoint()
        if self._marked:
            # Said at info: on a first start over a long history it is the progress an admin sees.
            self._marked = False
            self.checkpoints += 1
            log.info("event log positions committed during the pass", checkpoint=self.checkpoints,
                     lines=self._lines, applications_in_memory=len(self._apps))
        self._last_commit = time.monotonic()

    def _withdraw_replaced_views(self, index: SolrIndex) -> None:
        """The earlier definitions of the views written since the last commit lose their
        lineage and their columns the latest no longer has (replaced_views); a definition from
        another owner's log is kept, warned once."""
        done = withdraw_replaced(index, self._view_definitions)
        for view in revive_defined_again(index, self._view_definitions, why_untrusted):
            log.info("view defined again after it was dropped: alive again", view=view)
        for view, execution in done.definitions:
            log.info("view defined again: the lineage of its earlier definition withdrawn", view=view,
                     execution=execution)
        if done.columns_dropped:
            log.info("view defined again: the columns its definition no longer has flagged deleted",
                     columns=list(done.columns_dropped))
        for view in done.untrusted:
            self._warnings += 1
            log.warning("view defined again by a log of another owner: its earlier definition's lineage kept",
                        view=view)

    def rollback(self) -> None:
        """The pass failed or was stopped: positions stay at the last commit. The applications'
        processors are ahead of them, so the runner discards this extractor and the next pass,
        with a new one, reads from the committed positions."""
        self._marked = False
        self._written_apps.clear()
        self._view_definitions.clear()
        self.creations.clear()
        self._unposted_stubs.clear()
        self.tailer.rollback()

    def finished(self, records: int) -> PassReport:
        lines, warnings = self._pass_start
        return PassReport(lines=self._lines - lines, records=records, warnings=self.warnings_given - warnings)

    def close(self) -> None:
        """Nothing to release: each pass commits its positions, and the WebHDFS client holds no
        connection between requests worth closing."""


#: How `why_untrusted` starts its reason when an extractor that reads the source itself (HMS, HDFS)
#: indexed the element: that extractor, not a log, says when the element is gone.
_INDEXED_BY = "indexed by "


def file_owners(event_log: EventLog) -> set[str]:
    """The owners of an event log's data files: its owner, or a mixed one (joined, sorted) when
    someone else wrote a part of it."""
    return {file.status.owner for file in event_log.files}


def report_refused_drop(entity: str, why: str, *, log_path: str, owner: str, app_id: str | None) -> bool:
    """Log a DROP not applied for `why` (from `why_untrusted`); whether it is a warning (counted):
    one left to the extractor that indexed the table is the everyday case, said at info."""
    if why.startswith(_INDEXED_BY):
        # A real DROP of a table the HMS extractor indexed: its next pass flags what is really gone.
        log.info("DROP in an event log left to the extractor that indexed it", entity=entity, known_from=why,
                 log=log_path, log_owner=owner, app_id=app_id)
        return False
    log.warning("DROP in an event log not applied: known from a source the log's owner cannot speak for",
                entity=entity, known_from=why, log=log_path, log_owner=owner, app_id=app_id)
    return True


def why_untrusted(doc: dict[str, object], owner: str) -> str:
    """Why a DROP in a log of `owner` must not flag the indexed element `doc` ("" if it may)."""
    if not is_stub(doc):
        source = str(doc.get("sourceType", "")).lower()
        return f"{_INDEXED_BY}the {source} extractor" if source else f"{_INDEXED_BY}another extractor"
    properties = json.loads(str(doc["properties"]))
    if properties.get(STUB_MARK) != "spark":
        return f"named by {properties.get(STUB_MARK)}"
    first = properties.get(LOG_OWNER)
    if first != owner or not owner:
        return f"first named by a log of {first or 'an unknown owner'}"
    return ""


def apply_creations(index: SolrIndex, creations: Sequence[tuple[str, TableCreation]], *,
                    extractor_run_id: str | None) -> int:
    """Record the re-creations among `creations` ((log owner, table created), in reading order,
    their lineage and DROPs already in Solr); the relations moved to earlier incarnations.

    A creation is a re-creation when the log dropped the name before, or the index has the name
    flagged deleted by then. It is recorded (incarnations.recreate) only where a DROP in that log
    may flag the table (`why_untrusted`); elsewhere the extractor that indexed the table (the
    metastore's) records it. Each is applied in turn over the element as the ones before left it,
    so a later DROP already applied keeps the name flagged and the result is the same whichever
    commit the creations fall in (the backfill applies them after all its DROPs).
    """
    docs = {str(d["identity"]): d for d in index.get("elements", sorted({c.table.identity for _o, c in creations}))}
    moved = 0
    searchable = False
    for owner, creation in creations:
        doc = docs.get(creation.table.identity)
        if doc is None or why_untrusted(doc, owner):
            continue  # nothing of it indexed, or not this log's to say
        flagged = bool(doc.get("deleted"))
        delete_time = stored_time(doc.get(element_field("delete_time")))
        dropped_at = creation.dropped
        if dropped_at is None:
            if not flagged or delete_time is None or delete_time > creation.created:
                continue  # not dropped before (as far as navd knows): a first creation
            dropped_at = delete_time
        earlier = creation.earlier_created or stored_time(doc.get(element_field("created")))
        alive = not flagged or delete_time is None or delete_time <= creation.created
        if not searchable:
            # the pass's own lineage, and the DROPs' flags on columns (recreate revives those the
            # new incarnation names): searchable now
            for core in ("relations", "elements"):
                index.commit(core, soft=True)
            searchable = True
        moved += recreate(index, Recreation(creation.table, dropped_at, creation.created,
                                            earlier if earlier is not None and earlier <= dropped_at else None,
                                            alive), extractor_run_id=extractor_run_id)
        doc = {**doc, element_field("created"): solr_date(creation.created)}
        if alive:
            doc.update({"deleted": False, element_field("delete_time"): None})
        docs[creation.table.identity] = doc
        log.info("table created again: the lineage of its dropped incarnation kept under a name of its own",
                 table=creation.table.qualified_name, dropped=dropped_at.isoformat(),
                 created=creation.created.isoformat())
    return moved


def _is_last(event_log: EventLog, cursor: LogCursor) -> bool:
    return cursor.done and bool(event_log.files) and cursor.key == event_log.files[-1].key
