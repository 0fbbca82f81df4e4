"""The pure part of the OpenLineage intake: `[openlineage]` config, the vendored schema's
refusals (the first bad field by its JSON path) and the mapping of real events (the Spark
listener's captured COMPLETE; events the openlineage-python client builds) to navd records."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.event_v2 import RunState

from navd.config import parse_config
from navd.errors import ConfigError
from navd.index.documents import MAX_TERM_BYTES, element_document, relation_document, stub_document
from navd.model import Element, ElementStub, Record, Relation
from navd.names import SourceType, openlineage_dataset_ref
from navd.openlineage.mapping import MappingSettings, edge_transformations, map_event, merge_execution
from navd.openlineage import intake, mapping, schema
from navd.openlineage.limits import check_names
from navd.openlineage.schema import SPEC_VERSION, InvalidEvent, check_event, validate

from openlineage_events import HIVE, JOB_NAMESPACE, as_json, job_run

SPARK_EVENT = json.loads((Path(__file__).parent / "fixtures" / "openlineage" / "ctas_expression.complete.json")
                         .read_text(encoding="utf-8"))
RUN_ID = "0190f1e4-2b4c-7d7e-9a58-6f3f5e0c1a11"
DAG_RUN_ID = "0190f1e4-2b4c-7d7e-9a58-6f3f5e0c1a00"
SETTINGS = MappingSettings({HIVE: "primary"}, "fallback")


def relations(records: Iterable[Record]) -> set[tuple[str, ...]]:
    """Relations as (type, endpoint 1, endpoint 2, dependency, expression, subtype, linked)."""
    return {(r.type.value, r.endpoint1.qualified_name, r.endpoint2.qualified_name,
             r.dependency_type.value if r.dependency_type else "", r.expression or "",
             r.properties.get("subtype", ""), "linked" if not r.unlinked else "unlinked")
            for r in records if isinstance(r, Relation)}


def elements(records: Iterable[Record]) -> dict[str, tuple[str, str, bool]]:
    """qualifiedName -> (source type, type, is a stub)."""
    out = {}
    for record in records:
        if isinstance(record, (Element, ElementStub)):
            element = record.element if isinstance(record, ElementStub) else record
            out[element.qualified_name] = (element.source_type.value, element.type.value,
                                           isinstance(record, ElementStub))
    return out


# -- config --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("section", "message"), [
    ({"namespaces": {"hive://m:9083": 3}}, "[openlineage] namespaces: expected a table of strings"),
    ({"namespaces": {"hive://m:9083": " "}}, "[openlineage] namespaces: 'hive://m:9083': the cluster must be"),
    ({"namespaces": {" ": "primary"}}, "[openlineage] namespaces: ' ': a namespace must be non-empty"),
    ({"max_body_bytes": 10}, "[openlineage] max_body_bytes: must be an integer >= 1024"),
    ({"enabled": "yes"}, "[openlineage] enabled: expected true or false"),
    ({"spool": "/x"}, "[openlineage]: unknown key 'spool'"),
])
def test_bad_openlineage_settings_are_one_line_naming_the_key(section: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config({"openlineage": section}, source="navd.toml")
    assert str(refused.value).startswith(f"navd.toml: {message}"), str(refused.value)
    assert "\n" not in str(refused.value)


def test_openlineage_settings_load() -> None:
    config = parse_config({"openlineage": {"enabled": True, "namespaces": {HIVE: "primary"},
                                           "spool_dir": "/var/spool/navd", "max_body_bytes": 2048}})
    assert config.openlineage.enabled and dict(config.openlineage.namespaces) == {HIVE: "primary"}
    assert (config.openlineage.spool_dir, config.openlineage.max_body_bytes) == ("/var/spool/navd", 2048)
    assert parse_config({}).openlineage.enabled is False


# -- the schema ----------------------------------------------------------------------------------

def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(event: dict[str, Any]) -> None:
        target = event
        for key in path[:-1]:
            target = target[key]
        if value is KeyError:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    return change


@pytest.mark.parametrize(("change", "path", "message"), [
    (_set(["run", "runId"], "not-a-uuid"), "$.run.runId", "'not-a-uuid' is not a 'uuid'"),
    (_set(["eventTime"], KeyError), "$", "'eventTime' is a required property"),
    (_set(["eventTime"], "yesterday"), "$.eventTime", "'yesterday' is not a 'date-time'"),
    (_set(["eventType"], "DONE"), "$.eventType", "'DONE' is not one of"),
    (_set(["job", "name"], 7), "$.job.name", "7 is not of type 'string'"),
    (_set(["outputs", 0, "name"], KeyError), "$.outputs[0]", "'name' is a required property"),
    (_set(["outputs", 0, "facets", "columnLineage", "fields", "u", "inputFields"], KeyError),
     "$.outputs[0].facets.columnLineage.fields.u", "'inputFields' is a required property"),
    (_set(["run", "facets", "parent", "run", "runId"], "x"), "$.run.facets.parent.run.runId", "'x' is not a 'uuid'"),
])
def test_an_invalid_event_names_its_first_bad_field(change: Callable[[dict[str, Any]], None], path: str,
                                                    message: str) -> None:
    event = copy.deepcopy(SPARK_EVENT)
    change(event)
    with pytest.raises(InvalidEvent) as refused:
        validate(event)
    assert refused.value.path == path
    assert str(refused.value).startswith(f"{path}: {message}"), str(refused.value)


def test_the_intake_takes_an_event_whose_facets_do_not_conform_leaving_them_out_of_the_mapping() -> None:
    """As Marquez: the core is checked strictly, a facet that does not conform is listed and not
    mapped, a custom facet without `_schemaURL` is kept; the event as it came is left whole."""
    event = as_json(job_run(RUN_ID, "load_revenue", RunState.FAIL, error="boom"))
    # Trino's FAIL: the Java client drops the null programmingLanguage
    del event["run"]["facets"]["errorMessage"]["programmingLanguage"]
    event["run"]["facets"]["trino_metadata"] = {"queryId": "20261123_060000_00001_abcde"}  # no _producer, _schemaURL
    del event["outputs"][0]["facets"]["schema"]["_schemaURL"]  # a mapped facet without it still conforms
    event["inputs"][1]["facets"]["columnLineage"] = {"fields": {"x": {}}}  # no inputFields: nonconforming
    event["inputs"][0]["inputFacets"] = {"stats": 7}  # not an object
    before = copy.deepcopy(event)
    with pytest.raises(InvalidEvent):
        validate(event)  # strict: navd's own export is held to the whole spec
    checked = check_event(event)
    assert event == before
    assert checked.kind == "RunEvent"
    assert [(f.place, f.name, f.problem.split(":")[0]) for f in checked.nonconforming] == [
        ("$.run.facets", "errorMessage", "$.run.facets.errorMessage"),
        ("$.inputs[0].inputFacets", "stats", "$.inputs[0].inputFacets.stats"),
        ("$.inputs[1].facets", "columnLineage", "$.inputs[1].facets.columnLineage.fields.x")]
    assert "'programmingLanguage' is a required property" in checked.nonconforming[0].problem
    mapped = map_event(checked.mappable, checked.kind, SETTINGS)
    assert mapped.execution is not None and "error" not in mapped.execution.properties
    assert checked.mappable["run"]["facets"].keys() == {"nominalTime", "trino_metadata"}
    assert "sales.revenue.total@primary" in elements(mapped.records)  # the schema facet without _schemaURL mapped
    # the core stays strict
    broken = copy.deepcopy(before)
    broken["run"]["runId"] = "nope"
    with pytest.raises(InvalidEvent, match=re.escape("$.run.runId: 'nope' is not a 'uuid'")):
        check_event(broken)


def test_valid_facets_are_remembered_by_digest_and_a_changed_one_is_checked_again() -> None:
    """The memo that spares jsonschema a facet set seen valid keeps a 16-byte digest of it, not its
    text (a wide table's column lineage is megabytes; 4,096 of them would be gigabytes)."""
    event = copy.deepcopy(SPARK_EVENT)
    fields = event["outputs"][0]["facets"]["columnLineage"]["fields"]
    for i in range(2000):  # a wide table: ~150 kB of column lineage
        fields[f"wide_column_{i}"] = {"inputFields": [{"namespace": "hdfs://nn", "name": "/t", "field": f"c{i}"}]}
    validate(event)
    remembered = [key for known in schema._valid_facets.values() for key in known]
    assert remembered and {len(key) for key in remembered} == {16}
    validate(event)  # remembered: valid again
    del fields["wide_column_7"]["inputFields"]
    with pytest.raises(InvalidEvent) as refused:
        validate(event)
    assert refused.value.path == "$.outputs[0].facets.columnLineage.fields.wide_column_7"


def test_the_three_kinds_of_event_are_told_apart() -> None:
    assert SPEC_VERSION == "2-0-2"
    assert validate(SPARK_EVENT) == "RunEvent"
    base = {"eventTime": "2026-11-23T06:00:00Z", "producer": "https://x", "schemaURL": "https://y"}
    assert validate({**base, "dataset": {"namespace": HIVE, "name": "sales.t"}}) == "DatasetEvent"
    assert validate({**base, "job": {"namespace": "n", "name": "j"}}) == "JobEvent"
    with pytest.raises(InvalidEvent, match=r"^\$: an OpenLineage event is a JSON object, got list$"):
        validate([SPARK_EVENT])


# -- naming --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("namespace", "name", "expected"), [
    ("hdfs://NN:8020", "/data/raw//orders/", ("HDFS", "DIRECTORY", "hdfs://nn:8020/data/raw/orders")),
    ("file", "/tmp/x/y.csv", ("HDFS", "DIRECTORY", "file:///tmp/x/y.csv")),
    ("s3://bucket", "warehouse/t", ("S3", "DIRECTORY", "s3a://bucket/warehouse/t")),
    (HIVE, "Sales.Orders", ("HIVE", "TABLE", "sales.orders@primary")),
    # a metastore no [openlineage] namespaces entry names is another cluster's: its own namespace
    ("hive://other:9083", "sales.orders", ("OPENLINEAGE", "TABLE", "hive://other:9083/sales.orders")),
    # `hive://<cluster>`, as navd's export names a cluster without an entry, is that cluster's
    ("hive://fallback", "sales.orders", ("HIVE", "TABLE", "sales.orders@fallback")),
    ("hive://Primary/", "sales.orders", ("HIVE", "TABLE", "sales.orders@primary")),
    ("hive://east", "sales.orders", ("OPENLINEAGE", "TABLE", "hive://east/sales.orders")),
    # a known metastore's name that is not db.table (a federated engine's catalog.db.table): its own
    (HIVE, "hive_catalog.sales.orders", ("OPENLINEAGE", "TABLE", f"{HIVE}/hive_catalog.sales.orders")),
    (HIVE, "orders", ("OPENLINEAGE", "TABLE", f"{HIVE}/orders")),
    ("postgres://db:5432", "shop.public.orders", ("OPENLINEAGE", "TABLE", "postgres://db:5432/shop.public.orders")),
    ("bigquery", "project.ds.t", ("OPENLINEAGE", "TABLE", "bigquery://project.ds.t")),
    ("kafka://broker:9092", "clicks", ("OPENLINEAGE", "TABLE", "kafka://broker:9092/clicks")),
])
def test_datasets_are_named_as_navd_names_them(namespace: str, name: str, expected: tuple[str, str, str]) -> None:
    ref = openlineage_dataset_ref(namespace, name, SETTINGS.clusters, SETTINGS.default_cluster)
    assert (ref.source_type.value, ref.type.value, ref.qualified_name) == expected


