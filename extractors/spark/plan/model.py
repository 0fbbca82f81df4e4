"""What reading a Spark plan gives: the datasets an execution reads and writes (`PlanIO`) and the
columns it writes with where each comes from (`ColumnFlow`), the known gaps of column lineage,
and the plan reader's errors. Data only."""

from __future__ import annotations

import dataclasses


class PlanError(ValueError):
    """A plan node whose arguments do not have the expected shape; the message names it."""


class PlanTooLarge(PlanError):
    """A physicalPlanDescription longer than MAX_PLAN_CHARS."""


#: Plans longer than this are not read for column lineage (time and memory guard); the caller
#: records that the plan was too large.
MAX_PLAN_CHARS = 16 * 1024 * 1024
#: Expressions longer than this are cut and end with `...`.
MAX_EXPRESSION_CHARS = 1000


@dataclasses.dataclass(frozen=True, slots=True, order=True)
class TableId:
    """A catalog table as Spark names it: `catalog` is None when the plan did not say."""

    catalog: str | None
    namespace: str
    name: str


@dataclasses.dataclass(frozen=True, slots=True, order=True)
class Read:
    """One dataset read: a catalog table or a path (exactly one is set)."""

    node: str
    table: TableId | None = None
    path: str | None = None
    #: the plan's path list was cut short by Spark; more paths were read than listed
    truncated: bool = False
    #: set for V2 tables whose catalog is known only by its implementation class
    catalog_class: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, order=True)
class Write:
    """One dataset written: a catalog table, a path, or both (a table's location)."""

    command: str
    table: TableId | None = None
    path: str | None = None
    catalog_class: str | None = None
    #: CTAS / saveAsTable: the command that creates the table (its data is written by a nested
    #: execution whose write may name only the path)
    creates_table: bool = False
    #: CREATE [OR REPLACE] VIEW / ALTER VIEW ... AS of a persisted view: the table is a view
    view: bool = False


#: The known gaps of column lineage (docs/spark-conformance.md, "Known gaps"): plan shapes whose
#: datasets are read (table lineage) but whose written columns are not, or not all. `PlanIO.gaps`
#: names those of a plan; events.py says why on the execution (`columnLineageSkipped`).
GAP_DELTA = "delta"                    # Delta MERGE INTO / UPDATE / DELETE (a command, no query plan)
GAP_DELTA_TARGET = "delta_target"      # ... whose target table or path the plan does not name
GAP_ROW_LEVEL = "row_level"            # V2 row-level writes: ReplaceData, WriteDelta (MergeRows)
GAP_ROW_LEVEL_TARGET = "row_level_target"   # ... whose table the plan does not name
GAP_STREAMING = "streaming"            # a micro-batch of a streaming query
GAP_STREAMING_SINK = "streaming_sink"  # ... whose sink the plan does not name (foreachBatch, ...)
GAP_V2_WRITE = "v2_write"              # AppendData, OverwriteByExpression, OverwritePartitionsDynamic
GAP_PANDAS = "pandas"                  # outputs of pandas / Arrow map and cogroup UDFs
GAPS = (GAP_DELTA, GAP_DELTA_TARGET, GAP_ROW_LEVEL, GAP_ROW_LEVEL_TARGET, GAP_STREAMING, GAP_STREAMING_SINK,
        GAP_V2_WRITE, GAP_PANDAS)


@dataclasses.dataclass(frozen=True, slots=True)
class PlanIO:
    reads: frozenset[Read] = frozenset()
    writes: frozenset[Write] = frozenset()
    #: plan nodes that look like writes or reads but were not understood (for the run report)
    unparsed: tuple[str, ...] = ()
    #: the known column lineage gaps (GAPS) the plan runs into, in GAPS order
    gaps: tuple[str, ...] = ()

    def __or__(self, other: PlanIO) -> PlanIO:
        return PlanIO(self.reads | other.reads, self.writes | other.writes,
                      self.unparsed + tuple(u for u in other.unparsed if u not in self.unparsed),
                      tuple(g for g in GAPS if g in self.gaps or g in other.gaps))


# How a column is used (OpenLineage's column-lineage transformation subtypes: DIRECT for data,
# INDIRECT for control). A source flows as IDENTITY (copied or renamed), TRANSFORMATION (through
# an expression) or AGGREGATION (through an aggregate function, grouped or over a window); when
# several paths lead from one source to the target the strongest, in that order, is kept.
IDENTITY, TRANSFORMATION, AGGREGATION = "IDENTITY", "TRANSFORMATION", "AGGREGATION"
DATA_SUBTYPES = (IDENTITY, TRANSFORMATION, AGGREGATION)
FILTER, JOIN, GROUP_BY, SORT, WINDOW, CONDITIONAL = "FILTER", "JOIN", "GROUP_BY", "SORT", "WINDOW", "CONDITIONAL"
CONTROL_SUBTYPES = (FILTER, JOIN, GROUP_BY, SORT, WINDOW, CONDITIONAL)


@dataclasses.dataclass(frozen=True, slots=True, order=True)
class ColumnSource:
    scan: str               # the scan node, e.g. "Scan parquet spark_catalog.sales.s"
    table: TableId | None
    paths: tuple[str, ...]  # Location paths of a path scan (empty for catalog tables)
    column: str


@dataclasses.dataclass(frozen=True, slots=True)
class ColumnFlow:
    """One written column, the scanned columns it is computed from, and those that control it."""

    target: str
    sources: frozenset[ColumnSource]
    #: None when the value is copied (possibly renamed); else the expression, in source names
    expression: str | None
    #: columns that filter, join, group, order or partition the rows, or decide a CASE WHEN /
    #: if() branch (CONTROL_FLOW); a column can be both a source and a control (`WHERE x > 0`
    #: with `x` also written): Hive's LineageLogger and OpenLineage keep both facts
    controls: frozenset[ColumnSource] = frozenset()
    #: the write this column goes to, from the command above its `WriteFiles` (or the command
    #: itself, in plans without WriteFiles); None when that command is not one `command_writes`
    #: reads. A plan can write several datasets (a multi-insert): each one's columns are those
    #: of its own write.
    write: Write | None = None
    #: why the sources above may be incomplete, else None: an argument list Spark cut after
    #: spark.sql.debug.maxToStringFields items held how this column (or one it is computed or
    #: controlled from) was made, e.g. "Window arguments cut by Spark". A flow with an empty
    #: `target` stands for columns the log does not name (a view's past the cut): it has only this.
    incomplete: str | None = None
    #: how each source flows into the target (one of DATA_SUBTYPES) and how each control
    #: controls it (some of CONTROL_SUBTYPES), sorted by source
    data_subtypes: tuple[tuple[ColumnSource, str], ...] = ()
    control_subtypes: tuple[tuple[ColumnSource, frozenset[str]], ...] = ()
