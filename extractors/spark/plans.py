"""Table-level reads and writes of one Spark SQL execution, from its plan. Pure.

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
  target is a catalog table; `Execute InsertIntoHiveTable` whose first argument is the table.
- CTAS and saveAsTable: the sparkPlanInfo node is a bare `Execute CreateDataSourceTableAsSelectCommand`
  / `Execute CreateHiveTableAsSelectCommand` / `Execute SaveAsV1TableCommand`; the target is
  only in physicalPlanDescription's `Arguments:` of the inner command node:
  `` `spark_catalog`.`sales`.`t`, ErrorIfExists, [u] ``, `[Database: mo, TableName: hive_copy]`,
  `` `mo`.`ds_target`, Append, SubqueryAlias ... ``. The data is written by a nested execution
  (same rootExecutionId) with an InsertIntoHadoopFsRelationCommand or InsertIntoHiveTable;
  the CTAS description also lists its source tables as `LogicalRelation` / `HiveTableRelation`.
- DataSource V2 writes: nodeName `<Command> <table name>` (`OverwriteByExpression noop-table`,
  `AppendData cat.ns.t`), or `AppendDataExecV1` / `OverwriteByExpressionExecV1` with the table in
  the simpleString as `JDBCTable(app.v2_out,...` (no catalog name: see `V2Table.catalog_class`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
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


@dataclasses.dataclass(frozen=True, slots=True)
class PlanIO:
    reads: frozenset[Read] = frozenset()
    writes: frozenset[Write] = frozenset()
    #: plan nodes that look like writes or reads but were not understood (for the run report)
    unparsed: tuple[str, ...] = ()

    def __or__(self, other: PlanIO) -> PlanIO:
        return PlanIO(self.reads | other.reads, self.writes | other.writes,
                      self.unparsed + tuple(u for u in other.unparsed if u not in self.unparsed))


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
    stack = [node]
    while stack:
        current = stack.pop()
        if not isinstance(current, Mapping):
            continue
        yield current
        children = current.get("children") or []
        stack.extend(reversed([c for c in children if isinstance(c, Mapping)]))


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
        return [Read(name, path=p, truncated=truncated) for p in paths]
    return []


def _args_after(simple: str, prefix: str) -> str:
    return simple[len(prefix):].strip() if simple.startswith(prefix) else ""


def _tree_writes(node: Mapping[str, Any]) -> list[Write]:
    name = str(node.get("nodeName", ""))
    simple = str(node.get("simpleString", ""))
    if name == "Execute InsertIntoHadoopFsRelationCommand":
        args = _args_after(simple, name)
        path = args.split(", ", 1)[0].strip()
        if not path:
            raise PlanError(f"{name} without an output path: {simple[:200]!r}")
        return [Write("InsertIntoHadoopFsRelationCommand", table=_first_backticked(args), path=path)]
    if name == "Execute InsertIntoHiveTable":
        table = _first_backticked(_args_after(simple, name))
        if table is None:
            raise PlanError(f"{name} without a table: {simple[:200]!r}")
        return [Write("InsertIntoHiveTable", table=table)]
    v2 = _V2_WRITE.match(name)
    if v2:
        command = v2.group(1)
        if v2.group(3):
            target = v2.group(3).strip()
            if target == NOOP_TABLE:
                return []
            return [Write(command, table=parse_identifier(target) if "." in target else
                          TableId(None, "", target))]
        table_arg = _V2_TABLE_ARG.match(_args_after(simple, name))
        if table_arg:
            return [Write(command, table=parse_identifier(table_arg.group(2)),
                          catalog_class=table_arg.group(1) + "TableCatalog")]
        raise PlanError(f"{name} without a recognisable table: {simple[:200]!r}")
    return []


_CTAS_COMMANDS = ("CreateDataSourceTableAsSelectCommand", "CreateHiveTableAsSelectCommand",
                  "OptimizedCreateHiveTableAsSelectCommand", "SaveAsV1TableCommand")
_HIVE_CTAS_ARGS = re.compile(r"\[Database: ?([^,\]]+), ?TableName: ?([^,\]]+)\]")


def _description_io(description: str, commands: set[str]) -> tuple[list[Read], list[Write]]:
    """CTAS/saveAsTable targets and their logical sources, for the commands the tree runs."""
    reads: list[Read] = []
    writes: list[Write] = []
    if not commands:
        return reads, writes
    for name, fields in description_sections(description):
        args = fields.get("Arguments", "")
        if name in commands:
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
    return reads, writes


def plan_io(spark_plan_info: Mapping[str, Any] | None, description: str | None) -> PlanIO:
    """Reads and writes of one plan. Raises PlanError naming the node it cannot read.

    The description is read only for the CTAS/saveAsTable commands the tree executes (their
    target is not in the tree); a root `CommandResult` means nothing ran in this execution.
    """
    reads: set[Read] = set()
    writes: set[Write] = set()
    unparsed: list[str] = []
    commands: set[str] = set()
    if isinstance(spark_plan_info, Mapping):
        if spark_plan_info.get("nodeName") == "CommandResult":
            # The collected result of a command that already ran in an earlier execution:
            # its description repeats that command's plan, but nothing is read or written.
            return PlanIO()
        for node in walk(spark_plan_info):
            found_reads = _scan_reads(node)
            found_writes = _tree_writes(node)
            reads.update(found_reads)
            writes.update(found_writes)
            name = str(node.get("nodeName", ""))
            if name.removeprefix("Execute ") in _CTAS_COMMANDS:
                commands.add(name.removeprefix("Execute "))
            if not found_writes and name.removeprefix("Execute ") not in _CTAS_COMMANDS and (
                    (name.startswith("Execute ") and any(m in name for m in _WRITE_MARKERS))
                    or _V2_UNREAD.match(name)):
                unparsed.append(name)
    if description:
        more_reads, more_writes = _description_io(description, commands)
        reads.update(more_reads)
        writes.update(more_writes)
    return PlanIO(frozenset(reads), frozenset(writes), tuple(dict.fromkeys(unparsed)))


# --- column lineage (first part of issue 3, item 3; not wired into records yet) ---------------
#
# Spark's formatted plan (physicalPlanDescription) gives every attribute an expression id:
# `Output [1]: [upper(c#9) AS u#8]` defines #8 from #9; a scan's `Output` introduces the ids of
# the columns it reads; `WriteFiles`' `Input` lists, in order, what is written. Following ids from
# the written attributes back to scans gives column-level flows. Filter and join conditions
# (indirect dependencies), Union (only its first child's ids survive), Window, Expand and
# Generate are not followed yet.

@dataclasses.dataclass(frozen=True, slots=True, order=True)
class ColumnSource:
    scan: str               # the scan node, e.g. "Scan parquet spark_catalog.sales.s"
    table: TableId | None
    paths: tuple[str, ...]  # Location paths of a path scan (empty for catalog tables)
    column: str


@dataclasses.dataclass(frozen=True, slots=True)
class ColumnFlow:
    """One written column and the scanned columns it is computed from."""

    target: str
    sources: frozenset[ColumnSource]
    #: None when the value is copied (possibly renamed); else the expression, ids stripped
    expression: str | None


_ATTR = re.compile(r"([^\s\[\](),]+)#(\d+)L?$")
_NAMED_ATTR = re.compile(r"^(.+)#(\d+)L?$", re.S)   # also `sum(w)#51`: a column named "sum(w)"
_REF_ID = re.compile(r"#(\d+)L?\b")
_ALIAS = re.compile(r"^(?P<expr>.*) AS (?P<name>.+?)#(?P<id>\d+)L?$", re.S)
_COUNT_SUFFIX = re.compile(r"\s*\[\d+\]$")


def split_list(text: str) -> list[str]:
    """`[a#1, f(b#2, c#3) AS d#4]` -> ['a#1', 'f(b#2, c#3) AS d#4'] (top-level commas only)."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        items.append(text[start:].strip())
    return items