@pytest.mark.parametrize("identifiers", [5, "sales.t", [None, 3, "x"], {"namespace": HIVE, "name": "sales.t"}])
def test_a_symlinks_facet_of_another_shape_names_nothing(identifiers: Any) -> None:
    """The symlinks facet is no facet navd validates: identifiers that are not a list of objects
    leave the dataset its own name instead of failing the event."""
    event = as_json(job_run("0e1b7a58-3c44-4a6e-9f55-6b1f3e5d2a10", "t", RunState.COMPLETE))
    event["outputs"][1]["facets"]["symlinks"] = {"_producer": "p", "_schemaURL": "https://x/s.json",
                                                 "identifiers": identifiers}
    mapped = map_event(event, validate(event), SETTINGS)
    assert "hdfs://nn:8020/data/sales/revenue_export" in {r.element.qualified_name for r in mapped.records
                                                         if isinstance(r, ElementStub)}


@pytest.mark.parametrize(("namespace", "aliased"), [
    (HIVE, "sales.t@primary"),                          # a mapped metastore
    ("hive://fallback", "sales.t@fallback"),            # navd's own spelling of a cluster
    ("file:/tmp/warehouse", "sales.t@fallback"),        # a Spark session's own warehouse
    ("hive://other:9083", None),                        # another metastore: the path keeps its name
    ("arn:aws:glue:eu-west-1:123", None),               # another catalog
])
def test_a_symlink_renames_a_dataset_only_to_a_table_of_a_known_cluster(namespace: str, aliased: str | None) -> None:
    event = as_json(job_run("0e1b7a58-3c44-4a6e-9f55-6b1f3e5d2a10", "t", RunState.COMPLETE))
    event["outputs"][1]["facets"]["symlinks"] = {"_producer": "p", "_schemaURL": "https://x/s.json",
                                                 "identifiers": [{"namespace": namespace, "name": "sales.t",
                                                                  "type": "TABLE"}]}
    mapped = map_event(event, validate(event), SETTINGS)
    names = {r.element.qualified_name for r in mapped.records if isinstance(r, ElementStub)}
    if aliased is None:
        assert "hdfs://nn:8020/data/sales/revenue_export" in names and not any("sales.t@" in n for n in names)
    else:
        assert aliased in names and "hdfs://nn:8020/data/sales/revenue_export" not in names
    assert mapped.unknown_metastores == ({namespace} if namespace == "hive://other:9083" else set())


