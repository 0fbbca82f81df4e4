"""Table-level reads and writes of one Spark SQL execution, and its column lineage, from its
plan. Pure. (`plan_io` for the datasets; `column_flows` for the columns, see "column lineage"
below.)

Input: the `sparkPlanInfo` tree (nodeName, simpleString, metadata, children) and the
`physicalPlanDescription` text of a SparkListenerSQLExecutionStart or
SparkListenerSQLAdaptiveExecutionUpdate event. Output: `PlanIO`, the datasets read and written,
as Spark spells them (catalog identifiers, paths); qualified names are the caller's business.

What Spark 4.3 writes (checked against the captured fixtures in tests/fixtures/spark_events/):

- File scans: nodeName `Scan <format> <table>` (`Scan parquet spark_catalog.sales.s`) or
  `Scan <format> ` with an empty table for path reads; metadata `Location` is
  `InMemoryFileIndex(N paths)[file:/a, file:/b]` (Spark cuts the list at
  spark.sql.maxMetadataStringLength and ends it with `...`; cut entries are dropped and the
  read is flagged `truncated`).
- Hive SerDe tables: nodeName `Scan hive spark_catalog.shop.customers`, no Location.
- JDBC through a V2 catalog: `Scan JDBC v1 Relation from v2 scan jdbc.app.v2_out`;
  other V2 sources `BatchScan <catalog.ns.table>`.
- Writes, in sparkPlanInfo: `Execute InsertIntoHadoopFsRelationCommand` whose simpleString
  arguments start with the output path and contain `` `spark_catalog`.`db`.`t` `` when the
  target is a catalog table; `Execute InsertIntoHiveTable` whose first argument is the table;
  INSERT OVERWRITE [LOCAL] DIRECTORY: `Execute InsertIntoHiveDirCommand` (`<isLocal>,
  Storage(Location: /p, ...), ...`) and `Execute InsertIntoDataSourceDirCommand` (no arguments in
  the tree: its inner node's `Storage(Location: /p), <format>, ...` is in physicalPlanDescription;
  a nested InsertIntoHadoopFsRelationCommand writes the data), writes of their path.
- CTAS and saveAsTable: the sparkPlanInfo node is a bare `Execute CreateDataSourceTableAsSelectCommand`
  / `Execute CreateHiveTableAsSelectCommand` / `Execute SaveAsV1TableCommand`; the target is
  only in physicalPlanDescription's `Arguments:` of the inner command node:
  `` `spark_catalog`.`sales`.`t`, ErrorIfExists, [u] ``, `[Database: mo, TableName: hive_copy]`,
  `` `mo`.`ds_target`, Append, SubqueryAlias ... ``. The data is written by a nested execution
  (same rootExecutionId) with an InsertIntoHadoopFsRelationCommand or InsertIntoHiveTable;
  the CTAS description also lists its source tables as `LogicalRelation` / `HiveTableRelation`.
- Views: a bare `Execute CreateViewCommand` / `Execute AlterViewAsCommand`; the view and its
  analysed query (logical nodes with `Arguments:` only) are in physicalPlanDescription
  (`VIEW_COMMANDS`). A persisted view is a write of its table (`Write.view`); a temporary view
  (single-part name, `LocalTempView` / `GlobalTempView`) is nothing, its reads included.
- DataSource V2 writes: nodeName `<Command> <table name>` (`OverwriteByExpression noop-table`,
  `AppendData cat.ns.t`, row-level `ReplaceData ice.db.t` / `WriteDelta ice.db.t`), or
  `AppendDataExecV1` / `OverwriteByExpressionExecV1` with the table in the simpleString as
  `JDBCTable(app.v2_out,...` (no catalog name: see `V2Table.catalog_class`) or Delta's
  `DeltaTableV2(<session>,<path>,Some(CatalogTable(... Database: db ... Table: t ...`.
- Delta's MERGE INTO / UPDATE / DELETE: a bare `Execute MergeIntoCommand` (`UpdateCommand`,
  `DeleteCommand`); the target is in the description's inner node (DELTA_COMMANDS).
- `PlanIO.gaps`: the known column lineage gaps (GAPS) the plan runs into, for events.py to say
  on the execution why its written columns have no (or approximate) column edges.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any


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


class PlanError(ValueError):
    """A plan node whose arguments do not have the expected shape; the message names it."""


# --- identifiers -----------------------------------------------------------------------------

_BACKTICK_IDENT = re.compile(r"(`(?:[^`]|``)+`(?:\.`(?:[^`]|``)+`)+)")
_IDENT_PART = re.compile(r"`((?:[^`]|``)+)`")
_PLAIN_IDENT = re.compile(r"^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)+$")
SESSION_CATALOG = "spark_catalog"


def parse_identifier(text: str) -> TableId:
    """`spark_catalog`.`db`.`t`, spark_catalog.db.t, `db`.`t`, db.t -> TableId."""
    text = text.strip()
    if "`" in text:
        parts = [p.replace("``", "`") for p in _IDENT_PART.findall(text)]
    else:
        parts = text.split(".")
    parts = [p.strip() for p in parts]
    if len(parts) < 2 or any(not p for p in parts):
        raise PlanError(f"not a table identifier: {text!r}")
    if len(parts) == 2:
        return TableId(None, parts[0], parts[1])
    return TableId(parts[0], ".".join(parts[1:-1]), parts[-1])


def _first_backticked(text: str) -> TableId | None:
    match = _BACKTICK_IDENT.search(text)
    return parse_identifier(match.group(1)) if match else None


# --- physicalPlanDescription -----------------------------------------------------------------

_SECTION = re.compile(r"^\((\d+)\) (.+?)(?: \[codegen id : \d+\])?\s*$")


def description_sections(description: str) -> Iterator[tuple[str, dict[str, str]]]:
    """The `(n) NodeName` detail sections of a formatted plan: (node name, {field: value})."""
    name: str | None = None
    fields: dict[str, str] = {}
    for line in description.splitlines():
        header = _SECTION.match(line)
        if header:
            if name is not None:
                yield name, fields
            name, fields = header.group(2), {}
            continue
        if name is None or not line.strip():
            continue
        key, sep, value = line.partition(":")
        if sep and key and not key.startswith(" "):
            fields[key.strip()] = value.strip()
    if name is not None:
        yield name, fields


# --- the plan tree ---------------------------------------------------------------------------

def walk(node: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The nodes of a sparkPlanInfo tree, depth first, parents before children, in order.
    Raises PlanError for a node whose children are not a list."""
    if not isinstance(node, Mapping):
        return
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        children = current.get("children")
        if children:
            if not isinstance(children, list):
                # JSON gives a list or nothing else: a true, a number or an object here is a broken node
                raise PlanError(f"plan node {str(current.get('nodeName', ''))[:100]!r}: children is not a list")
            # `type(c) is dict` first: JSON objects are dicts, and the Mapping test is slower
            stack.extend(reversed([c for c in children if type(c) is dict or isinstance(c, Mapping)]))


_LOCATION = re.compile(r"^\w+(?:\(\d+ paths?\))?\s*\[(.*)\]?$", re.S)
_JDBC_V2_SCAN = re.compile(r"^Scan JDBC v1 Relation from v2 scan (\S+)$")
_V2_TABLE_ARG = re.compile(r"^(\w+?)Table\(([^,()]+),")
_V2_WRITE = re.compile(r"^(AppendData|OverwriteByExpression|OverwritePartitionsDynamic|ReplaceData|"
                       r"WriteDelta)(?:Exec)?(V1)?(?: (.+))?$")
_WRITE_MARKERS = ("Insert", "Write", "AsSelect", "AppendData", "Overwrite", "Save", "Merge")
# V2 write/CTAS nodes without the `Execute ` prefix that this module does not read yet.
_V2_UNREAD = re.compile(r"^(Atomic)?(Create|Replace)TableAsSelect|^WriteToDataSourceV2|^MergeRows|"
                        r"^WriteToMicroBatchDataSource")
NOOP_TABLE = "noop-table"
#: pandas / Arrow UDFs whose outputs are made by Python code from whole rows or groups (MapInPandas,
#: MapInArrow, FlatMapGroupsInPandas, FlatMapCoGroupsInPandas, their Arrow twins and Spark 3.x's
#: PythonMapInArrow: mapInPandas, mapInArrow, groupBy().applyInPandas, cogroup().applyInPandas):
#: no output column says which input columns it came from. (Scalar pandas UDFs, ArrowEvalPython, are read: their
#: arguments are known, as a Python UDF's.)
PANDAS_NODES = re.compile(r"^(?:Python)?(?:MapIn|FlatMapGroupsIn|FlatMapCoGroupsIn)(?:Pandas|Arrow)")
#: Delta Lake's row-level commands (MERGE INTO, UPDATE, DELETE): a bare `Execute <Command>` in the
#: tree; the description's inner node names the target: `MergeIntoCommand SubqueryAlias s,
#: SubqueryAlias t, `spark_catalog`.`db`.`t`, Delta[version=1, file:/w/db/t], <condition>, ...`,
#: `UpdateCommand Delta[version=1, <path>], `spark_catalog`.`db`.`t`, ...`, `DeleteCommand
#: <DeltaLog>, `spark_catalog`.`db`.`t`, <condition>` (delta-spark 4.4). Their query is a logical
#: plan (MERGE: `SubqueryAlias s` only; the scans run in nested executions): table lineage only.
DELTA_COMMANDS = ("MergeIntoCommand", "UpdateCommand", "DeleteCommand")
_DELTA_LOG = "/_delta_log/"
_DELTA_LOCATION = re.compile(r"\bDelta\[version=-?\d+, ([^\]\s,]+)\]")
#: Delta tables written through V2 (`AppendDataExecV1 DeltaTableV2(<session>,<path>,
#: Some(CatalogTable(\nCatalog: spark_catalog\nDatabase: db\nTable: t\n...`).
_DELTA_TABLE_V2 = re.compile(r"^DeltaTableV2\([^,]*,([^,]+),(?:Some\(CatalogTable\(\s*Catalog: (\S+)\s+"
                             r"Database: (\S+)\s+Table: (\S+))?")
#: How every node that plan_io reads or reports starts (_scan_reads, _tree_writes, _CTAS_COMMANDS
#: with or without `Execute `, _WRITE_MARKERS under `Execute `, _V2_UNREAD): one C-level test
#: skips the rest of the tree.
_IO_NODE_PREFIXES = ("Scan ", "BatchScan ", "Execute ", "AppendData", "Overwrite", "Replace",
                     "WriteDelta", "WriteTo", "MergeRows", "Atomic", "Create", "Optimized", "SaveAs",
                     "MapIn", "FlatMap", "PythonMapIn")


