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

import dataclasses
import json
import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime
from typing import Any

import orjson

from navd.logs import get_logger
from navd.model import DependencyType, ElementType, EntityRef, InvalidName, RelationType, SourceType
from navd.names import (
    catalog_table_qualified_name,
    field_ref,
    function_qualified_name,
    hive_qualified_name,
    path_qualified_name,
    path_source_type,
    table_of_field,
)

from .plan.columns import column_flows
from .plan.model import (
    CONTROL_SUBTYPES,
    GAP_DELTA,
    GAP_DELTA_TARGET,
    GAP_PANDAS,
    GAP_ROW_LEVEL,
    GAP_ROW_LEVEL_TARGET,
    GAP_STREAMING,
    GAP_STREAMING_SINK,
    GAP_V2_WRITE,
    GAPS,
    ColumnFlow,
    ColumnSource,
    PlanError,
    PlanIO,
    PlanTooLarge,
    Read,
    TableId,
    Write,
)
from .plan.tables import plan_io
from .plan.text import SESSION_CATALOG


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

#: Why an execution's written columns have no column lineage, per known gap of the plan reader (plan.GAPS):
#: the execution's `columnLineageSkipped` (docs/spark-conformance.md quotes each one).
GAP_REASONS: Mapping[str, str] = {
    GAP_DELTA: "MERGE INTO / UPDATE / DELETE on Delta: column lineage not read",
    GAP_DELTA_TARGET: "MERGE INTO / UPDATE / DELETE on Delta: the target is not named in the plan",
    GAP_ROW_LEVEL: "row-level write (ReplaceData, WriteDelta): column lineage not read",
    GAP_ROW_LEVEL_TARGET: "row-level write (ReplaceData, WriteDelta): the table is not named in the plan",
    GAP_STREAMING: "streaming write: column lineage not read",
    GAP_STREAMING_SINK: "streaming write: the sink names no path (foreachBatch, memory, console, ...)",
    GAP_V2_WRITE: "V2 write (AppendData, OverwriteByExpression, OverwritePartitionsDynamic): column lineage not read",
    GAP_PANDAS: "pandas UDF output: its columns are taken as made from every column the Python function reads",
}

#: A micro-batch of a streaming query: Spark describes its SQL execution as `[<name>\n]id = <query
#: id>\nrunId = <run id>\nbatch = <n>` (MicroBatchExecution). A V1 sink (files, foreachBatch) adds
#: no write node to the plan: the query's progress events name the sink (`FileSink[<path>]`).
_BATCH_DESCRIPTION = re.compile(r"(?:^|\n)id = [0-9a-f-]{36}\nrunId = ([0-9a-f-]{36})\nbatch = \d+")
_SINK_PATH = re.compile(r"^(\w+)\[([^\]\s,]*[/:][^\]\s,]*)\]$")

# `<method> at <File>.<ext>:<line>`: Spark's call-site description, not SQL text.
_CALL_SITE = re.compile(r"^\S+ at [\w$.-]+:\d+$")
_SPARK_VERSION = re.compile(r"^(\d+)\.(\d+)")

_log = get_logger("navd.extractor.spark")


# --- what one application log says ------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class Dataset:
    """A dataset endpoint, resolved to the element the owning extractor indexes."""

    ref: EntityRef
    #: plan node(s) it came from, e.g. "Scan parquet spark_catalog.sales.s"
    via: str
    truncated: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class CatalogEvent:
    action: str
    database: str
    name: str | None
    new_name: str | None
    qualified_name: str
    new_qualified_name: str | None
    execution_id: int | None


@dataclasses.dataclass(frozen=True, slots=True, order=True)
class ColumnEdge:
    """One column-level edge of an execution: DATA_FLOW (SIMPLE or EXPRESSION) or CONTROL_FLOW
    from a read column to a written column, FIELD refs of the tables (or paths: HDFS) they belong to.
    `subtype` says how the column is used (plan.DATA_SUBTYPES for DATA_FLOW, one or more of
    plan.CONTROL_SUBTYPES for CONTROL_FLOW, comma-separated in that order)."""

    target: EntityRef
    kind: RelationType
    source: EntityRef
    dependency_type: DependencyType | None = None
    expression: str | None = None
    subtype: str = ""

    def sort_key(self) -> tuple[str, str, str]:
        return (self.target.qualified_name, self.kind.value, self.source.qualified_name)


