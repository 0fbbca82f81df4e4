"""Writer benchmark: navd's IndexWriter against raw JSON posts to Solr's /update, and pysolr.

Run: python tests/bench/bench_writer.py [--docs N] [--batch-size N] [--threads N]

It starts its own embedded Solr (navd's own server code, a temporary home, a free port), creates
the cores with `navd.index.admin.init_solr`, and measures, into an emptied core each time:

- raw:    the same documents, serialised before the clock starts, posted to {core}/update with
          one requests.Session from the same number of threads navd uses: the ceiling of any
          Python writer on this machine (Solr's own indexing speed plus HTTP);
- navd:   `IndexWriter(index).write_all(records)` + `close()`, timed from the first record, so
          it pays for document building and serialisation: that is what a writer costs;
- pysolr: the same documents through `pysolr.Solr(...).add(docs, commit=False)`, batched and
          threaded like navd, so the CHANGELOG can cite a measured reason for navd's own writer.

Then the wildcard search `originalName:*ord*` through `SolrIndex.search`, as `navd search`
sends it. Figures are printed and written to .bench/writer.json (gitignored).
Not collected by pytest: the file is named bench_*.py, not test_*.py.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import io
import json
import os
import platform
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pysolr
import requests

import navd
from navd.config import DEFAULT_SOLR_VERSION, SolrConfig, default_solr_dist_dir
from navd.index.admin import init_solr
from navd.index.client import IndexWriter, SolrIndex, serialise
from navd.index.documents import element_document
from navd.logs import setup_logging
from navd.model import (
    Element,
    ElementType,
    EntityRef,
    SourceType,
    hive_qualified_name,
    operation_qualified_name,
    partition_qualified_name,
    path_qualified_name,
)
from navd.solr.server import EmbeddedSolr, SolrDistribution, free_port

REPO = Path(__file__).resolve().parents[2]
RESULT_FILE = REPO / ".bench" / "writer.json"
PROFILE_FILE = REPO / ".bench" / "writer-navd.prof"
SEED = 20261122  # fixed: every run and every path indexes exactly the same documents
GOAL = 0.9  # the goal: navd >= 0.9 of the raw rate
QUERY = "originalName:*ord*"
QUERY_ROWS = 20  # `navd search` asks for 20 rows by default
CORE = "elements"
FS = "hdfs://nameservice1"
CLUSTER = "primary"

# --- realistic records ---------------------------------------------------------------------------
# Vocabularies are chosen without the substring "ord", so the only names `originalName:*ord*`
# finds are the ~5% the generator makes on purpose (counted, and checked against numFound).

_ZONES = ("raw", "staging", "curated", "archive")
_DATASETS = ("clickstream", "payments", "customers", "inventory", "sessions", "shipments",
             "invoices", "ad_impressions", "sensor_readings", "ledger_entries", "returns", "web_logs")
_FORMATS = ((".snappy.parquet", 0.6), (".c000.snappy.orc", 0.15), (".avro", 0.15), (".csv.gz", 0.1))
_DATABASES = ("sales", "marketing", "finance", "ops", "web")
# Exactly 40 columns: a table's columns are `_COLUMNS[i % 40]` for the records i // 40 groups,
# which keeps qualified names unique without numbered column names.
_COLUMNS: tuple[tuple[str, str], ...] = (
    ("customer_id", "bigint"), ("session_id", "string"), ("event_time", "timestamp"),
    ("event_type", "string"), ("amount", "decimal(18,2)"), ("currency", "string"),
    ("country", "string"), ("city", "string"), ("postal_code", "string"), ("email", "string"),
    ("first_name", "string"), ("last_name", "string"), ("prénom", "string"), ("Umsatz €", "decimal(18,2)"),
    ("sku", "string"), ("quantity", "int"), ("unit_price", "decimal(18,2)"), ("discount", "double"),
    ("tax", "decimal(18,2)"), ("channel", "string"), ("campaign", "string"), ("device", "string"),
    ("browser", "string"), ("ip_address", "string"), ("user_agent", "string"), ("referrer", "string"),
    ("page_url", "string"), ("latitude", "double"), ("longitude", "double"), ("warehouse_id", "int"),
    ("carrier", "string"), ("shipped_at", "timestamp"), ("delivered_at", "timestamp"),
    ("status", "string"), ("is_test", "boolean"), ("created_at", "timestamp"),
    ("updated_at", "timestamp"), ("dt", "string"), ("顧客名", "string"), ("load id", "string"),
)
_OWNERS = ("etl", "spark", "hive", "svc_ingest", "alice", "bob")
_GROUPS = ("hadoop", "analysts", "finance", "datascience")
_FILE_PERMISSIONS = ("rw-r-----", "rw-r--r--", "rw-rw----", "rw-------")
_DIR_PERMISSIONS = ("rwxr-x---", "rwxr-xr-x", "rwxrwx---")
_JOBS = ("sessionize_clicks", "daily_revenue", "customer_360", "inventory_snapshot",
         "fraud_scoring", "ad_attribution")
_ORD_SHARE = 0.05
_NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)


def _fmt(rnd: random.Random) -> str:
    roll, total = rnd.random(), 0.0
    for suffix, share in _FORMATS:
        total += share
        if roll < total:
            return suffix
    return _FORMATS[0][0]


def _directory_ref(path: str) -> EntityRef:
    return EntityRef(SourceType.HDFS, path_qualified_name(path, FS), ElementType.DIRECTORY)


def realistic_elements(count: int, seed: int = SEED) -> Iterator[Element]:
    """`count` elements with the mix of a real cluster, generated lazily and deterministically.

    ~70% HDFS files, ~10% directories, ~12% Hive columns, ~3% tables, ~3% partitions and ~2%
    Spark executions; ~2% of paths and names carry spaces or non-ASCII letters; ~5% of names
    contain "ord". Qualified names are unique (the ordinal `i` or a seeded UUID is in each),
    so `count` records make `count` Solr documents.
    """
    rnd = random.Random(seed)
    run = "hdfs##bench"
    for i in range(count):
        roll = rnd.random()
        ordish = rnd.random() < _ORD_SHARE
        odd = rnd.random() < 0.02  # spaces and unicode in the name
        year, month, day = rnd.choice((2024, 2025, 2026)), rnd.randint(1, 12), rnd.randint(1, 28)
        modified = _NOW - timedelta(seconds=rnd.randrange(90 * 86_400))
        if roll < 0.70:
            yield _file(rnd, i, ordish, odd, year, month, day, modified, run)
        elif roll < 0.80:
            yield _directory(rnd, i, ordish, odd, year, month, day, modified, run)
        elif roll < 0.92:
            yield _column(rnd, i, ordish, run)
        elif roll < 0.95:
            yield _table(rnd, i, ordish, modified, run)
        elif roll < 0.98:
            yield _partition(rnd, i, ordish, year, month, day, modified, run)
        else:
            yield _execution(rnd, i, ordish, modified, run)


def _file(rnd: random.Random, i: int, ordish: bool, odd: bool, year: int, month: int, day: int,
          modified: datetime, run: str) -> Element:
    uid = uuid.UUID(int=rnd.getrandbits(128), version=4)
    zone, dataset = rnd.choice(_ZONES), rnd.choice(_DATASETS)
    if ordish:
        directory = f"/data/raw/orders/{year}/{month:02d}"
        name = rnd.choice((f"orders_{year}-{month:02d}-{day:02d}_{uid.hex[:8]}.csv",
                           f"Order Export {uid.hex[:8]}.json",
                           f"part-{i % 100_000:05d}-{uid}-purchase_order.snappy.parquet"))
    elif odd:
        directory = rnd.choice(("/data/shared/Finance Team/Berichte", "/user/日本/レポート",
                                "/data/landing/café menus"))
        name = f"Q{month % 4 + 1} Umsätze {uid.hex[:8]}.xlsx"
    else:
        directory = f"/data/{zone}/{dataset}/{year}/{month:02d}/{day:02d}"
        name = f"part-{i % 100_000:05d}-{uid}{_fmt(rnd)}"
    path = f"{directory}/{name}"
    return Element(SourceType.HDFS, ElementType.FILE, path_qualified_name(path, FS), name,
                   parent=_directory_ref(directory), file_system_path=path,
                   owner=rnd.choice(_OWNERS), group=rnd.choice(_GROUPS),
                   permissions=rnd.choice(_FILE_PERMISSIONS),
                   size=min(int(rnd.lognormvariate(17, 2)), 50 * 1024**3),
                   block_size=rnd.choice((134_217_728, 268_435_456)),
                   replication=rnd.choice((3, 3, 3, 2)), last_modified=modified,
                   last_accessed=modified + timedelta(hours=rnd.randrange(48)),
                   extractor_run_id=run)


def _directory(rnd: random.Random, i: int, ordish: bool, odd: bool, year: int, month: int,
               day: int, modified: datetime, run: str) -> Element:
    zone, dataset = rnd.choice(_ZONES), rnd.choice(_DATASETS)
    if ordish:
        parent, name = f"/data/raw/orders/{year}/{month:02d}", f"order_batch={i}"
    elif odd:
        parent, name = "/data/shared/Finance Team", f"Ablage {i} für Prüfung"
    else:
        parent, name = f"/data/{zone}/{dataset}/{year}/{month:02d}/{day:02d}", f"batch_id={i}"
    path = f"{parent}/{name}"
    return Element(SourceType.HDFS, ElementType.DIRECTORY, path_qualified_name(path, FS), name,
                   parent=_directory_ref(parent), file_system_path=path,
                   owner=rnd.choice(_OWNERS), group=rnd.choice(_GROUPS),
                   permissions=rnd.choice(_DIR_PERMISSIONS), last_modified=modified,
                   extractor_run_id=run)


def _table_name(i: int, ordish: bool) -> str:
    return f"{'orders' if ordish else _DATASETS[i % len(_DATASETS)]}_{i:07d}"


def _column(rnd: random.Random, i: int, ordish: bool, run: str) -> Element:
    database = _DATABASES[(i // 40) % len(_DATABASES)]
    table = f"{_DATASETS[(i // 40) % len(_DATASETS)]}_{i // 40:05d}"
    column, data_type = _COLUMNS[i % 40]
    if ordish:
        column = f"order_{column}"  # still unique in its table: no base column starts with order_
    return Element(SourceType.HIVE, ElementType.FIELD,
                   hive_qualified_name(CLUSTER, database, table, column), column,
                   parent=EntityRef(SourceType.HIVE, hive_qualified_name(CLUSTER, database, table),
                                    ElementType.TABLE),
                   data_type=data_type, extractor_run_id=run,
                   description="Business key from the source system" if rnd.random() < 0.1 else None,
                   properties={"position": str(i % 40)})


def _table(rnd: random.Random, i: int, ordish: bool, modified: datetime, run: str) -> Element:
    database = rnd.choice(_DATABASES)
    table = _table_name(i, ordish)
    return Element(SourceType.HIVE, ElementType.TABLE, hive_qualified_name(CLUSTER, database, table),
                   table, parent=EntityRef(SourceType.HIVE, hive_qualified_name(CLUSTER, database),
                                           ElementType.DATABASE),
                   file_system_path=f"/user/hive/warehouse/{database}.db/{table}",
                   owner=rnd.choice(_OWNERS), created=modified - timedelta(days=rnd.randrange(400)),
                   last_modified=modified, extractor_run_id=run,
                   description=f"Daily snapshot of {table}" if rnd.random() < 0.3 else None,
                   properties={"tableType": rnd.choice(("MANAGED_TABLE", "EXTERNAL_TABLE")),
                               "format": "parquet", "numRows": str(rnd.randrange(10**9)),
                               "transactional": "false"})


def _partition(rnd: random.Random, i: int, ordish: bool, year: int, month: int, day: int,
               modified: datetime, run: str) -> Element:
    database = rnd.choice(_DATABASES)
    table = "orders" if ordish else _DATASETS[i % len(_DATASETS)]
    spec = {"dt": f"{year}-{month:02d}-{day:02d}", "batch": str(i)}
    name = "/".join(f"{k}={v}" for k, v in spec.items())
    if ordish:
        name = f"{table}/{name}"
    return Element(SourceType.HIVE, ElementType.PARTITION,
                   partition_qualified_name(CLUSTER, database, table, spec), name,
                   parent=EntityRef(SourceType.HIVE, hive_qualified_name(CLUSTER, database, table),
                                    ElementType.TABLE),
                   file_system_path=f"/user/hive/warehouse/{database}.db/{table}/{name}",
                   created=modified, extractor_run_id=run)


def _execution(rnd: random.Random, i: int, ordish: bool, modified: datetime, run: str) -> Element:
    job = "order_enrichment" if ordish else rnd.choice(_JOBS)
    app = f"application_1730440000000_{i:07d}"
    source, target = rnd.sample(_DATASETS, 2)
    return Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION,
                   operation_qualified_name(SourceType.SPARK, app, "1"), f"{job} ({app})",
                   principal=rnd.choice(_OWNERS), started=modified,
                   ended=modified + timedelta(seconds=rnd.randrange(30, 7200)),
                   query_text=f"INSERT OVERWRITE TABLE curated.{target} SELECT customer_id, "
                              f"sum(amount) AS total FROM raw.{source} WHERE dt = '{modified:%Y-%m-%d}' "
                              f"GROUP BY customer_id",
                   extractor_run_id=run,
                   properties={"outcome": rnd.choice(("SUCCEEDED", "SUCCEEDED", "FAILED")),
                               "sparkVersion": "4.0.1", "spark.executor.memory": "8g"})


def _batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


# --- the measured paths ----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Corpus:
    """The raw path's input, built before any clock starts, plus what we learnt building it."""

    bodies: list[bytes]
    ord_names: int  # elements whose name contains "ord": what the wildcard query must find
    json_bytes: int
    generate_seconds: float  # next() on the record generator (an extractor's work)
    document_seconds: float  # element_document()
    serialise_seconds: float  # navd.index.client.serialise()


