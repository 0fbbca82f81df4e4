"""Lineage across temporary tables, end to end through the real Thrift Server.

temp_sample_07 is extracted by the HMS extractor and dropped after; temp_sample_08 is created,
used and dropped between two HMS extractions, so only the Thrift Server's Spark event log knows
it. navd does better than Navigator: both are elements flagged deleted, the default lineage of
sample_merge keeps the connection through them (sample_07 AND sample_08 upstream), `--deleted`
shows them, the query text finds the operations, and an input no extractor ever saw (a CSV read
by path) stays an unlinked relation shown only with `--operations`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hdfs import Client
from pyhive import hive

from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr
from navd_devstack.hadoop import DevHdfs
from navd_devstack.spark_thrift import SparkThriftServer
from conftest import write_navd_config

COLUMNS = "code STRING, description STRING, total_emp INT, salary INT"


def _graph(navd, env: dict[str, str], *flags: str) -> tuple[dict[str, dict[str, Any]], set[tuple[str, str, str]]]:  # type: ignore[no-untyped-def]
    result = navd("lineage", *flags, "--format", "json", env=env)
    assert result.returncode == 0, result.stderr
    graph = json.loads(result.stdout)
    nodes = {node["qualifiedName"]: node for node in graph["nodes"]}
    names = {node["id"]: node["qualifiedName"] for node in graph["nodes"]}
    return nodes, {(names[e["source"]], names[e["target"]], e["type"]) for e in graph["edges"]}


def test_lineage_across_temporary_tables(navd, hdfs: DevHdfs, hdfs_client: Client,  # type: ignore[no-untyped-def]
                                         spark_thrift: SparkThriftServer, solr_server: EmbeddedSolr,
                                         index: SolrIndex, unique: str, tmp_path: Path) -> None:
    db = f"{unique}_tmp"
    landing = f"/{unique}/landing/codes.csv"  # read by path; no extractor is pointed at it
    hdfs_client.write(landing, data="c9,extra,1,99\n", overwrite=True)
    config = tmp_path / "navd.toml"
    write_navd_config(config, solr_server, body=
                      f'[cluster]\nname = "{unique}"\ndefault_fs = "{hdfs.default_fs}"\n'
                      f'[hdfs]\nurls = ["{hdfs.webhdfs_url}"]\n'
                      f'[hive]\nhost = "127.0.0.1"\nport = {spark_thrift.port}\ndatabase_regex = "{db}"\n'
                      f'[spark]\nevent_log_dirs = ["{spark_thrift.event_log_dir}"]\n'
                      f'state_dir = "{tmp_path / "spark-state"}"\n')
    env = {**os.environ, "NAVD_CONFIG": str(config)}

    def extract(*sources: str) -> None:
        for source in sources:
            result = navd("extract", source, *(["--once"] if source == "spark" else []), env=env)
            assert result.returncode == 0, f"extract {source}: {result.stderr[-2000:]}"
            if source == "spark":  # every event the Thrift Server logs is understood
                warned = [line for line in result.stderr.splitlines() if '"level": "warning"' in line]
                # the DROP of temp_sample_07, which the HMS extractor indexed, is left to it at
                # info level (docs/sources/spark.md, "Trust model of event-log directories")
                assert warned == [], result.stderr[-3000:]

    with hive.connect("127.0.0.1", spark_thrift.port, username="navd") as conn:
        cursor = conn.cursor()
        for statement in (
                f"CREATE DATABASE {db}",
                f"CREATE TABLE {db}.sample_07 ({COLUMNS}) USING parquet",
                f"CREATE TABLE {db}.sample_08 ({COLUMNS}) USING parquet",
                f"INSERT INTO {db}.sample_07 VALUES ('c1', 'cooks', 10, 30000), ('c2', 'pilots', 5, 90000)",
                f"INSERT INTO {db}.sample_08 VALUES ('c1', 'cooks', 12, 31000), ('c3', 'nurses', 7, 60000)",
                f"CREATE TABLE {db}.sample_merge ({COLUMNS}) USING parquet",
                f"CREATE TABLE {db}.temp_sample_07 USING parquet AS "
                f"SELECT code, description, total_emp, salary FROM {db}.sample_07 WHERE salary > 20000"):
            cursor.execute(statement)
        extract("spark", "hms")  # the first metadata extraction: temp_sample_07 exists
        for statement in (
                f"CREATE TABLE {db}.temp_sample_08 USING parquet AS "
                f"SELECT code, description, total_emp, salary FROM {db}.sample_08 WHERE salary > 20000",
                f"INSERT INTO {db}.sample_merge SELECT * FROM {db}.temp_sample_07 "
                f"UNION ALL SELECT * FROM {db}.temp_sample_08",
                f"INSERT INTO {db}.sample_merge SELECT _c0, _c1, CAST(_c2 AS INT), CAST(_c3 AS INT) "
                f"FROM csv.`{hdfs.default_fs}{landing}`",
                f"DROP TABLE {db}.temp_sample_08",
                f"DROP TABLE {db}.temp_sample_07"):
            cursor.execute(statement)
    extract("spark", "hms")  # the second: both temporaries are gone; every extract ends with a link pass

    merge = f"{db}.sample_merge@{unique}"
    temp_07, temp_08 = f"{db}.temp_sample_07@{unique}", f"{db}.temp_sample_08@{unique}"
    sample_07, sample_08 = f"{db}.sample_07@{unique}", f"{db}.sample_08@{unique}"

    # Default: deleted temporaries hidden, the connection through them kept; the unseen CSV hidden.
    nodes, edges = _graph(navd, env, merge, "--direction", "upstream")
    assert {(sample_07, merge, "DATA_FLOW"), (sample_08, merge, "DATA_FLOW")} <= edges
    assert temp_07 not in nodes and temp_08 not in nodes
    assert not any(name.endswith("codes.csv") for name in nodes), nodes

    # --deleted: both temporaries, flagged, in the chain sample_0x -> temp_sample_0x -> sample_merge.
    nodes, edges = _graph(navd, env, merge, "--direction", "upstream", "--deleted")
    assert nodes[temp_07]["deleted"] is True and nodes[temp_08]["deleted"] is True
    assert nodes[sample_07]["deleted"] is False and nodes[merge]["deleted"] is False
    assert {(sample_07, temp_07, "DATA_FLOW"), (temp_07, merge, "DATA_FLOW"),
            (sample_08, temp_08, "DATA_FLOW"), (temp_08, merge, "DATA_FLOW")} <= edges

    # The temporaries' columns went with them.
    columns = list(index.scan("elements", f'qualifiedName:"{db}.temp_sample_08.salary@{unique}"', fl="identity,deleted"))
    assert [doc.get("deleted") for doc in columns] == [True]

    # Navigator's search on the query text finds what created, read and dropped temp_sample_08.
    found = navd("search", "queryText:*temp_sample_08*", "--json", env=env)
    assert found.returncode == 0, found.stderr
    texts = {d.get("queryText", "") for d in json.loads(found.stdout)["docs"]}
    assert any(t.startswith(f"CREATE TABLE {db}.temp_sample_08") for t in texts), texts
    assert any(t.startswith(f"INSERT INTO {db}.sample_merge SELECT * FROM {db}.temp_sample_07") for t in texts)
    assert f"DROP TABLE {db}.temp_sample_08" in texts

    # --operations: the input no extractor saw is the insert's unresolved (unlinked) input.
    nodes, edges = _graph(navd, env, merge, "--direction", "upstream", "--operations")
    [csv] = [node for name, node in nodes.items() if name.endswith(f"{landing}")]
    assert csv.get("unlinked") is True
    [(_, insert, _)] = [e for e in edges if e[0] == csv["qualifiedName"]]
    assert nodes[insert]["type"] == "OPERATION_EXECUTION" and (insert, merge, "DATA_FLOW") in edges
    # Every data flow from it is still unlinked (CSV schema inference adds read-only executions).
    from_csv = list(index.scan("relations", f'endpoint1QualifiedName:"{csv["qualifiedName"]}" AND type:DATA_FLOW',
                               fl="identity,unlinked,endpoint2Id"))
    assert from_csv and all(r["unlinked"] for r in from_csv)
    assert nodes[insert]["id"] in {r["endpoint2Id"] for r in from_csv}
    # Its columns (`<path>#<column>`, a path's columns) hang under it, stubs like it, as a
    # table's columns do under a table only a Spark job named.
    columns = list(index.scan("relations", f'endpoint1QualifiedName:"{csv["qualifiedName"]}" AND type:PARENT_CHILD',
                              fl="endpoint2QualifiedName,endpoint2Type"))
    assert columns and all(c["endpoint2QualifiedName"].startswith(csv["qualifiedName"] + "#") and
                           c["endpoint2Type"] == "FIELD" for c in columns)