# -- mapping real events -------------------------------------------------------------------------

def test_the_spark_listeners_event_maps_to_the_spark_extractors_vocabulary() -> None:
    """The listener's COMPLETE of `create table sales.t as select upper(c) as u from sales.s
    where c is not null`: the DIRECT TRANSFORMATION is an EXPRESSION DATA_FLOW, the
    dataset-wide FILTER a CONTROL_FLOW of each written column, both through the run. The
    tables are the catalog tables their symlinks facet names (the listener's `file` +
    warehouse location is where they are stored), as navd's Spark extractor names them."""
    mapped = map_event(SPARK_EVENT, validate(SPARK_EVENT), SETTINGS)
    job = "openlineage://navd-compare/ctas_expression.execute_create_data_source_table_as_select_command.sales_t"
    run = f"{job}/01a20775-bbb5-78bd-823c-edc0afb35603"
    app_run = "01a20775-910f-7620-8184-60ffced327c5"
    # the symlink's namespace `file:/tmp/navd-capture/warehouse` is not mapped: the default cluster
    s, t = "sales.s@fallback", "sales.t@fallback"
    assert relations(mapped.records) == {
        ("INSTANCE_OF", job, run, "", "", "", "linked"),
        ("PARENT_CHILD", f"openlineage://navd-compare/ctas_expression/{app_run}", run, "", "", "", "unlinked"),
        ("DATA_FLOW", s, run, "", "", "", "unlinked"),
        ("DATA_FLOW", run, t, "", "", "", "unlinked"),
        ("DATA_FLOW", "sales.s.c@fallback", "sales.t.u@fallback", "EXPRESSION", "", "TRANSFORMATION", "unlinked"),
        ("CONTROL_FLOW", "sales.s.c@fallback", "sales.t.u@fallback", "", "", "FILTER", "unlinked"),
        ("PARENT_CHILD", s, "sales.s.c@fallback", "", "", "", "linked"),
        ("PARENT_CHILD", s, "sales.s.n@fallback", "", "", "", "linked"),
        ("PARENT_CHILD", t, "sales.t.u@fallback", "", "", "", "linked"),
    }
    assert elements(mapped.records) == {job: ("OPENLINEAGE", "OPERATION", False),
                                        s: ("HIVE", "TABLE", True), t: ("HIVE", "TABLE", True),
                                        "sales.s.c@fallback": ("HIVE", "FIELD", True),
                                        "sales.s.n@fallback": ("HIVE", "FIELD", True),
                                        "sales.t.u@fallback": ("HIVE", "FIELD", True)}
    execution = mapped.execution
    assert execution is not None and execution.qualified_name == run
    assert (execution.properties["state"], execution.started, execution.ended) == (
        "COMPLETE", None, datetime(2026, 11, 23, 8, 11, 29, 501000, tzinfo=UTC))
    # one run, one lineage: the lineage relations, and the execution, name the application run
    assert mapped.spark_application_run == app_run
    assert execution.properties["sparkApplicationRun"] == app_run
    lineage = {r.type.value for r in mapped.records if isinstance(r, Relation) and "sparkApplicationRun" in r.properties}
    assert lineage == {"DATA_FLOW", "CONTROL_FLOW"}
    assert relations(mapped.without_lineage().records) == {
        r for r in relations(mapped.records) if r[0] in ("INSTANCE_OF", "PARENT_CHILD")}