def location_paths(location: str) -> tuple[list[str], bool]:
    """`InMemoryFileIndex(2 paths)[file:/a, file:/b...` -> (['file:/a'], truncated=True)."""
    match = _LOCATION.match(location.strip())
    if not match:
        raise PlanError(f"Location {location!r} is not `Index[paths]`")
    body = match.group(1)
    truncated = not location.rstrip().endswith("]") or body.endswith("...")
    body = body.rstrip("]")
    paths: list[str] = []
    for item in body.split(", "):
        item = item.strip()
        if not item:
            continue
        if item.endswith("..."):
            truncated = True
            continue
        paths.append(item)
    return paths, truncated


def _scan_reads(node: Mapping[str, Any]) -> list[Read]:
    name = str(node.get("nodeName", ""))
    metadata = node.get("metadata") or {}
    jdbc = _JDBC_V2_SCAN.match(name)
    if jdbc:
        return [Read(name, table=parse_identifier(jdbc.group(1)))]
    if name.startswith("BatchScan "):
        return [Read(name, table=parse_identifier(name[len("BatchScan "):]))]
    if not name.startswith("Scan "):
        return []
    _, _, rest = name.partition(" ")
    _fmt, _, table_text = rest.partition(" ")
    table_text = table_text.strip()
    if table_text and _PLAIN_IDENT.match(table_text):
        return [Read(name, table=parse_identifier(table_text))]
    location = metadata.get("Location") if isinstance(metadata, Mapping) else None
    if location:
        paths, truncated = location_paths(str(location))
        # Delta reads its own transaction log (`<table>/_delta_log/*.json`) to plan a command:
        # not the job's data
        return [Read(name, path=p, truncated=truncated) for p in paths if _DELTA_LOG not in p]
    return []


def _args_after(simple: str, prefix: str) -> str:
    return simple[len(prefix):].strip() if simple.startswith(prefix) else ""


def _tree_writes(node: Mapping[str, Any]) -> list[Write]:
    name = str(node.get("nodeName", ""))
    return command_writes(name, _args_after(str(node.get("simpleString", "")), name))


def command_writes(name: str, args: str) -> list[Write]:
    """What a write node writes, from its name and its arguments (a sparkPlanInfo node's
    simpleString after the name, or a description section's `Arguments:`: the same text).
    [] for a node that is not a write this module reads."""
    if name == "Execute InsertIntoHadoopFsRelationCommand":
        path = args.split(", ", 1)[0].strip()
        if not path:
            raise PlanError(f"{name} without an output path: {args[:200]!r}")
        return [Write("InsertIntoHadoopFsRelationCommand", table=_first_backticked(args), path=path)]
    if name in _DIR_COMMANDS:
        # INSERT OVERWRITE [LOCAL] DIRECTORY: `[<isLocal>, ]Storage(Location: <path>, ...), ...`.
        location = _STORAGE_LOCATION.search(args)
        if location is None:
            raise PlanError(f"{name} without a location: {args[:200]!r}")
        path = location.group(1).strip()
        if args.startswith("true, ") and path.startswith("/"):
            path = "file:" + path   # LOCAL DIRECTORY: the driver's file system, not the default FS
        return [Write(name.removeprefix("Execute "), path=path)]
    if name == "Execute InsertIntoHiveTable":
        table = _first_backticked(args)
        if table is None:
            raise PlanError(f"{name} without a table: {args[:200]!r}")
        return [Write("InsertIntoHiveTable", table=table)]
    v2 = _V2_WRITE.match(name)
    if v2:
        command = v2.group(1)
        if v2.group(3) and v2.group(3).strip() == NOOP_TABLE:
            return []
        if v2.group(3):
            target = v2.group(3).strip()
            if target == NOOP_TABLE:
                return []
            return [Write(command, table=parse_identifier(target) if "." in target else
                          TableId(None, "", target))]
        delta = _DELTA_TABLE_V2.match(args)
        if delta:
            if delta.group(4):
                return [Write(command, table=TableId(delta.group(2), delta.group(3), delta.group(4)))]
            return [Write(command, path=delta.group(1).strip())]
        table_arg = _V2_TABLE_ARG.match(args)
        if table_arg:
            return [Write(command, table=parse_identifier(table_arg.group(2)),
                          catalog_class=table_arg.group(1) + "TableCatalog")]
        raise PlanError(f"{name} without a recognisable table: {args[:200]!r}")
    return []


#: INSERT OVERWRITE DIRECTORY: `InsertIntoHiveDirCommand` (Hive format: `<isLocal>, Storage(Location:
#: /p, Serde Library: ...), <overwrite>, [cols]`, its Input is what it writes) and
#: `InsertIntoDataSourceDirCommand` (USING <format>: `Storage(Location: /p), parquet, <overwrite>`,
#: its query is a logical plan and a nested InsertIntoHadoopFsRelationCommand writes the data).
_DS_DIR_COMMAND = "InsertIntoDataSourceDirCommand"
#: The nodes that name the directory: the Hive command itself; for the data source command only
#: the description's inner node (its `Execute` node has no arguments: plan_io reads the
#: description for it, as for CTAS).
_DIR_COMMANDS = ("Execute InsertIntoHiveDirCommand", _DS_DIR_COMMAND)
_STORAGE_LOCATION = re.compile(r"Storage\(Location: ([^,)]+)")
_CTAS_COMMANDS = ("CreateDataSourceTableAsSelectCommand", "CreateHiveTableAsSelectCommand",
                  "OptimizedCreateHiveTableAsSelectCommand", "SaveAsV1TableCommand")
_HIVE_CTAS_ARGS = re.compile(r"\[Database: ?([^,\]]+), ?TableName: ?([^,\]]+)\]")
#: Commands that define a view from an analysed (logical) plan, their only child:
#: `CreateViewCommand` `` `spark_catalog`.`db`.`v`, [(col,None), ...], <text>, <allowExisting>,
#: <replace>, PersistedView, ... `` (the column list only when the statement names the columns;
#: LocalTempView / GlobalTempView for temporary views, whose name is a single part) and
#: `AlterViewAsCommand` `` `spark_catalog`.`db`.`v`, <text>, <isAnalyzed> ``.
VIEW_COMMANDS = ("CreateViewCommand", "AlterViewAsCommand")
_PERSISTED_VIEW = re.compile(r", PersistedView(?:, |$)")
_USER_COLUMNS = re.compile(r"^\[\(.*\)\]$", re.S)


def view_target(name: str, arguments: str) -> TableId | None:
    """The persisted view a CreateViewCommand / AlterViewAsCommand defines; None for a
    temporary view (or another node)."""
    if name not in VIEW_COMMANDS:
        return None
    if name == "CreateViewCommand" and not _PERSISTED_VIEW.search(arguments):
        return None
    head = arguments.split(", ", 1)[0]
    # A temporary view's name is one part (`tv`): not an identifier of a catalog table.
    return _first_backticked(head) if "`" in head else None


def view_columns(arguments: str) -> list[str] | None:
    """The column names a CREATE VIEW statement gives (`v (a, b) AS ...`), else None."""
    parts = split_list(arguments)
    if len(parts) < 2 or not _USER_COLUMNS.match(parts[1]):
        return None
    # `[(key,None), (label,Some(the comment))]`: each pair's name ends at its first comma
    return [item.strip("()").split(",", 1)[0].strip() for item in split_list(parts[1])]


#: Commands whose target is only in the description's `Arguments:` of their inner node.
_DESCRIBED_COMMANDS = (*_CTAS_COMMANDS, *VIEW_COMMANDS, _DS_DIR_COMMAND, *DELTA_COMMANDS)


def delta_target(name: str, arguments: str) -> Write | None:
    """The table (else the path) a Delta MERGE / UPDATE / DELETE writes, from its inner node's
    arguments; None when they name neither."""
    location = _DELTA_LOCATION.search(arguments)
    table = _first_backticked(arguments)
    if table is not None and table.namespace.lower() == "delta" and table.catalog is None and location:
        table = None   # `delta`.`/path`: a table named by its path
    if table is not None:
        return Write(name, table=table)
    if location is not None:
        return Write(name, path=location.group(1))
    return None


def _description_io(description: str, commands: set[str]) -> tuple[list[Read], list[Write], list[str]]:
    """CTAS/saveAsTable targets, persisted views defined, directories of INSERT OVERWRITE
    DIRECTORY ... USING, Delta MERGE / UPDATE / DELETE targets, and their logical sources, for
    the commands the tree runs; with the gaps (GAPS) met."""
    reads: list[Read] = []
    writes: list[Write] = []
    gaps: list[str] = []
    if not commands:
        return reads, writes, gaps
    for name, fields in description_sections(description):
        args = fields.get("Arguments", "")
        if name in DELTA_COMMANDS:
            if name in commands:
                target = delta_target(name, args)
                if target is not None:
                    writes.append(target)
                else:
                    gaps.append(GAP_DELTA_TARGET)
        elif name == _DS_DIR_COMMAND:
            if name in commands:
                writes.extend(command_writes(name, args))
        elif name in VIEW_COMMANDS:
            if name in commands:
                view = view_target(name, args)
                if view is not None:
                    writes.append(Write(name, table=view, view=True))
        elif name in commands:
            hive = _HIVE_CTAS_ARGS.search(args)
            table = TableId(None, hive.group(1).strip(), hive.group(2).strip()) if hive else None
            if table is None:
                head = args.split(", ", 1)[0]
                table = _first_backticked(head) if "`" in head else None
            if table is None:
                raise PlanError(f"{name} without a target table: {args[:200]!r}")
            writes.append(Write(name, table=table, creates_table=True))
        elif name == "LogicalRelation":
            table = _first_backticked(args)
            if table is not None:
                reads.append(Read(name, table=table))
        elif name == "HiveTableRelation":
            table = _first_backticked(args)
            if table is not None:
                reads.append(Read(name, table=table))
    # A temporary view's definition reads nothing yet (its query runs when the view is used).
    return (reads if writes else []), writes, gaps


