"""Column lineage from Spark plans: extractors/spark/plan/ `column_flows` and the FIELD-level
DATA_FLOW / CONTROL_FLOW records extractors/spark/events.py makes of it.

Two layers, both on real PySpark 4.3 event logs (tests/fixtures/spark_events/*.jsonl, captured by
capture.py there):

- `PLAN_CASES`: table-driven, one row per captured plan shape, the exact `column_flows` result
  of that execution's plan (the last one, i.e. the AQE final plan): every written column with its
  sources and how each flows (IDENTITY, TRANSFORMATION, AGGREGATION), its expression (None =
  copied or renamed, SIMPLE) and its control columns with how each controls it (FILTER, JOIN,
  GROUP_BY, SORT, WINDOW, CONDITIONAL).
- `<case>.columns.json`: per fixture, the column edges in the records (every written catalog
  column, its DATA_FLOW sources with dependency type, subtype and expression, its CONTROL_FLOW
  sources with their subtypes),
  reviewed by hand. Regenerate with NAVD_UPDATE_GOLDEN=1 and read the diff.

Decisions these tests pin down (see plan/columns.py):
- grouping keys are CONTROL_FLOW (GROUP_BY) sources of every output column, the one that copies
  them included, which also has them as a SIMPLE DATA_FLOW source: a column used both ways keeps
  both edges (join keys, filter, sort and window columns alike);
- a CASE WHEN / if() condition's columns are CONDITIONAL controls of the result, not data
  sources (unless also in a branch value); a ranking function (`rank()`) has no data source, its
  window's columns are WINDOW controls;
- filter conditions and join keys/conditions control every column going through the
  filter/join (a filter below one side of a join reaches the other side's columns through the
  join keys); window partition/order columns control the window's column only; global sorts
  (ORDER BY) control every column; local sorts and exchanges are ignored;
- a written directory gets FIELD children named from the output schema and the column edges, and
  a path scan takes its sources from the same FIELDs (path -> path -> table is one column walk).
"""

from __future__ import annotations

import json
import random
import time
import tracemalloc
from typing import Any

import pytest

from navd.extractors.spark.events import ApplicationProcessor
from navd.extractors.spark.records import process_lines, records, stubs_for
from navd.extractors.spark.plan.columns import column_flows
from navd.extractors.spark.plan.model import (
    MAX_EXPRESSION_CHARS,
    MAX_PLAN_CHARS,
    CONTROL_SUBTYPES,
    ColumnFlow,
    ColumnSource,
    PlanError,
    PlanTooLarge,
)
from navd.extractors.spark.plan.tables import plan_io
from navd.extractors.spark.plan.text import branch_ids, split_list, unwrap_char_varchar
from navd.extractors.spark.plan.tree import PlanTrees, parse_description
from navd.lineage.memory_store import MemoryLineageStore
from navd.lineage.rules import LineageOptions, lineage
from navd.model import DependencyType, Element, ElementStub, ElementType, Relation, RelationType, SourceType

from spark_fixtures import CASES, CLUSTER, DEFAULT_FS, FIXTURES, UPDATE, fixture_lines

SQL_PLAN_EVENTS = ("SQLExecutionStart", "SQLAdaptiveExecutionUpdate")


def plan_descriptions(case: str, execution_id: int) -> list[str]:
    """Every physicalPlanDescription of one execution, in order (start, then AQE updates)."""
    found = []
    for line in fixture_lines(case):
        event = json.loads(line)
        if event["Event"].endswith(SQL_PLAN_EVENTS) and event["executionId"] == execution_id:
            found.append(str(event["physicalPlanDescription"]))
    assert found, f"no execution {execution_id} in {case}"
    return found


#: A view's plan whose logical relation names no table: parse_description raises PlanError
UNREADABLE_VIEW_PLAN = """== Physical Plan ==
Execute CreateViewCommand (1)
   +- CreateViewCommand (2)
         +- LogicalRelation (3)


(1) Execute CreateViewCommand
Output: []

(2) CreateViewCommand
Arguments: `spark_catalog`.`db`.`v`, SELECT 1, false, false, PersistedView, true

(3) LogicalRelation
Arguments: parquet, [id#1], ` `.` `, false
"""


def test_plan_trees_keep_the_last_texts_parsed() -> None:
    """tree.PlanTrees, an application's plan trees shared by plan_io and column_flows: a text
    asked for again while among the last `size` asked for gives the tree parsed the first time;
    the least recently asked for is dropped (parsed again when asked for: an equal tree); a text
    that does not parse raises each time and is not kept."""
    texts = list(dict.fromkeys(str(json.loads(line)["physicalPlanDescription"])
                               for line in fixture_lines("column_shapes")
                               if json.loads(line)["Event"].endswith(SQL_PLAN_EVENTS)))
    a, b, c = texts[:3]
    trees = PlanTrees(size=2)
    first_a = trees.parse(a)
    assert first_a == parse_description(a)
    assert trees.parse(a) is first_a
    first_b = trees.parse(b)
    assert trees.parse(a) is first_a        # a is now the most recently asked for: b goes first
    trees.parse(c)
    assert len(trees) == 2
    assert trees.parse(a) is first_a
    again_b = trees.parse(b)                # dropped: parsed again
    assert again_b is not first_b and again_b == first_b
    assert len(trees) == 2
    for _ in range(2):
        with pytest.raises(PlanError, match="not a table identifier"):
            trees.parse(UNREADABLE_VIEW_PLAN)
    assert len(trees) == 2
    with pytest.raises(ValueError, match="at least 1"):
        PlanTrees(size=0)
    # bounded by the texts' length too: a text longer than the bound is parsed, not kept; the
    # oldest go until the texts fit
    small = PlanTrees(size=4, max_chars=len(a) + len(b))
    assert small.parse(a) is small.parse(a)
    small.parse(b)
    assert len(small) == 2
    small.parse(a + "\n")                    # (the same plan, a text of its own): a and b go
    assert len(small) == 1
    longest = PlanTrees(size=4, max_chars=len(a) - 1)
    assert longest.parse(a) is not longest.parse(a)
    assert len(longest) == 0


def source_text(source: ColumnSource) -> str:
    if source.table is not None:
        return f"{source.table.namespace}.{source.table.name}.{source.column}"
    return f"{source.paths[0].rsplit('/', 1)[-1]}:{source.column}"


Flow = tuple[str, list[str], str | None, list[str]]


def flow_text(flow: ColumnFlow) -> Flow:
    """(written column, ["source DATA_SUBTYPE"], expression or None, ["control CONTROL_SUBTYPES"])"""
    return (flow.target, [f"{source_text(s)} {subtype}" for s, subtype in flow.data_subtypes], flow.expression,
            [f"{source_text(s)} {','.join(x for x in CONTROL_SUBTYPES if x in used)}"
             for s, used in flow.control_subtypes])


# view_forms: the controls every column of a view shares
# top_regions: the join's keys, the inner GROUP BY (region, customer), the outer GROUP BY
# (region), ORDER BY total (a sum of amounts)
_TOP_REGIONS_CONTROLS = ["vf.customers.customer_id JOIN", "vf.customers.region GROUP_BY", "vf.orders.amount SORT",
                         "vf.orders.customer_id JOIN,GROUP_BY"]
# order_facts: the inner join (region) and its WHERE (manager), the outer join (customer) and its
# WHERE on both sides (amount, region)
_ORDER_FACTS_CONTROLS = ["vf.regions.manager FILTER", "vf.regions.region JOIN", "vf.customers.customer_id JOIN",
                         "vf.customers.region FILTER,JOIN", "vf.orders.amount FILTER", "vf.orders.customer_id JOIN"]
# best_customers: the join, GROUP BY name, ORDER BY total (HAVING count(*) reads no column)
_BEST_CUSTOMERS_CONTROLS = ["vf.customers.customer_id JOIN", "vf.customers.name GROUP_BY", "vf.orders.amount SORT",
                            "vf.orders.customer_id JOIN"]

