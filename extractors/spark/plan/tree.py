"""Step one of reading a Spark plan: its text as a typed tree. Pure.

Two inputs, two trees:

- the `sparkPlanInfo` object of SparkListenerSQLExecutionStart / SparkListenerSQLAdaptiveExecutionUpdate
  (nodeName, simpleString, metadata, children) -> the `InfoNode`s table I/O reads (`info_nodes`);
- the `physicalPlanDescription` text (Spark's formatted explain: a tree of `Name (n)` lines,
  then one `(n) Name` section of `Key: value` fields per node, then each subquery's tree and
  sections) -> a `PlanTree` of `PlanNode`s (`parse_description`), what column lineage reads and
  where table I/O finds the targets the object does not name (CTAS, views, Delta commands).

Each section becomes a `PlanNode` (nodes.py), typed by what it does to columns.

Spark prints a value as it is, line breaks included (a view's SQL text over several lines): a
line of a section that is no `Key: value` field goes on the field before it. It prints a node's
inner children two levels below it, before its children: a command's query (a child here) and
the plans of the subqueries a logical node's expressions hold (`PlanTree.subplans`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from .model import PlanError
from .nodes import Command, Kind, Lists, PlanNode, read_logical_node, read_node
from .text import CUT_LIST, PLAN_ID

#: Commands that define a view from an analysed (logical) plan, their only child:
#: `CreateViewCommand` `` `spark_catalog`.`db`.`v`, [(col,None), ...], <text>, <allowExisting>,
#: <replace>, PersistedView, ... `` (the column list only when the statement names the columns;
#: LocalTempView / GlobalTempView for temporary views, whose name is a single part) and
#: `AlterViewAsCommand` `` `spark_catalog`.`db`.`v`, <text>, <isAnalyzed> ``.
VIEW_COMMANDS = ("CreateViewCommand", "AlterViewAsCommand")


# --- the sparkPlanInfo tree ----------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class InfoNode:
    """A node of the sparkPlanInfo tree (its children are not kept: see info_nodes)."""

    name: str
    #: its simpleString after the name ("" when the simpleString does not start with the name)
    arguments: str
    #: metadata `Location` (a file scan's `InMemoryFileIndex(N paths)[...]`), None when absent
    location: str | None


def info_nodes(root: Mapping[str, Any], prefixes: tuple[str, ...]) -> list[InfoNode]:
    """The nodes of a sparkPlanInfo object whose name starts with one of `prefixes`, depth
    first, parents before children, in order. Raises PlanError for a node whose children are
    not a list (the first one met depth first, the last child first); children that are not
    objects are left out. Without recursion: JSON nests deeper than Python's call stack.

    Only the nodes asked for are made into InfoNodes (most of a plan, Project, Filter,
    Exchange, ..., is of no interest to the caller), and all of the tree is checked before any
    is returned."""
    # First the check, in the order the children are met when the last one is taken first,
    # keeping each node's children; then the nodes, parents first, in order.
    children: dict[int, list[Mapping[str, Any]]] = {}
    stack: list[Mapping[str, Any]] = [root]
    while stack:
        node = stack.pop()
        kids = children[id(node)] = _info_children(node)
        stack.extend(kids)
    found: list[InfoNode] = []
    stack = [root]
    while stack:
        node = stack.pop()
        name = str(node.get("nodeName", ""))
        if name.startswith(prefixes):
            simple = str(node.get("simpleString", ""))
            metadata = node.get("metadata") or {}
            location = metadata.get("Location") if isinstance(metadata, Mapping) else None
            found.append(InfoNode(name, simple[len(name):].strip() if simple.startswith(name) else "",
                                  str(location) if location else None))
        stack.extend(reversed(children[id(node)]))
    return found


def _info_children(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    children = node.get("children")
    if not children:
        return []
    if not isinstance(children, list):
        # JSON gives a list or nothing else: a true, a number or an object here is a broken node
        raise PlanError(f"plan node {str(node.get('nodeName', ''))[:100]!r}: children is not a list")
    # `type(c) is dict` first: JSON objects are dicts, and the Mapping test is slower
    return [c for c in children if type(c) is dict or isinstance(c, Mapping)]


@dataclasses.dataclass(frozen=True, slots=True)
class PlanTree:
    #: one node a section, in the order the description details them
    nodes: tuple[PlanNode, ...]
    #: node number -> its node (the last section of that number)
    by_number: Mapping[int, PlanNode]
    #: node number -> the numbers of its children, in order
    children: Mapping[int, tuple[int, ...]]
    #: node number -> its parent (the last tree line naming it as a child)
    parents: Mapping[int, int]
    #: a scalar subquery's expression id -> the root node of its plan (a physical plan's
    #: subqueries, detailed after the main plan)
    subquery_roots: Mapping[int, int]
    #: node number -> the root nodes of the plans of the subqueries its expressions hold, in
    #: order (a logical plan's: `Filter customer_id#48 IN (list#90 [])` over its own child)
    subplans: Mapping[int, tuple[int, ...]]
    #: the view commands (VIEW_COMMANDS), in order: the first one's logical plan is the view's
    views: tuple[PlanNode, ...]

    def label(self, number: int) -> str:
        node = self.by_number.get(number)
        return node.label if node is not None else ""

    def command_arguments(self, number: int) -> str | None:
        """A COMMAND node's arguments; None for a node of another kind."""
        node = self.by_number.get(number)
        return node.detail.arguments if node is not None and isinstance(node.detail, Command) else None