def test_the_spark_listeners_application_run_names_its_spark_application() -> None:
    """The application's START (SparkListenerApplicationStart) carries spark_applicationDetails:
    its execution holds the application id that navd's event-log extraction knows it by."""
    start = copy.deepcopy(SPARK_EVENT)
    app_run = "01a20775-910f-7620-8184-60ffced327c5"
    start.update(eventType="START", inputs=[], outputs=[], job={"namespace": "navd-compare", "name": "ctas_expression"})
    start["run"]["runId"] = app_run
    start["run"]["facets"]["spark_applicationDetails"] = {
        "_producer": SPARK_EVENT["producer"], "_schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet",
        "master": "local[1]", "appName": "ctas_expression", "applicationId": "local-1795421480000",
        "deployMode": "client", "userName": "navd"}
    mapped = map_event(start, validate(start), SETTINGS)
    assert mapped.spark_application_run == app_run
    assert mapped.execution is not None
    assert (mapped.execution.properties["sparkApplicationRun"], mapped.execution.properties["sparkApplicationId"]) == (
        app_run, "local-1795421480000")
    # an event of another producer is not the listener's, whatever its facets look like
    client = as_json(job_run(RUN_ID, "load_revenue", RunState.COMPLETE, offset=60, parent=("daily", DAG_RUN_ID)))
    assert map_event(client, validate(client), SETTINGS).spark_application_run is None


