"""The Spark extractor end to end: real PySpark jobs write event logs, navd extracts them into the
real Solr, and `navd lineage` answers from the index."""

from __future__ import annotations

import collections
import io
import json
import os
import pwd
import random
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pyhive import hive

from navd.config import parse_config
from navd.extractors import BuildContext, Checkpoint, run_pass
from navd.extractors.common.cursors import LogCursor
from navd.extractors.common.repeated import FIRST_LOGGED
from navd.extractors.common.tailing import LocalFileSystem
from navd.extractors.spark.component import COMPONENT, POST_COMMIT_HOOKS, supersede_listener_lineage
from navd.extractors.spark.extractor import SparkExtractor
from navd.extractors.spark.logfiles import EventLogCursorStore, EventLogTailer
from navd.extractors.spark.records import LOG_OWNER, process_lines, stubs_for
from navd.extractors.spark.replaced_views import ViewDefinition, Withdrawn, withdraw_replaced
from navd.index.client import IndexWriter, SolrIndex
from navd.index.query_syntax import escape
from navd.model import Element, ElementStub, ElementType, EntityRef, Record, Relation, RelationType, SourceType
from navd.names import field_ref, spark_run_ref
from navd.solr.server import EmbeddedSolr
from navd_devstack.spark_thrift import SparkThriftServer
from conftest import write_navd_config


def run_pyspark(body: str, root: Path, app_name: str) -> None:
    """Run a PySpark job in its own process, Spark 4 defaults for the event log (rolling, zstd)."""
    script = textwrap.dedent(f"""
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[1]").appName({app_name!r})
                 .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
                 .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                 .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", {(root / 'events').as_uri()!r})
                 .config("spark.sql.warehouse.dir", {(root / 'warehouse').as_uri()!r})
                 .config("spark.hadoop.javax.jdo.option.ConnectionURL",
                         "jdbc:derby:;databaseName={root / 'metastore_db'};create=true")
                 .enableHiveSupport().getOrCreate())
    """) + textwrap.dedent(body) + "\nspark.stop()\n"
    (root / "events").mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    result = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True,
                            timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.fixture(scope="module")
def ctas_job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("spark-ctas")
    run_pyspark("""
        spark.sql("create database sales")
        spark.sql("create table sales.s (c string, n int) using parquet")
        spark.sql("insert into sales.s values ('a', 1), ('b', 2), (null, 3)")
        spark.sql("create table sales.t as select upper(c) as u from sales.s")
    """, root, "ctas_job")
    return root


def config_file(tmp_path: Path, solr: EmbeddedSolr, events: Path) -> Path:
    return write_navd_config(tmp_path / "navd.toml", solr, f'[spark]\nevent_log_dirs = ["{events}"]\n'
                             f'state_dir = "{tmp_path / "state"}"\n')


def extract_captured(navd, case: str, tmp_path: Path,  # type: ignore[no-untyped-def]
                     solr_server: EmbeddedSolr) -> tuple[str, dict[str, str], subprocess.CompletedProcess[str]]:
    """A captured event log under tests/fixtures/spark_events, as a Spark History directory holds
    it, extracted by `navd extract spark --once`: (its application id, the environment, the run)."""
    text = (Path(__file__).parent / "fixtures" / "spark_events" / f"{case}.jsonl").read_text(encoding="utf-8")
    app_id = next(json.loads(line)["App ID"] for line in text.splitlines()
                  if '"SparkListenerApplicationStart"' in line)
    events = tmp_path / "events"
    events.mkdir()
    (events / app_id).write_text(text, encoding="utf-8")
    env = {**os.environ, "NAVD_CONFIG": str(config_file(tmp_path, solr_server, events))}
    extracted = navd("extract", "spark", "--once", env=env)
    assert extracted.returncode == 0, extracted.stderr
    return app_id, env, extracted


def lineage_edges(navd, env: dict[str, str], *args: str) -> set[tuple[str, str, str, str | None]]:  # type: ignore[no-untyped-def]
    """(source, target, type, dependencyType) of each edge `navd lineage ARGS --format json` shows."""
    result = navd("lineage", *args, "--format", "json", env=env)
    assert result.returncode == 0, result.stderr
    graph = json.loads(result.stdout)
    names = {n["id"]: n["qualifiedName"] for n in graph["nodes"]}
    return {(names[e["source"]], names[e["target"]], e["type"], e.get("dependencyType")) for e in graph["edges"]}


def test_ctas_lineage_through_the_cli(navd, index: SolrIndex, solr_server: EmbeddedSolr,  # type: ignore[no-untyped-def]
                                      ctas_job: Path, tmp_path: Path) -> None:
    env = {**os.environ, "NAVD_CONFIG": str(config_file(tmp_path, solr_server, ctas_job / "events"))}
    extracted = navd("extract", "spark", "--once", env=env)
    assert extracted.returncode == 0, extracted.stderr
    assert "records written, 0 warnings" in extracted.stdout
    result = navd("lineage", "sales.t@primary", "--direction", "upstream", "--columns", "--format", "json", env=env)
    assert result.returncode == 0, result.stderr
    graph = json.loads(result.stdout)
    names = {n["id"]: n["qualifiedName"] for n in graph["nodes"]}
    assert names[graph["root"]] == "sales.t@primary"
    edges = {(names[e["source"]], names[e["target"]], e["type"], e.get("dependencyType")) for e in graph["edges"]}
    assert ("sales.s@primary", "sales.t@primary", "DATA_FLOW", None) in edges
    assert ("sales.s.c@primary", "sales.t.u@primary", "DATA_FLOW", "EXPRESSION") in edges
    [column_edge] = [e for e in graph["edges"] if names[e["source"]] == "sales.s.c@primary"]
    assert column_edge["expression"] == "upper(c)"
    again = navd("extract", "spark", "--once", env=env)  # nothing new: no lines, no records
    assert again.returncode == 0 and again.stdout.startswith("spark: 0 new lines, 0 records written")


