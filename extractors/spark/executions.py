"""One SQL execution of a Spark application, built from the state its events left.

extractors.spark.events keeps an `ExecutionState` per SQL execution as its events come; at the
end (or for a snapshot) `build_execution` folds a root execution and its nested ones into one
`SqlExecution`: the datasets read and written, its column edges, why some column lineage is
missing, the plan that ran, its query text and outcome. Pure.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Mapping, Sequence
from datetime import datetime

from navd.model import DependencyType, ElementType, EntityRef, RelationType

from .application_run import CatalogEvent, ColumnEdge, Dataset, SqlExecution
from .datasets import ApplicationDatasets, column_field
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
    PlanIO,
    Write,
)


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

#: A micro-batch's sink as its query's progress events name it (`FileSink[<path>]`).
_SINK_PATH = re.compile(r"^(\w+)\[([^\]\s,]*[/:][^\]\s,]*)\]$")

# `<method> at <File>.<ext>:<line>`: Spark's call-site description, not SQL text.
_CALL_SITE = re.compile(r"^\S+ at [\w$.-]+:\d+$")

#: The most of an execution's plan text kept on its element (Spark plans of wide tables or deep
#: query trees run to megabytes; the start and the final plan's top are what an admin reads).
MAX_STORED_PLAN_CHARS = 64 * 1024

#: INSERT OVERWRITE DIRECTORY ... USING <format>: its directory as the statement spelled it.
_DS_DIR = "InsertIntoDataSourceDirCommand"
_SCHEME_AUTHORITY = re.compile(r"^[A-Za-z][\w+.-]*:(?://[^/]*)?")


@dataclasses.dataclass(slots=True)
class ExecutionState:
    """What the events of one SQL execution said so far (mutable: the processor feeds it)."""

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


def build_execution(root_id: int, states: list[ExecutionState], *, datasets: ApplicationDatasets,
                    catalog_events: Sequence[CatalogEvent], stream_sinks: Mapping[str, str]) -> SqlExecution:
    """The root execution `root_id` with its nested executions (`states`, sorted here) folded in."""
    states.sort(key=lambda s: s.execution_id)
    root = next((s for s in states if s.execution_id == root_id), states[0])
    states = _without_idle_views(datasets, catalog_events, root_id, states)
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
        sink = _SINK_PATH.match(stream_sinks.get(root.stream_run, ""))
        if sink:
            dataset = Dataset(datasets.path_ref(sink.group(2)), sink.group(1))
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
        dataset = datasets.write_dataset(write)
        if dataset is not None:
            outputs.setdefault(dataset.ref.qualified_name, dataset)
    inputs: dict[str, Dataset] = {}
    for read in sorted(io.reads, key=repr):
        dataset = datasets.read_dataset(read)
        if dataset is not None:
            inputs.setdefault(dataset.ref.qualified_name, dataset)
    columns, column_notes, incomplete, view_columns = _column_edges(datasets, states, io,
                                                                     list(outputs.values()))
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
        catalog_events=tuple(e for e in catalog_events if e.execution_id == root_id),
        unparsed_nodes=io.unparsed,
        columns=columns,
        column_notes=column_notes,
        column_incomplete=incomplete,
        plan=plan,
        view_columns=view_columns,
    )


def _without_idle_views(datasets: ApplicationDatasets, catalog_events: Sequence[CatalogEvent], root_id: int,
                        states: list[ExecutionState]) -> list[ExecutionState]:
    """`states`, less the view definitions that changed nothing: CREATE VIEW IF NOT EXISTS of
    an existing view runs its command without touching the catalog, so a finished execution
    without a catalog event for the view neither read nor wrote anything. (Copies: a later
    finish() sees the states as fed.)"""
    changed = {e.qualified_name for e in catalog_events if e.execution_id == root_id}
    kept = []
    for state in states:
        idle = frozenset(w for w in state.io.writes if w.view and w.table is not None and state.finished
                         and datasets.table_ref(w.table).qualified_name not in changed)
        if idle:
            writes = state.io.writes - idle
            io = PlanIO(state.io.reads if writes else frozenset(), writes, state.io.unparsed)
            state = dataclasses.replace(state, io=io, flows=state.flows if writes else ())
        kept.append(state)
    return kept


def _column_edges(datasets: ApplicationDatasets, states: list[ExecutionState], io: PlanIO,
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
            target_table, note = _flow_table(datasets, state, write, tables_out, creates)
            if target_table is None:
                notes.append(note)
                continue
            for flow in flows:
                _add_flow_edges(datasets, edges, notes, target_table, flow)
                if target_table.qualified_name in views_out and flow.target:
                    field = column_field(target_table, flow.target)
                    if field is not None:
                        view_columns[field.qualified_name] = None
                if flow.incomplete:
                    # a column the log does not even name (a view's past the cut): its table
                    field = column_field(target_table, flow.target) if flow.target else None
                    named = field.qualified_name if field is not None else target_table.qualified_name
                    incomplete.setdefault(flow.incomplete, {})[named] = None
    ordered = tuple(edges[k] for k in sorted(edges))
    return ordered, tuple(dict.fromkeys(notes)), tuple(
        (why, tuple(fields)) for why, fields in sorted(incomplete.items())), tuple(view_columns)


def _flow_table(datasets: ApplicationDatasets, state: ExecutionState, write: Write | None, tables_out: list[Dataset],
                creates: bool) -> tuple[EntityRef | None, str]:
    """The dataset (table or path) that flows written by `write` go to, or (None, why not)."""
    if write is not None and write.table is not None:
        return datasets.table_ref(write.table, write.catalog_class), ""
    if write is not None and write.path is not None:
        # A path: the location of the table a CTAS/saveAsTable creates, else the directory
        # (or file) written, whose columns are its HDFS FIELDs.
        if creates and len(tables_out) == 1:
            return tables_out[0].ref, ""
        return datasets.path_ref(write.path), ""
    if write is not None:
        return None, "no single table written"
    # The plan's write command is not one plan.command_writes reads: the state's own write.
    own = sorted({w for w in state.io.writes if w.table is not None and not w.creates_table})
    if len({(w.table, w.catalog_class) for w in own}) == 1:
        return datasets.table_ref(own[0].table, own[0].catalog_class), ""  # type: ignore[arg-type]
    if own:
        return None, "several tables written by one plan"
    if len(tables_out) == 1:
        return tables_out[0].ref, ""
    paths = {datasets.path_ref(w.path).qualified_name: w.path for w in state.io.writes if w.path is not None}
    if not tables_out and len(paths) == 1:
        return datasets.path_ref(next(iter(paths.values()))), ""
    return None, "no single table written"


def _add_flow_edges(datasets: ApplicationDatasets, edges: dict[tuple[str, str, str], ColumnEdge], notes: list[str],
                    target_table: EntityRef, flow: ColumnFlow) -> None:
    target = column_field(target_table, flow.target)
    if target is None:
        return
    # flow.data_subtypes and flow.control_subtypes hold every source and control with how it
    # is used, sorted by column: the edges are made in that order
    kinds = [(RelationType.DATA_FLOW, s, how) for s, how in flow.data_subtypes] + [
        (RelationType.CONTROL_FLOW, s, ",".join(c for c in CONTROL_SUBTYPES if c in used))
        for s, used in flow.control_subtypes]
    dependency = DependencyType.SIMPLE if flow.expression is None else DependencyType.EXPRESSION
    for kind, column, subtype in kinds:
        fields = datasets.source_fields(column)
        if not fields:
            notes.append("sources not read from a table or path")
        kind_value = kind.value
        for source in fields:
            key = (target.qualified_name, kind_value, source.qualified_name)
            if kind is RelationType.DATA_FLOW:
                edge = ColumnEdge(target, kind, source, dependency, flow.expression, subtype)
            else:
                edge = ColumnEdge(target, kind, source, subtype=subtype)
            known = edges.get(key)
            if known is not None and kind is RelationType.CONTROL_FLOW and edge.subtype != known.subtype:
                # one column controlling the target in two ways through two flows (an AQE
                # plan's two writes of it): both ways
                used = set(known.subtype.split(",")) | set(edge.subtype.split(","))
                edges[key] = dataclasses.replace(known, subtype=",".join(s for s in CONTROL_SUBTYPES if s in used))
            edges.setdefault(key, edge)


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


def _path_part(path: str | None) -> str:
    """The path of a URI or bare path without scheme and authority (`file:/a/` -> `/a`)."""
    return posixpath.normpath("/" + _SCHEME_AUTHORITY.sub("", path or "").lstrip("/"))