def test_a_clients_run_maps_to_operation_execution_flows_and_column_edges() -> None:
    event = as_json(job_run(RUN_ID, "load_revenue", RunState.COMPLETE, offset=60, parent=("daily", DAG_RUN_ID)))
    mapped = map_event(event, validate(event), SETTINGS)
    job = f"openlineage://{JOB_NAMESPACE}/load_revenue"
    run = f"{job}/{RUN_ID}"
    orders, customers, revenue = "sales.orders@primary", "sales.customers@primary", "sales.revenue@primary"
    export = "hdfs://nn:8020/data/sales/revenue_export"
    found = relations(mapped.records)
    assert {r for r in found if r[0] != "PARENT_CHILD" or r[2] == run} == {
        ("INSTANCE_OF", job, run, "", "", "", "linked"),
        ("PARENT_CHILD", f"openlineage://{JOB_NAMESPACE}/daily/{DAG_RUN_ID}", run, "", "", "", "unlinked"),
        ("DATA_FLOW", orders, run, "", "", "", "unlinked"),
        ("DATA_FLOW", customers, run, "", "", "", "unlinked"),
        ("DATA_FLOW", run, revenue, "", "", "", "unlinked"),
        ("DATA_FLOW", run, export, "", "", "", "unlinked"),
        ("DATA_FLOW", "sales.customers.region@primary", "sales.revenue.region@primary", "SIMPLE", "", "IDENTITY",
         "unlinked"),
        ("DATA_FLOW", "sales.orders.amount@primary", "sales.revenue.total@primary", "EXPRESSION", "sum(amount)",
         "AGGREGATION", "unlinked"),
        ("DATA_FLOW", "sales.customers.region@primary", f"{export}#region", "EXPRESSION", "upper(region)",
         "TRANSFORMATION", "unlinked"),
        # dataset-wide INDIRECT inputs: a control edge of every written column
        *(("CONTROL_FLOW", source, f"sales.revenue.{column}@primary", "", "", subtype, "unlinked")
          for column in ("region", "total")
          for source, subtype in (("sales.orders.customer_id@primary", "JOIN"), ("sales.customers.id@primary", "JOIN"),
                                  ("sales.orders.status@primary", "FILTER"),
                                  ("sales.customers.region@primary", "GROUP_BY"))),
    }
    # the schema facets' columns under their tables (stubs: the HMS extractor owns Hive columns)
    assert ("PARENT_CHILD", orders, "sales.orders.status@primary", "", "", "", "linked") in found
    stubs = {r.element.qualified_name: r.element for r in mapped.records if isinstance(r, ElementStub)}
    assert stubs["sales.orders.amount@primary"].data_type == "DECIMAL(10,2)"
    assert stubs[revenue].source_type is SourceType.HIVE
    execution = mapped.execution
    assert execution is not None
    assert {k: execution.properties[k] for k in ("state", "nominalStartTime", "nominalEndTime", "runId")} == {
        "state": "COMPLETE", "nominalStartTime": "2026-11-23T05:00:00.000Z",
        "nominalEndTime": "2026-11-23T06:00:00.000Z", "runId": RUN_ID}
    assert execution.query_text == "insert into sales.revenue select ..."