# (case, execution id, [(written column, sources, expression or None, control columns)]); each
# column with how it is used (plan.DATA_SUBTYPES, plan.CONTROL_SUBTYPES)
PLAN_CASES: list[tuple[str, str, int, list[Flow]]] = [
    # the CTAS case: CTAS nested insert, u = upper(s.c); the filter `c is not null` is on
    # c itself: c is both a data source of u and a FILTER control
    ("ctas_expression", "ctas", 7, [
        ("u", ["sales.s.c TRANSFORMATION"], "upper(c)", ["sales.s.c FILTER"])]),
    ("insert_overwrite_join", "join + group by into a Hive table", 6, [
        ("name", ["shop.customers.name IDENTITY"], None,
         ["shop.customers.customer_id FILTER,JOIN",
          "shop.customers.name GROUP_BY",
          "shop.orders.customer_id FILTER,JOIN"]),
        ("total", ["shop.orders.amount AGGREGATION"], "sum(amount)",
         ["shop.customers.customer_id FILTER,JOIN",
          "shop.customers.name GROUP_BY",
          "shop.orders.customer_id FILTER,JOIN"])]),
    ("dataframe_paths", "path reads, three joins, where, renames", 6, [
        ("id", ["events_parquet:id IDENTITY"], None,
         ["ref_csv:id FILTER,JOIN",
          "extra_json:id FILTER,JOIN",
          "events_parquet:id FILTER,JOIN",
          "events_parquet:v FILTER"]),
        ("k", ["events_parquet:k TRANSFORMATION"], "upper(k)",
         ["ref_csv:id FILTER,JOIN",
          "extra_json:id FILTER,JOIN",
          "events_parquet:id FILTER,JOIN",
          "events_parquet:v FILTER"]),
        ("w", ["extra_json:v TRANSFORMATION", "events_parquet:v TRANSFORMATION"], "(events_parquet.v + extra_json.v)",
         ["ref_csv:id FILTER,JOIN",
          "extra_json:id FILTER,JOIN",
          "events_parquet:id FILTER,JOIN",
          "events_parquet:v FILTER"])]),
    ("dataframe_paths", "a column named `sum(w)`, partial and final aggregates", 9, [
        ("k", ["events_parquet:k TRANSFORMATION"], "upper(k)",
         ["ref_csv:id FILTER,JOIN",
          "extra_json:id FILTER,JOIN",
          "events_parquet:id FILTER,JOIN",
          "events_parquet:k GROUP_BY",
          "events_parquet:v FILTER"]),
        ("sum(w)", ["extra_json:v AGGREGATION", "events_parquet:v AGGREGATION"],
         "sum((events_parquet.v + extra_json.v))",
         ["ref_csv:id FILTER,JOIN",
          "extra_json:id FILTER,JOIN",
          "events_parquet:id FILTER,JOIN",
          "events_parquet:k GROUP_BY",
          "events_parquet:v FILTER"])]),
    ("multi_output", "Hive CTAS", 8, [
        ("id", ["mo.hive_copy.id IDENTITY"], None, []),
        ("name", ["mo.hive_copy.name IDENTITY"], None, [])]),
    ("multi_output", "JDBC V2 table read", 21, [
        ("id", ["app.v2_out.id IDENTITY"], None, []),
        ("name", ["app.v2_out.name IDENTITY"], None, [])]),
    ("catalog_ops", "writes nothing", 1, []),
    # column_filters_joins: one CTAS (nested insert = root id + 1) per shape
    ("column_filters_joins", "where", 11, [
        ("order_id", ["cl.orders.order_id IDENTITY"], None, ["cl.orders.status FILTER"]),
        ("double_amount", ["cl.orders.amount TRANSFORMATION"], "(amount * 2.0)", ["cl.orders.status FILTER"])]),
    ("column_filters_joins", "inner join (AQE, broadcast): keys of both sides control both columns", 14, [
        ("order_id", ["cl.orders.order_id IDENTITY"], None,
         ["cl.customers.customer_id FILTER,JOIN", "cl.orders.customer_id FILTER,JOIN"]),
        ("name", ["cl.customers.name IDENTITY"], None,
         ["cl.customers.customer_id FILTER,JOIN", "cl.orders.customer_id FILTER,JOIN"])]),
    ("column_filters_joins", "left outer join; `o.amount > 2` in ON is pushed below the right side", 17, [
        ("name", ["cl.customers.name IDENTITY"], None,
         ["cl.customers.customer_id JOIN", "cl.orders.amount FILTER", "cl.orders.customer_id FILTER,JOIN"]),
        ("amount", ["cl.orders.amount IDENTITY"], None,
         ["cl.customers.customer_id JOIN", "cl.orders.amount FILTER", "cl.orders.customer_id FILTER,JOIN"])]),
    ("column_filters_joins", "exists -> left semi join", 20, [
        ("name", ["cl.customers.name IDENTITY"], None,
         ["cl.customers.customer_id JOIN", "cl.orders.customer_id JOIN"])]),
    ("column_filters_joins", "not exists -> left anti join", 23, [
        ("name", ["cl.customers.name IDENTITY"], None,
         ["cl.customers.customer_id JOIN", "cl.orders.customer_id JOIN"])]),
    ("column_filters_joins", "insert into an existing table: written under the table's names", 25, [
        ("order_id", ["cl.orders.order_id IDENTITY"], None, ["cl.orders.ts FILTER"]),
        ("double_amount", ["cl.orders.amount IDENTITY"], None, ["cl.orders.ts FILTER"])]),
    # column_aggregates
    ("column_aggregates", "group by: keys SIMPLE when copied, GROUP_BY of every column", 11, [
        ("customer_id", ["cl.orders.customer_id IDENTITY"], None, ["cl.orders.customer_id GROUP_BY"]),
        ("total", ["cl.orders.amount AGGREGATION"], "sum(amount)", ["cl.orders.customer_id GROUP_BY"]),
        ("n", [], "count(1)", ["cl.orders.customer_id GROUP_BY"])]),
    ("column_aggregates", "order by (global Sort)", 14, [
        ("order_id", ["cl.orders.order_id IDENTITY"], None, ["cl.orders.ts SORT"]),
        ("amount", ["cl.orders.amount IDENTITY"], None, ["cl.orders.ts SORT"])]),
    ("column_aggregates", "window: partition/order control the window column only", 17, [
        ("order_id", ["cl.orders.order_id IDENTITY"], None, []),
        ("running", ["cl.orders.amount AGGREGATION"],
         "sum(amount) OVER (PARTITION BY customer_id ORDER BY ts ASC NULLS FIRST)",
         ["cl.orders.customer_id WINDOW", "cl.orders.ts WINDOW"])]),
    ("column_aggregates", "rollup: Expand then aggregate", 20, [
        ("customer_id", ["cl.orders.customer_id IDENTITY"], None,
         ["cl.orders.customer_id GROUP_BY", "cl.orders.status GROUP_BY"]),
        ("status", ["cl.orders.status IDENTITY"], None,
         ["cl.orders.customer_id GROUP_BY", "cl.orders.status GROUP_BY"]),
        ("total", ["cl.orders.amount AGGREGATION"], "sum(amount)",
         ["cl.orders.customer_id GROUP_BY", "cl.orders.status GROUP_BY"])]),
    # column_shapes
    ("column_shapes", "union all: every branch, by position", 11, [
        ("id", ["cl.customers.customer_id IDENTITY", "cl.orders.order_id IDENTITY"], None, []),
        ("name", ["cl.customers.name IDENTITY", "cl.orders.status IDENTITY"], None, [])]),
    ("column_shapes", "CTE", 14, [
        ("cid", ["cl.orders.customer_id IDENTITY"], None, ["cl.orders.amount FILTER"]),
        ("a2", ["cl.orders.amount TRANSFORMATION"], "(amount * 2.0)", ["cl.orders.amount FILTER"])]),
    ("column_shapes", "temporary view", 19, [
        ("oid", ["cl.orders.order_id IDENTITY"], None, ["cl.orders.status FILTER"]),
        ("amt", ["cl.orders.amount TRANSFORMATION"], "(amount + 1.0)", ["cl.orders.status FILTER"])]),
    ("column_shapes", "lateral view explode (Generate)", 22, [
        ("customer_id", ["cl.customers.customer_id IDENTITY"], None, []),
        ("tag", ["cl.customers.region TRANSFORMATION"], "explode(split(region, ,, -1))", [])]),
    ("column_shapes", "Python UDF (BatchEvalPython)", 25, [
        ("customer_id", ["cl.customers.customer_id IDENTITY"], None, []),
        ("loud", ["cl.customers.name TRANSFORMATION"], "shout(name)", [])]),
    ("column_shapes", "scalar subquery in a filter (AQE, subquery plan)", 28, [
        ("order_id", ["cl.orders.order_id IDENTITY"], None, ["cl.orders.amount FILTER"])]),
    ("column_shapes", "scalar subquery in the select list: its plan's output flows in", 31, [
        ("order_id", ["cl.orders.order_id IDENTITY"], None, []),
        ("top_customer", ["cl.customers.customer_id AGGREGATION"], "Subquery max(customer_id)", [])]),
    # dotted_columns: names with dots, spaces, backticks, unicode; a rename through them is SIMPLE
    ("dotted_columns", "CTAS renaming `b.c`, `a b`, `ünï`; upper(`b.c`)", 5, [
        ("x.y", ["dc.src.b.c IDENTITY"], None, ["dc.src.a b FILTER"]),
        ("p q", ["dc.src.a b IDENTITY"], None, ["dc.src.a b FILTER"]),
        ("Ünï.Zwei", ["dc.src.ünï IDENTITY"], None, ["dc.src.a b FILTER"]),
        ("up.per", ["dc.src.b.c TRANSFORMATION"], "upper(b.c)", ["dc.src.a b FILTER"])]),
    ("dotted_columns", "insert into `k.k`, `v v`, `w``x` by position", 9, [
        ("k.k", ["dc.src.id IDENTITY"], None, ["dc.src.ünï FILTER"]),
        ("v v", ["dc.src.b.c IDENTITY"], None, ["dc.src.ünï FILTER"]),
        ("w`x", ["dc.src.ünï IDENTITY"], None, ["dc.src.ünï FILTER"])]),
    ("dotted_columns", "DataFrame withColumnRenamed(`a b` -> `a.b`), saveAsTable", 13, [
        ("id", ["dc.src.id IDENTITY"], None, ["dc.src.id FILTER"]),
        ("a.b", ["dc.src.a b IDENTITY"], None, ["dc.src.id FILTER"]),
        ("b.c", ["dc.src.b.c IDENTITY"], None, ["dc.src.id FILTER"])]),
    # char_varchar: Spark's CHAR/VARCHAR checks and padding and its store-assignment casts are
    # not the user's expression
    ("char_varchar", "plain copies into char/varchar, int -> bigint/double, bigint -> int", 10, [
        ("c", ["cv.src.s IDENTITY"], None, []),
        ("v", ["cv.src.s IDENTITY"], None, []),
        ("b", ["cv.src.n IDENTITY"], None, []),
        ("dd", ["cv.src.n IDENTITY"], None, []),
        ("i", ["cv.src.big IDENTITY"], None, [])]),
    ("char_varchar", "the user's expressions under the wrappers; a cast to the column's type reads as Spark's", 12, [
        ("c", ["cv.src.s TRANSFORMATION"], "upper(s)", []),
        ("v", ["cv.src.s TRANSFORMATION"], "concat(s, x)", []),
        ("b", ["cv.src.n TRANSFORMATION"], "(n + 1)", []),
        ("dd", ["cv.src.d TRANSFORMATION"], "(d * 2.0)", []),
        ("i", ["cv.src.d IDENTITY"], None, [])]),
    ("char_varchar", "Hive SerDe char/varchar target (InsertIntoHiveTable)", 14, [
        ("v", ["cv.src.s IDENTITY"], None, []),
        ("c", ["cv.src.s IDENTITY"], None, []),
        ("b", ["cv.src.n IDENTITY"], None, [])]),
    ("char_varchar", "CTAS reading a CHAR column (read-side padding)", 17, [
        ("c", ["cv.t_char.c IDENTITY"], None, []),
        ("v2", ["cv.t_char.v IDENTITY"], None, [])]),
    ("char_varchar", "CTAS: no store assignment, the cast is the user's", 20, [
        ("i", ["cv.t_char.dd TRANSFORMATION"], "cast(dd as int)", []),
        ("uc", ["cv.t_char.c TRANSFORMATION"], "upper(c)", [])]),
    ("char_varchar", "DataFrame insertInto a char/varchar table", 22, [
        ("c", ["cv.src.s IDENTITY"], None, []),
        ("v", ["cv.src.s IDENTITY"], None, []),
        ("b", ["cv.src.n IDENTITY"], None, []),
        ("dd", ["cv.src.n IDENTITY"], None, []),
        ("i", ["cv.src.big IDENTITY"], None, [])]),
    # create_view: a view's columns come from its analysed (logical) plan under the view command
    ("create_view", "CREATE VIEW: logical Project over Filter over LogicalRelation", 10, [
        ("id", ["vw.src.id IDENTITY"], None, ["vw.src.amount FILTER"]),
        ("uname", ["vw.src.name TRANSFORMATION"], "upper(name)", ["vw.src.amount FILTER"])]),
    ("create_view", "CREATE OR REPLACE VIEW", 12, [
        ("id", ["vw.src.id IDENTITY"], None, []),
        ("name", ["vw.src.name IDENTITY"], None, []),
        ("a2", ["vw.src.amount TRANSFORMATION"], "(amount * cast(2 as double))", [])]),
    ("create_view", "CREATE VIEW v (Key, label): the statement's column names, by position", 14, [
        ("Key", ["vw.src.id IDENTITY"], None, []),
        ("label", ["vw.src.name IDENTITY"], None, [])]),
    ("create_view", "ALTER VIEW AS: logical Join over LogicalRelation and HiveTableRelation", 16, [
        ("id", ["vw.src.id IDENTITY"], None, ["vw.dim.id JOIN", "vw.src.id JOIN"]),
        ("region", ["vw.dim.region IDENTITY"], None, ["vw.dim.id JOIN", "vw.src.id JOIN"])]),
    ("create_view", "CREATE VIEW: logical Aggregate (grouping keys control the aggregate)", 18, [
        ("region", ["vw.dim.region IDENTITY"], None, ["vw.dim.id JOIN", "vw.dim.region GROUP_BY", "vw.src.id JOIN"]),
        ("total", ["vw.src.amount AGGREGATION"], "sum(amount)",
         ["vw.dim.id JOIN", "vw.dim.region GROUP_BY", "vw.src.id JOIN"])]),
    ("create_view", "a view over a view: inlined (logical View), its up-casts are no expression", 22, [
        ("id", ["vw.src.id IDENTITY"], None, ["vw.src.name FILTER"]),
        ("a2", ["vw.src.amount TRANSFORMATION"], "(amount * cast(2 as double))", ["vw.src.name FILTER"])]),
    ("create_view", "CREATE VIEW after USE: a rename", 32, [
        ("k", ["vw.src.id IDENTITY"], None, [])]),
    ("create_view", "view: logical Window (partition and order columns control the window's column)", 34, [
        ("id", ["vw.src.id IDENTITY"], None, []),
        ("running", ["vw.src.amount AGGREGATION"], "sum(amount) OVER (PARTITION BY name ORDER BY id ASC NULLS FIRST)",
         ["vw.src.id WINDOW", "vw.src.name WINDOW"])]),
    ("create_view", "view: logical Generate (lateral view explode)", 36, [
        ("id", ["vw.src.id IDENTITY"], None, []),
        ("tag", ["vw.src.name TRANSFORMATION"], "explode(split(name, ,, -1))", [])]),
    ("create_view", "view: logical Union under a global Sort", 38, [
        ("id", ["vw.dim.id IDENTITY", "vw.src.id IDENTITY"], None, ["vw.dim.id SORT", "vw.src.id SORT"]),
        ("name", ["vw.dim.region IDENTITY", "vw.src.name IDENTITY"], None, ["vw.dim.id SORT", "vw.src.id SORT"])]),
    ("create_view", "view: logical Expand + Aggregate (ROLLUP)", 40, [
        ("name", ["vw.src.name IDENTITY"], None, ["vw.src.name GROUP_BY"]),
        ("total", ["vw.src.amount AGGREGATION"], "sum(amount)", ["vw.src.name GROUP_BY"])]),
    # view_forms: every form of CREATE [OR REPLACE] VIEW / ALTER VIEW ... AS, bodies over
    # several lines (the statement's text runs over several lines of the plan's Arguments).
    # Written from each statement's SQL; sources and controls are listed in the order of their
    # scans (the Hive SerDe table vf.regions first). A view's plan is the analysed one: a join
    # key is JOIN (a CTAS's optimised plan adds Spark's inferred isnotnull FILTER), and an IN /
    # EXISTS subquery's compared and correlated columns are JOIN, as in the semi / anti join a
    # CTAS plans (see SUBQUERY_VIEWS).
    ("view_forms", "column list; nested aggregating subqueries with ORDER BY ... LIMIT", 14, [
        ("region_name", ["vf.customers.region IDENTITY"], None, _TOP_REGIONS_CONTROLS),
        ("revenue", ["vf.orders.amount AGGREGATION"], "sum(sum(amount))", _TOP_REGIONS_CONTROLS)]),
    ("view_forms", "join with a joining, filtering subquery; a1..a7; WHERE on both sides", 16, [
        (f"a{n}", [source], None, _ORDER_FACTS_CONTROLS) for n, source in enumerate((
            "vf.orders.order_id IDENTITY", "vf.orders.amount IDENTITY", "vf.orders.status IDENTITY",
            "vf.customers.name IDENTITY", "vf.customers.region IDENTITY", "vf.regions.manager IDENTITY",
            "vf.orders.ts IDENTITY"), start=1)]),
    ("view_forms", "SELECT * FROM (window, join, GROUP BY ... HAVING, ORDER BY ... LIMIT) alias", 18, [
        ("name", ["vf.customers.name IDENTITY"], None, _BEST_CUSTOMERS_CONTROLS),
        ("total", ["vf.orders.amount AGGREGATION"], "sum(amount)", _BEST_CUSTOMERS_CONTROLS),
        # rank() has no value of a column: ordered by sum(amount) (WINDOW), and sorted by total
        ("rnk", [], "rank(sum(amount)) OVER (ORDER BY sum(amount) DESC NULLS LAST)",
         ["vf.customers.customer_id JOIN", "vf.customers.name GROUP_BY", "vf.orders.amount SORT,WINDOW",
          "vf.orders.customer_id JOIN"])]),
    ("view_forms", "COMMENT on the view and its columns, TBLPROPERTIES", 20, [
        ("id", ["vf.orders.order_id IDENTITY"], None, ["vf.orders.status FILTER"]),
        ("amt", ["vf.orders.amount IDENTITY"], None, ["vf.orders.status FILTER"])]),
    ("view_forms", "CREATE VIEW IF NOT EXISTS (a new view)", 22, [
        ("customer_id", ["vf.customers.customer_id IDENTITY"], None, []),
        ("name", ["vf.customers.name TRANSFORMATION"], "upper(name)", [])]),
    ("view_forms", "a view defined ...", 24, [
        ("order_id", ["vf.orders.order_id IDENTITY"], None, ["vf.orders.status FILTER"]),
        ("amount", ["vf.orders.amount IDENTITY"], None, ["vf.orders.status FILTER"])]),
    ("view_forms", "... and replaced (CREATE OR REPLACE VIEW) by another body", 26, [
        ("customer_id", ["vf.customers.customer_id IDENTITY"], None, ["vf.customers.region FILTER"]),
        ("region", ["vf.customers.region IDENTITY"], None, ["vf.customers.region FILTER"])]),
    ("view_forms", "ALTER VIEW ... AS over several lines, a CASE WHEN", 28, [
        ("customer_id", ["vf.customers.customer_id IDENTITY"], None, []),
        ("area", ["vf.customers.region TRANSFORMATION"], "CASE WHEN (region = eu) THEN europe ELSE region END",
         ["vf.customers.region CONDITIONAL"])]),
    ("view_forms", "WITH SCHEMA BINDING", 30, [
        ("order_id", ["vf.orders.order_id IDENTITY"], None, []),
        ("status", ["vf.orders.status IDENTITY"], None, [])]),
    ("view_forms", "WITH SCHEMA EVOLUTION, SELECT *", 32, [
        ("customer_id", ["vf.customers.customer_id IDENTITY"], None, []),
        ("name", ["vf.customers.name IDENTITY"], None, []),
        ("region", ["vf.customers.region IDENTITY"], None, [])]),
    ("view_forms", "CREATE OR REPLACE ... WITH SCHEMA COMPENSATION", 34, [
        ("order_id", ["vf.orders.order_id IDENTITY"], None, []),
        ("ts", ["vf.orders.ts IDENTITY"], None, [])]),
    ("view_forms", "WITH SCHEMA TYPE EVOLUTION over a Hive SerDe table", 36, [
        ("region", ["vf.regions.region IDENTITY"], None, []),
        ("manager", ["vf.regions.manager IDENTITY"], None, [])]),
    ("view_forms", "a CTE body: WithCTE, CTERelationDef, CTERelationRef", 38, [
        ("name", ["vf.customers.name IDENTITY"], None,
         ["vf.customers.customer_id JOIN", "vf.orders.amount FILTER", "vf.orders.customer_id JOIN"]),
        ("amount", ["vf.orders.amount IDENTITY"], None,
         ["vf.customers.customer_id JOIN", "vf.orders.amount FILTER", "vf.orders.customer_id JOIN"])]),
    ("view_forms", "IN (subquery): a semi join of the value with the subquery's column", 40, [
        (column, [f"vf.customers.{column} IDENTITY"], None,
         ["vf.customers.customer_id JOIN", "vf.orders.customer_id JOIN"])
        for column in ("customer_id", "name", "region")]),
    ("view_forms", "EXISTS and NOT EXISTS: correlations join, the other condition filters", 42, [
        ("name", ["vf.customers.name IDENTITY"], None,
         ["vf.regions.manager FILTER", "vf.regions.region JOIN", "vf.customers.customer_id JOIN",
          "vf.customers.region JOIN", "vf.orders.customer_id JOIN"])]),
    ("view_forms", "a scalar subquery in the WHERE (avg(amount) of the same table)", 44, [
        ("order_id", ["vf.orders.order_id IDENTITY"], None, ["vf.orders.amount FILTER"]),
        ("amount", ["vf.orders.amount IDENTITY"], None, ["vf.orders.amount FILTER"])]),
    ("view_forms", "UNION (distinct) under a column list: every branch, grouped", 46, [
        ("who", ["vf.regions.manager IDENTITY", "vf.customers.name IDENTITY"], None,
         ["vf.regions.manager GROUP_BY", "vf.customers.name GROUP_BY"])]),
    ("view_forms", "INTERSECT: both sides compared (JOIN), distinct rows", 48, [
        ("region", ["vf.customers.region IDENTITY"], None, ["vf.regions.region JOIN", "vf.customers.region JOIN,GROUP_BY"])]),
    ("view_forms", "EXCEPT: both sides compared (JOIN), distinct rows", 50, [
        ("region", ["vf.customers.region IDENTITY"], None, ["vf.regions.region JOIN", "vf.customers.region JOIN,GROUP_BY"])]),
    ("view_forms", "SELECT DISTINCT", 52, [
        ("status", ["vf.orders.status IDENTITY"], None, ["vf.orders.status GROUP_BY"])]),
    ("view_forms", "NATURAL JOIN: the common column first", 54, [
        (column, [f"vf.{table}.{column} IDENTITY"], None, ["vf.regions.region JOIN", "vf.customers.region JOIN"])
        for table, column in (("customers", "region"), ("customers", "customer_id"), ("customers", "name"),
                              ("regions", "manager"))]),
    ("view_forms", "JOIN ... USING", 56, [
        (column, [f"vf.{table}.{column} IDENTITY"], None, ["vf.customers.customer_id JOIN", "vf.orders.customer_id JOIN"])
        for table, column in (("customers", "customer_id"), ("customers", "name"), ("customers", "region"),
                              ("orders", "order_id"), ("orders", "amount"), ("orders", "status"), ("orders", "ts"))]),
    ("view_forms", "FULL OUTER JOIN", 58, [
        ("name", ["vf.customers.name IDENTITY"], None, ["vf.regions.region JOIN", "vf.customers.region JOIN"]),
        ("manager", ["vf.regions.manager IDENTITY"], None, ["vf.regions.region JOIN", "vf.customers.region JOIN"])]),
    ("view_forms", "CROSS JOIN: nothing controls the rows", 60, [
        ("name", ["vf.customers.name IDENTITY"], None, []),
        ("other", ["vf.regions.region IDENTITY"], None, [])]),
    ("view_forms", "LEFT JOIN with a condition on the right side in ON", 62, [
        ("name", ["vf.customers.name IDENTITY"], None,
         ["vf.customers.customer_id JOIN", "vf.orders.customer_id JOIN", "vf.orders.status JOIN"]),
        ("amount", ["vf.orders.amount IDENTITY"], None,
         ["vf.customers.customer_id JOIN", "vf.orders.customer_id JOIN", "vf.orders.status JOIN"])]),
    ("view_forms", "a subquery with column aliases j(aa, bb)", 64, [
        ("aa", ["vf.customers.customer_id IDENTITY"], None, []),
        ("bb", ["vf.customers.name IDENTITY"], None, [])]),
    ("view_forms", "VALUES: columns without a source", 66, [("n", [], None, []), ("word", [], None, [])]),
    ("view_forms", "a view over the first view (its column names, inlined)", 68, [
        ("region_name", ["vf.customers.region IDENTITY"], None, _TOP_REGIONS_CONTROLS),
        ("doubled", ["vf.orders.amount AGGREGATION"], "(sum(sum(amount)) * cast(2 as double))", _TOP_REGIONS_CONTROLS)]),
    ("view_forms", "after USE: an unqualified, mixed-case name; a column with a space", 72, [
        ("the id", ["vf.customers.customer_id IDENTITY"], None, []),
        ("name", ["vf.customers.name IDENTITY"], None, [])]),
    # order_by_limit: nodes whose output is defined in their arguments, and limits/samples
    ("order_by_limit", "ORDER BY ... LIMIT: TakeOrderedAndProject over a Project; its order controls", 10, [
        ("id", ["ol.src.id IDENTITY"], None, ["ol.src.amt SORT"]),
        ("n", ["ol.src.name TRANSFORMATION"], "upper(name)", ["ol.src.amt SORT"])]),
    ("order_by_limit", "LIMIT ... OFFSET: TakeOrderedAndProject renames in its project list", 12, [
        ("id", ["ol.src.id TRANSFORMATION"], "(id + 1)", ["ol.src.amt SORT"]),
        ("n", ["ol.src.name IDENTITY"], None, ["ol.src.amt SORT"])]),
    ("order_by_limit", "TakeOrderedAndProject aliasing a computed column, into a Hive table", 14, [
        ("id", ["ol.src.id IDENTITY"], None, ["ol.src.id SORT"]),
        ("n", ["ol.src.name TRANSFORMATION"], "concat(name, !)", ["ol.src.id SORT"])]),
    ("order_by_limit", "LIMIT: LocalLimit / GlobalLimit over a Project (AQE)", 16, [
        ("id", ["ol.src.id TRANSFORMATION"], "(id * 10)", []),
        ("n", ["ol.src.name TRANSFORMATION"], "lower(name)", [])]),
    ("order_by_limit", "LIMIT ... OFFSET: GlobalLimit with an offset", 18, [
        ("id", ["ol.src.id IDENTITY"], None, []),
        ("n", ["ol.src.name IDENTITY"], None, [])]),
    ("order_by_limit", "TABLESAMPLE: Sample under a Project", 20, [
        ("id", ["ol.src.id IDENTITY"], None, []),
        ("n", ["ol.src.name TRANSFORMATION"], "upper(name)", [])]),
    ("order_by_limit", "CTAS ... ORDER BY ... LIMIT (nested insert)", 23, [
        ("k", ["ol.src.id IDENTITY"], None, ["ol.src.name SORT"]),
        ("q", ["ol.src.name TRANSFORMATION"], "concat(name, ?)", ["ol.src.name SORT"])]),
    ("order_by_limit", "scalar subquery planned as TakeOrderedAndProject: its order controls", 25, [
        ("id", ["ol.src.id IDENTITY"], None, []),
        ("n", ["ol.src.name TRANSFORMATION"], "Subquery upper(name)", ["ol.src.amt SORT"])]),
    ("order_by_limit", "scalar subquery planned as CollectLimit", 27, [
        ("id", ["ol.src.id IDENTITY"], None, []),
        ("n", ["ol.src.name TRANSFORMATION"], "Subquery lower(name)", [])]),
    # A union's column carries every branch's sources, with the first expression met (here the
    # second branch's `id * 2`; the first branch copies id): a union limitation, not the node's.
    ("order_by_limit", "TakeOrderedAndProject over a Union", 29, [
        ("id", ["ol.src.id TRANSFORMATION"], "(id * 2)", ["ol.src.id SORT"]),
        ("n", ["ol.src.name TRANSFORMATION"], "upper(name)", ["ol.src.id SORT"])]),
    ("order_by_limit", "TRANSFORM USING (HiveScriptTransformation): every output from every input", 31, [
        ("id", ["ol.src.id TRANSFORMATION", "ol.src.name TRANSFORMATION"], "TRANSFORM(id, name) USING 'cat'", []),
        ("n", ["ol.src.id TRANSFORMATION", "ol.src.name TRANSFORMATION"], "TRANSFORM(id, name) USING 'cat'", [])]),
    ("order_by_limit", "df.orderBy().limit().selectExpr(): the projection only in TakeOrderedAndProject", 33, [
        ("id", ["ol.src.id IDENTITY"], None, ["ol.src.amt SORT"]),
        ("n", ["ol.src.name TRANSFORMATION"], "upper(name)", ["ol.src.amt SORT"])]),
    ("order_by_limit", "df...orderBy().limit().saveAsTable() (nested insert)", 36, [
        ("id", ["ol.src.id IDENTITY"], None, ["ol.src.id SORT"]),
        ("n", ["ol.src.name TRANSFORMATION"], "upper(name)", ["ol.src.id SORT"])]),
    ("order_by_limit", "df.limit().insertInto(): LocalLimit / GlobalLimit (AQE)", 37, [
        ("id", ["ol.src.id IDENTITY"], None, []),
        ("n", ["ol.src.name TRANSFORMATION"], "concat(name, .)", [])]),
    ("order_by_limit", "rank filter without a partition: TakeOrderedAndProject under a Window", 38, [
        ("id", ["ol.src.id IDENTITY"], None, ["ol.src.amt SORT,WINDOW"]),
        ("n", ["ol.src.name TRANSFORMATION"], "upper(name)", ["ol.src.amt SORT,WINDOW"])]),
    ("order_by_limit", "df.coalesce(): Coalesce over a Project", 40, [
        ("id", ["ol.src.id TRANSFORMATION"], "(id * 3)", []),
        ("n", ["ol.src.name IDENTITY"], None, [])]),
    # (`rank()` has no value of a column in it: amt and id only order and partition its window)
    ("order_by_limit", "partitioned rank filter: WindowGroupLimit (partial and final) under the Window", 41, [
        ("id", ["ol.src.id IDENTITY"], None, ["ol.src.amt WINDOW", "ol.src.id WINDOW"]),
        ("n", ["ol.src.name TRANSFORMATION"], "lower(name)", ["ol.src.amt WINDOW", "ol.src.id WINDOW"])]),
    # column_usage: how each column is used (DATA_SUBTYPES / CONTROL_SUBTYPES); a column both
    # copied and controlling keeps both edges
    ("column_usage", "CASE WHEN and if(): the deciding column is CONDITIONAL, not a data source", 11, [
        ("order_id", ["cl.orders.order_id IDENTITY"], None, []),
        ("due", ["cl.orders.amount TRANSFORMATION"], "CASE WHEN (status = open) THEN amount ELSE (amount * 0.5) END",
         ["cl.orders.status CONDITIONAL"]),
        ("timing", [], "if ((ts > 1)) late else early", ["cl.orders.ts CONDITIONAL"])]),
    ("column_usage", "a join key also copied: data and JOIN (and Spark's inferred isnotnull FILTER)", 14, [
        ("customer_id", ["cl.orders.customer_id IDENTITY"], None,
         ["cl.customers.customer_id FILTER,JOIN", "cl.orders.customer_id FILTER,JOIN"]),
        ("name", ["cl.customers.name IDENTITY"], None,
         ["cl.customers.customer_id FILTER,JOIN", "cl.orders.customer_id FILTER,JOIN"])]),
    ("column_usage", "a filter column also copied", 17, [
        ("order_id", ["cl.orders.order_id IDENTITY"], None, ["cl.orders.status FILTER"]),
        ("status", ["cl.orders.status IDENTITY"], None, ["cl.orders.status FILTER"])]),
    ("column_usage", "group by: the key copied and GROUP_BY; aggregates are AGGREGATION", 20, [
        ("status", ["cl.orders.status IDENTITY"], None, ["cl.orders.status GROUP_BY"]),
        ("total", ["cl.orders.amount AGGREGATION"], "sum(amount)", ["cl.orders.status GROUP_BY"]),
        ("peak", ["cl.orders.amount AGGREGATION", "cl.orders.ts AGGREGATION"], "max((amount + cast(ts as double)))",
         ["cl.orders.status GROUP_BY"])]),
    ("column_usage", "window: sum() OVER aggregates; rank() only orders; partition and order columns WINDOW", 23, [
        ("customer_id", ["cl.orders.customer_id IDENTITY"], None, []),
        ("ts", ["cl.orders.ts IDENTITY"], None, []),
        ("running", ["cl.orders.amount AGGREGATION"],
         "sum(amount) OVER (PARTITION BY customer_id ORDER BY ts ASC NULLS FIRST)",
         ["cl.orders.customer_id WINDOW", "cl.orders.ts WINDOW"]),
        ("r", [], "rank(ts) OVER (PARTITION BY customer_id ORDER BY ts ASC NULLS FIRST)",
         ["cl.orders.customer_id WINDOW", "cl.orders.ts WINDOW"])]),
    ("column_usage", "a sort column also copied", 26, [
        ("order_id", ["cl.orders.order_id IDENTITY"], None, ["cl.orders.ts SORT"]),
        ("ts", ["cl.orders.ts IDENTITY"], None, ["cl.orders.ts SORT"])]),
]

