"""S3 extractor benchmark: navd's listing of a bucket into Solr, complete and after a 1% change,
against a raw listing of the same bucket with the same client in the same run.

Run: python tests/bench/bench_s3.py [--objects 200000] [--tables 20]

It starts the dev S3 server (moto's, `navd_devstack.s3`, a process of its own) with a bucket of
`--objects` objects preloaded into its memory (as many PUTs would take longer than the rest:
the layout is `t<NN>/dt=<date>/part-<NNNNN>-<hash>.parquet`, `--tables` tables of 100-object
date partitions), and its own embedded Solr (navd's server code, temporary home, free port, 1g
heap). Then, each figure with the wall time, the S3 requests, the objects and prefixes the
store returned and objects per second:

1. raw: `list_objects_v2` pages of the whole bucket through the client navd makes
   (`extractors.s3.client.make_client`), counting the objects, nothing else: the floor;
2. full: a fresh `S3Extractor` (fresh state) `run_pass(IndexWriter)` + `writer.close()` into
   emptied cores: the first run, a complete listing that writes everything;
3. the 1% change, made over HTTP: a new date partition of 100 objects in some tables, the
   oldest partition of as many others deleted (0.5% + 0.5%: 10 + 10 tables of 20 at 200,000);
4. incremental: the next run (per-prefix high-water marks: one level per directory of
   directories, the newest partitions from their marks);
5. complete: a complete listing of the changed bucket (what `[s3] complete_listing_hours`
   schedules), writing only what changed (here nothing: the incremental run wrote it);
6. raw again, over the changed bucket.

The raw listing asks for no owners; navd's listings do (`FetchOwner`), which makes every page
longer to answer and to parse. Ratios are printed (full / raw, incremental / full, complete /
raw); no thresholds. moto keeps
the bucket in memory and sorts every key under the prefix per page, so the store's own time
grows with the bucket: the raw listing pays it too, which is why the ratios, not the seconds,
are the figures to compare. Written to .bench/s3.json. Not collected by pytest (bench_*.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import navd
from navd.config import DEFAULT_SOLR_VERSION, default_solr_dist_dir
from navd.extractors.s3.client import S3Credentials, make_client
from navd.extractors.s3.extractor import S3Extractor
from navd.extractors.s3.settings import S3Config
from navd.index.admin import init_solr
from navd.index.client import IndexWriter, SolrIndex
from navd.logs import setup_logging
from navd.solr.server import EmbeddedSolr, SolrDistribution, free_port
from navd_devstack.s3 import DevS3
from navd.extractors import run_pass

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_writer import _git_commit  # noqa: E402  (same directory)

REPO = Path(__file__).resolve().parents[2]
BENCH_DIR = REPO / ".bench"
RESULT_FILE = BENCH_DIR / "s3.json"
BUCKET = "navd-bench"
PARTITION_OBJECTS = 100
FIRST_DAY = date(2020, 1, 1)
CORES = ("elements", "relations")


@dataclasses.dataclass(frozen=True)
class Layout:
    tables: int
    partitions: int  # per table

    @property
    def objects(self) -> int:
        return self.tables * self.partitions * PARTITION_OBJECTS

    def partition(self, table: int, day: int) -> str:
        return f"t{table:02d}/dt={FIRST_DAY + timedelta(days=day)}/"

    def keys(self, table: int, day: int) -> list[str]:
        prefix = self.partition(table, day)
        return [f"{prefix}part-{i:05d}-{hashlib.md5(f'{prefix}{i}'.encode()).hexdigest()[:12]}.parquet"
                for i in range(PARTITION_OBJECTS)]


def preload_file(layout: Layout) -> Path:
    """The bucket's objects as the server preloads them, made once per layout under .bench/."""
    path = BENCH_DIR / f"s3-{layout.tables}x{layout.partitions}x{PARTITION_OBJECTS}.jsonl"
    if not path.exists():
        BENCH_DIR.mkdir(exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as out:
            for table in range(layout.tables):
                for day in range(layout.partitions):
                    for key in layout.keys(table, day):
                        out.write(json.dumps({"bucket": BUCKET, "key": key, "size": 1 + len(key) % 7}) + "\n")
        tmp.rename(path)
    return path


def settings(s3: DevS3) -> S3Config:
    return S3Config(roots=(f"s3a://{BUCKET}",), endpoint_url=s3.endpoint_url, path_style=True)


def figures(seconds: float, requests: int, objects: int, prefixes: int = 0, **more: Any) -> dict[str, Any]:
    return {"seconds": round(seconds, 3), "requests": requests, "objects_listed": objects,
            "prefixes_listed": prefixes, "objects_per_second": round(objects / seconds, 1) if seconds else None,
            **more}


def raw_listing(s3: DevS3) -> dict[str, Any]:
    client, counter = make_client(settings(s3), S3Credentials(*s3.credentials()))
    started = time.perf_counter()
    objects = sum(len(page.get("Contents") or ())
                  for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET))
    seconds = time.perf_counter() - started
    client.close()
    return figures(seconds, counter.count, objects)


