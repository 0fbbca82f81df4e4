"""Sensitivity end to end on real services: a Hive table whose column is tagged by a
table property (`sensitivity.ssn = pii`) and by `navd tag`, feeding a PySpark application over
the same metastore with two jobs (a join and an aggregate); the HMS and Spark extractors, the
linker and the sensitivity pass; the level of every downstream column asserted exactly, its
re-application after an extractor rewrote the documents, its withdrawal, the API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from pyhive import hive

from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr, free_port
from navd_devstack.hadoop import DevHdfs
from navd_devstack.metastore import HiveMetastore
from navd_devstack.spark_thrift import SparkThriftServer
from conftest import NavdRunner, serving, write_navd_config


def _pyspark(body: str, metastore: HiveMetastore, hdfs: DevHdfs, events: Path) -> None:
    """A PySpark application on the session metastore (as the Thrift Server), its event log in `events`."""
    events.mkdir(parents=True, exist_ok=True)
    script = textwrap.dedent(f"""
        from pyspark.sql import SparkSession, functions as F
        spark = (SparkSession.builder.master("local[1]").appName("sensitivity_jobs")
                 .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
                 .config("spark.driver.bindAddress", "127.0.0.1").config("spark.sql.shuffle.partitions", "2")
                 .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", {events.as_uri()!r})
                 .config("spark.hadoop.hive.metastore.uris", {metastore.uri!r})
                 .config("spark.sql.warehouse.dir", {metastore.warehouse!r})
                 .enableHiveSupport().getOrCreate())
    """) + textwrap.dedent(body) + "\nspark.stop()\n"
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "HADOOP_USER_NAME": hdfs.superuser}
    ran = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900,
                         check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]


class Pipeline:
    def __init__(self, navd: NavdRunner, env: dict[str, str], index: SolrIndex, db: str, cluster: str,
                 thrift_port: int) -> None:
        self.navd, self.env, self.index, self.db, self.cluster = navd, env, index, db, cluster
        self.thrift_port = thrift_port

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        result = self.navd(*args, env=self.env)
        assert result.returncode == 0, f"navd {' '.join(args)}: {result.stderr[-2000:]}"
        return result

    def extract(self, *sources: str) -> None:
        for source in sources:
            self.run("extract", source, *(["--once"] if source == "spark" else []))

    def sql(self, *statements: str) -> None:
        with hive.connect("127.0.0.1", self.thrift_port, username="navd") as conn:
            cursor = conn.cursor()
            for statement in statements:
                cursor.execute(statement)

    def levels(self) -> dict[str, str | None]:
        """Every column and table of the database (not deleted) and its level."""
        self.index.commit("elements", soft=True)
        docs = self.index.scan("elements", f'qualifiedName:{self.db}.*@{self.cluster} AND type:(FIELD OR TABLE)',
                               fl="qualifiedName,sensitivity,deleted")
        return {d["qualifiedName"].removesuffix(f"@{self.cluster}").removeprefix(f"{self.db}."): d.get("sensitivity")
                for d in docs if not d.get("deleted")}


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory, spark_thrift: SparkThriftServer,
             hive_metastore: HiveMetastore, hdfs: DevHdfs, solr_server: EmbeddedSolr,
             index: SolrIndex) -> Iterator[Pipeline]:
    tmp = tmp_path_factory.mktemp("sensitivity")
    cluster = f"sens{os.getpid()}"
    db = f"{cluster}_db"
    events = tmp / "events"
    config = tmp / "navd.toml"
    write_navd_config(config, solr_server, cluster=cluster, state=tmp / "state", body=
                      f'[hive]\nhost = "127.0.0.1"\nport = {spark_thrift.port}\ndatabase_regex = "{db}"\n'
                      f'[spark]\nevent_log_dirs = ["{events}"]\nstate_dir = "{tmp / "spark-state"}"\n'
                      f'[sensitivity]\nenabled = true\n')
    env = {**os.environ, "NAVD_CONFIG": str(config)}
    executable = str(Path(sys.executable).parent / "navd")

    def navd(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([executable, *args], env=env, capture_output=True, text=True, timeout=600, check=False)

    p = Pipeline(navd, env, index, db, cluster, spark_thrift.port)
    p.sql(f"CREATE DATABASE {db}",
          f"CREATE TABLE {db}.people (id INT, name STRING, ssn STRING, city STRING) USING parquet "
          f"TBLPROPERTIES ('sensitivity.ssn' = 'pii')",
          f"CREATE TABLE {db}.orders (id INT, person_id INT, amount INT) USING parquet",
          f"CREATE TABLE {db}.cities (city STRING, country STRING) USING parquet",
          f"INSERT INTO {db}.people VALUES (1, 'ann', '111', 'oslo'), (2, 'bob', '222', 'rome')",
          f"INSERT INTO {db}.orders VALUES (10, 1, 5), (11, 2, 7)",
          f"INSERT INTO {db}.cities VALUES ('oslo', 'no'), ('rome', 'it')")
    _pyspark(f"""
        # the join: people x orders
        spark.sql('''CREATE TABLE {db}.customer_orders USING parquet AS
                     SELECT o.id AS order_id, p.name AS customer, p.ssn AS customer_ssn, o.amount
                     FROM {db}.people p JOIN {db}.orders o ON p.id = o.person_id''')
        # the aggregate: people by city
        (spark.table("{db}.people").groupBy("city").agg(F.countDistinct("ssn").alias("people"),
                                                        F.max("name").alias("last_name"))
         .write.format("parquet").saveAsTable("{db}.people_by_city"))
    """, hive_metastore, hdfs, events)
    p.extract("hms", "spark")  # each extraction ends with a link pass
    yield p


def test_levels_flow_downstream_exactly(pipeline: Pipeline) -> None:
    pipeline.run("extract", "sensitivity")  # the Hive property: ssn is pii
    tagged = json.loads(pipeline.run("tag", f"{pipeline.db}.people.name", "--sensitivity", "confidential",
                                     "--format", "json").stdout)
    assert tagged["tag"] == "confidential" and tagged["columnsChanged"] >= 3, tagged
    expected: dict[str, str | None] = {
        "people": "pii", "people.id": None, "people.name": "confidential", "people.ssn": "pii", "people.city": None,
        "orders": None, "orders.id": None, "orders.person_id": None, "orders.amount": None,
        "cities": None, "cities.city": None, "cities.country": None,
        # the join: the copied columns carry their level; the join keys (CONTROL_FLOW) do not
        "customer_orders": "pii", "customer_orders.order_id": None, "customer_orders.customer": "confidential",
        "customer_orders.customer_ssn": "pii", "customer_orders.amount": None,
        # the aggregate: a count of ssn is derived from ssn; the grouping key is not
        "people_by_city": "pii", "people_by_city.city": None, "people_by_city.people": "pii",
        "people_by_city.last_name": "confidential",
    }
    assert pipeline.levels() == expected

    found = json.loads(pipeline.run("search", "sensitivity:pii AND type:FIELD", "--json").stdout)
    names = {d["qualifiedName"] for d in found["docs"] if d["qualifiedName"].endswith(f"@{pipeline.cluster}")}
    assert names == {f"{pipeline.db}.{c}@{pipeline.cluster}" for c in
                     ("people.ssn", "customer_orders.customer_ssn", "people_by_city.people")}

    explained = json.loads(pipeline.run("tag", "--explain", f"{pipeline.db}.people_by_city.people",
                                        "--format", "json").stdout)
    assert explained["sensitivity"] == "pii"
    assert [s["qualifiedName"] for s in explained["path"]] == [
        f"{pipeline.db}.people.ssn@{pipeline.cluster}", f"{pipeline.db}.people_by_city.people@{pipeline.cluster}"]
    assert explained["path"][0]["tags"][0]["source"] == "hive"
    text = pipeline.run("tag", "--explain", f"{pipeline.db}.customer_orders.customer").stdout
    assert "confidential" in text and "tagged confidential by user" in text, text

    # An extractor rewrites the documents whole (the levels gone); the pass puts them back.
    pipeline.run("extract", "hms", "--full")
    assert pipeline.levels()["customer_orders.customer_ssn"] is None
    pipeline.run("extract", "sensitivity")
    assert pipeline.levels() == expected


def test_withdrawal_keeps_what_another_source_gives(pipeline: Pipeline) -> None:
    db = pipeline.db
    pipeline.run("tag", f"{db}.people.ssn", "--sensitivity", "pii")  # the user says so too
    pipeline.sql(f"ALTER TABLE {db}.people UNSET TBLPROPERTIES ('sensitivity.ssn')")
    pipeline.extract("hms")
    pipeline.run("extract", "sensitivity")  # the Hive tag is gone; the user's stays
    levels = pipeline.levels()
    assert levels["people.ssn"] == levels["customer_orders.customer_ssn"] == levels["people_by_city.people"] == "pii"

    pipeline.run("tag", f"{db}.people.ssn", "--clear")
    levels = pipeline.levels()
    assert {k: v for k, v in levels.items() if v} == {
        "people": "confidential", "people.name": "confidential", "customer_orders": "confidential",
        "customer_orders.customer": "confidential", "people_by_city": "confidential",
        "people_by_city.last_name": "confidential"}

    # a lower tag than before withdraws the higher one downstream
    pipeline.run("tag", f"{db}.people.name", "--sensitivity", "internal")
    assert pipeline.levels()["people_by_city.last_name"] == "internal"
    pipeline.run("tag", f"{db}.people.name", "--clear")
    assert {k: v for k, v in pipeline.levels().items() if v} == {}


def test_the_api_tags_clears_and_explains(pipeline: Pipeline, solr_server: EmbeddedSolr,
                                          tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "navd.toml"
    config.write_text(Path(pipeline.env["NAVD_CONFIG"]).read_text() + f"[server]\nport = {port}\n")
    config.chmod(0o600)
    url = f"http://127.0.0.1:{port}"
    with serving(config, url):
        column = f"{pipeline.db}.orders.amount"
        answer = requests.put(f"{url}/api/sensitivity/tags", json={"entity": column, "level": "internal"}, timeout=60)
        assert answer.status_code == 200, answer.text
        assert answer.json()["tag"] == "internal"
        assert pipeline.levels()["customer_orders.amount"] == "internal"
        found = requests.get(f"{url}/api/entities", params={"query": "sensitivity:internal AND type:FIELD"},
                             timeout=60).json()
        assert {d["originalName"] for d in found["docs"]} >= {"amount"}
        explained = requests.get(f"{url}/api/sensitivity/explain",
                                 params={"column": f"{pipeline.db}.customer_orders.amount"}, timeout=60).json()
        assert [s["qualifiedName"].split("@")[0] for s in explained["path"]] == [
            f"{pipeline.db}.orders.amount", f"{pipeline.db}.customer_orders.amount"]
        bad = requests.put(f"{url}/api/sensitivity/tags", json={"entity": column, "level": "secret"}, timeout=60)
        assert bad.status_code == 400 and bad.json()["parameter"] == "level", bad.text
        cleared = requests.delete(f"{url}/api/sensitivity/tags", params={"entity": column}, timeout=60)
        assert cleared.status_code == 200 and cleared.json()["tag"] is None
        assert pipeline.levels()["customer_orders.amount"] is None
        paths = requests.get(f"{url}/openapi.json", timeout=60).json()["paths"]
        assert {"/api/sensitivity/tags", "/api/sensitivity/explain"} <= set(paths)
        assert paths["/api/sensitivity/tags"]["put"]["summary"].startswith("Tag a table or column")