# Plans that write several datasets (multi-insert): (case, what, execution id,
# {written dataset (table name, else the path's last segment, "?" for a write command not read):
#  [flows of that write, in order]})
MULTI_WRITE_CASES: list[tuple[str, str, int, dict[str, list[Flow]]]] = [
    ("multi_insert", "two tables from a filtered subquery, a filter per branch", 14, {
        "d1": [
            ("id", ["mi.src.id IDENTITY"], None, ["mi.src.amt FILTER", "mi.src.status FILTER"]),
            ("name", ["mi.src.name TRANSFORMATION"], "upper(name)", ["mi.src.amt FILTER", "mi.src.status FILTER"])],
        "d2": [
            ("id", ["mi.src.id IDENTITY"], None, ["mi.src.amt FILTER", "mi.src.status FILTER"]),
            ("doubled", ["mi.src.amt TRANSFORMATION"], "(amt * 2.0)",
             ["mi.src.amt FILTER", "mi.src.status FILTER"])]}),
    ("multi_insert", "three tables (copy, group by, Hive SerDe table with a filter; AQE)", 16, {
        "d1": [
            ("id", ["mi.src.id IDENTITY"], None, []),
            ("name", ["mi.src.name IDENTITY"], None, [])],
        "d3": [
            ("status", ["mi.src.status IDENTITY"], None, ["mi.src.status GROUP_BY"]),
            ("total", ["mi.src.amt AGGREGATION"], "sum(amt)", ["mi.src.status GROUP_BY"])],
        "dh": [
            ("id", ["mi.src.id IDENTITY"], None, ["mi.src.id FILTER"]),
            ("status", ["mi.src.status IDENTITY"], None, ["mi.src.id FILTER"])]}),
    ("multi_insert", "one table written by two branches: one flow per branch", 18, {
        "d1": [
            ("id", ["mi.src.id IDENTITY"], None, ["mi.src.status FILTER"]),
            ("name", ["mi.src.name IDENTITY"], None, ["mi.src.status FILTER"]),
            ("id", ["mi.src.id IDENTITY"], None, ["mi.src.amt FILTER"]),
            ("name", ["mi.src.status IDENTITY"], None, ["mi.src.amt FILTER"])]}),
    # the directory branch is an InsertIntoDataSourceDirCommand whose logical plan runs in
    # nested execution 21; this plan writes only the table
    ("multi_insert", "a directory and a table: the table's branch", 20, {
        "d2": [
            ("id", ["mi.src.id IDENTITY"], None, ["mi.src.status FILTER"]),
            ("doubled", ["mi.src.amt TRANSFORMATION"], "(amt + 1.0)", ["mi.src.status FILTER"])]}),
    ("multi_insert", "a directory and a table: the directory's nested insert", 21, {
        "mi_dir": [
            ("id", ["mi.src.id IDENTITY"], None, ["mi.src.amt FILTER"]),
            ("name", ["mi.src.name IDENTITY"], None, ["mi.src.amt FILTER"])]}),
    # Spark plans the shared aggregate once per branch (each with the branch's filters pushed
    # down), with the branch's own ids; `n > 1` filters on a count, which reads no column
    ("multi_insert", "a shared aggregate, filtered differently per branch (AQE)", 23, {
        "d3": [
            ("status", ["mi.src.status IDENTITY"], None, ["mi.src.status GROUP_BY"]),
            ("total", ["mi.src.amt AGGREGATION"], "sum(amt)", ["mi.src.status GROUP_BY"])],
        "d2": [
            ("id", [], "count(1)", ["mi.src.status FILTER,GROUP_BY"]),
            ("doubled", ["mi.src.amt AGGREGATION"], "(sum(amt) * 2.0)", ["mi.src.status FILTER,GROUP_BY"])]}),
    # a self-join: the join keys are mi.src.id on both sides, a data source of each id column
    ("multi_insert", "a shared join, a filter in one branch (AQE, broadcast)", 25, {
        "d1": [
            ("id", ["mi.src.id IDENTITY"], None, ["mi.src.amt FILTER", "mi.src.id FILTER,JOIN"]),
            ("name", ["mi.src.name IDENTITY"], None, ["mi.src.amt FILTER", "mi.src.id FILTER,JOIN"])],
        "d2": [
            ("id", ["mi.src.id IDENTITY"], None, ["mi.src.id FILTER,JOIN"]),
            ("doubled", ["mi.src.amt IDENTITY"], None, ["mi.src.id FILTER,JOIN"])]}),
    # InsertIntoHiveDirCommand writes its Input (no WriteFiles) to its (LOCAL) directory
    ("multi_insert", "a Hive-format directory and a table", 27, {
        "mi_hive_dir": [
            ("name", ["mi.src.name IDENTITY"], None, []),
            ("status", ["mi.src.status IDENTITY"], None, [])],
        "d1": [
            ("id", ["mi.src.id IDENTITY"], None, ["mi.src.amt FILTER"]),
            ("name", ["mi.src.name IDENTITY"], None, ["mi.src.amt FILTER"])]}),
    # path_columns: path writes (InsertIntoHadoopFsRelationCommand without a table), and the
    # directory commands of INSERT OVERWRITE DIRECTORY
    ("path_columns", 'df.write.parquet(path) from a csv path', 4, {
        'staged_parquet': [
            ('id', ['people_csv:id IDENTITY'], None, ['people_csv:amt FILTER']),
            ('name', ['people_csv:name TRANSFORMATION'], 'upper(name)', ['people_csv:amt FILTER']),
            ('region', ['people_csv:region IDENTITY'], None, ['people_csv:amt FILTER']),
            ('amt2', ['people_csv:amt TRANSFORMATION'], '(amt * 2.0)', ['people_csv:amt FILTER']),
        ],
    }),
    ("path_columns", 'DataFrameWriter.save (orc): a dotted column from a parquet path', 8, {
        'names_orc': [
            ('id', ['staged_parquet:id IDENTITY'], None, []),
            ('who.name', ['staged_parquet:name IDENTITY'], None, []),
        ],
    }),
    ("path_columns", 'INSERT OVERWRITE DIRECTORY ... USING parquet: the nested insert', 13, {
        'dir_parquet': [
            ('id', ['pc.src.id IDENTITY'], None, ['pc.src.amt FILTER']),
            ('lname', ['pc.src.name TRANSFORMATION'], 'lower(name)', ['pc.src.amt FILTER']),
        ],
    }),
    ("path_columns", "Hive-format INSERT OVERWRITE DIRECTORY: InsertIntoHiveDirCommand's Input", 15, {
        'dir_hive': [
            ('name', ['pc.src.name IDENTITY'], None, ['pc.src.id FILTER']),
            ('(amt + 1)', ['pc.src.amt TRANSFORMATION'], '(amt + 1.0)', ['pc.src.id FILTER']),
        ],
    }),
    ("path_columns", 'INSERT OVERWRITE LOCAL DIRECTORY (Hive format)', 17, {
        'dir_local': [
            ('id', ['pc.src.id IDENTITY'], None, []),
            ('name', ['pc.src.name IDENTITY'], None, []),
        ],
    }),
    ("path_columns", 'a directory written by INSERT OVERWRITE DIRECTORY, read into a table', 19, {
        'src': [
            ('id', ['dir_parquet:id IDENTITY'], None, []),
            ('name', ['dir_parquet:lname IDENTITY'], None, []),
            ('amt', [], '0.0', []),
        ],
    }),
    # unplanned_writes: no WriteFiles (Spark 3.0-3.3, plannedWrite disabled): the commands'
    # own Input; the Union above them carries no columns from one branch to the other
    ("unplanned_writes", "multi-insert without WriteFiles (parquet and Hive SerDe tables)", 14, {
        "d1": [
            ("id", ["mi.src.id IDENTITY"], None, ["mi.src.amt FILTER"]),
            ("name", ["mi.src.name TRANSFORMATION"], "upper(name)", ["mi.src.amt FILTER"])],
        "dh": [
            ("id", ["mi.src.id IDENTITY"], None, ["mi.src.status FILTER"]),
            ("status", ["mi.src.status IDENTITY"], None, ["mi.src.status FILTER"])]}),
    ("unplanned_writes", "ORDER BY ... LIMIT without WriteFiles: TakeOrderedAndProject under the command", 16, {
        "d2": [
            ("id", ["mi.src.id IDENTITY"], None, ["mi.src.name SORT"]),
            ("doubled", ["mi.src.amt TRANSFORMATION"], "(amt * 2.0)", ["mi.src.name SORT"])]}),
    ("unplanned_writes", "CTAS without WriteFiles: the nested insert names the table's location", 19, {
        "c": [
            ("id", ["mi.src.id IDENTITY"], None, ["mi.src.amt FILTER"]),
            ("u", ["mi.src.name TRANSFORMATION"], "upper(name)", ["mi.src.amt FILTER"])]}),
    ("unplanned_writes", "Hive CTAS without WriteFiles: InsertIntoHiveTable over AdaptiveSparkPlan", 22, {
        "ch": [
            ("status", ["mi.src.status IDENTITY"], None, ["mi.src.status GROUP_BY"]),
            ("total", ["mi.src.amt AGGREGATION"], "sum(amt)", ["mi.src.status GROUP_BY"])]}),
]


