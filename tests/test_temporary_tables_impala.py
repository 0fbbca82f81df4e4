"""Lineage across temporary tables as Cloudera's Hue users meet it: Impala queries (run in Hue)
whose lineage reaches navd through impalad's lineage event log, and two HMS extractions.

The tables really exist in the development metastore (created and dropped through the Spark
Thrift Server, which stands in for Impala's DDL); the lineage comes only from the Impala log
lines this test writes in impalad's format (one compact object per line, as
be/src/util/lineage-util.h writes it; the graphs as lineage.test shows them for such queries).
temp_sample_07 is captured by the first HMS run and dropped after it; temp_sample_08 is created
and dropped between the two runs, so only the Impala log names it. Then: the default lineage of
sample_merge is sample_07 and sample_08; with deleted entities temp_sample_07 shows (flagged);
with operations the insert from temp_sample_08 shows; `queryText:*temp_sample_08*` finds it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from pyhive import hive

from navd.extractors.hms.records import parse_time
from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr
from navd_devstack.spark_thrift import SparkThriftServer
from conftest import NavdRunner, write_navd_config

COLUMNS = ("code", "description", "total_emp", "salary")
TYPES = "code STRING, description STRING, total_emp INT, salary INT"


class ImpalaLog:
    """impalad's lineage log directory: one file, a line per query."""

    def __init__(self, directory: Path, user: str) -> None:
        self.path = directory / "impala_lineage_log_1.0-1700000000000"
        self.user = user
        self.queries = 0

    def write(self, query: str, target: str, sources: list[tuple[str, dict[str, str]]], *,
              predicate: tuple[tuple[str, str], ...] = (), created: dict[str, int]) -> str:
        """A CTAS or INSERT ... SELECT of `COLUMNS` into `target` from each (table, column map)
        (a UNION ALL of several), with PREDICATE edges from `predicate` (table, column)."""
        self.queries += 1
        vertices: list[dict[str, Any]] = []
        ids: dict[str, int] = {}

        def vertex(table: str, column: str) -> int:
            # a CTAS/INSERT target column is named by its table's metadata, as impalad does
            label = column if table == target else f"{table}.{column}"
            if label not in ids:
                ids[label] = len(vertices)
                vertices.append({"id": ids[label], "vertexType": "COLUMN", "vertexId": label,
                                 "metadata": {"tableName": table, "tableType": "hive",
                                              "tableCreateTime": created.get(table, -1)}})
            return ids[label]

        targets = [vertex(target, c) for c in COLUMNS]
        edges = [{"sources": sorted(vertex(table, mapping[c]) for table, mapping in sources), "targets": [t],
                  "edgeType": "PROJECTION"} for c, t in zip(COLUMNS, targets, strict=True)]
        if predicate:
            edges.append({"sources": [vertex(table, c) for table, c in predicate], "targets": targets,
                          "edgeType": "PREDICATE"})
        started = 1700000000 + 60 * self.queries
        line = {"queryText": query, "operationType": "CREATETABLE_AS_SELECT" if query.startswith("CREATE") else "QUERY",
                # impalad hashes with murmur3_128; any 32 hex digits of the text do here
                "queryId": f"{self.queries:016x}:9a3b5c7d00000000", "hash": hashlib.md5(query.encode()).hexdigest(),
                "user": self.user, "timestamp": started, "endTime": started + 3, "edges": edges, "vertices": vertices}
        with self.path.open("a") as fh:
            fh.write(json.dumps(line, separators=(",", ":")) + "\n")
        return line["queryId"]


def hms_create_time(cursor: Any, table: str) -> int:
    """The metastore's create time of `table` (epoch seconds), as impalad logs it."""
    cursor.execute(f"DESCRIBE FORMATTED {table}")
    for row in cursor.fetchall():
        if str(row[0]).strip() == "Created Time":
            created = parse_time(str(row[1]).strip())
            assert created is not None, row
            return int(created.timestamp())
    raise AssertionError(f"no Created Time for {table}")


def _graph(navd: NavdRunner, env: dict[str, str], *flags: str) -> tuple[dict[str, Any], set[tuple[str, str, str]]]:
    result = navd("lineage", *flags, "--format", "json", env=env)
    assert result.returncode == 0, result.stderr
    graph = json.loads(result.stdout)
    nodes = {node["qualifiedName"]: node for node in graph["nodes"]}
    names = {node["id"]: node["qualifiedName"] for node in graph["nodes"]}
    return nodes, {(names[e["source"]], names[e["target"]], e["type"]) for e in graph["edges"]}