_SECTION = re.compile(r"^\((\d+)\) (.+?)(?: \[codegen id : \d+\])?\s*$")
_COUNT_SUFFIX = re.compile(r"\s*\[\d+\]$")
#: the name of a section's field (`Output`, `Join condition`, `Aggregate Attributes`; its count
#: suffix ` [3]` taken off)
#: how much deeper than its parent an inner child is printed (Spark's depth + 2)
_INNER_INDENT = 6
#: A subquery expression in a logical plan: `list#90 []` (IN), `exists#91 [customer_id#48]`,
#: `scalar-subquery#97 []`, `lateral-subquery#5 []`
SUBQUERY_REF = re.compile(r"\b(?:list|exists|scalar-subquery|lateral-subquery)#(\d+)")
_FIELD_KEY = re.compile(r"^[A-Z][A-Za-z]*(?: [A-Za-z]+)*$")
_TREE_LINE = re.compile(r"^(?P<lead>[ :|+\-]*?)(?P<marker>[+:]- )?(?:\* )?(?P<name>[A-Za-z=].*?)"
                        r"(?: \((?P<num>\d+)\))?(?:, .*)?$")
_SUBQUERY = re.compile(r"^Subquery:\d+ Hosting operator id = \d+ Hosting Expression = (?!ReusedSubquery)"
                       r".*?\b(?:subquery|scalar-subquery)#(\d+)")


def parse_description(description: str) -> PlanTree:
    """A physicalPlanDescription as a PlanTree. Raises PlanError for a logical relation whose
    table identifier is broken."""
    sections: list[tuple[int, str, dict[str, str]]] = []
    children: dict[int, list[int]] = {}
    inner: set[tuple[int, int]] = set()       # (parent, child) printed as an inner child
    pending_subqueries: list[int] = []        # subquery expression ids waiting for their plan root
    subquery_roots: dict[int, int] = {}
    stack: list[tuple[int, int | None]] = []  # tree parsing: (column, node number or None)
    section: tuple[int, str, dict[str, str]] | None = None
    last = ""                                 # the field a line that is not one goes on
    # Lines end at "\n" only. The cheap tests before each regex (a header starts with "(", a
    # count suffix ends with "]", a plan id contains "[id=#") skip the regexes on the lines
    # they cannot match.
    for line in description.split("\n"):
        if not line or line.isspace():
            continue
        header = _SECTION.match(line) if line[0] == "(" else None
        if header:
            section = (int(header.group(1)), header.group(2), {})
            sections.append(section)
            continue
        if line.startswith(("== ", "===== ", "Subquery:")):
            # `Subquery:1 Hosting operator id = 3 Hosting Expression = Subquery subquery#68, ...`
            # then the subquery's own tree and sections
            section, stack = None, []
            subquery = _SUBQUERY.match(line)
            if subquery:
                pending_subqueries.append(int(subquery.group(1)))
            continue
        if section is None:
            _tree_line(line, stack, children, inner, pending_subqueries, subquery_roots)
            continue
        key, sep, value = line.partition(":")
        if sep and key and not key.startswith(" "):
            key = key.strip()
            if key.endswith("]"):
                key = _COUNT_SUFFIX.sub("", key)
        if sep and _FIELD_KEY.match(key):
            value = value.strip()
            if "[id=#" in value:
                value = PLAN_ID.sub("", value)
            section[2][key] = value
            last = key
        elif section[2]:
            # Spark prints a value holding line breaks as it is (a view's SQL text, a string
            # literal): the line goes on the field before it
            section[2][last] += "\n" + (PLAN_ID.sub("", line) if "[id=#" in line else line).rstrip()
    subplans = _subplans(sections, children, inner)
    lists = Lists()
    nodes: list[PlanNode] = []
    views: list[PlanNode] = []
    for number, name, fields in sections:
        kids = tuple(children.get(number, ()))
        arguments = fields.get("Arguments", "")
        cut = CUT_LIST in arguments and not name.startswith("Execute ")
        if name in VIEW_COMMANDS:
            # its analysed plan follows: logical nodes, each described by its Arguments only
            node = PlanNode(number, name, name, Kind.VIEW_COMMAND, arguments, kids, None, None, (), None,
                            arguments_cut=cut)
            views.append(node)
        elif views:
            node = read_logical_node(number, name, arguments, kids, cut, lists)
        else:
            node = read_node(number, name, name, fields, arguments, kids, lists, arguments_cut=cut)
        nodes.append(node)
    return PlanTree(tuple(nodes), {node.number: node for node in nodes},
                    {number: tuple(kids) for number, kids in children.items()},
                    {kid: number for number, kids in children.items() for kid in kids},
                    subquery_roots, subplans, tuple(views))