@pytest.mark.parametrize(("case", "what", "execution_id", "expected"), PLAN_CASES,
                         ids=[f"{c[0]}-{c[2]}" for c in PLAN_CASES])
def test_column_flows(case: str, what: str, execution_id: int, expected: list[Flow]) -> None:
    flows = column_flows(plan_descriptions(case, execution_id)[-1])
    got = [flow_text(f) for f in flows]
    assert got == expected, what


@pytest.mark.parametrize(("case", "what", "execution_id", "expected"), MULTI_WRITE_CASES,
                         ids=[f"{c[0]}-{c[2]}" for c in MULTI_WRITE_CASES])
def test_column_flows_per_write(case: str, what: str, execution_id: int,
                                expected: dict[str, list[Flow]]) -> None:
    got: dict[str, list[Flow]] = {}
    for flow in column_flows(plan_descriptions(case, execution_id)[-1]):
        if flow.write is None:
            dataset = "?"
        else:
            dataset = flow.write.table.name if flow.write.table else str(flow.write.path).rsplit("/", 1)[-1]
        got.setdefault(dataset, []).append(flow_text(flow))
    assert got == expected, what


# view_subqueries: each body (capture.py SUBQUERY_BODIES) as a CTAS `vs.t_<body>` and as a view
# `vs.v_<body>`; a view's plan is the analysed one (subquery expressions in a Filter or Project),
# a CTAS's the optimised one (the semi / anti / existence / outer joins Spark makes of them). Both
# give the edges written here from the SQL: an IN's compared columns and a subquery's
# correlation are JOIN controls, its other conditions FILTER; a correlated scalar subquery's
# value is grouped by its correlated column. (written column, source, subtype) per control edge,
# (written column, source, subtype, expression) per data edge.
Edge = tuple[str, str, str] | tuple[str, str, str, str | None]


def _controls(columns: tuple[str, ...], controls: dict[str, str]) -> list[Edge]:
    return [(column, f"vs.{source}", subtype) for column in columns for source, subtype in controls.items()]


def _copies(table: str, *columns: str) -> list[Edge]:
    return [(column, f"vs.{table}.{column}", "IDENTITY", None) for column in columns]