def build_corpus(docs: int, batch_size: int) -> Corpus:
    """Serialise the benchmark's documents exactly as navd does, batch by batch.

    Only the bodies are kept (about 0.6 kB a document); the Element records and dicts of one
    batch are dropped before the next is made, so memory stays bounded. Timing the three stages
    separately shows what navd's producer thread has to do per document.
    """
    bodies: list[bytes] = []
    ord_names = json_bytes = 0
    gen = doc = ser = 0.0
    records = realistic_elements(docs)
    clock = time.perf_counter
    while True:
        t0 = clock()
        elements = [e for _, e in zip(range(batch_size), records)]
        t1 = clock()
        if not elements:
            break
        documents = [element_document(e) for e in elements]
        t2 = clock()
        body = serialise(documents)
        t3 = clock()
        gen, doc, ser = gen + t1 - t0, doc + t2 - t1, ser + t3 - t2
        ord_names += sum("ord" in e.name.lower() for e in elements)
        json_bytes += len(body)
        bodies.append(body)
    return Corpus(bodies, ord_names, json_bytes, gen, doc, ser)


def post_raw(base_url: str, core: str, bodies: list[bytes], threads: int) -> float:
    """Post pre-serialised bodies to /update from `threads` threads sharing one Session."""
    session = requests.Session()
    # One pooled connection per thread, as navd's session has: no reconnects mid-run.
    adapter = requests.adapters.HTTPAdapter(pool_connections=1, pool_maxsize=max(threads, 1))
    session.mount("http://", adapter)
    url = f"{base_url}/{core}/update"
    headers = {"Content-Type": "application/json"}

    def post(body: bytes) -> None:
        resp = session.post(url, data=body, headers=headers, params={"wt": "json"}, timeout=120)
        if resp.status_code != 200:
            raise RuntimeError(f"raw post: HTTP {resp.status_code}: {resp.text[:300]}")

    try:
        start = time.perf_counter()
        if threads == 1:
            for body in bodies:
                post(body)
        else:
            with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="raw") as pool:
                for _ in pool.map(post, bodies):  # re-raises the first failure
                    pass
        return time.perf_counter() - start
    finally:
        session.close()