def plan_io(spark_plan_info: Mapping[str, Any] | None, description: str | None) -> PlanIO:
    """Reads and writes of one plan. Raises PlanError naming the node it cannot read.

    The description is read only for the CTAS/saveAsTable commands the tree executes (their
    target is not in the tree); a root `CommandResult` means nothing ran in this execution.
    """
    reads: set[Read] = set()
    writes: set[Write] = set()
    unparsed: list[str] = []
    commands: set[str] = set()
    gaps: set[str] = set()
    if isinstance(spark_plan_info, Mapping):
        if spark_plan_info.get("nodeName") == "CommandResult":
            # The collected result of a command that already ran in an earlier execution:
            # its description repeats that command's plan, but nothing is read or written.
            return PlanIO()
        for node in walk(spark_plan_info):
            name = node.get("nodeName", "")
            if type(name) is not str:
                name = str(name)
            if not name.startswith(_IO_NODE_PREFIXES):
                continue   # most nodes (Project, Filter, Exchange, ...): nothing to read
            found_reads = _scan_reads(node)
            try:
                found_writes = _tree_writes(node)
            except PlanError:
                if not name.startswith(_ROW_LEVEL_WRITES):
                    raise
                # a row-level write whose table is not in the plan: the rest of it still reads
                found_writes = []
                gaps.add(GAP_ROW_LEVEL_TARGET)
            reads.update(found_reads)
            writes.update(found_writes)
            gaps.update(_node_gaps(name, found_writes))
            if name.removeprefix("Execute ") in _DESCRIBED_COMMANDS:
                commands.add(name.removeprefix("Execute "))
            if not found_writes and name.removeprefix("Execute ") not in _DESCRIBED_COMMANDS and (
                    (name.startswith("Execute ") and any(m in name for m in _WRITE_MARKERS))
                    or _V2_UNREAD.match(name)):
                unparsed.append(name)
    if description:
        more_reads, more_writes, more_gaps = _description_io(description, commands)
        reads.update(more_reads)
        writes.update(more_writes)
        gaps.update(more_gaps)
    return PlanIO(frozenset(reads), frozenset(writes), tuple(dict.fromkeys(unparsed)),
                  tuple(g for g in GAPS if g in gaps))


#: V2 row-level writes (Iceberg and other V2 tables' MERGE INTO / UPDATE / DELETE): Spark 4 names
#: them `ReplaceData <table>` / `WriteDelta <table>` (the rows to keep or the changed rows, from a
#: `MergeRows` node under them for MERGE); which column of the target comes from which source
#: column is in their projections, which the plan does not print.
_ROW_LEVEL_WRITES = ("ReplaceData", "WriteDelta", "MergeRows")
#: Streaming writes: each micro-batch is a SQL execution whose root names the sink.
_STREAMING_WRITES = ("WriteToDataSourceV2", "WriteToMicroBatchDataSource", "WriteToContinuousDataSource")


def _node_gaps(name: str, writes: list[Write]) -> list[str]:
    """The known gaps (GAPS) a plan node runs into."""
    if name.removeprefix("Execute ") in DELTA_COMMANDS:
        return [GAP_DELTA]
    if name.startswith(_ROW_LEVEL_WRITES):
        return [GAP_ROW_LEVEL]
    if name.startswith(_STREAMING_WRITES):
        return [GAP_STREAMING] if writes else [GAP_STREAMING, GAP_STREAMING_SINK]
    if PANDAS_NODES.match(name):
        return [GAP_PANDAS]
    if writes and _V2_WRITE.match(name):
        return [GAP_V2_WRITE]
    return []


# --- column lineage --------------------------------------------------------------------------
#
# Spark's formatted plan (physicalPlanDescription) gives every attribute an expression id:
# `Output [1]: [upper(c#9) AS u#8]` defines #8 from #9; a scan's `Output` introduces the ids of
# the columns it reads; `WriteFiles`' `Input` lists, in order, what is written. Ids are unique in
# one plan (the AQE final and initial plans and the subquery plans share them), so following ids
# from the written attributes back to scans gives column-level flows.
#
# A plan can write several datasets: a multi-insert (`FROM t INSERT INTO d1 SELECT ... INSERT
# INTO d2 SELECT ...`) is a Union of write commands, each over its own WriteFiles, projection and
# filters. Each WriteFiles' columns go to the dataset of the command right above it
# (`ColumnFlow.write`, read from that command's `Arguments` as plan_io reads the tree), so each
# target gets its own branch's sources and controls. Spark 3.0-3.3 (and later versions with
# spark.sql.optimizer.plannedWrite.enabled=false) plan no WriteFiles: there the write command's
# own `Input` lists what it writes.
#
# - data (DATA_FLOW): Project/aggregate `Output`/`Results`/`Aggregate Attributes` aliases,
#   TakeOrderedAndProject's project list (ORDER BY ... LIMIT: `limit, [order], [projection]`),
#   Window expressions (without their window spec), Generate outputs (from the generator),
#   Expand outputs (every projection's value at that position), Union outputs (every child's
#   column at that position: Spark keeps the first child's ids), BatchEvalPython /
#   ArrowEvalPython results (from the UDF's arguments), script transformations (TRANSFORM ...
#   USING: every output from every input), scalar subqueries (their output), and aliases in the
#   argument lists of any other node without an Output (SerializeFromObject's serializer, ...);
#   SIMPLE when only copies and renames lie on the way, else EXPRESSION with the outermost
#   expression, written in source-column names. A reference is `name#id` with the raw name
#   (`a b#10`, `b.c#9`: no quoting), read by the plan's own name for that id. What Spark adds
#   around the user's expression is not it: CHAR/VARCHAR write-side checks and read-side
#   padding (`static_invoke(CharVarcharCodegenUtils....)`), and on an INSERT into an existing
#   table (the write names its table) the store-assignment cast of a written column
#   (`cast(n#1 as bigint)`; a cast the user wrote to exactly the column's type reads the same
#   and is taken for Spark's). A copy through them is SIMPLE. A Hive-format CTAS's nested
#   InsertIntoHiveTable names its table like an INSERT: a cast at the top of its select list is
#   taken for Spark's too (a data source CTAS's nested insert names only its path: kept).
#   Limits (GlobalLimit, LocalLimit, CollectLimit) and Sample pass their input through
#   unchanged (read from their `Input`).
# - control (CONTROL_FLOW): Filter conditions, join keys and join conditions (for every column
#   passing through the filter/join), grouping keys (for every column of the aggregate), global
#   Sort orders and TakeOrderedAndProject's order (ORDER BY), Window partition and order columns
#   (for the window's columns only), the conditions of CASE WHEN and If (for the column they
#   define). A column that is also a data source of an output stays its control source too (a
#   join key or filter column copied to the output): Hive's LineageLogger and OpenLineage keep
#   both facts. Local sorts and exchanges (physical artefacts of joins, windows and aggregates)
#   are ignored.
# - how (ColumnFlow.data_subtypes / control_subtypes, OpenLineage's transformation subtypes):
#   a source is IDENTITY (only copies and renames on the way), TRANSFORMATION (an expression) or
#   AGGREGATION (an aggregate result or an aggregating window function on the way); a control
#   is FILTER, JOIN, GROUP_BY, SORT, WINDOW or CONDITIONAL by the node (or expression) that
#   uses it, a column controlling through several nodes having several. A CASE WHEN / If
#   condition's columns are not data sources of its result (unless also in a branch value); a
#   ranking function (`rank(ts#5)`, Spark printing the window's order as its argument) has no
#   data source. The columns a control is computed from control as it does; a control of a
#   control (a filter under a join key) as its own.
#
# A view's definition (CreateViewCommand / AlterViewAsCommand) is a logical plan: its nodes have
# only `Arguments:`. _logical_fields reads each as the physical node that does the same
# (LogicalRelation / HiveTableRelation as scans, Project as an Output list, Filter as a
# Condition, Join's condition, Aggregate's keys and results, Sort, Window, Expand, Generate); the
# view's columns are its query's output under the statement's column names. A view used in the
# query is inlined (a `View` node over its query), so lineage goes through it to its tables, as
# in CTAS plans. Not followed yet: logical scalar subqueries (`scalar-subquery#12 []`, whose plan
# is not in the text).
#
# Not followed (yet), each a known gap (GAPS, flagged on the execution by events.py): V2 writes
# without WriteFiles (AppendData/OverwriteByExpression and their V1 fallbacks, whose query is a
# logical plan in `Arguments`), V2 row-level writes and Delta's MERGE / UPDATE / DELETE, streaming
# writes. pandas map/cogroup nodes (PANDAS_NODES) are read as every output from every column the
# Python function reads, their keys as GROUP_BY, and their outputs flagged. ArrowEvalPython (a
# scalar pandas UDF) is read like BatchEvalPython (same `Arguments` shape). A Filter or join
# condition Spark cut (`... N more fields` inside it) flags the columns through it
# (_cut_condition): the columns past the cut control them too.
# Directory writes (INSERT OVERWRITE DIRECTORY) are writes of their path: InsertIntoHiveDirCommand's
# Input is what it writes; InsertIntoDataSourceDirCommand's columns come from its nested
# InsertIntoHadoopFsRelationCommand (a path write like `df.write.parquet(path)`). Argument lists
# (TakeOrderedAndProject's project list, Window, Expand, Generate, BatchEvalPython, ...) are cut
# by Spark after spark.sql.debug.maxToStringFields items: see "argument lists cut by Spark"
# below for what is recovered and how the rest is flagged.

#: Plans longer than this are not read for column lineage (time and memory guard); the caller
#: records that the plan was too large.
MAX_PLAN_CHARS = 16 * 1024 * 1024
#: Expressions longer than this are cut and end with `...`.
MAX_EXPRESSION_CHARS = 1000


class PlanTooLarge(PlanError):
    """A physicalPlanDescription longer than MAX_PLAN_CHARS."""


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


