"""Query lineage logs: lines/s through navd into Solr against plain `json.loads` of the same file,
in the same run.

Run: python tests/bench/bench_lineage_logs.py [--lines 20000] [--rounds 2]

It writes an impalad lineage log of `--lines` queries (lineage.test's CTAS graph, each query its
own id, target table and source table out of 200; impalad's one-line form, tests/lineage_logs.py)
and starts its own embedded Solr (navd's own code, temporary home, free port). Each round:

- json.loads [baseline]: the file read line by line and each line decoded, nothing else;
- navd: `navd extract impala`'s pass (LineageLogExtractor.run_pass through an IndexWriter, fresh
  cursors, emptied cores): tail, parse, records, stubs, Solr writes, flush, cursor commit.

The headline is navd / json.loads lines/s (best round of each); the issue's goal is >= 0.5. The
cores are checked afterwards (hard commit): every query's execution is there. Figures are printed
and written to .bench/lineage_logs.json (gitignored).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from lineage_logs import impala_cases, impala_line  # noqa: E402

from navd.config import DEFAULT_SOLR_VERSION, default_solr_dist_dir  # noqa: E402
from navd.extractors.hive_lineage.extractor import LineageLogExtractor  # noqa: E402
from navd.extractors.impala.lineage import FILE_PREFIX, parse_impala  # noqa: E402
from navd.index.admin import init_solr  # noqa: E402
from navd.index.client import IndexWriter, SolrIndex  # noqa: E402
from navd.logs import setup_logging  # noqa: E402
from navd.solr.server import EmbeddedSolr, SolrDistribution, free_port  # noqa: E402

RESULT_FILE = REPO / ".bench" / "lineage_logs.json"
GOAL = 0.5
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


def empty(index: SolrIndex) -> None:
    for core in ("elements", "relations"):
        index.delete_query(core, "*:*")
        index.commit(core)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=20000, help="queries in the log (default 20000)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds; the best of each counts (default 2)")
    parser.add_argument("--heap", default="1g", help="Solr JVM heap (default 1g)")
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
    try:
        distribution.ensure()
        server.start()
        with SolrIndex(server.client_config()) as index:
            init_solr(index)
            empty(index)
            navd_pass(index, logs, home / "state")  # warm-up: Solr's JIT
            for _ in range(args.rounds):
                loads_times.append(json_loads(log))
                empty(index)
                seconds, queries = navd_pass(index, logs, home / "state")
                navd_times.append(seconds)
                if queries != args.lines:
                    raise SystemExit(f"navd read {queries} queries of {args.lines}")
                index.commit("elements")
                executions = index.count("elements", "type:OPERATION_EXECUTION")
                if executions != args.lines:
                    raise SystemExit(f"Solr holds {executions} executions of {args.lines}")
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)
    loads_rate, navd_rate = args.lines / min(loads_times), args.lines / min(navd_times)
    ratio = navd_rate / loads_rate
    report = {"lines": args.lines, "json_loads_lines_per_s": round(loads_rate, 1),
              "navd_lines_per_s": round(navd_rate, 1), "ratio": round(ratio, 4), "goal": GOAL,
              "json_loads_seconds": loads_times, "navd_seconds": navd_times}
    RESULT_FILE.parent.mkdir(exist_ok=True)
    RESULT_FILE.write_text(json.dumps(report, indent=2) + "\n")
    print(f"Impala lineage log, {args.lines} lines (CTAS, 2 column edges each)")
    print(f"  json.loads [baseline]   {loads_rate:10.1f} lines/s")
    print(f"  navd into Solr          {navd_rate:10.1f} lines/s   ratio {ratio:.3f} "
          f"(goal >= {GOAL}: {'met' if ratio >= GOAL else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
