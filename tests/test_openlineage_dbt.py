"""dbt-ol as dbt users run it: a dbt project of this suite's own (seeds, a CTE, a join, an aggregate
and a CASE) on DuckDB, run by the real `dbt-ol` (openlineage-dbt over dbt-core and dbt-duckdb,
installed from PyPI into the emitters' venv by `make setup-test`) against a real `navd serve`,
authenticated with an API key as openlineage-python's `auth.type = api_key` sends it. The same
events go to a file (openlineage-python's composite transport, the file first), and navd's
Marquez reads are checked edge for edge against what dbt-ol sent."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml

from conftest import (EMITTERS_BIN, Served, emitted_events, emitter_command, serve_intake_with_api_key,
                      write_emitter_transport)
from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr

#: a bound on one dbt command (a hang fails the test instead of CI's clock), not a measurement
DBT_SECONDS = 600

MODELS = {
    # a CTE and a join: each output column from one input column, no transformation named by dbt-ol
    "paid_orders.sql": """
with paid as (
    select id, customer_id, amount from {{ ref('orders') }} where status = 'paid'
)
select paid.id as order_id, customers.region, paid.amount
from paid join {{ ref('customers') }} as customers on paid.customer_id = customers.id
""",
    # an aggregate and a CASE over it
    "revenue_by_region.sql": """
select region, sum(amount) as revenue,
       case when sum(amount) > 10 then 'big' else 'small' end as size_class