_IN_CONTROLS = {"customers.customer_id": "JOIN", "orders.customer_id": "JOIN"}
SUBQUERY_VIEWS: list[tuple[str, list[Edge], dict[tuple[str, str], str]]] = [
    # (body, the view's edges, what the CTAS's optimised plan says otherwise: (column, source) ->
    # its control subtypes there)
    ("in_list", _copies("customers", "customer_id", "name") + _controls(
        ("customer_id", "name"), {**_IN_CONTROLS, "orders.status": "FILTER"}), {}),
    ("not_in", _copies("customers", "customer_id", "name") + _controls(("customer_id", "name"), _IN_CONTROLS), {}),
    # o.customer_id = c.customer_id correlates (JOIN); o.amount > 10 filters the subquery's rows
    ("exists", _copies("customers", "name") + _controls(("name",), {**_IN_CONTROLS, "orders.amount": "FILTER"}), {}),
    ("not_exists", _copies("customers", "name", "region") + _controls(
        ("name", "region"), {"customers.region": "JOIN", "regions.region": "JOIN", "regions.manager": "FILTER"}), {}),
    # the correlation o.status = c.region joins too
    ("correlated_in", _copies("customers", "name") + _controls(
        ("name",), {**_IN_CONTROLS, "customers.region": "JOIN", "orders.status": "JOIN"}), {}),
    # IN ... OR region = 'eu': an existence join, then the filter
    ("in_or", _copies("customers", "customer_id", "name") + _controls(
        ("customer_id", "name"), {**_IN_CONTROLS, "customers.region": "FILTER"}), {}),
    # uncorrelated: the subquery's value (an avg of amount) filters
    ("scalar", _copies("orders", "order_id", "amount") + _controls(("order_id", "amount"), {"orders.amount": "FILTER"}),
     {}),
    # correlated: joined on customer_id, the avg grouped by it. Spark's optimiser adds
    # isnotnull(customer_id) filters and moves `amount > avg` into the join's condition.
    ("correlated_scalar", _copies("orders", "order_id", "amount") + _controls(
        ("order_id", "amount"), {"orders.amount": "FILTER", "orders.customer_id": "JOIN,GROUP_BY"}),
     {(column, source): subtypes for column in ("order_id", "amount") for source, subtypes in (
         ("vs.orders.amount", "FILTER,JOIN"), ("vs.orders.customer_id", "FILTER,JOIN,GROUP_BY"))}),
    # in the select list: a left outer join of the grouped subquery; the value is max(amount)
    ("scalar_in_select", [("customer_id", "vs.customers.customer_id", "IDENTITY", None),
                          ("top", "vs.orders.amount", "AGGREGATION", "max(amount)")] + _controls(
        ("customer_id", "top"), {"customers.customer_id": "JOIN", "orders.customer_id": "JOIN,GROUP_BY"}),
     {(column, "vs.orders.customer_id"): "FILTER,JOIN,GROUP_BY" for column in ("customer_id", "top")}),
]


def _dataset_edges(case: str) -> dict[str, set[Edge]]:
    """Written dataset (`db.name`) -> its column edges in the records' terms."""
    run, _records = process_lines(fixture_lines(case), cluster=CLUSTER, default_fs=DEFAULT_FS)
    found: dict[str, set[Edge]] = {}
    for execution in run.executions:
        for dataset in execution.outputs:
            name = dataset.ref.qualified_name.split("@")[0]
            edges = found.setdefault(name, set())
            for edge in execution.columns:
                if edge.target.qualified_name.split("@")[0].rsplit(".", 1)[0] != name:
                    continue
                column, source = edge.target.qualified_name.split("@")[0].rsplit(".", 1)[1], \
                    edge.source.qualified_name.split("@")[0]
                edges.add((column, source, edge.subtype, edge.expression) if edge.kind is RelationType.DATA_FLOW
                          else (column, source, edge.subtype))
    return found


@pytest.mark.parametrize(("body", "expected", "optimised"), SUBQUERY_VIEWS, ids=[c[0] for c in SUBQUERY_VIEWS])
def test_views_with_subqueries_have_the_edges_of_a_ctas(body: str, expected: list[Edge],
                                                       optimised: dict[tuple[str, str], str]) -> None:
    """A view of a body with IN / NOT IN / EXISTS / NOT EXISTS / scalar subqueries (its plan
    the analysed one) gets the edges a CTAS of the same body (its plan the optimised one) gets."""
    edges = _dataset_edges("view_subqueries")
    assert edges[f"vs.v_{body}"] == set(expected)
    ctas = {(e[0], e[1], optimised.get((e[0], e[1]), e[2])) if len(e) == 3 else e for e in expected}
    assert edges[f"vs.t_{body}"] == ctas


def test_multi_insert_records_give_each_table_its_own_columns() -> None:
    """The multi-insert into d1 and d2: each target column has its own branch's edges, and the
    execution no longer says `several tables written by one plan`."""
    run, recs = process_lines(fixture_lines("multi_insert"), cluster=CLUSTER, default_fs=DEFAULT_FS)
    (execution,) = [e for e in run.executions if e.execution_id == 14]
    assert execution.column_notes == ()
    edges = {(e.target.qualified_name, e.kind.value, e.source.qualified_name, e.dependency_type, e.expression,
              e.subtype) for e in execution.columns}
    assert edges == {
        ("mi.d1.id@primary", "DATA_FLOW", "mi.src.id@primary", DependencyType.SIMPLE, None, "IDENTITY"),
        ("mi.d1.id@primary", "CONTROL_FLOW", "mi.src.amt@primary", None, None, "FILTER"),
        ("mi.d1.id@primary", "CONTROL_FLOW", "mi.src.status@primary", None, None, "FILTER"),
        ("mi.d1.name@primary", "DATA_FLOW", "mi.src.name@primary", DependencyType.EXPRESSION, "upper(name)",
         "TRANSFORMATION"),
        ("mi.d1.name@primary", "CONTROL_FLOW", "mi.src.amt@primary", None, None, "FILTER"),
        ("mi.d1.name@primary", "CONTROL_FLOW", "mi.src.status@primary", None, None, "FILTER"),
        ("mi.d2.id@primary", "DATA_FLOW", "mi.src.id@primary", DependencyType.SIMPLE, None, "IDENTITY"),
        ("mi.d2.id@primary", "CONTROL_FLOW", "mi.src.amt@primary", None, None, "FILTER"),
        ("mi.d2.id@primary", "CONTROL_FLOW", "mi.src.status@primary", None, None, "FILTER"),
        ("mi.d2.doubled@primary", "DATA_FLOW", "mi.src.amt@primary", DependencyType.EXPRESSION, "(amt * 2.0)",
         "TRANSFORMATION"),
        # amt is filtered (`amt > 0` in the shared subquery) and doubled: both facts
        ("mi.d2.doubled@primary", "CONTROL_FLOW", "mi.src.amt@primary", None, None, "FILTER"),
        ("mi.d2.doubled@primary", "CONTROL_FLOW", "mi.src.status@primary", None, None, "FILTER"),
    }
    # a directory and a table from one statement: each has its own columns, the directory's
    # (written by the nested execution) as HDFS FIELDs of the directory
    mi_dir = "file:///tmp/navd-capture/output/mi_dir"
    (mixed,) = [e for e in run.executions if e.execution_id == 20]
    assert [o.ref.qualified_name for o in mixed.outputs] == [mi_dir, "mi.d2@primary"]
    assert {e.target.qualified_name for e in mixed.columns} == {
        "mi.d2.id@primary", "mi.d2.doubled@primary", f"{mi_dir}#id", f"{mi_dir}#name"}
    assert mixed.column_notes == ()
    # a Hive-format LOCAL directory (InsertIntoHiveDirCommand) next to a table: each its own
    mi_hive_dir = "file:///tmp/navd-capture/output/mi_hive_dir"
    (hive_dir,) = [e for e in run.executions if e.execution_id == 27]
    assert [o.ref.qualified_name for o in hive_dir.outputs] == [mi_hive_dir, "mi.d1@primary"]
    assert {(e.target.qualified_name, e.kind.value, e.source.qualified_name) for e in hive_dir.columns
            if e.target.source_type is SourceType.HDFS} == {
        (f"{mi_hive_dir}#name", "DATA_FLOW", "mi.src.name@primary"),
        (f"{mi_hive_dir}#status", "DATA_FLOW", "mi.src.status@primary")}
    assert {e.target.qualified_name for e in hive_dir.columns} >= {"mi.d1.id@primary", "mi.d1.name@primary"}
    assert hive_dir.column_notes == ()


@pytest.mark.parametrize(("expression", "deciding", "valued"), [
    ("CASE WHEN (x#1 > 0) THEN y#2 ELSE z#3 END", {1}, {2, 3}),
    # Spark's If, a column both deciding and in a value
    ("if ((x#1 > 0)) y#2 else (z#3 + x#1)", {1}, {1, 2, 3}),
    # nested: a CASE in a THEN value decides only its own branch; a function around a condition
    ("CASE WHEN (a#1 = 1) THEN CASE WHEN (b#2 > c#3) THEN d#4 END WHEN isnull(e#5) THEN f#6 ELSE g#7 END",
     {1, 2, 3, 5}, {4, 6, 7}),
    ("upper(coalesce(CASE WHEN isnotnull(k#1) THEN k#1 END, v#2))", {1}, {1, 2}),
    # a column named like a keyword is a column
    ("upper(END#3)", set(), {3}),
])
def test_branch_conditions_are_told_from_branch_values(expression: str, deciding: set[int], valued: set[int]) -> None:
    """The pure split behind CONDITIONAL controls, on CASE WHEN / If texts as Spark prints them
    (the captured column_usage case covers them in real plans)."""
    assert branch_ids(expression) == (deciding, valued)


def test_alias_in_the_arguments_of_any_node_defines_its_column() -> None:
    """A hand-made formatted plan (NOT a captured one: no PySpark job plans a typed Dataset
    operator): SerializeFromObject's serializer, the shape of a node that projects in its
    `Arguments` without an `Output`, defines the written column."""
    plan = (
        "== Physical Plan ==\nExecute InsertIntoHiveTable (4)\n+- WriteFiles (3)\n"
        "   +- SerializeFromObject (2)\n      +- Scan parquet spark_catalog.db.src (1)\n\n\n"
        "(1) Scan parquet spark_catalog.db.src\nOutput [1]: [c#1]\n\n"
        "(2) SerializeFromObject\nInput [1]: [c#1]\nArguments: [upper(c#1) AS u#2]\n\n"
        "(3) WriteFiles\nInput [1]: [u#2]\n\n"
        "(4) Execute InsertIntoHiveTable\nInput: []\nArguments: `spark_catalog`.`db`.`dst`, Serde, false\n"
    )
    (flow,) = column_flows(plan)
    assert (flow.target, [s.column for s in flow.sources], flow.expression) == ("u", ["c"], "upper(c)")
    assert flow.write is not None and flow.write.table is not None and flow.write.table.name == "dst"


# --- the records: one compact golden file per fixture -----------------------------------------

def column_summary(case: str) -> dict[str, Any]:
    run, recs = process_lines(fixture_lines(case), cluster=CLUSTER, default_fs=DEFAULT_FS)
    executions = {e.qualified_name: e for e in recs if isinstance(e, Element)
                  and e.type is ElementType.OPERATION_EXECUTION and e.parent is not None}
    out: dict[str, Any] = {}
    for qn, element in sorted(executions.items(), key=lambda kv: int(kv[0].rsplit("/", 1)[1])):
        edges = [r for r in recs if isinstance(r, Relation) and r.discriminator == qn
                 and r.endpoint2.type is ElementType.FIELD]
        skipped = element.properties.get("columnLineageSkipped")
        if not edges and not skipped and "columnLineageIncomplete" not in element.properties:
            continue
        columns: dict[str, dict[str, list[str]]] = {}
        for edge in edges:
            entry = columns.setdefault(edge.endpoint2.qualified_name, {"data": [], "control": []})
            subtype = edge.properties.get("subtype", "")
            if edge.type is RelationType.DATA_FLOW:
                text = f"{edge.endpoint1.qualified_name} {edge.dependency_type} {subtype}"
                entry["data"].append(text + (f": {edge.expression}" if edge.expression else ""))
            else:
                entry["control"].append(f"{edge.endpoint1.qualified_name} {subtype}")
        item: dict[str, Any] = {"sql": element.query_text or element.description}
        if skipped:
            item["skipped"] = skipped
        if "columnLineageIncomplete" in element.properties:
            item["incomplete"] = element.properties["columnLineageIncomplete"]
        item["columns"] = columns
        out["sql/" + qn.rsplit("/", 1)[1]] = item
    return out


@pytest.mark.parametrize("case", CASES)
def test_column_golden(case: str) -> None:
    got = column_summary(case)
    expected_file = FIXTURES / f"{case}.columns.json"
    if UPDATE:
        expected_file.write_text(json.dumps(got, indent=1) + "\n", encoding="utf-8")
    assert got == json.loads(expected_file.read_text(encoding="utf-8"))


def test_ctas_expression_column_records() -> None:
    """The CTAS case spelled out: sales.s.c@primary -> sales.t.u@primary, EXPRESSION upper(c)
    (a TRANSFORMATION); c is also filtered (`where c is not null`): a FILTER control as well."""
    run, recs = process_lines(fixture_lines("ctas_expression"), cluster=CLUSTER, default_fs=DEFAULT_FS)
    (execution,) = [e for e in run.executions if e.columns]
    element_qn = f"spark://{run.app_id}/1/sql/{execution.execution_id}"
    fields = [r for r in recs if isinstance(r, Relation) and r.endpoint2.type is ElementType.FIELD]
    assert [(r.type, r.endpoint1.qualified_name, r.endpoint2.qualified_name, r.dependency_type, r.expression,
             dict(r.properties), r.discriminator, r.linked1, r.linked2) for r in fields] == [
        (RelationType.CONTROL_FLOW, "sales.s.c@primary", "sales.t.u@primary", None, None,
         {"subtype": "FILTER"}, element_qn, False, False),
        (RelationType.DATA_FLOW, "sales.s.c@primary", "sales.t.u@primary", DependencyType.EXPRESSION, "upper(c)",
         {"subtype": "TRANSFORMATION"}, element_qn, False, False)]
    assert {r.endpoint1.source_type for r in fields} == {SourceType.HIVE}
    assert {r.endpoint1.type for r in fields} == {ElementType.FIELD}