def navd_run(s3: DevS3, index: SolrIndex, state: Path, **kwargs: Any) -> dict[str, Any]:
    config = settings(s3)
    client, counter = make_client(config, S3Credentials(*s3.credentials()))
    extractor = S3Extractor(client, index, roots=config.parsed_roots, state_dir=state, counter=counter, **kwargs)
    writer = IndexWriter(index)
    started = time.perf_counter()
    try:
        report = run_pass(extractor, writer)
        assert writer.close(), "Solr did not take every record"
        seconds = time.perf_counter() - started
    finally:
        extractor.close()
    return figures(seconds, report.requests, report.objects_listed, report.prefixes_listed,
                   entries=report.entries, records=report.records, deletions=report.deletions,
                   complete_listings=report.complete_listings, refused=report.refused)


def change(s3: DevS3, layout: Layout) -> dict[str, Any]:
    """About 0.5% created (a new newest partition in some tables), 0.5% deleted (the oldest
    partition of as many others); over HTTP, not timed."""
    client = s3.client(max_pool_connections=8)
    tables = max(1, min(layout.tables // 2, round(layout.objects * 0.005 / PARTITION_OBJECTS)))
    created = [key for table in range(tables) for key in layout.keys(table, layout.partitions)]
    deleted = [key for table in range(tables, 2 * tables) for key in layout.keys(table, 0)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda key: client.put_object(Bucket=BUCKET, Key=key, Body=b"new"), created))
    for start in range(0, len(deleted), 1000):
        client.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": k} for k in deleted[start:start + 1000]],
                                                     "Quiet": True})
    return {"created": len(created), "deleted": len(deleted),
            "share": round((len(created) + len(deleted)) / layout.objects, 4)}


