"""Query lineage logs: lines/s through navd into Solr against plain `json.loads` of the same file,
in the same run.

Run: python tests/bench/bench_lineage_logs.py [--lines 20000] [--rounds 2]

It writes an impalad lineage log of `--lines` queries (lineage.test's CTAS graph, each query its
own id, target table and source table out of 200; impalad's one-line form, tests/lineage_logs.py)
and starts its own embedded Solr (navd's own code, temporary home, free port). Each round:

- json.loads [baseline]: the file read line by line and each line decoded, nothing else;
- navd: `navd extract impala`'s pass (LineageLogExtractor.run_pass through an IndexWriter, fresh
  cursors, emptied cores): tail, parse, records, stubs, Solr writes, flush, cursor commit.

- raw post [fair baseline]: the very update bodies navd's writer posted in that round
  (recorded as sent, tests/bench/fair_baseline.py) posted again into fresh cores of the same
  Solr: same batches, parameters, threads and commits, nothing else.

The headlines are navd / json.loads lines/s and navd / raw post (best round of each); the goals
are >= 0.5 and >= 0.7. The cores are checked afterwards (hard commit): every query's execution is there. Then navd's own
side without Solr, in this thread's CPU time (other processes' load does not count): json.loads
against the extractor's records alone and against records + Solr documents + serialising, the
records per line. `--profile` adds one such pass under cProfile (top functions printed, saved to
.bench/lineage-logs.prof). Figures are printed and written to .bench/lineage_logs.json (gitignored).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from lineage_logs import impala_cases, impala_line  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "bench"))
from bench_writer import _cpu_snapshot  # noqa: E402
from fair_baseline import Recorded, RecordingIndex, describe, fresh_cores, post_recorded  # noqa: E402

from navd.config import DEFAULT_SOLR_VERSION, default_solr_dist_dir  # noqa: E402
from navd.extractors.hive_lineage.extractor import LineageLogExtractor  # noqa: E402
from navd.extractors.impala.lineage import FILE_PREFIX, parse_impala  # noqa: E402
from navd.index.admin import init_solr  # noqa: E402
from navd.index.client import IndexWriter, SolrIndex, serialise  # noqa: E402
from navd.index.documents import element_document, relation_document, stub_document  # noqa: E402
from navd.logs import setup_logging  # noqa: E402
from navd.model import Element, ElementStub, Relation  # noqa: E402
from navd.solr.server import EmbeddedSolr, SolrDistribution, free_port  # noqa: E402

RESULT_FILE = REPO / ".bench" / "lineage_logs.json"
GOAL = 0.5
RAW_POST_GOAL = 0.7
CTAS = "create table lineage_test_tbl as select int_col, tinyint_col from functional.alltypes"


def write_log(path: Path, lines: int) -> None:
    case = impala_cases()[CTAS]
    with path.open("w") as fh:
        for i in range(lines):
            line = impala_line(case, query_id=f"{i:016x}:0000000000000000", end_time=case["timestamp"] + 2)
            # its own target, one of 200 sources: as many tables as a busy cluster's day
            line = line.replace("lineage_test_tbl", f"out_{i}").replace("functional.alltypes", f"functional.src_{i % 200}")
            fh.write(line + "\n")


def json_loads(path: Path) -> float:
    start = time.perf_counter()
    with path.open("rb") as fh:
        for line in fh:
            json.loads(line)
    return time.perf_counter() - start


def navd_pass(index: SolrIndex, logs: Path, state: Path) -> tuple[float, int]:
    shutil.rmtree(state, ignore_errors=True)
    start = time.perf_counter()
    extractor = LineageLogExtractor(name="impala", cluster="bench", patterns=[str(logs / f"{FILE_PREFIX}*")],
                                    state_dir=state, cursor_file="c.json", parse=parse_impala, multi_line=False,
                                    what="Impala lineage log", key_by="path")
    writer = IndexWriter(index)
    try:
        report = extractor.run_pass(writer)
    finally:
        writer.close()
    return time.perf_counter() - start, report.queries


def cpu_loads(path: Path) -> float:
    start = time.thread_time()
    with path.open("rb") as fh:
        for line in fh:
            json.loads(line)
    return time.thread_time() - start


def navd_side(logs: Path, state: Path, *, documents: bool) -> tuple[float, int]:
    """The extractor's records (and their Solr documents, serialised) with no Solr: thread CPU
    seconds and the number of records."""
    shutil.rmtree(state, ignore_errors=True)
    extractor = LineageLogExtractor(name="impala", cluster="bench", patterns=[str(logs / f"{FILE_PREFIX}*")],
                                    state_dir=state, cursor_file="c.json", parse=parse_impala, multi_line=False,
                                    what="Impala lineage log", key_by="path")
    start = time.thread_time()
    count = 0
    batch: list[dict[str, object]] = []
    for record in extractor.extract():
        count += 1
        if documents:
            if isinstance(record, Element):
                batch.append(element_document(record))
            elif isinstance(record, Relation):
                batch.append(relation_document(record))
            elif isinstance(record, ElementStub):
                batch.append(stub_document(record))
            if len(batch) >= 1000:
                serialise(batch)
                batch = []
    serialise(batch)
    return time.thread_time() - start, count


def cpu_used(before: tuple[float, float, float] | None, after: tuple[float, float, float] | None
             ) -> tuple[float, float]:
    """(CPU-seconds of this process, of Solr) between two snapshots; (nan, nan) without /proc."""
    if before is None or after is None:
        return float("nan"), float("nan")
    return after[1] - before[1], after[2] - before[2]


def empty(index: SolrIndex) -> None:
    for core in ("elements", "relations"):
        index.delete_query(core, "*:*")
        index.commit(core)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=20000, help="queries in the log (default 20000)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds; the best of each counts (default 2)")
    parser.add_argument("--heap", default="1g", help="Solr JVM heap (default 1g)")
    parser.add_argument("--profile", action="store_true", help="one navd pass without Solr under cProfile")
    args = parser.parse_args(argv)
    if min(args.lines, args.rounds) < 1:
        parser.error("--lines and --rounds must be >= 1")
    setup_logging("console", "warning")
    home = Path(tempfile.mkdtemp(prefix="navd-bench-lineage-"))
    logs = home / "lineage"
    logs.mkdir()
    log = logs / f"{FILE_PREFIX}1700000000000"
    write_log(log, args.lines)
    distribution = SolrDistribution(DEFAULT_SOLR_VERSION, default_solr_dist_dir())
    server = EmbeddedSolr(home / "solr", free_port(), args.heap, distribution)
    loads_times: list[float] = []
    navd_times: list[float] = []
    raw_times: list[float] = []
    recorded = Recorded(())
    # CPU-seconds (this process, Solr) per navd pass and per raw post: on a shared host the
    # wall-clock ratio moves with other work, the CPU spent for the same documents much less.
    navd_cpu: list[tuple[float, float]] = []
    raw_cpu: list[tuple[float, float]] = []
    try:
        distribution.ensure()
        solr_pid = server.start().pid
        with RecordingIndex(server.client_config()) as index:
            init_solr(index)
            empty(index)
            navd_pass(index, logs, home / "state")  # warm-up: Solr's JIT
            for _ in range(args.rounds):
                loads_times.append(json_loads(log))
                empty(index)
                before = _cpu_snapshot(solr_pid)
                with index.recording() as updates:
                    seconds, queries = navd_pass(index, logs, home / "state")
                navd_cpu.append(cpu_used(before, _cpu_snapshot(solr_pid)))
                recorded = Recorded(tuple(updates))
                navd_times.append(seconds)
                with fresh_cores(index) as fresh:
                    before = _cpu_snapshot(solr_pid)
                    raw_times.append(post_recorded(index, fresh, recorded).seconds)
                    raw_cpu.append(cpu_used(before, _cpu_snapshot(solr_pid)))
                if queries != args.lines:
                    raise SystemExit(f"navd read {queries} queries of {args.lines}")
                index.commit("elements")
                executions = index.count("elements", "type:OPERATION_EXECUTION")
                if executions != args.lines:
                    raise SystemExit(f"Solr holds {executions} executions of {args.lines}")
        # navd's side alone, after Solr stopped: nothing else of this run competes for the CPU
        server.stop()
        cpu_base = min(cpu_loads(log) for _ in range(args.rounds))
        cpu_records, records = min(navd_side(logs, home / "state", documents=False) for _ in range(args.rounds))
        cpu_documents = min(navd_side(logs, home / "state", documents=True)[0] for _ in range(args.rounds))
        if args.profile:
            profile_file = RESULT_FILE.parent / "lineage-logs.prof"
            profile_file.parent.mkdir(exist_ok=True)
            cProfile.runctx("navd_side(logs, home / 'state', documents=True)", globals(), locals(),
                            str(profile_file))
            pstats.Stats(str(profile_file)).sort_stats("tottime").print_stats(15)
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)
    loads_rate, navd_rate = args.lines / min(loads_times), args.lines / min(navd_times)
    ratio = navd_rate / loads_rate
    raw_rate = args.lines / min(raw_times)
    raw_ratio = navd_rate / raw_rate
    report = {"lines": args.lines, "json_loads_lines_per_s": round(loads_rate, 1),
              "navd_lines_per_s": round(navd_rate, 1), "ratio": round(ratio, 4), "goal": GOAL,
              "raw_post": {"lines_per_s": round(raw_rate, 1), "seconds": raw_times, "ratio": round(raw_ratio, 4),
                           "goal": RAW_POST_GOAL, "documents": recorded.documents,
                           "requests": recorded.requests, "megabytes": round(recorded.megabytes, 2),
                           "cpu_seconds_navd_solr": raw_cpu},
              "navd_cpu_seconds_navd_solr": navd_cpu,
              "json_loads_seconds": loads_times, "navd_seconds": navd_times,
              "records_per_line": round(records / args.lines, 2),
              "cpu_ratio_records": round(cpu_base / cpu_records, 4),
              "cpu_ratio_documents": round(cpu_base / cpu_documents, 4)}
    RESULT_FILE.parent.mkdir(exist_ok=True)
    RESULT_FILE.write_text(json.dumps(report, indent=2) + "\n")
    print(f"Impala lineage log, {args.lines} lines (CTAS, 2 column edges each)")
    print(f"  json.loads [baseline]   {loads_rate:10.1f} lines/s")
    print(f"  navd into Solr          {navd_rate:10.1f} lines/s   ratio {ratio:.3f} "
          f"(goal >= {GOAL}: {'met' if ratio >= GOAL else 'NOT met'})")
    print(f"  raw post [fair baseline] {raw_rate:10.1f} lines/s   navd / raw post {raw_ratio:.3f} "
          f"(goal >= {RAW_POST_GOAL}: {'met' if raw_ratio >= RAW_POST_GOAL else 'NOT met'})")
    print(f"    what navd wrote: {describe(recorded)}")
    navd_best, raw_best = navd_cpu[navd_times.index(min(navd_times))], raw_cpu[raw_times.index(min(raw_times))]
    print(f"    CPU-seconds navd process / Solr: navd pass {navd_best[0]:.1f} / {navd_best[1]:.1f}, "
          f"raw post {raw_best[0]:.1f} / {raw_best[1]:.1f}")
    print(f"  navd without Solr, CPU  {records / args.lines:.1f} records per line; vs json.loads: records "
          f"{cpu_base / cpu_records:.3f}, + documents and serialising {cpu_base / cpu_documents:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