def test_dotted_column_records() -> None:
    """Columns named `b.c`, `a b`, `ünï` are columns of their own tables: every FIELD endpoint
    and stub reads back (names.split_field) to a table the job read or wrote, never a phantom
    `dc.src.b@primary`; the renames are SIMPLE."""
    run, recs = process_lines(fixture_lines("dotted_columns"), cluster=CLUSTER, default_fs=DEFAULT_FS)
    edges = [r for r in recs if isinstance(r, Relation) and r.endpoint2.type is ElementType.FIELD]
    datasets = {d.ref.qualified_name for e in run.executions for d in (*e.inputs, *e.outputs)}
    stubbed = list(stubs_for(recs, None))
    tables = {r.endpoint1.qualified_name for r in stubbed
              if isinstance(r, Relation) and r.type is RelationType.PARENT_CHILD}
    assert tables == {"dc.src@primary", "dc.renamed@primary", "dc.target@primary", "dc.df_renamed@primary"}
    assert tables <= datasets
    names = {s.element.qualified_name: s.element.name for s in stubbed if isinstance(s, ElementStub)}
    assert names["dc.src.b.c@primary"] == "b.c" and names["dc.target.w`x@primary"] == "w`x"
    by_target = {(r.endpoint2.qualified_name, r.type): r for r in edges}
    renamed = by_target[("dc.renamed.p q@primary", RelationType.DATA_FLOW)]
    assert (renamed.endpoint1.qualified_name, renamed.dependency_type, renamed.expression) == (
        "dc.src.a b@primary", DependencyType.SIMPLE, None)
    upper = by_target[("dc.renamed.up.per@primary", RelationType.DATA_FLOW)]
    assert (upper.dependency_type, upper.expression) == (DependencyType.EXPRESSION, "upper(b.c)")
    assert ("dc.renamed.ünï.zwei@primary", RelationType.DATA_FLOW) in by_target  # lower case, as Hive


# --- argument lists cut by Spark (spark.sql.debug.maxToStringFields, 25 items) ----------------
#
# wide_arguments: 30 window functions, a ROLLUP over 30 aggregates, 30 count(distinct ...),
# 30 Python UDFs, a 30-column ORDER BY ... LIMIT (with its projection below it, and in its own
# cut project list), a generator with 30 outputs. Either the exact edges are recovered, or the
# column says why it may miss sources: never a silent gap.

#: (written column, ["source DATA_SUBTYPE"], expression, ["control CONTROL_SUBTYPES"], incomplete)
WideFlow = tuple[str, list[str], str | None, list[str], str | None]
_WIDE = range(30)
_CUT = range(25)   # the items Spark prints of a cut list
_OVER = "OVER (PARTITION BY g ORDER BY o ASC NULLS FIRST)"
_WINDOWED = ["wa.src.g WINDOW", "wa.src.o WINDOW"]
_ROLLED_UP = ["wa.src.g GROUP_BY", "wa.src.o GROUP_BY"]
# count(distinct ...) is planned as an Expand whose partial aggregates group by every distinct
# column's copy: each of them (and g) groups every output column
_DISTINCT_KEYS = sorted([f"wa.src.c{i} GROUP_BY" for i in _WIDE] + ["wa.src.g GROUP_BY"])

WIDE_CASES: list[tuple[str, int, list[WideFlow]]] = [
    # Window: the 5 window columns past the cut are unknown (their functions are not in the
    # text), but still partitioned and ordered by the window's spec (printed whole)
    ("30 window functions", 7, [("id", ["wa.src.id IDENTITY"], None, [], None)] + [
        (f"w_c{i}", [f"wa.src.c{i} AGGREGATION"], f"sum(c{i}) {_OVER}", _WINDOWED, None) for i in _CUT] + [
        (f"w_c{i}", [], None, _WINDOWED, "Window arguments cut by Spark") for i in _WIDE if i not in _CUT]),
    # Expand: the grouping columns g, o are past the cut of every projection: recovered by name
    ("ROLLUP over 30 aggregates", 10, [("g", ["wa.src.g IDENTITY"], None, _ROLLED_UP, None),
                                       ("o", ["wa.src.o IDENTITY"], None, _ROLLED_UP, None)] + [
        (f"s_c{i}", [f"wa.src.c{i} AGGREGATION"], f"sum(c{i})", _ROLLED_UP, None) for i in _WIDE]),
    # Expand: 30 projections, 5 of them cut; the distinct copies `spark_catalog.wa.src.c1` by name
    ("30 count(distinct ...)", 13, [("g", ["wa.src.g IDENTITY"], None, _DISTINCT_KEYS, None)] + [
        (f"d_c{i}", [f"wa.src.c{i} AGGREGATION"], f"count(c{i})", _DISTINCT_KEYS, None) for i in _WIDE]),
    ("30 Python UDFs", 16, [("id", ["wa.src.id IDENTITY"], None, [], None)] + [
        (f"u_c{i}", [f"wa.src.c{i} TRANSFORMATION"], f"twice{i}(c{i})", [], None) for i in _CUT] + [
        (f"u_c{i}", [], None, [], "BatchEvalPython arguments cut by Spark") for i in _WIDE if i not in _CUT]),
    # the project list is cut, but it only copies what the Project below it computed
    ("30-column ORDER BY ... LIMIT (CTAS)", 19,
     [("id", ["wa.src.id IDENTITY"], None, ["wa.src.id SORT", "wa.src.o SORT"], None)] + [
        (f"p_c{i}", [f"wa.src.c{i} TRANSFORMATION"], f"(c{i} + 1)", ["wa.src.id SORT", "wa.src.o SORT"], None)
        for i in _WIDE]),
    # into an existing table: TakeOrderedAndProject's own project list renames, cut after id + 24
    # (the columns past the cut are not its output: not even the order is known to reach them)
    ("30-column ORDER BY ... LIMIT (INSERT)", 27, [("id", ["wa.src.id IDENTITY"], None, ["wa.src.o SORT"], None)] + [
        (f"p_c{i}", [f"wa.src.c{i} TRANSFORMATION"], f"(c{i} * 2)", ["wa.src.o SORT"], None) for i in range(24)] + [
        (f"p_c{i}", [], None, [], "TakeOrderedAndProject arguments cut by Spark") for i in range(24, 30)]),
    # a view's analysed plan: the scan's columns past the cut (c22..c29) are recovered from the
    # references to them; the view's own columns past the cut (v_c24..v_c29) are not even named
    ("CREATE VIEW with 31 columns", 24, [("id", ["wa.src.id IDENTITY"], None, [], None)] + [
        (f"v_c{i}", [f"wa.src.c{i} TRANSFORMATION"], f"(c{i} + 1)", [], None) for i in range(24)] + [
        ("", [], None, [], "Project arguments cut by Spark: 6 more columns, not named in the log")]),
]


@pytest.mark.parametrize(("what", "execution_id", "expected"), WIDE_CASES, ids=[c[0] for c in WIDE_CASES])
def test_cut_argument_lists(what: str, execution_id: int, expected: list[WideFlow]) -> None:
    flows = column_flows(plan_descriptions("wide_arguments", execution_id)[-1])
    got = [(*flow_text(f), f.incomplete) for f in flows]
    assert got == expected, what


def test_cut_generator_flags_every_column_it_makes() -> None:
    """`inline(array(struct(c0, ..., c29)))`: the generator itself is cut, so every column it
    makes may miss sources, not only those past the cut of its output list."""
    flows = column_flows(plan_descriptions("wide_arguments", 22)[-1])
    assert [(f.target, f.incomplete) for f in flows] == [("id", None)] + [
        (f"c{i}", "Generate arguments cut by Spark") for i in _WIDE]


def test_cut_window_columns_keep_their_window_controls() -> None:
    """A window column past the cut has no known function, but is still partitioned and ordered
    by the window's spec (the spec is printed whole)."""
    flows = {f.target: f for f in column_flows(plan_descriptions("wide_arguments", 7)[-1])}
    assert flow_text(flows["w_c29"]) == ("w_c29", [], None, ["wa.src.g WINDOW", "wa.src.o WINDOW"])


def test_cut_lists_agree_with_the_same_jobs_uncut() -> None:
    """wide_arguments_raised ran the same statements with spark.sql.debug.maxToStringFields=100
    (nothing cut): every column the cut log gives without an incomplete note has exactly the
    edges of the uncut log (the recovered ROLLUP and count(distinct ...) columns included), and
    every other column is named in the execution's note."""
    cut, full = column_summary("wide_arguments"), column_summary("wide_arguments_raised")
    assert sorted(cut) == sorted(full) and all("incomplete" not in item for item in full.values())
    checked = 0
    for execution, item in cut.items():
        named = set(item.get("incomplete", "").replace(" (", ", ").replace(": ", ", ").split(", "))
        for column, edges in full[execution]["columns"].items():
            table = column.split(".", 2)[0] + "." + column.split(".", 2)[1] + "@primary"
            if column in named or (table in named and column not in item["columns"]):
                continue
            assert item["columns"].get(column) == edges, (execution, column)
            checked += 1
    # window (id + 25), rollup, count(distinct), UDFs (id + 25), CTAS top, inline (id), view (id + 24),
    # insert top (id + 24), struct/concat_ws (id)
    assert checked == 26 + 32 + 31 + 26 + 31 + 1 + 25 + 25 + 1


def test_incomplete_column_lineage_is_said_on_the_execution_and_warned_once(log_stream: Any) -> None:
    """Columns the cut log cannot give sources: named on their execution (`columnLineageIncomplete`,
    why, the setting to raise), and one warning per execution, counted as skipped (the pass
    report's warnings), however often the application is snapshot."""
    processor = ApplicationProcessor(cluster=CLUSTER, default_fs=DEFAULT_FS)
    processor.feed_lines(fixture_lines("wide_arguments"))
    run = processor.finish()
    processor.finish()   # a second snapshot warns again about nothing
    assert processor.finish().skipped == {"column_lineage_incomplete": 6}
    by_table = {e.outputs[0].ref.qualified_name: e for e in run.executions if e.column_incomplete}
    assert sorted(by_table) == ["wa.t_inline@primary", "wa.t_struct@primary", "wa.t_top@primary",
                                "wa.t_udf@primary", "wa.t_window@primary", "wa.v_wide@primary"]
    # `struct(c0, ..., c29)`, `concat_ws(',', c0, ..., c29)`: a list cut inside a Project's Output
    assert by_table["wa.t_struct@primary"].column_incomplete == (
        ("expression cut by Spark", ("wa.t_struct.s@primary", "wa.t_struct.j@primary")),)
    assert by_table["wa.v_wide@primary"].column_incomplete == (
        ("Project arguments cut by Spark: 6 more columns, not named in the log", ("wa.v_wide@primary",)),)
    assert by_table["wa.t_window@primary"].column_incomplete == (
        ("Window arguments cut by Spark", tuple(f"wa.t_window.w_c{i}@primary" for i in range(25, 30))),)
    element = next(r for r in records(run) if isinstance(r, Element) and r.qualified_name.endswith(
        f"/sql/{by_table['wa.t_udf@primary'].execution_id}"))
    assert element.properties["columnLineageIncomplete"] == (
        "BatchEvalPython arguments cut by Spark: "
        + ", ".join(f"wa.t_udf.u_c{i}@primary" for i in range(25, 30))
        + " (raise spark.sql.debug.maxToStringFields)")
    warnings = [json.loads(line) for line in log_stream.getvalue().splitlines()]
    warnings = [w for w in warnings if w["event"].startswith("column lineage incomplete")]
    # one per execution (the nested insert that ran the plan), not one per snapshot
    assert len(warnings) == 6 and len({w["execution_id"] for w in warnings}) == 6
    assert all("spark.sql.debug.maxToStringFields" in w["event"] for w in warnings)
    window = next(w for w in warnings if "w_c25" in w["columns"])
    assert (window["columns"], window["why"]) == (
        "w_c25, w_c26, w_c27, w_c28, w_c29", "Window arguments cut by Spark")


def test_records_are_deterministic() -> None:
    for case in ("column_filters_joins", "column_shapes"):
        first = [r for r in process_lines(fixture_lines(case), cluster=CLUSTER)[1] if isinstance(r, Relation)]
        again = [r for r in process_lines(fixture_lines(case), cluster=CLUSTER)[1] if isinstance(r, Relation)]
        assert [r.identity for r in first] == [r.identity for r in again]
        identities = [r.identity for r in first]
        assert len(identities) == len(set(identities))


def test_aqe_initial_and_final_plans_agree() -> None:
    """AQE re-plans keep the expression ids: every plan of an execution gives the same flows."""
    checked = 0
    for case in CASES:
        executions = set()
        for line in fixture_lines(case):
            event = json.loads(line)
            if event["Event"].endswith("SQLAdaptiveExecutionUpdate"):
                executions.add(event["executionId"])
        for execution_id in sorted(executions):
            results = {column_flows(d) for d in plan_descriptions(case, execution_id)}
            results.discard(())
            assert len(results) <= 1, (case, execution_id)
            checked += 1
    assert checked >= 5


# --- guards and parsing helpers (synthetic text, labelled as such) ----------------------------

def _synthetic_plan(columns: int, expression_size: int = 10) -> str:
    """A hand-made formatted plan (NOT a captured one): scan -> project -> write, `columns` wide."""
    scan = ", ".join(f"c{i}#{i}" for i in range(columns))
    project = ", ".join(f"concat({', '.join([f'c{i}#{i}'] * expression_size)}) AS o{i}#{columns + i}"
                        for i in range(columns))
    written = ", ".join(f"o{i}#{columns + i}" for i in range(columns))
    return (
        "== Physical Plan ==\nExecute InsertIntoHadoopFsRelationCommand (4)\n+- WriteFiles (3)\n"
        "   +- Project (2)\n      +- Scan parquet spark_catalog.db.src (1)\n\n\n"
        f"(1) Scan parquet spark_catalog.db.src\nOutput [{columns}]: [{scan}]\n\n"
        f"(2) Project\nOutput [{columns}]: [{project}]\nInput [{columns}]: [{scan}]\n\n"
        f"(3) WriteFiles\nInput [{columns}]: [{written}]\n\n"
        "(4) Execute InsertIntoHadoopFsRelationCommand\nInput: []\n"
    )