# How a column is used (OpenLineage's column-lineage transformation subtypes: DIRECT for data,
# INDIRECT for control). A source flows as IDENTITY (copied or renamed), TRANSFORMATION (through
# an expression) or AGGREGATION (through an aggregate function, grouped or over a window); when
# several paths lead from one source to the target the strongest, in that order, is kept.
IDENTITY, TRANSFORMATION, AGGREGATION = "IDENTITY", "TRANSFORMATION", "AGGREGATION"
DATA_SUBTYPES = (IDENTITY, TRANSFORMATION, AGGREGATION)
FILTER, JOIN, GROUP_BY, SORT, WINDOW, CONDITIONAL = "FILTER", "JOIN", "GROUP_BY", "SORT", "WINDOW", "CONDITIONAL"
CONTROL_SUBTYPES = (FILTER, JOIN, GROUP_BY, SORT, WINDOW, CONDITIONAL)
# Window functions that aggregate their frame (`sum(x) OVER (...)`), as opposed to ranking and
# offset functions (`rank()`, `lag(x)`): the former make an AGGREGATION of their input column.
_AGGREGATE_CALL = re.compile(
    r"^(?:sum|avg|mean|count|min|max|first|last|first_value|last_value|collect_list|collect_set"
    r"|stddev\w*|std|var\w*|approx_count_distinct|percentile\w*|median|mode|any_value|bool_and"
    r"|bool_or|every|some|any|count_if|max_by|min_by|product|skewness|kurtosis|corr|covar_\w+"
    r"|regr_\w+|array_agg|listagg|string_agg)\(", re.I)
_RANKING_CALL = re.compile(r"^(?:rank|dense_rank|percent_rank|cume_dist|row_number)\(", re.I)


_ATTR = re.compile(r"([^\s\[\](),]+)#(\d+)L?$")
_NAMED_ATTR = re.compile(r"^(.+)#(\d+)L?$", re.S)   # also `sum(w)#51`: a column named "sum(w)"
_REF_ID = re.compile(r"#(\d+)L?\b")
_REF_TOKEN = re.compile(r"([A-Za-z_][\w$]*)?#(\d+)L?\b")
_COUNT_SUFFIX = re.compile(r"\s*\[\d+\]$")
_TREE_LINE = re.compile(r"^(?P<lead>[ :|+\-]*?)(?P<marker>[+:]- )?(?:\* )?(?P<name>[A-Za-z=].*?)"
                        r"(?: \((?P<num>\d+)\))?(?:, .*)?$")
_SUBQUERY = re.compile(r"^Subquery:\d+ Hosting operator id = \d+ Hosting Expression = (?!ReusedSubquery)"
                       r".*?\b(?:subquery|scalar-subquery)#(\d+)")
_WINDOW_SPEC = " windowspecdefinition("
# `Subquery subquery#68, [id=#852]`: #852 numbers a plan, not an attribute
_PLAN_ID = re.compile(r",? \[id=#\d+\]")
_GLOBAL_SORT = re.compile(r",\s*true,\s*\d+\s*$")
_VIEW_UPCAST = re.compile(r"^cast\([^\s(),]+#\d+L? as [^#]+\)$")


def split_list(text: str) -> list[str]:
    """`[a#1, f(b#2, c#3) AS d#4]` -> ['a#1', 'f(b#2, c#3) AS d#4'] (top-level commas only).

    Every bracket kind counts alike (`(`, `[`, `{` open, `)`, `]`, `}` close) and a comma splits
    where that depth is 0. The text is cut at every comma by str.split and a comma-separated
    piece's depth change is counted with str.count (C speed), instead of looking at every bracket
    in Python: this runs for every list of every plan section.
    """
    text = text.strip()
    end = len(text)
    if end >= 2 and text[0] == "[" and text[-1] == "]":
        if _BRACKET.search(text, 1, end - 1) is None:   # `[a#1, b#2L]`: the usual attribute list
            return _split_flat(text[1:-1])
        if _balanced(text[1:-1]):   # the outer `[` closes at the end: a list in brackets
            text = text[1:-1]
            end -= 2
    elif _BRACKET.search(text) is None:
        return _split_flat(text)
    items: list[str] = []
    depth = 0
    start = 0
    pos = 0   # where the current piece ends: at a comma, or at the end of the text
    for piece in text.split(","):
        pos += len(piece)
        if _BRACKET.search(piece) is not None:
            depth += (piece.count("(") + piece.count("[") + piece.count("{")
                      - piece.count(")") - piece.count("]") - piece.count("}"))
        if depth == 0 and pos < end:
            items.append(text[start:pos].strip())
            start = pos + 1
        pos += 1
    tail = text[start:].strip()
    if tail:
        items.append(tail)
    return items


_BRACKET = re.compile(r"[()\[\]{}]")
_AS_PARENS = str.maketrans("[{]}", "(())")


def _split_flat(text: str) -> list[str]:
    """split_list of a text without brackets: every comma splits; an empty last item is dropped."""
    pieces = text.split(",")
    last = pieces.pop().strip()
    items = [piece.strip() for piece in pieces]
    if last:
        items.append(last)
    return items


def _balanced(text: str) -> bool:
    """Whether the brackets of `text` (all kinds alike) pair up: the depth never goes below 0 and
    ends at 0. Removing adjacent `()` pairs until none is left empties exactly such sequences."""
    shape = "".join(_BRACKET.findall(text)).translate(_AS_PARENS)
    while "()" in shape:
        shape = shape.replace("()", "")
    return not shape


def _split_alias(item: str) -> tuple[str, str, int] | None:
    """`expr AS name#7` -> (expr, name, 7); None when the item is not an alias."""
    cut = item.rfind(" AS ")
    if cut < 0:
        return None
    named = _NAMED_ATTR.match(item[cut + 4:])
    if not named:
        return None
    return item[:cut], named.group(1), int(named.group(2))


def _ids(text: str) -> list[int]:
    if "[id=#" in text:   # cheap test first: the substitution is rarely needed
        text = _PLAN_ID.sub("", text)
    return [int(x) for x in _REF_ID.findall(text)]


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_EXPRESSION_CHARS else text[:MAX_EXPRESSION_CHARS] + "..."


def _strip_ids(expression: str) -> str:
    return _bounded(_REF_ID.sub("", expression))


@dataclasses.dataclass(slots=True)
class _Graph:
    origins: dict[int, ColumnSource] = dataclasses.field(default_factory=dict)
    #: id -> (data ids, expression or None for a plain copy)
    defs: dict[int, tuple[tuple[int, ...], str | None]] = dataclasses.field(default_factory=dict)
    #: id -> more data ids copied into it (Union branches)
    copies: dict[int, set[int]] = dataclasses.field(default_factory=dict)
    #: id -> ids controlling it -> how (CONTROL_SUBTYPES)
    controls: dict[int, dict[int, set[str]]] = dataclasses.field(default_factory=dict)
    #: ids whose definition aggregates (an aggregate result; an aggregating window function)
    aggregates: set[int] = dataclasses.field(default_factory=set)
    names: dict[int, str] = dataclasses.field(default_factory=dict)
    #: the write goes to an existing table: Spark's store assignment casts the written columns
    store_assignment: bool = False
    #: ids made by Python code from whole rows or groups (PANDAS_NODES) -> the node's name
    python_outputs: dict[int, str] = dataclasses.field(default_factory=dict)

    def define(self, attr_id: int, deps: Iterator[int] | list[int], expression: str | None) -> None:
        if attr_id not in self.defs and attr_id not in self.origins:
            deps = [d for d in deps if d != attr_id]
            if expression is not None and ("CASE WHEN " in expression or "if (" in expression):
                # A column that only decides a branch is not a data source of the result: it
                # controls it (CONDITIONAL). One also in a branch value is both.
                deciding, valued = _branch_ids(expression)
                self.control([attr_id], sorted(deciding), CONDITIONAL)
                deps = [d for d in deps if d in valued or d not in deciding]
            self.defs[attr_id] = (tuple(deps), expression)

    def control(self, targets: set[int] | list[int], by: list[int], subtype: str) -> None:
        if by:
            for target in targets:
                controlling = self.controls.setdefault(target, {})
                for control_id in by:
                    controlling.setdefault(control_id, set()).add(subtype)


class _Lists:
    """split_list, and the ids of attribute lists (`[a#1, b#2L]`), of one plan, each text read
    once: about half of a plan's field values repeat (an AQE description lists the final and the
    initial plan, with the same attribute lists; an operator's Input is its child's Output).
    The lists returned are shared: callers do not change them."""

    __slots__ = ("_items", "_ids")

    def __init__(self) -> None:
        self._items: dict[str, list[str]] = {}
        self._ids: dict[str, list[int]] = {}

    def split(self, text: str) -> list[str]:
        items = self._items.get(text)
        if items is None:
            items = self._items[text] = split_list(text)
        return items

    def attr_ids(self, text: str) -> list[int]:
        ids = self._ids.get(text)
        if ids is None:
            ids = self._ids[text] = [int(named.group(2)) for item in self.split(text)
                                     if (named := _NAMED_ATTR.match(item))]
        return ids