def test_the_same_event_maps_to_the_same_identities() -> None:
    event = as_json(job_run(RUN_ID, "load_revenue", RunState.START))
    first, again = (map_event(copy.deepcopy(event), "RunEvent", SETTINGS) for _ in range(2))
    assert [_key(r) for r in first.records] == [_key(r) for r in again.records]
    assert len({_key(r) for r in first.records}) == len(first.records)  # nothing written twice per event


def _key(record: Record) -> str:
    return record.element.identity if isinstance(record, ElementStub) else record.identity  # type: ignore[union-attr]


def test_a_runs_execution_is_merged_from_its_events_in_any_order() -> None:
    start = map_event(as_json(job_run(RUN_ID, "j", RunState.START)), "RunEvent", SETTINGS).execution
    fail = map_event(as_json(job_run(RUN_ID, "j", RunState.FAIL, offset=90, error="ZeroDivisionError: boom")),
                     "RunEvent", SETTINGS).execution
    assert start is not None and fail is not None

    def stored(element: Element) -> dict[str, Any]:
        return element_document(element)

    for first, second in ((start, fail), (fail, start)):
        merged = merge_execution(second, stored(first))
        assert (merged.started, merged.ended) == (datetime(2026, 11, 23, 6, 0, tzinfo=UTC),
                                                  datetime(2026, 11, 23, 6, 1, 30, tzinfo=UTC))
        assert (merged.properties["state"], merged.properties["error"]) == ("FAIL", "ZeroDivisionError: boom")
        # a replay of either event changes nothing
        assert element_document(merge_execution(first, stored(merged))) == element_document(merged)
        assert element_document(merge_execution(second, stored(merged))) == element_document(merged)


def test_a_dataset_only_openlineage_knows_is_an_element_with_its_columns() -> None:
    event = {"eventTime": "2026-11-23T06:00:00Z", "producer": "https://x", "schemaURL": "https://y",
             "dataset": {"namespace": "postgres://db:5432", "name": "shop.public.orders",
                         "facets": {"schema": {"_producer": "https://x", "_schemaURL": "https://y",
                                               "fields": [{"name": "ID", "type": "int"}]}}}}
    mapped = map_event(event, validate(event), SETTINGS)
    assert elements(mapped.records) == {
        "postgres://db:5432/shop.public.orders": ("OPENLINEAGE", "TABLE", False),
        "postgres://db:5432/shop.public.orders#id": ("OPENLINEAGE", "FIELD", False)}
    assert mapped.execution is None
    assert all(re.fullmatch(r"[0-9a-f]{32}", _key(r)) for r in mapped.records)


def test_a_job_event_flows_through_its_job() -> None:
    """A JobEvent (no run): its inputs and outputs are DATA_FLOW through the job itself."""
    event = {"eventTime": "2026-11-23T06:00:00Z", "producer": "https://x", "schemaURL": "https://y",
             "job": {"namespace": "dbt://analytics", "name": "model.revenue"},
             "inputs": [{"namespace": HIVE, "name": "sales.orders"}],
             "outputs": [{"namespace": "hdfs://nn:8020", "name": "/marts/revenue"}]}
    mapped = map_event(event, validate(event), SETTINGS)
    job = "openlineage://dbt://analytics/model.revenue"
    assert mapped.execution is None
    assert relations(mapped.records) == {("DATA_FLOW", "sales.orders@primary", job, "", "", "", "unlinked"),
                                         ("DATA_FLOW", job, "hdfs://nn:8020/marts/revenue", "", "", "", "unlinked")}


def test_an_input_field_without_transformations_has_no_dependency_type() -> None:
    """dbt-ol sends an empty `transformations` list for a column it cannot classify (an aggregate,
    a CASE): the edge is kept without a dependency type, never as SIMPLE, and the export says
    DIRECT without a subtype (unknown)."""
    event = as_json(job_run(RUN_ID, "load_revenue", RunState.COMPLETE))
    fields = event["outputs"][0]["facets"]["columnLineage"]["fields"]
    fields["total"]["inputFields"][0]["transformations"] = []
    mapped = map_event(event, validate(event), SETTINGS)
    total = [r for r in mapped.records if isinstance(r, Relation) and r.endpoint2.qualified_name == "sales.revenue.total@primary"
             and r.type.value == "DATA_FLOW"]
    assert [(r.endpoint1.qualified_name, r.dependency_type, r.expression, r.properties.get("subtype")) for r in total] == [
        ("sales.orders.amount@primary", None, None, None)]
    assert edge_transformations(total[0].type, None, None, None) == [{"type": "DIRECT"}]
    # a stored edge that does carry SIMPLE is still an IDENTITY
    assert edge_transformations(total[0].type, None, "SIMPLE", None) == [{"type": "DIRECT", "subtype": "IDENTITY"}]


