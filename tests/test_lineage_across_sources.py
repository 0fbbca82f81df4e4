"""Lineage across sources, end to end on real services: a Spark job reads a Hive
table's files by path; the HMS, HDFS and Spark extractors and the linker join the picture, and
`navd lineage` of the job's output finds the table upstream through its LOGICAL_PHYSICAL link."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

from pyhive import hive

from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr
from navd_devstack.hadoop import DevHdfs
from navd_devstack.spark_thrift import SparkThriftServer
from conftest import write_navd_config


def run_job(app_name: str, body: str, hdfs: DevHdfs | None, tmp_path: Path,
            conf: Mapping[str, str] | None = None) -> Path:
    """Run a PySpark job (`spark` in scope), as the HDFS superuser when it uses the dev HDFS;
    returns its event log dir. `conf`: Spark settings besides the ones every job gets."""
    events = tmp_path / "events"
    events.mkdir()
    extra = "".join(f".config({key!r}, {value!r})" for key, value in (conf or {}).items())
    job = textwrap.dedent(f"""
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[1]").appName({app_name!r})
                 .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
                 .config("spark.driver.bindAddress", "127.0.0.1").config("spark.eventLog.enabled", "true")
                 .config("spark.eventLog.dir", {events.as_uri()!r}){extra}.getOrCreate())
    """) + textwrap.dedent(body) + "spark.stop()\n"
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1",
           **({"HADOOP_USER_NAME": hdfs.superuser} if hdfs is not None else {})}
    ran = subprocess.run([sys.executable, "-c", job], env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    return events


def test_a_table_read_by_path_is_upstream_of_the_jobs_output(navd, hdfs: DevHdfs,  # type: ignore[no-untyped-def]
                                                              spark_thrift: SparkThriftServer,
                                                              solr_server: EmbeddedSolr, index: SolrIndex,
                                                              unique: str, tmp_path: Path) -> None:
    database = f"{unique}_sales"
    with hive.connect("127.0.0.1", spark_thrift.port, username="navd") as conn:
        cursor = conn.cursor()
        cursor.execute(f"CREATE DATABASE {database}")
        cursor.execute(f"CREATE TABLE {database}.orders (id INT, amount INT) USING parquet")
        cursor.execute(f"INSERT INTO {database}.orders VALUES (1, 10), (2, 20)")
    table_dir = f"{hdfs.default_fs}/user/hive/warehouse/{database}.db/orders"
    output = f"{hdfs.default_fs}/{unique}/out/order_total"
    events = run_job("orders_by_path", f"""
        spark.read.parquet({table_dir!r}).groupBy().sum("amount").write.parquet({output!r})
    """, hdfs, tmp_path)

    config = tmp_path / "navd.toml"
    write_navd_config(config, solr_server, cluster=unique, default_fs=hdfs.default_fs, body=
                      f'[hdfs]\nurls = ["{hdfs.webhdfs_url}"]\n'
                      f'user = "{hdfs.superuser}"\n'
                      f'roots = ["/user/hive/warehouse/{database}.db", "/{unique}"]\n'
                      f'[hive]\nhost = "127.0.0.1"\nport = {spark_thrift.port}\ndatabase_regex = "{database}"\n'
                      f'[spark]\nevent_log_dirs = ["{events}"]\nstate_dir = "{tmp_path / "spark-state"}"\n')
    navd_env = {**os.environ, "NAVD_CONFIG": str(config)}
    for command in (("extract", "spark", "--once"), ("extract", "hms"), ("extract", "hdfs"), ("link",)):
        result = navd(*command, env=navd_env)
        assert result.returncode == 0, f"{command}: {result.stderr[-2000:]}"
    lineage = navd("lineage", output, "--direction", "upstream", "--format", "json", env=navd_env)
    assert lineage.returncode == 0, lineage.stderr
    graph = json.loads(lineage.stdout)
    names = {node["id"]: node["qualifiedName"] for node in graph["nodes"]}
    edges = {(names[e["source"]], names[e["target"]], e["type"]) for e in graph["edges"]}
    table = f"{database}.orders@{unique}"
    assert (table_dir, output, "DATA_FLOW") in edges
    assert (table, table_dir, "LOGICAL_PHYSICAL") in edges


def test_a_path_written_by_spark_links_to_the_directory_of_a_later_external_table(  # type: ignore[no-untyped-def]
        navd, hdfs: DevHdfs, hdfs_client, spark_thrift: SparkThriftServer, solr_server: EmbeddedSolr,
        index: SolrIndex, unique: str, tmp_path: Path) -> None:
    """A PySpark job writes a path; an external table is created on it afterwards. The job's
    DATA_FLOW into the path and the table's LOGICAL_PHYSICAL are linked to the same HDFS directory
    element, so lineage from the directory shows both the job's input and the table."""
    database = f"{unique}_ext"
    source = f"/{unique}/landing/events.csv"
    hdfs_client.write(source, data="1,click\n2,view\n", overwrite=True)
    written = f"{hdfs.default_fs}/{unique}/curated/events"
    events = run_job("curate_events", f"""
        (spark.read.csv({hdfs.default_fs + source!r}).toDF("id", "kind")
              .selectExpr("cast(id as int) as id", "kind").write.parquet({written + "/"!r}))
    """, hdfs, tmp_path)
    with hive.connect("127.0.0.1", spark_thrift.port, username="navd") as conn:
        cursor = conn.cursor()
        cursor.execute(f"CREATE DATABASE {database}")
        cursor.execute(f"CREATE TABLE {database}.Events USING parquet LOCATION '{written}'")

    config = tmp_path / "navd.toml"
    write_navd_config(config, solr_server, cluster=unique, default_fs=hdfs.default_fs, body=
                      f'[hdfs]\nurls = ["{hdfs.webhdfs_url}"]\n'
                      f'user = "{hdfs.superuser}"\nroots = ["/{unique}"]\n'
                      f'[hive]\nhost = "127.0.0.1"\nport = {spark_thrift.port}\ndatabase_regex = "{database}"\n'
                      f'[spark]\nevent_log_dirs = ["{events}"]\nstate_dir = "{tmp_path / "spark-state"}"\n')
    navd_env = {**os.environ, "NAVD_CONFIG": str(config)}
    for command in (("extract", "spark", "--once"), ("extract", "hms"), ("extract", "hdfs")):
        result = navd(*command, env=navd_env)
        assert result.returncode == 0, f"{command}: {result.stderr[-2000:]}"

    index.commit("relations")
    directory = next(index.scan("elements", f'qualifiedName:"{written}"', fl="identity,type"))
    assert directory["type"] == "DIRECTORY"
    into = list(index.scan("relations", f'endpoint2Id:{directory["identity"]} AND -type:PARENT_CHILD',
                           fl="identity,type,unlinked,endpoint1Type"))
    assert {(r["type"], r["endpoint1Type"], r["unlinked"]) for r in into} == {
        ("DATA_FLOW", "OPERATION_EXECUTION", False), ("LOGICAL_PHYSICAL", "TABLE", False)}
    lineage = navd("lineage", written, "--format", "json", env=navd_env)
    assert lineage.returncode == 0, lineage.stderr
    graph = json.loads(lineage.stdout)
    names = {node["id"]: node["qualifiedName"] for node in graph["nodes"]}
    edges = {(names[e["source"]], names[e["target"]], e["type"]) for e in graph["edges"]}
    assert (f"{hdfs.default_fs}{source}", written, "DATA_FLOW") in edges
    assert (f"{database}.events@{unique}", written, "LOGICAL_PHYSICAL") in edges