def test_seed_000_temporary_tables_with_impala_logs(navd: NavdRunner, spark_thrift: SparkThriftServer,
                                                     solr_server: EmbeddedSolr, index: SolrIndex, unique: str,
                                                     tmp_path: Path) -> None:
    del index  # the cores, created
    db = f"{unique}_imp"
    lineage_dir = tmp_path / "impala-lineage"
    lineage_dir.mkdir()
    log = ImpalaLog(lineage_dir, "hue_user")
    config = tmp_path / "navd.toml"
    write_navd_config(config, solr_server, cluster=unique, state=tmp_path / "state", body=
                      f'[hive]\nhost = "127.0.0.1"\nport = {spark_thrift.port}\ndatabase_regex = "{db}"\n'
                      f'[impala]\nlineage_dirs = ["{lineage_dir}"]\n')
    env = {**os.environ, "NAVD_CONFIG": str(config)}

    def extract(*sources: str) -> None:
        for source in sources:
            result = navd("extract", source, *(["--once"] if source == "impala" else []), env=env)
            assert result.returncode == 0, f"extract {source}: {result.stderr[-2000:]}"
            if source == "impala":
                assert '"level": "warning"' not in result.stderr, result.stderr[-3000:]

    same = {c: c for c in COLUMNS}
    s07, s08, merge = f"{db}.sample_07", f"{db}.sample_08", f"{db}.sample_merge"
    t07, t08 = f"{db}.temp_sample_07", f"{db}.temp_sample_08"
    with hive.connect("127.0.0.1", spark_thrift.port, username="navd") as conn:
        cursor = conn.cursor()
        for statement in (f"CREATE DATABASE {db}", f"CREATE TABLE {s07} ({TYPES}) USING parquet",
                          f"CREATE TABLE {s08} ({TYPES}) USING parquet", f"CREATE TABLE {merge} ({TYPES}) USING parquet"):
            cursor.execute(statement)
        # impalad logs the metastore's create time of each table; an earlier one would name an
        # earlier incarnation of the table (tests/test_impala_recreated_table.py)
        created = {table: hms_create_time(cursor, table) for table in (s07, s08, merge)}
        ctas_07 = (f"CREATE TABLE {t07} AS SELECT code, description, total_emp, salary FROM {s07} "
                   f"WHERE salary > 20000")
        cursor.execute(ctas_07.replace(" AS SELECT", " USING parquet AS SELECT"))
        log.write(ctas_07, t07, [(s07, same)], predicate=((s07, "salary"),), created=created)
        extract("impala", "hms")  # the first metadata extraction: temp_sample_07 exists
        ctas_08 = (f"CREATE TABLE {t08} AS SELECT code, description, total_emp, salary FROM {s08} "
                   f"WHERE salary > 20000")
        cursor.execute(ctas_08.replace(" AS SELECT", " USING parquet AS SELECT"))
        log.write(ctas_08, t08, [(s08, same)], predicate=((s08, "salary"),), created=created)
        insert = f"INSERT INTO {merge} SELECT * FROM {t07} UNION ALL SELECT * FROM {t08}"
        cursor.execute(insert)
        insert_id = log.write(insert, merge, [(t07, same), (t08, same)],
                              created={**created, t07: hms_create_time(cursor, t07),
                                       t08: hms_create_time(cursor, t08)})
        cursor.execute(f"DROP TABLE {t08}")  # DROP TABLE writes no lineage record
        cursor.execute(f"DROP TABLE {t07}")
    extract("impala", "hms")  # the second: both temporaries are gone; every extract ends with a link pass

    m, n07, n08 = f"{merge}@{unique}", f"{s07}@{unique}", f"{s08}@{unique}"
    temp_07, temp_08 = f"{t07}@{unique}", f"{t08}@{unique}"

    # Default: sample_07 and sample_08 upstream of sample_merge, the dropped temporaries hidden.
    nodes, edges = _graph(navd, env, m, "--direction", "upstream")
    assert {(n07, m, "DATA_FLOW"), (n08, m, "DATA_FLOW")} <= edges, edges
    assert temp_07 not in nodes and temp_08 not in nodes

    # Deleted entities: temp_sample_07, captured by the first HMS run and flagged by the second.
    nodes, edges = _graph(navd, env, m, "--direction", "upstream", "--deleted")
    assert nodes[temp_07]["deleted"] is True and nodes[m]["deleted"] is False
    assert {(n07, temp_07, "DATA_FLOW"), (temp_07, m, "DATA_FLOW")} <= edges

    # Operations: the insert reading temp_sample_08, which no metadata extraction captured.
    nodes, edges = _graph(navd, env, m, "--direction", "upstream", "--operations", "--deleted")
    execution = f"impala://{unique}/execution/{insert_id}"
    assert nodes[execution]["type"] == "OPERATION_EXECUTION"
    assert {(temp_08, execution, "DATA_FLOW"), (execution, m, "DATA_FLOW")} <= edges, edges

    # Navigator's search on the query text finds what created temp_sample_08 and what read it.
    found = navd("search", "queryText:*temp_sample_08*", "--json", env=env)
    assert found.returncode == 0, found.stderr
    texts = {d.get("queryText", "") for d in json.loads(found.stdout)["docs"]}
    assert ctas_08 in texts and insert in texts, texts
