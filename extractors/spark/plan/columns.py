"""Step three of reading a Spark plan: column lineage (`column_flows`), one handler per node
kind over the typed tree. Pure.

Spark's formatted plan (physicalPlanDescription) gives every attribute an expression id:
`Output [1]: [upper(c#9) AS u#8]` defines #8 from #9; a scan's `Output` introduces the ids of
the columns it reads; `WriteFiles`' `Input` lists, in order, what is written. Ids are unique in
one plan (the AQE final and initial plans and the subquery plans share them), so following ids
from the written attributes back to scans gives column-level flows. Each node of the tree is
read once, in the order the description details them, by its kind's handler (`_HANDLERS`) into
one ColumnGraph; what needs the whole tree (columns through a filter or join, Union branches,
scalar subqueries, cut argument lists) is settled after; each written column is then resolved
in the graph (graph.py).

A plan can write several datasets: a multi-insert (`FROM t INSERT INTO d1 SELECT ... INSERT
INTO d2 SELECT ...`) is a Union of write commands, each over its own WriteFiles, projection and
filters. Each WriteFiles' columns go to the dataset of the command right above it
(`ColumnFlow.write`, read from that command's `Arguments` as plan_io reads the tree), so each
target gets its own branch's sources and controls. Spark 3.0-3.3 (and later versions with
spark.sql.optimizer.plannedWrite.enabled=false) plan no WriteFiles: there the write command's
own `Input` lists what it writes.

- data (DATA_FLOW): Project/aggregate `Output`/`Results`/`Aggregate Attributes` aliases,
  TakeOrderedAndProject's project list (ORDER BY ... LIMIT: `limit, [order], [projection]`),
  Window expressions (without their window spec), Generate outputs (from the generator),
  Expand outputs (every projection's value at that position), Union outputs (every child's
  column at that position: Spark keeps the first child's ids), BatchEvalPython /
  ArrowEvalPython results (from the UDF's arguments), script transformations (TRANSFORM ...
  USING: every output from every input), scalar subqueries (their output), and aliases in the
  argument lists of any other node without an Output (SerializeFromObject's serializer, ...);
  SIMPLE when only copies and renames lie on the way, else EXPRESSION with the outermost
  expression, written in source-column names. A reference is `name#id` with the raw name
  (`a b#10`, `b.c#9`: no quoting), read by the plan's own name for that id. What Spark adds
  around the user's expression is not it: CHAR/VARCHAR write-side checks and read-side
  padding (`static_invoke(CharVarcharCodegenUtils....)`), and on an INSERT into an existing
  table (the write names its table) the store-assignment cast of a written column
  (`cast(n#1 as bigint)`; a cast the user wrote to exactly the column's type reads the same
  and is taken for Spark's). A copy through them is SIMPLE. A Hive-format CTAS's nested
  InsertIntoHiveTable names its table like an INSERT: a cast at the top of its select list is
  taken for Spark's too (a data source CTAS's nested insert names only its path: kept).
  Limits (GlobalLimit, LocalLimit, CollectLimit) and Sample pass their input through
  unchanged (read from their `Input`).
- control (CONTROL_FLOW): Filter conditions, join keys and join conditions (for every column
  passing through the filter/join), grouping keys (for every column of the aggregate), global
  Sort orders and TakeOrderedAndProject's order (ORDER BY), Window partition and order columns
  (for the window's columns only), the conditions of CASE WHEN and If (for the column they
  define). A column that is also a data source of an output stays its control source too (a
  join key or filter column copied to the output): Hive's LineageLogger and OpenLineage keep
  both facts. Local sorts and exchanges (physical artefacts of joins, windows and aggregates)
  are ignored.
- how (ColumnFlow.data_subtypes / control_subtypes, OpenLineage's transformation subtypes):
  a source is IDENTITY (only copies and renames on the way), TRANSFORMATION (an expression) or
  AGGREGATION (an aggregate result or an aggregating window function on the way); a control
  is FILTER, JOIN, GROUP_BY, SORT, WINDOW or CONDITIONAL by the node (or expression) that
  uses it, a column controlling through several nodes having several. A CASE WHEN / If
  condition's columns are not data sources of its result (unless also in a branch value); a
  ranking function (`rank(ts#5)`, Spark printing the window's order as its argument) has no
  data source. The columns a control is computed from control as it does; a control of a
  control (a filter under a join key) as its own.

A view's definition (CreateViewCommand / AlterViewAsCommand) is a logical plan, read as the
physical nodes that do the same (tree.py); the view's columns are its query's output under the
statement's column names. A view used in the query is inlined (a `View` node over its query),
so lineage goes through it to its tables, as in CTAS plans. Its subquery expressions (`list#62`,
`exists#51`, `scalar-subquery#128`, their plans detailed in the text) control the rows as the
joins Spark's optimiser makes of them in a CTAS's plan (`_subquery_joins`): a view and a CTAS of
the same query get the same edges, less the optimiser's own additions (inferred `isnotnull`
filters, a comparison moved into a join's condition).

Not followed (yet), each a known gap (model.GAPS, flagged on the execution by events.py): V2
writes without WriteFiles (AppendData/OverwriteByExpression and their V1 fallbacks, whose query
is a logical plan in `Arguments`), V2 row-level writes and Delta's MERGE / UPDATE / DELETE,
streaming writes. pandas map/cogroup nodes (PANDAS_NODES) are read as every output from every
column the Python function reads, their keys as GROUP_BY, and their outputs flagged. ArrowEvalPython
(a scalar pandas UDF) is read like BatchEvalPython (same `Arguments` shape). Argument lists and
conditions Spark cut after spark.sql.debug.maxToStringFields items: see cut.py for what is
recovered and how the rest is flagged. Directory writes (INSERT OVERWRITE DIRECTORY) are writes
of their path: InsertIntoHiveDirCommand's Input is what it writes; InsertIntoDataSourceDirCommand's
columns come from its nested InsertIntoHadoopFsRelationCommand (a path write like
`df.write.parquet(path)`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping

from .cut import CONDITION, EXPRESSION, PANDAS_OUTPUT, cut_condition, cut_logical_scans, cut_outputs, why_incomplete
from .graph import (
    VIEW_UPCAST,
    ColumnGraph,
    data_subtypes,
    render,
    resolve,
    resolve_controls,
    strip_store_assignment_cast,
    unknown_on_path,
)
from .model import (
    FILTER,
    GROUP_BY,
    JOIN,
    MAX_PLAN_CHARS,
    SORT,
    TRANSFORMATION,
    WINDOW,
    ColumnFlow,
    ColumnSource,
    PlanError,
    PlanTooLarge,
    Write,
)
from .tables import command_writes, is_v2_write, view_columns
from .text import ATTR, CUT_LIST, PLAN_TRUNCATED, closing, first_backticked, ids, location_paths, without_outer_references
from .nodes import (
    Aggregate,
    Aliases,
    Column,
    Command,
    Condition,
    Expand,
    Kind,
    Made,
    PlanNode,
    Scan,
    Sort,
    TakeOrdered,
    Window,
)
from .tree import SUBQUERY_REF, PlanTree, parse_description

# Window functions that aggregate their frame (`sum(x) OVER (...)`), as opposed to ranking and
# offset functions (`rank()`, `lag(x)`): the former make an AGGREGATION of their input column.
_AGGREGATE_CALL = re.compile(
    r"^(?:sum|avg|mean|count|min|max|first|last|first_value|last_value|collect_list|collect_set"
    r"|stddev\w*|std|var\w*|approx_count_distinct|percentile\w*|median|mode|any_value|bool_and"
    r"|bool_or|every|some|any|count_if|max_by|min_by|product|skewness|kurtosis|corr|covar_\w+"
    r"|regr_\w+|array_agg|listagg|string_agg)\(", re.I)
_RANKING_CALL = re.compile(r"^(?:rank|dense_rank|percent_rank|cume_dist|row_number)\(", re.I)
#: Nodes whose Input is not their output: they add the columns they make (read from their children)
_ADDING_NODES = ("Window", "Generate", "BatchEvalPython", "ArrowEvalPython")
#: The Spark setting that bounds a plan's text (default: no bound)
MAX_PLAN_STRING_SETTING = "spark.sql.maxPlanStringLength"


@dataclasses.dataclass(slots=True)
class _Reading:
    """What the handlers build from one plan's nodes."""

    tree: PlanTree
    graph: ColumnGraph = dataclasses.field(default_factory=ColumnGraph)
    #: node -> its output ids (when its lists, or its kind, say them)
    outputs: dict[int, list[int]] = dataclasses.field(default_factory=dict)
    #: WriteFiles node (or write command without one) -> what it writes, in order: (column, id)
    written: dict[int, list[tuple[str, int]]] = dataclasses.field(default_factory=dict)
    #: (node, control ids, CONTROL_SUBTYPES member) for every column through the node
    scoped: list[tuple[int, list[int], str]] = dataclasses.field(default_factory=list)
    #: what handlers leave until every node is read: it needs their children's columns
    after: list[Callable[[], None]] = dataclasses.field(default_factory=list)

    def input_ids(self, number: int) -> list[int]:
        node = self.tree.by_number.get(number)
        return [a.id for a in node.input] if node is not None and node.input is not None else []

    def has_input(self, number: int) -> bool:
        node = self.tree.by_number.get(number)
        return node is not None and node.input is not None

    def node_output(self, number: int, depth: int = 0) -> list[int]:
        """The ids a node outputs: listed, else by what it does with its children's."""
        if self.outputs.get(number):
            return self.outputs[number]
        kids = self.tree.children.get(number, ())
        name = self.tree.label(number)
        if depth > 200:
            return self.input_ids(number)
        if "Join" in name and kids:
            if any(t in name for t in ("LeftSemi", "LeftAnti", "ExistenceJoin")):
                return self.node_output(kids[0], depth + 1)
            return [i for k in kids for i in self.node_output(k, depth + 1)]
        if name.startswith("Union") and kids:
            return self.node_output(kids[0], depth + 1)
        if name == "WithCTE" and kids:
            # the CTEs' definitions, then the query that uses them
            return self.node_output(kids[-1], depth + 1)
        if self.has_input(number) and not name.startswith(_ADDING_NODES):
            return self.input_ids(number)
        if kids:
            return self.node_output(kids[0], depth + 1)
        return self.input_ids(number)


