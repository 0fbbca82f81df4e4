"""What one Spark application log says: the typed, frozen result of reading it.

extractors.spark.events reads a log into an `ApplicationRun`; extractors.spark.records turns it
into navd.model records. Pure: values and one function over them, no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from datetime import datetime

from navd.model import DependencyType, ElementType, EntityRef, RelationType
from navd.names import table_of_field


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
    #: extractors.spark.events.ApplicationProcessor.retire_ended): what a later DROP of their table still flags. The
    #: processor's own set (not copied at every finish()); read only
    retired_columns: AbstractSet[EntityRef] = frozenset()



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
