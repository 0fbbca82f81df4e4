"""Argument lists cut by Spark, and the columns they leave unknown.

Spark prints at most spark.sql.debug.maxToStringFields (25) items of a list in a node's
`Arguments:` and ends it with `... N more fields`; `Output`/`Input` lists are printed whole.
Where a node defines columns in its arguments (Window expressions, Expand projections,
BatchEvalPython UDFs, TakeOrderedAndProject's project list, Generate), the columns past the cut
are known only as ids in its parent's `Input` (the sparkPlanInfo tree and the AQE re-plans
print the same cut lists). What the plan still tells is recovered:
- Expand (ROLLUP/CUBE/GROUPING SETS, count(distinct ...)): an output id that is not one of its
  inputs copies the input column it is named after (`g#319` is `g#163`'s grouping copy;
  `spark_catalog.db.t.c#502` is `c#189`'s distinct copy), and `spark_grouping_id` / `gid` are
  literals per projection (Spark's own, no column);
- Window: a window column past the cut is still partitioned and ordered by the window's spec;
- a view's analysed plan (logical nodes, all in `Arguments`): a LogicalRelation /
  HiveTableRelation column past the cut is an id the plan uses that nothing defines; with one
  cut scan it is that scan's column, named as the plan references it (`(c22#187 + 1)`). The
  view's own columns past a cut Project / Aggregate list are not even named in the log: one
  ColumnFlow without a target says how many (`incomplete`), the caller names the view.
Every other id past a cut (a window function's or a UDF's arguments, an alias in a cut project
list), and every id defined from an expression that is itself cut (`inline(array(struct(c0#1,
... 35 more fields)))` in Generate's arguments; `concat_ws(,, c0#1, ... 6 more fields)` even in
a Project's Output), is unknown: a written column that depends on one is flagged
`ColumnFlow.incomplete` (with the sources the text did show). A Filter or join condition Spark
cut controls every column through it with columns the text does not show: those columns are
flagged too (`CONDITION`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from .graph import ColumnGraph
from .model import WINDOW, ColumnSource
from .text import CUT_LIST, REF_TOKEN
from .nodes import PlanNode, Window
from .tree import PlanTree

#: the label of a cut condition's unknown controls (see `cut_condition`)
CONDITION = " condition"
#: the label of a column a pandas / Arrow UDF made (PANDAS_NODES); in ColumnFlow.incomplete the
#: why starts with PANDAS_OUTPUT_WHY
PANDAS_OUTPUT = " output"
PANDAS_OUTPUT_WHY = "pandas UDF output"
#: the label of an id defined from an expression Spark cut inside a list the node is read in full
EXPRESSION = "expression"
#: Expand outputs that Spark fills with a literal in every projection (grouping ids)
_EXPAND_LITERALS = ("spark_grouping_id", "gid")


def cut_condition(node: PlanNode, cut: bool) -> list[int]:
    """[-node] when Spark cut a list inside the node's condition (`greatest(c0#1, ..., ... 5 more
    fields) > 5`): the columns past the cut control the rows too, and are not in the text. The
    negative id stands for them: a control of every column through the node, with no source,
    that column lineage names as unknown (`<Node> condition`)."""
    return [-node.number] if cut else []


def cut_outputs(tree: PlanTree, outputs: Mapping[int, list[int]], graph: ColumnGraph) -> dict[int, str]:
    """The ids that nodes with cut arguments output without the plan saying how they are made
    (id -> the node's name), after recovering what can be (see above)."""
    unknown: dict[int, str] = {}
    for node in dict((n.number, n) for n in tree.nodes if n.arguments_cut).values():
        name = node.label
        parent = tree.parents.get(node.number)
        if parent is None:
            continue
        shown = tree.by_number[parent].input if parent in tree.by_number else None
        named = [(a.id, a.name) for a in shown or ()]
        if not named:
            named = [(i, graph.names.get(i, "")) for i in outputs.get(parent, [])]
        by_name: dict[str, list[int]] = {}
        for attribute in node.input or ():
            by_name.setdefault(attribute.name, []).append(attribute.id)
        input_ids = {attribute.id for attribute in node.input or ()}
        for attr_id, label in named:
            if attr_id in graph.defs and CUT_LIST in (graph.defs[attr_id][1] or ""):
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
                graph.control([attr_id], list(node.detail.spec) if isinstance(node.detail, Window) else [], WINDOW)
            unknown[attr_id] = name.split(" ", 1)[0]
    return unknown


def cut_logical_scans(scans: Mapping[int, int], tree: PlanTree, graph: ColumnGraph,
                      known: Mapping[int, str]) -> dict[int, str]:
    """Columns of logical scans (a view's analysed plan: `LogicalRelation` / `HiveTableRelation`
    print their columns in their arguments) past the cut (scan -> how many): an id the plan
    uses but nothing defines (and no other cut node outputs, `known`) is one of them. With one
    such scan it is that scan's column, named as the plan references it (`(c22#187 + 1)`:
    `c22`), when its id follows the scan's last one shown within the count cut (Spark numbers a
    relation's columns in a row); else which column it is is not known: unknown."""
    referenced: dict[int, str | None] = {}
    for deps, expression in list(graph.defs.values()):
        named = {int(m.group(2)): m.group(1) for m in REF_TOKEN.finditer(expression or "")}
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
        shown = sorted((i, o) for i, o in graph.origins.items() if o.scan == tree.label(scan))
    # `Scan LogicalRelation spark_catalog.db.t` (see tree._logical_fields): the logical node's name
    kind = tree.label(next(iter(scans))).split(" ")[1] if len(scans) == 1 else "LogicalRelation"
    unknown: dict[int, str] = {}
    for attr_id, column in referenced.items():
        if shown and column and shown[-1][0] < attr_id <= shown[-1][0] + hidden:
            graph.origins[attr_id] = dataclasses.replace(shown[0][1], column=column)
            graph.names.setdefault(attr_id, column)
        else:
            unknown[attr_id] = kind
    return unknown


def why_incomplete(labels: Iterable[str]) -> str | None:
    """Why a column's sources are incomplete, from the labels of the unknown ids it is computed
    or controlled from; None when there are none."""
    found = set(labels)
    if not found:
        return None
    conditions = sorted(f for f in found if f.endswith(CONDITION))
    python = sorted(f.removesuffix(PANDAS_OUTPUT) for f in found if f.endswith(PANDAS_OUTPUT))
    found -= set(conditions) | {p + PANDAS_OUTPUT for p in python}
    why = []
    if python:
        why.append(f"{PANDAS_OUTPUT_WHY} ({', '.join(python)}): taken as made from every column the Python "
                   "function reads")
    if found == {EXPRESSION}:
        why.append("expression cut by Spark")
    elif found:
        why.append(", ".join(sorted(found - {EXPRESSION})) + " arguments cut by Spark")
    if conditions:
        why.append(", ".join(conditions) + " cut by Spark: it may hide controls")
    return "; ".join(why)