def write_navd(index: SolrIndex, records: Iterable[Element], batch_size: int, threads: int,
               docs: int) -> float:
    """navd's own path: from the first record to close() returning, as an extractor sees it."""
    writer = IndexWriter(index, batch_size=batch_size, threads=threads)
    start = time.perf_counter()
    writer.write_all(records)
    ok = writer.close()
    seconds = time.perf_counter() - start
    if not ok or writer.counts["elements"] != docs:
        raise RuntimeError(f"navd writer: close() returned {ok}, wrote {writer.counts}, expected {docs}")
    return seconds


def write_pysolr(core_url: str, records: Iterable[Element], batch_size: int, threads: int) -> float:
    """pysolr's add() with navd's batching and threading, so only the client differs.

    Documents come from navd's element_document (the mapping is not what is compared); each
    thread has its own pysolr.Solr because pysolr creates its Session lazily without a lock.
    As in CoreWriter, at most 2 * threads batches are in memory at once.
    """
    local = threading.local()
    clients: list[pysolr.Solr] = []
    clients_lock = threading.Lock()

    def add(batch: list[dict[str, Any]]) -> None:
        solr = getattr(local, "solr", None)
        if solr is None:
            solr = local.solr = pysolr.Solr(core_url, timeout=120)
            with clients_lock:
                clients.append(solr)
        solr.add(batch, commit=False)

    slots = threading.BoundedSemaphore(threads * 2)
    futures: list[Future[None]] = []
    try:
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="pysolr") as pool:
            start = time.perf_counter()
            for batch in _batches((element_document(r) for r in records), batch_size):
                slots.acquire()
                future = pool.submit(add, batch)
                future.add_done_callback(lambda _f: slots.release())
                futures.append(future)
            for future in futures:
                future.result()  # re-raises a failed batch
            return time.perf_counter() - start
    finally:
        for solr in clients:
            if solr.session is not None:
                solr.session.close()