def test_huge_plan_is_refused_quickly() -> None:
    """A 50 MB physicalPlanDescription: no column lineage, noted on the execution, fast, small."""
    huge = _synthetic_plan(10) + ("x" * 1000 + "\n") * (50 * 1024)
    assert len(huge) > 50_000_000 > MAX_PLAN_CHARS
    tracemalloc.start()
    started = time.perf_counter()
    with pytest.raises(PlanTooLarge):
        column_flows(huge)
    processor = ApplicationProcessor(cluster=CLUSTER, default_fs=DEFAULT_FS)
    processor.feed({"Event": "SparkListenerApplicationStart", "App Name": "t", "App ID": "app-1",
                    "Timestamp": 1000, "User": "u"})
    write = {"nodeName": "Execute InsertIntoHiveTable", "simpleString":
             "Execute InsertIntoHiveTable `spark_catalog`.`db`.`dst`, Serde, true", "children": [
                 {"nodeName": "Scan parquet spark_catalog.db.src", "simpleString": "", "children": [],
                  "metadata": {}}], "metadata": {}}
    processor.feed({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
                    "executionId": 0, "description": "x", "time": 1500, "sparkPlanInfo": write,
                    "physicalPlanDescription": huge})
    run = processor.finish()
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    (execution,) = run.executions
    assert execution.columns == ()
    assert execution.column_notes == ("plan too large for column lineage",)
    element = next(r for r in records(run) if isinstance(r, Element) and r.qualified_name.endswith("/sql/0"))
    assert element.properties["columnLineageSkipped"] == "plan too large for column lineage"
    assert elapsed < 2.0
    assert peak < 10_000_000   # the 50 MB string is the caller's; nothing proportional is allocated


def test_wide_plan_under_the_cap_is_read_in_linear_time() -> None:
    """A synthetic plan of ~10 MB (3,000 columns, each a 250-argument expression), read whole, and
    in time linear in its size: compared with a fifth of it read in the same run (linear: 5x,
    quadratic: 25x), not with a wall-clock limit a loaded host would break."""
    plan = _synthetic_plan(3000, expression_size=250)
    assert 8_000_000 < len(plan) < MAX_PLAN_CHARS
    fifth = _synthetic_plan(600, expression_size=250)

    def seconds(text: str) -> float:
        started = time.perf_counter()
        column_flows(text)
        return time.perf_counter() - started

    fifth_seconds = min(seconds(fifth) for _ in range(3))
    started = time.perf_counter()
    flows = column_flows(plan)
    elapsed = time.perf_counter() - started
    assert len(flows) == 3000
    assert flows[7].target == "o7" and [s.column for s in flows[7].sources] == ["c7"]
    assert all(f.expression is not None and len(f.expression) <= MAX_EXPRESSION_CHARS + 3 for f in flows)
    assert flows[0].expression.endswith("...") and flows[0].expression.startswith("concat(c0, c0,")
    assert elapsed / fifth_seconds < 15, (elapsed, fifth_seconds)


def test_references_by_the_plan_s_own_names() -> None:
    """A hand-made plan (NOT a captured one; dotted_columns is the captured case): Spark prints
    a reference as its raw name, so `a b#2` is a copy of the column `a b` (SIMPLE) while
    `NOT flag#1` is an expression over `flag`, and names render whole."""
    scan = "flag#1, a b#2, b.c#3, ünï#4"
    project = "NOT flag#1 AS nf#10, a b#2 AS x#11, upper(b.c#3) AS u#12, concat(ünï#4, a b#2) AS w#13"
    plan = (
        "== Physical Plan ==\nExecute InsertIntoHadoopFsRelationCommand (4)\n+- WriteFiles (3)\n"
        "   +- Project (2)\n      +- Scan parquet spark_catalog.db.src (1)\n\n\n"
        f"(1) Scan parquet spark_catalog.db.src\nOutput [4]: [{scan}]\n\n"
        f"(2) Project\nOutput [4]: [{project}]\nInput [4]: [{scan}]\n\n"
        "(3) WriteFiles\nInput [4]: [nf#10, x#11, u#12, w#13]\n\n"
        "(4) Execute InsertIntoHadoopFsRelationCommand\nInput: []\n"
    )
    assert [(f.target, sorted(map(source_text, f.sources)), f.expression) for f in column_flows(plan)] == [
        ("nf", ["db.src.flag"], "NOT flag"),
        ("x", ["db.src.a b"], None),
        ("u", ["db.src.b.c"], "upper(b.c)"),
        ("w", ["db.src.a b", "db.src.ünï"], "concat(ünï, a b)")]


@pytest.mark.parametrize(("expression", "unwrapped"), [
    ("static_invoke(CharVarcharCodegenUtils.charTypeWriteSideCheck(upper(s#34), 5))", "upper(s#34)"),
    ("concat(static_invoke(CharVarcharCodegenUtils.readSidePadding(c#1, 5)), x)", "concat(c#1, x)"),
    ("static_invoke(CharVarcharCodegenUtils.varcharTypeWriteSideCheck("
     "static_invoke(CharVarcharCodegenUtils.readSidePadding(c#1, 5)), 10))", "c#1"),
    # Spark 3.1-3.3 spelling
    ("staticinvoke(class org.apache.spark.sql.catalyst.util.CharVarcharCodegenUtils, StringType, "
     "charTypeWriteSideCheck, s#34, 5, true, false, true)", "s#34"),
    ("upper(x#1)", "upper(x#1)"),
])
def test_char_varchar_wrappers(expression: str, unwrapped: str) -> None:
    """Hand-written snippets of plan text (a parsing helper's unit test); char_varchar is the
    captured case."""
    assert unwrap_char_varchar(expression) == unwrapped


@pytest.mark.parametrize(("text", "items"), [
    ("[a#1, f(b#2, c#3) AS d#4, map(1, [2, 3])#5]", ["a#1", "f(b#2, c#3) AS d#4", "map(1, [2, 3])#5"]),
    # Window/Expand/Generate arguments: several lists in a row, not one list
    ("[sum(x#1) AS s#2], [p#3], [o#4 ASC NULLS FIRST]", ["[sum(x#1) AS s#2]", "[p#3]", "[o#4 ASC NULLS FIRST]"]),
    ("[[a#1, 0], [null, 1]], [a#5, g#6L]", ["[[a#1, 0], [null, 1]]", "[a#5, g#6L]"]),
    ("", []),
])
def test_split_list(text: str, items: list[str]) -> None:
    """Hand-written snippets of plan text (a parsing helper's unit test)."""
    assert split_list(text) == items


def _split_list_reference(text: str) -> list[str]:
    """split_list as first written: one character at a time (every bracket kind alike; a comma
    splits at depth 0; the outer brackets go when the first one closes at the very end)."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        depth, closing = 0, -1
        for index, ch in enumerate(text):
            depth += ch in "([{"
            depth -= ch in ")]}"
            if ch in ")]}" and depth == 0:
                closing = index
                break
        if closing == len(text) - 1:
            text = text[1:-1]
    items, depth, start = [], 0, 0
    for index, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:index].strip())
            start = index + 1
    if text[start:].strip():
        items.append(text[start:].strip())
    return items


@pytest.mark.parametrize("text", [
    "[a#1, , b#2,]", "[", "]", "[]", "[(a]", "[a), (b]", "a), (b, c", "[a], [b]", "[[a, b]",
    "{x, y}, (z, w)", "[a#1, b#2L]  ", " x, y ", "(]", "[a, (b], c)", ",", "[,]", "[ , ]",
])
def test_split_list_edge_cases_match_the_reference(text: str) -> None:
    """Unbalanced and odd texts split as the character-by-character reading splits them."""
    assert split_list(text) == _split_list_reference(text)


def test_split_list_matches_the_reference_on_random_texts() -> None:
    """split_list counts brackets per comma-separated piece (str.count): same items as reading
    one character at a time, on random bracket/comma soups."""
    rng = random.Random(20260101)
    for _ in range(20000):
        text = "".join(rng.choice("()[]{},  ab#1") for _ in range(rng.randint(0, 16)))
        if rng.random() < 0.3:
            text = f"[{text}]"
        assert split_list(text) == _split_list_reference(text), text


PC_OUT = "file:///tmp/navd-capture/output"


def test_path_pipeline_has_column_lineage_end_to_end() -> None:
    """path_columns: csv -> transform -> parquet path -> a later job reads
    that path -> saveAsTable. The written directory's columns are HDFS FIELDs named from the
    output schema, children of the directory; the reading job's sources are the same FIELDs, so
    a column walk from the table reaches the csv's columns through the parquet directory."""
    run, recs = process_lines(fixture_lines("path_columns"), cluster=CLUSTER, default_fs=DEFAULT_FS)
    by_id = {e.execution_id: e for e in run.executions}
    staged = f"{PC_OUT}/staged_parquet"
    written = {e.target.qualified_name for e in by_id[4].columns}
    assert written == {f"{staged}#id", f"{staged}#name", f"{staged}#region", f"{staged}#amt2"}
    assert all(e.target.source_type is SourceType.HDFS and e.target.type is ElementType.FIELD
               for e in by_id[4].columns)
    read = {e.source.qualified_name for e in by_id[5].columns}
    assert read == {f"{staged}#region", f"{staged}#amt2"} <= written
    assert by_id[4].column_notes == by_id[5].column_notes == ()
    # the stubs: each path column a FIELD child of its DIRECTORY, named by its column
    stubbed = list(stubs_for(recs, None))
    parents = {(r.endpoint1.qualified_name, r.endpoint1.type, r.endpoint2.qualified_name) for r in stubbed
               if isinstance(r, Relation) and r.type is RelationType.PARENT_CHILD}
    assert (staged, ElementType.DIRECTORY, f"{staged}#amt2") in parents
    names = {s.element.qualified_name: s.element.name for s in stubbed if isinstance(s, ElementStub)}
    assert names[f"{staged}#amt2"] == "amt2"
    assert names[f"{PC_OUT}/names_orc#who.name"] == "who.name"   # a dotted column: one column
    # a column walk upstream from the table: table <- parquet directory <- csv directory (the
    # csv was written outside any logged job: indexed by the HDFS extractor, as on a cluster)
    csv = "file:///tmp/navd-capture/input/people_csv"
    indexed = Element(SourceType.HDFS, ElementType.DIRECTORY, csv, name="people_csv")
    store = MemoryLineageStore.of([indexed, *recs, *stubbed])
    graph = lineage(store, "pc.region_totals.total@primary", LineageOptions(direction="upstream", columns=True))
    qns = {n.id: n.qualified_name for n in graph.nodes}
    edges = {(qns[e.source], qns[e.target], e.type, e.dependency_type) for e in graph.edges}
    assert {(f"{staged}#amt2", "pc.region_totals.total@primary", "DATA_FLOW", "EXPRESSION"),
            (f"{staged}#region", "pc.region_totals.total@primary", "CONTROL_FLOW", None),
            (f"{csv}#amt", f"{staged}#amt2", "DATA_FLOW", "EXPRESSION"),
            (f"{csv}#region", f"{staged}#region", "DATA_FLOW", "SIMPLE"),
            (f"{csv}#amt", f"{staged}#region", "CONTROL_FLOW", None)} <= edges


def test_insert_overwrite_directory_columns() -> None:
    """INSERT OVERWRITE DIRECTORY in both formats: USING parquet (InsertIntoDataSourceDirCommand:
    the nested insert's fully qualified path, the command's own spelling folded into it) and
    Hive format (InsertIntoHiveDirCommand, LOCAL on the driver's file system); a later job
    reading the parquet directory continues from the same FIELDs."""
    run, _ = process_lines(fixture_lines("path_columns"), cluster=CLUSTER, default_fs=DEFAULT_FS)
    by_id = {e.execution_id: e for e in run.executions}

    def edges(execution_id: int) -> set[tuple[str, str, str, str | None]]:
        return {(e.source.qualified_name, e.target.qualified_name, e.kind.value,
                 e.dependency_type.value if e.dependency_type else None) for e in by_id[execution_id].columns}

    parquet_dir = f"{PC_OUT}/dir_parquet"
    assert [o.ref.qualified_name for o in by_id[12].outputs] == [parquet_dir]
    assert edges(12) == {
        ("pc.src.id@primary", f"{parquet_dir}#id", "DATA_FLOW", "SIMPLE"),
        ("pc.src.amt@primary", f"{parquet_dir}#id", "CONTROL_FLOW", None),
        ("pc.src.name@primary", f"{parquet_dir}#lname", "DATA_FLOW", "EXPRESSION"),
        ("pc.src.amt@primary", f"{parquet_dir}#lname", "CONTROL_FLOW", None)}
    # not LOCAL: the default file system (here the configured one) qualifies the bare path
    hive_dir = f"{DEFAULT_FS}/tmp/navd-capture/output/dir_hive"
    assert [o.ref.qualified_name for o in by_id[15].outputs] == [hive_dir]
    assert {(s, t, k) for s, t, k, _ in edges(15)} == {
        ("pc.src.name@primary", f"{hive_dir}#name", "DATA_FLOW"),
        ("pc.src.id@primary", f"{hive_dir}#name", "CONTROL_FLOW"),
        ("pc.src.amt@primary", f"{hive_dir}#(amt + 1)", "DATA_FLOW"),
        ("pc.src.id@primary", f"{hive_dir}#(amt + 1)", "CONTROL_FLOW")}
    local_dir = f"{PC_OUT}/dir_local"
    assert [o.ref.qualified_name for o in by_id[17].outputs] == [local_dir]
    assert edges(17) == {("pc.src.id@primary", f"{local_dir}#id", "DATA_FLOW", "SIMPLE"),
                         ("pc.src.name@primary", f"{local_dir}#name", "DATA_FLOW", "SIMPLE")}
    assert edges(19) == {(f"{parquet_dir}#id", "pc.src.id@primary", "DATA_FLOW", "SIMPLE"),
                         (f"{parquet_dir}#lname", "pc.src.name@primary", "DATA_FLOW", "SIMPLE")}
    assert all(not by_id[i].column_notes for i in (12, 15, 17, 19))