# --- the handlers: one a node kind ----------------------------------------------------------------

def _define_columns(reading: _Reading, node: PlanNode) -> None:
    """The columns a node's lists define (Output, Results, Aggregate Attributes), and its output."""
    _define_items(reading.graph, node.defined)
    if node.output is not None:
        reading.outputs.setdefault(node.number, [column.id for column in node.output])
    if is_v2_write(node.label):
        reading.graph.store_assignment = True


def _command(reading: _Reading, node: PlanNode) -> None:
    assert isinstance(node.detail, Command)
    # Spark 3.0-3.3 (and 3.4+ with spark.sql.optimizer.plannedWrite.enabled=false) plan no
    # WriteFiles: a data-writing command's own Input is what it writes (with WriteFiles, the
    # command's Input is `[]`)
    if node.detail.written:
        reading.written[node.number] = [(a.name, a.id) for a in node.detail.written]
    _define_columns(reading, node)
    if node.label.startswith("Execute InsertInto") and first_backticked(node.detail.arguments) is not None:
        reading.graph.store_assignment = True


def _scan(reading: _Reading, node: PlanNode) -> None:
    assert isinstance(node.detail, Scan) and node.output is not None
    paths = tuple(location_paths(node.detail.location)[0]) if node.detail.location else ()
    source = ColumnSource(node.label.strip(), node.detail.table, paths, "")
    for column in node.output:
        reading.graph.origins.setdefault(column.id, dataclasses.replace(source, column=column.name))
        reading.graph.names.setdefault(column.id, column.name)
    reading.outputs[node.number] = [column.id for column in node.output]


