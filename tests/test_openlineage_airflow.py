"""Apache Airflow 3 as its users run it: a DAG of SQL tasks (the common-sql provider's
SQLExecuteQueryOperator on SQLite) and a task with declared inlets and outlets, run by the real
`airflow dags test` (Airflow and its OpenLineage provider installed from PyPI into the
emitters' venv by `make setup-test`) with the provider's transport pointed at a real `navd
serve` with an API key. The same events go to a file first (the composite transport), and
navd's Marquez reads are checked against what Airflow sent: every run, its parent, and the
task's datasets edge for edge.

What Airflow's provider reports here: the DAG run, each task run as its child, and each SQL
statement as a run of its own (`<dag>.<task>.query.<n>`); SQLite's hook gives no database
information, so the SQL tasks carry no datasets; the declared inlets and outlets (Assets with
`file://` URIs, one name with a space) are the task's inputs and outputs."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from conftest import Served, emitted_events, emitter_command, serve_intake_with_api_key, write_emitter_transport
from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr

#: a bound on `airflow db migrate` and `airflow dags test` (a hang fails the test), not a measurement
AIRFLOW_SECONDS = 600

DAG = '''
from datetime import datetime
from airflow import DAG
from airflow.sdk import Asset, task
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator

with DAG("shop_daily", start_date=datetime(2026, 11, 1), schedule=None, catchup=False):
    load = SQLExecuteQueryOperator(task_id="load_orders", conn_id="shop_db", sql=[
        "CREATE TABLE IF NOT EXISTS orders (id INTEGER, customer_id INTEGER, amount REAL)",
        "INSERT INTO orders VALUES (1, 1, 10.5)"])

    @task(inlets=[Asset("file:///data/shop/orders.csv")],
          outlets=[Asset("file:///data/shop/revenue by region.parquet")])
    def export_revenue() -> str:
        return "done"

    load >> export_revenue()
'''


@pytest.fixture(scope="module")
def served_with_key(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr,
                    index: SolrIndex) -> Iterator[tuple[Served, str]]:
    with serve_intake_with_api_key(tmp_path_factory.mktemp("airflow-navd"), solr_server, "airflow") as served:
        yield served


@pytest.fixture(scope="module")
def airflow_events(tmp_path_factory: pytest.TempPathFactory, served_with_key: tuple[Served, str],
                   index: SolrIndex) -> list[dict[str, Any]]:
    """`airflow dags test shop_daily` in an Airflow home of its own; the events it sent."""
    airflow = emitter_command("airflow")
    served, key = served_with_key
    home = tmp_path_factory.mktemp("airflow-home")
    (home / "dags").mkdir()
    (home / "dags" / "shop.py").write_text(DAG)
    events_file = home / "events.jsonl"
    write_emitter_transport(home / "openlineage.yml", events_file, served.url, key)
    env = {**os.environ, "PATH": f"{airflow.parent}{os.pathsep}{os.environ['PATH']}", "AIRFLOW_HOME": str(home),
           "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"), "AIRFLOW__CORE__LOAD_EXAMPLES": "false",
           "AIRFLOW__OPENLINEAGE__NAMESPACE": f"af{uuid.uuid4().hex[:8]}",
           "OPENLINEAGE_CONFIG": str(home / "openlineage.yml"),
           "AIRFLOW_CONN_SHOP_DB": json.dumps({"conn_type": "sqlite", "host": str(home / "shop.db")})}
    for args in (["db", "migrate"], ["dags", "test", "shop_daily"]):
        done = subprocess.run([str(airflow), *args], env=env, cwd=home, capture_output=True, text=True,
                              timeout=AIRFLOW_SECONDS, check=False)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Failed to emit" not in done.stdout + done.stderr, done.stdout[-3000:]
    for core in ("elements", "relations"):  # what the intake acknowledged, searchable now
        index.commit(core, soft=True)
    return emitted_events(events_file)


def test_every_run_airflow_sent_is_in_navd_with_its_parent(airflow_events: list[dict[str, Any]],
                                                             served_with_key: tuple[Served, str]) -> None:
    served, key = served_with_key
    headers = {"Authorization": f"Bearer {key}"}
    runs = {e["run"]["runId"]: e for e in airflow_events}
    assert {e["job"]["name"] for e in runs.values()} >= {"shop_daily", "shop_daily.load_orders", "shop_daily.export_revenue",
                                                        "shop_daily.load_orders.query.1"}
    for run_id, event in runs.items():
        answer = served.get(f"/api/v1/jobs/runs/{run_id}", headers=headers)
        assert answer.status_code == 200, (event["job"]["name"], answer.text)
        sent_parent = event["run"].get("facets", {}).get("parent", {}).get("run", {}).get("runId")
        kept_parent = answer.json().get("facets", {}).get("parent", {}).get("run", {}).get("runId")
        assert kept_parent == sent_parent, (event["job"]["name"], answer.json().get("facets"))


def test_the_tasks_inlets_and_outlets_are_its_lineage(airflow_events: list[dict[str, Any]],
                                                       served_with_key: tuple[Served, str]) -> None:
    served, key = served_with_key
    headers = {"Authorization": f"Bearer {key}"}
    with_datasets = [e for e in airflow_events if e["eventType"] == "COMPLETE" and (e.get("inputs") or e.get("outputs"))]
    assert [e["job"]["name"] for e in with_datasets] == ["shop_daily.export_revenue"]
    for event in with_datasets:
        job = f"job:{event['job']['namespace']}:{event['job']['name']}"
        answer = served.get(f"/api/v1/lineage?nodeId={quote(job, safe='')}&depth=1", headers=headers)
        assert answer.status_code == 200, answer.text
        node = next((n for n in answer.json()["graph"] if n["id"] == job), None)
        assert node is not None, (job, answer.json())
        assert {e["destination"] for e in node["outEdges"]} == {f"dataset:{o['namespace']}:{o['name']}"
                                                                for o in event["outputs"]}, node
        assert {e["origin"] for e in node["inEdges"]} == {f"dataset:{i['namespace']}:{i['name']}"
                                                          for i in event["inputs"]}, node