# --- Solr housekeeping -------------------------------------------------------------------------


def clear_core(index: SolrIndex) -> None:
    """An empty core for every run (Solr turns delete *:* into a cheap deleteAll)."""
    index.delete_query(CORE, "*:*")
    index.commit(CORE)
    if index.count(CORE) != 0:
        raise RuntimeError(f"core {index.core(CORE)} is not empty after delete *:*")


def verify_count(index: SolrIndex, docs: int, label: str) -> None:
    """Hard commit (outside the timed window for every path alike), then all docs must be there."""
    index.commit(CORE)
    found = index.count(CORE)
    if found != docs:
        raise RuntimeError(f"{label}: numFound {found} after commit, expected {docs}")


@dataclasses.dataclass
class PathResult:
    label: str
    key: str
    seconds: list[float] = dataclasses.field(default_factory=list)

    def rates(self, docs: int) -> list[float]:
        return [docs / s for s in self.seconds]

    def best(self, docs: int) -> float:
        return max(self.rates(docs))


def measure_query(index: SolrIndex, runs: int, expected: int) -> dict[str, Any]:
    """`navd search 'originalName:*ord*'` as the CLI sends it: SolrIndex.search, rows=20.

    Repeats of one query are answered from Solr's queryResultCache, so the first run (a new
    searcher after the commit) is reported on its own, and the same query with {!cache=false}
    shows what every run costs when it misses the cache (e.g. after each soft commit).
    """
    def series(query: str) -> dict[str, Any]:
        wall: list[float] = []
        qtime: list[int] = []
        found = -1
        for _ in range(runs):
            start = time.perf_counter()
            body = index.search(CORE, query, rows=QUERY_ROWS)
            wall.append((time.perf_counter() - start) * 1000)
            qtime.append(int(body["responseHeader"]["QTime"]))
            found = int(body["response"]["numFound"])
        if found != expected:
            raise RuntimeError(f"query {query!r}: numFound {found}, expected {expected} names with 'ord'")
        return {"query": query, "runs": runs, "numFound": found,
                "wall_ms": {"first": wall[0], "median": statistics.median(wall), "max": max(wall)},
                "qtime_ms": {"first": qtime[0], "median": statistics.median(qtime), "max": max(qtime)}}

    return {"as_navd_search": series(QUERY), "uncached": series("{!cache=false}" + QUERY)}