def _write_files(reading: _Reading, node: PlanNode) -> None:
    reading.written[node.number] = [(a.name, a.id) for a in node.input or ()]


def _view(reading: _Reading, node: PlanNode) -> None:
    # A view used in the query, inlined: Spark casts its query's columns to the view's stored
    # types (a Project of `cast(x#21 as int) AS id#36` under it). That is not the user's
    # expression: a plain copy through it stays a copy.
    graph = reading.graph
    for child in node.children[:1]:
        for attr_id in reading.outputs.get(child, []):
            deps, expression = graph.defs.get(attr_id, ((), None))
            if expression is not None and len(deps) == 1 and VIEW_UPCAST.match(expression):
                graph.defs[attr_id] = (deps, None)


def _take_ordered(reading: _Reading, node: PlanNode) -> None:
    _define_columns(reading, node)
    if not isinstance(node.detail, TakeOrdered):
        return
    defined = _define_items(reading.graph, node.detail.project)
    if not node.detail.project_cut:   # a cut list is not the node's output
        reading.outputs[node.number] = defined
    reading.scoped.append((node.number, list(node.detail.order), SORT))


def _define_items(graph: ColumnGraph, columns: tuple[Column, ...]) -> list[int]:
    """Define each alias and aggregate result of an output list; its ids, in order."""
    for column in columns:
        if column.expression is not None:
            # a scalar subquery's value as a column (`scalar-subquery#128 [customer_id#37] AS
            # top#129`) is a copy of the subquery's output, as the join Spark plans for it
            copy = _SCALAR_SUBQUERY.fullmatch(without_outer_references(column.expression)) is not None
            graph.define(column.id, ids(column.expression), None if copy else column.expression)
        graph.names.setdefault(column.id, column.name)
    return [column.id for column in columns]