# -- what the mapping remembers between events ---------------------------------------------------

def _fresh(event: dict[str, Any]) -> list[tuple[str, Any]]:
    """The event's records as comparable values (documents), whether remembered or not."""
    out = []
    for record in map_event(copy.deepcopy(event), "RunEvent", SETTINGS).records:
        element = record.element if isinstance(record, ElementStub) else record
        out.append((type(record).__name__, element_document(element) if isinstance(element, Element)
                    else (record.identity, record.properties.get("subtype"))))  # type: ignore[union-attr]
    return out


def test_a_datasets_records_are_remembered_and_a_changed_schema_is_mapped_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo of datasets' records hands out the same objects for the same dataset, namespace,
    name and schema facet; a table whose schema facet changed gets its new columns, not the old."""
    monkeypatch.setattr(mapping, "_dataset_memo", mapping._DatasetMemo())
    event = as_json(job_run(RUN_ID, "load_revenue", RunState.COMPLETE))
    first = map_event(copy.deepcopy(event), "RunEvent", SETTINGS)
    again = map_event(copy.deepcopy(event), "RunEvent", SETTINGS)
    kept = [r for r in again.records if mapping.remembered(r)]
    assert kept and all(any(r is f for f in first.records) for r in kept)  # the very same records
    assert [_key(r) for r in first.records] == [_key(r) for r in again.records]
    changed = copy.deepcopy(event)
    orders = next(d for d in changed["inputs"] if d["name"] == "sales.orders")
    orders["facets"]["schema"]["fields"][0]["type"] = "BIGINT"
    orders["facets"]["schema"]["fields"].append({"name": "added_later", "type": "STRING"})
    remapped = map_event(copy.deepcopy(changed), "RunEvent", SETTINGS)
    stubs = {r.element.qualified_name: r.element for r in remapped.records if isinstance(r, ElementStub)}
    first_column = orders["facets"]["schema"]["fields"][0]["name"]
    assert stubs[f"sales.orders.{first_column}@primary"].data_type == "BIGINT"
    assert "sales.orders.added_later@primary" in stubs
    # what the memo answers is what a fresh mapping makes
    monkeypatch.setattr(mapping, "_dataset_memo", mapping._DatasetMemo())
    fresh = _fresh(changed)
    monkeypatch.setattr(mapping, "_dataset_memo", mapping._DatasetMemo())
    map_event(copy.deepcopy(changed), "RunEvent", SETTINGS)
    assert _fresh(changed) == fresh


def test_the_dataset_memo_is_bounded_and_keeps_no_record_too_long_for_the_index(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mapping, "_dataset_memo", mapping._DatasetMemo())
    monkeypatch.setattr(mapping, "DATASET_MEMO_RECORDS", 50)
    for n in range(20):
        event = as_json(job_run(RUN_ID, "load_revenue", RunState.COMPLETE, database=f"db{n}"))
        map_event(event, "RunEvent", SETTINGS)
        memo = mapping._dataset_memo
        assert memo._records <= 50 and memo._records == sum(map(len, memo._kept.values()))
        assert len(memo._held) == memo._records
    # a column name longer than Solr indexes as one term: mapped (the intake refuses it), not remembered
    event = as_json(job_run(RUN_ID, "load_revenue", RunState.COMPLETE, database="wide"))
    event["inputs"][0]["facets"]["schema"]["fields"].append({"name": "x" * 40_000, "type": "STRING"})
    records = map_event(copy.deepcopy(event), "RunEvent", SETTINGS).records
    long = [r for r in records if isinstance(r, ElementStub) and r.element.qualified_name.startswith("wide.orders.xxx")]
    assert long and not any(mapping.remembered(r) for r in long)
    again = map_event(copy.deepcopy(event), "RunEvent", SETTINGS).records
    assert not any(mapping.remembered(r) for r in again if isinstance(r, ElementStub)
                   and r.element.qualified_name.startswith("wide.orders."))


@pytest.mark.parametrize("character", ["a", "é", "\u20ac", "\U0001f600", "\n", "\ud800"])
def test_a_json_text_no_longer_than_solrs_term_limit_holds_no_longer_name(character: str) -> None:
    """check_names skips its walk for a text of at most MAX_TERM_BYTES: any string in JSON takes
    at least its UTF-8 bytes (raw or escaped), so a name past the limit makes a longer text."""
    name = character * (MAX_TERM_BYTES // len(character.encode("utf-8", "surrogatepass")) + 1)
    event = as_json(job_run(RUN_ID, "load_revenue", RunState.COMPLETE))
    event["job"]["name"] = name
    for text in (json.dumps(event).encode(), json.dumps(event, ensure_ascii=False).encode("utf-8", "surrogatepass")):
        assert len(text) > MAX_TERM_BYTES
        with pytest.raises(InvalidEvent, match=re.escape("$.job.name")):
            check_names(event, len(text))
    check_names(event, MAX_TERM_BYTES)  # (what the route passes for a text that short: nothing to walk)


class _Core:
    def __init__(self) -> None:
        self.docs: list[dict[str, Any]] = []

    def add(self, doc: dict[str, Any]) -> None:
        self.docs.append(doc)


class _Cores:
    """Where the intake's document memo puts documents: IndexWriter's cores, as lists (no Solr:
    what is checked is which documents, and that each is a copy of its own)."""

    def __init__(self) -> None:
        self.elements, self.relations, self.stubs = _Core(), _Core(), _Core()

    def write(self, record: Record) -> None:
        if isinstance(record, Relation):
            self.relations.add(relation_document(record))
        elif isinstance(record, ElementStub):
            self.stubs.add(stub_document(record))
        else:
            self.elements.add(element_document(record))  # type: ignore[arg-type]


def test_the_intake_keeps_documents_of_remembered_records_and_writes_each_a_copy(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer adds annotations to the element documents it posts: a document the intake keeps
    built must reach it as a copy, or an annotation removed since would stay on the next event's."""
    monkeypatch.setattr(mapping, "_dataset_memo", mapping._DatasetMemo())
    event = as_json(job_run(RUN_ID, "load_revenue", RunState.COMPLETE))
    event["inputs"][0]["namespace"] = "postgres://db:5432"  # a dataset only OpenLineage knows: an element
    memo = intake._Documents()
    written = []
    for time in range(2):
        mapped = map_event(copy.deepcopy(event), "RunEvent", SETTINGS)
        assert mapped.execution is not None
        cores = _Cores()
        memo.write(cores, mapped.records, mapped.execution)  # type: ignore[arg-type]
        written.append(cores)
        if time == 0:
            for doc in cores.elements.docs + cores.stubs.docs:
                doc["annotation_carried"] = "set by the writer"  # what IndexWriter's carry-over does
    first, second = written
    assert any(mapping.remembered(r) for r in mapped.records)
    for core in ("elements", "relations", "stubs"):
        docs = getattr(second, core).docs
        assert docs and not any("annotation_carried" in doc for doc in docs)
        assert [{k: v for k, v in d.items() if k != "annotation_carried"} for d in getattr(first, core).docs] == docs
    # and they are the documents IndexWriter makes of the records, the run's relations dated
    direct = _Cores()
    for record in mapping.dated(mapped.records, mapped.execution):
        direct.write(record)
    for core in ("elements", "relations", "stubs"):
        assert getattr(direct, core).docs == getattr(second, core).docs


@pytest.mark.parametrize(("change", "path"), [
    (lambda e: e["run"].update(runId="not-a-uuid"), "$.run.runId"),
    (lambda e: e.update(eventTime="2026-11-23T06:00:00"), "$.eventTime"),  # no time zone
    (lambda e: e.update(eventTime=1700000000), "$.eventTime"),
    (lambda e: e["run"].update(runId=None), "$.run.runId"),
])
def test_a_core_checked_by_its_shape_still_refuses_a_bad_run_id_or_time(
        change: Callable[[dict[str, Any]], None], path: str) -> None:
    """Cores that differ only in a valid runId and eventTime are checked once (one shape); one whose
    runId or eventTime fails its format is not of that shape, and is refused naming the field."""
    event = as_json(job_run(RUN_ID, "load_revenue", RunState.COMPLETE))
    for run_id in (RUN_ID, DAG_RUN_ID):  # two runs of the job: the second from the memo
        valid = copy.deepcopy(event)
        valid["run"]["runId"] = run_id
        assert check_event(valid).kind == "RunEvent"
    bad = copy.deepcopy(event)
    change(bad)
    with pytest.raises(InvalidEvent) as refused:
        check_event(bad)
    assert refused.value.path == path
