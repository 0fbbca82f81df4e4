"""Golden tests of the Spark event-log processor (extractors/spark/events.py, plan/).

Each `tests/fixtures/spark_events/<case>.jsonl` is a real PySpark 4.3 event log (captured by
`capture.py` next to it); `<case>.expected.json` is the table-level lineage that is TRUE for
that job, reviewed by hand. Regenerate the expected files with

    NAVD_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_spark_events.py

and then read the diff: the expectation is what the job did, not what the code printed.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from navd.extractors.hms.records import table_info, table_records
from navd.extractors.spark.application_run import ApplicationRun, CatalogEvent
from navd.extractors.spark.events import ApplicationProcessor
from navd.extractors.spark.executions import MAX_STORED_PLAN_CHARS, bounded_plan
from navd.extractors.spark.records import TableCreation, created_tables, dropped, process_lines, records, stubs_for
from navd.index.documents import STUB_MARK
from navd.extractors.spark.plan.model import PlanError, TableId
from navd.extractors.spark.plan.tables import plan_io
from navd.extractors.spark.plan.text import location_paths, parse_identifier, split_list
from navd.model import (Element, ElementStub, ElementType, EntityRef, Relation, RelationType, SourceType,
                        hive_qualified_name)

from spark_fixtures import CASES, CLUSTER, DEFAULT_FS, FIXTURES, UPDATE, fixture_lines



def _endpoint(ref: Any) -> str:
    return f"{ref.qualified_name} ({ref.source_type.value} {ref.type.value})"


def summary(run: ApplicationRun, recs: list[Element | Relation]) -> dict[str, Any]:
    """The compact, reviewable shape of one application's records (built from the records)."""
    elements = {r.qualified_name: r for r in recs if isinstance(r, Element)}
    relations = [r for r in recs if isinstance(r, Relation)]
    templates = [e for e in elements.values() if e.type is ElementType.OPERATION]
    apps = [e for e in elements.values() if e.type is ElementType.OPERATION_EXECUTION and e.parent is None]
    assert len(templates) == 1 and len(apps) == 1, "one OPERATION and one application execution"
    template, app = templates[0], apps[0]
    executions = []
    for element in elements.values():
        if element.type is not ElementType.OPERATION_EXECUTION or element.parent is None:
            continue
        inputs = sorted(_endpoint(r.endpoint1) for r in relations
                        if r.type is RelationType.DATA_FLOW and r.endpoint2.identity == element.identity)
        outputs = sorted(_endpoint(r.endpoint2) for r in relations
                         if r.type is RelationType.DATA_FLOW and r.endpoint1.identity == element.identity)
        entry: dict[str, Any] = {"execution": element.qualified_name, "outcome": element.properties["outcome"]}
        if element.query_text:
            entry["queryText"] = element.query_text
        entry["inputs"] = inputs
        entry["outputs"] = outputs
        if "catalogEvents" in element.properties:
            entry["catalogEvents"] = element.properties["catalogEvents"]
        executions.append(entry)
    executions.sort(key=lambda e: int(e["execution"].rsplit("/", 1)[1]))
    return {
        "application": {
            "operation": template.qualified_name,
            "execution": app.qualified_name,
            "user": app.principal,
            "outcome": app.properties["outcome"],
            "sparkVersion": app.properties.get("sparkVersion"),
        },
        "executions": executions,
        "skipped": dict(sorted(run.skipped.items())),
    }


def run_case(lines: list[str]) -> tuple[ApplicationRun, list[Element | Relation]]:
    return process_lines(lines, cluster=CLUSTER, default_fs=DEFAULT_FS, extractor_run_id="test##1")


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str) -> None:
    run, recs = run_case(fixture_lines(case))
    got = summary(run, recs)
    expected_file = FIXTURES / f"{case}.expected.json"
    if UPDATE:
        expected_file.write_text(json.dumps(got, indent=2) + "\n", encoding="utf-8")
    expected = json.loads(expected_file.read_text(encoding="utf-8"))
    assert got == expected


@pytest.mark.parametrize("case", CASES)
def test_relation_structure(case: str) -> None:
    """Dataset endpoints are unlinked, endpoints this processor emits are linked."""
    _run, recs = run_case(fixture_lines(case))
    emitted = {r.identity for r in recs if isinstance(r, Element)}
    relations = [r for r in recs if isinstance(r, Relation)]
    assert relations
    for relation in relations:
        for ref, linked in ((relation.endpoint1, relation.linked1), (relation.endpoint2, relation.linked2)):
            assert linked == (ref.identity in emitted), (relation, ref)
        if relation.type in (RelationType.DATA_FLOW, RelationType.CONTROL_FLOW):
            assert relation.unlinked
        else:
            assert not relation.unlinked
    # Every execution hangs off the application run; identities are unique.
    identities = [r.identity for r in recs]
    assert len(identities) == len(set(identities))
    kinds = {r.type for r in relations}
    assert {RelationType.INSTANCE_OF, RelationType.PARENT_CHILD} <= kinds