def _condition(subtype: str) -> Callable[[_Reading, PlanNode], None]:
    def handle(reading: _Reading, node: PlanNode) -> None:
        _define_columns(reading, node)
        assert isinstance(node.detail, Condition)
        reading.scoped.append((node.number, list(node.detail.controls) + cut_condition(node, node.detail.cut),
                               subtype))
    return handle


def _aggregate(reading: _Reading, node: PlanNode) -> None:
    _define_columns(reading, node)
    assert isinstance(node.detail, Aggregate)
    graph, keys = reading.graph, list(node.detail.keys)
    own = reading.outputs.get(node.number, [])
    graph.control(own + list(node.detail.aggregated or ()), keys, GROUP_BY)
    if node.detail.aggregated is not None:
        # the aggregate results (`sum(w#43)#50`; a partial aggregate's `sum#60` has no
        # definition and stands for nothing)
        graph.aggregates.update(i for i in node.detail.aggregated if i in graph.defs)
    else:
        # a logical Aggregate (a view's plan): a result, not a key, computed from more than the keys
        key_set = set(keys)
        graph.aggregates.update(i for i in own if i not in key_set and any(d not in key_set for d in graph.deps(i)))


def _global_sort(reading: _Reading, node: PlanNode) -> None:
    _define_columns(reading, node)
    assert isinstance(node.detail, Sort)
    reading.scoped.append((node.number, list(node.detail.order), SORT))


def _window(reading: _Reading, node: PlanNode) -> None:
    _define_columns(reading, node)
    assert isinstance(node.detail, Window)
    graph = reading.graph
    for function in node.detail.functions:
        # Spark prints a ranking function with its window's order as arguments (`rank(ts#5)`):
        # those columns order the rows (WINDOW), no value of theirs is in the result
        deps = [] if _RANKING_CALL.match(function.function.strip()) else ids(function.function)
        graph.define(function.id, deps, f"{function.function} OVER ({function.over})")
        graph.names.setdefault(function.id, function.name)
        graph.control([function.id], list(node.detail.spec), WINDOW)
        if _AGGREGATE_CALL.match(function.function.strip()):
            graph.aggregates.add(function.id)


def _expand(reading: _Reading, node: PlanNode) -> None:
    _define_columns(reading, node)
    if not isinstance(node.detail, Expand):
        return
    for attr_id, values in node.detail.outputs:
        deps = [i for v in values for i in ids(v)]
        # Spark cut the list of projections (30 count(distinct ...) make 30): a position with
        # no column in the projections shown is left to cut.cut_outputs
        if node.detail.projections_cut and not deps:
            continue
        plain = all(ATTR.fullmatch(v) or v == "null" or not ids(v) for v in values)
        reading.graph.define(attr_id, deps, None if plain else values[0])


def _made(reading: _Reading, node: PlanNode) -> None:
    """Each attribute from what its own expression reads (a generator, a UDF call)."""
    _define_columns(reading, node)
    if isinstance(node.detail, Made):
        for attr_id, expression in node.detail.results:
            reading.graph.define(attr_id, ids(expression), expression)


def _pandas_map(reading: _Reading, node: PlanNode) -> None:
    # Which column the Python function makes from which is in its code: every output is taken
    # as made from every column passed to it (as for TRANSFORM ... USING), the keys group the
    # rows, and the outputs are flagged (PANDAS_OUTPUT, see column_flows).
    _define_columns(reading, node)
    if not isinstance(node.detail, Made):
        return
    graph = reading.graph
    made = reading.outputs[node.number] = [attr_id for attr_id, _call in node.detail.results]
    for attr_id, call in node.detail.results:
        graph.define(attr_id, ids(call), call)
    graph.control(made, list(node.detail.keys), GROUP_BY)
    graph.python_outputs.update((i, node.label.split(" ", 1)[0]) for i in made)


