"""The nodes of a described plan, typed: what `tree.parse_description` makes of each `(n) Name`
section. Pure.

A `PlanNode` is typed by its `Kind` (what it does to columns; column lineage has one handler per
kind): its input and output attributes (`name#id`: Spark gives every attribute an expression id,
unique in one plan), the columns its lists define (aliases, aggregate results) and a kind's own
fields (`Scan`, `Condition`, `Window`, ...), each read from the text Spark prints for that node
(`read_node`). A view's definition is an analysed logical plan whose nodes have `Arguments:`
only: each is read as the physical node that does the same (`read_logical_node`,
`_logical_fields`), with `logical` set. Expressions stay Spark's text (`upper(name#22)`), with
the ids they reference.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Callable, Mapping
from typing import Any

from .model import TableId
from .text import (
    CUT_COUNT,
    CUT_LIST,
    JDBC_V2_SCAN,
    NAMED_ATTR,
    PLAIN_IDENT,
    SESSION_CATALOG,
    first_backticked,
    has_char_varchar,
    ids,
    parse_identifier,
    split_alias,
    split_list,
    unwrap_char_varchar,
)

#: pandas / Arrow UDFs whose outputs are made by Python code from whole rows or groups (MapInPandas,
#: MapInArrow, FlatMapGroupsInPandas, FlatMapCoGroupsInPandas, their Arrow twins and Spark 3.x's
#: PythonMapInArrow: mapInPandas, mapInArrow, groupBy().applyInPandas, cogroup().applyInPandas):
#: no output column says which input columns it came from. (Scalar pandas UDFs, ArrowEvalPython, are read: their
#: arguments are known, as a Python UDF's.)
PANDAS_NODES = re.compile(r"^(?:Python)?(?:MapIn|FlatMapGroupsIn|FlatMapCoGroupsIn)(?:Pandas|Arrow)")


# --- the described plan: its nodes, typed ----------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class Attribute:
    """A reference to an attribute, `name#7` (`name#7L` for a long): its name as Spark prints
    it (raw: `a b`, `b.c`, `sum(w)`) and its expression id."""

    name: str
    id: int


@dataclasses.dataclass(frozen=True, slots=True)
class Column:
    """An item of an output list: a reference (`a#1`, expression None), an alias
    (`upper(b#2) AS c#3`: its expression, without Spark's CHAR/VARCHAR wrappers) or an aggregate
    result by its id (`sum(w#4)#5`: named and computed `sum(w#4)`)."""

    name: str
    id: int
    expression: str | None


class Kind(enum.Enum):
    """What a node does to columns; column lineage has one handler per kind."""

    COMMAND = "command"              # `Execute <command>`: writes what its query (or WriteFiles) gives
    SCAN = "scan"                    # `Scan <format> <table>`, `BatchScan <table>`: columns' origins
    WRITE_FILES = "write_files"      # the columns written, in order, for the command above it
    VIEW_COMMAND = "view_command"    # CreateViewCommand / AlterViewAsCommand: its logical plan follows
    VIEW = "view"                    # a view used in a view's logical plan, inlined
    TAKE_ORDERED = "take_ordered"    # TakeOrderedAndProject: ORDER BY ... LIMIT with its projection
    FILTER = "filter"
    JOIN = "join"
    AGGREGATE = "aggregate"
    GLOBAL_SORT = "global_sort"      # ORDER BY (a local sort is OTHER: a physical artefact)
    WINDOW = "window"
    GENERATE = "generate"
    EXPAND = "expand"
    EVAL_PYTHON = "eval_python"      # BatchEvalPython / ArrowEvalPython: Python and scalar pandas UDFs
    PANDAS_MAP = "pandas_map"        # PANDAS_NODES
    SCRIPT = "script"                # TRANSFORM ... USING
    UNION = "union"                  # every child's column at a position is the output's
    DISTINCT = "distinct"            # a logical DISTINCT: every column groups the rows
    SET_COMPARISON = "set_comparison"   # a logical INTERSECT / EXCEPT: the first child's rows that match
    CTE_REFERENCE = "cte_reference"  # a logical CTERelationRef: the columns of a CTE's definition
    OTHER = "other"                  # copies its columns by id; aliases in its arguments define columns


@dataclasses.dataclass(frozen=True, slots=True)
class Command:
    """An `Execute <command>` node: its arguments name what it writes (tables.command_writes)."""

    arguments: str
    #: its own `Input`: what it writes in plans without WriteFiles (Spark 3.0-3.3, or
    #: spark.sql.optimizer.plannedWrite.enabled=false); `[]` above a WriteFiles
    written: tuple[Attribute, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Scan:
    """A scan: the catalog table it reads, else the path index it lists."""

    table: TableId | None
    #: a path scan's `Location` (see text.location_paths), None for a catalog table
    location: str | None


@dataclasses.dataclass(frozen=True, slots=True)
class TakeOrdered:
    """ORDER BY ... LIMIT: its order, and the project list that defines what it outputs."""

    order: tuple[int, ...]
    project: tuple[Column, ...]
    #: Spark cut the project list: it is not the node's whole output
    project_cut: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Condition:
    """A Filter's condition, a join's keys and condition: the ids that control the rows."""

    controls: tuple[int, ...]
    #: Spark cut a list inside the condition (`greatest(c0#1, ..., ... 5 more fields) > 5`)
    cut: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Aggregate:
    """An aggregate's grouping keys and its results."""

    keys: tuple[int, ...]
    #: the aggregate results (`Aggregate Attributes`); None for a logical Aggregate, which lists none
    aggregated: tuple[int, ...] | None


@dataclasses.dataclass(frozen=True, slots=True)
class Sort:
    """A global sort (ORDER BY): the columns it orders by."""

    order: tuple[int, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class WindowFunction:
    """One window column: `sum(x#1) windowspecdefinition(...) AS s#2`."""

    name: str
    id: int
    #: `sum(x#1)`, without its window spec
    function: str
    #: `PARTITION BY p#2 ORDER BY o#3 ASC NULLS FIRST` (the frame left out)
    over: str


@dataclasses.dataclass(frozen=True, slots=True)
class Window:
    """A Window node's functions and the spec they share."""

    functions: tuple[WindowFunction, ...]
    #: the partition and order columns
    spec: tuple[int, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Expand:
    """ROLLUP / CUBE / GROUPING SETS / count(distinct ...): one row a projection."""

    #: each output attribute with the values every projection gives it, at its position
    outputs: tuple[tuple[int, tuple[str, ...]], ...]
    #: Spark cut the list of projections: a value missing from those shown is not known
    projections_cut: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Made:
    """Attributes each made by an expression: a generator's outputs (GENERATE), Python UDF
    results (EVAL_PYTHON: one call a result), a pandas function's or a script's outputs
    (PANDAS_MAP, SCRIPT: every output from the whole call); with the keys that group the rows."""

    #: (attribute id, the expression that makes it)
    results: tuple[tuple[int, str], ...]
    keys: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class Aliases:
    """Aliases in the arguments of a node without an Output (SerializeFromObject's serializer)."""

    columns: tuple[Column, ...]


Detail = Command | Scan | TakeOrdered | Condition | Aggregate | Sort | Window | Expand | Made | Aliases


@dataclasses.dataclass(frozen=True, slots=True)
class PlanNode:
    number: int
    #: as the section header prints it
    name: str
    #: the name column lineage knows it by: `name`, or for a logical node the physical node it
    #: is read as (`Scan LogicalRelation spark_catalog.db.t`, `Join Inner`)
    label: str
    kind: Kind
    #: `Arguments:` as printed (plan ids `[id=#n]` left out)
    arguments: str
    children: tuple[int, ...]
    #: `Input`, None when not listed
    input: tuple[Attribute, ...] | None
    #: `Output` (else `Results`): what the node outputs, when listed
    output: tuple[Column, ...] | None
    #: every column its lists define (Output, Results, Aggregate Attributes), in order
    defined: tuple[Column, ...]
    detail: Detail | None
    logical: bool = False
    #: Spark cut a list in its arguments after spark.sql.debug.maxToStringFields items
    arguments_cut: bool = False
    #: a logical node whose listed columns Spark cut: how many are not printed
    hidden_columns: int | None = None


class Lists:
    """split_list, attribute lists and output lists of one plan, each text read once: about
    half of a plan's field values repeat (an AQE description lists the final and the initial
    plan, with the same attribute lists; an operator's Input is its child's Output)."""

    __slots__ = ("_items", "_attributes", "_columns")

    def __init__(self) -> None:
        self._items: dict[str, list[str]] = {}
        self._attributes: dict[str, tuple[Attribute, ...]] = {}
        self._columns: dict[str, tuple[Column, ...]] = {}

    def split(self, text: str) -> list[str]:
        """split_list(text); the list is shared: callers do not change it."""
        items = self._items.get(text)
        if items is None:
            items = self._items[text] = split_list(text)
        return items

    def attributes(self, text: str) -> tuple[Attribute, ...]:
        """The named attributes of a list (`[a#1, b#2L]`); other items are left out."""
        found = self._attributes.get(text)
        if found is None:
            found = self._attributes[text] = tuple(
                Attribute(named.group(1), int(named.group(2))) for item in self.split(text)
                if (named := NAMED_ATTR.match(item)))
        return found

    def attr_ids(self, text: str) -> tuple[int, ...]:
        return tuple(attribute.id for attribute in self.attributes(text))

    def columns(self, text: str) -> tuple[Column, ...]:
        found = self._columns.get(text)
        if found is None:
            found = self._columns[text] = self.column_items(self.split(text))
        return found

    @staticmethod
    def column_items(items: list[str]) -> tuple[Column, ...]:
        """The columns of an output list's items: aliases, references, aggregate results."""
        columns = []
        for item in items:
            alias = split_alias(item)
            if alias:
                expression, name, attr_id = alias
                if has_char_varchar(expression):
                    expression = unwrap_char_varchar(expression)
                columns.append(Column(name, attr_id, expression))
                continue
            named = NAMED_ATTR.match(item)
            if named:
                # `sum(w#43)#50`: an aggregate result by its id, named and computed by its text
                name = named.group(1)
                columns.append(Column(name, int(named.group(2)), name if name.endswith(")") else None))
        return tuple(columns)


_GLOBAL_SORT = re.compile(r",\s*true,\s*\d+\s*$")
_LOGICAL_KINDS = {"Distinct": Kind.DISTINCT, "Intersect": Kind.SET_COMPARISON, "Except": Kind.SET_COMPARISON,
                  "CTERelationRef": Kind.CTE_REFERENCE}
_WINDOW_SPEC = " windowspecdefinition("
_SORT_ORDER = re.compile(r" (?:ASC|DESC) NULLS (?:FIRST|LAST)$")


def _kind(name: str, fields: Mapping[str, str]) -> Kind:
    """A node's kind by its name (and, for an aggregate or a sort, its fields), the first that
    fits in this order."""
    arguments = fields.get("Arguments", "")
    if name.startswith("Execute "):
        return Kind.COMMAND
    if name.startswith(("Scan ", "BatchScan ")):
        return Kind.SCAN
    if name == "WriteFiles":
        return Kind.WRITE_FILES
    if name.startswith("TakeOrderedAndProject") and arguments:
        return Kind.TAKE_ORDERED
    if name.startswith("Filter"):
        return Kind.FILTER
    if "Join" in name:
        return Kind.JOIN
    if "Aggregate" in name and "Keys" in fields:
        return Kind.AGGREGATE
    if name.startswith("Sort") and arguments and _GLOBAL_SORT.search(arguments):
        return Kind.GLOBAL_SORT
    if name.startswith("Union"):
        return Kind.UNION
    if name in _LOGICAL_KINDS:
        return _LOGICAL_KINDS[name]
    if not arguments:
        return Kind.OTHER
    for prefix, kind in (("Window", Kind.WINDOW), ("Generate", Kind.GENERATE), ("Expand", Kind.EXPAND)):
        if name.startswith(prefix):
            return kind
    if name.endswith("EvalPython"):
        return Kind.EVAL_PYTHON
    if PANDAS_NODES.match(name):
        return Kind.PANDAS_MAP
    if name.endswith("ScriptTransformation"):
        return Kind.SCRIPT
    return Kind.OTHER


def read_node(number: int, name: str, label: str, fields: Mapping[str, str], arguments: str,
          children: tuple[int, ...], lists: Lists, **marks: Any) -> PlanNode:
    """A node from the fields it is read by (a physical node's own; a logical node's as
    _logical_fields gives them)."""
    kind = _kind(label, fields)
    output: tuple[Column, ...] | None = None
    defined: tuple[Column, ...] = ()
    if kind is Kind.SCAN:
        output = tuple(Column(a.name, a.id, None) for a in lists.attributes(fields.get("Output", "")))
    elif kind is not Kind.WRITE_FILES:
        listed = [(key, lists.columns(fields[key])) for key in ("Output", "Results", "Aggregate Attributes")
                  if key in fields]
        output = next((columns for key, columns in listed if key != "Aggregate Attributes"), None)
        defined = tuple(column for _key, columns in listed for column in columns)
    reader = _DETAILS.get(kind)
    return PlanNode(number, name, label, kind, arguments, children,
                    lists.attributes(fields["Input"]) if "Input" in fields else None, output, defined,
                    reader(label, fields, lists) if reader else None, **marks)


def _command(name: str, fields: Mapping[str, str], lists: Lists) -> Command:
    return Command(fields.get("Arguments", ""), lists.attributes(fields.get("Input", "")))


def _scan(name: str, fields: Mapping[str, str], lists: Lists) -> Scan:
    table_text = name.split(" ", 2)[2].strip() if name.count(" ") >= 2 else ""
    jdbc = JDBC_V2_SCAN.match(name)
    if jdbc:
        table_text = jdbc.group(1)
    table = parse_identifier(table_text) if table_text and PLAIN_IDENT.match(table_text) else None
    return Scan(table, fields.get("Location") or None if table is None else None)


def _take_ordered(name: str, fields: Mapping[str, str], lists: Lists) -> TakeOrdered | None:
    # ORDER BY ... LIMIT: `limit, [sort order], [project list][, offset]`; the columns written
    # are defined in the project list (`upper(name#20) AS n#56`), not in an Output. The two
    # lists are taken in order wherever the scalars (limit, offset) stand.
    found = [part for part in lists.split(fields["Arguments"]) if part.startswith("[")]
    if len(found) < 2:
        return None
    return TakeOrdered(tuple(ids(found[0])), lists.columns(found[1]), CUT_LIST in found[1])


def _filter(name: str, fields: Mapping[str, str], lists: Lists) -> Condition:
    condition = fields.get("Condition", "")
    return Condition(tuple(ids(condition)), CUT_LIST in condition)


def _join(name: str, fields: Mapping[str, str], lists: Lists) -> Condition:
    condition = fields.get("Join condition", "")
    return Condition(tuple(ids(fields.get("Left keys", "")) + ids(fields.get("Right keys", "")) + ids(condition)),
                     CUT_LIST in condition)


def _aggregate(name: str, fields: Mapping[str, str], lists: Lists) -> Aggregate:
    return Aggregate(tuple(ids(fields["Keys"])), lists.attr_ids(fields["Aggregate Attributes"])
                     if "Aggregate Attributes" in fields else None)


def _global_sort(name: str, fields: Mapping[str, str], lists: Lists) -> Sort:
    parts = lists.split(fields["Arguments"])
    return Sort(tuple(ids(parts[0])) if parts else ())


def _window(name: str, fields: Mapping[str, str], lists: Lists) -> Window:
    split = lists.split
    parts = split(fields["Arguments"])
    # `sum(x) windowspecdefinition(p, o ASC NULLS FIRST, specifiedwindowframe(...))`
    # -> `sum(x) OVER (PARTITION BY p ORDER BY o ASC NULLS FIRST)` (frame left out). Spark
    # leaves an empty list out: `[row_number() ... AS rn#106], [amt#21 DESC NULLS LAST]` is
    # ordered, not partitioned; an order's items end with their null ordering.
    over = []
    for part in parts[1:3]:
        items = split(part)
        if items:
            ordered = all(_SORT_ORDER.search(item) for item in items)
            over.append(("ORDER BY " if ordered else "PARTITION BY ") + ", ".join(items))
    functions = []
    for item in split(parts[0]) if parts else []:
        alias = split_alias(item)
        if alias:
            expression, alias_name, attr_id = alias
            functions.append(WindowFunction(alias_name, attr_id, expression.split(_WINDOW_SPEC, 1)[0], " ".join(over)))
    return Window(tuple(functions), tuple(i for part in parts[1:3] for i in ids(part)))


def _generate(name: str, fields: Mapping[str, str], lists: Lists) -> Made | None:
    parts = lists.split(fields["Arguments"])
    return Made(tuple((i, parts[0]) for i in lists.attr_ids(parts[3]))) if len(parts) >= 4 else None


def _expand(name: str, fields: Mapping[str, str], lists: Lists) -> Expand | None:
    parts = lists.split(fields["Arguments"])
    if len(parts) < 2:
        return None
    projections = [lists.split(p) for p in lists.split(parts[0])]
    outputs = tuple((int(named.group(2)), tuple(p[position] for p in projections if position < len(p)))
                    for position, item in enumerate(lists.split(parts[1])) if (named := NAMED_ATTR.match(item)))
    return Expand(outputs, CUT_LIST in parts[0])


def _eval_python(name: str, fields: Mapping[str, str], lists: Lists) -> Made | None:
    parts = lists.split(fields["Arguments"])
    if len(parts) < 2:
        return None
    results = []
    for udf, result in zip(lists.split(parts[0]), lists.split(parts[1]), strict=False):
        named = NAMED_ATTR.match(result)
        call = NAMED_ATTR.match(udf)
        if named:
            results.append((int(named.group(2)), call.group(1) if call else udf))
    return Made(tuple(results))


def _pandas_map(name: str, fields: Mapping[str, str], lists: Lists) -> Made | None:
    # mapInPandas / mapInArrow: `f(a#1, b#2)#45, [x#46, y#47], <isBarrier>`; applyInPandas on
    # groups / cogroups: `[keys], [other keys], f(...)#51, [x#52, ...]`
    parts = lists.split(fields["Arguments"])
    at = next((i for i, part in enumerate(parts) if not part.startswith("[") and NAMED_ATTR.match(part)), None)
    made = next((part for part in parts[at + 1:] if part.startswith("[")), "") if at is not None else ""
    if at is None or not made:
        return None
    call = NAMED_ATTR.match(parts[at]).group(1)  # type: ignore[union-attr]
    return Made(tuple((i, call) for i in lists.attr_ids(made)), tuple(i for part in parts[:at] for i in ids(part)))


def _script(name: str, fields: Mapping[str, str], lists: Lists) -> Made | None:
    # SELECT TRANSFORM(...) USING 'script': `script, [outputs], ioschema`; each output is
    # whatever the script makes of all its input columns (the node's Input)
    parts = lists.split(fields["Arguments"])
    if len(parts) < 2:
        return None
    feed = fields.get("Input", "")
    call = f"TRANSFORM({', '.join(lists.split(feed))}) USING '{parts[0]}'"
    return Made(tuple((i, call) for i in lists.attr_ids(parts[1])))


def _other(name: str, fields: Mapping[str, str], lists: Lists) -> Aliases | None:
    # Any other node that projects in its arguments (SerializeFromObject's serializer, a
    # projection kept by a node not known yet): an alias there defines its id like a Project's
    # Output does. (Commands are left out: their arguments hold a logical plan. split_list
    # drops the brackets of an argument text that is one list.)
    arguments = fields.get("Arguments", "")
    if not arguments or " AS " not in arguments or "Output" in fields or "Results" in fields:
        return None
    return Aliases(lists.column_items([item for part in lists.split(arguments)
                                       for item in (lists.split(part) if part.startswith("[") else (part,))]))


_DETAILS: Mapping[Kind, Callable[[str, Mapping[str, str], Lists], Detail | None]] = {
    Kind.COMMAND: _command, Kind.SCAN: _scan, Kind.TAKE_ORDERED: _take_ordered, Kind.FILTER: _filter,
    Kind.JOIN: _join, Kind.AGGREGATE: _aggregate, Kind.GLOBAL_SORT: _global_sort, Kind.WINDOW: _window,
    Kind.GENERATE: _generate, Kind.EXPAND: _expand, Kind.EVAL_PYTHON: _eval_python, Kind.PANDAS_MAP: _pandas_map,
    Kind.SCRIPT: _script, Kind.UNION: _other, Kind.DISTINCT: _other, Kind.SET_COMPARISON: _other,
    Kind.CTE_REFERENCE: _other, Kind.OTHER: _other,
}


# --- logical nodes (a view's definition) --------------------------------------------------------------

def read_logical_node(number: int, name: str, arguments: str, children: tuple[int, ...], cut: bool,
                  lists: Lists) -> PlanNode:
    """A node of a view's analysed plan (only `Arguments:`), read as the physical node that
    does the same; a View node (a view the query uses, inlined) is a VIEW."""
    label, fields = _logical_fields(name, arguments, lists.split)
    listed = fields.get("Output") or fields.get("Results") or ""
    hidden = CUT_COUNT.search(arguments) if CUT_LIST in listed or (label.startswith("Scan ") and cut) else None
    marks = {"logical": True, "arguments_cut": cut, "hidden_columns": int(hidden.group(1)) if hidden else None}
    if name == "View":
        return PlanNode(number, name, label, Kind.VIEW, arguments, children, None, None, (), None, **marks)
    return read_node(number, name, label, fields, arguments, children, lists, **marks)


def _logical_fields(name: str, arguments: str, split: Callable[[str], list[str]]) -> tuple[str, dict[str, str]]:
    """A logical node of an analysed plan (a view's definition: only `Arguments:`) as the
    name and fields of the physical node that does the same."""
    parts: list[str] = split(arguments)
    if name in ("LogicalRelation", "HiveTableRelation"):
        # `parquet, [id#21, ...], `spark_catalog`.`db`.`t`, <serde>, false`;
        # `` `spark_catalog`.`db`.`t`, <serde>, [id#28, ...][, [partition columns]] ``
        table = first_backticked(arguments)
        columns = [item for part in parts if part.startswith("[") for item in split(part)
                   if NAMED_ATTR.match(item)]
        scan = f"Scan {name} {table.catalog or SESSION_CATALOG}.{table.namespace}.{table.name}" if table else \
            f"Scan {name}"
        return scan, {"Output": "[" + ", ".join(columns) + "]"}
    if name == "Project":
        return name, {"Output": arguments}
    if name == "Filter":
        return name, {"Condition": arguments}
    if name == "Join" and parts:
        # `Inner, (id#21 = id#28)`: the type in the name, as semi joins are told by it
        return f"Join {parts[0]}", {"Join condition": ", ".join(parts[1:])}
    if name == "Aggregate" and len(parts) >= 2 and parts[0].startswith("[") and parts[1].startswith("["):
        return name, {"Keys": parts[0], "Results": parts[1]}
    if name == "Aggregate" and arguments.startswith("["):
        # no grouping: Spark leaves the empty list of keys out (`[avg(amount#102) AS avg(amount)#99]`)
        return name, {"Keys": "[]", "Results": arguments}
    if name == "Sort" and len(parts) >= 2:
        # logical `[order], global`; SortExec's `[order], global, testSpillFrequency`
        return name, {"Arguments": f"{parts[0]}, {parts[1]}, 0"}
    if name == "Generate" and len(parts) >= 4:
        # logical `generator, unrequiredChildIndex, outer[, qualifier], generatorOutput`;
        # GenerateExec's `generator, requiredChildOutput, outer, generatorOutput`
        return name, {"Arguments": ", ".join((parts[0], "[]", parts[2], parts[-1]))}
    if name in ("Window", "Expand"):
        return name, {"Arguments": arguments}   # the same arguments as the physical node
    if name == "CTERelationRef" and parts:
        # `0, true, [customer_id#44, amount#45], false, false`: a reference to the plan of a
        # CTE (CTERelationDef 0), with its attributes
        return name, {"Output": next((part for part in parts if part.startswith("[")), "[]")}
    return name, {}   # SubqueryAlias, Union, Distinct, limits, LocalRelation (VALUES), ...: the child's columns
