"""Column lineage from Spark plans: extractors/spark/plans.py `column_flows` and the FIELD-level
DATA_FLOW / CONTROL_FLOW records extractors/spark/events.py makes of it.

Two layers, both on real PySpark 4.3 event logs (tests/fixtures/spark_events/*.jsonl, captured by
capture.py there):

- `PLAN_CASES`: table-driven, one row per captured plan shape, the exact `column_flows` result
  of that execution's plan (the last one, i.e. the AQE final plan): every written column with its
  sources, its expression (None = copied or renamed, SIMPLE) and its control columns.
- `<case>.columns.json`: per fixture, the column edges in the records (every written catalog
  column, its DATA_FLOW sources with dependency type and expression, its CONTROL_FLOW sources),
  reviewed by hand. Regenerate with NAVD_UPDATE_GOLDEN=1 and read the diff.

Decisions these tests pin down (see plans.py, "column lineage"):
- grouping keys are CONTROL_FLOW sources of every aggregate output, and a SIMPLE DATA_FLOW
  source of the output column that copies them (not both for the same pair);
- filter conditions and join keys/conditions control every column going through the
  filter/join (a filter below one side of a join reaches the other side's columns through the
  join keys); window partition/order columns control the window's column only; global sorts
  (ORDER BY) control every column; local sorts and exchanges are ignored;
- path inputs and outputs get no column lineage (`columnLineageSkipped` on the execution).
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
from navd.extractors.spark.plans import (
    MAX_EXPRESSION_CHARS,
    MAX_PLAN_CHARS,
    ColumnSource,
    PlanTooLarge,
    _unwrap_char_varchar,
    column_flows,
    plan_io,
    split_list,
)
from navd.lineage import LineageOptions, lineage
from navd.lineage_memory import MemoryLineageStore
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


def source_text(source: ColumnSource) -> str:
    if source.table is not None:
        return f"{source.table.namespace}.{source.table.name}.{source.column}"
    return f"{source.paths[0].rsplit('/', 1)[-1]}:{source.column}"


Flow = tuple[str, list[str], str | None, list[str]]

# (case, execution id, [(written column, sources, expression or None, control columns)])
PLAN_CASES: list[tuple[str, str, int, list[Flow]]] = [
    # the acceptance case: CTAS nested insert, u = upper(s.c); the filter `c is not null` is on
    # c itself, already a data source of u, so no CONTROL_FLOW
    ("ctas_expression", "ctas", 7, [("u", ["sales.s.c"], "upper(c)", [])]),
    ("insert_overwrite_join", "join + group by into a Hive table", 6, [
        ("name", ["shop.customers.name"], None, ["shop.customers.customer_id", "shop.orders.customer_id"]),
        ("total", ["shop.orders.amount"], "sum(amount)",
         ["shop.customers.customer_id", "shop.customers.name", "shop.orders.customer_id"])]),
    ("dataframe_paths", "path reads, three joins, where, renames", 6, [
        ("id", ["events_parquet:id"], None, ["events_parquet:v", "extra_json:id", "ref_csv:id"]),
        ("k", ["events_parquet:k"], "upper(k)", ["events_parquet:id", "events_parquet:v", "extra_json:id",
                                                 "ref_csv:id"]),
        ("w", ["events_parquet:v", "extra_json:v"], "(events_parquet.v + extra_json.v)",
         ["events_parquet:id", "extra_json:id", "ref_csv:id"])]),
    ("dataframe_paths", "a column named `sum(w)`, partial and final aggregates", 9, [
        ("k", ["events_parquet:k"], "upper(k)", ["events_parquet:id", "events_parquet:v", "extra_json:id",
                                                 "ref_csv:id"]),
        ("sum(w)", ["events_parquet:v", "extra_json:v"], "sum((events_parquet.v + extra_json.v))",
         ["events_parquet:id", "events_parquet:k", "extra_json:id", "ref_csv:id"])]),
    ("multi_output", "Hive CTAS", 8, [("id", ["mo.hive_copy.id"], None, []),
                                      ("name", ["mo.hive_copy.name"], None, [])]),
    ("multi_output", "JDBC V2 table read", 21, [("id", ["app.v2_out.id"], None, []),
                                                ("name", ["app.v2_out.name"], None, [])]),
    ("catalog_ops", "writes nothing", 1, []),
    # column_filters_joins: one CTAS (nested insert = root id + 1) per shape
    ("column_filters_joins", "where", 11, [
        ("order_id", ["cl.orders.order_id"], None, ["cl.orders.status"]),
        ("double_amount", ["cl.orders.amount"], "(amount * 2.0)", ["cl.orders.status"])]),
    ("column_filters_joins", "inner join (AQE, broadcast): keys of both sides control both columns", 14, [
        ("order_id", ["cl.orders.order_id"], None, ["cl.customers.customer_id", "cl.orders.customer_id"]),
        ("name", ["cl.customers.name"], None, ["cl.customers.customer_id", "cl.orders.customer_id"])]),
    ("column_filters_joins", "left outer join; `o.amount > 2` in ON is pushed below the right side", 17, [
        ("name", ["cl.customers.name"], None,
         ["cl.customers.customer_id", "cl.orders.amount", "cl.orders.customer_id"]),
        ("amount", ["cl.orders.amount"], None, ["cl.customers.customer_id", "cl.orders.customer_id"])]),
    ("column_filters_joins", "exists -> left semi join", 20, [
        ("name", ["cl.customers.name"], None, ["cl.customers.customer_id", "cl.orders.customer_id"])]),
    ("column_filters_joins", "not exists -> left anti join", 23, [
        ("name", ["cl.customers.name"], None, ["cl.customers.customer_id", "cl.orders.customer_id"])]),
    ("column_filters_joins", "insert into an existing table: written under the table's names", 25, [
        ("order_id", ["cl.orders.order_id"], None, ["cl.orders.ts"]),
        ("double_amount", ["cl.orders.amount"], None, ["cl.orders.ts"])]),
    # column_aggregates
    ("column_aggregates", "group by: keys SIMPLE when copied, CONTROL_FLOW of the other columns", 11, [
        ("customer_id", ["cl.orders.customer_id"], None, []),
        ("total", ["cl.orders.amount"], "sum(amount)", ["cl.orders.customer_id"]),
        ("n", [], "count(1)", ["cl.orders.customer_id"])]),
    ("column_aggregates", "order by (global Sort)", 14, [
        ("order_id", ["cl.orders.order_id"], None, ["cl.orders.ts"]),
        ("amount", ["cl.orders.amount"], None, ["cl.orders.ts"])]),
    ("column_aggregates", "window: partition/order control the window column only", 17, [
        ("order_id", ["cl.orders.order_id"], None, []),
        ("running", ["cl.orders.amount"], "sum(amount) OVER (PARTITION BY customer_id ORDER BY ts ASC NULLS FIRST)",
         ["cl.orders.customer_id", "cl.orders.ts"])]),
    ("column_aggregates", "rollup: Expand then aggregate", 20, [
        ("customer_id", ["cl.orders.customer_id"], None, ["cl.orders.status"]),
        ("status", ["cl.orders.status"], None, ["cl.orders.customer_id"]),
        ("total", ["cl.orders.amount"], "sum(amount)", ["cl.orders.customer_id", "cl.orders.status"])]),
    # column_shapes
    ("column_shapes", "union all: every branch, by position", 11, [
        ("id", ["cl.customers.customer_id", "cl.orders.order_id"], None, []),
        ("name", ["cl.customers.name", "cl.orders.status"], None, [])]),
    ("column_shapes", "CTE", 14, [
        ("cid", ["cl.orders.customer_id"], None, ["cl.orders.amount"]),
        ("a2", ["cl.orders.amount"], "(amount * 2.0)", [])]),
    ("column_shapes", "temporary view", 19, [
        ("oid", ["cl.orders.order_id"], None, ["cl.orders.status"]),
        ("amt", ["cl.orders.amount"], "(amount + 1.0)", ["cl.orders.status"])]),
    ("column_shapes", "lateral view explode (Generate)", 22, [
        ("customer_id", ["cl.customers.customer_id"], None, []),
        ("tag", ["cl.customers.region"], "explode(split(region, ,, -1))", [])]),
    ("column_shapes", "Python UDF (BatchEvalPython)", 25, [
        ("customer_id", ["cl.customers.customer_id"], None, []),
        ("loud", ["cl.customers.name"], "shout(name)", [])]),
    ("column_shapes", "scalar subquery in a filter (AQE, subquery plan)", 28, [
        ("order_id", ["cl.orders.order_id"], None, ["cl.orders.amount"])]),
    ("column_shapes", "scalar subquery in the select list: its plan's output flows in", 31, [
        ("order_id", ["cl.orders.order_id"], None, []),
        ("top_customer", ["cl.customers.customer_id"], "Subquery max(customer_id)", [])]),
    # dotted_columns: names with dots, spaces, backticks, unicode; a rename through them is SIMPLE
    ("dotted_columns", "CTAS renaming `b.c`, `a b`, `ünï`; upper(`b.c`)", 5, [
        ("x.y", ["dc.src.b.c"], None, ["dc.src.a b"]),
        ("p q", ["dc.src.a b"], None, []),
        ("Ünï.Zwei", ["dc.src.ünï"], None, ["dc.src.a b"]),
        ("up.per", ["dc.src.b.c"], "upper(b.c)", ["dc.src.a b"])]),
    ("dotted_columns", "insert into `k.k`, `v v`, `w``x` by position", 9, [
        ("k.k", ["dc.src.id"], None, ["dc.src.ünï"]),
        ("v v", ["dc.src.b.c"], None, ["dc.src.ünï"]),
        ("w`x", ["dc.src.ünï"], None, [])]),
    ("dotted_columns", "DataFrame withColumnRenamed(`a b` -> `a.b`), saveAsTable", 13, [
        ("id", ["dc.src.id"], None, []),
        ("a.b", ["dc.src.a b"], None, ["dc.src.id"]),
        ("b.c", ["dc.src.b.c"], None, ["dc.src.id"])]),
    # char_varchar: Spark's CHAR/VARCHAR checks and padding and its store-assignment casts are
    # not the user's expression
    ("char_varchar", "plain copies into char/varchar, int -> bigint/double, bigint -> int", 10, [
        ("c", ["cv.src.s"], None, []), ("v", ["cv.src.s"], None, []), ("b", ["cv.src.n"], None, []),
        ("dd", ["cv.src.n"], None, []), ("i", ["cv.src.big"], None, [])]),
    ("char_varchar", "the user's expressions under the wrappers; a cast to the column's type reads as Spark's", 12, [
        ("c", ["cv.src.s"], "upper(s)", []), ("v", ["cv.src.s"], "concat(s, x)", []),
        ("b", ["cv.src.n"], "(n + 1)", []), ("dd", ["cv.src.d"], "(d * 2.0)", []), ("i", ["cv.src.d"], None, [])]),
    ("char_varchar", "Hive SerDe char/varchar target (InsertIntoHiveTable)", 14, [
        ("v", ["cv.src.s"], None, []), ("c", ["cv.src.s"], None, []), ("b", ["cv.src.n"], None, [])]),
    ("char_varchar", "CTAS reading a CHAR column (read-side padding)", 17, [
        ("c", ["cv.t_char.c"], None, []), ("v2", ["cv.t_char.v"], None, [])]),
    ("char_varchar", "CTAS: no store assignment, the cast is the user's", 20, [
        ("i", ["cv.t_char.dd"], "cast(dd as int)", []), ("uc", ["cv.t_char.c"], "upper(c)", [])]),
    ("char_varchar", "DataFrame insertInto a char/varchar table", 22, [
        ("c", ["cv.src.s"], None, []), ("v", ["cv.src.s"], None, []), ("b", ["cv.src.n"], None, []),
        ("dd", ["cv.src.n"], None, []), ("i", ["cv.src.big"], None, [])]),
    # create_view: a view's columns come from its analysed (logical) plan under the view command
    ("create_view", "CREATE VIEW: logical Project over Filter over LogicalRelation", 10, [
        ("id", ["vw.src.id"], None, ["vw.src.amount"]),
        ("uname", ["vw.src.name"], "upper(name)", ["vw.src.amount"])]),
    ("create_view", "CREATE OR REPLACE VIEW", 12, [
        ("id", ["vw.src.id"], None, []), ("name", ["vw.src.name"], None, []),
        ("a2", ["vw.src.amount"], "(amount * cast(2 as double))", [])]),
    ("create_view", "CREATE VIEW v (Key, label): the statement's column names, by position", 14, [
        ("Key", ["vw.src.id"], None, []), ("label", ["vw.src.name"], None, [])]),
    ("create_view", "ALTER VIEW AS: logical Join over LogicalRelation and HiveTableRelation", 16, [
        ("id", ["vw.src.id"], None, ["vw.dim.id"]),
        ("region", ["vw.dim.region"], None, ["vw.dim.id", "vw.src.id"])]),
    ("create_view", "CREATE VIEW: logical Aggregate (grouping keys control the aggregate)", 18, [
        ("region", ["vw.dim.region"], None, ["vw.dim.id", "vw.src.id"]),
        ("total", ["vw.src.amount"], "sum(amount)", ["vw.dim.id", "vw.dim.region", "vw.src.id"])]),
    ("create_view", "a view over a view: inlined (logical View), its up-casts are no expression", 22, [
        ("id", ["vw.src.id"], None, ["vw.src.name"]),
        ("a2", ["vw.src.amount"], "(amount * cast(2 as double))", ["vw.src.name"])]),
    ("create_view", "CREATE VIEW after USE: a rename", 32, [("k", ["vw.src.id"], None, [])]),
    ("create_view", "view: logical Window (partition and order columns control the window's column)", 34, [
        ("id", ["vw.src.id"], None, []),
        ("running", ["vw.src.amount"], "sum(amount) OVER (PARTITION BY name ORDER BY id ASC NULLS FIRST)",
         ["vw.src.id", "vw.src.name"])]),
    ("create_view", "view: logical Generate (lateral view explode)", 36, [
        ("id", ["vw.src.id"], None, []), ("tag", ["vw.src.name"], "explode(split(name, ,, -1))", [])]),
    ("create_view", "view: logical Union under a global Sort", 38, [
        ("id", ["vw.dim.id", "vw.src.id"], None, []),
        ("name", ["vw.dim.region", "vw.src.name"], None, ["vw.dim.id", "vw.src.id"])]),
    ("create_view", "view: logical Expand + Aggregate (ROLLUP)", 40, [
        ("name", ["vw.src.name"], None, []), ("total", ["vw.src.amount"], "sum(amount)", ["vw.src.name"])]),
    # order_by_limit: nodes whose output is defined in their arguments, and limits/samples
    ("order_by_limit", "ORDER BY ... LIMIT: TakeOrderedAndProject over a Project; its order controls", 10, [
        ("id", ["ol.src.id"], None, ["ol.src.amt"]),
        ("n", ["ol.src.name"], "upper(name)", ["ol.src.amt"])]),
    ("order_by_limit", "LIMIT ... OFFSET: TakeOrderedAndProject renames in its project list", 12, [
        ("id", ["ol.src.id"], "(id + 1)", ["ol.src.amt"]),
        ("n", ["ol.src.name"], None, ["ol.src.amt"])]),
    ("order_by_limit", "TakeOrderedAndProject aliasing a computed column, into a Hive table", 14, [
        ("id", ["ol.src.id"], None, []),
        ("n", ["ol.src.name"], "concat(name, !)", ["ol.src.id"])]),
    ("order_by_limit", "LIMIT: LocalLimit / GlobalLimit over a Project (AQE)", 16, [
        ("id", ["ol.src.id"], "(id * 10)", []),
        ("n", ["ol.src.name"], "lower(name)", [])]),
    ("order_by_limit", "LIMIT ... OFFSET: GlobalLimit with an offset", 18, [
        ("id", ["ol.src.id"], None, []),
        ("n", ["ol.src.name"], None, [])]),
    ("order_by_limit", "TABLESAMPLE: Sample under a Project", 20, [
        ("id", ["ol.src.id"], None, []),
        ("n", ["ol.src.name"], "upper(name)", [])]),
    ("order_by_limit", "CTAS ... ORDER BY ... LIMIT (nested insert)", 23, [
        ("k", ["ol.src.id"], None, ["ol.src.name"]),
        ("q", ["ol.src.name"], "concat(name, ?)", [])]),
    ("order_by_limit", "scalar subquery planned as TakeOrderedAndProject: its order controls", 25, [
        ("id", ["ol.src.id"], None, []),
        ("n", ["ol.src.name"], "Subquery upper(name)", ["ol.src.amt"])]),
    ("order_by_limit", "scalar subquery planned as CollectLimit", 27, [
        ("id", ["ol.src.id"], None, []),
        ("n", ["ol.src.name"], "Subquery lower(name)", [])]),
    # A union's column carries every branch's sources, with the first expression met (here the
    # second branch's `id * 2`; the first branch copies id): a union limitation, not the node's.
    ("order_by_limit", "TakeOrderedAndProject over a Union", 29, [
        ("id", ["ol.src.id"], "(id * 2)", []),
        ("n", ["ol.src.name"], "upper(name)", ["ol.src.id"])]),
    ("order_by_limit", "TRANSFORM USING (HiveScriptTransformation): every output from every input", 31, [
        ("id", ["ol.src.id", "ol.src.name"], "TRANSFORM(id, name) USING 'cat'", []),
        ("n", ["ol.src.id", "ol.src.name"], "TRANSFORM(id, name) USING 'cat'", [])]),
    ("order_by_limit", "df.orderBy().limit().selectExpr(): the projection only in TakeOrderedAndProject", 33, [
        ("id", ["ol.src.id"], None, ["ol.src.amt"]),
        ("n", ["ol.src.name"], "upper(name)", ["ol.src.amt"])]),
    ("order_by_limit", "df...orderBy().limit().saveAsTable() (nested insert)", 36, [
        ("id", ["ol.src.id"], None, []),
        ("n", ["ol.src.name"], "upper(name)", ["ol.src.id"])]),
    ("order_by_limit", "df.limit().insertInto(): LocalLimit / GlobalLimit (AQE)", 37, [
        ("id", ["ol.src.id"], None, []),
        ("n", ["ol.src.name"], "concat(name, .)", [])]),
    ("order_by_limit", "rank filter without a partition: TakeOrderedAndProject under a Window", 38, [
        ("id", ["ol.src.id"], None, ["ol.src.amt"]),
        ("n", ["ol.src.name"], "upper(name)", ["ol.src.amt"])]),
    ("order_by_limit", "df.coalesce(): Coalesce over a Project", 40, [
        ("id", ["ol.src.id"], "(id * 3)", []),
        ("n", ["ol.src.name"], None, [])]),
    ("order_by_limit", "partitioned rank filter: WindowGroupLimit (partial and final) under the Window", 41, [
        ("id", ["ol.src.id"], None, ["ol.src.amt"]),
        ("n", ["ol.src.name"], "lower(name)", ["ol.src.amt", "ol.src.id"])]),
]

# Plans that write several datasets (multi-insert): (case, what, execution id,
# {written dataset (table name, else the path's last segment, "?" for a write command not read):
#  [flows of that write, in order]})
MULTI_WRITE_CASES: list[tuple[str, str, int, dict[str, list[Flow]]]] = [
    ("multi_insert", "two tables from a filtered subquery, a filter per branch", 14, {
        "d1": [("id", ["mi.src.id"], None, ["mi.src.amt", "mi.src.status"]),
               ("name", ["mi.src.name"], "upper(name)", ["mi.src.amt", "mi.src.status"])],
        "d2": [("id", ["mi.src.id"], None, ["mi.src.amt", "mi.src.status"]),
               ("doubled", ["mi.src.amt"], "(amt * 2.0)", ["mi.src.status"])]}),
    ("multi_insert", "three tables (copy, group by, Hive SerDe table with a filter; AQE)", 16, {
        "d1": [("id", ["mi.src.id"], None, []), ("name", ["mi.src.name"], None, [])],
        "d3": [("status", ["mi.src.status"], None, []), ("total", ["mi.src.amt"], "sum(amt)", ["mi.src.status"])],
        "dh": [("id", ["mi.src.id"], None, []), ("status", ["mi.src.status"], None, ["mi.src.id"])]}),
    ("multi_insert", "one table written by two branches: one flow per branch", 18, {
        "d1": [("id", ["mi.src.id"], None, ["mi.src.status"]),
               ("name", ["mi.src.name"], None, ["mi.src.status"]),
               ("id", ["mi.src.id"], None, ["mi.src.amt"]),
               ("name", ["mi.src.status"], None, ["mi.src.amt"])]}),
    # the directory branch is an InsertIntoDataSourceDirCommand whose logical plan runs in
    # nested execution 21; this plan writes only the table
    ("multi_insert", "a directory and a table: the table's branch", 20, {
        "d2": [("id", ["mi.src.id"], None, ["mi.src.status"]),
               ("doubled", ["mi.src.amt"], "(amt + 1.0)", ["mi.src.status"])]}),
    ("multi_insert", "a directory and a table: the directory's nested insert", 21, {
        "mi_dir": [("id", ["mi.src.id"], None, ["mi.src.amt"]), ("name", ["mi.src.name"], None, ["mi.src.amt"])]}),
    # Spark plans the shared aggregate once per branch (each with the branch's filters pushed
    # down), with the branch's own ids; `n > 1` filters on a count, which reads no column
    ("multi_insert", "a shared aggregate, filtered differently per branch (AQE)", 23, {
        "d3": [("status", ["mi.src.status"], None, []), ("total", ["mi.src.amt"], "sum(amt)", ["mi.src.status"])],
        "d2": [("id", [], "count(1)", ["mi.src.status"]),
               ("doubled", ["mi.src.amt"], "(sum(amt) * 2.0)", ["mi.src.status"])]}),
    # a self-join: the join keys are mi.src.id on both sides, a data source of each id column
    ("multi_insert", "a shared join, a filter in one branch (AQE, broadcast)", 25, {
        "d1": [("id", ["mi.src.id"], None, ["mi.src.amt"]),
               ("name", ["mi.src.name"], None, ["mi.src.amt", "mi.src.id"])],
        "d2": [("id", ["mi.src.id"], None, []), ("doubled", ["mi.src.amt"], None, ["mi.src.id"])]}),
    # InsertIntoHiveDirCommand writes its Input (no WriteFiles) to its (LOCAL) directory
    ("multi_insert", "a Hive-format directory and a table", 27, {
        "mi_hive_dir": [("name", ["mi.src.name"], None, []), ("status", ["mi.src.status"], None, [])],
        "d1": [("id", ["mi.src.id"], None, ["mi.src.amt"]), ("name", ["mi.src.name"], None, ["mi.src.amt"])]}),
    # path_columns: path writes (InsertIntoHadoopFsRelationCommand without a table), and the
    # directory commands of INSERT OVERWRITE DIRECTORY
    ("path_columns", "df.write.parquet(path) from a csv path", 4, {
        "staged_parquet": [("id", ["people_csv:id"], None, ["people_csv:amt"]),
                           ("name", ["people_csv:name"], "upper(name)", ["people_csv:amt"]),
                           ("region", ["people_csv:region"], None, ["people_csv:amt"]),
                           ("amt2", ["people_csv:amt"], "(amt * 2.0)", [])]}),
    ("path_columns", "DataFrameWriter.save (orc): a dotted column from a parquet path", 8, {
        "names_orc": [("id", ["staged_parquet:id"], None, []), ("who.name", ["staged_parquet:name"], None, [])]}),
    ("path_columns", "INSERT OVERWRITE DIRECTORY ... USING parquet: the nested insert", 13, {
        "dir_parquet": [("id", ["pc.src.id"], None, ["pc.src.amt"]),
                        ("lname", ["pc.src.name"], "lower(name)", ["pc.src.amt"])]}),
    ("path_columns", "Hive-format INSERT OVERWRITE DIRECTORY: InsertIntoHiveDirCommand's Input", 15, {
        "dir_hive": [("name", ["pc.src.name"], None, ["pc.src.id"]),
                     ("(amt + 1)", ["pc.src.amt"], "(amt + 1.0)", ["pc.src.id"])]}),
    ("path_columns", "INSERT OVERWRITE LOCAL DIRECTORY (Hive format)", 17, {
        "dir_local": [("id", ["pc.src.id"], None, []), ("name", ["pc.src.name"], None, [])]}),
    ("path_columns", "a directory written by INSERT OVERWRITE DIRECTORY, read into a table", 19, {
        "src": [("id", ["dir_parquet:id"], None, []), ("name", ["dir_parquet:lname"], None, []),
                ("amt", [], "0.0", [])]}),
    # unplanned_writes: no WriteFiles (Spark 3.0-3.3, plannedWrite disabled): the commands'
    # own Input; the Union above them carries no columns from one branch to the other
    ("unplanned_writes", "multi-insert without WriteFiles (parquet and Hive SerDe tables)", 14, {
        "d1": [("id", ["mi.src.id"], None, ["mi.src.amt"]), ("name", ["mi.src.name"], "upper(name)", ["mi.src.amt"])],
        "dh": [("id", ["mi.src.id"], None, ["mi.src.status"]), ("status", ["mi.src.status"], None, [])]}),
    ("unplanned_writes", "ORDER BY ... LIMIT without WriteFiles: TakeOrderedAndProject under the command", 16, {
        "d2": [("id", ["mi.src.id"], None, ["mi.src.name"]),
               ("doubled", ["mi.src.amt"], "(amt * 2.0)", ["mi.src.name"])]}),
    ("unplanned_writes", "CTAS without WriteFiles: the nested insert names the table's location", 19, {
        "c": [("id", ["mi.src.id"], None, ["mi.src.amt"]), ("u", ["mi.src.name"], "upper(name)", ["mi.src.amt"])]}),
    ("unplanned_writes", "Hive CTAS without WriteFiles: InsertIntoHiveTable over AdaptiveSparkPlan", 22, {
        "ch": [("status", ["mi.src.status"], None, []), ("total", ["mi.src.amt"], "sum(amt)", ["mi.src.status"])]}),
]


@pytest.mark.parametrize(("case", "what", "execution_id", "expected"), PLAN_CASES,
                         ids=[f"{c[0]}-{c[2]}" for c in PLAN_CASES])
def test_column_flows(case: str, what: str, execution_id: int, expected: list[Flow]) -> None:
    flows = column_flows(plan_descriptions(case, execution_id)[-1])
    got = [(f.target, sorted(map(source_text, f.sources)), f.expression, sorted(map(source_text, f.controls)))
           for f in flows]
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
        got.setdefault(dataset, []).append(
            (flow.target, sorted(map(source_text, flow.sources)), flow.expression,
             sorted(map(source_text, flow.controls))))
    assert got == expected, what


def test_multi_insert_records_give_each_table_its_own_columns() -> None:
    """The multi-insert into d1 and d2: each target column has its own branch's edges, and the
    execution no longer says `several tables written by one plan`."""
    run, recs = process_lines(fixture_lines("multi_insert"), cluster=CLUSTER, default_fs=DEFAULT_FS)
    (execution,) = [e for e in run.executions if e.execution_id == 14]
    assert execution.column_notes == ()
    edges = {(e.target.qualified_name, e.kind.value, e.source.qualified_name, e.dependency_type, e.expression)
             for e in execution.columns}
    assert edges == {
        ("mi.d1.id@primary", "DATA_FLOW", "mi.src.id@primary", DependencyType.SIMPLE, None),
        ("mi.d1.id@primary", "CONTROL_FLOW", "mi.src.amt@primary", None, None),
        ("mi.d1.id@primary", "CONTROL_FLOW", "mi.src.status@primary", None, None),
        ("mi.d1.name@primary", "DATA_FLOW", "mi.src.name@primary", DependencyType.EXPRESSION, "upper(name)"),
        ("mi.d1.name@primary", "CONTROL_FLOW", "mi.src.amt@primary", None, None),
        ("mi.d1.name@primary", "CONTROL_FLOW", "mi.src.status@primary", None, None),
        ("mi.d2.id@primary", "DATA_FLOW", "mi.src.id@primary", DependencyType.SIMPLE, None),
        ("mi.d2.id@primary", "CONTROL_FLOW", "mi.src.amt@primary", None, None),
        ("mi.d2.id@primary", "CONTROL_FLOW", "mi.src.status@primary", None, None),
        ("mi.d2.doubled@primary", "DATA_FLOW", "mi.src.amt@primary", DependencyType.EXPRESSION, "(amt * 2.0)"),
        ("mi.d2.doubled@primary", "CONTROL_FLOW", "mi.src.status@primary", None, None),
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
        if not edges and not skipped:
            continue
        columns: dict[str, dict[str, list[str]]] = {}
        for edge in edges:
            entry = columns.setdefault(edge.endpoint2.qualified_name, {"data": [], "control": []})
            if edge.type is RelationType.DATA_FLOW:
                text = f"{edge.endpoint1.qualified_name} {edge.dependency_type}"
                entry["data"].append(text + (f": {edge.expression}" if edge.expression else ""))
            else:
                entry["control"].append(edge.endpoint1.qualified_name)
        item: dict[str, Any] = {"sql": element.query_text or element.description}
        if skipped:
            item["skipped"] = skipped
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
    """The acceptance case spelled out: sales.s.c@primary -> sales.t.u@primary, EXPRESSION upper(c)."""
    run, recs = process_lines(fixture_lines("ctas_expression"), cluster=CLUSTER, default_fs=DEFAULT_FS)
    (execution,) = [e for e in run.executions if e.columns]
    element_qn = f"spark://{run.app_id}/1/sql/{execution.execution_id}"
    fields = [r for r in recs if isinstance(r, Relation) and r.endpoint2.type is ElementType.FIELD]
    assert [(r.type, r.endpoint1.qualified_name, r.endpoint2.qualified_name, r.dependency_type, r.expression,
             r.discriminator, r.linked1, r.linked2) for r in fields] == [
        (RelationType.DATA_FLOW, "sales.s.c@primary", "sales.t.u@primary", DependencyType.EXPRESSION, "upper(c)",
         element_qn, False, False)]
    assert {r.endpoint1.source_type for r in fields} == {SourceType.HIVE}
    assert fields[0].endpoint1.type is ElementType.FIELD


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


def test_wide_plan_under_the_cap_is_read_in_bounded_time() -> None:
    """A synthetic plan of ~10 MB (3,000 columns, each a 250-argument expression)."""
    plan = _synthetic_plan(3000, expression_size=250)
    assert 8_000_000 < len(plan) < MAX_PLAN_CHARS
    started = time.perf_counter()
    flows = column_flows(plan)
    elapsed = time.perf_counter() - started
    assert len(flows) == 3000
    assert flows[7].target == "o7" and [s.column for s in flows[7].sources] == ["c7"]
    assert all(f.expression is not None and len(f.expression) <= MAX_EXPRESSION_CHARS + 3 for f in flows)
    assert flows[0].expression.endswith("...") and flows[0].expression.startswith("concat(c0, c0,")
    assert elapsed < 20.0


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
    assert _unwrap_char_varchar(expression) == unwrapped


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
    """path_columns (issue 17, class 4): csv -> transform -> parquet path -> a later job reads
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