def _script(reading: _Reading, node: PlanNode) -> None:
    _define_columns(reading, node)
    if not isinstance(node.detail, Made):
        return
    reading.outputs[node.number] = [attr_id for attr_id, _call in node.detail.results]
    for attr_id, call in node.detail.results:
        reading.graph.define(attr_id, [a.id for a in node.input or ()], call)


def _other(reading: _Reading, node: PlanNode) -> None:
    _define_columns(reading, node)
    if isinstance(node.detail, Aliases):
        _define_items(reading.graph, node.detail.columns)


def _union(reading: _Reading, node: PlanNode) -> None:
    _other(reading, node)
    kids = node.children
    if len(kids) < 2 or any(reading.tree.label(k).startswith("Execute ") for k in kids):
        return   # a multi-insert: a union of writes, each with its own columns

    def branches() -> None:
        # the first child's ids carry every child's column at the same position
        first = reading.node_output(kids[0])
        for other in kids[1:]:
            for position, attr_id in enumerate(reading.node_output(other)):
                if position < len(first) and first[position] != attr_id:
                    reading.graph.copies.setdefault(first[position], set()).add(attr_id)
    reading.after.append(branches)


def _distinct(reading: _Reading, node: PlanNode) -> None:
    _other(reading, node)
    if node.logical and node.children:
        def grouped() -> None:
            columns = reading.node_output(node.children[0])
            reading.graph.control(columns, columns, GROUP_BY)
        reading.after.append(grouped)


def _set_comparison(reading: _Reading, node: PlanNode) -> None:
    # INTERSECT / EXCEPT: the first side's rows that match (or not) the second's: both sides'
    # columns decide (JOIN, as the semi / anti join Spark plans); without ALL the rows are distinct
    _other(reading, node)
    if node.logical and len(node.children) == 2:
        def compared() -> None:
            left, right = (reading.node_output(k) for k in node.children)
            reading.graph.control(left, left + right, JOIN)
            if node.arguments.startswith("false"):
                reading.graph.control(left, left, GROUP_BY)
        reading.after.append(compared)


def _cte_reference(reading: _Reading, node: PlanNode) -> None:
    # `0, true, [customer_id#44, amount#45], ...`: the definition CTERelationDef 0's columns, by
    # position (a second reference has its own ids)
    _other(reading, node)
    cte = node.arguments.split(",", 1)[0].strip()
    definition = next((n.number for n in reading.tree.nodes if n.logical and n.name == "CTERelationDef"
                       and n.arguments.split(",", 1)[0].strip() == cte), None)
    if node.logical and node.output is not None and definition is not None:
        def copied() -> None:
            for attr_id, source in zip((c.id for c in node.output or ()), reading.node_output(definition), strict=False):
                if attr_id != source:
                    reading.graph.define(attr_id, [source], None)
        reading.after.append(copied)


_HANDLERS: Mapping[Kind, Callable[[_Reading, PlanNode], None]] = {
    Kind.COMMAND: _command, Kind.SCAN: _scan, Kind.WRITE_FILES: _write_files,
    Kind.VIEW_COMMAND: lambda reading, node: None, Kind.VIEW: _view, Kind.TAKE_ORDERED: _take_ordered,
    Kind.FILTER: _condition(FILTER), Kind.JOIN: _condition(JOIN), Kind.AGGREGATE: _aggregate,
    Kind.GLOBAL_SORT: _global_sort, Kind.WINDOW: _window, Kind.GENERATE: _made, Kind.EXPAND: _expand,
    Kind.EVAL_PYTHON: _made, Kind.PANDAS_MAP: _pandas_map, Kind.SCRIPT: _script, Kind.UNION: _union,
    Kind.DISTINCT: _distinct, Kind.SET_COMPARISON: _set_comparison, Kind.CTE_REFERENCE: _cte_reference,
    Kind.OTHER: _other,
}


# --- the plan --------------------------------------------------------------------------------------