def test_ctas_expression_is_table_to_table() -> None:
    """The motivating case, spelled out: sales.s@primary -> CTAS -> sales.t@primary, with SQL."""
    run, recs = run_case(fixture_lines("ctas_expression"))
    ctas = [e for e in run.executions if e.outputs and e.outputs[0].ref.qualified_name == "sales.t@primary"]
    assert len(ctas) == 1
    (execution,) = ctas
    assert [d.ref.qualified_name for d in execution.inputs] == ["sales.s@primary"]
    assert [d.ref.source_type for d in execution.inputs + execution.outputs] == [SourceType.HIVE] * 2
    assert execution.query_text == "create table sales.t as select upper(c) as u from sales.s where c is not null"
    assert execution.nested_ids  # the CTAS and its nested insert are one execution
    element = next(r for r in recs if isinstance(r, Element) and r.qualified_name.endswith(
        f"/sql/{execution.execution_id}"))
    assert element.qualified_name == f"spark://{run.app_id}/1/sql/{execution.execution_id}"
    assert element.query_text == execution.query_text
    assert element.started is not None and element.ended is not None and element.started <= element.ended


def test_call_site_descriptions_are_not_query_text() -> None:
    run, _ = run_case(fixture_lines("insert_overwrite_join"))
    assert all(e.query_text is None for e in run.executions)
    assert all(e.description.endswith("NativeMethodAccessorImpl.java:0") for e in run.executions)


# --- bad input -------------------------------------------------------------------------------

def test_invalid_json_line_is_skipped_and_counted() -> None:
    lines = fixture_lines("ctas_expression")
    broken = lines[:5] + ["{this is not json\n", "[1, 2, 3]\n", "\n"] + lines[5:]
    run, recs = run_case(broken)
    clean_run, clean_recs = run_case(lines)
    assert run.skipped == {"invalid_json": 1, "not_an_event": 1}
    assert summary(run, recs)["executions"] == summary(clean_run, clean_recs)["executions"]


def test_a_line_nested_deeper_than_the_parsers_allow_is_skipped() -> None:
    # found by tests/fuzz: orjson refuses nesting past 1,024 levels, and the json.loads fallback
    # raised RecursionError out of the extractor (every pass, on the same file)
    lines = fixture_lines("ctas_expression")
    deep = '{"Event": "SparkListenerLogStart", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    run, recs = run_case(lines[:5] + [deep] + lines[5:])
    clean_run, clean_recs = run_case(lines)
    assert run.skipped == {"invalid_json": 1}
    assert summary(run, recs)["executions"] == summary(clean_run, clean_recs)["executions"]


def test_unknown_event_type_is_skipped_and_counted() -> None:
    lines = fixture_lines("ctas_expression")
    unknown = [json.dumps({"Event": "com.example.MyListenerEvent", "x": 1}) + "\n",
               json.dumps({"Event": "org.apache.spark.sql.catalyst.catalog.SomeFutureEvent",
                           "database": "d"}) + "\n"]
    run, recs = run_case(lines[:3] + unknown + lines[3:])
    assert run.skipped == {"unknown_event": 2}
    clean_run, clean_recs = run_case(lines)
    assert summary(run, recs)["executions"] == summary(clean_run, clean_recs)["executions"]


