"""The pure part of tests/bench/compare_openlineage.py: both sides' column edges in one form, and
their differences.

The OpenLineage side is a real COMPLETE event of the OpenLineage Spark listener 1.53
(tests/fixtures/openlineage/ctas_expression.complete.json: capture.py's ctas_expression case run
under the listener by the comparison script, the run's directory replaced by /tmp/navd-capture):
`create table sales.t as select upper(c) as u from sales.s where c is not null`. navd's side is
the same statement in the captured event log tests/fixtures/spark_events/ctas_expression.jsonl
(SQL execution 6; a capture of its own, so its times differ from the event's).
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.compare_openlineage import (
    CONTROL,
    DATA,
    Edge,
    OpenLineageSide,
    common_path,
    compare,
    execution_times,
    navd_edges,
    openlineage_dataset,
    openlineage_edges,
)
from navd.extractors.spark.records import process_lines

from spark_fixtures import CLUSTER, DEFAULT_FS, fixture_lines

OL_EVENT = json.loads((Path(__file__).parent / "fixtures" / "openlineage" / "ctas_expression.complete.json")
                      .read_text(encoding="utf-8"))
CTAS_EXECUTION = 6
#: the event's eventTime (2026-11-23T08:11:29.501Z) in epoch ms: that run's SQL execution 6 ended then
OL_EVENT_MS = 1795421489501

COPY = Edge("sales.t", "u", DATA, "sales.s", "c")
FILTER = Edge("sales.t", "u", CONTROL, "sales.s", "c")


def test_openlineage_event_becomes_edges_of_its_execution() -> None:
    """The field's DIRECT input is a data edge, the facet's `dataset` INDIRECT input (the WHERE
    column, affecting every field) a control edge of each field; the tables are named from
    the warehouse locations the listener reports (symlinks), like navd's `db.table`."""
    side = openlineage_edges([OL_EVENT], {OL_EVENT_MS: CTAS_EXECUTION})
    assert side.edges == {CTAS_EXECUTION: {COPY: frozenset({"TRANSFORMATION"}), FILTER: frozenset({"FILTER"})}}
    assert (side.outputs, side.unmatched) == ({CTAS_EXECUTION: frozenset({"sales.t"})}, ())
    # another application's events (a setup session reporting to the same file) do not count
    assert openlineage_edges([OL_EVENT], {OL_EVENT_MS: CTAS_EXECUTION}, application="setup") == OpenLineageSide(
        {}, {}, {}, ())
    assert openlineage_edges([OL_EVENT], {OL_EVENT_MS: CTAS_EXECUTION}, application="ctas_expression") == side
    # at no execution's end: reported, not guessed
    assert openlineage_edges([OL_EVENT], {OL_EVENT_MS + 1: CTAS_EXECUTION}) == OpenLineageSide(
        {}, {}, {}, ("ctas_expression.execute_create_data_source_table_as_select_command.sales_t",))


def test_an_output_without_column_lineage_is_told_from_no_output() -> None:
    """The listener may report a written dataset without its `columnLineage` facet, or not at
    all (e.g. the writes of a multi-insert): the diff says which."""
    bare = json.loads(json.dumps(OL_EVENT))
    del bare["outputs"][0]["facets"]["columnLineage"]
    side = openlineage_edges([bare], {OL_EVENT_MS: CTAS_EXECUTION})
    assert (side.edges, side.outputs) == ({}, {CTAS_EXECUTION: frozenset({"sales.t"})})
    navd = {COPY: frozenset({"TRANSFORMATION"})}
    (reported,) = compare(CTAS_EXECUTION, navd, {}, side.outputs[CTAS_EXECUTION])
    (unreported,) = compare(CTAS_EXECUTION, navd, {}, frozenset())
    assert (reported.only_navd, reported.openlineage_output) == ((COPY,), True)
    assert (unreported.only_navd, unreported.openlineage_output) == ((COPY,), False)


def test_navd_and_openlineage_agree_on_the_ctas() -> None:
    run, _ = process_lines(fixture_lines("ctas_expression"), cluster=CLUSTER, default_fs=DEFAULT_FS)
    navd = navd_edges(run)
    assert navd[CTAS_EXECUTION] == {COPY: frozenset({"TRANSFORMATION"}), FILTER: frozenset({"FILTER"})}
    openlineage = openlineage_edges([OL_EVENT], {OL_EVENT_MS: CTAS_EXECUTION}).edges
    (diff,) = compare(CTAS_EXECUTION, navd[CTAS_EXECUTION], openlineage[CTAS_EXECUTION])
    assert (diff.target, diff.agreed, diff.only_navd, diff.only_openlineage, diff.subtypes) == (
        "sales.t", (FILTER, COPY), (), (), ())


