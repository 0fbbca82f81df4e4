"""A table dropped and re-created under the same name: impalad's `tableCreateTime` says which
incarnation each query touched (extractors/hms/incarnations.py).

The tables really exist in the development metastore (created, dropped and re-created through the
Spark Thrift Server, standing in for Impala's DDL); their create times are the metastore's own,
read back with DESCRIBE FORMATTED, and the Impala log lines carry them as impalad does. Order: t
created, HMS run, an Impala insert into t, t dropped and re-created, HMS run (moves the first
insert's lineage to t's earlier incarnation), an Impala insert into the new t. Then: the default
lineage of src shows t through the second insert only; with deleted entities the earlier
incarnation `t~<create time>` shows, flagged, written by the first insert.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from pyhive import hive

from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr
from navd_devstack.spark_thrift import SparkThriftServer
from conftest import NavdRunner, write_navd_config
from test_temporary_tables_impala import COLUMNS, TYPES, ImpalaLog, _graph, hms_create_time


def test_impala_lineage_follows_the_incarnation_of_a_recreated_table(
        navd: NavdRunner, spark_thrift: SparkThriftServer, solr_server: EmbeddedSolr, index: SolrIndex,
        unique: str, tmp_path: Path) -> None:
    db = f"{unique}_inc"
    lineage_dir = tmp_path / "impala-lineage"
    lineage_dir.mkdir()
    log = ImpalaLog(lineage_dir, "etl")
    config = tmp_path / "navd.toml"
    write_navd_config(config, solr_server, f'[hive]\nhost = "127.0.0.1"\nport = {spark_thrift.port}\n'
                      f'database_regex = "{db}"\n[impala]\nlineage_dirs = ["{lineage_dir}"]\n',
                      cluster=unique, state=tmp_path / "state")
    env = {**os.environ, "NAVD_CONFIG": str(config)}

    def extract(source: str) -> str:
        result = navd("extract", source, *(["--once"] if source == "impala" else []), env=env)
        assert result.returncode == 0, f"extract {source}: {result.stderr[-2000:]}"
        assert '"level": "warning"' not in result.stderr, result.stderr[-3000:]
        return result.stdout + result.stderr

    src, t = f"{db}.src", f"{db}.t"
    same = {c: c for c in COLUMNS}
    insert = f"INSERT INTO {t} SELECT code, description, total_emp, salary FROM {src}"
    with hive.connect("127.0.0.1", spark_thrift.port, username="navd") as conn:
        cursor = conn.cursor()
        for statement in (f"CREATE DATABASE {db}", f"CREATE TABLE {src} ({TYPES}) USING parquet",
                          f"CREATE TABLE {t} ({TYPES}) USING parquet"):
            cursor.execute(statement)
        created = {src: hms_create_time(cursor, src), t: hms_create_time(cursor, t)}
        extract("hms")
        first = log.write(insert, t, [(src, same)], created=created)
        extract("impala")
        cursor.execute(f"DROP TABLE {t}")
        time.sleep(1.1)  # the metastore's create time has whole seconds: a later one for the new t
        cursor.execute(f"CREATE TABLE {t} ({TYPES}) USING parquet")
        old, new = created[t], hms_create_time(cursor, t)
        assert new > old
        out = extract("hms")  # sees t re-created: the first insert's lineage moves to t~<old>
        assert "relations moved to earlier incarnations" in out, out[-2000:]
        second = log.write(insert, t, [(src, same)], created={**created, t: new})
        extract("impala")

    n_src, n_t, n_old = f"{src}@{unique}", f"{t}@{unique}", f"{t}~{old}@{unique}"
    exec_1, exec_2 = (f"impala://{unique}/execution/{q}" for q in (first, second))

    # Operations with deleted entities: each insert wrote the incarnation it logged.
    nodes, edges = _graph(navd, env, n_src, "--direction", "downstream", "--operations", "--deleted")
    assert {(n_src, exec_1, "DATA_FLOW"), (exec_1, n_old, "DATA_FLOW"),
            (n_src, exec_2, "DATA_FLOW"), (exec_2, n_t, "DATA_FLOW")} <= edges, edges
    assert (exec_1, n_t, "DATA_FLOW") not in edges and (exec_2, n_old, "DATA_FLOW") not in edges
    assert nodes[n_old]["deleted"] is True and nodes[n_t]["deleted"] is False
    assert nodes[n_old]["type"] == "TABLE"

    # Default: the dropped incarnation is hidden; the current t is there through the second insert.
    nodes, edges = _graph(navd, env, n_src, "--direction", "downstream")
    assert (n_src, n_t, "DATA_FLOW") in edges and n_old not in nodes

    # The incarnation element: created at the old create time, pointing at the current name.
    shown = navd("entity", n_old, "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    element = json.loads(shown.stdout)
    properties = element.get("properties") or {}
    assert properties.get("incarnationOf") == n_t and properties.get("tableCreateTime") == str(old), element

    # A second HMS run finds nothing more to move (idempotent), and t's current lineage stays.
    out = extract("hms")
    assert "relations moved to earlier incarnations" not in out, out[-2000:]
    nodes, edges = _graph(navd, env, n_src, "--direction", "downstream", "--operations", "--deleted")
    assert {(exec_1, n_old, "DATA_FLOW"), (exec_2, n_t, "DATA_FLOW")} <= edges, edges