def test_truncated_last_line_gives_an_incomplete_application() -> None:
    lines = fixture_lines("ctas_expression")
    assert json.loads(lines[-1])["Event"] == "SparkListenerApplicationEnd"
    run, recs = run_case(lines[:-1] + [lines[-1][: len(lines[-1]) // 2]])
    assert run.skipped == {"invalid_json": 1}
    assert run.outcome == "INCOMPLETE" and run.ended is None
    clean_run, clean_recs = run_case(lines)
    assert summary(run, recs)["executions"] == summary(clean_run, clean_recs)["executions"]


def test_log_cut_inside_an_execution_keeps_it_running() -> None:
    lines = fixture_lines("insert_overwrite_join")
    last_start = max(i for i, line in enumerate(lines) if "SparkListenerSQLExecutionStart" in line
                     and '"Scan hive' in line)
    run, recs = run_case(lines[: last_start + 1])
    (execution,) = [e for e in run.executions if e.execution_id == json.loads(lines[last_start])["executionId"]]
    assert execution.outcome == "RUNNING" and execution.ended is None
    assert [d.ref.qualified_name for d in execution.outputs] == ["shop.customer_totals@primary"]
    assert run.outcome == "INCOMPLETE"
    assert any(isinstance(r, Element) and r.qualified_name.endswith(f"/sql/{execution.execution_id}") for r in recs)


def test_malformed_known_events_are_skipped() -> None:
    processor = ApplicationProcessor(cluster=CLUSTER, default_fs=DEFAULT_FS)
    processor.feed({"Event": "SparkListenerApplicationStart", "App Name": "x", "App ID": "app-1",
                    "Timestamp": 1, "User": "u"})
    processor.feed({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"})
    processor.feed({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
                    "executionId": 1, "time": 2, "description": "d",
                    "sparkPlanInfo": {"nodeName": "Execute InsertIntoHiveTable",
                                      "simpleString": "Execute InsertIntoHiveTable no table here",
                                      "children": [], "metadata": {}}})
    processor.feed({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd",
                    "executionId": 99, "time": 3})
    processor.feed({"Event": "SparkListenerApplicationEnd", "Timestamp": "not a number"})
    run = processor.finish()
    assert run.skipped == {"malformed_event": 2, "unreadable_plan": 1, "orphan_event": 1}
    assert run.app_id == "app-1" and run.executions == ()


def test_a_field_of_another_json_type_is_a_malformed_event() -> None:
    # found by tests/fuzz: `"Properties": true` raised AttributeError out of the processor, and
    # an id given as Infinity OverflowError; both are the event's skip, as a KeyError is
    processor = ApplicationProcessor(cluster=CLUSTER, default_fs=DEFAULT_FS)
    processor.feed({"Event": "SparkListenerApplicationStart", "App Name": "x", "App ID": "app-1",
                    "Timestamp": 1, "User": "u"})
    processor.feed({"Event": "SparkListenerJobStart", "Job ID": [], "Submission Time": 1, "Stage Infos": [],
                    "Properties": True})
    processor.feed_line('{"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart", '
                        '"executionId": Infinity, "time": 2, "description": "d"}')
    run = processor.finish()
    assert run.skipped == {"malformed_event": 2}
    assert run.app_id == "app-1" and run.executions == ()


def test_spark_1_6_log_is_skipped() -> None:
    """A Spark 1.x log (format as in Spark's own core/src/test/resources/spark-events)."""
    lines = [
        '{"Event":"SparkListenerLogStart","Spark Version":"1.6.3"}',
        '{"Event":"SparkListenerBlockManagerAdded","Block Manager ID":{"Executor ID":"driver",'
        '"Host":"localhost","Port":61103},"Maximum Memory":278019440,"Timestamp":1430917381651}',
        '{"Event":"SparkListenerApplicationStart","App Name":"Spark shell","App ID":"local-1430917381534",'
        '"Timestamp":1430917380893,"User":"someone"}',
        '{"Event":"SparkListenerJobStart","Job ID":0,"Submission Time":1430917386422,"Stage Infos":[],'
        '"Stage IDs":[0],"Properties":{}}',
        '{"Event":"SparkListenerApplicationEnd","Timestamp":1430917391398}',
    ]
    run, recs = run_case(lines)
    assert recs == []
    assert run.skipped == {"unsupported_spark_version": 1}  # one warning for the log, not one per line
    assert run.spark_version == "1.6.3"


def test_no_application_start_gives_no_records() -> None:
    lines = [line for line in fixture_lines("ctas_expression") if "SparkListenerApplicationStart" not in line]
    run, recs = run_case(lines)
    assert run.app_id is None and recs == []
    assert list(records(run)) == []


def test_bytes_and_blank_lines_are_accepted() -> None:
    lines = fixture_lines("catalog_ops")
    run, recs = process_lines([line.encode() for line in lines] + [b"\n", b"  \n"], cluster=CLUSTER)
    clean_run, clean_recs = run_case(lines)
    assert run.skipped == {}
    assert summary(run, recs) == summary(clean_run, clean_recs)


# --- plan parsing units ----------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("`spark_catalog`.`sales`.`t`", TableId("spark_catalog", "sales", "t")),
    ("spark_catalog.sales.s", TableId("spark_catalog", "sales", "s")),
    ("`mo`.`ds_target`", TableId(None, "mo", "ds_target")),
    ("jdbc.app.v2_out", TableId("jdbc", "app", "v2_out")),
    ("`weird``name`.`t`", TableId(None, "weird`name", "t")),
])
def test_parse_identifier(text: str, expected: TableId) -> None:
    assert parse_identifier(text) == expected


def test_parse_identifier_names_the_bad_item() -> None:
    with pytest.raises(PlanError, match="'justone'"):
        parse_identifier("justone")


@pytest.mark.parametrize(("location", "paths", "truncated"), [
    ("InMemoryFileIndex(1 paths)[file:/tmp/x]", ["file:/tmp/x"], False),
    ("InMemoryFileIndex(2 paths)[hdfs://ns/a, hdfs://ns/b]", ["hdfs://ns/a", "hdfs://ns/b"], False),
    ("InMemoryFileIndex(3 paths)[hdfs://ns/a, hdfs://ns/b/very/long...", ["hdfs://ns/a"], True),
    ("CatalogFileIndex(1 paths)[hdfs://ns/warehouse/t]", ["hdfs://ns/warehouse/t"], False),
    ("InMemoryFileIndex[file:/tmp/navd-capture/warehouse/sales.db/s]",
     ["file:/tmp/navd-capture/warehouse/sales.db/s"], False),
])
def test_location_paths(location: str, paths: list[str], truncated: bool) -> None:
    assert location_paths(location) == (paths, truncated)


def test_command_result_plans_do_nothing() -> None:
    """`collect()` on a CTAS result repeats the CTAS plan under CommandResult: no I/O."""
    seen = 0
    for line in fixture_lines("ctas_expression"):
        event = json.loads(line)
        if event["Event"].endswith("SQLExecutionStart") and event["sparkPlanInfo"]["nodeName"] == "CommandResult":
            seen += 1
            io = plan_io(event["sparkPlanInfo"], event["physicalPlanDescription"])
            assert not io.reads and not io.writes
    assert seen >= 2  # the collect() of the INSERT and of the CTAS


def test_truncated_locations_are_flagged_on_the_execution() -> None:
    scan = {"nodeName": "Scan parquet ", "simpleString": "FileScan parquet", "children": [],
            "metadata": {"Location": "InMemoryFileIndex(40 paths)[hdfs://ns/d/p=1, hdfs://ns/d/p=2, hdfs://ns/d..."}}
    write = {"nodeName": "Execute InsertIntoHadoopFsRelationCommand",
             "simpleString": "Execute InsertIntoHadoopFsRelationCommand /out/x, false, Parquet, [path=/out/x], "
                             "Overwrite, [a]", "children": [scan], "metadata": {}}
    processor = ApplicationProcessor(cluster=CLUSTER, default_fs=DEFAULT_FS)
    processor.feed({"Event": "SparkListenerApplicationStart", "App Name": "t", "App ID": "application_1_2",
                    "App Attempt ID": "2", "Timestamp": 1000, "User": "u"})
    processor.feed({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
                    "executionId": 0, "rootExecutionId": 0, "description": "x", "time": 1500,
                    "sparkPlanInfo": write, "physicalPlanDescription": ""})
    processor.feed({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd",
                    "executionId": 0, "time": 1600, "errorMessage": "boom"})
    run = processor.finish()
    (execution,) = run.executions
    assert [d.ref.qualified_name for d in execution.inputs] == ["hdfs://ns/d/p=1", "hdfs://ns/d/p=2"]
    assert [d.ref.qualified_name for d in execution.outputs] == ["hdfs://nameservice1/out/x"]
    assert execution.outcome == "FAILED" and execution.error == "boom"
    element = next(r for r in records(run) if isinstance(r, Element) and r.qualified_name.endswith("/sql/0"))
    assert element.qualified_name == "spark://application_1_2/2/sql/0"
    assert element.properties["inputsTruncated"] == "true"
    assert element.query_text == "x"
    # the lineage carries the SQL execution's start and end (lineage as of a moment counts from them)
    flows = [r for r in records(run) if isinstance(r, Relation) and r.type is RelationType.DATA_FLOW]
    assert len(flows) == 3
    assert {(r.first_seen, r.last_seen) for r in flows} == {(datetime.fromtimestamp(1.5, UTC),
                                                             datetime.fromtimestamp(1.6, UTC))}


def _node(name: str, simple: str = "", children: list[dict[str, Any]] | None = None,
          metadata: dict[str, str] | None = None) -> dict[str, Any]:
    return {"nodeName": name, "simpleString": simple or name, "children": children or [],
            "metadata": metadata or {}}


def test_write_nodes_not_understood_are_reported() -> None:
    io = plan_io(_node("Execute InsertIntoBucketsCommand", children=[
        _node("Execute SaveIntoDataSourceCommand"), _node("AtomicCreateTableAsSelect")]), "")
    assert not io.writes
    assert io.unparsed == ("Execute InsertIntoBucketsCommand", "Execute SaveIntoDataSourceCommand",
                           "AtomicCreateTableAsSelect")


@pytest.mark.parametrize("children", [True, 7, "Scan", {"nodeName": "Scan"}])
def test_plan_children_not_a_list_is_a_plan_error(children: Any) -> None:
    # found by tests/fuzz: `"children": true` raised TypeError out of plan_io
    with pytest.raises(PlanError, match="'Project': children is not a list"):
        plan_io({**_node("Project"), "children": children}, "")


def test_v2_write_node_with_table_name() -> None:
    io = plan_io(_node("AppendData cat.ns.t", children=[
        _node("BatchScan cat.ns.src"), _node("OverwriteByExpression noop-table")]), "")
    assert {(w.command, w.table) for w in io.writes} == {("AppendData", TableId("cat", "ns", "t"))}
    assert {r.table for r in io.reads} == {TableId("cat", "ns", "src")}


def test_catalog_event_outside_an_execution_goes_on_the_application() -> None:
    processor = ApplicationProcessor(cluster=CLUSTER)
    processor.feed({"Event": "SparkListenerApplicationStart", "App Name": "a", "App ID": "app-9",
                    "Timestamp": 1000, "User": "u"})
    processor.feed({"Event": "org.apache.spark.sql.catalyst.catalog.DropTablePreEvent", "database": "D", "name": "T"})
    processor.feed({"Event": "org.apache.spark.sql.catalyst.catalog.DropTableEvent", "database": "D", "name": "T"})
    run = processor.finish()
    assert [(e.action, e.qualified_name, e.execution_id) for e in run.catalog_events] == [
        ("DROP_TABLE", "d.t@primary", None)]
    app = next(r for r in records(run) if isinstance(r, Element) and r.type is ElementType.OPERATION_EXECUTION)
    assert app.properties["catalogEvents"] == "DROP_TABLE d.t@primary"
    assert app.properties["outcome"] == "INCOMPLETE"


def test_partition_thrift_server_and_yarn_am_events_are_known() -> None:
    """As the Thrift Server logs them (captured): partition events name their table; its session
    and operation events are accepted without a warning."""
    processor = ApplicationProcessor(cluster=CLUSTER)
    processor.feed({"Event": "SparkListenerApplicationStart", "App Name": "a", "App ID": "app-9",
                    "Timestamp": 1000, "User": "u"})
    processor.feed({"Event": "org.apache.spark.sql.catalyst.catalog.CreatePartitionsEvent", "database": "s",
                    "name": "orders", "partSpecs": [{"Region": "eu"}, {"Region": "us"}]})
    processor.feed({"Event": "org.apache.spark.scheduler.SparkListenerMiscellaneousProcessAdded", "time": 1,
                    "processId": "yarn-am", "info": {}})
    processor.feed({"Event": "org.apache.spark.sql.hive.thriftserver.ui.SparkListenerThriftServerOperationStart",
                    "id": "x", "sessionId": "y", "statement": "SELECT 1", "groupId": "z", "startTime": 1,
                    "userName": "ann"})
    run = processor.finish()
    assert [(e.action, e.qualified_name) for e in run.catalog_events] == [("CREATE_PARTITIONS", "s.orders@primary")]
    assert dict(run.skipped) == {}


# Column lineage (plan.column_flows and its records) is tested in tests/test_spark_plans.py.


def test_split_list_respects_nesting() -> None:
    assert split_list("[a#1, f(b#2, c#3) AS d#4, map(1, [2, 3])#5]") == [
        "a#1", "f(b#2, c#3) AS d#4", "map(1, [2, 3])#5"]


def test_dropped_tables_and_databases_become_deletions() -> None:
    """catalog_ops renames ops.a to ops.b, drops ops.b, drops ops2, then ops with cascade."""
    run, _ = run_case(fixture_lines("catalog_ops"))
    deletions = list(dropped(run, run.executions))
    got = {(d.ref.qualified_name, d.ref.type.value) for d in deletions}
    assert got == {(f"ops.a@{CLUSTER}", "TABLE"), (f"ops.b@{CLUSTER}", "TABLE"),
                   (f"ops2@{CLUSTER}", "DATABASE"), (f"ops@{CLUSTER}", "DATABASE")}
    by_name = {d.ref.qualified_name: d for d in deletions}
    [drop_b] = [e for e in run.executions if any(c.action == "DROP_TABLE" for c in e.catalog_events)]
    assert by_name[f"ops.b@{CLUSTER}"].delete_time == drop_b.ended
    # Only the executions given are looked at (an incremental pass passes the changed ones).
    others = dropped(run, [e for e in run.executions if e is not drop_b])
    assert f"ops.b@{CLUSTER}" not in {d.ref.qualified_name for d in others}


def test_a_table_created_again_later_in_the_application_is_dropped_then_created() -> None:
    """The DROP flags the table as of its execution; the later CREATE is a creation that knows
    the drop and the earlier creation (the name's first incarnation, through the RENAME)."""
    run, _ = run_case(fixture_lines("catalog_ops"))
    qualified_name = hive_qualified_name(CLUSTER, "ops", "b")
    [drop_b] = [e for e in run.executions if any(c.action == "DROP_TABLE" for c in e.catalog_events)]
    [rename] = [e for e in run.executions if any(c.action == "RENAME_TABLE" for c in e.catalog_events)]
    again = CatalogEvent("CREATE_TABLE", "ops", "b", None, qualified_name, None, 999)
    assert drop_b.ended is not None
    creator = dataclasses.replace(drop_b, execution_id=999, catalog_events=(again,), started=drop_b.ended,
                                  ended=drop_b.ended + timedelta(seconds=5))
    run = dataclasses.replace(run, catalog_events=(*run.catalog_events, again), executions=(*run.executions, creator))
    assert {d.ref.qualified_name: d.delete_time for d in dropped(run, run.executions)}[qualified_name] == drop_b.ended
    recreated = [c for c in created_tables(run, [creator]) if c.table.qualified_name == qualified_name]
    assert recreated == [TableCreation(EntityRef(SourceType.HIVE, qualified_name, ElementType.TABLE), creator.ended,
                                       drop_b.ended, rename.ended)]
    # the first creation (the RENAME to the name) knows no drop before it
    [first] = [c for c in created_tables(run, run.executions) if c.table.qualified_name == qualified_name
               and c.created == rename.ended]
    assert (first.dropped, first.earlier_created) == (None, None)


def test_dropped_table_takes_its_columns_from_the_applications_column_lineage() -> None:
    run, _ = run_case(fixture_lines("ctas_expression"))
    [ctas] = [e for e in run.executions if e.columns]
    target = ctas.columns[0].target
    table, _, column = target.qualified_name.rpartition("@")[0].rpartition(".")
    database, _, name = table.partition(".")
    drop = CatalogEvent("DROP_TABLE", database, name, None, hive_qualified_name(CLUSTER, database, name), None,
                        ctas.execution_id)
    dropper = dataclasses.replace(ctas, execution_id=999, catalog_events=(drop,), columns=())
    run = dataclasses.replace(run, catalog_events=(*run.catalog_events, drop),
                              executions=(*run.executions, dropper))
    got = {d.ref.qualified_name: d.ref.type for d in dropped(run, [dropper])}
    assert got[hive_qualified_name(CLUSTER, database, name)] is ElementType.TABLE
    assert got[target.qualified_name] is ElementType.FIELD


# --- views defined through Spark SQL (create_view) ------------------------------------------

def _view_executions(run: ApplicationRun) -> dict[str, list[Any]]:
    """The executions that define each view, by the view's qualified name, in order."""
    found: dict[str, list[Any]] = {}
    for execution in run.executions:
        for dataset in execution.outputs:
            if dataset.ref.type is ElementType.VIEW:
                found.setdefault(dataset.ref.qualified_name, []).append(execution)
    return found


def test_persisted_views_are_outputs_and_temporary_views_stay_out() -> None:
    run, recs = run_case(fixture_lines("create_view"))
    views = _view_executions(run)
    assert {k: [e.query_text.split(" as ")[0] for e in v] for k, v in views.items()} == {
        # defined again later (CREATE OR REPLACE, ALTER VIEW ... AS): the later definition writes it
        "vw.v_plain@primary": ["create or replace view vw.v_plain"],
        "vw.v_cols@primary": ["alter view vw.v_cols"],
        # `create view if not exists vw.v_agg` (it exists: no catalog event) changed nothing
        "vw.v_agg@primary": ["create view vw.v_agg"],
        # over vw.v_plain: Spark's analysed plan inlines it, so the inputs are its tables
        "vw.v_nested@primary": ["create view vw.v_nested"],
        # `create view v_unqualified` after `use vw`: Spark's plan names it in full
        "vw.v_unqualified@primary": ["create view v_unqualified"],
        **{f"vw.{v}@primary": [f"create view vw.{v}"] for v in ("v_window", "v_explode", "v_union", "v_rollup")},
    }
    for executions in views.values():
        for execution in executions:
            assert [d.ref.source_type for d in execution.outputs] == [SourceType.HIVE]
            assert execution.write_commands in (("CreateViewCommand",), ("AlterViewAsCommand",))
            assert execution.columns and not execution.column_notes
    # CREATE TEMPORARY VIEW tv / CREATE OR REPLACE GLOBAL TEMPORARY VIEW gv: no execution, no name
    texts = [e.query_text or "" for e in run.executions]
    assert not [t for t in texts if "temporary" in t or t.startswith(("alter view tv", "create view if not"))]
    names = {r.qualified_name for r in recs if isinstance(r, Element)} | {
        ref.qualified_name for r in recs if isinstance(r, Relation) for ref in (r.endpoint1, r.endpoint2)}
    assert not [n for n in names if n.startswith(("tv", "gv", "global_temp", "vw.tv", "vw.gv"))]


# view_forms: (SQL execution, the view it defines, the tables it reads, its FIELD children as the
# view names them), written from each statement (capture.VIEW_FORMS); a definition replaced by a
# later statement (REPLACED) writes no view and no column
_O, _C, _R = "vf.orders@primary", "vf.customers@primary", "vf.regions@primary"
REPLACED = {22: ("if_missing", 28), 24: ("replaced", 26)}
VIEW_FORMS: list[tuple[int, str, list[str], list[str]]] = [
    (14, "top_regions", [_C, _O], ["region_name", "revenue"]),
    (16, "order_facts", [_C, _O, _R], [f"a{n}" for n in range(1, 8)]),
    (18, "best_customers", [_C, _O], ["name", "rnk", "total"]),
    (20, "commented", [_O], ["amt", "id"]),
    (22, "if_missing", [_C], ["customer_id", "name"]),
    (24, "replaced", [_O], ["amount", "order_id"]),
    (26, "replaced", [_C], ["customer_id", "region"]),
    (28, "if_missing", [_C], ["area", "customer_id"]),
    (30, "bound", [_O], ["order_id", "status"]),
    (32, "evolving", [_C], ["customer_id", "name", "region"]),
    (34, "compensated", [_O], ["order_id", "ts"]),
    (36, "type_evolving", [_R], ["manager", "region"]),
    (38, "with_cte", [_C, _O], ["amount", "name"]),
    (40, "with_in", [_C, _O], ["customer_id", "name", "region"]),
    (42, "with_exists", [_C, _O, _R], ["name"]),
    (44, "above_average", [_O], ["amount", "order_id"]),
    (46, "all_names", [_C, _R], ["who"]),
    (48, "both_sides", [_C, _R], ["region"]),
    (50, "one_side", [_C, _R], ["region"]),
    (52, "statuses", [_O], ["status"]),
    (54, "natural_join", [_C, _R], ["customer_id", "manager", "name", "region"]),
    (56, "using_join", [_C, _O], ["amount", "customer_id", "name", "order_id", "region", "status", "ts"]),
    (58, "full_join", [_C, _R], ["manager", "name"]),
    (60, "cross_join", [_C, _R], ["name", "other"]),
    (62, "left_join", [_C, _O], ["amount", "name"]),
    (64, "aliased_columns", [_C], ["aa", "bb"]),
    (66, "literals", [], []),   # VALUES: no table, and no column with a source
    (68, "over_view", [_C, _O], ["doubled", "region_name"]),   # over top_regions: its tables
    (72, "mixed_case", [_C], ["name", "the id"]),
    (76, "cut_plan", [_C], []),   # the plan text truncated after the view's table
    (80, "cut_text", [], []),     # ... inside the statement: neither tables nor columns
]


@pytest.mark.parametrize(("execution_id", "view", "inputs", "fields"), VIEW_FORMS, ids=[f[1] + f"-{f[0]}" for f in VIEW_FORMS])
def test_every_view_form_records_its_view(execution_id: int, view: str, inputs: list[str], fields: list[str]) -> None:
    """Each CREATE [OR REPLACE] VIEW / ALTER VIEW ... AS form writes the VIEW element, reads its
    tables and names its columns (FIELD children of the VIEW) as the view names them; a view
    defined again later has the later definition's lineage only: the earlier statement still
    read its tables, but writes neither the view nor its columns, and says which statement
    replaced it."""
    run, recs = run_case(fixture_lines("view_forms"))
    (execution,) = [e for e in run.executions if e.execution_id == execution_id]
    assert [d.ref.qualified_name for d in execution.inputs] == inputs
    element = next(r for r in recs if isinstance(r, Element) and r.qualified_name.endswith(f"/sql/{execution_id}"))
    if execution_id in REPLACED:
        by = REPLACED[execution_id][1]
        assert (execution.outputs, execution.columns) == ((), ())
        assert execution.replaced_views == ((f"vf.{view}@primary", by),)
        assert element.properties["viewsReplaced"] == f"vf.{view}@primary (by sql {by})"
        return
    assert "viewsReplaced" not in element.properties
    assert [(d.ref.qualified_name, d.ref.type) for d in execution.outputs] == [(f"vf.{view}@primary", ElementType.VIEW)]
    assert sorted({e.target.qualified_name for e in execution.columns}) == [f"vf.{view}.{f}@primary" for f in fields]
    children = {r.endpoint2.qualified_name for r in stubs_for(recs, "test##1") if isinstance(r, Relation)
                and r.type is RelationType.PARENT_CHILD and r.endpoint1.qualified_name == f"vf.{view}@primary"}
    assert sorted(children) == [f"vf.{view}.{f}@primary" for f in fields]


def test_a_view_whose_plan_text_spark_truncated_says_so() -> None:
    """spark.sql.maxPlanStringLength cut the plan after the view's table, then inside the
    statement: the view is still written (its tables as far as the text goes), and its
    execution says which view lacks its lineage and why, instead of wrong columns."""
    run, recs = run_case(fixture_lines("view_forms"))
    by_id = {e.execution_id: e for e in run.executions}
    for execution_id, view, more in ((76, "cut_plan", 144), (80, "cut_text", 423)):
        assert by_id[execution_id].column_incomplete == ((
            f"plan text truncated by Spark ({more} more characters; raise spark.sql.maxPlanStringLength): "
            "the view's query is not all in the log", (f"vf.{view}@primary",)),)
        element = next(r for r in recs if isinstance(r, Element) and r.qualified_name.endswith(f"/sql/{execution_id}"))
        assert element.properties["columnLineageIncomplete"].endswith(f": vf.{view}@primary")


def test_a_view_is_written_as_a_stub_that_the_hms_document_replaces() -> None:
    """As for a CTAS target: an unlinked endpoint and an ElementStub (indexed only if absent)."""
    _run, recs = run_case(fixture_lines("create_view"))
    stubs = {s.element.qualified_name: s.element for s in stubs_for(recs, "test##1") if isinstance(s, ElementStub)}
    view = stubs["vw.v_plain@primary"]
    assert (view.source_type, view.type, view.name) == (SourceType.HIVE, ElementType.VIEW, "v_plain")
    assert view.properties == {STUB_MARK: "spark"}
    assert stubs["vw.v_plain.a2@primary"].type is ElementType.FIELD
    parents = {r.endpoint2.qualified_name: r.endpoint1 for r in stubs_for(recs, "test##1")
               if isinstance(r, Relation) and r.type is RelationType.PARENT_CHILD}
    assert parents["vw.v_plain.a2@primary"] == view.ref   # the VIEW, as the HMS extractor links it
    assert parents["vw.src.amount@primary"].type is ElementType.TABLE
    assert not [r for r in recs if isinstance(r, Element) and r.type is ElementType.VIEW]


def test_spark_and_hms_give_a_view_and_its_columns_the_same_identity() -> None:
    """DESCRIBE FORMATTED of each view at the end of the job (what the HMS extractor reads) ->
    the HMS records; the Spark extractor's view and the targets of its last definition coincide."""
    described = json.loads((FIXTURES / "create_view.describe.json").read_text(encoding="utf-8"))
    run, _recs = run_case(fixture_lines("create_view"))
    views = _view_executions(run)
    assert len(described) == len(views) == 9
    for view, rows in described.items():
        hms = table_records(table_info("vw", view, rows), CLUSTER, DEFAULT_FS)
        hms_view = next(r for r in hms if isinstance(r, Element) and r.type is ElementType.VIEW)
        hms_fields = {r.identity for r in hms if isinstance(r, Element) and r.type is ElementType.FIELD}
        last = views[hms_view.qualified_name][-1]
        (output,) = last.outputs
        assert output.ref.identity == hms_view.identity and output.ref.type is hms_view.type
        assert {e.target.identity for e in last.columns} == hms_fields, view


# --- the plan of each execution --------------------------------------------------------------

def test_an_execution_keeps_its_final_adaptive_plan() -> None:
    lines = fixture_lines("insert_overwrite_join")
    run, recs = run_case(lines)
    (execution,) = [e for e in run.executions if [d.ref.qualified_name for d in e.outputs]
                    == ["shop.customer_totals@primary"]]
    plans = [json.loads(line) for line in lines]
    plans = [e["physicalPlanDescription"] for e in plans if e["Event"].endswith(
        ("SQLExecutionStart", "SQLAdaptiveExecutionUpdate")) and e["executionId"] == execution.execution_id]
    assert len(plans) > 1 and "isFinalPlan=false" in plans[0]   # AQE re-planned it
    assert "Arguments: isFinalPlan=true" in plans[-1] and "== Final Plan ==" in plans[-1]
    element = next(r for r in recs if isinstance(r, Element) and r.qualified_name.endswith(
        f"/sql/{execution.execution_id}"))
    assert element.execution_plan == execution.plan == plans[-1]


def test_a_ctas_keeps_the_plans_of_its_nested_executions() -> None:
    run, _ = run_case(fixture_lines("ctas_expression"))
    (ctas,) = [e for e in run.executions if e.nested_ids]
    assert ctas.plan is not None
    headers = [line for line in ctas.plan.splitlines() if line.startswith("== SQL execution ")]
    assert headers == [f"== SQL execution {i} ==" for i in (ctas.execution_id, *ctas.nested_ids)]
    assert "Execute CreateDataSourceTableAsSelectCommand" in ctas.plan and "WriteFiles" in ctas.plan


def test_a_huge_plan_is_cut_with_a_note() -> None:
    """The final plan of a real execution, padded past the limit as a plan of a very wide table
    would be: the element keeps its first lines and says how much was cut."""
    lines = fixture_lines("insert_overwrite_join")
    last = max(i for i, line in enumerate(lines) if "SQLAdaptiveExecutionUpdate" in line)
    event = json.loads(lines[last])
    original = event["physicalPlanDescription"]
    copies = MAX_STORED_PLAN_CHARS // len(original) + 2
    event["physicalPlanDescription"] = "\n".join([original] * copies)
    run, recs = run_case(lines[:last] + [json.dumps(event) + "\n"] + lines[last + 1:])
    (execution,) = [e for e in run.executions if e.execution_id == event["executionId"]]
    plan = execution.plan
    assert plan is not None and len(plan) <= MAX_STORED_PLAN_CHARS
    body, note = plan.rsplit("\n", 1)
    assert original in body and body in event["physicalPlanDescription"]
    assert note == (f"... plan cut by navd: {len(body)} of {len(event['physicalPlanDescription'])} characters "
                    f"kept (at most {MAX_STORED_PLAN_CHARS} are stored)")
    assert bounded_plan(original) == original


def test_a_malformed_streaming_progress_event_is_skipped() -> None:
    processor = ApplicationProcessor(cluster=CLUSTER)
    processor.feed({"Event": "org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent",
                    "progress": "not an object"})
    processor.feed({"Event": "org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent",
                    "progress": {"runId": "r", "sink": {"description": "FileSink[/out]"}}})
    assert dict(processor.finish().skipped) == {"malformed_event": 1}
