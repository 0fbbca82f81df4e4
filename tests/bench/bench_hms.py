"""HMS extractor benchmark: 5,000 tables x 20 columns through a real HiveServer2, full and incremental.

Run: python tests/bench/bench_hms.py [--databases 10] [--tables-per-db 500] [--columns 20]

It starts a real standalone Hive metastore and the Spark Thrift Server over it (navd's dev
services, `navd_devstack.metastore` / `navd_devstack.spark_thrift`, warehouse on local disk) and
its own embedded Solr (temporary home, free port), and measures, in one process:

1. full run: a fresh `HmsExtractor` (fresh state dir) `run_pass(IndexWriter, full=True)` +
   `writer.close()` into emptied cores, against a bare crawl through the same HiveServer2 that
   indexes nothing: SHOW DATABASES, SHOW TABLES per database, DESCRIBE FORMATTED per table (what
   any extractor must ask to learn 100,000 columns). Ratio navd / bare.
2. incremental run with nothing changed (the state of run 1), and after `ALTER TABLE ... SET
   TBLPROPERTIES` on 1% of the tables: seconds and statements sent, as fractions of the full run.

The metastore (Derby) with its tables is made once (about 10 CREATE TABLE a second here) and
cached in .bench/hms-<databases>x<tables>x<columns>/ (gitignored); the incremental benchmark's
property changes are unset afterwards so the cache stays valid. Figures are printed and
written to .bench/hms.json. Not collected by pytest (bench_*.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from pyhive import hive

from navd.config import DEFAULT_SOLR_VERSION, default_solr_dist_dir
from navd.extractors.hms.extractor import HmsExtractor
from navd.index.admin import init_solr
from navd.index.client import IndexWriter, SolrIndex
from navd.solr.server import EmbeddedSolr, SolrDistribution, free_port
from navd_devstack.metastore import HiveMetastore
from navd_devstack.spark_thrift import SparkThriftServer
from navd.extractors import run_pass

ROOT = Path(__file__).resolve().parents[2] / ".bench"


def columns_sql(count: int) -> str:
    kinds = ("INT", "STRING", "DOUBLE", "BIGINT", "TIMESTAMP")
    return ", ".join(f"c{i} {kinds[i % len(kinds)]} COMMENT 'column {i}'" for i in range(count))


def make_tables(cursor: Any, databases: int, tables: int, columns: int) -> None:
    started = time.monotonic()
    for d in range(databases):
        cursor.execute(f"CREATE DATABASE IF NOT EXISTS bench_{d}")
        for t in range(tables):
            # Every tenth table Hive-format and partitioned, the rest Spark datasource tables.
            if t % 10 == 0:
                cursor.execute(f"CREATE TABLE IF NOT EXISTS bench_{d}.t{t} ({columns_sql(columns - 1)}) "
                               f"PARTITIONED BY (day STRING) STORED AS PARQUET")
            else:
                cursor.execute(f"CREATE TABLE IF NOT EXISTS bench_{d}.t{t} ({columns_sql(columns)}) USING parquet")
        print(f"  database bench_{d}: {tables} tables, {time.monotonic() - started:.0f}s so far", flush=True)


def bare_crawl(cursor: Any) -> tuple[float, int, int]:
    """(seconds, statements, column rows) of SHOW DATABASES / SHOW TABLES / DESCRIBE FORMATTED."""
    started, statements, rows = time.monotonic(), 0, 0
    cursor.execute("SHOW DATABASES")
    statements += 1
    for (database,) in cursor.fetchall():
        if not str(database).startswith("bench_"):
            continue
        cursor.execute(f"SHOW TABLES IN {database}")
        statements += 1
        for _db, table, *_rest in cursor.fetchall():
            cursor.execute(f"DESCRIBE FORMATTED {database}.{table}")
            statements += 1
            rows += len(cursor.fetchall())
    return time.monotonic() - started, statements, rows


def navd_run(index: SolrIndex, port: int, state: Path, *, full: bool) -> tuple[float, Any]:
    connection = hive.connect("127.0.0.1", port, username="navd")
    extractor = HmsExtractor(connection, index, cluster="bench", default_fs="file:///", state_dir=state,
                             database_regex="bench_.*")
    started = time.monotonic()
    writer = IndexWriter(index)
    report = run_pass(extractor, writer, full=full)
    assert writer.close(), "Solr did not take every document"
    seconds = time.monotonic() - started
    extractor.close()  # closes the HiveServer2 connection it was given
    return seconds, report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--databases", type=int, default=10)
    parser.add_argument("--tables-per-db", type=int, default=500)
    parser.add_argument("--columns", type=int, default=20)
    args = parser.parse_args()
    cache = ROOT / f"hms-{args.databases}x{args.tables_per_db}x{args.columns}"
    ready = cache / "READY"
    metastore = HiveMetastore(cache / "metastore", free_port(), warehouse=(cache / "warehouse").as_uri(), heap="1g")
    thrift = SparkThriftServer(cache / "thrift", free_port(), metastore_uri=metastore.uri,
                               warehouse=metastore.warehouse, driver_memory="1g")
    solr_home = Path(tempfile.mkdtemp(prefix="navd-bench-hms-"))
    solr = EmbeddedSolr(solr_home, free_port(), "1g", SolrDistribution(DEFAULT_SOLR_VERSION, default_solr_dist_dir()))
    tables = args.databases * args.tables_per_db
    try:
        metastore.start()
        thrift.start()
        solr.start()
        with hive.connect("127.0.0.1", thrift.port, username="navd") as conn:
            cursor = conn.cursor()
            if not ready.exists():
                print(f"creating {tables} tables x {args.columns} columns (cached in {cache})", flush=True)
                make_tables(cursor, args.databases, args.tables_per_db, args.columns)
                ready.write_text("ok\n")
            with SolrIndex(solr.client_config()) as index:
                init_solr(index)
                bare_seconds, bare_statements, rows = bare_crawl(cursor)
                state = Path(tempfile.mkdtemp(prefix="navd-bench-hms-state-"))
                full_seconds, full = navd_run(index, thrift.port, state, full=True)
                assert full.tables == tables and full.complete, full
                unchanged_seconds, unchanged = navd_run(index, thrift.port, state, full=False)
                changed = [(d, t) for d in range(args.databases) for t in range(1, args.tables_per_db, 100)]
                for d, t in changed:
                    cursor.execute(f"ALTER TABLE bench_{d}.t{t} SET TBLPROPERTIES ('navd.bench'='{time.time()}')")
                try:
                    altered_seconds, altered = navd_run(index, thrift.port, state, full=False)
                finally:
                    for d, t in changed:  # back to the cached tables
                        cursor.execute(f"ALTER TABLE bench_{d}.t{t} UNSET TBLPROPERTIES ('navd.bench')")
                shutil.rmtree(state, ignore_errors=True)
        figures = {
            "tables": tables, "columns_per_table": args.columns, "describe_rows": rows,
            "bare_crawl": {"seconds": round(bare_seconds, 2), "statements": bare_statements},
            "full": {"seconds": round(full_seconds, 2), "statements": full.statements, "records": full.records,
                     "ratio_to_bare": round(full_seconds / bare_seconds, 3),
                     "tables_per_second": round(tables / full_seconds, 1)},
            "incremental_unchanged": {"seconds": round(unchanged_seconds, 2), "statements": unchanged.statements,
                                      "described": unchanged.tables_described,
                                      "time_fraction_of_full": round(unchanged_seconds / full_seconds, 4)},
            "incremental_1pct_altered": {"tables_altered": len(changed), "seconds": round(altered_seconds, 2),
                                         "statements": altered.statements, "described": altered.tables_described,
                                         "time_fraction_of_full": round(altered_seconds / full_seconds, 4)},
        }
        print(json.dumps(figures, indent=2))
        (ROOT / "hms.json").write_text(json.dumps(figures, indent=2) + "\n")
    finally:
        solr.stop()
        thrift.stop()
        metastore.stop()
        shutil.rmtree(solr_home, ignore_errors=True)


if __name__ == "__main__":
    main()