@pytest.mark.parametrize(("execution_id", "writes"), [
    # USING parquet: the `Execute` node has no arguments; the description's inner node names
    # the directory as the statement spelled it (its nested insert, execution 13, qualifies it)
    (12, {("InsertIntoDataSourceDirCommand", "/tmp/navd-capture/output/dir_parquet")}),
    (13, {("InsertIntoHadoopFsRelationCommand", "file:/tmp/navd-capture/output/dir_parquet")}),
    # Hive format: the default file system's directory; LOCAL: the driver's (file:)
    (15, {("InsertIntoHiveDirCommand", "/tmp/navd-capture/output/dir_hive")}),
    (17, {("InsertIntoHiveDirCommand", "file:/tmp/navd-capture/output/dir_local")}),
])
def test_insert_overwrite_directory_is_a_write_of_its_path(execution_id: int, writes: set[tuple[str, str]]) -> None:
    for line in fixture_lines("path_columns"):
        event = json.loads(line)
        if event["Event"].endswith("SQLExecutionStart") and event["executionId"] == execution_id:
            io = plan_io(event["sparkPlanInfo"], event["physicalPlanDescription"])
            assert {(w.command, w.path) for w in io.writes if w.table is None} == writes
            assert io.unparsed == ()
            return
    raise AssertionError(f"no execution {execution_id}")


# --- the known gaps (docs/spark-conformance.md): table lineage and a columnLineageSkipped reason --

def _plan_node(name: str, simple: str = "", children: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"nodeName": name, "simpleString": simple or name, "children": children or [], "metadata": {}}


def _one_execution(plan: dict[str, Any], description: str) -> Any:
    """The SqlExecution one SQL start/end pair with this plan makes."""
    processor = ApplicationProcessor(cluster=CLUSTER, default_fs=DEFAULT_FS)
    processor.feed({"Event": "SparkListenerApplicationStart", "App Name": "a", "App ID": "app-1",
                    "Timestamp": 1000, "User": "u"})
    processor.feed({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart", "executionId": 0,
                    "description": "sql at NativeMethodAccessorImpl.java:0", "time": 1100,
                    "sparkPlanInfo": plan, "physicalPlanDescription": description})
    processor.feed({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd", "executionId": 0,
                    "time": 1200})
    (execution,) = processor.finish().executions
    return execution


# Spark 4's V2 row-level writes (Iceberg's MERGE INTO / UPDATE / DELETE) as Spark names them:
# `ReplaceData <table>` / `WriteDelta <table>` (V2ExistingTableWriteExec.nodeName adds the table
# name), the MERGE's `MergeRows` under them, the tables read as `BatchScan <table>`. Not
# captured: no Iceberg runtime loads on Spark 4.3 (iceberg-spark-runtime-4.1 1.12.0 fails at
# CREATE TABLE: IncompatibleClassChangeError on SparkView). Spark 3.4/3.5 named the node
# without its table (`ReplaceData` with `IcebergWrite(...)` in its arguments).
_JOIN = "BroadcastHashJoin [id#1], [id#11], LeftOuter, BuildRight, false"
GAP_CASES: list[tuple[str, dict[str, Any], list[str], list[str]]] = [
    ("Iceberg MERGE INTO, copy-on-write", _plan_node("ReplaceData ice.db.t", children=[
        _plan_node("MergeRows", children=[_plan_node(_JOIN.split(" ", 1)[0], _JOIN, children=[
            _plan_node("BatchScan ice.db.t"), _plan_node("BatchScan ice.db.s")])])]),
     ["ice.db.t@primary"], ["row-level write (ReplaceData, WriteDelta): column lineage not read"]),
    ("Iceberg MERGE INTO, merge-on-read", _plan_node("WriteDelta ice.db.t", children=[
        _plan_node("MergeRows", children=[_plan_node("BatchScan ice.db.s")])]),
     ["ice.db.t@primary"], ["row-level write (ReplaceData, WriteDelta): column lineage not read"]),
    ("Iceberg UPDATE on Spark 3.5: the table is not in the node's name", _plan_node(
        "ReplaceData", "ReplaceData IcebergWrite(table=ice.db.t, format=PARQUET)", children=[
            _plan_node("Project", children=[_plan_node("BatchScan ice.db.t")])]),
     [], ["row-level write (ReplaceData, WriteDelta): column lineage not read",
          "row-level write (ReplaceData, WriteDelta): the table is not named in the plan"]),
    ("a V2 streaming sink (Kafka): no table or path in the plan", _plan_node(
        "WriteToDataSourceV2", "WriteToDataSourceV2 MicroBatchWrite[epoch: 0, writer: "
        "org.apache.spark.sql.kafka010.KafkaStreamingWrite@1f2e3d4c]", children=[
            _plan_node("BatchScan cat.ns.src")]),
     [], ["streaming write: column lineage not read",
          "streaming write: the sink names no path (foreachBatch, memory, console, ...)"]),
    ("AppendData into a V2 table", _plan_node("AppendData cat.ns.t", children=[_plan_node("BatchScan cat.ns.src")]),
     ["cat.ns.t@primary"],
     ["V2 write (AppendData, OverwriteByExpression, OverwritePartitionsDynamic): column lineage not read"]),
    ("the noop sink writes nothing: no reason", _plan_node("OverwriteByExpression noop-table", children=[
        _plan_node("BatchScan cat.ns.src")]), [], []),
]


@pytest.mark.parametrize(("what", "plan", "outputs", "skipped"), GAP_CASES, ids=[c[0] for c in GAP_CASES])
def test_known_gaps_keep_table_lineage_and_say_why(what: str, plan: dict[str, Any], outputs: list[str],
                                                   skipped: list[str]) -> None:
    execution = _one_execution(plan, "")
    assert [d.ref.qualified_name for d in execution.outputs] == outputs
    assert execution.inputs, "the scans stay inputs"
    assert list(execution.column_notes) == skipped
    assert not execution.columns


def _delta_execution(execution_id: int) -> Any:
    run, _recs = process_lines(fixture_lines("delta_commands"), cluster=CLUSTER, default_fs=DEFAULT_FS)
    return next(e for e in run.executions if e.execution_id == execution_id)


@pytest.mark.parametrize(("command", "arguments", "table", "path"), [
    # delta-spark 4.4's text (captured in delta_commands)
    ("MergeIntoCommand", "SubqueryAlias s, SubqueryAlias t, `spark_catalog`.`dl`.`t`, Delta[version=1, "
     "file:/w/dl.db/t], (id#1 = id#3), [Update [actions: [`id` = id#1, `v` = upper(v#4)]]]", ("spark_catalog", "dl", "t"),
     None),
    ("UpdateCommand", "Delta[version=1, file:/w/dl.db/t], `spark_catalog`.`dl`.`t`, [id#1, z], (id#1 = 1)",
     ("spark_catalog", "dl", "t"), None),
    ("DeleteCommand", "org.apache.spark.sql.delta.DeltaLog@595e86ca, `spark_catalog`.`dl`.`t`, (id#1 = 3)",
     ("spark_catalog", "dl", "t"), None),
    # a table named by its path (`MERGE INTO delta.`/data/t``): the path is written
    ("MergeIntoCommand", "SubqueryAlias s, SubqueryAlias t, `delta`.`/data/t`, Delta[version=3, hdfs://ns/data/t], "
     "(id#1 = id#3)", None, "hdfs://ns/data/t"),
    ("DeleteCommand", "org.apache.spark.sql.delta.DeltaLog@595e86ca, (id#1 = 3)", None, None),
], ids=["merge", "update", "delete", "merge into a path", "no target"])
def test_delta_command_targets(command: str, arguments: str, table: tuple[str, str, str] | None,
                               path: str | None) -> None:
    description = (f"== Physical Plan ==\nExecute {command} (1)\n   +- {command} (2)\n\n\n"
                   f"(1) Execute {command}\nOutput [1]: [num_affected_rows#9L]\n\n(2) {command}\n"
                   f"Arguments: {arguments}\n\n")
    io = plan_io(_plan_node(f"Execute {command}"), description)
    got = [(w.table.catalog, w.table.namespace, w.table.name) for w in io.writes if w.table]
    assert got == ([table] if table else [])
    assert [w.path for w in io.writes if w.table is None] == ([path] if path else [])
    assert io.gaps == (("delta",) if table or path else ("delta", "delta_target"))
    assert io.unparsed == ()


def test_cut_conditions_name_the_columns_they_may_hide_controls_from() -> None:
    """`greatest(c0, ..., c29) > 5` in a WHERE and in a join condition: Spark prints 25 of the 30
    columns (`... 5 more fields`); the 25 shown are controls, the written columns are listed as
    incomplete. 30 OR'ed comparisons are a binary tree Spark prints whole: nothing cut."""
    run, _recs = process_lines(fixture_lines("cut_conditions"), cluster=CLUSTER, default_fs=DEFAULT_FS)
    by_id = {e.execution_id: e for e in run.executions}
    assert by_id[16].column_incomplete == (("Filter condition cut by Spark: it may hide controls",
                                            ("cc.t_greatest.id@primary", "cc.t_greatest.c2@primary")),)
    assert by_id[19].column_incomplete == (("BroadcastHashJoin condition cut by Spark: it may hide controls",
                                            ("cc.t_join.id@primary", "cc.t_join.c3@primary")),)
    controls = {e.source.qualified_name for e in by_id[16].columns
                if e.kind is RelationType.CONTROL_FLOW and e.target.qualified_name == "cc.t_greatest.id@primary"}
    assert controls == {f"cc.a.c{i}@primary" for i in range(25)}
    assert not by_id[10].column_incomplete and len({e.source for e in by_id[10].columns
                                                    if e.kind is RelationType.CONTROL_FLOW}) == 30
    assert run.skipped["column_lineage_incomplete"] == 2


def test_pandas_udf_outputs_are_flagged() -> None:
    """mapInPandas, mapInArrow, groupBy().applyInPandas and cogroup().applyInPandas make their
    columns in Python: each is taken as made from every column passed to the function (grouped by
    the keys), listed in columnLineageIncomplete and said in columnLineageSkipped, with no
    warning (no setting brings more). A scalar pandas UDF (ArrowEvalPython) is read as a Python
    UDF: no flag."""
    run, _recs = process_lines(fixture_lines("pandas_udfs"), cluster=CLUSTER, default_fs=DEFAULT_FS)
    by_output = {e.outputs[0].ref.qualified_name: e for e in run.executions if len(e.outputs) == 1}
    scalar = by_output["cl.p_scalar@primary"]
    assert not scalar.column_notes and not scalar.column_incomplete
    assert {(e.source.qualified_name, e.expression) for e in scalar.columns
            if e.target.qualified_name == "cl.p_scalar.loud@primary"} == {("cl.customers.name@primary", "shout(name)")}
    reason = "pandas UDF output: its columns are taken as made from every column the Python function reads"
    orders = {f"cl.orders.{c}@primary" for c in ("order_id", "customer_id", "amount", "status", "ts")}
    for table, node, sources, keys in (
            ("p_map", "MapInPandas", orders, set()),
            ("p_arrow", "MapInArrow", {"cl.orders.order_id@primary", "cl.orders.ts@primary"}, set()),
            ("p_grouped", "FlatMapGroupsInPandas", orders, {"cl.orders.customer_id@primary"}),
            ("p_cogrouped", "FlatMapCoGroupsInPandas",
             orders | {f"cl.customers.{c}@primary" for c in ("customer_id", "name", "region")},
             {"cl.orders.customer_id@primary", "cl.customers.customer_id@primary"})):
        execution = by_output[f"cl.{table}@primary"]
        assert execution.column_notes == (reason,)
        ((why, columns),) = execution.column_incomplete
        assert why == f"pandas UDF output ({node}): taken as made from every column the Python function reads"
        targets = {e.target.qualified_name for e in execution.columns}
        assert set(columns) == targets and len(targets) == 2
        for target in targets:
            data = {e.source.qualified_name for e in execution.columns
                    if e.target.qualified_name == target and e.kind is RelationType.DATA_FLOW}
            grouped = {e.source.qualified_name for e in execution.columns
                       if e.target.qualified_name == target and e.subtype == "GROUP_BY"}
            assert (data, grouped) == (sources, keys), target
    assert "column_lineage_incomplete" not in run.skipped


def test_streaming_micro_batches_write_the_sink_their_progress_names() -> None:
    """A file-source stream to a parquet path and to a table (`toTable`), then through
    foreachBatch: the V1 sinks add no write node to the plans; each micro-batch writes the sink
    its query's progress events name (`FileSink[<path>]`) and says why it has no column edges;
    foreachBatch's own insert (a nested execution) is a write of its table. A micro-batch's
    `id = ... runId = ...` description is no query text."""
    run, _recs = process_lines(fixture_lines("streaming_writes"), cluster=CLUSTER, default_fs=DEFAULT_FS)
    by_id = {e.execution_id: e for e in run.executions}
    reason = ("streaming write: column lineage not read",)
    for execution_id, sink in ((3, "file:///tmp/navd-capture/output/stream_parquet"),
                               (5, "file:///tmp/navd-capture/warehouse/sw.db/stream_table")):
        execution = by_id[execution_id]
        assert [d.ref.qualified_name for d in execution.outputs] == [sink]
        assert execution.write_commands == ("FileSink",) and execution.column_notes == reason
        assert [d.ref.qualified_name.rsplit("/", 2)[1] for d in execution.inputs] == ["stream_in"]
        assert execution.query_text is None and not execution.columns
    each_batch = by_id[6]
    assert each_batch.nested_ids == (7,)
    assert [d.ref.qualified_name for d in each_batch.outputs] == ["sw.batches@primary"]
    assert reason[0] not in each_batch.column_notes