from {{ ref('paid_orders') }}
group by region
""",
}
SEEDS = {
    "orders.csv": "id,customer_id,amount,status\n1,1,10.5,paid\n2,1,3.0,refunded\n3,2,7.25,paid\n",
    "customers.csv": "id,name,region\n1,Ann,EU\n2,Bo,US\n",
}


def dbt_project(directory: Path) -> Path:
    (directory / "models").mkdir(parents=True)
    (directory / "seeds").mkdir()
    (directory / "dbt_project.yml").write_text(yaml.safe_dump(
        {"name": "shop", "version": "1.0", "profile": "shop", "seeds": {"shop": {"+schema": "raw"}}}))
    (directory / "profiles.yml").write_text(yaml.safe_dump({"shop": {"target": "dev", "outputs": {"dev": {
        "type": "duckdb", "path": str(directory / "shop.duckdb"), "threads": 1}}}}))
    for name, text in MODELS.items():
        (directory / "models" / name).write_text(text)
    for name, text in SEEDS.items():
        (directory / "seeds" / name).write_text(text)
    return directory


@pytest.fixture(scope="module")
def served_with_key(tmp_path_factory: pytest.TempPathFactory, solr_server: EmbeddedSolr,
                    index: SolrIndex) -> Iterator[tuple[Served, str]]:
    with serve_intake_with_api_key(tmp_path_factory.mktemp("dbt-navd"), solr_server, "dbt") as served:
        yield served


@pytest.fixture(scope="module")
def dbt_events(tmp_path_factory: pytest.TempPathFactory, served_with_key: tuple[Served, str],
               index: SolrIndex) -> list[dict[str, Any]]:
    """`dbt-ol seed` and `dbt-ol run` of the project; the events they sent, as the file transport
    wrote them."""
    dbt_ol = emitter_command("dbt-ol")
    served, key = served_with_key
    project = dbt_project(tmp_path_factory.mktemp("dbt") / "shop")
    events_file = project / "events.jsonl"
    write_emitter_transport(project / "openlineage.yml", events_file, served.url, key)
    env = {**os.environ, "PATH": f"{EMITTERS_BIN}{os.pathsep}{os.environ['PATH']}",
           "OPENLINEAGE_CONFIG": str(project / "openlineage.yml"), "DBT_PROFILES_DIR": str(project),
           "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "OPENLINEAGE_NAMESPACE": "dbt"}
    for command in ("seed", "run"):
        done = subprocess.run([str(dbt_ol), command, "--project-dir", str(project)], env=env, cwd=project,
                              capture_output=True, text=True, timeout=DBT_SECONDS, check=False)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert "Failed to emit" not in done.stderr + done.stdout, done.stderr[-3000:]
    for core in ("elements", "relations"):  # what the intake acknowledged, searchable now
        index.commit(core, soft=True)
    return emitted_events(events_file)


def column_edges_sent(events: list[dict[str, Any]]) -> dict[tuple[str, str], set[tuple[str, str, str]]]:
    """(namespace, output dataset) -> {(input dataset, input field, output field)} from the
    columnLineage facets dbt-ol sent."""
    edges: dict[tuple[str, str], set[tuple[str, str, str]]] = {}
    for event in events:
        for output in event.get("outputs", []):
            fields = output.get("facets", {}).get("columnLineage", {}).get("fields", {})
            for column, lineage in fields.items():
                for source in lineage.get("inputFields", []):
                    edges.setdefault((output["namespace"], output["name"]), set()).add(
                        (source["name"], source["field"], column))
    return edges


def test_dbt_ol_events_are_taken_with_an_api_key(dbt_events: list[dict[str, Any]]) -> None:
    assert {e["job"]["name"] for e in dbt_events} >= {"shop.main.shop.paid_orders", "shop.main.shop.revenue_by_region"}
    assert column_edges_sent(dbt_events), "dbt-ol sent no column lineage: nothing to compare"


def test_navd_column_lineage_is_dbt_ols_edge_for_edge(dbt_events: list[dict[str, Any]],
                                                     served_with_key: tuple[Served, str]) -> None:
    served, key = served_with_key
    headers = {"Authorization": f"Bearer {key}"}
    for (namespace, dataset), sent in sorted(column_edges_sent(dbt_events).items()):
        answer = served.get(f"/api/v1/column-lineage?nodeId={quote(f'dataset:{namespace}:{dataset}', safe='')}&depth=1",
                            headers=headers)
        assert answer.status_code == 200, answer.text
        nodes = {node["id"]: node["data"] for node in answer.json()["graph"]}
        shown = set()
        for node in answer.json()["graph"]:
            data = node["data"]
            if data["dataset"] != dataset:
                continue
            for edge in node["inEdges"]:
                source = nodes[edge["destination"]]
                shown.add((source["dataset"], source["field"], data["field"]))
            # dbt-ol names no transformation for these columns (an empty list): navd claims no kind
            # of its own either (no IDENTITY, no TRANSFORMATION), only that the input is direct
            assert [(i["transformationType"], i["transformationSubtype"]) for i in data["inputFields"]] == [
                ("DIRECT", None)] * len(data["inputFields"]), data
        assert shown == sent, (dataset, sorted(shown ^ sent))


def test_navd_dataset_lineage_is_dbt_ols_inputs_and_outputs(dbt_events: list[dict[str, Any]],
                                                            served_with_key: tuple[Served, str]) -> None:
    served, key = served_with_key
    headers = {"Authorization": f"Bearer {key}"}
    for event in dbt_events:
        if event["eventType"] != "COMPLETE" or not event.get("outputs"):
            continue
        job = f"job:{event['job']['namespace']}:{event['job']['name']}"
        answer = served.get(f"/api/v1/lineage?nodeId={quote(job, safe='')}&depth=1", headers=headers)
        assert answer.status_code == 200, answer.text
        node = next((n for n in answer.json()["graph"] if n["id"] == job), None)
        assert node is not None, (job, answer.json())
        assert ({e["destination"] for e in node["outEdges"]}
                == {f"dataset:{o['namespace']}:{o['name']}" for o in event["outputs"]}), node
        assert ({e["origin"] for e in node["inEdges"]}
                == {f"dataset:{i['namespace']}:{i['name']}" for i in event.get("inputs", [])}), node


def test_navd_keeps_the_sql_dbt_ol_sent(dbt_events: list[dict[str, Any]], served_with_key: tuple[Served, str]) -> None:
    served, key = served_with_key
    headers = {"Authorization": f"Bearer {key}"}
    for event in dbt_events:
        sql = event["job"].get("facets", {}).get("sql", {}).get("query")
        if event["eventType"] != "COMPLETE" or not sql:
            continue
        namespace, name = event["job"]["namespace"], event["job"]["name"]
        answer = served.get(f"/api/v1/namespaces/{quote(namespace, safe='')}/jobs/{quote(name, safe='')}", headers=headers)
        assert answer.status_code == 200, answer.text
        assert sql.strip() in json.dumps(answer.json()["facets"].get("sql", {}).get("query", "")) or \
            answer.json()["facets"].get("sql", {}).get("query", "").strip() == sql.strip(), answer.json()["facets"]