def column_flows(description: str) -> tuple[ColumnFlow, ...]:
    """Column-level flows of the write in one formatted plan; () when it writes nothing.

    Raises PlanTooLarge for a description longer than MAX_PLAN_CHARS.
    """
    if len(description) > MAX_PLAN_CHARS:
        raise PlanTooLarge(f"physicalPlanDescription of {len(description)} characters "
                           f"(more than {MAX_PLAN_CHARS}) not read for column lineage")
    graph = _Graph()
    # WriteFiles node (or write command without one) -> what it writes, in order: (column, id)
    written: dict[int, list[tuple[str, int]]] = {}
    arguments: dict[int, str] = {}           # write command node -> its Arguments text
    names: dict[int, str] = {}
    children: dict[int, list[int]] = {}
    outputs: dict[int, list[int]] = {}       # node -> its Output/Results ids (when listed)
    # node -> its Input text (when listed); parsed only when a node's input is asked for
    # (node_output, filters and joins): most are never needed
    inputs: dict[int, str] = {}
    lists = _Lists()
    # (node, control ids, CONTROL_SUBTYPES member) for every column through the node
    scoped: list[tuple[int, list[int], str]] = []
    pending_subqueries: list[int] = []        # subquery expression ids waiting for their plan root
    subquery_roots: dict[int, int] = {}
    section: int | None = None
    fields: dict[str, str] = {}
    stack: list[tuple[int, int | None]] = []  # tree parsing: (column, node number or None)
    view: list[int] = []                      # the CreateViewCommand / AlterViewAsCommand node
    view_names: list[str] | None = None       # the column names the statement gave the view
    cut: dict[int, str] = {}                  # node -> its Arguments, cut by Spark (`... N more fields`)
    cut_lists: dict[int, int] = {}            # logical node -> how many of its scan/output columns were cut

    def finish_section() -> None:
        nonlocal view_names
        if section is None:
            return
        name = names.get(section, "")
        if _CUT_LIST in fields.get("Arguments", "") and not name.startswith("Execute "):
            cut[section] = fields["Arguments"]
        if name in VIEW_COMMANDS:
            # Its analysed plan follows: logical nodes, each described by its Arguments only.
            view.append(section)
            view_names = view_columns(fields.get("Arguments", ""))
            return
        if view:
            if name == "View":
                # A view used in the query, inlined: Spark casts its query's columns to the
                # view's stored types (a Project of `cast(x#21 as int) AS id#36` under it). That
                # is not the user's expression: a plain copy through it stays a copy.
                for child in children.get(section, [])[:1]:
                    for attr_id in outputs.get(child, []):
                        deps, expression = graph.defs.get(attr_id, ((), None))
                        if expression is not None and len(deps) == 1 and _VIEW_UPCAST.match(expression):
                            graph.defs[attr_id] = (deps, None)
            name, logical = _logical_fields(name, fields.get("Arguments", ""), lists.split)
            names[section] = name
            listed = logical.get("Output") or logical.get("Results") or ""
            hidden = _CUT_COUNT.search(fields.get("Arguments", "")) if _CUT_LIST in listed or (
                name.startswith("Scan ") and section in cut) else None
            if hidden:
                cut_lists[section] = int(hidden.group(1))
            _read_section(section, name, logical, graph, outputs, inputs, scoped, written, arguments, lists)
            return
        _read_section(section, name, fields, graph, outputs, inputs, scoped, written, arguments, lists)

    # Lines end at "\n" only (as io.StringIO reads them). The cheap tests before each regex
    # (a header starts with "(", a count suffix ends with "]", a plan id contains "[id=#") skip
    # the regexes on the lines they cannot match.
    for line in description.split("\n"):
        if not line or line.isspace():
            continue
        header = _SECTION.match(line) if line[0] == "(" else None
        if header:
            finish_section()
            section, fields = int(header.group(1)), {}
            names[section] = header.group(2)
            continue
        if line.startswith(("== ", "===== ", "Subquery:")):
            # `Subquery:1 Hosting operator id = 3 Hosting Expression = Subquery subquery#68, ...`
            # then the subquery's own tree and sections
            finish_section()
            section, fields, stack = None, {}, []
            subquery = _SUBQUERY.match(line)
            if subquery:
                pending_subqueries.append(int(subquery.group(1)))
            continue
        if section is not None:
            key, sep, value = line.partition(":")
            if sep and key and not key.startswith(" "):
                key = key.strip()
                if key.endswith("]"):
                    key = _COUNT_SUFFIX.sub("", key)
                value = value.strip()
                if "[id=#" in value:
                    value = _PLAN_ID.sub("", value)
                fields[key] = value
                continue
        if section is None:
            _tree_line(line, stack, children, pending_subqueries, subquery_roots)
    finish_section()

    def input_ids(node: int) -> list[int]:
        text = inputs.get(node)
        return lists.attr_ids(text) if text is not None else []

    def node_output(node: int, depth: int = 0) -> list[int]:
        if node in outputs and outputs[node]:
            return outputs[node]
        kids = children.get(node, [])
        name = names.get(node, "")
        if depth > 200:
            return input_ids(node)
        if "Join" in name and kids:
            if any(t in name for t in ("LeftSemi", "LeftAnti", "ExistenceJoin")):
                return node_output(kids[0], depth + 1)
            return [i for k in kids for i in node_output(k, depth + 1)]
        if name.startswith("Union") and kids:
            return node_output(kids[0], depth + 1)
        if node in inputs and not name.startswith(("Window", "Generate", "BatchEvalPython", "ArrowEvalPython")):
            return input_ids(node)
        if kids:
            return node_output(kids[0], depth + 1)
        return input_ids(node)

    if view and not written and children.get(view[0]):
        # A view's columns are its query's output, in order, under the names the statement gave.
        ids = node_output(children[view[0]][0])
        labels = view_names if view_names and len(view_names) == len(ids) else [graph.names.get(i, "") for i in ids]
        written[view[0]] = list(zip(labels, ids))
    # Union: the first child's ids carry every child's column at the same position.
    for node, name in names.items():
        if name.startswith("Union") and len(children.get(node, [])) > 1:
            kids = children[node]
            if any(names.get(k, "").startswith("Execute ") for k in kids):
                continue   # a multi-insert: a union of writes, each with its own columns
            first = node_output(kids[0])
            for other in kids[1:]:
                for position, attr_id in enumerate(node_output(other)):
                    if position < len(first) and first[position] != attr_id:
                        graph.copies.setdefault(first[position], set()).add(attr_id)
    # Controls of filters and joins apply to every column going through the node.
    for node, by, subtype in scoped:
        kids = children.get(node, [])
        through = [i for k in kids for i in node_output(k)] if kids else input_ids(node)
        graph.control(through or input_ids(node), by, subtype)
    # Scalar subqueries: the subquery's expression id stands for its plan's output.
    for expr_id, root in subquery_roots.items():
        graph.define(expr_id, node_output(root), None)

    parents = {kid: node for node, kids in children.items() for kid in kids}
    unknown = _cut_outputs(cut, names, parents, inputs, outputs, graph, lists) if cut else {}
    for node, by, _subtype in scoped:
        if by and by[-1] == -node:   # a condition Spark cut (_cut_condition)
            unknown[-node] = names.get(node, "").split(" ", 1)[0] + _CONDITION
    for attr_id, node_name in graph.python_outputs.items():
        unknown.setdefault(attr_id, node_name + PANDAS_OUTPUT)
    if _CUT_LIST in description:
        # any other expression with a list Spark cut inside it (a node this module reads in
        # full, but whose expression prints a cut argument list): its column may miss sources
        for attr_id, (_deps, expression) in graph.defs.items():
            if attr_id not in unknown and expression and _CUT_LIST in expression:
                unknown[attr_id] = "expression"
    unnamed: list[ColumnFlow] = []
    if cut_lists:
        scans = {n: hidden for n, hidden in cut_lists.items() if names.get(n, "").startswith("Scan ")}
        if scans:
            unknown.update(_cut_logical_scans(scans, names, graph, unknown))
        if view and view[0] in written:
            # The view's own columns past the cut: not even their names are in the log.
            top = children[view[0]][0]
            while top not in outputs and children.get(top):
                top = children[top][0]
            if top in cut_lists and not names.get(top, "").startswith("Scan "):
                unnamed.append(ColumnFlow("", frozenset(), None, frozenset(), None, (
                    f"{names[top].split(' ', 1)[0]} arguments cut by Spark: "
                    f"{cut_lists[top]} more columns, not named in the log")))

    if graph.store_assignment:
        for columns in written.values():
            for _target, attr_id in columns:
                _strip_store_assignment_cast(attr_id, graph)
    # An AQE description lists the final and the initial plan: their WriteFiles write the same
    # ids to the same dataset, and are read once.
    flows: dict[tuple[Write | None, str, int], ColumnFlow] = {}
    for node, columns in written.items():
        command = node if node in arguments else parents.get(node)
        write = _command_write(names.get(command, ""), arguments.get(command, "")) if command is not None else None
        for target, attr_id in columns:
            if (write, target, attr_id) in flows:
                continue
            sources, expression = _resolve(attr_id, graph)
            # A control is kept when the same column also flows as data (a join key copied to
            # the output): both facts are true.
            controls = _resolve_controls(attr_id, graph)
            data_subtypes = _data_subtypes(attr_id, graph)
            flows[(write, target, attr_id)] = ColumnFlow(
                target, frozenset(sources),
                _render(expression, graph, sources) if expression is not None else None,
                frozenset(controls), write, _unknown_on_path(attr_id, graph, unknown) if unknown else None,
                tuple(sorted((s, data_subtypes.get(s, TRANSFORMATION)) for s in sources)),
                tuple(sorted((s, frozenset(controls[s])) for s in controls)))
    return tuple(flows.values()) + tuple(unnamed)


# --- argument lists cut by Spark ---------------------------------------------------------------
#
# Spark prints at most spark.sql.debug.maxToStringFields (25) items of a list in a node's
# `Arguments:` and ends it with `... N more fields`; `Output`/`Input` lists are printed whole.
# Where a node defines columns in its arguments (Window expressions, Expand projections,
# BatchEvalPython UDFs, TakeOrderedAndProject's project list, Generate), the columns past the cut
# are known only as ids in its parent's `Input` (the sparkPlanInfo tree and the AQE re-plans
# print the same cut lists). What the plan still tells is recovered:
# - Expand (ROLLUP/CUBE/GROUPING SETS, count(distinct ...)): an output id that is not one of its
#   inputs copies the input column it is named after (`g#319` is `g#163`'s grouping copy;
#   `spark_catalog.db.t.c#502` is `c#189`'s distinct copy), and `spark_grouping_id` / `gid` are
#   literals per projection (Spark's own, no column);
# - Window: a window column past the cut is still partitioned and ordered by the window's spec;
# - a view's analysed plan (logical nodes, all in `Arguments`): a LogicalRelation /
#   HiveTableRelation column past the cut is an id the plan uses that nothing defines; with one
#   cut scan it is that scan's column, named as the plan references it (`(c22#187 + 1)`). The
#   view's own columns past a cut Project / Aggregate list are not even named in the log: one
#   ColumnFlow without a target says how many (`incomplete`), the caller names the view.
# Every other id past a cut (a window function's or a UDF's arguments, an alias in a cut project
# list), and every id defined from an expression that is itself cut (`inline(array(struct(c0#1,
# ... 35 more fields)))` in Generate's arguments; `concat_ws(,, c0#1, ... 6 more fields)` even in
# a Project's Output), is unknown: a written column that depends on one is flagged
# `ColumnFlow.incomplete` (with the sources the text did show).

_CUT_LIST = " more fields"
_CONDITION = " condition"   # the label of a cut condition's unknown controls (_cut_condition)
#: the label of a column a pandas / Arrow UDF made (PANDAS_NODES); in ColumnFlow.incomplete the
#: why starts with PANDAS_OUTPUT_WHY
PANDAS_OUTPUT = " output"
PANDAS_OUTPUT_WHY = "pandas UDF output"
_CUT_COUNT = re.compile(r"\.\.\. (\d+) more fields")
#: Expand outputs that Spark fills with a literal in every projection (grouping ids)
_EXPAND_LITERALS = ("spark_grouping_id", "gid")


