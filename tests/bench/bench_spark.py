"""Spark extractor benchmark: event-log throughput into Solr, and lineage freshness.

Run: python tests/bench/bench_spark.py [--statements N] [--freshness-runs N]

It starts its own embedded Solr (navd's own server code, a temporary home, a free port, 1g heap),
creates the cores with `navd.index.admin.init_solr`, and measures the Spark extractor's two goals:

- throughput: event-log MB/s (decompressed bytes per second) through navd into Solr, against,
  in the same run and on the same files, plain zstd decompression + `json.loads` of every line
  (the floor of any reader in Python). navd = a fresh SparkExtractor (fresh state directory) over
  the corpus, `run_pass(IndexWriter(index))` + `writer.close()`, into emptied cores. One untimed
  warm-up of each, then best of 2. Goal: navd >= 0.5 of the baseline.
  The fair baseline beside it: the very update bodies navd's writer posted in that run (recorded
  as sent, tests/bench/fair_baseline.py) posted again into fresh cores of the same Solr, with the
  same batches, parameters, threads and commits. Goal: navd >= 0.7 of that raw post.
- freshness: the extractor polls a fresh event-log directory every 5 s (navd's default
  `[spark] poll_seconds`) in a thread, as `navd extract spark` does; a PySpark job writes K CTAS
  statements `create table fresh.t<i> as select ... from fresh.src` into it and records the time
  each statement returned (its SQL execution end event is in the log by then: Spark flushes
  SQL events at once); the benchmark asks `navd.lineage.service.lineage(index, "fresh.t<i>@primary",
  upstream)` every 0.2 s until `fresh.src@primary` is upstream. Latency = found - statement end.
  Goal: p95 <= 10 s.

The corpus is a REAL Spark event log: one PySpark application (local[1], Hive support, Spark 4's
default event log: rolling, zstd) running a mix of N SQL statements (CTAS with expressions and
filters, INSERT OVERWRITE with joins, aggregations, DataFrame writes to parquet paths, reads).
It is generated once and cached under .bench/spark-logs/<config hash>/ (gitignored).
Figures are printed and written to .bench/spark.json. Not collected by pytest (bench_*.py).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import dataclasses
import hashlib
import io
import json
import os
import platform
import pstats
import queue
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections import defaultdict, deque
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import zstandard

import navd
from navd.config import DEFAULT_SOLR_VERSION, default_solr_dist_dir
from navd.extractors import run_pass
from navd.extractors.spark.component import POST_COMMIT_HOOKS
from navd.extractors.spark.settings import SparkConfig
from navd.extractors.spark.extractor import SparkExtractor
from navd.index.admin import init_solr
from navd.index.client import IndexWriter, SolrIndex
from navd.errors import EntityNotFound
from navd.lineage.rules import LineageOptions
from navd.lineage.service import lineage
from navd.logs import setup_logging
from navd.solr.server import EmbeddedSolr, SolrDistribution, free_port

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_writer import Run, _cpu_snapshot, _git_commit, _noisy, pin_cpus  # noqa: E402  (same directory)
from fair_baseline import Recorded, RecordingIndex, describe, fresh_cores, post_recorded  # noqa: E402  (same directory)

REPO = Path(__file__).resolve().parents[2]
BENCH_DIR = REPO / ".bench"
CORPUS_ROOT = BENCH_DIR / "spark-logs"
RESULT_FILE = BENCH_DIR / "spark.json"
PROFILE_FILE = BENCH_DIR / "spark-navd.prof"
CLUSTER = "primary"
THROUGHPUT_GOAL = 0.5  # navd >= 0.5 of decompress + json.loads
RAW_POST_GOAL = 0.7  # navd >= 0.7 of a raw post of the documents it wrote
FRESHNESS_GOAL_S = 10.0  # p95 from SQL execution end to lineage returned
LINEAGE_POLL_S = 0.2
FRESHNESS_TIMEOUT_S = 120.0  # per statement: after this it counts as not found
CORES = ("elements", "relations")
HISTORY_UNIT_LINES = 2000  # events per application of the generated history (then its end event)
HISTORY_CHECKPOINT_SECONDS = 2.0  # [spark] checkpoint_seconds of the history runs
HISTORY_BOUND = 1.25  # peak RSS at 4N applications / at N: "bounded" below this

# --- the PySpark jobs ------------------------------------------------------------------------

_SESSION = """
import json, sys, time
from pyspark.sql import SparkSession, functions as F
spark = (SparkSession.builder.master("local[1]").appName({app!r})
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
         .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
         .config("spark.driver.memory", "1g")
         .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", {events!r})
         .config("spark.sql.warehouse.dir", {warehouse!r})
         .config("spark.hadoop.javax.jdo.option.ConnectionURL",
                 "jdbc:derby:;databaseName={metastore};create=true")
         .enableHiveSupport().getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
"""

# A realistic mix: the statement kinds rotate, so every kind appears N/6 times. Sources are small
# (the event log's size comes from plans, stages and tasks, not from the data).
_CORPUS_BODY = """
N = {statements}
PARQUET = {parquet!r}
for db in ("raw", "mart", "rpt"):
    spark.sql(f"create database {{db}}")
spark.sql('''create table raw.orders using parquet as
             select id as order_id, id % 997 as customer_id, id % 211 as product_id,
                    cast(id * 7 % 10000 as decimal(12,2)) / 100 as amount,
                    date_add(date'2026-01-01', cast(id % 300 as int)) as order_date,
                    case when id % 10 = 0 then 'RETURNED' when id % 3 = 0 then 'SHIPPED' else 'OPEN' end as status
             from range(20000)''')
spark.sql('''create table raw.customers using parquet as
             select id as customer_id, concat('customer ', id) as name,
                    element_at(array('DE', 'FR', 'US', 'JP', 'BR'), cast(id % 5 + 1 as int)) as country,
                    id % 7 = 0 as is_test from range(997)''')
spark.sql('''create table raw.products using parquet as
             select id as product_id, concat('sku-', id) as sku, cast(id % 50 as double) + 0.99 as list_price,
                    element_at(array('books', 'garden', 'toys', 'food'), cast(id % 4 + 1 as int)) as category
             from range(211)''')
for k in range(6):
    spark.sql(f'''create table mart.enriched_{{k}} (order_id bigint, customer string, country string,
                  sku string, gross decimal(18,2), order_date date) using parquet''')
    spark.sql(f'''create table rpt.daily_{{k}} (country string, order_date date, orders bigint,
                  revenue decimal(28,2), customers bigint) using parquet''')
for i in range(N):
    kind = i % 6
    if kind == 0:
        spark.sql(f'''create table mart.ctas_{{i}} using parquet as
                      select order_id, customer_id, upper(status) as status_uc,
                             amount * 1.19 as gross_{{i}}, round(amount / (1 + {{i % 5}}), 2) as share,
                             year(order_date) * 100 + month(order_date) as period
                      from raw.orders where amount > {{i % 40}} and status <> 'RETURNED' ''')
    elif kind == 1:
        spark.sql(f'''insert overwrite table mart.enriched_{{i % 6}}
                      select o.order_id, c.name, c.country, p.sku,
                             cast(o.amount * (1 - {{i % 9}} / 100.0) as decimal(18,2)), o.order_date
                      from raw.orders o join raw.customers c on o.customer_id = c.customer_id
                      join raw.products p on o.product_id = p.product_id
                      where not c.is_test and p.category <> 'food' and o.order_id % {{2 + i % 5}} = 0''')
    elif kind == 2:
        spark.sql(f'''insert overwrite table rpt.daily_{{i % 6}}
                      select country, order_date, count(*), sum(gross), count(distinct customer)
                      from mart.enriched_{{(i + 5) % 6}} group by country, order_date''')
    elif kind == 3:
        (spark.table("raw.orders").join(spark.table("raw.products"), "product_id")
         .where(F.col("amount") > i % 30)
         .groupBy("category", "status").agg(F.sum("amount").alias("total"), F.count("*").alias("n"))
         .write.mode("overwrite").parquet(f"{{PARQUET}}/category_totals/run={{i}}"))
    elif kind == 4:
        spark.sql(f'''create table mart.top_customers_{{i}} using parquet as
                      select c.customer_id, c.name, c.country, sum(o.amount) as spent,
                             rank() over (partition by c.country order by sum(o.amount) desc) as rnk
                      from raw.orders o join raw.customers c on o.customer_id = c.customer_id
                      group by c.customer_id, c.name, c.country having sum(o.amount) > {{i % 100}}''')
    else:
        spark.read.parquet(f"{{PARQUET}}/category_totals/run={{i - 2}}").where("n > 0").collect()
        spark.sql(f"select country, sum(revenue) from rpt.daily_{{i % 6}} group by country").collect()
    if i % 25 == 0:
        print(f"statement {{i}}/{{N}}", file=sys.stderr, flush=True)
"""

_FRESH_BODY = """
K, PAUSE = {runs}, {pause}
spark.sql("create database fresh")
spark.sql('''create table fresh.src using parquet as
             select id, id % 13 as bucket, concat('name ', id) as name, cast(id % 1000 as double) / 10 as amount
             from range(5000)''')
print(json.dumps({{"ready": time.time()}}), flush=True)
time.sleep(PAUSE)
for i in range(K):
    spark.sql(f'''create table fresh.t{{i}} using parquet as
                  select bucket, upper(name) as name_uc, amount * {{i + 1}} as scaled
                  from fresh.src where amount > {{i}}''')
    print(json.dumps({{"i": i, "end": time.time()}}), flush=True)
    time.sleep(PAUSE)
print(json.dumps({{"done": time.time()}}), flush=True)
"""


def _job_script(root: Path, app: str, body: str) -> str:
    session = _SESSION.format(app=app, events=(root / "events").as_uri(),
                              warehouse=(root / "warehouse").as_uri(), metastore=root / "metastore_db")
    return textwrap.dedent(session) + textwrap.dedent(body) + "\nspark.stop()\n"


def _spark_env() -> dict[str, str]:
    return {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}


def _pyspark_version() -> str:
    import pyspark
    return pyspark.__version__


# --- corpus ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Corpus:
    events: Path  # the spark.eventLog.dir: what the extractor is pointed at
    files: list[Path]  # its data files (events_<n>_<app>.zstd of the rolling log)
    compressed_bytes: int
    decompressed_bytes: int
    lines: int
    statements: int
    generated_seconds: float
    cached: bool


def _data_files(events: Path) -> list[Path]:
    return sorted(p for p in events.rglob("*") if p.is_file() and p.name.startswith("events_")
                  and not p.name.endswith(".crc"))


def ensure_corpus(statements: int) -> Corpus:
    """The real event log of one PySpark application running `statements` SQL statements:
    generated on first use, then read from the cache (keyed by the job script and versions)."""
    probe = _job_script(Path("/ROOT"), "navd_bench_corpus",
                        _CORPUS_BODY.format(statements=statements, parquet="/ROOT/parquet"))
    key = hashlib.sha256(f"{probe}\n{_pyspark_version()}\n{platform.python_version()}".encode()).hexdigest()[:16]
    home = CORPUS_ROOT / key
    manifest = home / "manifest.json"
    if manifest.exists():
        meta = json.loads(manifest.read_text())
        files = _data_files(home / "events")
        return Corpus(home / "events", files, sum(f.stat().st_size for f in files), meta["decompressed_bytes"],
                      meta["lines"], statements, meta["generated_seconds"], cached=True)

    shutil.rmtree(home, ignore_errors=True)
    (home / "events").mkdir(parents=True)
    scratch = Path(tempfile.mkdtemp(prefix="navd-bench-spark-corpus-"))
    try:
        (scratch / "events").symlink_to(home / "events")
        script = _job_script(scratch, "navd_bench_corpus",
                             _CORPUS_BODY.format(statements=statements, parquet=(scratch / "parquet").as_uri()))
        sys.stderr.write(f"generating the event-log corpus ({statements} statements, one PySpark app; "
                         f"cached in {home.relative_to(REPO)}) ...\n")
        start = time.perf_counter()
        tail: deque[str] = deque(maxlen=60)
        with subprocess.Popen([sys.executable, "-c", script], cwd=scratch, env=_spark_env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
            assert proc.stderr is not None
            for line in proc.stderr:  # the job's progress lines, and the tail for an error
                tail.append(line)
                if line.startswith("statement "):
                    sys.stderr.write(f"  {line}")
            returncode = proc.wait()
        seconds = time.perf_counter() - start
        if returncode != 0:
            raise RuntimeError(f"corpus job failed ({returncode}):\n{''.join(tail)[-3000:]}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    files = _data_files(home / "events")
    if not files:
        raise RuntimeError(f"the corpus job wrote no event log under {home / 'events'}")
    decompressed, lines = baseline_pass(files)
    manifest.write_text(json.dumps({"statements": statements, "decompressed_bytes": decompressed,
                                    "lines": lines, "generated_seconds": seconds,
                                    "pyspark": _pyspark_version(),
                                    "files": [str(f.relative_to(home)) for f in files]}, indent=2) + "\n")
    return Corpus(home / "events", files, sum(f.stat().st_size for f in files), decompressed, lines,
                  statements, seconds, cached=False)


FIXTURES = REPO / "tests" / "fixtures" / "spark_events"


def captured_corpus(copies: int) -> Corpus:
    """The captured real event logs of tests/fixtures/spark_events (Spark 4 applications, one
    per file), `copies` times each under application ids of their own, as Spark's single-file
    zstd logs: a corpus of many applications that needs no PySpark run (on a host too loaded to
    run the corpus job in reasonable time). `statements` is 0: it is not the job's corpus."""
    home = CORPUS_ROOT / f"captured-{copies}"
    events = home / "events"
    shutil.rmtree(home, ignore_errors=True)
    events.mkdir(parents=True)
    compressor = zstandard.ZstdCompressor()
    for fixture in sorted(FIXTURES.glob("*.jsonl")):
        text = fixture.read_bytes()
        app_id = next(str(json.loads(line)["App ID"]) for line in text.splitlines()
                      if b'"SparkListenerApplicationStart"' in line).encode()
        for n in range(copies):
            copy_id = app_id + f"c{n:04d}".encode()
            (events / f"{copy_id.decode()}.zstd").write_bytes(compressor.compress(text.replace(app_id, copy_id)))
    files = sorted(p for p in events.iterdir() if p.is_file())
    decompressed, lines = baseline_pass(files)
    return Corpus(events, files, sum(f.stat().st_size for f in files), decompressed, lines, 0, 0.0, cached=False)


# --- throughput ------------------------------------------------------------------------------


def baseline_pass(files: list[Path]) -> tuple[int, int]:
    """Decompress (zstandard streaming, across frames) and json.loads every line:
    (decompressed bytes, lines)."""
    total = lines = 0
    loads = json.loads
    for path in files:
        with open(path, "rb") as raw:
            if path.suffix == ".zstd":
                stream: Any = io.BufferedReader(
                    zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True), 1 << 20)
            else:
                stream = raw
            for line in stream:
                total += len(line)
                if line.strip():
                    loads(line)
                    lines += 1
    return total, lines