def _strip_ids(expression: str) -> str:
    return _REF_ID.sub("", expression)


def column_flows(description: str) -> tuple[ColumnFlow, ...]:
    """Column-level flows of the write in one formatted plan; () when it writes nothing."""
    origins: dict[int, ColumnSource] = {}
    defs: dict[int, tuple[frozenset[int], str]] = {}
    written: list[tuple[str, int]] = []
    for name, raw_fields in description_sections(description):
        fields = {_COUNT_SUFFIX.sub("", k): v for k, v in raw_fields.items()}
        if name.startswith(("Scan ", "BatchScan ")):
            table_text = name.split(" ", 2)[2].strip() if name.count(" ") >= 2 else ""
            jdbc = _JDBC_V2_SCAN.match(name)
            if jdbc:
                table_text = jdbc.group(1)
            table = parse_identifier(table_text) if table_text and _PLAIN_IDENT.match(table_text) else None
            paths: tuple[str, ...] = ()
            if table is None and fields.get("Location"):
                paths = tuple(location_paths(fields["Location"])[0])
            for item in split_list(fields.get("Output", "")):
                attr = _NAMED_ATTR.match(item)
                if attr:
                    origins[int(attr.group(2))] = ColumnSource(name.strip(), table, paths, attr.group(1))
            continue
        if name == "WriteFiles":
            written = []
            for item in split_list(fields.get("Input", "")):
                attr = _NAMED_ATTR.match(item)
                if attr:
                    written.append((attr.group(1), int(attr.group(2))))
            continue
        for key in ("Output", "Results", "Aggregate Attributes", "Projections"):
            for item in split_list(fields.get(key, "")):
                alias = _ALIAS.match(item)
                if alias:
                    deps = frozenset(int(x) for x in _REF_ID.findall(alias.group("expr")))
                    defs.setdefault(int(alias.group("id")), (deps, alias.group("expr")))
                    continue
                # `sum(w#43)#50`: an aggregate result named by its id
                agg = re.match(r"^(?P<expr>.+\))#(?P<id>\d+)L?$", item, re.S)
                if agg:
                    deps = frozenset(int(x) for x in _REF_ID.findall(agg.group("expr")))
                    defs.setdefault(int(agg.group("id")), (deps, agg.group("expr")))
    flows = []
    for target, attr_id in written:
        sources, transformed, expression = _resolve(attr_id, origins, defs)
        flows.append(ColumnFlow(target, frozenset(sources),
                                _strip_ids(expression) if transformed and expression else None))
    return tuple(flows)


def _resolve(attr_id: int, origins: Mapping[int, ColumnSource],
             defs: Mapping[int, tuple[frozenset[int], str]]) -> tuple[set[ColumnSource], bool, str | None]:
    """(scanned columns, whether any expression other than a rename applies, outermost expression)."""
    sources: set[ColumnSource] = set()
    transformed = False
    outermost: str | None = None
    stack, seen = [attr_id], set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        if current in origins:
            sources.add(origins[current])
            continue
        if current in defs:
            deps, expression = defs[current]
            if not _ATTR.fullmatch(expression.strip()) or len(deps) != 1:
                transformed = True
                if outermost is None:
                    outermost = expression
            stack.extend(deps)
    return sources, transformed, outermost