def column_flows(description: str, *, parse: Callable[[str], PlanTree] = parse_description) -> tuple[ColumnFlow, ...]:
    """Column-level flows of the write in one formatted plan; () when it writes nothing. The
    plan is read with `parse` (tree.PlanTrees.parse: the tree plan_io may have read already).

    Raises PlanTooLarge for a description longer than MAX_PLAN_CHARS.
    """
    if len(description) > MAX_PLAN_CHARS:
        raise PlanTooLarge(f"physicalPlanDescription of {len(description)} characters "
                           f"(more than {MAX_PLAN_CHARS}) not read for column lineage")
    tree = parse(description)
    truncated = PLAN_TRUNCATED.search(description[-100:])
    if truncated and tree.views:
        # The view's plan is the end of the text: what Spark left of it would give wrong columns.
        return (ColumnFlow("", frozenset(), None, incomplete=(
            f"plan text truncated by Spark ({truncated.group(1)} more characters; raise {MAX_PLAN_STRING_SETTING}): "
            "the view's query is not all in the log")),)
    reading = _Reading(tree)
    for node in tree.nodes:
        _HANDLERS[node.kind](reading, node)
    view = tree.views[0].number if tree.views else None
    if view is not None and not reading.written and tree.children.get(view):
        # A view's columns are its query's output, in order, under the names the statement gave.
        found = reading.node_output(tree.children[view][0])
        names = view_columns(tree.views[-1].arguments)
        labels = names if names and len(names) == len(found) else [reading.graph.names.get(i, "") for i in found]
        reading.written[view] = list(zip(labels, found))
    _through_the_tree(reading)
    unknown, unnamed = _unknown(reading, description)
    if reading.graph.store_assignment:
        for columns in reading.written.values():
            for _target, attr_id in columns:
                strip_store_assignment_cast(attr_id, reading.graph)
    return _flows(reading, unknown) + unnamed


def _through_the_tree(reading: _Reading) -> None:
    """What needs every node read: what the handlers left (Union branches, ...), the columns
    through a filter or join, subqueries."""
    tree, graph = reading.tree, reading.graph
    for step in reading.after:
        step()
    if tree.subplans:
        _subquery_joins(reading)
    # Controls of filters and joins apply to every column going through the node.
    for number, by, subtype in reading.scoped:
        kids = tree.children.get(number, ())
        through = [i for k in kids for i in reading.node_output(k)] if kids else reading.input_ids(number)
        graph.control(through or reading.input_ids(number), by, subtype)
    # Scalar subqueries: the subquery's expression id stands for its plan's output.
    for expr_id, root in tree.subquery_roots.items():
        graph.define(expr_id, reading.node_output(root), None)
    _subqueries(reading)


#: a scalar subquery expression (outer references left out)
_SCALAR_SUBQUERY = re.compile(r"scalar-subquery#\d+")
#: a predicate subquery in a logical condition: `customer_id#37 IN (list#62 [])`, `exists#51`
_IN_SUBQUERY = re.compile(r" IN \(list#(\d+)\b")
_EXISTS = re.compile(r"\bexists#(\d+)\b")
#: a reference to the outer query's column inside a subquery's plan: `outer(customer_id#37)`
_OUTER = "outer("