class PlanTrees:
    """The trees of the last few plan texts parsed (`parse`), one such cache an application
    (events.ApplicationProcessor). An execution's description is parsed when its plan event
    comes, for the datasets a CTAS, a view or a directory write names (tables.plan_io), and
    again when it ends, for its column lineage (columns.column_flows), with only a few other
    executions' plans between: the second parse is this cache's. Bounded by count and by the
    texts' length (an application's processor lives as long as its log is read, for months in a
    Thrift Server's case): a tree is dropped once `size` other texts were parsed since it was
    last asked for, or to keep the texts under `max_chars` in all; a longer text is not kept. A
    text that does not parse raises each time (nothing is kept of it)."""

    __slots__ = ("_size", "_max_chars", "_chars", "_trees")

    def __init__(self, size: int = 4, max_chars: int = 1 << 20) -> None:
        if size < 1:
            raise ValueError(f"PlanTrees size must be at least 1, not {size}")
        self._size = size
        self._max_chars = max_chars
        self._chars = 0
        #: text -> its tree, the least recently asked for first
        self._trees: dict[str, PlanTree] = {}

    def parse(self, description: str) -> PlanTree:
        """parse_description(description), the tree shared with earlier callers of the same text
        (a PlanTree is not changed by its readers)."""
        if not isinstance(description, str):
            return parse_description(description)   # a broken event's: fails as it would have
        tree = self._trees.pop(description, None)
        if tree is None:
            tree = parse_description(description)
            if len(description) > self._max_chars:
                return tree
            self._chars += len(description)
            while len(self._trees) >= self._size or self._chars > self._max_chars:
                oldest = next(iter(self._trees))
                del self._trees[oldest]
                self._chars -= len(oldest)
        self._trees[description] = tree
        return tree

    def __len__(self) -> int:
        return len(self._trees)


def _subplans(sections: list[tuple[int, str, dict[str, str]]], children: dict[int, list[int]],
              inner: set[tuple[int, int]]) -> dict[int, tuple[int, ...]]:
    """Node -> the plans of the subqueries its expressions hold (a logical plan's: `Filter`
    `customer_id#48 IN (list#90 [])` has the plan of `list#90` as an inner child, before its own
    child), taken out of its children. A command's inner child is its query: a child."""
    found: dict[int, tuple[int, ...]] = {}
    for number, _name, fields in sections:
        kids = children.get(number, [])
        plans = [kid for kid in kids if (number, kid) in inner]
        if plans and SUBQUERY_REF.search(fields.get("Arguments", "")):
            found[number] = tuple(plans)
            children[number] = [kid for kid in kids if (number, kid) not in inner]
    return found


def _tree_line(line: str, stack: list[tuple[int, int | None]], children: dict[int, list[int]],
               inner: set[tuple[int, int]], pending_subqueries: list[int], subquery_roots: dict[int, int]) -> None:
    """One line of the plan tree: link the node to its parent (the node whose name starts at
    the column of this line's `+-`/`:-` marker, or three columns before it for an inner child:
    a command's plan, the plan of a subquery an expression holds)."""
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
        parent, at = next(((n, c) for c, n in reversed(stack) if n is not None and c < column), (None, 0))
        if parent is not None and number is not None:
            kids = children.setdefault(parent, [])
            if number not in kids:
                kids.append(number)
            if column - at == _INNER_INDENT:
                inner.add((parent, number))
    elif number is not None and pending_subqueries:
        subquery_roots[pending_subqueries.pop()] = number
    stack.append((column, number))
