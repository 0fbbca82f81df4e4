"""Hive's LineageLogger and impalad's lineage log -> records: golden tests on the projects' own
test output (tests/fixtures/hive_lineage, impala_lineage; provenance in their READMEs), exact
edges asserted, and table-driven bad input through the real extractor on real files."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lineage_logs import HIVE, hive_golden, impala_cases, impala_line
from navd.extractors.hive_lineage.extractor import LineageLogExtractor
from navd.extractors.hive_lineage.graph import BadLineage, records
from navd.extractors.hive_lineage.hook import RecordAssembler, parse_hive
from navd.extractors.impala.lineage import FILE_PREFIX, parse_impala
from navd.model import Element, ElementStub, Relation, SourceType

C = "prod"
Edge = tuple[str, str, str, str | None, str | None]


def edges(emitted: list[Any]) -> set[Edge]:
    """(type, endpoint 1, endpoint 2, dependency, expression) of every relation but the stubs'
    PARENT_CHILD (table -> its column)."""
    return {(r.type.value, r.endpoint1.qualified_name, r.endpoint2.qualified_name,
             r.dependency_type.value if r.dependency_type else None, r.expression)
            for r in emitted if isinstance(r, Relation) and r.type.value != "PARENT_CHILD"}


def elements(emitted: list[Any]) -> list[Element]:
    return [r for r in emitted if isinstance(r, Element)]


def hive(query_text: str) -> list[Any]:
    return list(records(parse_hive(hive_golden()[query_text]), cluster=C))


def t(name: str) -> str:
    return f"{name}@{C}"


# --- Hive: lineage2.q.out (test mode: no user, timestamp or job ids) --------------------------

def test_hive_ctas_golden() -> None:
    text = "create table src2 as select key key2, value value2 from src1"
    emitted = hive(text)
    operation, execution = elements(emitted)
    assert operation.qualified_name == f"hive://{C}/query/87921246fb098d44c05e0ccd9ecb0676"
    assert operation.name == text and operation.source_type is SourceType.HIVE
    assert execution.qualified_name == f"hive://{C}/execution/87921246fb098d44c05e0ccd9ecb0676/0/unknown"
    assert execution.query_text == text and execution.properties["engine"] == "tez"
    assert execution.properties["database"] == "default"
    assert edges(emitted) == {
        ("INSTANCE_OF", operation.qualified_name, execution.qualified_name, None, None),
        ("DATA_FLOW", t("default.src1"), execution.qualified_name, None, None),
        ("DATA_FLOW", execution.qualified_name, t("default.src2"), None, None),
        ("DATA_FLOW", t("default.src1.key"), t("default.src2.key2"), "SIMPLE", None),
        ("DATA_FLOW", t("default.src1.value"), t("default.src2.value2"), "SIMPLE", None),
    }
    column_edges = [r for r in emitted if isinstance(r, Relation) and r.endpoint1.type.value == "FIELD"]
    assert all(r.discriminator == execution.qualified_name and r.unlinked for r in column_edges)
    # tables and columns no extractor indexed yet: stubs, columns under their tables
    stubs = {s.element.qualified_name for s in emitted if isinstance(s, ElementStub)}
    assert stubs == {t("default.src1"), t("default.src2"), t("default.src1.key"), t("default.src1.value"),
                     t("default.src2.key2"), t("default.src2.value2")}


def test_hive_select_with_predicates_reads_tables_and_writes_none() -> None:
    emitted = hive("select * from src1 where key is not null and value is not null limit 3")
    _, execution = elements(emitted)
    # `src1.key`/`src1.value` are the result's columns, no table's: only the read is lineage
    assert {e for e in edges(emitted) if e[0] != "INSTANCE_OF"} == {
        ("DATA_FLOW", t("default.src1"), execution.qualified_name, None, None)}


def test_hive_compute_stats_projection_does_not_replace_the_real_one() -> None:
    emitted = hive("insert into table dest1_n56 select * from src2")
    _, execution = elements(emitted)
    assert {e for e in edges(emitted) if e[0] != "INSTANCE_OF"} == {
        ("DATA_FLOW", t("default.src2"), execution.qualified_name, None, None),
        ("DATA_FLOW", execution.qualified_name, t("default.dest1_n56"), None, None),
        ("DATA_FLOW", t("default.src2.key2"), t("default.dest1_n56.key"), "SIMPLE", None),
        ("DATA_FLOW", t("default.src2.value2"), t("default.dest1_n56.value"), "SIMPLE", None),
    }


def test_hive_join_predicates_are_control_flow_with_their_expressions() -> None:
    emitted = hive("create table t_n10 as\nselect distinct a.c2, a.c3 from dest_l2 a\n"
                   "inner join dest_l3 b on (a.id = b.id)\nwhere a.id > 0 and b.c3 = 15")
    _, execution = elements(emitted)
    x = execution.qualified_name
    assert {e for e in edges(emitted) if e[0] != "INSTANCE_OF"} == {
        ("DATA_FLOW", t("default.dest_l2"), x, None, None),
        ("DATA_FLOW", t("default.dest_l3"), x, None, None),
        ("DATA_FLOW", x, t("default.t_n10"), None, None),
        ("DATA_FLOW", t("default.dest_l2.c2"), t("default.t_n10.c2"), "SIMPLE", None),
        ("DATA_FLOW", t("default.dest_l2.c3"), t("default.t_n10.c3"), "SIMPLE", None),
        *{("CONTROL_FLOW", t("default.dest_l2.id"), t(f"default.t_n10.{c}"), None, "(a.id > 0); (a.id = b.id)")
          for c in ("c2", "c3")},
        *{("CONTROL_FLOW", t("default.dest_l3.id"), t(f"default.t_n10.{c}"), None,
           "(a.id = b.id); ((b.c3 = 15) and (b.id > 0))") for c in ("c2", "c3")},
        *{("CONTROL_FLOW", t("default.dest_l3.c3"), t(f"default.t_n10.{c}"), None, "((b.c3 = 15) and (b.id > 0))")
          for c in ("c2", "c3")},
    }


def test_hive_table_vertex_and_values_insert() -> None:
    emitted = hive("select key, count(1) a from dest1_n56 group by key")
    _, execution = elements(emitted)
    assert {e for e in edges(emitted) if e[0] != "INSTANCE_OF"} == {
        ("DATA_FLOW", t("default.dest1_n56"), execution.qualified_name, None, None)}
    emitted = hive("insert into dest_l2 values(0, 1, 100, 10000)")
    _, execution = elements(emitted)
    # no source columns: the table written, nothing read
    assert {e for e in edges(emitted) if e[0] != "INSTANCE_OF"} == {
        ("DATA_FLOW", execution.qualified_name, t("default.dest_l2"), None, None)}


def _log_records(path: Path) -> list[dict[str, Any]]:
    assembler = RecordAssembler(1 << 20)
    found = []
    for line in path.read_text().splitlines():
        record = assembler.feed(line)
        if record is not None:
            found.append(json.loads(record))
    return found


def test_hiveserver2_log_forms_single_line_and_pretty_printed() -> None:
    compact = _log_records(HIVE / "hiveserver2-lineage.log")
    pretty = _log_records(HIVE / "hiveserver2-lineage-pretty.log")
    assert [r["hash"] for r in compact] == ["87921246fb098d44c05e0ccd9ecb0676", "d3d379a20e27c1618037bd6b8e840b13"]
    [old] = pretty
    # the same query in both forms gives the same lineage, the old one without duration
    first, second = parse_hive(compact[0]), parse_hive(old)
    assert edges(list(records(first, cluster=C))) == edges(list(records(second, cluster=C)))
    assert first.started == second.started == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert first.ended == datetime(2023, 11, 14, 22, 13, 25, 321000, tzinfo=UTC) and second.ended is None
    emitted = list(records(first, cluster=C))
    _, execution = elements(emitted)
    assert execution.principal == "hive"
    assert execution.qualified_name == f"hive://{C}/execution/87921246fb098d44c05e0ccd9ecb0676/1700000000/hive"
    assert execution.properties["jobIds"] == "job_1700000000000_0001"
    # the MapReduce job's YARN application runs it
    assert ("LOGICAL_PHYSICAL", execution.qualified_name, "yarn://application_1700000000000_0001", None,
            None) in edges(emitted)


# --- Impala: lineage.test --------------------------------------------------------------------

def impala(text: str, **override: Any) -> list[Any]:
    line = impala_line(impala_cases()[text], query_id="6b4c4d5e3f2a1b0c:9d8e7f6a00000000", end_time=1687551750,
                       **override)
    return list(records(parse_impala(json.loads(line)), cluster=C))


def test_impala_ctas_names_target_columns_by_their_table() -> None:
    emitted = impala("create table lineage_test_tbl as select int_col, tinyint_col from functional.alltypes")
    operation, execution = elements(emitted)
    assert operation.source_type is SourceType.IMPALA
    assert operation.qualified_name == f"impala://{C}/query/2f673a20092048a5035f4a01edd612fd"
    assert execution.qualified_name == f"impala://{C}/execution/6b4c4d5e3f2a1b0c:9d8e7f6a00000000"
    assert execution.principal == "dummy_user" and execution.source_id == "6b4c4d5e3f2a1b0c:9d8e7f6a00000000"
    assert (execution.started, execution.ended) == (datetime.fromtimestamp(1687551744, UTC),
                                                    datetime.fromtimestamp(1687551750, UTC))
    assert execution.properties["operationType"] == "CREATETABLE_AS_SELECT"
    x = execution.qualified_name
    assert {e for e in edges(emitted) if e[0] != "INSTANCE_OF"} == {
        ("DATA_FLOW", t("functional.alltypes"), x, None, None),
        ("DATA_FLOW", x, t("default.lineage_test_tbl"), None, None),
        ("DATA_FLOW", t("functional.alltypes.int_col"), t("default.lineage_test_tbl.int_col"), "SIMPLE", None),
        ("DATA_FLOW", t("functional.alltypes.tinyint_col"), t("default.lineage_test_tbl.tinyint_col"), "SIMPLE",
         None),
    }
    # tableCreateTime: which incarnation of functional.alltypes was read (-1: the CTAS target's is unknown)
    [read] = [r for r in emitted if isinstance(r, Relation) and r.type.value == "DATA_FLOW"
              and r.endpoint1.qualified_name == t("functional.alltypes")]
    assert read.properties == {"tableCreateTime": "1687531267"}
    [written] = [r for r in emitted if isinstance(r, Relation) and r.endpoint2.qualified_name == t("default.lineage_test_tbl")
                 and r.type.value == "DATA_FLOW"]
    assert written.properties == {}
    # the stubs of the tables: created when impalad says (the first sighting for --as-of); the
    # CTAS target's time is unknown (-1), so it has none
    stubs = {s.element.qualified_name: s.element for s in emitted if isinstance(s, ElementStub)}
    assert stubs[t("functional.alltypes")].created == datetime.fromtimestamp(1687531267, UTC)
    assert stubs[t("default.lineage_test_tbl")].created is None
    assert stubs[t("functional.alltypes.int_col")].created is None  # a column: its table's time says it


def test_impala_insert_with_dynamic_partitions_and_create_view() -> None:
    text = ("with t1 as (select * from functional.alltypestiny)\ninsert into functional.alltypesinsert "
            "(id, int_col, string_col) partition(year, month)\nselect id, int_col, string_col, year, month from t1")
    emitted = impala(text)
    column_edges = {(e[1], e[2]) for e in edges(emitted) if e[0] == "DATA_FLOW" and "functional.alltypestiny." in e[1]}
    # the partition keys are target columns like the others
    assert column_edges == {(t(f"functional.alltypestiny.{c}"), t(f"functional.alltypesinsert.{c}"))
                            for c in ("id", "int_col", "string_col", "year", "month")}
    emitted = impala("create view test_view_lineage as select id from functional.alltypestiny")
    [view] = [r.endpoint2 for r in emitted if isinstance(r, Relation) and r.type.value == "DATA_FLOW"
              and r.endpoint2.type.value in ("TABLE", "VIEW") ]
    assert (view.qualified_name, view.type.value) == (t("default.test_view_lineage"), "VIEW")


# --- bad input -------------------------------------------------------------------------------

GOOD = impala_line(impala_cases()["create view test_view_lineage as select id from functional.alltypestiny"],
                   query_id="aa:01")


def _bad_vertex() -> str:
    raw = json.loads(GOOD)
    raw["queryId"] = "aa:02"
    raw["vertices"][1]["metadata"]["tableName"] = "functional"  # not db.table
    return json.dumps(raw)


def _missing_vertex() -> str:
    raw = json.loads(GOOD)
    raw["queryId"] = "aa:03"
    raw["edges"][0]["sources"] = [7]
    return json.dumps(raw)


def _huge() -> str:
    raw = json.loads(GOOD)
    raw["queryId"] = "aa:04"
    raw["queryText"] = "select '" + "x" * (20 * 1024 * 1024) + "'"
    return json.dumps(raw)


MESSAGES = {"not_json": "lineage record is not JSON, skipped", "bad_record": "lineage record skipped",
            "line_too_long": "Impala lineage log line too long, skipped"}


@pytest.mark.parametrize(("bad", "kind"), [
    ('{"queryText": "select 1", "hash": ', "not_json"),
    (_bad_vertex(), "bad_record"),
    (_missing_vertex(), "bad_record"),
    ('["not", "an", "object"]', "bad_record"),
    (None, "line_too_long"),  # a 20 MB query text
], ids=["invalid-json", "bad-vertex-id", "edge-names-missing-vertex", "not-an-object", "20mb-query-text"])
def test_bad_record_is_one_warning_with_file_and_offset_and_the_rest_flows(
        bad: str | None, kind: str, tmp_path: Path, log_stream: Any) -> None:
    logs = tmp_path / "lineage"
    logs.mkdir()
    bad_line = _huge() if bad is None else bad
    path = logs / f"{FILE_PREFIX}1700000000000"
    path.write_text(GOOD + "\n" + bad_line + "\n" + GOOD.replace("aa:01", "aa:09") + "\n")
    extractor = LineageLogExtractor(name="impala", cluster=C, patterns=[str(logs / f"{FILE_PREFIX}*")],
                                    state_dir=tmp_path / "state", cursor_file="c.json", parse=parse_impala,
                                    multi_line=False, what="Impala lineage log", key_by="path")
    emitted = list(extractor.extract())
    executions = {e.qualified_name for e in elements(emitted) if e.type.value == "OPERATION_EXECUTION"}
    assert executions == {f"impala://{C}/execution/aa:01", f"impala://{C}/execution/aa:09"}
    assert extractor.tailer.warnings == 1
    [warning] = [json.loads(line) for line in log_stream.getvalue().splitlines() if '"warning"' in line]
    assert warning["file"] == str(path) and warning["offset"] == len(GOOD) + 1, warning
    assert MESSAGES[kind] in warning["event"], warning
    extractor.commit()
    assert list(extractor.extract()) == []  # nothing read twice


def test_hive_bad_records_in_a_hiveserver2_log(tmp_path: Path, log_stream: Any) -> None:
    log = tmp_path / "hiveserver2.log"
    good = (HIVE / "hiveserver2-lineage.log").read_text()
    pretty = (HIVE / "hiveserver2-lineage-pretty.log").read_text()
    broken = "2023-11-14T22:15:00,000 INFO  [p] hooks.LineageLogger: {\"version\":\"1.0\",\"hash\":\n"
    log.write_text(good + broken + pretty)
    extractor = LineageLogExtractor(name="hive-lineage", cluster=C, patterns=[str(tmp_path / "hiveserver2.log*")],
                                    state_dir=tmp_path / "state", cursor_file="c.json", parse=parse_hive,
                                    multi_line=True, what="Hive lineage log")
    emitted = list(extractor.extract())
    executions = {e.name for e in elements(emitted) if e.type.value == "OPERATION_EXECUTION"}
    assert len([e for e in elements(emitted) if e.type.value == "OPERATION_EXECUTION"]) == 3
    assert executions == {"create table src2 as select key key2, value value2 from src1",
                          "insert into table dest1_n56 select * from src2"}
    [warning] = [json.loads(line) for line in log_stream.getvalue().splitlines() if '"warning"' in line]
    assert (warning["file"], warning["offset"]) == (str(log), len(good.encode())), warning
    assert warning["event"] == "lineage record is not JSON, skipped"


def test_bad_vertex_names() -> None:
    raw = dict(hive_golden()["create table src2 as select key key2, value value2 from src1"])
    for label in ("default..key", "", ".src1.key"):
        broken = {**raw, "vertices": [*raw["vertices"][:3], {"id": 3, "vertexType": "COLUMN", "vertexId": label}]}
        with pytest.raises(BadLineage):
            list(records(parse_hive(broken), cluster=C))
    broken = {**raw, "vertices": [*raw["vertices"][:3], {"id": 3, "vertexType": "TABLE", "vertexId": "default"}]}
    with pytest.raises(BadLineage, match="is not db.table"):
        list(records(parse_hive(broken), cluster=C))


def test_relations_carry_the_execution_times_not_the_indexing_time() -> None:
    emitted = impala("create table lineage_test_tbl as select int_col, tinyint_col from functional.alltypes")
    started, ended = datetime.fromtimestamp(1687551744, UTC), datetime.fromtimestamp(1687551750, UTC)
    walked = [r for r in emitted if isinstance(r, Relation) and r.type.value != "PARENT_CHILD"]
    assert walked and {(r.first_seen, r.last_seen) for r in walked} == {(started, ended)}
    # an end logged before the start (a skewed clock) counts as the start
    line = impala_line(impala_cases()["create table lineage_test_tbl as select int_col, tinyint_col from "
                                      "functional.alltypes"], query_id="q:1", end_time=1687551700)
    skewed = list(records(parse_impala(json.loads(line)), cluster=C))
    assert {(r.first_seen, r.last_seen) for r in skewed if isinstance(r, Relation)
            and r.type.value == "DATA_FLOW"} == {(started, started)}