def _cut_outputs(cut: Mapping[int, str], names: Mapping[int, str], parents: Mapping[int, int],
                 inputs: Mapping[int, str], outputs: Mapping[int, list[int]], graph: _Graph,
                 lists: _Lists) -> dict[int, str]:
    """The ids that nodes with cut arguments output without the plan saying how they are made
    (id -> the node's name), after recovering what can be (see above)."""
    unknown: dict[int, str] = {}
    for node, arguments in cut.items():
        name = names.get(node, "")
        parent = parents.get(node)
        if parent is None:
            continue
        shown = inputs.get(parent)
        items = lists.split(shown) if shown is not None else []
        named = [(int(m.group(2)), m.group(1)) for item in items if (m := _NAMED_ATTR.match(item))]
        if not named:
            named = [(i, graph.names.get(i, "")) for i in outputs.get(parent, [])]
        own_input = inputs.get(node, "")
        by_name: dict[str, list[int]] = {}
        input_ids = set()
        for item in lists.split(own_input):
            attr = _NAMED_ATTR.match(item)
            if attr:
                input_ids.add(int(attr.group(2)))
                by_name.setdefault(attr.group(1), []).append(int(attr.group(2)))
        for attr_id, label in named:
            if attr_id in graph.defs and _CUT_LIST in (graph.defs[attr_id][1] or ""):
                # defined, from an expression Spark cut (a generator over 30 columns): some of
                # its columns are not in the text
                unknown[attr_id] = name.split(" ", 1)[0]
                continue
            if attr_id in input_ids or attr_id in graph.defs or attr_id in graph.origins:
                continue
            if name.startswith("Expand"):
                if label in _EXPAND_LITERALS:
                    graph.define(attr_id, [], None)
                    continue
                matches = by_name.get(label) or by_name.get(label.rsplit(".", 1)[-1], [])
                if len(matches) == 1:
                    graph.define(attr_id, matches, None)
                    continue
            if name.startswith("Window"):
                parts = lists.split(arguments)
                graph.control([attr_id], [i for part in parts[1:3] for i in _ids(part)], WINDOW)
            unknown[attr_id] = name.split(" ", 1)[0]
    return unknown


def _cut_logical_scans(scans: Mapping[int, int], names: Mapping[int, str], graph: _Graph,
                       known: Mapping[int, str]) -> dict[int, str]:
    """Columns of logical scans (a view's analysed plan: `LogicalRelation` / `HiveTableRelation`
    print their columns in their arguments) past the cut (scan -> how many): an id the plan
    uses but nothing defines (and no other cut node outputs, `known`) is one of them. With one
    such scan it is that scan's column, named as the plan references it (`(c22#187 + 1)`:
    `c22`), when its id follows the scan's last one shown within the count cut (Spark numbers a
    relation's columns in a row); else which column it is is not known: unknown."""
    referenced: dict[int, str | None] = {}
    for deps, expression in list(graph.defs.values()):
        named = {int(m.group(2)): m.group(1) for m in _REF_TOKEN.finditer(expression or "")}
        for dep in deps:
            if dep not in graph.defs and dep not in graph.origins and dep not in known:
                referenced[dep] = named.get(dep)
    for ids in list(graph.controls.values()):
        for dep in ids:
            if dep not in graph.defs and dep not in graph.origins and dep not in known:
                referenced.setdefault(dep, None)
    shown: list[tuple[int, ColumnSource]] = []
    hidden = 0
    if len(scans) == 1:
        ((scan, hidden),) = scans.items()
        shown = sorted((i, o) for i, o in graph.origins.items() if o.scan == names.get(scan))
    # `Scan LogicalRelation spark_catalog.db.t` (see _logical_fields): the logical node's name
    kind = names.get(next(iter(scans)), "Scan LogicalRelation").split(" ")[1] if len(scans) == 1 else "LogicalRelation"
    unknown: dict[int, str] = {}
    for attr_id, column in referenced.items():
        if shown and column and shown[-1][0] < attr_id <= shown[-1][0] + hidden:
            graph.origins[attr_id] = dataclasses.replace(shown[0][1], column=column)
            graph.names.setdefault(attr_id, column)
        else:
            unknown[attr_id] = kind
    return unknown


def _cut_condition(node: int, condition: str) -> list[int]:
    """[-node] when Spark cut a list inside the node's condition (`greatest(c0#1, ..., ... 5 more
    fields) > 5`): the columns past the cut control the rows too, and are not in the text. The
    negative id stands for them: a control of every column through the node, with no source,
    that column_flows names as unknown (`<Node> condition`)."""
    return [-node] if _CUT_LIST in condition else []


def _unknown_on_path(attr_id: int, graph: _Graph, unknown: Mapping[int, str]) -> str | None:
    """Why `attr_id`'s sources are incomplete: the nodes of the unknown ids it is computed or
    controlled from; None when it depends on none."""
    found: set[str] = set()
    stack, seen = [attr_id], set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        if current in unknown:
            found.add(unknown[current])
        stack.extend(graph.copies.get(current, ()))
        stack.extend(graph.controls.get(current, ()))
        if current in graph.defs:
            stack.extend(graph.defs[current][0])
    if not found:
        return None
    conditions = sorted(f for f in found if f.endswith(_CONDITION))
    python = sorted(f.removesuffix(PANDAS_OUTPUT) for f in found if f.endswith(PANDAS_OUTPUT))
    found -= set(conditions) | {p + PANDAS_OUTPUT for p in python}
    why = []
    if python:
        why.append(f"{PANDAS_OUTPUT_WHY} ({', '.join(python)}): taken as made from every column the Python "
                   "function reads")
    if found == {"expression"}:
        why.append("expression cut by Spark")
    elif found:
        why.append(", ".join(sorted(found - {"expression"})) + " arguments cut by Spark")
    if conditions:
        why.append(", ".join(conditions) + " cut by Spark: it may hide controls")
    return "; ".join(why)


def _command_write(name: str, arguments: str) -> Write | None:
    """The dataset a write command writes; None when the command is not read here or its
    arguments are not as expected (plan_io reports that node; the caller gives such columns to
    the execution's one written table only when they are the plan's only ones)."""
    try:
        found = command_writes(name, arguments)
    except PlanError:
        return None
    return found[0] if len(found) == 1 else None


def _tree_line(line: str, stack: list[tuple[int, int | None]], children: dict[int, list[int]],
               pending_subqueries: list[int], subquery_roots: dict[int, int]) -> None:
    """One line of the plan tree: link the node to its parent (the node whose name starts at
    the column of this line's `+-`/`:-` marker)."""
    match = _TREE_LINE.match(line)
    if not match:
        return
    marker = match.group("marker")
    lead = len(match.group("lead"))
    column = lead + 3 if marker else lead
    number = int(match.group("num")) if match.group("num") else None
    name = match.group("name")
    if name.startswith("=="):
        number = None   # `== Final Plan ==`: a header inside AdaptiveSparkPlan, transparent
    while stack and stack[-1][0] >= column:
        stack.pop()
    if marker:
        parent = next((n for c, n in reversed(stack) if n is not None and c < column), None)
        if parent is not None and number is not None:
            kids = children.setdefault(parent, [])
            if number not in kids:
                kids.append(number)
    elif number is not None and pending_subqueries:
        subquery_roots[pending_subqueries.pop()] = number
    stack.append((column, number))


def _logical_fields(name: str, arguments: str, split: Callable[[str], list[str]]) -> tuple[str, dict[str, str]]:
    """A logical node of an analysed plan (a view's definition: only `Arguments:`) as the
    name and fields of the physical node that does the same, for _read_section."""
    parts: list[str] = split(arguments)
    if name in ("LogicalRelation", "HiveTableRelation"):
        # `parquet, [id#21, ...], `spark_catalog`.`db`.`t`, <serde>, false`;
        # `` `spark_catalog`.`db`.`t`, <serde>, [id#28, ...][, [partition columns]] ``
        table = _first_backticked(arguments)
        columns = [item for part in parts if part.startswith("[") for item in split(part)
                   if _NAMED_ATTR.match(item)]
        scan = f"Scan {name} {table.catalog or SESSION_CATALOG}.{table.namespace}.{table.name}" if table else \
            f"Scan {name}"
        return scan, {"Output": "[" + ", ".join(columns) + "]"}
    if name == "Project":
        return name, {"Output": arguments}
    if name == "Filter":
        return name, {"Condition": arguments}
    if name == "Join" and parts:
        # `Inner, (id#21 = id#28)`: the type in the name, as node_output looks for semi joins there
        return f"Join {parts[0]}", {"Join condition": ", ".join(parts[1:])}
    if name == "Aggregate" and len(parts) >= 2:
        return name, {"Keys": parts[0], "Results": parts[1]}
    if name == "Sort" and len(parts) >= 2:
        # logical `[order], global`; SortExec's `[order], global, testSpillFrequency`
        return name, {"Arguments": f"{parts[0]}, {parts[1]}, 0"}
    if name == "Generate" and len(parts) >= 4:
        # logical `generator, unrequiredChildIndex, outer[, qualifier], generatorOutput`;
        # GenerateExec's `generator, requiredChildOutput, outer, generatorOutput`
        return name, {"Arguments": ", ".join((parts[0], "[]", parts[2], parts[-1]))}
    if name in ("Window", "Expand"):
        return name, {"Arguments": arguments}   # the same arguments as the physical node
    return name, {}   # SubqueryAlias, View, Union, Distinct, limits, ...: the child's columns