def _subquery_joins(reading: _Reading) -> None:
    """A logical plan's subqueries (a view's), controlling rows as the joins Spark's optimiser
    makes of them, so a view has the controls a CTAS of the same query has: an IN / NOT IN
    (`x IN (list#62 [])`) and an EXISTS / NOT EXISTS are a semi / anti join: the compared
    columns (the IN's value and the subquery's output) are JOIN, not FILTER, controls of the
    rows through the node that holds them; a correlated subquery's conditions on the outer
    query's columns (`customer_id#41 = outer(customer_id#37)`) are its join condition: JOIN
    for both sides, no longer FILTER inside the subquery; a correlated scalar subquery is an
    aggregate grouped by its correlated columns (GROUP_BY of its value) joined to the outer
    rows. The subquery's other conditions still FILTER. Rewrites `reading.scoped` before it is
    applied."""
    tree, graph = reading.tree, reading.graph
    by_node: dict[int, list[int]] = {}
    for index, (number, _by, subtype) in enumerate(reading.scoped):
        if subtype == FILTER:
            by_node.setdefault(number, []).append(index)
    for host, plans in tree.subplans.items():
        node = tree.by_number.get(host)
        if node is None:
            continue
        text = without_outer_references(node.arguments)
        refs = list(dict.fromkeys(SUBQUERY_REF.findall(node.arguments)))
        joined: list[int] = []
        spans: list[tuple[int, int]] = []
        for found in _IN_SUBQUERY.finditer(text):
            start = _operand_start(text, found.start())
            end = closing(text, found.start() + 4)
            joined += ids(text[start:found.start()]) + [int(found.group(1))]
            spans.append((start, end + 1 if end >= 0 else found.end()))
        for found in _EXISTS.finditer(text):
            joined.append(int(found.group(1)))
            spans.append(found.span())
        for expr_id, root in zip((int(r) for r in refs), plans, strict=False):
            correlated, inner = _correlation(reading, root)
            joined += correlated
            if correlated and re.search(rf"\bscalar-subquery#{expr_id}\b", text):
                # the join's keys are the aggregate's grouping columns: grouped themselves
                graph.control([expr_id, *inner], inner, GROUP_BY)
                graph.control([expr_id], correlated, JOIN)
        if not joined:
            continue
        if spans and host in by_node:
            residual, last = [], 0
            for start, end in sorted(spans):
                residual.append(text[last:start])
                last = max(last, end)
            residual.append(text[last:])
            kept = ids(" ".join(residual))
            for index in by_node[host]:
                number, _by, subtype = reading.scoped[index]
                reading.scoped[index] = (number, kept, subtype)
        reading.scoped.append((host, list(dict.fromkeys(joined)), JOIN))


def _correlation(reading: _Reading, root: int) -> tuple[list[int], list[int]]:
    """The ids of a subquery's conditions on the outer query's columns (both sides) and those
    of its own columns among them; those conditions leave the subquery's filters."""
    tree = reading.tree
    correlated: list[int] = []
    inner: list[int] = []
    inside = set(_subtree(tree, root))
    for index, (number, _by, subtype) in enumerate(reading.scoped):
        node = tree.by_number.get(number)
        if number not in inside or subtype != FILTER or node is None or _OUTER not in node.arguments:
            continue
        kept: list[int] = []
        for conjunct in _conjuncts(node.arguments):
            if _OUTER in conjunct:
                correlated += ids(conjunct)
                inner += ids(re.sub(r"outer\([^()]*\)", "", conjunct))
            else:
                kept += ids(conjunct)
        reading.scoped[index] = (number, kept, subtype)
    return list(dict.fromkeys(correlated)), list(dict.fromkeys(inner))


def _conjuncts(condition: str) -> list[str]:
    """The parts of a condition joined by AND at its top level: `((a#1 = outer(b#2)) AND (c#3 > 10))`."""
    text = condition.strip()
    while text.startswith("(") and closing(text, 0) == len(text) - 1:
        text = text[1:-1].strip()
    parts, depth, last = [], 0, 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith(" AND ", index):
            parts.append(text[last:index])
            last = index + 5
    parts.append(text[last:])
    return [p for part in parts for p in (_conjuncts(part) if part.strip() != text else [part])]


def _operand_start(text: str, end: int) -> int:
    """Where the operand ending at `end` starts: a bracketed expression (with the function name
    before it) or a reference."""
    index = end
    if index > 0 and text[index - 1] in ")]":
        depth = 0
        while index > 0:
            index -= 1
            if text[index] in ")]":
                depth += 1
            elif text[index] in "([":
                depth -= 1
                if depth == 0:
                    break
    while index > 0 and not text[index - 1].isspace() and text[index - 1] not in "(,":
        index -= 1
    return index


def _subtree(tree: PlanTree, root: int) -> list[int]:
    """The nodes of the plan under `root` (its subqueries' plans included)."""
    found, stack = [], [root]
    while stack:
        number = stack.pop()
        if number not in found:
            found.append(number)
            stack.extend((*tree.children.get(number, ()), *tree.subplans.get(number, ())))
    return found


def _subqueries(reading: _Reading) -> None:
    """A logical plan's subquery expressions (`list#90`, `exists#91`, `scalar-subquery#97`)
    stand for their plans' output; what filters or joins a subquery's rows controls its value
    (an EXISTS, a count)."""
    tree, graph = reading.tree, reading.graph
    scoped: dict[int, list[tuple[list[int], str]]] = {}
    for number, by, subtype in reading.scoped:
        scoped.setdefault(number, []).append((by, subtype))
    for number, plans in tree.subplans.items():
        node = tree.by_number.get(number)
        refs = list(dict.fromkeys(int(i) for i in SUBQUERY_REF.findall(node.arguments))) if node else []
        for expr_id, root in zip(refs, plans, strict=False):
            graph.define(expr_id, reading.node_output(root), None)
            for inside in _subtree(tree, root):
                for by, subtype in scoped.get(inside, ()):
                    graph.control([expr_id], by, subtype)