def empty_cores(index: SolrIndex) -> None:
    for core in CORES:
        index.post_update(core, b'{"delete": {"query": "*:*"}}')
        index.commit(core)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=200_000, help="objects in the bucket (default 200000)")
    parser.add_argument("--tables", type=int, default=20, help="tables the objects are spread over (default 20)")
    parser.add_argument("--heap", default="1g", help="Solr JVM heap (default 1g)")
    args = parser.parse_args(argv)
    partitions = args.objects // (args.tables * PARTITION_OBJECTS)
    if args.tables < 2 or partitions < 2:
        parser.error("--objects must hold at least 2 partitions of 100 objects per table; --tables >= 2")
    layout = Layout(args.tables, partitions)

    setup_logging("console", "warning")
    loadavg_start = _loadavg()
    preload = preload_file(layout)
    work = Path(tempfile.mkdtemp(prefix="navd-bench-s3-"))
    s3 = DevS3(work / "s3", free_port(), preload=preload)
    distribution = SolrDistribution(DEFAULT_SOLR_VERSION, default_solr_dist_dir())
    server = EmbeddedSolr(work / "solr", free_port(), args.heap, distribution)
    try:
        sys.stderr.write(f"starting the S3 server with {layout.objects} objects preloaded ...\n")
        s3.start(timeout=1800)
        distribution.ensure()
        status = server.start()
        with SolrIndex(server.client_config()) as index:
            init_solr(index)
            empty_cores(index)
            sys.stderr.write("raw listing ...\n")
            raw = raw_listing(s3)
            sys.stderr.write("navd full run ...\n")
            full = navd_run(s3, index, work / "state")
            changed = change(s3, layout)
            sys.stderr.write("navd incremental run ...\n")
            incremental = navd_run(s3, index, work / "state")
            sys.stderr.write("navd complete listing ...\n")
            complete = navd_run(s3, index, work / "state", complete_every=timedelta(0))
            raw_after = raw_listing(s3)
            solr_version = status.solr_version or "unknown"
    finally:
        server.stop()
        s3.stop()
        shutil.rmtree(work, ignore_errors=True)

    report = {
        "setup": {"objects": layout.objects, "tables": layout.tables, "partitions_per_table": layout.partitions,
                  "solr_version": solr_version, "heap": args.heap, "cpus": os.cpu_count() or 1,
                  "python": platform.python_version(), "navd_version": navd.__version__,
                  "git_commit": _git_commit(), "when": datetime.now(UTC).isoformat(timespec="seconds"),
                  "loadavg_start": loadavg_start, "loadavg_end": _loadavg()},
        "raw": raw, "full": full, "change": changed, "incremental": incremental, "complete": complete,
        "raw_after_change": raw_after,
        "ratios": {
            "full_seconds_over_raw": _ratio(full["seconds"], raw["seconds"]),
            "full_requests_over_raw": _ratio(full["requests"], raw["requests"]),
            "incremental_seconds_over_full": _ratio(incremental["seconds"], full["seconds"]),
            "incremental_requests_over_full": _ratio(incremental["requests"], full["requests"]),
            "incremental_objects_listed_over_bucket": _ratio(incremental["objects_listed"], raw_after["objects_listed"]),
            "incremental_seconds_over_raw": _ratio(incremental["seconds"], raw_after["seconds"]),
            "complete_seconds_over_raw": _ratio(complete["seconds"], raw_after["seconds"]),
        },
    }
    RESULT_FILE.parent.mkdir(exist_ok=True)
    RESULT_FILE.write_text(json.dumps(report, indent=2) + "\n")
    print_report(report)
    return 0


def print_report(report: dict[str, Any]) -> None:
    setup = report["setup"]
    print(f"S3 extractor: {setup['objects']} objects ({setup['tables']} tables x {setup['partitions_per_table']} "
          f"partitions x {PARTITION_OBJECTS}), moto's S3 server, Solr {setup['solr_version']}, "
          f"load {setup['loadavg_start']} -> {setup['loadavg_end']}")
    print(f"{'run':<34}{'seconds':>10}{'requests':>10}{'objects':>10}{'prefixes':>10}{'obj/s':>10}{'written':>10}")
    rows = (("raw listing [baseline]", report["raw"]), ("navd full run", report["full"]),
            ("navd incremental after 1% change", report["incremental"]),
            ("navd complete listing after it", report["complete"]), ("raw listing after the change", report["raw_after_change"]))
    for label, row in rows:
        print(f"{label:<34}{row['seconds']:>10.2f}{row['requests']:>10}{row['objects_listed']:>10}"
              f"{row['prefixes_listed']:>10}{row['objects_per_second'] or 0:>10.0f}{row.get('entries', ''):>10}")
    change = report["change"]
    print(f"the change: {change['created']} created, {change['deleted']} deleted ({change['share']:.1%}); "
          f"the incremental run flagged {report['incremental']['deletions']} deleted")
    for key, value in report["ratios"].items():
        print(f"  {key.replace('_', ' ')}: {value}")
    print(f"figures written to {RESULT_FILE.relative_to(REPO)}")


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


if __name__ == "__main__":
    raise SystemExit(main())