def _read_section(node: int, name: str, fields: Mapping[str, str], graph: _Graph,
                  outputs: dict[int, list[int]], inputs: dict[int, str],
                  scoped: list[tuple[int, list[int]]], written: dict[int, list[tuple[str, int]]],
                  arguments_of: dict[int, str], lists: _Lists) -> None:
    split = lists.split   # split_list, memoized for the plan
    if "Input" in fields:
        inputs[node] = fields["Input"]
    if name.startswith("Execute "):
        arguments_of[node] = fields.get("Arguments", "")
        # Spark 3.0-3.3 (and 3.4+ with spark.sql.optimizer.plannedWrite.enabled=false) plan no
        # WriteFiles: a data-writing command's own Input is what it writes (with WriteFiles,
        # the command's Input is `[]`)
        own = [(attr.group(1), int(attr.group(2))) for item in split(fields.get("Input", ""))
               if (attr := _NAMED_ATTR.match(item))]
        if own:
            written[node] = own
    if name.startswith(("Scan ", "BatchScan ")):
        table_text = name.split(" ", 2)[2].strip() if name.count(" ") >= 2 else ""
        jdbc = _JDBC_V2_SCAN.match(name)
        if jdbc:
            table_text = jdbc.group(1)
        table = parse_identifier(table_text) if table_text and _PLAIN_IDENT.match(table_text) else None
        paths: tuple[str, ...] = ()
        if table is None and fields.get("Location"):
            paths = tuple(location_paths(fields["Location"])[0])
        ids = []
        for item in split(fields.get("Output", "")):
            attr = _NAMED_ATTR.match(item)
            if attr:
                attr_id = int(attr.group(2))
                ids.append(attr_id)
                graph.origins.setdefault(attr_id, ColumnSource(name.strip(), table, paths, attr.group(1)))
                graph.names.setdefault(attr_id, attr.group(1))
        outputs[node] = ids
        return
    if name == "WriteFiles":
        written[node] = [(attr.group(1), int(attr.group(2))) for item in split(fields.get("Input", ""))
                         if (attr := _NAMED_ATTR.match(item))]
        return
    for key in ("Output", "Results", "Aggregate Attributes"):
        if key not in fields:
            continue
        ids = _define_list(split(fields[key]), graph)
        if key != "Aggregate Attributes":
            outputs.setdefault(node, ids)
    arguments = fields.get("Arguments", "")
    if (name.startswith("Execute InsertInto") and _first_backticked(arguments) is not None) \
            or _V2_WRITE.match(name):
        graph.store_assignment = True
    if name.startswith("TakeOrderedAndProject") and arguments:
        # ORDER BY ... LIMIT: `limit, [sort order], [project list][, offset]`; the columns
        # written are defined in the project list (`upper(name#20) AS n#56`), not in an Output.
        # The two lists are taken in order wherever the scalars (limit, offset) stand.
        lists_in = [part for part in split(arguments) if part.startswith("[")]
        if len(lists_in) >= 2:
            defined = _define_list(split(lists_in[1]), graph)
            if _CUT_LIST not in lists_in[1]:   # a cut list is not the node's output
                outputs[node] = defined
            scoped.append((node, _ids(lists_in[0]), SORT))
    elif name.startswith("Filter"):
        condition = fields.get("Condition", "")
        scoped.append((node, _ids(condition) + _cut_condition(node, condition), FILTER))
    elif "Join" in name:
        condition = fields.get("Join condition", "")
        by = _ids(fields.get("Left keys", "")) + _ids(fields.get("Right keys", "")) + _ids(condition)
        scoped.append((node, by + _cut_condition(node, condition), JOIN))
    elif "Aggregate" in name and "Keys" in fields:
        keys = _ids(fields["Keys"])
        aggregated = lists.attr_ids(fields.get("Aggregate Attributes", ""))
        graph.control(outputs.get(node, []) + aggregated, keys, GROUP_BY)
        if "Aggregate Attributes" in fields:
            # the aggregate results (`sum(w#43)#50`; a partial aggregate's `sum#60` has no
            # definition and stands for nothing)
            graph.aggregates.update(i for i in aggregated if i in graph.defs)
        else:
            # a logical Aggregate (a view's plan): a result, not a key, computed from more
            # than the keys
            key_set = set(keys)
            graph.aggregates.update(i for i in outputs.get(node, []) if i not in key_set
                                    and any(d not in key_set for d in graph.defs.get(i, ((), None))[0]))
    elif name.startswith("Sort") and arguments and _GLOBAL_SORT.search(arguments):
        scoped.append((node, _ids(split(arguments)[0]) if split(arguments) else [], SORT))
    elif name.startswith("Window") and arguments:
        parts = split(arguments)
        spec = [i for part in parts[1:3] for i in _ids(part)]
        for item in split(parts[0]) if parts else []:
            alias = _split_alias(item)
            if not alias:
                continue
            expression, alias_name, attr_id = alias
            function = expression.split(_WINDOW_SPEC, 1)[0]
            # `sum(x) windowspecdefinition(p, o ASC NULLS FIRST, specifiedwindowframe(...))`
            # -> `sum(x) OVER (PARTITION BY p ORDER BY o ASC NULLS FIRST)` (frame left out)
            over = []
            if len(parts) > 1 and split(parts[1]):
                over.append("PARTITION BY " + ", ".join(split(parts[1])))
            if len(parts) > 2 and split(parts[2]):
                over.append("ORDER BY " + ", ".join(split(parts[2])))
            # Spark prints a ranking function with its window's order as arguments (`rank(ts#5)`):
            # those columns order the rows (WINDOW), no value of theirs is in the result
            deps = [] if _RANKING_CALL.match(function.strip()) else _ids(function)
            graph.define(attr_id, deps, f"{function} OVER ({' '.join(over)})")
            graph.names.setdefault(attr_id, alias_name)
            graph.control([attr_id], spec, WINDOW)
            if _AGGREGATE_CALL.match(function.strip()):
                graph.aggregates.add(attr_id)
    elif name.startswith("Generate") and arguments:
        parts = split(arguments)
        if len(parts) >= 4:
            generator = parts[0]
            for attr_id in lists.attr_ids(parts[3]):
                graph.define(attr_id, _ids(generator), generator)
    elif name.startswith("Expand") and arguments:
        parts = split(arguments)
        if len(parts) >= 2:
            projections = [split(p) for p in split(parts[0])]
            # Spark cut the list of projections (30 count(distinct ...) make 30): a position
            # with no column in the projections shown is left to _cut_outputs
            projections_cut = _CUT_LIST in parts[0]
            for position, item in enumerate(split(parts[1])):
                named = _NAMED_ATTR.match(item)
                if not named:
                    continue
                values = [p[position] for p in projections if position < len(p)]
                deps = [i for v in values for i in _ids(v)]
                if projections_cut and not deps:
                    continue
                plain = all(_ATTR.fullmatch(v) or v == "null" or not _ids(v) for v in values)
                graph.define(int(named.group(2)), deps, None if plain else values[0])
    elif name.endswith("EvalPython") and arguments:
        parts = split(arguments)
        if len(parts) >= 2:
            for udf, result in zip(split(parts[0]), split(parts[1]), strict=False):
                named = _NAMED_ATTR.match(result)
                call = _NAMED_ATTR.match(udf)
                if named:
                    expression = call.group(1) if call else udf
                    graph.define(int(named.group(2)), _ids(expression), expression)
    elif PANDAS_NODES.match(name) and arguments:
        # mapInPandas / mapInArrow: `f(a#1, b#2)#45, [x#46, y#47], <isBarrier>`; applyInPandas
        # on groups / cogroups: `[keys], [other keys], f(...)#51, [x#52, ...]`. Which column the
        # Python function makes from which is in its code: every output is taken as made from
        # every column passed to it (as for TRANSFORM ... USING), the keys group the rows, and
        # the outputs are flagged (PANDAS_OUTPUT, see column_flows).
        parts = split(arguments)
        at = next((i for i, part in enumerate(parts) if not part.startswith("[") and _NAMED_ATTR.match(part)), None)
        made = next((part for part in parts[at + 1:] if part.startswith("[")), "") if at is not None else ""
        if at is not None and made:
            call = _NAMED_ATTR.match(parts[at]).group(1)  # type: ignore[union-attr]
            outputs[node] = lists.attr_ids(made)
            for attr_id in outputs[node]:
                graph.define(attr_id, _ids(call), call)
            graph.control(outputs[node], [i for part in parts[:at] for i in _ids(part)], GROUP_BY)
            graph.python_outputs.update((i, name.split(" ", 1)[0]) for i in outputs[node])
    elif name.endswith("ScriptTransformation") and arguments:
        # SELECT TRANSFORM(...) USING 'script': `script, [outputs], ioschema`; each output is
        # whatever the script makes of all its input columns (the node's Input)
        parts = split(arguments)
        if len(parts) >= 2:
            feed = fields.get("Input", "")
            call = f"TRANSFORM({', '.join(split(feed))}) USING '{parts[0]}'"
            outputs[node] = lists.attr_ids(parts[1])
            for attr_id in outputs[node]:
                graph.define(attr_id, lists.attr_ids(feed), call)
    elif arguments and " AS " in arguments and not ("Output" in fields or "Results" in fields
                                                     or name.startswith("Execute ")):
        # Any other node that projects in its arguments (SerializeFromObject's serializer,
        # a projection kept by a node this module does not know yet): an alias there defines
        # its id like a Project's Output does. Ids are unique in a plan, so a definition found
        # here can only be the right one. (Commands are left out: their arguments hold a
        # logical plan.)
        # (split_list drops the brackets of an argument text that is one list)
        _define_list([item for part in split(arguments)
                      for item in (split(part) if part.startswith("[") else (part,))], graph)


def _define_list(items: list[str], graph: _Graph) -> list[int]:
    """The ids of an output list (`[a#1, upper(b#2) AS c#3, sum(w#4)#5]`), with the aliases
    and aggregate results in it defined in `graph`."""
    ids = []
    for item in items:
        alias = _split_alias(item)
        if alias:
            expression, alias_name, attr_id = alias
            if _CHAR_VARCHAR in expression:
                expression = _unwrap_char_varchar(expression)
            graph.define(attr_id, _ids(expression), expression)
            graph.names.setdefault(attr_id, alias_name)
            ids.append(attr_id)
            continue
        named = _NAMED_ATTR.match(item)
        if named:
            attr_id = int(named.group(2))
            ids.append(attr_id)
            graph.names.setdefault(attr_id, named.group(1))
            if named.group(1).endswith(")"):  # `sum(w#43)#50`: an aggregate result by its id
                graph.define(attr_id, _ids(named.group(1)), named.group(1))
    return ids


def _resolve(attr_id: int, graph: _Graph) -> tuple[set[ColumnSource], str | None]:
    """(scanned columns, the outermost expression other than a copy or rename, if any)."""
    sources: set[ColumnSource] = set()
    outermost: str | None = None
    stack, seen = [attr_id], set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        stack.extend(graph.copies.get(current, ()))
        if current in graph.origins:
            sources.add(graph.origins[current])
            continue
        if current in graph.defs:
            deps, expression = graph.defs[current]
            if expression is not None and outermost is None and not _is_copy(expression, graph):
                outermost = expression
            stack.extend(deps)
    return sources, outermost