def event_mix(files: list[Path]) -> list[dict[str, Any]]:
    """Events of the corpus by type: count and decompressed MB, biggest first."""
    count: dict[str, int] = defaultdict(int)
    size: dict[str, int] = defaultdict(int)
    for path in files:
        with open(path, "rb") as raw:
            stream: Any = (io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True))
                           if path.suffix == ".zstd" else raw)
            for line in stream:
                if line.strip():
                    kind = str(json.loads(line).get("Event")).rsplit(".", 1)[-1]
                    count[kind] += 1
                    size[kind] += len(line)
    return [{"event": k, "count": count[k], "mb": size[k] / 1e6} for k in sorted(size, key=lambda k: -size[k])]


class TimedIndex(RecordingIndex):
    """A RecordingIndex that also counts and times every Solr request by kind, on whichever
    thread sent it (the writer's threads included) while `timing()` is open: where the pass's
    Solr time goes (the extractor's own reads, the posts, deletions, commits)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._times_lock = threading.Lock()
        self._times: dict[str, list[float]] | None = None

    def request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        if self._times is None:
            return super().request(method, path, **kwargs)
        start = time.perf_counter()
        try:
            return super().request(method, path, **kwargs)
        finally:
            seconds = time.perf_counter() - start
            kind = _request_kind(method, path, kwargs.get("params"), kwargs.get("data"))
            with self._times_lock:
                if self._times is not None:
                    entry = self._times.setdefault(kind, [0, 0.0])
                    entry[0] += 1
                    entry[1] += seconds

    @contextlib.contextmanager
    def timing(self) -> Any:
        """The dict {kind: [requests, seconds]} of the requests sent inside the block."""
        kept: dict[str, list[float]] = {}
        with self._times_lock:
            self._times = kept
        try:
            yield kept
        finally:
            with self._times_lock:
                self._times = None


def _request_kind(method: str, path: str, params: Any, data: Any) -> str:
    endpoint = path.rstrip("/").rsplit("/", 1)[-1]
    core = path.strip("/").split("/", 1)[0]
    if endpoint == "update":
        params = dict(params or {})
        if params.get("commit") == "true" or params.get("softCommit") == "true":
            return f"commit {core}"
        body = data if isinstance(data, bytes) else b""
        if body.lstrip()[:1] != b"[":
            return f"delete {core}"
        if params.get("failOnVersionConflicts") == "false":
            return f"update {core} (stubs/atomic)"
        return f"update {core}"
    return f"{endpoint} {core}"


def clear_cores(index: SolrIndex) -> None:
    for core in CORES:
        index.delete_query(core, "*:*")
        index.commit(core)


def navd_pass(index: SolrIndex, events: Path) -> dict[str, Any]:
    """A fresh extractor (fresh state dir) over the corpus: run_pass + close, timed."""
    state = Path(tempfile.mkdtemp(prefix="navd-bench-spark-state-"))
    try:
        # As `navd extract spark` builds it (component.build): asking the index before a DROP,
        # and withdrawing the OpenLineage listener's lineage of the applications at each commit.
        extractor = SparkExtractor(cluster=CLUSTER, directories=[str(events)], state_dir=state,
                                   extractor_run_id="bench-spark##1", index=index, post_commit=POST_COMMIT_HOOKS)
        writer = IndexWriter(index)
        start = time.perf_counter()
        report = run_pass(extractor, writer)
        ok = writer.close()
        seconds = time.perf_counter() - start
        if not ok:
            raise RuntimeError("navd pass: writer.close() returned False (documents not written)")
        return {"seconds": seconds, "lines": report.lines, "records": report.records,
                "warnings": report.warnings, "counts": writer.counts}
    finally:
        shutil.rmtree(state, ignore_errors=True)


def _timed(fn: Any, solr_pid: int | None) -> tuple[Any, Run]:
    before = _cpu_snapshot(solr_pid)
    start = time.perf_counter()
    value = fn()
    seconds = time.perf_counter() - start
    after = _cpu_snapshot(solr_pid)
    if isinstance(value, dict) and "seconds" in value:
        seconds = value["seconds"]
    if before is None or after is None:
        return value, Run(seconds)
    host, python, solr = (b - a for a, b in zip(before, after))
    return value, Run(seconds, python, solr, max(0.0, host - python - solr))


def measure_throughput(index: TimedIndex, corpus: Corpus, solr_pid: int | None) -> dict[str, Any]:
    progress = sys.stderr
    mb = corpus.decompressed_bytes / 1e6
    progress.write("warm-up: baseline + navd pass (untimed) ...\n")
    baseline_pass(corpus.files)
    clear_cores(index)
    warm = navd_pass(index, corpus.events)
    if warm["lines"] != corpus.lines:
        raise RuntimeError(f"navd read {warm['lines']} lines, the baseline {corpus.lines}")
    runs: dict[str, list[dict[str, Any]]] = {"baseline": [], "navd": [], "raw_post": []}
    recorded = Recorded(())
    for n in range(2):
        progress.write(f"run {n + 1}/2: baseline (zstd + json.loads) ...")
        progress.flush()
        (size, lines), run = _timed(lambda: baseline_pass(corpus.files), solr_pid)
        if (size, lines) != (corpus.decompressed_bytes, corpus.lines):
            raise RuntimeError(f"baseline read {size} B / {lines} lines, expected "
                               f"{corpus.decompressed_bytes} / {corpus.lines}")
        runs["baseline"].append({**dataclasses.asdict(run), "mb_per_s": mb / run.seconds})
        progress.write(f" {run.seconds:.2f} s, {mb / run.seconds:.1f} MB/s\n")
        clear_cores(index)
        progress.write(f"run {n + 1}/2: navd SparkExtractor.run_pass -> Solr ...")
        progress.flush()
        with index.recording() as updates, index.timing() as requests_by_kind:
            result, run = _timed(lambda: navd_pass(index, corpus.events), solr_pid)
        recorded = Recorded(tuple(updates))
        for core in CORES:
            index.commit(core)
        found = {core: index.count(core) for core in CORES}
        runs["navd"].append({**dataclasses.asdict(run), "mb_per_s": mb / run.seconds,
                             **{k: result[k] for k in ("lines", "records", "warnings", "counts")},
                             "indexed": found,
                             "solr_requests": {k: {"requests": int(n), "seconds": t}
                                               for k, (n, t) in sorted(requests_by_kind.items())}})
        progress.write(f" {run.seconds:.2f} s, {mb / run.seconds:.1f} MB/s "
                       f"({result['records']:,} records, {found['elements']:,} elements, "
                       f"{found['relations']:,} relations in Solr)\n")
        for kind, (count, seconds) in sorted(requests_by_kind.items(), key=lambda kv: -kv[1][1]):
            progress.write(f"    Solr {kind}: {int(count)} requests, {seconds:.2f} s summed over threads\n")
        progress.write(f"run {n + 1}/2: raw post of what navd wrote, fresh cores ...")
        progress.flush()
        with fresh_cores(index) as fresh:
            raw, run = _timed(lambda: post_recorded(index, fresh, recorded), solr_pid)
        run = dataclasses.replace(run, seconds=raw.seconds)
        runs["raw_post"].append({**dataclasses.asdict(run), "mb_per_s": mb / run.seconds})
        progress.write(f" {run.seconds:.2f} s\n")
    best = {k: max(r["mb_per_s"] for r in v) for k, v in runs.items()}
    ratio = best["navd"] / best["baseline"]
    raw_ratio = best["navd"] / best["raw_post"]
    return {"runs": runs, "best_mb_per_s": best, "ratio": ratio, "goal": THROUGHPUT_GOAL,
            "met": ratio >= THROUGHPUT_GOAL,
            "raw_post": {"ratio": raw_ratio, "goal": RAW_POST_GOAL, "met": raw_ratio >= RAW_POST_GOAL,
                         "documents": recorded.documents, "requests": recorded.requests,
                         "megabytes": recorded.megabytes, "described": describe(recorded)}}


def stage_breakdown(corpus: Corpus) -> dict[str, Any]:
    """Unprofiled seconds of the navd pass's stages without Solr, each run in full from a fresh
    state dir, best of 2: what each layer adds (cProfile inflates Python-heavy code unevenly)."""
    from navd.extractors.common.tailing import LocalFileSystem
    from navd.extractors.spark.logfiles import EventLogCursorStore, EventLogTailer

    def tail(parse: bool) -> None:
        with tempfile.TemporaryDirectory(prefix="navd-bench-spark-state-") as state:
            tailer = EventLogTailer(LocalFileSystem(), [str(corpus.events)], EventLogCursorStore(state))
            loads = json.loads
            for _log, line in tailer.poll():
                if parse and line.text:
                    loads(line.text)
                tailer.advance(line.cursor)

    def events_only() -> None:
        # Reading + ApplicationProcessor.feed_line (JSON, events, plans), no records built.
        from navd.extractors.spark.events import ApplicationProcessor
        with tempfile.TemporaryDirectory(prefix="navd-bench-spark-state-") as state:
            tailer = EventLogTailer(LocalFileSystem(), [str(corpus.events)], EventLogCursorStore(state))
            processors: dict[str, ApplicationProcessor] = {}
            for event_log, line in tailer.poll():
                if line.text:
                    processor = processors.get(event_log.path)
                    if processor is None:
                        processor = processors[event_log.path] = ApplicationProcessor(
                            cluster=CLUSTER, default_fs="", source_name=event_log.path)
                    processor.feed_line(line.text)
                tailer.advance(line.cursor)

    def extract_only() -> None:
        with tempfile.TemporaryDirectory(prefix="navd-bench-spark-state-") as state:
            extractor = SparkExtractor(cluster=CLUSTER, directories=[str(corpus.events)], state_dir=Path(state),
                                       extractor_run_id="bench-spark##1")
            for _record in extractor.extract():
                pass

    stages = (("read", "tailer: read + zstd decode + split + UTF-8 lines", lambda: tail(False)),
              ("read_json", "... + json.loads of every line", lambda: tail(True)),
              ("events", "... + ApplicationProcessor.feed_line (events, plans)", events_only),
              ("extract", "SparkExtractor.extract(): ... + finish() + records", extract_only))
    out: dict[str, Any] = {}
    for key, label, fn in stages:
        best = float("inf")
        for _ in range(2):
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
        out[key] = {"label": label, "seconds": best, "mb_per_s": corpus.decompressed_bytes / 1e6 / best}
    return out


def profile_navd(index: SolrIndex, corpus: Corpus) -> dict[str, Any]:
    """One untimed navd pass under cProfile (calling thread: reading, decoding, parsing, records,
    documents, serialisation; the writer threads only post). Shares, not speeds."""
    clear_cores(index)
    profiler = cProfile.Profile()
    profiler.enable()
    navd_pass(index, corpus.events)
    profiler.disable()
    PROFILE_FILE.parent.mkdir(exist_ok=True)
    profiler.dump_stats(PROFILE_FILE)
    stats = pstats.Stats(profiler)
    total = stats.total_tt  # type: ignore[attr-defined]
    rows = []
    for (file, line, func), (_cc, calls, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append({"where": f"{_short(file)}:{line}:{func}", "calls": calls, "tottime": tt, "cumtime": ct})
    by_file: dict[str, float] = defaultdict(float)
    for r in rows:
        by_file[r["where"].rsplit(":", 2)[0]] += r["tottime"]
    top_self = sorted(rows, key=lambda r: -r["tottime"])[:25]
    top_cum = sorted(rows, key=lambda r: -r["cumtime"])[:35]
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
    return {"total_seconds": total,
            "self_time": [{**r, "share": r["tottime"] / total} for r in top_self],
            "cumulative": [{**r, "share": r["cumtime"] / total} for r in top_cum],
            "by_file": [{"file": f, "tottime": t, "share": t / total}
                        for f, t in sorted(by_file.items(), key=lambda kv: -kv[1])[:15]]}


def _short(file: str) -> str:
    if file == "~":
        return "<built-in>"
    if "/site-packages/" in file:
        return file.split("/site-packages/", 1)[1]
    stdlib = re.search(r"/lib/python3\.\d+/", file)
    if stdlib:
        return "stdlib/" + file[stdlib.end():]
    try:
        return str(Path(file).resolve().relative_to(REPO))
    except ValueError:
        return file


# --- freshness -------------------------------------------------------------------------------


class _ExtractorLoop(threading.Thread):
    """`navd extract spark` in a thread: run_pass, then sleep poll_seconds, until stopped."""

    def __init__(self, index: SolrIndex, events: Path, state: Path, poll_seconds: float) -> None:
        super().__init__(name="bench-spark-extract", daemon=True)
        self.extractor = SparkExtractor(cluster=CLUSTER, directories=[str(events)], state_dir=state,
                                        extractor_run_id="bench-spark-fresh##1", index=index,
                                        post_commit=POST_COMMIT_HOOKS)
        self.writer = IndexWriter(index)
        self.poll_seconds = poll_seconds
        self.stopping = threading.Event()
        self.passes: list[dict[str, float]] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                start = time.time()
                report = run_pass(self.extractor, self.writer)
                self.passes.append({"start": start, "seconds": time.time() - start,
                                    "lines": report.lines, "records": report.records})
                self.stopping.wait(self.poll_seconds)
        except BaseException as exc:  # reported by the main thread
            self.error = exc


def _reader(stream: Any, out: queue.Queue[dict[str, float]]) -> None:
    for line in stream:
        line = line.strip()
        if line.startswith("{"):
            try:
                out.put(json.loads(line))
            except ValueError:
                pass


def _has_upstream(index: SolrIndex, table: str, source: str) -> bool:
    try:
        graph = lineage(index, table, LineageOptions(direction="upstream"))
    except EntityNotFound:
        return False
    return any(n.qualified_name == source for n in graph.nodes)


def measure_freshness(index: SolrIndex, runs: int, pause: float) -> dict[str, Any]:
    poll_seconds = SparkConfig().poll_seconds
    root = Path(tempfile.mkdtemp(prefix="navd-bench-spark-fresh-"))
    (root / "events").mkdir()
    (root / "state").mkdir()
    loop = _ExtractorLoop(index, root / "events", root / "state", poll_seconds)
    proc: subprocess.Popen[str] | None = None
    ends: dict[int, float] = {}
    found: dict[int, float] = {}
    events: queue.Queue[dict[str, float]] = queue.Queue()
    progress = sys.stderr
    try:
        loop.start()
        script = _job_script(root, "navd_bench_freshness", _FRESH_BODY.format(runs=runs, pause=pause))
        with open(root / "spark.stderr", "w") as err:
            proc = subprocess.Popen([sys.executable, "-c", script], cwd=root, env=_spark_env(),
                                    stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True)
        threading.Thread(target=_reader, args=(proc.stdout, events), daemon=True,
                         name="bench-spark-stdout").start()
        progress.write(f"freshness: PySpark job with {runs} CTAS statements, {pause:.0f} s apart; "
                       f"extractor polling every {poll_seconds:.0f} s ...\n")
        deadline: float | None = None
        give_up = time.time() + 600 + runs * (pause + FRESHNESS_TIMEOUT_S)  # a hung job or Solr
        while len(found) < runs:
            if time.time() > give_up:
                raise RuntimeError(f"freshness: {len(ends)} of {runs} statements ended and {len(found)} "
                                   f"were resolved before the benchmark gave up")
            while True:
                try:
                    msg = events.get_nowait()
                except queue.Empty:
                    break
                if "i" in msg:
                    ends[int(msg["i"])] = float(msg["end"])
            for i, end in sorted(ends.items()):
                if i in found:
                    continue
                if _has_upstream(index, f"fresh.t{i}@primary", "fresh.src@primary"):
                    found[i] = time.time()
                    progress.write(f"  fresh.t{i}: lineage after {found[i] - end:.2f} s\n")
                elif time.time() - end > FRESHNESS_TIMEOUT_S:
                    found[i] = float("nan")
                    progress.write(f"  fresh.t{i}: NOT found within {FRESHNESS_TIMEOUT_S:.0f} s\n")
            if loop.error is not None:
                raise RuntimeError(f"extractor loop failed: {loop.error!r}") from loop.error
            if proc.poll() is not None and len(ends) < runs:
                # Read what is left of stdout before judging.
                time.sleep(0.5)
                if events.empty():
                    if deadline is None:
                        deadline = time.time() + 5
                    elif time.time() > deadline:
                        tail = (root / "spark.stderr").read_text()[-3000:]
                        raise RuntimeError(f"freshness job exited {proc.returncode} after "
                                           f"{len(ends)} of {runs} statements:\n{tail}")
            time.sleep(LINEAGE_POLL_S)
        proc.wait(timeout=120)
    finally:
        loop.stopping.set()
        loop.join(timeout=120)
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)  # its own session: the python driver and its JVM
                proc.wait(timeout=30)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        loop.writer.close()
        shutil.rmtree(root, ignore_errors=True)
    latencies = [found[i] - ends[i] for i in sorted(ends)]
    ok = [v for v in latencies if v == v]  # NaN: never found
    missing = len(latencies) - len(ok)
    p95 = _percentile(ok, 95) if ok else float("inf")
    if missing:
        p95 = float("inf") if missing > 0.05 * len(latencies) else p95
    return {"runs": runs, "pause_seconds": pause, "poll_seconds": poll_seconds,
            "lineage_poll_seconds": LINEAGE_POLL_S, "latencies_s": latencies, "not_found": missing,
            "p50_s": _percentile(ok, 50) if ok else None, "p95_s": p95 if p95 != float("inf") else None,
            "max_s": max(ok) if ok else None, "goal_s": FRESHNESS_GOAL_S,
            "met": missing == 0 and p95 <= FRESHNESS_GOAL_S,
            "extractor_passes": len(loop.passes),
            "pass_seconds": {"median": statistics.median(p["seconds"] for p in loop.passes),
                             "max": max(p["seconds"] for p in loop.passes)} if loop.passes else {}}


def _percentile(values: list[float], pct: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * pct / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


# --- first start over a history --------------------------------------------------------------


def history_logs(corpus: Corpus, applications: int, directory: Path) -> int:
    """A history of `applications` finished applications in `directory`: each the corpus
    application's first HISTORY_UNIT_LINES events and its end event, under an application id of
    its own (so its documents are its own), as Spark's single-file zstd logs. Returns the
    decompressed bytes of one."""
    lines: list[bytes] = []
    end = b""
    # One application's files only: the corpus job's rolling log, or the biggest captured log.
    first = corpus.files if corpus.statements else [max(corpus.files, key=lambda f: f.stat().st_size)]
    for path in first:
        with open(path, "rb") as raw:
            stream = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True))
            for line in stream:
                if b'"SparkListenerApplicationEnd"' in line[:64]:
                    end = line
                elif len(lines) < HISTORY_UNIT_LINES:
                    lines.append(line)
    start = next(line for line in lines if b'"SparkListenerApplicationStart"' in line[:64])
    app_id = str(json.loads(start)["App ID"]).encode()
    text = b"".join(lines) + end
    directory.mkdir(parents=True, exist_ok=True)
    compressor = zstandard.ZstdCompressor()
    for n in range(applications):
        copy_id = app_id + f"h{n:06d}".encode()
        (directory / f"{copy_id.decode()}.zstd").write_bytes(compressor.compress(text.replace(app_id, copy_id)))
    return len(text)


def first_start(server: EmbeddedSolr, index: SolrIndex, events: Path, work: Path) -> dict[str, Any]:
    """`navd extract spark --once` over `events` with a fresh state, in a child process: its
    peak RSS (the kernel's ru_maxrss of that child), wall time, what it read, and how many times
    it committed positions during the pass (its log lines saying so)."""
    clear_cores(index)
    state = work / f"state-{events.name}"
    config = work / f"navd-{events.name}.toml"
    credentials = server.credentials()
    solr = f'[solr]\nurl = "{server.url}"\n'
    if credentials is not None:
        password = work / "solr-password"
        password.write_text(credentials[1])
        password.chmod(0o600)
        solr += f'auth = "basic"\nusername = "{credentials[0]}"\npassword_file = "{password}"\n'
    config.write_text(f'{solr}[cluster]\nname = "{CLUSTER}"\n[logging]\nformat = "json"\nlevel = "info"\n'
                      f'[spark]\nevent_log_dirs = ["{events}"]\nstate_dir = "{state}"\n'
                      + (f'checkpoint_seconds = {HISTORY_CHECKPOINT_SECONDS}\n' if _has_checkpoints() else ""))
    out, err = work / f"{events.name}.out", work / f"{events.name}.err"
    navd_cli = str(Path(sys.executable).parent / "navd")
    start = time.perf_counter()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen([navd_cli, "extract", "spark", "--once"], stdout=stdout, stderr=stderr,
                                env={**os.environ, "NAVD_CONFIG": str(config)})
        _pid, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage, not all children's
        proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"navd extract spark --once failed ({proc.returncode}):\n{err.read_text()[-3000:]}")
    summary = re.search(r"spark: (\d+) new lines, (\d+) records written", out.read_text())
    checkpoints = sum(1 for line in err.read_text().splitlines()
                      if "positions committed during the pass" in line)
    return {"seconds": seconds, "max_rss_mb": usage.ru_maxrss / 1024,
            "lines": int(summary.group(1)) if summary else None,
            "records": int(summary.group(2)) if summary else None, "checkpoints": checkpoints}


def _has_checkpoints() -> bool:
    """Whether this navd has `[spark] checkpoint_seconds` (the same benchmark measures the
    navd before it, which read every log before writing and committed at the end only)."""
    return any(f.name == "checkpoint_seconds" for f in dataclasses.fields(SparkConfig))


def measure_history(server: EmbeddedSolr, index: SolrIndex, corpus: Corpus, applications: int) -> dict[str, Any]:
    """Peak RSS of a first start over `applications` and over 4x as many applications."""
    work = Path(tempfile.mkdtemp(prefix="navd-bench-spark-history-"))
    try:
        rows = []
        for count in (applications, 4 * applications):
            events = work / f"history-{count}"
            unit = history_logs(corpus, count, events)
            sys.stderr.write(f"first start over {count} applications ({count * unit / 1e6:.1f} MB of events) ...")
            sys.stderr.flush()
            row = {"applications": count, "decompressed_mb": count * unit / 1e6,
                   **first_start(server, index, events, work)}
            sys.stderr.write(f" {row['seconds']:.1f} s, peak RSS {row['max_rss_mb']:.0f} MB\n")
            rows.append(row)
        clear_cores(index)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    growth = rows[1]["max_rss_mb"] / rows[0]["max_rss_mb"]
    return {"rows": rows, "unit_lines": HISTORY_UNIT_LINES, "checkpoint_seconds": HISTORY_CHECKPOINT_SECONDS,
            "rss_growth": growth, "bounded": growth < HISTORY_BOUND,
            "checkpointed": all(r["checkpoints"] > 0 for r in rows)}


# --- reporting -------------------------------------------------------------------------------


def print_report(report: dict[str, Any]) -> None:
    setup, corpus, tp, fr = report["setup"], report["corpus"], report["throughput"], report["freshness"]
    cpus = setup["cpus"]
    out = sys.stdout
    out.write(f"\nnavd Spark extractor benchmark: Solr {setup['solr_version']} (heap {setup['heap']}) on the "
              f"same host; {cpus} CPU(s); Python {setup['python']}; PySpark {setup['pyspark']}\n")
    out.write(f"load average at start {setup['loadavg_start']}, at end {setup['loadavg_end']}\n")
    if setup.get("pinned"):
        out.write("--pin: this process on CPU 0, Solr on the other CPU(s) (throughput, profile and stages)\n")
    out.write(f"corpus: {len(corpus['files'])} captured real Spark event logs (tests/fixtures/spark_events, "
              f"copied under ids of their own), " if not corpus["statements"] else
              f"corpus: 1 real Spark event log, {corpus['statements']} SQL statements, "
              f"{len(corpus['files'])} file(s), {corpus['compressed_mb']:.2f} MB zstd -> "
              f"{corpus['decompressed_mb']:.2f} MB decompressed, {corpus['lines']:,} events "
              f"({'cached' if corpus['cached'] else 'generated'}: {corpus['generated_seconds']:.0f} s to generate)\n\n")

    mix = corpus.get("event_mix") or []
    if mix:
        out.write("biggest event types: " + ", ".join(
            f"{m['event']} {m['count']:,} x = {m['mb']:.1f} MB" for m in mix[:5]) + "\n\n")
    out.write(f"{'MB/s (decompressed)':<46} {'run 1':>10} {'run 2':>10} {'best':>10} {'vs base':>8}\n")
    labels = {"baseline": "zstd + json.loads [baseline]",
              "navd": "navd run_pass(IndexWriter) + close -> Solr",
              "raw_post": "raw post of navd's documents [fair baseline]"}
    base = tp["best_mb_per_s"]["baseline"]
    any_noisy = False
    for key, label in labels.items():
        cells = []
        for run in tp["runs"][key]:
            noisy = _noisy(run, cpus)
            any_noisy |= noisy
            cells.append(f"{run['mb_per_s']:.2f}" + ("*" if noisy else ""))
        best = tp["best_mb_per_s"][key]
        out.write(f"{label:<46} {cells[0]:>10} {cells[1]:>10} {best:>10.2f} {best / base:>8.3f}\n")
    raw = tp["raw_post"]
    nav = tp["runs"]["navd"][-1]
    out.write(f"navd pass: {nav['lines']:,} lines -> {nav['records']:,} records "
              f"({nav['counts']}), {nav['warnings']} warnings; Solr holds {nav['indexed']['elements']:,} "
              f"elements, {nav['indexed']['relations']:,} relations\n")
    out.write(f"\nnavd / baseline (best of 2): {tp['ratio']:.3f}   goal >= {tp['goal']}: "
              f"{'met' if tp['met'] else 'NOT met'}\n")
    out.write(f"navd / raw post (best of 2): {raw['ratio']:.3f}   goal >= {raw['goal']}: "
              f"{'met' if raw['met'] else 'NOT met'}   (what navd wrote: {raw['described']})\n")
    cpu = {key: min((r["python_cpu"] + r["solr_cpu"] for r in tp["runs"][key] if r.get("python_cpu") is not None),
                    default=None) for key in ("navd", "raw_post")}
    if cpu["navd"] and cpu["raw_post"]:
        # under other processes' load the wall-clock ratio is noise; the CPU-seconds navd and
        # Solr spend for the same documents much less so
        out.write(f"  by CPU-seconds of navd + Solr (raw post / navd pass, least of each): "
                  f"{cpu['raw_post'] / cpu['navd']:.3f}\n")
    if any_noisy:
        out.write("* other processes on this host used > 10% of its CPU during that run\n")
    if all(r.get("python_cpu") is not None for v in tp["runs"].values() for r in v):
        out.write(f"\nCPU-seconds per run: this Python process / Solr JVM / other processes "
                  f"(capacity = {cpus} CPUs x wall)\n")
        for key, label in labels.items():
            for n, run in enumerate(tp["runs"][key], 1):
                out.write(f"  {label:<44} run {n}: {run['python_cpu']:5.1f} / {run['solr_cpu']:5.1f} / "
                          f"{run['other_cpu']:5.1f} of {cpus * run['seconds']:5.1f}  ({run['seconds']:.2f} s wall)\n")

    stages = tp.get("stages")
    if stages:
        nav_s = min(r["seconds"] for r in tp["runs"]["navd"])
        base_s = min(r["seconds"] for r in tp["runs"]["baseline"])
        out.write(f"\nstages of the navd pass, cumulative, no Solr (seconds best of 2, share of navd's best "
                  f"{nav_s:.2f} s):\n")
        out.write(f"  {'zstd + json.loads [baseline]':<58} {base_s:6.2f} s {base_s / nav_s:6.1%}  "
                  f"{corpus['decompressed_mb'] / base_s:7.1f} MB/s\n")
        for st in stages.values():
            out.write(f"  {st['label']:<58} {st['seconds']:6.2f} s {st['seconds'] / nav_s:6.1%}  "
                      f"{st['mb_per_s']:7.1f} MB/s\n")
        out.write(f"  {'full pass: ... + documents + posting + close (Solr)':<58} {nav_s:6.2f} s {1:6.1%}  "
                  f"{corpus['decompressed_mb'] / nav_s:7.1f} MB/s\n")

    prof = report.get("profile")
    if prof:
        out.write(f"\nwhere the navd pass spends its calling thread's time (cProfile, untimed run, "
                  f"{prof['total_seconds']:.1f} s profiled; saved to {PROFILE_FILE.relative_to(REPO)}):\n")
        out.write("  self time by function:\n")
        for r in prof["self_time"][:20]:
            out.write(f"    {r['share']:6.1%}  {r['tottime']:6.2f} s  {r['calls']:>9,}  {r['where']}\n")
        out.write("  cumulative, by function:\n")
        for r in prof["cumulative"][:30]:
            out.write(f"    {r['share']:6.1%}  {r['cumtime']:6.2f} s  {r['calls']:>9,}  {r['where']}\n")
        out.write("  self time by file:\n")
        for r in prof["by_file"][:12]:
            out.write(f"    {r['share']:6.1%}  {r['tottime']:6.2f} s  {r['file']}\n")

    hist = report.get("history")
    if hist:
        unit = (f"the corpus's first {hist['unit_lines']:,} events and its end" if corpus["statements"]
                else "the biggest captured log")
        out.write(f"\nfirst start over a history (`navd extract spark --once` in a child process, fresh state; "
                  f"each application {unit}, zstd; [spark] checkpoint_seconds = {hist['checkpoint_seconds']:g}):\n")
        for r in hist["rows"]:
            out.write(f"  {r['applications']:>6,} applications ({r['decompressed_mb']:7.1f} MB): "
                      f"peak RSS {r['max_rss_mb']:6.1f} MB, {r['seconds']:6.1f} s, {r['lines'] or 0:,} lines, "
                      f"{r['records'] or 0:,} records, {r['checkpoints']} checkpoints during the pass\n")
        out.write(f"  peak RSS at 4N / at N: {hist['rss_growth']:.2f} ({'bounded' if hist['bounded'] else 'GROWS'}"
                  f" with the history; bound {HISTORY_BOUND}); positions committed during the pass: "
                  f"{'yes' if hist['checkpointed'] else 'NO'}\n")

    if fr:
        out.write(f"\nfreshness: {fr['runs']} CTAS statements {fr['pause_seconds']:.0f} s apart, extractor poll "
                  f"{fr['poll_seconds']:.0f} s ({fr['extractor_passes']} passes, median "
                  f"{fr['pass_seconds'].get('median', 0):.2f} s, max {fr['pass_seconds'].get('max', 0):.2f} s), "
                  f"lineage asked every {fr['lineage_poll_seconds']} s\n")
        lat = " ".join(f"{v:.1f}" if v == v else "never" for v in fr["latencies_s"])
        out.write(f"  SQL execution end -> `navd lineage` upstream has the source, seconds: {lat}\n")
        fmt = lambda v: f"{v:.2f} s" if v is not None else "-"  # noqa: E731
        missing = f"   not found: {fr['not_found']}" if fr["not_found"] else ""
        out.write(f"  p50 {fmt(fr['p50_s'])}   p95 {fmt(fr['p95_s'])}   max {fmt(fr['max_s'])}{missing}\n")
        out.write(f"  goal p95 <= {fr['goal_s']:.0f} s: {'met' if fr['met'] else 'NOT met'}\n")
    out.write(f"\nfigures written to {RESULT_FILE.relative_to(REPO)}\n")


# --- main ------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--statements", type=int, default=300,
                        help="SQL statements in the corpus application (default 300)")
    parser.add_argument("--freshness-runs", type=int, default=10,
                        help="CTAS statements in the freshness job (default 10)")
    parser.add_argument("--pause", type=float, default=2.0,
                        help="seconds the freshness job sleeps between statements (default 2)")
    parser.add_argument("--heap", default="1g", help="Solr JVM heap (default 1g)")
    parser.add_argument("--profile", choices=("auto", "always", "never"), default="auto",
                        help="one extra untimed navd pass under cProfile: 'auto' (default) when the "
                             "throughput goal is not met")
    parser.add_argument("--pin", action="store_true",
                        help="run this process on CPU 0 and Solr on the other CPUs during the throughput "
                             "runs, as if Solr had its own host (as bench_writer.py --pin)")
    parser.add_argument("--history", type=int, default=25, metavar="N",
                        help="peak RSS of a first start over N and 4N generated applications "
                             "(default 25; 0 to skip)")
    parser.add_argument("--no-freshness", action="store_true", help="skip the freshness measurement")
    parser.add_argument("--captured", type=int, default=0, metavar="COPIES",
                        help="instead of the PySpark corpus: the captured event logs of tests/fixtures/"
                             "spark_events, COPIES times each, as single-file zstd logs (many small "
                             "applications; no PySpark run)")
    args = parser.parse_args(argv)
    if min(args.statements, args.freshness_runs) < 1 or args.pause < 0 or args.history < 0:
        parser.error("--statements and --freshness-runs must be >= 1, --pause and --history >= 0")

    setup_logging("console", "warning")  # keep navd's structlog lines out of the report
    loadavg_start = _loadavg()
    corpus = captured_corpus(args.captured) if args.captured else ensure_corpus(args.statements)
    sys.stderr.write(f"corpus: {corpus.decompressed_bytes / 1e6:.2f} MB decompressed, {corpus.lines:,} events "
                     f"in {len(corpus.files)} file(s)\n")

    home = Path(tempfile.mkdtemp(prefix="navd-bench-solr-"))
    distribution = SolrDistribution(DEFAULT_SOLR_VERSION, default_solr_dist_dir())
    server = EmbeddedSolr(home, free_port(), args.heap, distribution)
    profile: dict[str, Any] | None = None
    try:
        distribution.ensure()
        status = server.start()
        config = server.client_config()
        cpus = os.sched_getaffinity(0)
        if args.pin:
            pin_cpus(status.pid)
        with TimedIndex(config) as index:
            init_solr(index)
            throughput = measure_throughput(index, corpus, status.pid)
            if args.profile == "always" or (args.profile == "auto" and not throughput["met"]):
                sys.stderr.write("profiling one navd pass (cProfile, untimed) ...\n")
                profile = profile_navd(index, corpus)
            sys.stderr.write("stages of the navd pass without Solr ...\n")
            throughput["stages"] = stage_breakdown(corpus)
            # The child processes below (navd, PySpark) are not pinned: they inherit this affinity.
            os.sched_setaffinity(0, cpus)
            history = measure_history(server, index, corpus, args.history) if args.history else None
            clear_cores(index)
            freshness = None if args.no_freshness else measure_freshness(index, args.freshness_runs, args.pause)
            solr_version = status.solr_version or "unknown"
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)

    report: dict[str, Any] = {
        "setup": {"solr_version": solr_version, "heap": args.heap, "cpus": os.cpu_count() or 1,
                  "python": platform.python_version(), "pyspark": _pyspark_version(),
                  "zstandard": zstandard.__version__, "navd_version": navd.__version__,
                  "git_commit": _git_commit(), "when": datetime.now(UTC).isoformat(timespec="seconds"),
                  "loadavg_start": loadavg_start, "loadavg_end": _loadavg(), "pinned": args.pin},
        "corpus": {"statements": corpus.statements, "directory": str(corpus.events.relative_to(REPO)),
                   "files": [str(f.relative_to(corpus.events)) for f in corpus.files],
                   "compressed_mb": corpus.compressed_bytes / 1e6,
                   "decompressed_mb": corpus.decompressed_bytes / 1e6, "lines": corpus.lines,
                   "cached": corpus.cached, "generated_seconds": corpus.generated_seconds,
                   "event_mix": event_mix(corpus.files)},
        "throughput": throughput,
        "freshness": freshness,
        "history": history,
    }
    if profile:
        report["profile"] = profile
    RESULT_FILE.parent.mkdir(exist_ok=True)
    RESULT_FILE.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print_report(report)
    return 0


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