@dataclasses.dataclass(frozen=True, slots=True)
class SqlExecution:
    """A root SQL execution with its nested executions folded in."""

    execution_id: int
    nested_ids: tuple[int, ...]
    description: str
    query_text: str | None
    started: datetime | None
    ended: datetime | None
    outcome: str            # SUCCEEDED | FAILED | RUNNING
    error: str | None
    inputs: tuple[Dataset, ...]
    outputs: tuple[Dataset, ...]
    write_commands: tuple[str, ...]
    catalog_events: tuple[CatalogEvent, ...]
    unparsed_nodes: tuple[str, ...]
    #: column lineage of the written tables and paths, ordered by (target, kind, source)
    columns: tuple[ColumnEdge, ...] = ()
    #: why some column lineage was not recorded (plans too large, writes not read, ...)
    column_notes: tuple[str, ...] = ()
    #: written columns whose sources may be incomplete, by why: (why, (field qualified names))
    #: (plan.ColumnFlow.incomplete: argument lists Spark cut at spark.sql.debug.maxToStringFields)
    column_incomplete: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: the formatted physical plan that ran (AQE: the final plan; nested executions after the
    #: root's, each under its own header), at most MAX_STORED_PLAN_CHARS with a note when cut
    plan: str | None = None
    #: the views this execution defined that a later statement of the application defined
    #: again: (view qualified name, the execution id of the definition that replaced it). Their
    #: lineage is the later definition's: this execution no longer writes them.
    replaced_views: tuple[tuple[str, int], ...] = ()
    #: the columns (FIELD qualified names) of the views this execution defines, every one its
    #: plan names, with or without a source: what a view replaced later keeps of its columns
    view_columns: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class ApplicationRun:
    app_name: str | None
    app_id: str | None
    attempt: str
    user: str | None
    spark_version: str | None
    started: datetime | None
    ended: datetime | None
    outcome: str            # SUCCEEDED | FAILED | INCOMPLETE
    executions: tuple[SqlExecution, ...]
    catalog_events: tuple[CatalogEvent, ...]
    skipped: Mapping[str, int]
    events: int
    #: the columns named by the column lineage of executions retired from memory (see
    #: ApplicationProcessor.retire_ended): what a later DROP of their table still flags. The
    #: processor's own set (not copied at every finish()); read only
    retired_columns: AbstractSet[EntityRef] = frozenset()


@dataclasses.dataclass(slots=True)
class _ExecState:
    execution_id: int
    root_id: int
    description: str = ""
    job_description: str | None = None
    started: datetime | None = None
    ended: datetime | None = None
    error: str | None = None
    finished: bool = False
    io: PlanIO = dataclasses.field(default_factory=PlanIO)
    #: column flows of this execution's last plan that had any (AQE: the final plan)
    flows: tuple[ColumnFlow, ...] = ()
    column_note: str | None = None
    #: plan texts not walked for column lineage yet, oldest first. The walk is deferred to the
    #: execution's end (or a snapshot of a running one) so that of an execution's AQE re-plans
    #: normally only the final one is walked: walking each one cost more than the rest together.
    pending_plans: list[str] = dataclasses.field(default_factory=list)
    #: the latest plan text (AQE: the final plan once the execution ended), already bounded
    plan: str | None = None
    #: the warning about columns with incomplete sources was given (once per execution)
    warned_incomplete: bool = False
    #: the run id of the streaming query this execution is a micro-batch of
    stream_run: str | None = None


class ApplicationProcessor:
    """The state machine of one application's event log. Feed events in order, then finish()."""

    def __init__(self, *, cluster: str, default_fs: str = "", source_name: str = "") -> None:
        if not cluster:
            raise ValueError("cluster is required (the Hive qualified names' @cluster)")
        self.cluster = cluster
        self.default_fs = default_fs
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
        self._env_default_fs = ""
        self._catalog_classes: dict[str, list[str]] = {}
        self._execs: dict[int, _ExecState] = {}
        self._open: list[int] = []
        self._catalog_events: list[CatalogEvent] = []
        #: a streaming query's sink, by its run id (from its progress events)
        self._stream_sinks: dict[str, str] = {}
        #: _source_fields_of by (table, paths, column): the same scanned columns recur in many executions
        self._source_fields: dict[tuple[TableId | None, tuple[str, ...], str], tuple[EntityRef, ...]] = {}
        #: see ApplicationRun.retired_columns
        self._retired_columns: set[EntityRef] = set()

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
        self._env_default_fs = str(hadoop.get("fs.defaultFS") or "")
        spark = event.get("Spark Properties") or {}
        for key, value in spark.items():
            # spark.sql.catalog.<name> = <implementation class>
            parts = str(key).split(".")
            if len(parts) == 4 and parts[:3] == ["spark", "sql", "catalog"]:
                simple = str(value).rsplit(".", 1)[-1]
                self._catalog_classes.setdefault(simple, []).append(parts[3])

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
        state = _ExecState(execution_id, int(root) if root is not None and int(root) >= 0 else execution_id,
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

    def _add_plan(self, state: _ExecState, event: Mapping[str, Any]) -> None:
        text = event.get("physicalPlanDescription")
        if text:
            # Every update replaces the last: with AQE the final re-plan is the one that ran.
            # Cut now, not at the end: a long application keeps one plan per execution in memory.
            state.plan = bounded_plan(str(text))
        try:
            io = plan_io(event.get("sparkPlanInfo"), event.get("physicalPlanDescription"))
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

    def _resolve_flows(self, state: _ExecState) -> None:
        """Walk the pending plans, latest first, until one has column flows (AQE re-plans keep
        the expression ids; the latest plan is the one that ran). A plan that fails after the
        last one with flows leaves its note, as it would have in plan order."""
        note: str | None = None
        found: tuple[ColumnFlow, ...] = ()
        for text in reversed(state.pending_plans):
            try:
                flows = column_flows(text)
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

    def _warn_incomplete(self, state: _ExecState, flows: tuple[ColumnFlow, ...]) -> None:
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
        groups: dict[int, list[_ExecState]] = {}
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
            execution = self._execution(root_id, groups[root_id])
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

    def _execution(self, root_id: int, states: list[_ExecState]) -> SqlExecution:
        states.sort(key=lambda s: s.execution_id)
        root = next((s for s in states if s.execution_id == root_id), states[0])
        states = self._without_idle_views(root_id, states)
        io = PlanIO()
        for state in states:
            io = io | state.io
        creates = {w.table for w in io.writes if w.creates_table and w.table is not None}
        outputs: dict[str, Dataset] = {}
        # key=repr: a stable total order; the dataclass order fails on None against a value
        # (a multi-insert writes a table and a bare directory with the same command)
        nested_paths = {_path_part(w.path) for w in io.writes
                        if w.table is None and w.path is not None and w.command != _DS_DIR}
        gaps = list(io.gaps)
        sink_commands: set[str] = set()
        if root.stream_run is not None:
            # a micro-batch: its sink, from the query's progress (a V1 sink is not in the plan)
            sink = _SINK_PATH.match(self._stream_sinks.get(root.stream_run, ""))
            if sink:
                dataset = Dataset(self._path_ref(sink.group(2)), sink.group(1))
                outputs.setdefault(dataset.ref.qualified_name, dataset)
                sink_commands.add(sink.group(1))
                gaps = [g for g in gaps if g != GAP_STREAMING_SINK] + [GAP_STREAMING]
            elif not io.writes:
                gaps += [GAP_STREAMING, GAP_STREAMING_SINK]
            # else foreachBatch's own writes, nested executions read as any other
        for write in sorted(io.writes, key=repr):
            if write.table is None and write.path is not None and creates:
                # The nested insert of a CTAS/saveAsTable names only the new table's location.
                continue
            if write.command == _DS_DIR and _path_part(write.path) in nested_paths:
                # INSERT OVERWRITE DIRECTORY ... USING: the command names its directory as the
                # statement spelled it (`/p`: qualified by Spark with its own default FS); its
                # nested insert names the same directory fully qualified: that one is kept.
                continue
            dataset = self._write_dataset(write)
            if dataset is not None:
                outputs.setdefault(dataset.ref.qualified_name, dataset)
        inputs: dict[str, Dataset] = {}
        for read in sorted(io.reads, key=repr):
            dataset = self._read_dataset(read)
            if dataset is not None:
                inputs.setdefault(dataset.ref.qualified_name, dataset)
        columns, column_notes, incomplete, view_columns = self._column_edges(states, io, list(outputs.values()))
        # The known gaps (plan.GAPS) say why the writes have no (or not all) column edges; a
        # pandas UDF whose result is only collected writes no column to flag.
        gaps = [g for g in GAPS if g in gaps and (g != GAP_PANDAS or outputs)]
        if gaps:
            column_notes = tuple(dict.fromkeys((*column_notes, *(GAP_REASONS[g] for g in gaps))))
        # neither a call site nor a micro-batch's `id = ...\nrunId = ...` (its description and
        # its jobs' too) is SQL text
        query_text = None if root.stream_run is not None else root.job_description or (
            None if _CALL_SITE.match(root.description) or not root.description else root.description)
        errors = [s.error for s in states if s.error]
        if errors:
            outcome = "FAILED"
        elif all(s.finished for s in states):
            outcome = "SUCCEEDED"
        else:
            outcome = "RUNNING"
        ends = [s.ended for s in states if s.ended is not None]
        planned = [s for s in states if s.plan]
        if len(planned) > 1:
            # A CTAS's root plan names the command; its nested insert's plan did the work.
            plan: str | None = bounded_plan("\n".join(f"== SQL execution {s.execution_id} ==\n{s.plan}"
                                                      for s in planned))
        else:
            plan = planned[0].plan if planned else None
        return SqlExecution(
            execution_id=root_id,
            nested_ids=tuple(s.execution_id for s in states if s.execution_id != root_id),
            description=root.description,
            query_text=query_text,
            started=min((s.started for s in states if s.started), default=None),
            ended=max(ends) if ends and outcome != "RUNNING" else None,
            outcome=outcome,
            error=errors[0] if errors else None,
            inputs=tuple(inputs[k] for k in sorted(inputs)),
            outputs=tuple(outputs[k] for k in sorted(outputs)),
            write_commands=tuple(sorted({w.command for w in io.writes} | sink_commands)),
            catalog_events=tuple(e for e in self._catalog_events if e.execution_id == root_id),
            unparsed_nodes=io.unparsed,
            columns=columns,
            column_notes=column_notes,
            column_incomplete=incomplete,
            plan=plan,
            view_columns=view_columns,
        )

    def _without_idle_views(self, root_id: int, states: list[_ExecState]) -> list[_ExecState]:
        """`states`, less the view definitions that changed nothing: CREATE VIEW IF NOT EXISTS of
        an existing view runs its command without touching the catalog, so a finished execution
        without a catalog event for the view neither read nor wrote anything. (Copies: a later
        finish() sees the states as fed.)"""
        changed = {e.qualified_name for e in self._catalog_events if e.execution_id == root_id}
        kept = []
        for state in states:
            idle = frozenset(w for w in state.io.writes if w.view and w.table is not None and state.finished
                             and self._table_ref(w.table).qualified_name not in changed)
            if idle:
                writes = state.io.writes - idle
                io = PlanIO(state.io.reads if writes else frozenset(), writes, state.io.unparsed)
                state = dataclasses.replace(state, io=io, flows=state.flows if writes else ())
            kept.append(state)
        return kept

    def _column_edges(self, states: list[_ExecState], io: PlanIO,
                      outputs: list[Dataset]) -> tuple[tuple[ColumnEdge, ...], tuple[str, ...],
                                                       tuple[tuple[str, tuple[str, ...]], ...], tuple[str, ...]]:
        """Column edges of the datasets written, from each state's column flows, with the
        written columns whose sources may be incomplete (by why, see SqlExecution) and the
        columns of the views written (SqlExecution.view_columns).

        A flow goes to the table or path its own write command names (a multi-insert writes
        several datasets from one plan, each from its own branch); a nested insert that names
        only a path (CTAS, saveAsTable) writes the table the execution creates, when there is
        exactly one; any other path written gets the columns as its HDFS FIELDs.
        """
        notes: list[str] = []
        edges: dict[tuple[str, str, str], ColumnEdge] = {}
        incomplete: dict[str, dict[str, None]] = {}   # why -> fields, in the order written
        view_columns: dict[str, None] = {}
        views_out = {d.ref.qualified_name for d in outputs if d.ref.type is ElementType.VIEW}
        tables_out = [d for d in outputs if d.ref.type is ElementType.TABLE]
        creates = any(w.creates_table for w in io.writes)
        for state in states:
            if state.column_note:
                notes.append(state.column_note)
            by_write: dict[Write | None, list[ColumnFlow]] = {}
            for flow in state.flows:
                by_write.setdefault(flow.write, []).append(flow)
            for write, flows in by_write.items():
                if write is None and len(by_write) > 1:
                    # A command plan.command_writes does not read, next to writes it reads
                    # (a multi-insert into a table and a Hive directory): its columns are not
                    # the execution's one table's.
                    notes.append("a write not read for column lineage")
                    continue
                target_table, note = self._flow_table(state, write, tables_out, creates)
                if target_table is None:
                    notes.append(note)
                    continue
                for flow in flows:
                    self._add_flow_edges(edges, notes, target_table, flow)
                    if target_table.qualified_name in views_out and flow.target:
                        field = _field_ref(target_table, flow.target)
                        if field is not None:
                            view_columns[field.qualified_name] = None
                    if flow.incomplete:
                        # a column the log does not even name (a view's past the cut): its table
                        field = _field_ref(target_table, flow.target) if flow.target else None
                        named = field.qualified_name if field is not None else target_table.qualified_name
                        incomplete.setdefault(flow.incomplete, {})[named] = None
        ordered = tuple(edges[k] for k in sorted(edges))
        return ordered, tuple(dict.fromkeys(notes)), tuple(
            (why, tuple(fields)) for why, fields in sorted(incomplete.items())), tuple(view_columns)

    def _flow_table(self, state: _ExecState, write: Write | None, tables_out: list[Dataset],
                    creates: bool) -> tuple[EntityRef | None, str]:
        """The dataset (table or path) that flows written by `write` go to, or (None, why not)."""
        if write is not None and write.table is not None:
            return self._table_ref(write.table, write.catalog_class), ""
        if write is not None and write.path is not None:
            # A path: the location of the table a CTAS/saveAsTable creates, else the directory
            # (or file) written, whose columns are its HDFS FIELDs.
            if creates and len(tables_out) == 1:
                return tables_out[0].ref, ""
            return self._path_ref(write.path), ""
        if write is not None:
            return None, "no single table written"
        # The plan's write command is not one plan.command_writes reads: the state's own write.
        own = sorted({w for w in state.io.writes if w.table is not None and not w.creates_table})
        if len({(w.table, w.catalog_class) for w in own}) == 1:
            return self._table_ref(own[0].table, own[0].catalog_class), ""  # type: ignore[arg-type]
        if own:
            return None, "several tables written by one plan"
        if len(tables_out) == 1:
            return tables_out[0].ref, ""
        paths = {self._path_ref(w.path).qualified_name: w.path for w in state.io.writes if w.path is not None}
        if not tables_out and len(paths) == 1:
            return self._path_ref(next(iter(paths.values()))), ""
        return None, "no single table written"

    def _add_flow_edges(self, edges: dict[tuple[str, str, str], ColumnEdge], notes: list[str],
                        target_table: EntityRef, flow: ColumnFlow) -> None:
        target = _field_ref(target_table, flow.target)
        if target is None:
            return
        data_subtypes = dict(flow.data_subtypes)
        control_subtypes = dict(flow.control_subtypes)
        kinds = [(RelationType.DATA_FLOW, s) for s in sorted(flow.sources)] + [
            (RelationType.CONTROL_FLOW, s) for s in sorted(flow.controls)]
        for kind, column in kinds:
            fields = self._source_fields_of(column)
            if not fields:
                notes.append("sources not read from a table or path")
            for source in fields:
                key = (target.qualified_name, kind.value, source.qualified_name)
                if kind is RelationType.DATA_FLOW:
                    edge = ColumnEdge(target, kind, source,
                                      DependencyType.SIMPLE if flow.expression is None else DependencyType.EXPRESSION,
                                      flow.expression, data_subtypes.get(column, ""))
                else:
                    used = control_subtypes.get(column, frozenset())
                    edge = ColumnEdge(target, kind, source,
                                      subtype=",".join(s for s in CONTROL_SUBTYPES if s in used))
                known = edges.get(key)
                if known is not None and kind is RelationType.CONTROL_FLOW and edge.subtype != known.subtype:
                    # one column controlling the target in two ways through two flows (an AQE
                    # plan's two writes of it): both ways
                    used = set(known.subtype.split(",")) | set(edge.subtype.split(","))
                    edges[key] = dataclasses.replace(known, subtype=",".join(s for s in CONTROL_SUBTYPES if s in used))
                edges.setdefault(key, edge)

    def _source_fields_of(self, column: ColumnSource) -> tuple[EntityRef, ...]:
        """The FIELDs a scanned column is read from: its table's, else (a scan of paths) the
        column of each path read, the same HDFS FIELD a job writing that path names."""
        # _table_ref without a catalog class depends only on the table and self.cluster
        key = (column.table, column.paths, column.column)
        if key not in self._source_fields:
            if column.table is not None:
                refs = [_field_ref(self._table_ref(column.table), column.column)]
            else:
                refs = []
                for path in column.paths:
                    try:
                        refs.append(_field_ref(self._path_ref(path), column.column))
                    except InvalidName:
                        continue   # a bare path without a default FS: not a dataset either

            self._source_fields[key] = tuple(r for r in refs if r is not None)
        return self._source_fields[key]

    # -- qualified names ----------------------------------------------------------------------

    def _table_ref(self, table: TableId, catalog_class: str | None = None) -> EntityRef:
        catalog = table.catalog
        if catalog is None and catalog_class is not None:
            names = self._catalog_classes.get(catalog_class, [])
            catalog = names[0] if len(names) == 1 else None
        if catalog_class is None and catalog in (None, SESSION_CATALOG):
            return EntityRef(SourceType.HIVE, hive_qualified_name(self.cluster, table.namespace, table.name),
                             ElementType.TABLE)
        # A table of another (V2) catalog: no extractor owns it yet.
        qn = catalog_table_qualified_name(self.cluster, catalog or "unknown_catalog", table.namespace or "default",
                                          table.name)
        return EntityRef(SourceType.SPARK, qn, ElementType.TABLE)

    def _path_ref(self, path: str) -> EntityRef:
        """A path read or written; the configured default FS qualifies bare paths, else the
        application's own fs.defaultFS (from its environment event)."""
        qn = path_qualified_name(path, self.default_fs or self._env_default_fs)
        return EntityRef(path_source_type(qn), qn, _path_type(qn))

    def _write_dataset(self, write: Write) -> Dataset | None:
        if write.table is not None:
            ref = self._table_ref(write.table, write.catalog_class)
            if write.view and ref.source_type is SourceType.HIVE:
                # A persisted view of the session catalog: the HMS extractor's VIEW element.
                ref = dataclasses.replace(ref, type=ElementType.VIEW)
            return Dataset(ref, write.command)
        if write.path is not None:
            return Dataset(self._path_ref(write.path), write.command)
        return None

    def _read_dataset(self, read: Read) -> Dataset | None:
        if read.table is not None:
            return Dataset(self._table_ref(read.table, read.catalog_class), read.node)
        if read.path is not None:
            return Dataset(self._path_ref(read.path), read.node, read.truncated)
        return None


def replace_views(executions: list[SqlExecution]) -> list[SqlExecution]:
    """`executions` (in order), each view written only by the last that defines it: CREATE OR
    REPLACE VIEW and ALTER VIEW ... AS replace a view's definition, and with it its lineage. An
    earlier definition keeps what it read, loses the view, its column edges and what it said of
    the view's columns, and names the execution that replaced it."""
    last: dict[str, int] = {}
    for execution in executions:
        for dataset in execution.outputs:
            if dataset.ref.type is ElementType.VIEW:
                last[dataset.ref.qualified_name] = execution.execution_id
    replaced = []
    for execution in executions:
        gone = {d.ref.qualified_name for d in execution.outputs if d.ref.type is ElementType.VIEW
                and last[d.ref.qualified_name] != execution.execution_id}
        if gone:
            def kept(name: str) -> bool:   # a column's or a dataset's qualified name
                return (table_of_field(name) or name) not in gone
            execution = dataclasses.replace(
                execution, outputs=tuple(d for d in execution.outputs if d.ref.qualified_name not in gone),
                columns=tuple(e for e in execution.columns if kept(e.target.qualified_name)),
                column_incomplete=tuple((why, kept_fields) for why, fields in execution.column_incomplete
                                        if (kept_fields := tuple(f for f in fields if kept(f)))),
                replaced_views=tuple((view, last[view]) for view in sorted(gone)),
                view_columns=tuple(c for c in execution.view_columns if kept(c)))
        replaced.append(execution)
    return replaced


#: How every ColumnFlow.incomplete reason that raising MAX_FIELDS_SETTING cures says so
CUT_BY_SPARK = "cut by Spark"

#: The Spark setting that bounds how many items of a list a plan's text shows (default 25)
MAX_FIELDS_SETTING = "spark.sql.debug.maxToStringFields"

#: The most of an execution's plan text kept on its element (Spark plans of wide tables or deep
#: query trees run to megabytes; the start and the final plan's top are what an admin reads).
MAX_STORED_PLAN_CHARS = 64 * 1024


def bounded_plan(text: str) -> str:
    """`text`, or its first lines up to MAX_STORED_PLAN_CHARS in all with a last line saying
    how much was cut."""
    if len(text) <= MAX_STORED_PLAN_CHARS:
        return text
    note = (f"\n... plan cut by navd: {{kept}} of {len(text)} characters kept "
            f"(at most {MAX_STORED_PLAN_CHARS} are stored)")
    room = MAX_STORED_PLAN_CHARS - len(note) - 10   # the note's {kept} grows by at most 6 digits
    cut = text.rfind("\n", 0, room)
    head = text[:cut if cut > room // 2 else room]
    return head + note.format(kept=len(head))


def _field_ref(table: EntityRef, column: str) -> EntityRef | None:
    """The FIELD of `column` of `table`; None for a column without a name (no edge for it)."""
    try:
        return field_ref(table, column)
    except InvalidName:
        return None


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


_FILE_SUFFIXES = frozenset({"csv", "tsv", "txt", "json", "jsonl", "parquet", "orc", "avro", "gz", "bz2",
                            "snappy", "zst", "lz4", "xml", "seq", "deflate"})


def _path_type(qualified_name: str) -> ElementType:
    """FILE for what is plainly a file (`part-00000-...`, a data-file suffix), else DIRECTORY.

    Spark's plans do not say which a root path is; this is only the type hint of an unlinked
    endpoint (the linker resolves by qualified name, whatever the type).
    """
    last = qualified_name.rsplit("/", 1)[-1]
    suffix = last.rsplit(".", 1)[-1].lower() if "." in last else ""
    return ElementType.FILE if last.startswith("part-") or suffix in _FILE_SUFFIXES else ElementType.DIRECTORY


#: INSERT OVERWRITE DIRECTORY ... USING <format>: its directory as the statement spelled it.
_DS_DIR = "InsertIntoDataSourceDirCommand"
_SCHEME_AUTHORITY = re.compile(r"^[A-Za-z][\w+.-]*:(?://[^/]*)?")


def _path_part(path: str | None) -> str:
    """The path of a URI or bare path without scheme and authority (`file:/a/` -> `/a`)."""
    return posixpath.normpath("/" + _SCHEME_AUTHORITY.sub("", path or "").lstrip("/"))


def _time(millis: Any) -> datetime | None:
    if millis is None or isinstance(millis, bool):
        return None
    value = int(millis)
    return datetime.fromtimestamp(value / 1000, tz=UTC) if value > 0 else None
