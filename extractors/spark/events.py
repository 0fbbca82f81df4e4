"""Spark event logs -> what each application did. Pure: no I/O; the caller reads the log and feeds it.

One `ApplicationProcessor` per application log, fed its events in order (parsed dicts with
`feed`, or raw JSON lines with `feed_line`); `finish()` returns an `ApplicationRun` (frozen,
typed, what was understood) and extractors.spark.records turns it into navd.model records:

- the application as an OPERATION (`spark://<app name>`), its run as an OPERATION_EXECUTION
  (`spark://<app id>/<attempt or 1>`: user, start/end, outcome), joined by INSTANCE_OF; a run on
  YARN (`application_...` id) gets LOGICAL_PHYSICAL to the YARN execution `yarn://<app id>`;
- each SQL execution that read or wrote data (or changed the catalog) as an OPERATION_EXECUTION
  child of the run, `spark://<app id>/<attempt>/sql/<root execution id>`; nested executions
  (same `rootExecutionId`: a CTAS and the insert it runs, saveAsTable, V1 fallbacks of V2
  writes) are folded into their root; DATA_FLOW input dataset -> execution -> output dataset,
  with the dataset endpoint unlinked (the HDFS/HMS extractors own those elements);
- a persisted view defined through Spark SQL (CREATE [OR REPLACE] VIEW, ALTER VIEW ... AS) is an
  output of its execution: the HIVE VIEW `db.v@cluster`, named as the HMS extractor names it
  (the endpoint is unlinked and gets a stub, as a CTAS target; the HMS extractor's document
  replaces it), read tables as inputs, column lineage from the view's analysed plan (see
  plan.column_flows). Temporary views are not recorded (their plan's name is a single part). A
  view defined again later in the application has the later definition's lineage only: the
  earlier statement keeps what it read but no longer writes the view (`replace_views`, its
  element's `viewsReplaced` property); definitions in earlier passes are withdrawn from the
  index by the extractor, and the column stubs the latest definition no longer has flagged
  deleted (replaced_views.py, from `SqlExecution.view_columns`);
- `executionPlan`: the formatted physical plan that ran (the last plan event of the execution:
  with AQE the final plan; a CTAS's nested executions after the root's, each under
  `== SQL execution N ==`), at most MAX_STORED_PLAN_CHARS, cut with a last line saying so;
- `queryText` from the execution's description when it is SQL text (the Thrift Server sets the
  statement as the job description; otherwise Spark puts a call site such as
  `sql at NativeMethodAccessorImpl.java:0` there, which is not stored);
- column lineage of each execution that writes a table or path (plan.column_flows over the
  physicalPlanDescription; with AQE, the last re-plan): DATA_FLOW source FIELD -> target FIELD
  with dependencyType SIMPLE (copied or renamed) or EXPRESSION (with the expression in
  source-column names, at most 1,000 characters), and CONTROL_FLOW from the columns that
  filter, join, group, order or partition the rows or decide a CASE WHEN branch (a column doing
  both gets both edges); each edge's `subtype` property says how the column is used (DATA_FLOW:
  IDENTITY, TRANSFORMATION or AGGREGATION; CONTROL_FLOW: one or more, comma-separated, of
  FILTER, JOIN, GROUP_BY, SORT, WINDOW, CONDITIONAL); each table written gets the flows of its own write
  command (a multi-insert writes several); discriminator = the execution's qualifiedName, both
  ends unlinked (the HMS extractor owns FIELD elements). Field names are the table's name plus
  the column: `db.t.col@cluster` (HIVE), `<catalog>.db.t.col@cluster` (SPARK, other catalogs).
  Paths written (`df.write.parquet(path)`, `save`, INSERT OVERWRITE [LOCAL] DIRECTORY in both
  formats) and read (a scan of paths) have their columns as HDFS FIELDs
  `<path>#<column>` (navd.names.path_field_qualified_name; stubs, children of the path's
  element, as no extractor owns columns of files), so a job reading a path another job wrote
  continues the writer's column lineage. Plans over plan.MAX_PLAN_CHARS say so in the
  execution's `columnLineageSkipped` property ("plan too large for column lineage"). Written
  columns whose sources the plan text does not hold (argument lists Spark cut at
  spark.sql.debug.maxToStringFields, see plan.ColumnFlow.incomplete) are listed, with why, in
  the `columnLineageIncomplete` property; each such execution logs one warning naming the
  setting, counted in `ApplicationRun.skipped` as `column_lineage_incomplete` (the pass
  report's warnings);
- the known gaps (plan.GAPS: Delta MERGE / UPDATE / DELETE, V2 row-level and V2 writes,
  streaming micro-batches, pandas map/cogroup UDF outputs) keep their table lineage and say why
  their columns have no (or approximate) column edges in `columnLineageSkipped` (GAP_REASONS). A
  micro-batch of a streaming query (described `id = ...\nrunId = ...\nbatch = N`) writes the
  sink its query's progress events name (`FileSink[<path>]`): a V1 sink is not in the plan;
- catalog events (create/drop/rename/alter of tables and databases) on the execution that ran
  them, as `catalogEvents` property and in `ApplicationRun.catalog_events` (events outside any
  execution go on the application run).

Dataset names: session-catalog tables (`spark_catalog.db.t`, `db.t`) are HIVE tables
`db.t@cluster`; paths are HDFS elements named by `path_qualified_name` (bare paths get the
configured default FS, else the application's fs.defaultFS), typed FILE when plainly a file
(`part-*`, a data-file suffix) else DIRECTORY; tables of other (V2) catalogs, which no extractor
owns yet, are SPARK tables `<catalog>.<ns>.<table>@cluster` (provisional). All names are made by
navd.names.

Bad input never raises: an invalid JSON line, a non-object, an unknown event type, a known
event missing its fields, an unreadable plan, or a log from Spark < 2 is skipped, counted in
`ApplicationRun.skipped` by reason, and logged once per reason with the line number.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

from navd.logs import get_logger
from navd.model import EntityRef, InvalidName
from navd.names import function_qualified_name, hive_qualified_name

from .application_run import ApplicationRun, CatalogEvent, SqlExecution, replace_views
from .datasets import ApplicationDatasets
from .executions import ExecutionState, bounded_plan, build_execution
from .plan.columns import column_flows
from .plan.model import ColumnFlow, PlanError, PlanTooLarge
from .plan.tables import plan_io
from .plan.tree import PlanTrees


_SQL_PREFIX = "org.apache.spark.sql.execution.ui."
_CATALOG_PREFIX = "org.apache.spark.sql.catalyst.catalog."
_THRIFT_PREFIX = "org.apache.spark.sql.hive.thriftserver.ui."
SQL_START = _SQL_PREFIX + "SparkListenerSQLExecutionStart"
SQL_END = _SQL_PREFIX + "SparkListenerSQLExecutionEnd"
SQL_AQE_UPDATE = _SQL_PREFIX + "SparkListenerSQLAdaptiveExecutionUpdate"
_STREAMING_PREFIX = "org.apache.spark.sql.streaming.StreamingQueryListener$"
STREAM_PROGRESS = _STREAMING_PREFIX + "QueryProgressEvent"

#: Known event types with nothing for lineage: accepted silently (everything else unknown).
IGNORED_EVENTS = frozenset({
    "SparkListenerResourceProfileAdded", "SparkListenerExecutorAdded", "SparkListenerExecutorRemoved",
    "SparkListenerExecutorBlacklisted", "SparkListenerExecutorExcluded", "SparkListenerExecutorUnblacklisted",
    "SparkListenerExecutorUnexcluded", "SparkListenerNodeBlacklisted", "SparkListenerNodeExcluded",
    "SparkListenerNodeUnblacklisted", "SparkListenerNodeUnexcluded", "SparkListenerExecutorBlacklistedForStage",
    "SparkListenerExecutorExcludedForStage", "SparkListenerNodeBlacklistedForStage",
    "SparkListenerNodeExcludedForStage", "SparkListenerJobEnd", "SparkListenerStageSubmitted",
    "SparkListenerStageCompleted", "SparkListenerTaskStart", "SparkListenerTaskEnd",
    "SparkListenerTaskGettingResult", "SparkListenerSpeculativeTaskSubmitted", "SparkListenerUnschedulableTaskSetAdded",
    "SparkListenerUnschedulableTaskSetRemoved", "SparkListenerExecutorMetricsUpdate",
    "SparkListenerStageExecutorMetrics", "SparkListenerBlockManagerAdded", "SparkListenerBlockManagerRemoved",
    "SparkListenerBlockUpdated", "SparkListenerUnpersistRDD", "SparkListenerMiscellaneousProcessAdded",
    "SparkListenerExecutorDecommissioned",
    # Logged under its full class name (the YARN client-mode AM registers itself with it).
    "org.apache.spark.scheduler.SparkListenerMiscellaneousProcessAdded",
    _SQL_PREFIX + "SparkListenerDriverAccumUpdates",
    _SQL_PREFIX + "SparkListenerSQLAdaptiveSQLMetricUpdates",
    # A streaming query's progress (STREAM_PROGRESS) names its sink; the rest says nothing of data.
    _STREAMING_PREFIX + "QueryStartedEvent",
    _STREAMING_PREFIX + "QueryIdleEvent",
    _STREAMING_PREFIX + "QueryTerminatedEvent",
    # The Thrift Server's sessions and operations: the statement text already reaches each SQL
    # execution as its job description.
    *(_THRIFT_PREFIX + name for name in (
        "SparkListenerThriftServerSessionCreated", "SparkListenerThriftServerSessionClosed",
        "SparkListenerThriftServerOperationStart", "SparkListenerThriftServerOperationParsed",
        "SparkListenerThriftServerOperationCanceled", "SparkListenerThriftServerOperationTimeout",
        "SparkListenerThriftServerOperationError", "SparkListenerThriftServerOperationFinish",
        "SparkListenerThriftServerOperationClosed")),
})

#: ExternalCatalog events (the *PreEvent twins are ignored: the post event says it happened).
CATALOG_ACTIONS: Mapping[str, str] = {
    "CreateDatabaseEvent": "CREATE_DATABASE", "DropDatabaseEvent": "DROP_DATABASE",
    "AlterDatabaseEvent": "ALTER_DATABASE", "CreateTableEvent": "CREATE_TABLE",
    "DropTableEvent": "DROP_TABLE", "RenameTableEvent": "RENAME_TABLE", "AlterTableEvent": "ALTER_TABLE",
    "CreateFunctionEvent": "CREATE_FUNCTION", "DropFunctionEvent": "DROP_FUNCTION",
    "RenameFunctionEvent": "RENAME_FUNCTION", "AlterFunctionEvent": "ALTER_FUNCTION",
    # Partition events name the table (`partSpecs` lists the partitions; not kept, it can be long).
    "CreatePartitionsEvent": "CREATE_PARTITIONS", "DropPartitionsEvent": "DROP_PARTITIONS",
    "AlterPartitionsEvent": "ALTER_PARTITIONS", "RenamePartitionsEvent": "RENAME_PARTITIONS",
}

#: A micro-batch of a streaming query: Spark describes its SQL execution as `[<name>\n]id = <query
#: id>\nrunId = <run id>\nbatch = <n>` (MicroBatchExecution). A V1 sink (files, foreachBatch) adds
#: no write node to the plan: the query's progress events name the sink (`FileSink[<path>]`).
_BATCH_DESCRIPTION = re.compile(r"(?:^|\n)id = [0-9a-f-]{36}\nrunId = ([0-9a-f-]{36})\nbatch = \d+")

_SPARK_VERSION = re.compile(r"^(\d+)\.(\d+)")

_log = get_logger("navd.extractor.spark")

#: How every ColumnFlow.incomplete reason that raising MAX_FIELDS_SETTING cures says so
CUT_BY_SPARK = "cut by Spark"

#: The Spark setting that bounds how many items of a list a plan's text shows (default 25)
MAX_FIELDS_SETTING = "spark.sql.debug.maxToStringFields"


class ApplicationProcessor:
    """The state machine of one application's event log. Feed events in order, then finish()."""

    def __init__(self, *, cluster: str, default_fs: str = "", source_name: str = "") -> None:
        if not cluster:
            raise ValueError("cluster is required (the Hive qualified names' @cluster)")
        self.cluster = cluster
        self.default_fs = default_fs
        self._datasets = ApplicationDatasets(cluster=cluster, default_fs=default_fs)
        self.source_name = source_name     # e.g. the log file, only for messages
        self._line = 0
        self._events = 0
        self._skipped: Counter[str] = Counter()
        self._unsupported = False
        self._app_name: str | None = None
        self._app_id: str | None = None
        self._attempt: str | None = None
        self._user: str | None = None
        self._version: str | None = None
        self._started: datetime | None = None
        self._ended: datetime | None = None
        self._exit_code: int | None = None
        self._execs: dict[int, ExecutionState] = {}
        self._open: list[int] = []
        self._catalog_events: list[CatalogEvent] = []
        #: a streaming query's sink, by its run id (from its progress events)
        self._stream_sinks: dict[str, str] = {}
        #: see ApplicationRun.retired_columns
        self._retired_columns: set[EntityRef] = set()
        #: the plan texts parsed last: an execution's plan is read for its datasets when it comes
        #: and for its column lineage when the execution ends
        self._plan_trees = PlanTrees()

    # -- input --------------------------------------------------------------------------------

    def feed_lines(self, lines: Iterable[str | bytes]) -> None:
        for line in lines:
            self.feed_line(line)

    def feed_line(self, line: str | bytes) -> None:
        self._line += 1
        # orjson first (about twice as fast as json.loads; it takes the bytes as they are, no
        # decoding). Whatever it refuses (blank lines, invalid UTF-8, NaN/Infinity, lone
        # surrogates, numbers out of a double's range, ...) goes the json.loads way below, so
        # those lines behave as before. orjson reads integers beyond 64 bits as floats: Spark
        # writes JVM longs and doubles, never such integers.
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
        else:
            self._feed(event)
            return
        if isinstance(line, bytes):
            line = line.decode("utf-8", errors="replace")
        if not line.strip():
            return
        try:
            event = json.loads(line)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than orjson's 1,024 levels
            self._skip("invalid_json", f"line is not JSON ({exc.__class__.__name__}: {exc})")
            return
        self._feed(event)

    def feed(self, event: Any) -> None:
        self._line += 1
        self._feed(event)

    def _feed(self, event: Any) -> None:
        if not isinstance(event, Mapping) or not isinstance(event.get("Event"), str):
            self._skip("not_an_event", "not a JSON object with an \"Event\" string")
            return
        self._events += 1
        kind: str = event["Event"]
        if self._unsupported:
            return  # the whole log was reported once, at its SparkListenerLogStart: one warning, not one a line
        handler = _HANDLERS.get(kind)
        try:
            if handler is not None:
                handler(self, event)
            elif kind.startswith(_CATALOG_PREFIX):
                self._on_catalog(event, kind[len(_CATALOG_PREFIX):])
            elif kind not in IGNORED_EVENTS:
                self._skip("unknown_event", f"unknown event type {kind!r}")
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError, InvalidName) as exc:
            # PlanError is a ValueError: its message names the plan node. AttributeError: a field
            # of another JSON type where an object is read (`"Properties": true`); OverflowError:
            # an id or time given as Infinity.
            self._skip("malformed_event", f"{kind}: {exc.__class__.__name__}: {exc}")

    def _skip(self, reason: str, message: str) -> None:
        first = reason not in self._skipped
        self._skipped[reason] += 1
        if first:
            _log.warning("event skipped", reason=reason, detail=message, line=self._line,
                         log=self.source_name or None, app_id=self._app_id)

    # -- handlers -----------------------------------------------------------------------------

    def _on_log_start(self, event: Mapping[str, Any]) -> None:
        self._version = str(event.get("Spark Version") or "") or None
        match = _SPARK_VERSION.match(self._version or "")
        if match and int(match.group(1)) < 2:
            self._unsupported = True
            self._skip("unsupported_spark_version", f"Spark {self._version} logs are not supported (2.0+)")

    def _on_environment(self, event: Mapping[str, Any]) -> None:
        hadoop = event.get("Hadoop Properties") or {}
        spark = event.get("Spark Properties") or {}
        catalogs = []
        for key, value in spark.items():
            # spark.sql.catalog.<name> = <implementation class>
            parts = str(key).split(".")
            if len(parts) == 4 and parts[:3] == ["spark", "sql", "catalog"]:
                catalogs.append((parts[3], str(value).rsplit(".", 1)[-1]))
        self._datasets.learn_environment(str(hadoop.get("fs.defaultFS") or ""), catalogs)

    def _on_app_start(self, event: Mapping[str, Any]) -> None:
        self._app_name = str(event["App Name"])
        self._app_id = str(event.get("App ID") or "") or None
        attempt = event.get("App Attempt ID")
        self._attempt = str(attempt) if attempt not in (None, "") else None
        self._user = str(event.get("User") or "") or None
        self._started = _time(event.get("Timestamp"))

    def _on_app_end(self, event: Mapping[str, Any]) -> None:
        self._ended = _time(event.get("Timestamp"))
        code = event.get("ExitCode")
        self._exit_code = int(code) if code is not None else 0

    def _on_sql_start(self, event: Mapping[str, Any]) -> None:
        execution_id = int(event["executionId"])
        root = event.get("rootExecutionId")
        state = ExecutionState(execution_id, int(root) if root is not None and int(root) >= 0 else execution_id,
                           description=str(event.get("description") or ""),
                           started=_time(event.get("time")))
        batch = _BATCH_DESCRIPTION.search(state.description)
        if batch:
            state.stream_run = batch.group(1)
        self._execs[execution_id] = state
        self._open.append(execution_id)
        self._add_plan(state, event)

    def _on_aqe_update(self, event: Mapping[str, Any]) -> None:
        state = self._execs.get(int(event["executionId"]))
        if state is None:
            self._skip("orphan_event", f"adaptive update for unknown execution {event['executionId']}")
            return
        self._add_plan(state, event)

    def _add_plan(self, state: ExecutionState, event: Mapping[str, Any]) -> None:
        text = event.get("physicalPlanDescription")
        if text:
            # Every update replaces the last: with AQE the final re-plan is the one that ran.
            # Cut now, not at the end: a long application keeps one plan per execution in memory.
            state.plan = bounded_plan(str(text))
        try:
            io = plan_io(event.get("sparkPlanInfo"), event.get("physicalPlanDescription"),
                         parse=self._plan_trees.parse)
        except PlanError as exc:
            self._skip("unreadable_plan", f"execution {state.execution_id}: {exc}")
            return
        state.io = state.io | io
        plan = event.get("sparkPlanInfo")
        description = event.get("physicalPlanDescription")
        if not description or (isinstance(plan, Mapping) and plan.get("nodeName") == "CommandResult"):
            return  # a CommandResult repeats a command that ran (and was read) before
        if not state.io.writes:
            return  # column lineage is kept only for what an execution writes: reads need none
        state.pending_plans.append(str(description))

    def _resolve_flows(self, state: ExecutionState) -> None:
        """Walk the pending plans, latest first, until one has column flows (AQE re-plans keep
        the expression ids; the latest plan is the one that ran). A plan that fails after the
        last one with flows leaves its note, as it would have in plan order."""
        note: str | None = None
        found: tuple[ColumnFlow, ...] = ()
        for text in reversed(state.pending_plans):
            try:
                flows = column_flows(text, parse=self._plan_trees.parse)
            except PlanTooLarge:
                note = note or "plan too large for column lineage"
                continue
            except PlanError as exc:
                note = note or "column lineage not read"
                self._skip("unreadable_column_lineage", f"execution {state.execution_id}: {exc}")
                continue
            if flows:
                found = flows
                break
        if state.pending_plans:
            if found:
                state.flows = found
                self._warn_incomplete(state, found)
            state.column_note = note if (found or note) else state.column_note
            state.pending_plans.clear()

    def _warn_incomplete(self, state: ExecutionState, flows: tuple[ColumnFlow, ...]) -> None:
        """Columns whose sources the plan text did not hold (argument lists Spark cut): one
        warning per execution, counted with the skipped events (the pass report's warnings)."""
        # in the order written; a column the log does not name (a view's past the cut) as such.
        # (A pandas UDF's columns are listed too, but no setting brings their sources: no warning.)
        flows = tuple(f for f in flows if f.incomplete and CUT_BY_SPARK in f.incomplete)
        cut = list(dict.fromkeys(f.target or "(columns not named in the log)" for f in flows))
        if not cut or state.warned_incomplete:
            return
        state.warned_incomplete = True
        self._skipped["column_lineage_incomplete"] += 1
        _log.warning("column lineage incomplete: Spark cut the plan's argument lists; raise "
                     f"{MAX_FIELDS_SETTING} (default 25) for the application",
                     execution_id=state.execution_id, columns=", ".join(cut)[:2000],
                     why="; ".join(sorted({f.incomplete for f in flows if f.incomplete})),
                     log=self.source_name or None, app_id=self._app_id)

    def _on_sql_end(self, event: Mapping[str, Any]) -> None:
        execution_id = int(event["executionId"])
        state = self._execs.get(execution_id)
        if state is None:
            self._skip("orphan_event", f"end of unknown execution {execution_id}")
            return
        state.ended = _time(event.get("time"))
        state.finished = True
        self._resolve_flows(state)
        error = event.get("errorMessage")
        state.error = str(error) if error else None
        if execution_id in self._open:
            self._open.remove(execution_id)

    def _on_stream_progress(self, event: Mapping[str, Any]) -> None:
        progress = event["progress"]
        sink = progress.get("sink") if isinstance(progress, Mapping) else None
        if not isinstance(sink, Mapping):
            raise TypeError("progress without a sink object")
        if sink.get("description"):
            self._stream_sinks[str(progress["runId"])] = str(sink["description"])

    def _on_job_start(self, event: Mapping[str, Any]) -> None:
        props = event.get("Properties") or {}
        execution_id = props.get("spark.sql.execution.id")
        description = props.get("spark.job.description")
        if execution_id is None or not description:
            return
        state = self._execs.get(int(execution_id))
        if state is not None and state.job_description is None:
            state.job_description = str(description)

    def _on_catalog(self, event: Mapping[str, Any], kind: str) -> None:
        if kind.endswith("PreEvent"):
            return
        action = CATALOG_ACTIONS.get(kind)
        if action is None:
            self._skip("unknown_event", f"unknown catalog event {kind!r}")
            return
        database = str(event["database"])
        name = event.get("name")
        new_name = event.get("newName")
        if action.endswith("_DATABASE"):
            qn, new_qn = hive_qualified_name(self.cluster, database), None
        elif action.endswith("_FUNCTION"):
            qn = function_qualified_name(self.cluster, database, str(name))
            new_qn = function_qualified_name(self.cluster, database, str(new_name)) if new_name else None
        else:
            qn = hive_qualified_name(self.cluster, database, str(name))
            new_qn = hive_qualified_name(self.cluster, database, str(new_name)) if new_name else None
        current = self._open[-1] if self._open else None
        root = self._execs[current].root_id if current is not None else None
        self._catalog_events.append(CatalogEvent(action, database, str(name) if name else None,
                                                 str(new_name) if new_name else None, qn, new_qn, root))

    # -- output -------------------------------------------------------------------------------

    def finish(self, *, finished_only: bool = False) -> ApplicationRun:
        """What the log said, as far as it went (an in-progress log gives outcome INCOMPLETE).

        `finished_only`: only the executions that ended (with their nested ones), and running
        ones' plans are left unwalked: what a caller emitting records while it still reads the
        log takes, so that a running execution is built once its plans are all there."""
        groups: dict[int, list[ExecutionState]] = {}
        for state in self._execs.values():
            groups.setdefault(state.root_id, []).append(state)
        if finished_only:
            groups = {root: states for root, states in groups.items() if all(s.finished for s in states)}
        for states in groups.values():
            for state in states:
                self._resolve_flows(state)  # (an ended execution's were walked at its end)
        if self._ended is None:
            outcome = "INCOMPLETE"
        else:
            outcome = "SUCCEEDED" if not self._exit_code else "FAILED"
        executions = []
        for root_id in sorted(groups):
            execution = build_execution(root_id, groups[root_id], datasets=self._datasets,
                                        catalog_events=self._catalog_events, stream_sinks=self._stream_sinks)
            if execution.inputs or execution.outputs or execution.catalog_events:
                executions.append(execution)
        executions = replace_views(executions)
        return ApplicationRun(self._app_name, self._app_id, self._attempt or "1", self._user,
                              self._version, self._started, self._ended, outcome, tuple(executions),
                              tuple(self._catalog_events), dict(self._skipped), self._events,
                              self._retired_columns)

    def retire_ended(self, built: Iterable[SqlExecution]) -> set[int]:
        """Forget the state of every execution that ended (with its nested ones), once `built`,
        what the last finish() returned, is written: an application running for months (a Spark
        Thrift Server) keeps only its open executions. What a later DROP of a table needs of them
        (the columns their column lineage named) is kept, and the catalog events (small) stay
        for the application's last action on each name. Returns the root ids forgotten."""
        groups: dict[int, list[int]] = {}
        ended: set[int] = set()
        for state in self._execs.values():
            groups.setdefault(state.root_id, []).append(state.execution_id)
        for root_id, ids in groups.items():
            if all(self._execs[i].finished for i in ids):
                ended.add(root_id)
                for execution_id in ids:
                    del self._execs[execution_id]
        for execution in built:
            if execution.execution_id in ended:
                # Their tables are worked out only if a DROP comes (records.dropped): rare.
                self._retired_columns.update(edge.source for edge in execution.columns)
                self._retired_columns.update(edge.target for edge in execution.columns)
        return ended

    @property
    def executions_in_memory(self) -> int:
        """SQL executions (nested ones included) whose state is held."""
        return len(self._execs)


_HANDLERS = {
    "SparkListenerLogStart": ApplicationProcessor._on_log_start,
    "SparkListenerEnvironmentUpdate": ApplicationProcessor._on_environment,
    "SparkListenerApplicationStart": ApplicationProcessor._on_app_start,
    "SparkListenerApplicationEnd": ApplicationProcessor._on_app_end,
    "SparkListenerJobStart": ApplicationProcessor._on_job_start,
    SQL_START: ApplicationProcessor._on_sql_start,
    SQL_END: ApplicationProcessor._on_sql_end,
    SQL_AQE_UPDATE: ApplicationProcessor._on_aqe_update,
    STREAM_PROGRESS: ApplicationProcessor._on_stream_progress,
}


def _time(millis: Any) -> datetime | None:
    if millis is None or isinstance(millis, bool):
        return None
    value = int(millis)
    return datetime.fromtimestamp(value / 1000, tz=UTC) if value > 0 else None