# --- reporting -------------------------------------------------------------------------------


def _rate(value: float) -> str:
    return f"{value:,.0f}/s"


def print_report(report: dict[str, Any]) -> None:
    setup, paths, query = report["setup"], report["paths"], report["query"]
    docs = setup["docs"]
    out = sys.stdout
    out.write(f"\nnavd writer benchmark: {docs:,} element docs, batch {setup['batch_size']:,}, "
              f"{setup['threads']} writer thread(s); Solr {setup['solr_version']} (heap "
              f"{setup['heap']}), {setup['cpus']} CPU(s), Python {setup['python']}\n")
    out.write(f"documents: {setup['avg_doc_bytes']:.0f} B of JSON on average "
              f"({setup['json_mb']:.0f} MB pre-serialised for the raw path)\n\n")
    out.write(f"{'path':<52} {'run 1':>12} {'run 2':>12} {'best':>12} {'vs raw':>7}\n")
    raw_best = paths["raw"]["best_docs_per_s"]
    for key in ("raw", "navd", "pysolr", "raw_1_thread"):
        if key not in paths:
            continue
        entry = paths[key]
        runs = [_rate(r) for r in entry["docs_per_s"]] + ["-"] * (2 - len(entry["docs_per_s"]))
        out.write(f"{entry['label']:<52} {runs[0]:>12} {runs[1]:>12} "
                  f"{_rate(entry['best_docs_per_s']):>12} {entry['best_docs_per_s'] / raw_best:>7.2f}\n")
    cpu = report["python_cpu"]
    out.write(f"\n{'CPU of the producer alone (no Solr, from the corpus build)':<52}\n")
    for label, key in (("  record generation (the extractor's share)", "generate_us_per_doc"),
                       ("  element_document()", "document_us_per_doc"),
                       ("  serialise()", "serialise_us_per_doc")):
        out.write(f"{label:<52} {cpu[key]:>9.1f} us/doc\n")
    out.write(f"{'  => one-core ceiling of the navd producer':<52} {_rate(cpu['producer_ceiling_docs_per_s']):>12}\n")
    verdict = report["verdict"]
    out.write(f"\nnavd / raw ({setup['threads']} thread(s), best of 2 each): {verdict['ratio']:.3f}   "
              f"goal >= {GOAL}: {'met' if verdict['met'] else 'NOT met'}\n")
    out.write(f"pysolr / raw: {verdict['pysolr_ratio']:.3f}   navd / pysolr: {verdict['navd_vs_pysolr']:.2f}x\n")
    for key, title in (("as_navd_search", f"query {QUERY} (rows={QUERY_ROWS}, as `navd search`)"),
                       ("uncached", "same query, {!cache=false} (every run misses the cache)")):
        q = query[key]
        w, t = q["wall_ms"], q["qtime_ms"]
        out.write(f"\n{title}: numFound {q['numFound']:,}, {q['runs']} runs\n"
                  f"  wall  first {w['first']:7.1f} ms  median {w['median']:7.1f} ms  max {w['max']:7.1f} ms\n"
                  f"  QTime first {t['first']:7.0f} ms  median {t['median']:7.1f} ms  max {t['max']:7.0f} ms\n")
    worst = max(query[k]["wall_ms"]["max"] for k in query)
    out.write(f"\nwildcard query, slowest of all runs: {worst:.1f} ms "
              f"({'well under' if worst < 250 else 'NOT well under'} a second)\n")
    out.write(f"figures written to {RESULT_FILE.relative_to(REPO)}\n")


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def profile_navd(index: SolrIndex, docs: int, batch_size: int, threads: int) -> str:
    """cProfile of the navd path's calling thread (where documents are built and serialised;
    the writer threads only wait on HTTP). Slower than the timed runs: shares, not speeds."""
    clear_core(index)
    profiler = cProfile.Profile()
    profiler.enable()
    write_navd(index, realistic_elements(docs), batch_size, threads, docs)
    profiler.disable()
    verify_count(index, docs, "navd (profiled)")
    PROFILE_FILE.parent.mkdir(exist_ok=True)
    profiler.dump_stats(PROFILE_FILE)
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
    return text.getvalue()