def _unknown(reading: _Reading, description: str) -> tuple[dict[int, str], tuple[ColumnFlow, ...]]:
    """The ids the plan does not say how are made (id -> label, see cut.why_incomplete), and a
    target-less flow for a view's columns the log does not even name."""
    tree, graph = reading.tree, reading.graph
    unknown = cut_outputs(tree, reading.outputs, graph) if any(n.arguments_cut for n in tree.nodes) else {}
    for number, by, _subtype in reading.scoped:
        if by and by[-1] == -number:   # a condition Spark cut (cut.cut_condition)
            unknown[-number] = tree.label(number).split(" ", 1)[0] + CONDITION
    for attr_id, node_name in graph.python_outputs.items():
        unknown.setdefault(attr_id, node_name + PANDAS_OUTPUT)
    if CUT_LIST in description:
        # any other expression with a list Spark cut inside it (a node this module reads in
        # full, but whose expression prints a cut argument list): its column may miss sources
        for attr_id, (_deps, expression) in graph.defs.items():
            if attr_id not in unknown and expression and CUT_LIST in expression:
                unknown[attr_id] = EXPRESSION
    cut_lists = {n.number: n.hidden_columns for n in tree.nodes if n.hidden_columns is not None}
    unnamed: tuple[ColumnFlow, ...] = ()
    if cut_lists:
        scans = {n: hidden for n, hidden in cut_lists.items() if tree.label(n).startswith("Scan ")}
        if scans:
            unknown.update(cut_logical_scans(scans, tree, graph, unknown))
        view = tree.views[0].number if tree.views else None
        if view is not None and view in reading.written:
            # The view's own columns past the cut: not even their names are in the log.
            top = tree.children[view][0]
            while top not in reading.outputs and tree.children.get(top):
                top = tree.children[top][0]
            if top in cut_lists and not tree.label(top).startswith("Scan "):
                unnamed = (ColumnFlow("", frozenset(), None, frozenset(), None, (
                    f"{tree.label(top).split(' ', 1)[0]} arguments cut by Spark: "
                    f"{cut_lists[top]} more columns, not named in the log")),)
    return unknown, unnamed


def _flows(reading: _Reading, unknown: Mapping[int, str]) -> tuple[ColumnFlow, ...]:
    """One flow a written column of a write. An AQE description lists the final and the
    initial plan: their WriteFiles write the same ids to the same dataset, and are read once."""
    tree, graph = reading.tree, reading.graph
    flows: dict[tuple[Write | None, str, int], ColumnFlow] = {}
    for number, columns in reading.written.items():
        command = number if tree.command_arguments(number) is not None else tree.parents.get(number)
        write = _command_write(tree, command) if command is not None else None
        for target, attr_id in columns:
            if (write, target, attr_id) in flows:
                continue
            sources, expression = resolve(attr_id, graph)
            # A control is kept when the same column also flows as data (a join key copied to
            # the output): both facts are true.
            controls = resolve_controls(attr_id, graph)
            subtypes = data_subtypes(attr_id, graph)
            flows[(write, target, attr_id)] = ColumnFlow(
                target, frozenset(sources),
                render(expression, graph, sources) if expression is not None else None,
                frozenset(controls), write, why_incomplete(unknown_on_path(attr_id, graph, unknown)) if unknown else None,
                tuple(sorted((s, subtypes.get(s, TRANSFORMATION)) for s in sources)),
                tuple(sorted((s, frozenset(controls[s])) for s in controls)))
    return tuple(flows.values())


def _command_write(tree: PlanTree, command: int) -> Write | None:
    """The dataset a write command writes; None when the command is not read here or its
    arguments are not as expected (plan_io reports that node; the caller gives such columns to
    the execution's one written table only when they are the plan's only ones)."""
    try:
        found = command_writes(tree.label(command), tree.command_arguments(command) or "")
    except PlanError:
        return None
    return found[0] if len(found) == 1 else None

