"""The workflow that produced a table, in `navd lineage --operations`, `navd deps` and `navd
impact`: HiveServer2's lineage log (tests/fixtures/hive_lineage, through `navd extract
hive-lineage`) has a CTAS whose MapReduce job is `job_1700000000000_0001`, and an Oozie Hive
action (the golden workflow of tests/fixtures/oozie) names that job among its
`externalChildIDs`: the Hive execution reaches the action through the YARN application both
name, and the action its workflow. The insert reading the CTAS's table ran outside Oozie."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import NavdRunner, write_navd_config
from navd.extractors.oozie.records import parse_workflow, workflow_records
from navd.index.client import IndexWriter, SolrIndex
from navd.lineage.memory_store import MemoryLineageStore
from navd.lineage.rules import LineageOptions, lineage
from navd.model import Element, ElementType, Relation, RelationType, SourceType
from navd.names import hive_qualified_name, spark_execution_ref, spark_run_ref, yarn_execution_ref
from navd.solr.server import EmbeddedSolr

OOZIE = Path(__file__).parent / "fixtures" / "oozie"
HIVE_LOG = Path(__file__).parent / "fixtures" / "hive_lineage" / "hiveserver2-lineage.log"
RUN = "0000001-140324163709596-oozie-chit-W"
CTAS = "87921246fb098d44c05e0ccd9ecb0676"  # create table src2 as select ... from src1
INSERT = "d3d379a20e27c1618037bd6b8e840b13"  # insert into table dest1_n56 select * from src2


def workflow_body(unique: str, cluster_started: str) -> dict[str, Any]:
    """The golden workflow, its ids and name made this test's, its Hive action naming the CTAS's job."""
    body = json.loads((OOZIE / "workflow_spark_hive.json").read_text(encoding="utf-8"))
    body["id"] = RUN.replace("chit", unique[:8])
    body["appName"] = f"{unique}-daily"
    for action in body["actions"]:
        action["id"] = action["id"].replace(RUN, body["id"])
        if action["name"] == "load":
            action["externalChildIDs"] = f"job_{cluster_started}_0001"
    return body


@pytest.fixture
def extracted(navd: NavdRunner, solr_server: EmbeddedSolr, index: SolrIndex, unique: str,
              tmp_path: Path) -> tuple[str, dict[str, str], dict[str, Any]]:
    logs = tmp_path / "hive"
    logs.mkdir()
    # YARN ids are global: each test's ResourceManager start time of its own
    cluster_started = str(1_700_000_000_000 + int(unique[1:], 16) % 10**9)
    (logs / "lineage.log").write_text(HIVE_LOG.read_text(encoding="utf-8").replace(
        "job_1700000000000_", f"job_{cluster_started}_"), encoding="utf-8")
    config = write_navd_config(tmp_path / "navd.toml", solr_server, f'[hive_lineage]\nlog_paths = ["{logs}/*"]\n',
                               cluster=unique, state=tmp_path / "state")
    env = {**os.environ, "NAVD_CONFIG": str(config)}
    done = navd("extract", "hive-lineage", "--once", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    body = workflow_body(unique, cluster_started)
    writer = IndexWriter(index)
    try:
        for record in workflow_records(parse_workflow(body)):
            writer.write(record)
    finally:
        assert writer.close()
    for core in ("elements", "relations"):
        index.commit(core)
    return unique, env, {**body, "application": f"yarn://application_{cluster_started}_0001"}


def cli_json(navd: NavdRunner, env: dict[str, str], *args: str) -> Any:
    done = navd(*args, "--format", "json", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_a_tables_lineage_with_operations_shows_the_workflow_that_produced_it(
        navd: NavdRunner, extracted: tuple[str, dict[str, str], dict[str, Any]]) -> None:
    unique, env, body = extracted
    application = body["application"]
    src2 = hive_qualified_name(unique, "default", "src2")
    graph = cli_json(navd, env, "lineage", src2, "--operations", "--direction", "upstream")
    names = {node["qualifiedName"]: node for node in graph["nodes"]}
    ctas = f"hive://{unique}/execution/{CTAS}/1700000000/hive"
    action = f"oozie://{body['id']}@load"
    assert {ctas, application, action, f"oozie://{body['id']}",
            f"oozie://workflow/{unique}-daily"} <= set(names), sorted(names)
    assert names[application].get("unlinked") is True  # no YARN extractor here
    by_id = {node["id"]: node["qualifiedName"] for node in graph["nodes"]}
    edges = {(by_id[e["source"]], by_id[e["target"]], e["type"]) for e in graph["edges"]}
    assert {(ctas, application, "LOGICAL_PHYSICAL"),
            (application, action, "LOGICAL_PHYSICAL"),
            (f"oozie://{body['id']}", action, "PARENT_CHILD"),
            (f"oozie://workflow/{unique}-daily", f"oozie://{body['id']}", "INSTANCE_OF")} <= edges
    # the other YARN ids of the workflow's actions lead nowhere in this graph
    assert "yarn://application_1395703212345_0008" not in names
    # without operations, executions and what started them are contracted away
    plain = cli_json(navd, env, "lineage", src2, "--direction", "upstream")
    assert not any(n["qualifiedName"].startswith("oozie://") for n in plain["nodes"])
    text = navd("lineage", src2, "--operations", "--direction", "upstream", env=env)
    assert text.returncode == 0 and f"oozie://workflow/{unique}-daily (OOZIE OPERATION)" in text.stdout


def test_deps_names_the_workflow_that_ran_the_producer(
        navd: NavdRunner, extracted: tuple[str, dict[str, str], dict[str, Any]]) -> None:
    unique, env, _ = extracted
    found = cli_json(navd, env, "deps", f"hive://{unique}/query/{INSERT}")
    [producer] = found["producers"]
    assert producer["qualifiedName"] == f"hive://{unique}/query/{CTAS}"
    assert producer["workflows"] == [f"oozie://workflow/{unique}-daily"]
    text = navd("deps", f"hive://{unique}/query/{INSERT}", env=env)
    assert text.returncode == 0 and f"started by oozie://workflow/{unique}-daily" in text.stdout, text.stdout


def test_impact_names_the_workflows_of_the_jobs_reading(
        navd: NavdRunner, extracted: tuple[str, dict[str, str], dict[str, Any]]) -> None:
    unique, env, _ = extracted
    found = cli_json(navd, env, "impact", hive_qualified_name(unique, "default", "src1"))
    jobs = {job["qualifiedName"]: job for job in found["jobs"]}
    assert jobs[f"hive://{unique}/query/{CTAS}"]["workflows"] == [f"oozie://workflow/{unique}-daily"]
    assert "workflows" not in jobs[f"hive://{unique}/query/{INSERT}"]  # ran outside Oozie
    text = navd("impact", hive_qualified_name(unique, "default", "src1"), env=env)
    assert f"workflows=oozie://workflow/{unique}-daily" in text.stdout, text.stdout


def test_a_spark_sql_execution_climbs_to_its_workflow_through_its_run() -> None:
    """The Spark path without Solr: SQL execution <- run -> YARN application -> action."""
    body = json.loads((OOZIE / "workflow_spark_hive.json").read_text(encoding="utf-8"))
    application = "application_1395703212345_0008"
    sql = spark_execution_ref(application, "1", 3)
    table = Element(SourceType.HIVE, ElementType.TABLE, "default.daily_sales@c1", name="daily_sales")
    store = MemoryLineageStore.of([
        table, *workflow_records(parse_workflow(body)),
        Relation(RelationType.PARENT_CHILD, spark_run_ref(application), sql, linked1=False),
        Relation(RelationType.LOGICAL_PHYSICAL, spark_run_ref(application), yarn_execution_ref(application),
                 linked1=False, linked2=False),
        Relation(RelationType.DATA_FLOW, sql, table.ref, linked1=False)])
    graph = lineage(store, table.identity, LineageOptions(direction="upstream", operations=True))
    names = {n.qualified_name for n in graph.nodes}
    assert {sql.qualified_name, spark_run_ref(application).qualified_name, f"yarn://{application}",
            f"oozie://{RUN}@aggregate", f"oozie://{RUN}", "oozie://workflow/daily-sales"} <= names, names
    # the action's other relations (its launcher application, the Hive action) are not on the path
    assert f"oozie://{RUN}@load" not in names and "yarn://application_1395703212345_0007" not in names