def _data_subtypes(attr_id: int, graph: _Graph) -> dict[ColumnSource, str]:
    """How each scanned column flows into `attr_id` (DATA_SUBTYPES): the strongest over the
    paths from it, a path being as strong as the strongest step on it (a copy or rename, an
    expression, an aggregate)."""
    strength = {IDENTITY: 0, TRANSFORMATION: 1, AGGREGATION: 2}
    found: dict[ColumnSource, int] = {}
    stack, seen = [(attr_id, 0)], set()
    while stack:
        current, level = stack.pop()
        if (current, level) in seen:
            continue
        seen.add((current, level))
        if current in graph.aggregates:
            level = 2
        stack.extend((c, level) for c in graph.copies.get(current, ()))
        if current in graph.origins:
            source = graph.origins[current]
            found[source] = max(found.get(source, 0), level)
            continue
        if current in graph.defs:
            deps, expression = graph.defs[current]
            if expression is not None and level == 0 and not _is_copy(expression, graph):
                level = 1
            stack.extend((d, level) for d in deps)
    names = {v: k for k, v in strength.items()}
    return {source: names[level] for source, level in found.items()}


def _resolve_controls(attr_id: int, graph: _Graph) -> dict[ColumnSource, set[str]]:
    """Scanned columns that control `attr_id`, each with how (CONTROL_SUBTYPES): those of every
    control id met on its data path, with everything (data and control) they depend on in turn.
    A column a control is computed from controls as that control does; a control of a control
    (a filter under a join key) as its own."""
    data_path, stack = set(), [attr_id]
    while stack:
        current = stack.pop()
        if current in data_path:
            continue
        data_path.add(current)
        stack.extend(graph.copies.get(current, ()))
        if current in graph.defs:
            stack.extend(graph.defs[current][0])
    pending: list[tuple[int, str]] = [(c, subtype) for i in data_path
                                      for c, subtypes in graph.controls.get(i, {}).items() for subtype in subtypes]
    sources: dict[ColumnSource, set[str]] = {}
    seen: set[tuple[int, str]] = set()
    while pending:
        current, subtype = pending.pop()
        if (current, subtype) in seen:
            continue
        seen.add((current, subtype))
        pending.extend((c, subtype) for c in graph.copies.get(current, ()))
        pending.extend((c, inner) for c, subtypes in graph.controls.get(current, {}).items() for inner in subtypes)
        if current in graph.origins:
            sources.setdefault(graph.origins[current], set()).add(subtype)
        elif current in graph.defs:
            pending.extend((d, subtype) for d in graph.defs[current][0])
    return sources


_BRANCH_WORD = re.compile(r"\b(?:CASE WHEN|WHEN|THEN|ELSE|END)\b(?!#)|(?<![\w.])if \(|[()\[\]{}]")


def _branch_ids(expression: str) -> tuple[set[int], set[int]]:
    """(ids in a CASE WHEN / if() condition, ids anywhere else) of `expression`.

    `CASE WHEN (x#1 > 0) THEN y#2 ELSE z#3 END` -> ({1}, {2, 3}); `if ((x#1 > 0)) y#2 else z#3`
    (Spark's If) the same. Spark prints a simple `CASE x WHEN 1` as `CASE WHEN (x = 1)`. A
    condition holds everything from WHEN to its THEN, nested expressions included; an If's is
    its bracketed predicate."""
    deciding: set[int] = set()
    valued: set[int] = set()
    # a stack of open constructs: ("case", in condition?) or ("if", in condition?) or ("(", None)
    frames: list[list[object]] = []
    last = 0

    def take(upto: int) -> None:
        ids = _ids(expression[last:upto])
        in_condition = any(frame[1] is True for frame in frames)
        (deciding if in_condition else valued).update(ids)

    for match in _BRANCH_WORD.finditer(expression):
        token = match.group(0)
        take(match.start())
        last = match.end()
        if token == "CASE WHEN":
            frames.append(["case", True])
        elif token == "if (":
            frames.append(["if", True])
        elif token in ("(", "[", "{"):
            frames.append(["(", None])
        elif token in (")", "]", "}"):
            if frames:
                frames.pop()
        elif frames and frames[-1][0] == "case":
            if token == "WHEN":
                frames[-1][1] = True
            elif token in ("THEN", "ELSE"):
                frames[-1][1] = False
            elif token == "END":
                frames.pop()
    take(len(expression))
    return deciding, valued


# Spark's own wrappers around a written or read CHAR/VARCHAR column (ApplyCharTypePadding,
# CharVarcharUtils): length checks on write, padding on read. Spark 3.4+ prints
# `static_invoke(CharVarcharCodegenUtils.charTypeWriteSideCheck(s#1, 5))`; Spark 3.1-3.3
# `staticinvoke(class org.apache.spark.sql.catalyst.util.CharVarcharCodegenUtils, StringType,
# charTypeWriteSideCheck, s#1, 5, true, false, true)`.
_CHAR_VARCHAR = "CharVarcharCodegenUtils"
_CHAR_VARCHAR_CALL = re.compile(
    r"static_invoke\(CharVarcharCodegenUtils\.(?:charTypeWriteSideCheck|varcharTypeWriteSideCheck|readSidePadding)\("
    r"|staticinvoke\(class org\.apache\.spark\.sql\.catalyst\.util\.CharVarcharCodegenUtils, ")
_CAST = re.compile(r"^(?:ansi_)?cast\((.*) as [\w(), <>:]+\)$", re.S)


def _unwrap_char_varchar(expression: str) -> str:
    """`expression` without Spark's CHAR/VARCHAR checks and padding: they are not the user's
    expression, and a copy through them is a copy (SIMPLE)."""
    for _ in range(expression.count(_CHAR_VARCHAR)):
        match = _CHAR_VARCHAR_CALL.search(expression)
        if match is None:
            break
        if match.group(0).startswith("static_invoke"):
            # `static_invoke(CharVarcharCodegenUtils.charTypeWriteSideCheck(<value>, 5))`
            end = _closing(expression, match.end() - 1)
            args = split_list(expression[match.end():end]) if end >= 0 else []
            value, stop = (args[0] if args else ""), end + 1   # the static_invoke's own `)`
        else:
            # `staticinvoke(class ...CharVarcharCodegenUtils, StringType, <method>, <value>, 5, ...)`
            end = stop = _closing(expression, match.start() + len("staticinvoke"))
            args = split_list(expression[match.end():end]) if end >= 0 else []
            value = args[2] if len(args) > 2 else ""
        if not value or stop >= len(expression) or expression[stop] != ")":
            break
        expression = expression[:match.start()] + value + expression[stop + 1:]
    return expression


def _closing(text: str, open_at: int) -> int:
    """The index of the bracket closing the one at `open_at`; -1 when it does not close."""
    depth = 0
    for index in range(open_at, len(text)):
        char = text[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _strip_store_assignment_cast(attr_id: int, graph: _Graph) -> None:
    """A written column's own `cast(x as T)`: Spark's store assignment (TableOutputResolver)
    casts a value to its column's type on INSERT into an existing table; the user's expression
    is `x`. (A cast the user wrote to exactly the column's type reads the same in the plan,
    and writes the same value: it is taken for Spark's.)"""
    if attr_id not in graph.defs:
        return
    deps, expression = graph.defs[attr_id]
    text = (expression or "").strip()
    match = _CAST.match(text)
    # one cast around the whole expression, not `cast(a#1 as int) + cast(b#2 as int)`
    if match is not None and _closing(text, text.index("(")) == len(text) - 1:
        graph.defs[attr_id] = (deps, match.group(1).strip())


def _is_copy(expression: str, graph: _Graph) -> bool:
    """Whether `expression` is a bare reference `name#7` (a copy or rename, SIMPLE). Spark prints
    a reference as its raw name, so `a b#10` or `b.c#9` is one when the plan named #10 `a b`
    (a scan's or a projection's output); `NOT x#10` is not, #10 being `x`."""
    text = expression.strip()
    if _ATTR.fullmatch(text):
        return True
    named = _NAMED_ATTR.match(text)
    return named is not None and graph.names.get(int(named.group(2))) == named.group(1)


def _substitute(text: str, graph: _Graph, replace: Callable[[str | None, int], str]) -> str:
    """`text` with each reference `name#id` replaced by `replace(name, id)`. The name is the
    plan's own for that id when the text spells it before the '#' (names may hold spaces, dots,
    unicode: `a b#10`, `b.c#9`, `ünï#11`); else the identifier there, or None (`sum(w#1)#50`,
    an aggregate result's id; `[id=#852]`)."""
    out, last = [], 0
    for match in _REF_TOKEN.finditer(text):
        attr_id, hash_at = int(match.group(2)), match.start(2) - 1
        start, name = match.start(), match.group(1)
        known = graph.names.get(attr_id)
        if known and hash_at - len(known) >= last and text.startswith(known, hash_at - len(known)):
            start, name = hash_at - len(known), known
        out.append(text[last:start])
        out.append(replace(name, attr_id))
        last = match.end()
    out.append(text[last:])
    return "".join(out)


def _source_label(source: ColumnSource) -> str:
    if source.table is not None:
        return f"{source.table.name}.{source.column}"
    if source.paths:
        return source.paths[0].rstrip("/").rsplit("/", 1)[-1] + "." + source.column
    return source.column


def _render(expression: str, graph: _Graph, sources: set[ColumnSource]) -> str:
    """The expression in source-column names: `upper(k#12)` -> `upper(k)`, where each reference
    is replaced by the scanned column it copies (`extra_v#30` -> `v`), or by its own expression
    when it is computed (`w#45` -> `(v + extra_v)` -> `(v + v)`). Columns of the same name from
    two sources are qualified by their table (or last path segment): `(events.v + extra.v)`.
    Bounded to MAX_EXPRESSION_CHARS."""
    budget = [MAX_EXPRESSION_CHARS * 4]
    by_name: dict[str, set[ColumnSource]] = {}
    for source in sources:
        by_name.setdefault(source.column, set()).add(source)
    ambiguous = {name for name, group in by_name.items() if len(group) > 1}

    def expand(name: str | None, attr_id: int, depth: int) -> str:
        if name is None:
            return ""   # `sum(w#1)#50`: the id of an aggregate result; `[id=#852]`
        found, outer = _resolve(attr_id, graph)
        if outer is None:
            if len(found) == 1:
                (source,) = found
                return _source_label(source) if source.column in ambiguous else source.column
            return name
        if depth >= 8 or budget[0] <= 0:
            return name
        budget[0] -= len(outer)
        return _substitute(outer, graph, lambda n, i: expand(n, i, depth + 1))

    return _bounded(_substitute(_PLAN_ID.sub("", expression), graph, lambda n, i: expand(n, i, 0)))