# --- main ------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    defaults = SolrConfig()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=200_000, help="documents per run (default 200000)")
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size,
                        help=f"documents per /update request (default {defaults.batch_size})")
    parser.add_argument("--threads", type=int, default=defaults.writer_threads,
                        help=f"writer threads (default {defaults.writer_threads}, navd's writer_threads)")
    parser.add_argument("--warmup", type=int, default=20_000,
                        help="documents indexed (raw, untimed) before the first run so the JIT is "
                             "warm for every path (default 20000; 0 to skip)")
    parser.add_argument("--query-runs", type=int, default=10, help="runs of the wildcard query (default 10)")
    parser.add_argument("--heap", default="1g", help="Solr JVM heap (default 1g)")
    parser.add_argument("--profile", action="store_true",
                        help=f"afterwards, one extra navd run under cProfile ({PROFILE_FILE.relative_to(REPO)})")
    args = parser.parse_args(argv)
    if min(args.docs, args.batch_size, args.threads, args.query_runs) < 1 or args.warmup < 0:
        parser.error("--docs, --batch-size, --threads and --query-runs must be >= 1, --warmup >= 0")

    setup_logging("console", "warning")  # keep navd's structlog output out of the report
    # EmbeddedSolr.start() records the server as "the current embedded Solr" in the state dir,
    # which `navd search` and friends then use; a benchmark must not repoint the user's CLI to a
    # temporary server that is gone a minute later, so this process gets its own state dir.
    state = Path(tempfile.mkdtemp(prefix="navd-bench-state-"))
    os.environ["XDG_STATE_HOME"] = str(state)
    home = Path(tempfile.mkdtemp(prefix="navd-bench-solr-"))
    distribution = SolrDistribution(DEFAULT_SOLR_VERSION, default_solr_dist_dir())
    server = EmbeddedSolr(home, free_port(), args.heap, distribution)
    try:
        distribution.ensure()
        status = server.start()
        config = dataclasses.replace(defaults, url=server.url, batch_size=args.batch_size,
                                     writer_threads=args.threads)
        with SolrIndex(config) as index:
            init_solr(index)
            report = run(index, server, args, status.solr_version or "unknown")
            if args.profile:
                print(profile_navd(index, args.docs, args.batch_size, args.threads))
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)
    print_report(report)
    return 0