def test_dotted_columns_and_a_column_root_through_the_cli(navd, index: SolrIndex,  # type: ignore[no-untyped-def]
                                                          solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    """The captured dotted_columns event log (columns `b.c`, `a b`, `ünï`), extracted into Solr:
    a column's lineage without `--columns`, and the dotted columns under their own table."""
    _app_id, env, _ = extract_captured(navd, "dotted_columns", tmp_path, solr_server)

    def edges(*args: str) -> set[tuple[str, str, str, str | None]]:
        return lineage_edges(navd, env, *args)

    # a column root: column lineage without --columns, the dotted name read whole
    assert edges("dc.renamed.x.y@primary", "--direction", "upstream") == {
        ("dc.src.b.c@primary", "dc.renamed.x.y@primary", "DATA_FLOW", "SIMPLE"),
        ("dc.src.a b@primary", "dc.renamed.x.y@primary", "CONTROL_FLOW", None)}
    # from the table, --columns finds the dotted and spaced columns under it
    upstream = edges("dc.renamed@primary", "--direction", "upstream", "--columns")
    assert {("dc.src.a b@primary", "dc.renamed.p q@primary", "DATA_FLOW", "SIMPLE"),
            ("dc.src.b.c@primary", "dc.renamed.up.per@primary", "DATA_FLOW", "EXPRESSION"),
            ("dc.src.ünï@primary", "dc.renamed.ünï.zwei@primary", "DATA_FLOW", "SIMPLE")} <= upstream
    phantom = list(index.scan("elements", 'qualifiedName:"dc.src.b@primary" OR qualifiedName:"dc.renamed.x@primary"',
                              fl="identity"))
    assert phantom == []


def test_cut_argument_lists_are_warned_and_said_on_the_execution(navd, index: SolrIndex,  # type: ignore[no-untyped-def]
                                                                 solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    """The captured wide_arguments log (argument lists cut at spark.sql.debug.maxToStringFields):
    the pass reports one warning per execution with incomplete columns, and the execution in
    Solr names those columns and the setting."""
    app_id, env, extracted = extract_captured(navd, "wide_arguments", tmp_path, solr_server)
    assert "records written, 6 warnings" in extracted.stdout
    logged = [json.loads(line) for line in extracted.stderr.splitlines() if line.startswith("{")]
    assert sum(r["event"].startswith("column lineage incomplete") for r in logged) == 6
    executions = index.scan("elements", "type:OPERATION_EXECUTION", fl="qualifiedName,properties")
    found = {d["qualifiedName"]: json.loads(d["properties"]).get("columnLineageIncomplete") for d in executions
             if d["qualifiedName"].startswith(f"spark://{app_id}/1/sql/")}
    found = {qn: v for qn, v in found.items() if v}
    assert len(found) == 6
    shown = json.loads(navd("entity", next(iter(found)), "--json", env=env).stdout)   # what an admin reads
    assert shown["properties"]["columnLineageIncomplete"] == found[shown["qualifiedName"]]
    assert any(v.startswith("Window arguments cut by Spark: wa.t_window.w_c25@primary, ") for v in found.values())
    assert all(v.endswith(" (raise spark.sql.debug.maxToStringFields)") for v in found.values())


def test_path_columns_through_the_cli(navd, index: SolrIndex,  # type: ignore[no-untyped-def]
                                     solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    """The captured path_columns event log, extracted into Solr: a directory a job wrote has
    its columns as FIELD children, and column lineage runs from a table back through the
    directory's columns to the columns of what the writing job read."""
    _app_id, env, _ = extract_captured(navd, "path_columns", tmp_path, solr_server)

    def edges(*args: str) -> set[tuple[str, str, str, str | None]]:
        return lineage_edges(navd, env, *args)

    staged = "file:///tmp/navd-capture/output/staged_parquet"
    # from the table, --columns reaches the parquet directory's columns
    upstream = edges("pc.region_totals@primary", "--direction", "upstream", "--columns")
    assert {(f"{staged}#amt2", "pc.region_totals.total@primary", "DATA_FLOW", "EXPRESSION"),
            (f"{staged}#region", "pc.region_totals.region@primary", "DATA_FLOW", "SIMPLE")} <= upstream
    # a path's column as the root: its writer's sources and its readers' targets
    around = edges(f"{staged}#amt2")
    assert (f"{staged}#amt2", "pc.region_totals.total@primary", "DATA_FLOW", "EXPRESSION") in around
    # the directory (written by the job) has its columns under it: --columns finds them
    found = navd("lineage", staged, "--direction", "downstream", "--columns", "--format", "json", env=env)
    assert found.returncode == 0, found.stderr
    shown = {n["qualifiedName"]: n for n in json.loads(found.stdout)["nodes"]}
    assert {f"{staged}#amt2", f"{staged}#region", "pc.region_totals.total@primary"} <= set(shown)
    assert shown[f"{staged}#amt2"]["name"] == "amt2" and shown[f"{staged}#amt2"]["sourceType"] == "HDFS"


def test_thrift_server_statements_carry_query_text(navd, index: SolrIndex, solr_server: EmbeddedSolr,  # type: ignore[no-untyped-def]
                                                    spark_thrift: SparkThriftServer, tmp_path: Path) -> None:
    """The temporary-tables search: queryText:*temp_sample_08* finds the operations that used the table,
    read from the Thrift Server's log while it is still being written (in progress)."""
    with hive.connect("127.0.0.1", spark_thrift.port, username="navd") as conn:
        cursor = conn.cursor()
        cursor.execute("CREATE DATABASE IF NOT EXISTS qt")
        cursor.execute("CREATE TABLE qt.temp_sample_08 (code STRING, salary INT) USING parquet")
        cursor.execute("INSERT INTO qt.temp_sample_08 VALUES ('a', 1)")
        cursor.execute("CREATE TABLE qt.sample_merge AS SELECT code, salary FROM qt.temp_sample_08")
    env = {**os.environ, "NAVD_CONFIG": str(config_file(tmp_path, solr_server, spark_thrift.event_log_dir))}
    extracted = navd("extract", "spark", "--once", env=env)
    assert extracted.returncode == 0, extracted.stderr
    found = navd("search", "queryText:*temp_sample_08*", "--json", env=env)
    texts = {d.get("queryText") for d in json.loads(found.stdout)["docs"]}
    assert "CREATE TABLE qt.sample_merge AS SELECT code, salary FROM qt.temp_sample_08" in texts
    assert "INSERT INTO qt.temp_sample_08 VALUES ('a', 1)" in texts
    lineage = navd("lineage", "qt.sample_merge@primary", "--direction", "upstream", "--format", "json", env=env)
    graph = json.loads(lineage.stdout)
    assert "qt.temp_sample_08@primary" in {n["qualifiedName"] for n in graph["nodes"]}


def test_a_crash_before_commit_loses_and_duplicates_nothing(index: SolrIndex, ctas_job: Path,
                                                            tmp_path: Path) -> None:
    """Records written but positions not committed (killed in between): the rerun reads the same
    lines again and the index ends up exactly as after one clean pass."""
    if True:
        crashed = SparkExtractor(cluster="crashtest", directories=[str(ctas_job / "events")], state_dir=tmp_path)
        writer = IndexWriter(index)
        first = list(crashed.extract())
        writer.write_all(first)
        writer.flush()  # ... and the process dies here, before crashed.commit()
        rerun = SparkExtractor(cluster="crashtest", directories=[str(ctas_job / "events")], state_dir=tmp_path)
        report = run_pass(rerun, writer)
        assert report.records == len(first) and report.lines > 0
        assert writer.close()
        for core in ("elements", "relations"):
            index.commit(core)
        identities = [d["identity"] for d in index.scan("elements", "qualifiedName:*crashtest* OR sourceType:SPARK",
                                                          fl="identity")]
        assert len(identities) == len(set(identities))
        assert index.count("elements", 'qualifiedName:"sales.t@crashtest"') == 1
        later = SparkExtractor(cluster="crashtest", directories=[str(ctas_job / "events")], state_dir=tmp_path)
        assert list(later.extract()) == []  # committed: the finished log is not read again


def test_a_view_created_through_spark_sql_and_the_plan_of_its_query(navd, index: SolrIndex,  # type: ignore[no-untyped-def]
                                                                     solr_server: EmbeddedSolr,
                                                                     tmp_path: Path) -> None:
    """CREATE VIEW in a PySpark job: the view is in the index (a HIVE VIEW stub until the HMS
    extractor describes it) with column lineage from its table, and the execution that read the
    view shows the plan that ran (`navd entity`)."""
    root = tmp_path / "job"
    run_pyspark("""
        spark.sql("create database vs")
        spark.sql("create table vs.s (c string, n int) using parquet")
        spark.sql("insert into vs.s values ('a', 1), ('b', 2)")
        spark.sql("create view vs.v as select upper(c) as u, n from vs.s where n > 1")
        spark.sql("create temporary view tv as select c from vs.s")
        spark.sql("create table vs.t as select u from vs.v")
    """, root, "view_job")
    env = {**os.environ, "NAVD_CONFIG": str(config_file(tmp_path, solr_server, root / "events"))}
    extracted = navd("extract", "spark", "--once", env=env)
    assert extracted.returncode == 0, extracted.stderr
    view = json.loads(navd("entity", "vs.v@primary", "--json", env=env).stdout)
    # logOwner: who owns the log that named it first (docs/sources/spark.md, "Trust model of event-log directories")
    me = pwd.getpwuid(os.geteuid()).pw_name
    assert (view["sourceType"], view["type"], view["properties"]) == ("HIVE", "VIEW", {"knownFrom": "spark",
                                                                                      "logOwner": me})
    result = navd("lineage", "vs.v@primary", "--direction", "upstream", "--columns", "--format", "json", env=env)
    assert result.returncode == 0, result.stderr
    graph = json.loads(result.stdout)
    names = {n["id"]: n["qualifiedName"] for n in graph["nodes"]}
    edges = {(names[e["source"]], names[e["target"]], e["type"], e.get("dependencyType")) for e in graph["edges"]}
    assert {("vs.s@primary", "vs.v@primary", "DATA_FLOW", None),
            ("vs.s.c@primary", "vs.v.u@primary", "DATA_FLOW", "EXPRESSION"),
            ("vs.s.n@primary", "vs.v.n@primary", "DATA_FLOW", "SIMPLE"),
            ("vs.s.n@primary", "vs.v.u@primary", "CONTROL_FLOW", None)} <= edges
    assert not [n for n in names.values() if "tv" in n.split("@")[0].split(".")]
    # The CTAS over the view: its execution element carries the plan that ran.
    (write,) = json.loads(navd("search", 'type:DATA_FLOW AND endpoint2QualifiedName:"vs.t@primary"',
                               "--core", "relations", "--json", env=env).stdout)["docs"]
    ctas = json.loads(navd("entity", write["endpoint1QualifiedName"], "--json", env=env).stdout)
    assert "CreateDataSourceTableAsSelectCommand" in ctas["executionPlan"]
    shown = navd("entity", ctas["qualifiedName"], env=env)
    assert shown.returncode == 0 and "executionPlan" in shown.stdout and "WriteFiles" in shown.stdout


def test_a_view_replaced_by_a_later_application_loses_its_earlier_lineage(  # type: ignore[no-untyped-def]
        navd, index: SolrIndex, solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    """CREATE VIEW in one PySpark application, CREATE OR REPLACE VIEW over another table in a
    later one, each extracted in its own pass: after the second pass the view's lineage, table
    and columns, is the second definition's only, and the column only the first had is flagged
    deleted. The first statement's execution stays, with what it read."""
    root = tmp_path / "job"
    run_pyspark("""
        spark.sql("create database rv")
        spark.sql("create table rv.a (x int, y string) using parquet")
        spark.sql("create table rv.b (k int, z string) using parquet")
        spark.sql("insert into rv.a values (1, 'a')")
        spark.sql("insert into rv.b values (2, 'b')")
        spark.sql("create view rv.v as select x as id, upper(y) as label from rv.a where x > 0")
    """, root, "view_first")
    env = {**os.environ, "NAVD_CONFIG": str(config_file(tmp_path, solr_server, root / "events"))}
    first = navd("extract", "spark", "--once", env=env)
    assert first.returncode == 0, first.stderr
    upstream = ("rv.v@primary", "--direction", "upstream", "--columns")
    assert lineage_edges(navd, env, *upstream) == {
        ("rv.a@primary", "rv.v@primary", "DATA_FLOW", None),
        ("rv.a.x@primary", "rv.v.id@primary", "DATA_FLOW", "SIMPLE"),
        ("rv.a.y@primary", "rv.v.label@primary", "DATA_FLOW", "EXPRESSION"),
        ("rv.a.x@primary", "rv.v.id@primary", "CONTROL_FLOW", None),
        ("rv.a.x@primary", "rv.v.label@primary", "CONTROL_FLOW", None)}
    run_pyspark("""
        spark.sql("create or replace view rv.v as select k as id, z as tag from rv.b")
    """, root, "view_second")
    second = navd("extract", "spark", "--once", env=env)
    assert second.returncode == 0, second.stderr
    assert lineage_edges(navd, env, *upstream) == {
        ("rv.b@primary", "rv.v@primary", "DATA_FLOW", None),
        ("rv.b.k@primary", "rv.v.id@primary", "DATA_FLOW", "SIMPLE"),
        ("rv.b.z@primary", "rv.v.tag@primary", "DATA_FLOW", "SIMPLE")}
    # the view's columns: `label`, which the new definition does not have, is flagged deleted
    index.commit("elements")
    fields = {doc["qualifiedName"]: doc.get("deleted", False)
              for doc in index.scan("elements", 'type:FIELD AND qualifiedName:rv.v.*', fl="qualifiedName,deleted")}
    assert fields == {"rv.v.id@primary": False, "rv.v.label@primary": True, "rv.v.tag@primary": False}
    # the first definition's execution still read rv.a
    read = json.loads(navd("search", 'type:DATA_FLOW AND endpoint1QualifiedName:"rv.a@primary"', "--core", "relations",
                           "--json", env=env).stdout)["docs"]
    assert [doc["endpoint2Type"] for doc in read] == ["OPERATION_EXECUTION"]


def test_a_view_dropped_and_defined_again_by_a_later_application_is_alive(  # type: ignore[no-untyped-def]
        navd, index: SolrIndex, solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    """DROP VIEW in one application flags the view (and the columns its lineage named) deleted; a
    later application's CREATE VIEW of the name brings it back: alive, with the new definition's
    lineage, shown without --deleted."""
    root = tmp_path / "job"
    run_pyspark("""
        spark.sql("create database dv")
        spark.sql("create table dv.a (x int, y string) using parquet")
        spark.sql("create view dv.v as select x as id from dv.a")
        spark.sql("drop view dv.v")
    """, root, "view_dropped")
    env = {**os.environ, "NAVD_CONFIG": str(config_file(tmp_path, solr_server, root / "events"))}
    first = navd("extract", "spark", "--once", env=env)
    assert first.returncode == 0, first.stderr
    index.commit("elements")
    assert [d.get("deleted") for d in index.scan("elements", 'qualifiedName:"dv.v@primary"')] == [True]
    run_pyspark("""
        spark.sql("create view dv.v as select x as id, y as label from dv.a")
    """, root, "view_again")
    second = navd("extract", "spark", "--once", env=env)
    assert second.returncode == 0, second.stderr
    index.commit("elements")
    shown = {doc["qualifiedName"]: doc.get("deleted", False)
             for doc in index.scan("elements", 'qualifiedName:dv.v*', fl="qualifiedName,deleted")}
    assert shown == {"dv.v@primary": False, "dv.v.id@primary": False, "dv.v.label@primary": False}
    assert lineage_edges(navd, env, "dv.v@primary", "--direction", "upstream", "--columns") == {
        ("dv.a@primary", "dv.v@primary", "DATA_FLOW", None),
        ("dv.a.x@primary", "dv.v.id@primary", "DATA_FLOW", "SIMPLE"),
        ("dv.a.y@primary", "dv.v.label@primary", "DATA_FLOW", "SIMPLE")}


def _view_definition_records(view: EntityRef, table: EntityRef, execution: str, started: datetime,
                             owner: str) -> list[Record]:
    """What a Spark execution defining `view` from `table` writes: its element (with the owner of
    its log), its DATA_FLOW into the view and a column edge into the view's column `id`."""
    ref = EntityRef(SourceType.SPARK, execution, ElementType.OPERATION_EXECUTION)
    return [Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION, execution, name=execution, started=started,
                    properties={LOG_OWNER: owner}),
            Relation(RelationType.DATA_FLOW, table, ref, linked1=False),
            Relation(RelationType.DATA_FLOW, ref, view, linked2=False),
            Relation(RelationType.DATA_FLOW, field_ref(table, "x"), field_ref(view, "id"), linked1=False, linked2=False,
                     discriminator=execution)]


@pytest.mark.parametrize(("later_owner", "withdrawn"), [("alice", True), ("mallory", False)])
def test_an_earlier_view_definition_goes_only_for_a_log_of_the_same_owner(index: SolrIndex, later_owner: str,
                                                                          withdrawn: bool) -> None:
    """The index side of a view defined again (replaced_views): the earlier definition (a
    previous pass) loses its relations into the view and its column when the later one comes
    from a log of the same owner; a log of another owner replaces nothing, and the view is named.
    The earlier execution keeps what it read either way."""
    view = EntityRef(SourceType.HIVE, f"ro_{later_owner}.v@primary", ElementType.VIEW)
    table_a = EntityRef(SourceType.HIVE, f"ro_{later_owner}.a@primary", ElementType.TABLE)
    table_b = EntityRef(SourceType.HIVE, f"ro_{later_owner}.b@primary", ElementType.TABLE)
    earlier, later = f"spark://app-{later_owner}-1/1/sql/3", f"spark://app-{later_owner}-2/1/sql/1"
    t0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    writer = IndexWriter(index)
    writer.write_all(_view_definition_records(view, table_a, earlier, t0, "alice")
                     + _view_definition_records(view, table_b, later, t0 + timedelta(hours=1), later_owner))
    assert writer.close()
    done = withdraw_replaced(index, [ViewDefinition(view, EntityRef(SourceType.SPARK, later,
                                                                    ElementType.OPERATION_EXECUTION),
                                                    t0 + timedelta(hours=1), later_owner)])
    index.commit("relations")
    into_view = {(doc["endpoint1QualifiedName"], doc["endpoint2QualifiedName"]) for doc in index.scan(
        "relations", f'endpoint2QualifiedName:"{view.qualified_name}" OR '
                     f'endpoint2QualifiedName:"{field_ref(view, "id").qualified_name}"')}
    kept = {(later, view.qualified_name), (field_ref(table_b, "x").qualified_name, field_ref(view, "id").qualified_name)}
    old = {(earlier, view.qualified_name), (field_ref(table_a, "x").qualified_name, field_ref(view, "id").qualified_name)}
    assert into_view == (kept if withdrawn else kept | old)
    assert done == (Withdrawn(((view.qualified_name, earlier),)) if withdrawn else Withdrawn((), (view.qualified_name,)))
    # the earlier execution still read its table
    assert index.count("relations", f'endpoint1QualifiedName:"{table_a.qualified_name}"') == 1


@pytest.mark.parametrize(("later_owner", "columns", "flagged"), [
    ("alice", frozenset({"id", "tag"}), {"label"}),
    # another owner's log flags nothing it did not name (the stubs are alice's)
    ("mallory", frozenset({"id", "tag"}), set()),
    # a definition whose log does not name all its columns flags none
    ("alice", None, set()),
])
def test_a_view_defined_again_flags_the_column_stubs_it_no_longer_has(
        index: SolrIndex, later_owner: str, columns: frozenset[str] | None, flagged: set[str]) -> None:
    """The column stubs an earlier definition (a previous pass, or a statement retired earlier in
    the same application) named and the latest definition no longer has are flagged deleted as
    of the latest's start; the columns it has stay."""
    schema = f"rc_{later_owner}_{'all' if columns else 'cut'}"
    view = EntityRef(SourceType.HIVE, f"{schema}.v@primary", ElementType.VIEW)
    table = EntityRef(SourceType.HIVE, f"{schema}.a@primary", ElementType.TABLE)
    earlier, later = f"spark://app-{schema}-1/1/sql/3", f"spark://app-{schema}-2/1/sql/1"
    t0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    first = _view_definition_records(view, table, earlier, t0, "alice") + [
        Relation(RelationType.DATA_FLOW, field_ref(table, "y"), field_ref(view, "label"), linked1=False,
                 linked2=False, discriminator=earlier)]
    second = _view_definition_records(view, table, later, t0 + timedelta(hours=1), later_owner)
    writer = IndexWriter(index)
    writer.write_all([*first, *stubs_for(first, "spark##1", "alice")])
    writer.write_all([*second, *stubs_for(second, "spark##2", later_owner)])
    assert writer.close()
    fields = None if columns is None else frozenset(field_ref(view, c).qualified_name for c in columns)
    done = withdraw_replaced(index, [ViewDefinition(view, EntityRef(SourceType.SPARK, later,
                                                                    ElementType.OPERATION_EXECUTION),
                                                    t0 + timedelta(hours=1), later_owner, fields)])
    index.commit("elements")
    deleted = {str(doc["qualifiedName"]).split(".")[-1].split("@")[0]: doc.get("deleteTime")
               for doc in index.scan("elements", f'type:FIELD AND qualifiedName:{schema}.v.* AND deleted:true',
                                     fl="qualifiedName,deleteTime")}
    assert set(deleted) == flagged
    assert all(when == "2026-01-05T11:00:00Z" for when in deleted.values())
    assert done.columns_dropped == tuple(field_ref(view, c).qualified_name for c in sorted(flagged))
    assert index.count("elements", f'type:FIELD AND qualifiedName:"{field_ref(view, "id").qualified_name}"'
                                   " AND -deleted:true") == 1


def test_views_defined_again_in_one_pass_are_withdrawn_each_from_its_own_earlier_definition(index: SolrIndex) -> None:
    """Several views of one pass are withdrawn in one go (one query, one get, one deletion for
    them all): each view loses its own earlier definition's relations and the column stubs its
    own latest definition no longer has, nothing of the other views; a view of another owner's
    earlier definition keeps it and is named."""
    t0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    views, latest, expected_old, expected_kept = [], [], set(), set()
    for n, earlier_owner in enumerate(("alice", "alice", "bob")):
        schema = f"rm_{n}"
        view = EntityRef(SourceType.HIVE, f"{schema}.v@primary", ElementType.VIEW)
        table = EntityRef(SourceType.HIVE, f"{schema}.a@primary", ElementType.TABLE)
        earlier, later = f"spark://app-{schema}-1/1/sql/3", f"spark://app-{schema}-2/1/sql/1"
        # the earlier definition also named the column `c{n}`, the later one has only `id`
        first = _view_definition_records(view, table, earlier, t0, earlier_owner) + [
            Relation(RelationType.DATA_FLOW, field_ref(table, "y"), field_ref(view, f"c{n}"), linked1=False,
                     linked2=False, discriminator=earlier)]
        second = _view_definition_records(view, table, later, t0 + timedelta(hours=n + 1), "alice")
        writer = IndexWriter(index)
        writer.write_all([*first, *stubs_for(first, "spark##1", earlier_owner)])
        writer.write_all([*second, *stubs_for(second, "spark##2", "alice")])
        assert writer.close()
        views.append(view)
        latest.append(ViewDefinition(view, EntityRef(SourceType.SPARK, later, ElementType.OPERATION_EXECUTION),
                                     t0 + timedelta(hours=n + 1), "alice",
                                     frozenset({field_ref(view, "id").qualified_name})))
        (expected_old if earlier_owner == "alice" else expected_kept).add((view.qualified_name, earlier))
    done = withdraw_replaced(index, latest)
    assert set(done.definitions) == expected_old
    assert done.untrusted == ("rm_2.v@primary",)
    # the column stubs alice's logs named and her latest definitions no longer have; bob's stays
    assert sorted(done.columns_dropped) == ["rm_0.v.c0@primary", "rm_1.v.c1@primary"]
    index.commit("relations")
    index.commit("elements")
    for n, view in enumerate(views):
        writers = {str(doc["endpoint1QualifiedName"]) for doc in index.scan(
            "relations", f'type:DATA_FLOW AND endpoint2QualifiedName:"{view.qualified_name}"')}
        column_edges = {str(doc["discriminator"]) for doc in index.scan(
            "relations", f'type:DATA_FLOW AND endpoint2QualifiedName:"{field_ref(view, "id").qualified_name}"')}
        later, earlier = f"spark://app-rm_{n}-2/1/sql/1", f"spark://app-rm_{n}-1/1/sql/3"
        assert writers == column_edges == ({later} if n < 2 else {later, earlier}), view
        flagged = {str(doc["qualifiedName"]) for doc in index.scan(
            "elements", f"type:FIELD AND qualifiedName:rm_{n}.v.* AND deleted:true", fl="qualifiedName")}
        assert flagged == ({f"rm_{n}.v.c{n}@primary"} if n < 2 else set()), view


def test_a_view_replaced_in_one_pass_names_no_column_of_its_earlier_definition() -> None:
    """CREATE VIEW then CREATE OR REPLACE VIEW with other columns in one application, read in
    one pass: the records name (and stub) only the later definition's columns."""
    run, emitted = process_lines((FIXTURES / "view_forms.jsonl").read_text(encoding="utf-8").splitlines(),
                                 cluster="primary", default_fs="hdfs://nameservice1")
    stubbed = {r.element.qualified_name for r in stubs_for(emitted, None, "alice")
               if isinstance(r, ElementStub) and r.element.qualified_name.startswith("vf.replaced.")}
    assert stubbed == {"vf.replaced.customer_id@primary", "vf.replaced.region@primary"}
    first = next(e for e in run.executions if e.replaced_views == (("vf.replaced@primary", 26),))
    assert first.view_columns == ()


FIXTURES = Path(__file__).parent / "fixtures" / "spark_events"


def index_snapshot(index: SolrIndex) -> dict[str, dict[str, dict[str, object]]]:
    """Every document of both data cores by identity, without what Solr stamps on each write."""
    out = {}
    for core in ("elements", "relations"):
        index.commit(core)
        out[core] = {d["identity"]: {k: v for k, v in d.items() if k not in ("_version_", "lastIndexed")}
                     for d in index.scan(core)}
    return out


def empty_index(index: SolrIndex) -> None:
    for core in ("elements", "relations"):
        index.delete_query(core, "*:*")
        index.commit(core)


def test_a_log_completed_later_under_its_final_name_loses_and_duplicates_nothing(
        clean_index: SolrIndex, tmp_path: Path, log_stream: io.StringIO) -> None:
    """A copy (or `rsync --inplace`) still arriving under the final name: the first pass sees a
    finished log ending mid-line. The rest, appended later, is read with the application's
    state, as if the log had been read in one go."""
    text = (FIXTURES / "insert_overwrite_join.jsonl").read_bytes()
    app_id = next(json.loads(line)["App ID"] for line in text.splitlines()
                  if b'"SparkListenerApplicationStart"' in line)
    lines = text.splitlines(keepends=True)
    split = 21  # the SQL execution starting on line 22 (index 21) is cut in two
    assert b"SparkListenerSQLExecutionStart" in lines[split]
    cut = sum(map(len, lines[:split])) + len(lines[split]) // 2
    events = tmp_path / "events"
    events.mkdir()
    (events / app_id).write_bytes(text[:cut])

    extractor = SparkExtractor(cluster="primary", directories=[str(events)], state_dir=tmp_path / "state",
                               extractor_run_id="spark##partial")
    writer = IndexWriter(clean_index)
    first = run_pass(extractor, writer)
    with (events / app_id).open("ab") as fh:
        fh.write(text[cut:])
    second = run_pass(extractor, writer)
    assert writer.close()
    assert (first.lines, second.lines) == (split, len(lines) - split)
    assert (first.warnings, second.warnings) == (1, 0)  # the held-back line, said once
    in_two = index_snapshot(clean_index)

    empty_index(clean_index)
    whole = SparkExtractor(cluster="primary", directories=[str(events)], state_dir=tmp_path / "whole",
                           extractor_run_id="spark##partial")
    writer = IndexWriter(clean_index)
    run_pass(whole, writer)
    assert writer.close()
    in_one = index_snapshot(clean_index)
    assert len(in_one["elements"]) > 10 and len(in_one["relations"]) > 10
    for core in ("elements", "relations"):
        assert sorted(in_two[core]) == sorted(in_one[core]), core  # 0 lost, 0 extra
        for identity, doc in in_one[core].items():
            assert in_two[core][identity] == doc, identity
    logged = records(log_stream)
    assert not [r for r in logged if r.get("reason") == "invalid_json"]
    held = [r for r in logged if r["event"].startswith("finished event log ends in a partial line")]
    assert [(r["file"], r["offset"]) for r in held] == [(str(events / app_id), sum(map(len, lines[:split])))]
    # Finished now: read to its end and never again.
    assert extractor.tailer.committed[str(events / app_id)].done
    assert list(extractor.extract()) == []


def _read_in_two(index: SolrIndex, tmp_path: Path, first_part: bytes, rest: bytes,
                 name: str) -> tuple[dict[str, dict[str, dict[str, object]]], SparkExtractor, Path]:
    """The index after one pass over `first_part` of a log under its final name and a second pass
    once `rest` arrived; and the extractor and the log's path."""
    events = tmp_path / "events"
    events.mkdir()
    (events / name).write_bytes(first_part)
    extractor = SparkExtractor(cluster="primary", directories=[str(events)], state_dir=tmp_path / "state",
                               extractor_run_id="spark##arriving")
    writer = IndexWriter(index)
    run_pass(extractor, writer)
    with (events / name).open("ab") as fh:
        fh.write(rest)
    run_pass(extractor, writer)
    assert writer.close()
    return index_snapshot(index), extractor, events / name


def _read_in_one(index: SolrIndex, tmp_path: Path, log: Path) -> dict[str, dict[str, dict[str, object]]]:
    empty_index(index)
    whole = SparkExtractor(cluster="primary", directories=[str(log.parent)], state_dir=tmp_path / "whole",
                           extractor_run_id="spark##arriving")
    writer = IndexWriter(index)
    run_pass(whole, writer)
    assert writer.close()
    return index_snapshot(index)


@pytest.mark.parametrize("cut_at", ["nothing yet", "a line's end"])
def test_a_copy_arriving_under_the_final_name_is_read_whole_once_it_has_arrived(
        clean_index: SolrIndex, tmp_path: Path, log_stream: io.StringIO, cut_at: str) -> None:
    """`cp` into the event log directory creates the file empty, then fills it: a pass may see
    it empty, or (rarely) ending at a line's end, and take it for a finished log. An empty one
    gets no position (CI ci11: a done cursor committed while Solr was down); one that changes
    after it looked finished is read again from its start, with its application's context."""
    text = (FIXTURES / "insert_overwrite_join.jsonl").read_bytes()
    app_id = next(json.loads(line)["App ID"] for line in text.splitlines()
                  if b'"SparkListenerApplicationStart"' in line)
    lines = text.splitlines(keepends=True)
    cut = 0 if cut_at == "nothing yet" else sum(map(len, lines[:21]))  # before an SQL execution
    in_two, extractor, log = _read_in_two(clean_index, tmp_path, text[:cut], text[cut:], app_id)
    in_one = _read_in_one(clean_index, tmp_path, log)
    assert len(in_one["elements"]) > 10 and len(in_one["relations"]) > 10
    for core in ("elements", "relations"):
        assert sorted(in_two[core]) == sorted(in_one[core]), core  # 0 lost, 0 extra
        for identity, doc in in_two[core].items():
            assert doc == in_one[core][identity], identity
    assert extractor.tailer.committed[str(log)].done
    assert list(extractor.extract()) == []
    changed = [r for r in records(log_stream) if r["event"].startswith("finished event log changed")]
    assert len(changed) == (0 if cut == 0 else 1)


def test_an_empty_file_under_a_final_name_gets_no_position(clean_index: SolrIndex, tmp_path: Path) -> None:
    events = tmp_path / "events"
    events.mkdir()
    (events / "application_1700000000000_0001").write_bytes(b"")
    extractor = SparkExtractor(cluster="primary", directories=[str(events)], state_dir=tmp_path / "state",
                               extractor_run_id="spark##empty")
    writer = IndexWriter(clean_index)
    report = run_pass(extractor, writer)
    assert writer.close()
    assert (report.lines, report.records) == (0, 0)
    assert EventLogCursorStore(tmp_path / "state").load() == {}


def records(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def captured_log(case: str, directory: Path) -> tuple[str, list[bytes]]:
    """A captured event log written into `directory` under its application id, as Spark names
    it: (the application id, its lines)."""
    text = (FIXTURES / f"{case}.jsonl").read_bytes()
    app_id = next(json.loads(line)["App ID"] for line in text.splitlines()
                  if b'"SparkListenerApplicationStart"' in line)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / app_id).write_bytes(text)
    return app_id, text.splitlines(keepends=True)


class ReadCountingFileSystem(LocalFileSystem):
    """The local file system, counting the reads of each file (to see what a poll reads)."""

    def __init__(self) -> None:
        self.reads: collections.Counter[str] = collections.Counter()

    def read(self, path: str, offset: int, length: int) -> bytes:
        self.reads[path] += 1
        return super().read(path, offset, length)


def warning_lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [r for r in records(stream) if r["level"] == "warning"]


def test_files_that_are_no_event_log_are_skipped_once_with_one_line_each(
        index: SolrIndex, tmp_path: Path, log_stream: io.StringIO) -> None:
    events = tmp_path / "events"
    captured_log("ctas_expression", events)
    # Named like logs: a 1 MB binary (thousands of "lines"), another tool's JSON lines, and
    # Spark events that do not start a log (no SparkListenerLogStart or ApplicationStart).
    binary = events / "application_1700000000000_0001"
    binary.write_bytes(random.Random(18).randbytes(1 << 20))
    assert binary.read_bytes().count(b"\n") > 3000
    (events / "local-1700000000001").write_text('{"level":"info","msg":"x"}\n' * 500)
    (events / "local-1700000000002").write_text('{"Event":"SparkListenerJobStart","Job ID":1}\n' * 500)

    extractor = SparkExtractor(cluster="primary", directories=[str(events)], state_dir=tmp_path / "state")
    writer = IndexWriter(index)
    report = run_pass(extractor, writer)
    assert writer.close()
    assert report.records > 0  # the real log next to them
    warned = warning_lines(log_stream)
    assert sorted(Path(str(w["file"])).name for w in warned) == [
        "application_1700000000000_0001", "local-1700000000001", "local-1700000000002"]
    assert {w["event"] for w in warned} == {"not a Spark event log, skipped until it changes"}
    assert report.warnings == len(warned) == 3  # the run's count is what the log shows

    # The next polls neither read them nor say anything; a change is looked at again, quietly.
    counting = ReadCountingFileSystem()
    extractor.tailer.fs = extractor.tailer.reader.fs = counting
    writer = IndexWriter(index)
    assert run_pass(extractor, writer).warnings == 0
    assert counting.reads == {}
    with binary.open("ab") as fh:
        fh.write(b"\x00" * 100)
    assert run_pass(extractor, writer).warnings == 0
    assert writer.close()
    assert list(counting.reads) == [str(binary)]
    assert len(warning_lines(log_stream)) == 3


def test_repeated_warnings_in_one_file_are_summarised_and_all_counted(
        index: SolrIndex, tmp_path: Path, log_stream: io.StringIO) -> None:
    events = tmp_path / "events"
    app_id, lines = captured_log("ctas_expression", events)
    bad = [b'{"Event":"SparkListenerJobStart","x":"\xc3\x28 %d"}\n' % n for n in range(20)]
    (events / app_id).write_bytes(b"".join(lines[:5] + bad + lines[5:]))

    extractor = SparkExtractor(cluster="primary", directories=[str(events)], state_dir=tmp_path / "state")
    writer = IndexWriter(index)
    report = run_pass(extractor, writer)
    assert writer.close()
    assert report.records > 0 and report.lines == len(lines)
    warned = warning_lines(log_stream)
    one_by_one = [w for w in warned if w["event"] == "event log line is not UTF-8, skipped"]
    assert len(one_by_one) == FIRST_LOGGED
    (summary,) = [w for w in warned if w not in one_by_one]
    assert (summary["kind"], summary["count"], summary["file"]) == ("not_utf8", 20 - FIRST_LOGGED,
                                                                   str(events / app_id))
    assert report.warnings == 20


def test_an_unreadable_directory_is_warned_once_and_its_return_said(
        tmp_path: Path, log_stream: io.StringIO) -> None:
    events = tmp_path / "events"
    tailer = EventLogTailer(LocalFileSystem(), [str(events)], EventLogCursorStore(tmp_path / "state"))
    for _ in range(3):  # three polls of a directory not there (unmounted, not created yet)
        assert list(tailer.poll()) == []
    unreadable = [r for r in records(log_stream) if r["event"] == "event log directory unreadable"]
    assert len(unreadable) == 1 and tailer.warnings == 1
    captured_log("ctas_expression", events)
    for _ in range(2):
        for _log, line in tailer.poll():
            tailer.advance(line.cursor)
    back = [r for r in records(log_stream) if r["event"] == "event log directory readable again"]
    assert [r["directory"] for r in back] == [str(events)]
    assert len([r for r in records(log_stream) if r["event"] == "event log directory unreadable"]) == 1


def test_a_pass_holds_one_application_at_a_time_and_keeps_only_running_ones(
        clean_index: SolrIndex, tmp_path: Path) -> None:
    """A first start over many finished logs and one still being written: each application's
    records go to the writer before the next log is read, positions are committed at the ends of
    applications during the pass (here after every one), each commit only once Solr has the
    application, and afterwards only the running application's state is kept."""
    events = tmp_path / "events"
    app_id, lines = captured_log("insert_overwrite_join", events)
    (events / app_id).unlink()
    text = b"".join(lines)
    finished = [f"{app_id}{n:02d}" for n in range(12)]
    for copy in finished:
        (events / copy).write_bytes(text.replace(app_id.encode(), copy.encode()))
    # The running one: its log stops before its last SQL execution's end.
    running = f"{app_id}99"
    cut = max(n for n, line in enumerate(lines) if b"SparkListenerSQLExecutionEnd" in line)
    (events / f"{running}.inprogress").write_bytes(b"".join(lines[:cut]).replace(app_id.encode(), running.encode()))

    extractor = SparkExtractor(cluster="primary", directories=[str(events)], state_dir=tmp_path / "state",
                               checkpoint_seconds=0)
    held: list[int] = []
    extract = extractor.extract

    def watched(*, full: bool = False) -> Iterator[Record | Checkpoint]:
        for record in extract(full=full):
            if not isinstance(record, Checkpoint):
                held.append(extractor.applications_in_memory)
            yield record

    extractor.extract = watched  # type: ignore[method-assign]
    commits: list[list[str]] = []
    store_commit = extractor.tailer.store.commit

    def checked_commit(cursors: Mapping[str, LogCursor]) -> None:
        # Positions never ahead of Solr: every application committed is there (real-time get).
        runs = [spark_run_ref(Path(key).name).identity for key in cursors]
        assert len(clean_index.get("elements", runs)) == len(runs)
        commits.append(sorted(cursors))
        store_commit(cursors)

    extractor.tailer.store.commit = checked_commit  # type: ignore[method-assign]
    writer = IndexWriter(clean_index)
    report = run_pass(extractor, writer)
    assert writer.close()
    assert report.lines == len(lines) * 12 + cut and report.records == len(held)
    assert max(held) == 1  # the application being read, never the ones before it
    assert extractor.checkpoints == 13 and len(commits) == 13  # one per application, the last one ending the pass
    assert [len(c) for c in commits] == list(range(1, 14))
    # Afterwards: the running application's state, and its file's decoder, only; of its SQL
    # executions only the open one (its ended ones were written and forgotten).
    assert extractor.applications_in_memory == 1
    [app] = extractor._apps.values()
    assert app.processor.executions_in_memory >= 1
    assert [e.outcome for e in app.processor.finish().executions] == ["RUNNING"]
    assert list(extractor.tailer.reader._live) == [str(events / running)]
    committed = EventLogCursorStore(tmp_path / "state").load()
    assert sorted(k for k, c in committed.items() if c.done) == sorted(str(events / c) for c in finished)


def test_the_spark_components_post_commit_hooks_run_once_solr_has_the_applications_records(
        clean_index: SolrIndex, tmp_path: Path) -> None:
    """The Spark component builds its extractor with its hooks (the OpenLineage listener's
    lineage superseded); at each commit they are given the applications written since the
    previous one, after the writer flushed their records (so what they delete is not written
    back) and before the positions are durable."""
    text = (FIXTURES / "insert_overwrite_join.jsonl").read_bytes()
    app_id = next(json.loads(line)["App ID"] for line in text.splitlines()
                  if b'"SparkListenerApplicationStart"' in line)
    events = tmp_path / "events"
    events.mkdir()
    (events / app_id).write_bytes(text)
    config = parse_config({"cluster": {"name": "primary"}, "spark": {"event_log_dirs": [str(events)]}})
    built = COMPONENT.build(BuildContext(config, clean_index, tmp_path / "state", "spark##hooks"))
    assert built.post_commit == POST_COMMIT_HOOKS == (supersede_listener_lineage,)  # type: ignore[attr-defined]
    built.close()

    seen: list[tuple[frozenset[str], int, int]] = []

    def hook(index: SolrIndex, applications: frozenset[str]) -> None:
        index.commit("elements", soft=True)
        seen.append((applications, index.count("elements", f"qualifiedName:{escape(f'spark://{app_id}/')}*"),
                     len(extractor.tailer.committed)))

    extractor = SparkExtractor(cluster="primary", directories=[str(events)], state_dir=tmp_path / "hooked",
                               index=clean_index, post_commit=(hook,))
    writer = IndexWriter(clean_index)
    run_pass(extractor, writer)
    run_pass(extractor, writer)  # nothing new: no application written, no hook
    assert writer.close()
    [(applications, elements, positions)] = seen
    assert applications == {app_id}
    assert elements > 1  # the run and its executions were in Solr
    assert positions == 0  # and the log's position not yet committed
    assert len(extractor.tailer.committed) == 1