def test_compare_lists_each_difference_per_target() -> None:
    openlineage = openlineage_edges([OL_EVENT], {OL_EVENT_MS: CTAS_EXECUTION}).edges
    other = Edge("sales.other", "x", DATA, "sales.s", "n")
    navd = {COPY: frozenset({"IDENTITY"}), other: frozenset({"IDENTITY"})}
    diffs = compare(CTAS_EXECUTION, navd, openlineage[CTAS_EXECUTION])
    assert [(d.target, d.agreed, d.only_navd, d.only_openlineage, d.subtypes) for d in diffs] == [
        ("sales.other", (), (other,), (), ()),
        ("sales.t", (COPY,), (), (FILTER,), ((COPY, frozenset({"IDENTITY"}), frozenset({"TRANSFORMATION"})),))]


def test_execution_times_fold_nested_executions_into_their_root() -> None:
    """The CTAS runs its insert as nested execution 7 (root 6): both ends name execution 6."""
    lines = fixture_lines("ctas_expression")
    ends = {json.loads(line)["executionId"]: json.loads(line)["time"] for line in lines
            if "SQLExecutionEnd" in line}
    times = execution_times(lines)
    assert times[ends[6]] == 6 and times[ends[7]] == 6
    assert times[ends[0]] == 0


def test_dataset_names_in_common_form() -> None:
    tables = {"/tmp/navd-capture/warehouse/x.db/renamed_location": "x.t"}
    name = openlineage_dataset
    assert name({"namespace": "file", "name": "/tmp/navd-capture/warehouse/x.db/renamed_location"}, tables) == "x.t"
    assert name({"namespace": "file", "name": "/tmp/navd-capture/warehouse/cl.db/orders"}, {}) == "cl.orders"
    assert name({"namespace": "file", "name": "/tmp/navd-capture/warehouse/plain"}, {}) == "default.plain"
    assert name({"namespace": "file", "name": "/tmp/navd-capture/output/p"}, {}) == "/tmp/navd-capture/output/p"
    assert name({"namespace": "hdfs://nn:8020", "name": "/data/p"}, {}) == "hdfs://nn:8020/data/p"
    assert common_path("file:///tmp/navd-capture/output/p/") == "/tmp/navd-capture/output/p"
    assert common_path("file:/tmp/a") == "/tmp/a"


def test_dataset_inputs_reach_every_column_of_the_schema() -> None:
    """The facet's `dataset` inputs affect the whole output: also a column `fields` leaves out
    for having no input of its own (the listener omits `count(*) AS n`)."""
    wider = json.loads(json.dumps(OL_EVENT))
    wider["outputs"][0]["facets"]["schema"]["fields"].append({"name": "N", "type": "bigint"})
    edges = openlineage_edges([wider], {OL_EVENT_MS: CTAS_EXECUTION}).edges[CTAS_EXECUTION]
    assert edges == {COPY: frozenset({"TRANSFORMATION"}), FILTER: frozenset({"FILTER"}),
                     Edge("sales.t", "n", CONTROL, "sales.s", "c"): frozenset({"FILTER"})}


def test_jobs_of_one_statement_that_disagree_are_named() -> None:
    """The listener reports a CTAS twice (the CTAS command, then its insert), each from its own
    plan: the union is compared, and the edges its jobs differ on are listed per job."""
    insert = json.loads(json.dumps(OL_EVENT))
    insert["job"]["name"] = "ctas_expression.execute_insert_into_hadoop_fs_relation_command.sales_db_t"
    insert["outputs"][0]["facets"]["columnLineage"]["fields"]["u"]["inputFields"][0]["transformations"][0][
        "subtype"] = "IDENTITY"
    del insert["outputs"][0]["facets"]["columnLineage"]["dataset"]
    side = openlineage_edges([OL_EVENT, insert], {OL_EVENT_MS: CTAS_EXECUTION})
    assert side.edges[CTAS_EXECUTION] == {COPY: frozenset({"IDENTITY", "TRANSFORMATION"}), FILTER: frozenset({"FILTER"})}
    (diff,) = compare(CTAS_EXECUTION, {COPY: frozenset({"TRANSFORMATION"})}, side.edges[CTAS_EXECUTION],
                      side.outputs[CTAS_EXECUTION], side.by_job[CTAS_EXECUTION])
    ctas, insert_job = ("execute_create_data_source_table_as_select_command.sales_t",
                        "execute_insert_into_hadoop_fs_relation_command.sales_db_t")
    assert diff.openlineage_split == (
        (FILTER, ((ctas, frozenset({"FILTER"})), (insert_job, None))),
        (COPY, ((ctas, frozenset({"TRANSFORMATION"})), (insert_job, frozenset({"IDENTITY"})))))
    assert diff.subtypes == ((COPY, frozenset({"TRANSFORMATION"}), frozenset({"IDENTITY", "TRANSFORMATION"})),)