def run(index: SolrIndex, server: EmbeddedSolr, args: argparse.Namespace, solr_version: str) -> dict[str, Any]:
    docs, batch_size, threads = args.docs, args.batch_size, args.threads
    base_url, core = index.base_url, index.core(CORE)
    log = sys.stderr

    log.write(f"building {docs:,} documents for the raw path ...\n")
    corpus = build_corpus(docs, batch_size)

    if args.warmup:
        # Solr's first few seconds run interpreted/C1 code; without this the first timed run
        # (raw) would be penalised and the ratio flattered.
        warm = build_corpus(min(args.warmup, docs), batch_size).bodies
        clear_core(index)
        post_raw(base_url, core, warm, threads)
        del warm

    paths: dict[str, PathResult] = {
        "raw": PathResult(f"raw JSON /update, {threads} thread(s) [baseline]", "raw"),
        "navd": PathResult(f"navd IndexWriter, {threads} thread(s)", "navd"),
        "pysolr": PathResult(f"pysolr {pysolr.__version__} Solr.add, {threads} thread(s)", "pysolr"),
    }
    steps: list[tuple[str, Callable[[], float]]] = [
        ("raw", lambda: post_raw(base_url, core, corpus.bodies, threads)),
        ("navd", lambda: write_navd(index, realistic_elements(docs), batch_size, threads, docs)),
        ("pysolr", lambda: write_pysolr(f"{base_url}/{core}", realistic_elements(docs), batch_size, threads)),
        ("raw", lambda: post_raw(base_url, core, corpus.bodies, threads)),
        ("navd", lambda: write_navd(index, realistic_elements(docs), batch_size, threads, docs)),
    ]
    for key, step in steps:
        clear_core(index)
        log.write(f"{paths[key].label} ...")
        log.flush()
        seconds = step()
        verify_count(index, docs, paths[key].label)
        paths[key].seconds.append(seconds)
        log.write(f" {seconds:.1f} s, {_rate(docs / seconds)}\n")

    # The index now holds navd's 200k documents, committed: the state `navd search` would see.
    log.write(f"query {QUERY} x {args.query_runs} ...\n")
    reader = SolrIndex(dataclasses.replace(index.config, retries=0))  # as the CLI: no retries
    try:
        query = measure_query(reader, args.query_runs, corpus.ord_names)
    finally:
        reader.close()

    if threads > 1:
        # Informational: what one sequential client gets, to show what the threads buy.
        single = paths["raw_1_thread"] = PathResult("raw JSON /update, 1 thread (sequential)", "raw_1_thread")
        clear_core(index)
        log.write(f"{single.label} ...")
        log.flush()
        single.seconds.append(post_raw(base_url, core, corpus.bodies, 1))
        verify_count(index, docs, single.label)
        log.write(f" {single.seconds[0]:.1f} s\n")

    per_doc = 1e6 / docs
    cpu = {"generate_us_per_doc": corpus.generate_seconds * per_doc,
           "document_us_per_doc": corpus.document_seconds * per_doc,
           "serialise_us_per_doc": corpus.serialise_seconds * per_doc}
    cpu["producer_ceiling_docs_per_s"] = 1e6 / sum(cpu.values())
    raw_best, navd_best, pysolr_best = (paths[k].best(docs) for k in ("raw", "navd", "pysolr"))
    report: dict[str, Any] = {
        "setup": {"docs": docs, "batch_size": batch_size, "threads": threads, "seed": SEED,
                  "warmup_docs": args.warmup, "solr_version": solr_version, "heap": args.heap,
                  "cpus": os.cpu_count(), "python": platform.python_version(),
                  "navd_version": navd.__version__, "pysolr_version": pysolr.__version__,
                  "git_commit": _git_commit(), "when": datetime.now(UTC).isoformat(timespec="seconds"),
                  "avg_doc_bytes": corpus.json_bytes / docs, "json_mb": corpus.json_bytes / 1e6,
                  "ord_names": corpus.ord_names},
        "paths": {key: {"label": p.label, "seconds": p.seconds, "docs_per_s": p.rates(docs),
                        "best_docs_per_s": p.best(docs)} for key, p in paths.items()},
        "python_cpu": cpu,
        "verdict": {"ratio": navd_best / raw_best, "goal": GOAL, "met": navd_best / raw_best >= GOAL,
                    "pysolr_ratio": pysolr_best / raw_best, "navd_vs_pysolr": navd_best / pysolr_best},
        "query": query,
    }
    RESULT_FILE.parent.mkdir(exist_ok=True)
    RESULT_FILE.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return report


if __name__ == "__main__":
    sys.exit(main())
