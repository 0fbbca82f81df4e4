"""Step two of reading a Spark plan: the datasets one SQL execution reads and writes
(`plan_io`), from its sparkPlanInfo tree and, for the commands whose target only the
description names, its described plan. Pure. Datasets are as Spark spells them (catalog
identifiers, paths); qualified names are the caller's business.

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
- `PlanIO.gaps`: the known column lineage gaps (model.GAPS) the plan runs into, for events.py to say
  on the execution why its written columns have no (or approximate) column edges.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from . import model
from .model import PlanError, PlanIO, Read, TableId, Write
from .text import (
    JDBC_V2_SCAN,
    PLAIN_IDENT,
    PLAN_TRUNCATED,
    first_backticked,
    location_paths,
    parse_identifier,
    split_list,
)
from .nodes import PANDAS_NODES
from .tree import VIEW_COMMANDS, InfoNode, PlanTree, info_nodes, parse_description

_V2_TABLE_ARG = re.compile(r"^(\w+?)Table\(([^,()]+),")
_V2_WRITE = re.compile(r"^(AppendData|OverwriteByExpression|OverwritePartitionsDynamic|ReplaceData|"
                       r"WriteDelta)(?:Exec)?(V1)?(?: (.+))?$")
_WRITE_MARKERS = ("Insert", "Write", "AsSelect", "AppendData", "Overwrite", "Save", "Merge")
# V2 write/CTAS nodes without the `Execute ` prefix that this module does not read yet.
_V2_UNREAD = re.compile(r"^(Atomic)?(Create|Replace)TableAsSelect|^WriteToDataSourceV2|^MergeRows|"
                        r"^WriteToMicroBatchDataSource")
NOOP_TABLE = "noop-table"
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
#: How every node that plan_io reads or reports starts (_scan_reads, command_writes, _CTAS_COMMANDS
#: with or without `Execute `, _WRITE_MARKERS under `Execute `, _V2_UNREAD): one C-level test
#: skips the rest of the tree.
_IO_NODE_PREFIXES = ("Scan ", "BatchScan ", "Execute ", "AppendData", "Overwrite", "Replace",
                     "WriteDelta", "WriteTo", "MergeRows", "Atomic", "Create", "Optimized", "SaveAs",
                     "MapIn", "FlatMap", "PythonMapIn")
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
_PERSISTED_VIEW = re.compile(r", PersistedView(?:, |$)")
_USER_COLUMNS = re.compile(r"^\[\(.*\)\]$", re.S)
#: Commands whose target is only in the description's `Arguments:` of their inner node.
_DESCRIBED_COMMANDS = (*_CTAS_COMMANDS, *VIEW_COMMANDS, _DS_DIR_COMMAND, *DELTA_COMMANDS)
#: V2 row-level writes (Iceberg and other V2 tables' MERGE INTO / UPDATE / DELETE): Spark 4 names
#: them `ReplaceData <table>` / `WriteDelta <table>` (the rows to keep or the changed rows, from a
#: `MergeRows` node under them for MERGE); which column of the target comes from which source
#: column is in their projections, which the plan does not print.
_ROW_LEVEL_WRITES = ("ReplaceData", "WriteDelta", "MergeRows")
#: Streaming writes: each micro-batch is a SQL execution whose root names the sink.
_STREAMING_WRITES = ("WriteToDataSourceV2", "WriteToMicroBatchDataSource", "WriteToContinuousDataSource")


def plan_io(spark_plan_info: Mapping[str, Any] | None, description: str | None, *,
            parse: Callable[[str], PlanTree] = parse_description) -> PlanIO:
    """Reads and writes of one plan. Raises PlanError naming the node it cannot read.

    The description is read only for the CTAS/saveAsTable commands the tree executes (their
    target is not in the tree), with `parse` (tree.PlanTrees.parse shares the tree with the
    execution's column lineage); a root `CommandResult` means nothing ran in this execution.
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
        # most nodes (Project, Filter, Exchange, ...): nothing to read
        for node in info_nodes(spark_plan_info, _IO_NODE_PREFIXES):
            name = node.name
            found_reads = _scan_reads(node)
            try:
                found_writes = command_writes(name, node.arguments)
            except PlanError:
                if not name.startswith(_ROW_LEVEL_WRITES):
                    raise
                # a row-level write whose table is not in the plan: the rest of it still reads
                found_writes = []
                gaps.add(model.GAP_ROW_LEVEL_TARGET)
            reads.update(found_reads)
            writes.update(found_writes)
            gaps.update(_node_gaps(name, found_writes))
            command = name.removeprefix("Execute ")
            if command in _DESCRIBED_COMMANDS:
                commands.add(command)
            elif not found_writes and ((name.startswith("Execute ") and any(m in name for m in _WRITE_MARKERS))
                                       or _V2_UNREAD.match(name)):
                unparsed.append(name)
    if description and commands:
        more_reads, more_writes, more_gaps = _description_io(parse(description), commands)
        reads.update(more_reads)
        writes.update(more_writes)
        gaps.update(more_gaps)
    return PlanIO(frozenset(reads), frozenset(writes), tuple(dict.fromkeys(unparsed)),
                  tuple(g for g in model.GAPS if g in gaps))


def _scan_reads(node: InfoNode) -> list[Read]:
    name = node.name
    jdbc = JDBC_V2_SCAN.match(name)
    if jdbc:
        return [Read(name, table=parse_identifier(jdbc.group(1)))]
    if name.startswith("BatchScan "):
        return [Read(name, table=parse_identifier(name[len("BatchScan "):]))]
    if not name.startswith("Scan "):
        return []
    _, _, rest = name.partition(" ")
    _fmt, _, table_text = rest.partition(" ")
    table_text = table_text.strip()
    if table_text and PLAIN_IDENT.match(table_text):
        return [Read(name, table=parse_identifier(table_text))]
    if node.location:
        paths, truncated = location_paths(node.location)
        # Delta reads its own transaction log (`<table>/_delta_log/*.json`) to plan a command:
        # not the job's data
        return [Read(name, path=p, truncated=truncated) for p in paths if _DELTA_LOG not in p]
    return []


def command_writes(name: str, args: str) -> list[Write]:
    """What a write node writes, from its name and its arguments (a sparkPlanInfo node's
    simpleString after the name, or a description section's `Arguments:`: the same text).
    [] for a node that is not a write this module reads."""
    if name == "Execute InsertIntoHadoopFsRelationCommand":
        path = args.split(", ", 1)[0].strip()
        if not path:
            raise PlanError(f"{name} without an output path: {args[:200]!r}")
        return [Write("InsertIntoHadoopFsRelationCommand", table=first_backticked(args), path=path)]
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
        table = first_backticked(args)
        if table is None:
            raise PlanError(f"{name} without a table: {args[:200]!r}")
        return [Write("InsertIntoHiveTable", table=table)]
    v2 = _V2_WRITE.match(name)
    if v2:
        return _v2_writes(name, v2, args)
    return []


def _v2_writes(name: str, v2: re.Match[str], args: str) -> list[Write]:
    command = v2.group(1)
    if v2.group(3):
        target = v2.group(3).strip()
        if target == NOOP_TABLE:
            return []
        return [Write(command, table=parse_identifier(target) if "." in target else TableId(None, "", target))]
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


def is_v2_write(name: str) -> bool:
    """A V2 write node (AppendData, OverwriteByExpression, ... and their ExecV1 fallbacks)."""
    return _V2_WRITE.match(name) is not None


def view_target(name: str, arguments: str) -> TableId | None:
    """The persisted view a CreateViewCommand / AlterViewAsCommand defines; None for a
    temporary view (or another node)."""
    if name not in VIEW_COMMANDS:
        return None
    head = arguments.split(", ", 1)[0]
    if name == "CreateViewCommand" and not _PERSISTED_VIEW.search(arguments) and not (
            PLAN_TRUNCATED.search(arguments) and head.count("`.`") >= 2):
        # (a plan text Spark truncated in the middle of the statement loses the view's kind:
        # a catalog's three-part name is a persisted view's)
        return None
    # A temporary view's name is one part (`tv`): not an identifier of a catalog table.
    return first_backticked(head) if "`" in head else None


def view_columns(arguments: str) -> list[str] | None:
    """The column names a CREATE VIEW statement gives (`v (a, b) AS ...`), else None."""
    parts = split_list(arguments)
    if len(parts) < 2 or not _USER_COLUMNS.match(parts[1]):
        return None
    # `[(key,None), (label,Some(the comment))]`: each pair's name ends at its first comma
    return [item.strip("()").split(",", 1)[0].strip() for item in split_list(parts[1])]


def delta_target(name: str, arguments: str) -> Write | None:
    """The table (else the path) a Delta MERGE / UPDATE / DELETE writes, from its inner node's
    arguments; None when they name neither."""
    location = _DELTA_LOCATION.search(arguments)
    table = first_backticked(arguments)
    if table is not None and table.namespace.lower() == "delta" and table.catalog is None and location:
        table = None   # `delta`.`/path`: a table named by its path
    if table is not None:
        return Write(name, table=table)
    if location is not None:
        return Write(name, path=location.group(1))
    return None


def _description_io(tree: PlanTree, commands: set[str]) -> tuple[list[Read], list[Write], list[str]]:
    """CTAS/saveAsTable targets, persisted views defined, directories of INSERT OVERWRITE
    DIRECTORY ... USING, Delta MERGE / UPDATE / DELETE targets, and their logical sources, for
    the commands the tree runs; with the gaps (model.GAPS) met."""
    reads: list[Read] = []
    writes: list[Write] = []
    gaps: list[str] = []
    for node in tree.nodes:
        name, args = node.name, node.arguments
        if name in DELTA_COMMANDS:
            if name in commands:
                target = delta_target(name, args)
                if target is not None:
                    writes.append(target)
                else:
                    gaps.append(model.GAP_DELTA_TARGET)
        elif name == _DS_DIR_COMMAND:
            if name in commands:
                writes.extend(command_writes(name, args))
        elif name in VIEW_COMMANDS:
            if name in commands:
                view = view_target(name, args)
                if view is not None:
                    writes.append(Write(name, table=view, view=True))
        elif name in commands:
            writes.append(Write(name, table=_created_table(name, args), creates_table=True))
        elif name in ("LogicalRelation", "HiveTableRelation"):
            table = first_backticked(args)
            if table is not None:
                reads.append(Read(name, table=table))
    # A temporary view's definition reads nothing yet (its query runs when the view is used).
    return (reads if writes else []), writes, gaps


def _created_table(name: str, args: str) -> TableId:
    """The table a CTAS / saveAsTable command creates, from its inner node's arguments."""
    hive = _HIVE_CTAS_ARGS.search(args)
    if hive:
        return TableId(None, hive.group(1).strip(), hive.group(2).strip())
    head = args.split(", ", 1)[0]
    table = first_backticked(head) if "`" in head else None
    if table is None:
        raise PlanError(f"{name} without a target table: {args[:200]!r}")
    return table


def _node_gaps(name: str, writes: list[Write]) -> list[str]:
    """The known gaps (model.GAPS) a plan node runs into."""
    if name.removeprefix("Execute ") in DELTA_COMMANDS:
        return [model.GAP_DELTA]
    if name.startswith(_ROW_LEVEL_WRITES):
        return [model.GAP_ROW_LEVEL]
    if name.startswith(_STREAMING_WRITES):
        return [model.GAP_STREAMING] if writes else [model.GAP_STREAMING, model.GAP_STREAMING_SINK]
    if PANDAS_NODES.match(name):
        return [model.GAP_PANDAS]
    if writes and _V2_WRITE.match(name):
        return [model.GAP_V2_WRITE]
    return []
