"""Solr down under `navd run` with every log tailer active (Spark event logs, Impala and Hive
lineage logs): new input arrives during the outage, each tailer's polls fail without the daemon
going down, `navd status` says Solr is unreachable in one line, and once Solr is back the index
is exactly what clean runs of the same input give: nothing lost, nothing twice.

OUTAGE_SECONDS sets how long Solr stays down (default 20; the issue's campaign: 300)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

from lineage_logs import HIVE, impala_cases, impala_line
from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr
import test_daemon
from test_daemon import NAVD, _everything, event_log_dir, log_lines, start, stop, wait_until, write_config

own_solr = test_daemon.own_solr  # the fixture: a Solr of this module's own, to stop and start

OUTAGE_SECONDS = float(os.environ.get("OUTAGE_SECONDS", "20"))
TAILERS = ("spark", "impala", "hive-lineage")
CTAS = "create table lineage_test_tbl as select int_col, tinyint_col from functional.alltypes"


def lay_inputs(spark: Path, impala: Path, hive: Path) -> None:
    """What arrives while Solr is down: two applications' event logs, 30 Impala and 30 Hive queries."""
    (spark.parent / "source").mkdir(exist_ok=True)
    for path in event_log_dir(spark.parent / "source", ("ctas_expression", "multi_output")).iterdir():
        (spark / path.name).write_bytes(path.read_bytes())
    case = impala_cases()[CTAS]
    with (impala / "impala_lineage_log_1.0-1700000000000").open("a") as fh:
        for i in range(30):
            fh.write(impala_line(case, query_id=f"{i:016x}:0000000000000001")
                     .replace("lineage_test_tbl", f"outage_{i}") + "\n")
    [_, record, *_] = (HIVE / "hiveserver2-lineage.log").read_text().splitlines(keepends=True)
    with (hive / "lineage.log").open("a") as fh:
        for i in range(30):
            fh.write(record.replace("87921246fb098d44c05e0ccd9ecb0676", f"{i:032x}")
                     .replace("src2", f"outage_{i}"))


def _comparable(index: tuple[dict[str, Any], dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The index without the stubs' `knownFrom`: a table both the Impala and the Hive log name is a
    stub whose knownFrom says which tailer wrote it last. The clean runs go one after the other, the
    daemon's tailers at once, so that order, and nothing else, differs."""
    elements, relations = index
    drop = ("properties", "prop_knownFrom")
    return ({identity: {k: v for k, v in doc.items() if k not in drop} if "prop_knownFrom" in doc else doc
             for identity, doc in elements.items()}, relations)


def tailers_body(spark: Path, impala: Path, hive: Path) -> str:
    return (f'[spark]\nenabled = true\nevent_log_dirs = ["{spark}"]\npoll_seconds = 0.3\n'
            f'[impala]\nenabled = true\nlineage_dirs = ["{impala}"]\npoll_seconds = 0.3\n'
            f'[hive_lineage]\nenabled = true\nlog_paths = ["{hive}/lineage.log*"]\npoll_seconds = 0.3\n')


def directories(root: Path) -> tuple[Path, Path, Path]:
    made = (root / "spark", root / "impala", root / "hive")
    for directory in made:
        directory.mkdir(parents=True)
    return made


def test_solr_down_under_the_daemon_with_every_tailer_loses_nothing_and_status_says_so(
        own_solr: EmbeddedSolr, tmp_path: Path) -> None:
    own = SolrIndex(own_solr.client_config(retries=20, backoff_seconds=0.5, max_backoff_seconds=2))
    for core in ("elements", "relations"):
        own.delete_query(core, "*:*")
        own.commit(core)
    clean_dirs = directories(tmp_path / "clean")
    lay_inputs(*clean_dirs)
    clean_config = write_config(tmp_path / "clean.toml", own_solr, tmp_path / "clean-state", tailers_body(*clean_dirs))
    for source in TAILERS:
        clean = subprocess.run([NAVD, "extract", source, "--once"], capture_output=True, text=True, timeout=300,
                               env={**os.environ, "NAVD_CONFIG": str(clean_config)}, check=False)
        assert clean.returncode == 0, clean.stderr[-3000:]
    expected = _everything(own)
    assert expected[0] and expected[1]
    for core in ("elements", "relations"):
        own.delete_query(core, "*:*")
        own.commit(core)

    live = directories(tmp_path / "live")
    config = write_config(tmp_path / "daemon.toml", own_solr, tmp_path / "daemon", tailers_body(*live))
    log = tmp_path / "navd.log"
    proc = start(config, log)
    try:
        wait_until(lambda: [e for e in log_lines(log) if e.get("event") == "navd running"], 120, "navd running",
                   proc, log)
        assert own_solr.stop()
        down_since = time.monotonic()
        lay_inputs(*live)

        def failed_polls() -> set[str]:
            return {str(e.get("logger")) for e in log_lines(log) if str(e.get("event", "")).startswith("poll failed")}

        wait_until(lambda: len(failed_polls()) == len(TAILERS), 180, "a failed poll of every tailer", proc, log)
        status = subprocess.run([NAVD, "status"], env={**os.environ, "NAVD_CONFIG": str(config)},
                                capture_output=True, text=True, timeout=120, check=False)
        assert status.returncode == 1 and status.stdout == "", status
        [line] = status.stderr.splitlines()
        assert f"cannot reach Solr at {own_solr.url}" in line, line
        time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - down_since)))
        assert proc.poll() is None, log.read_text()[-3000:]
        own_solr.start()
        # Back: the tailers' next polls (each backing off by at most MAX_PUSH_RETRY_SECONDS) write it all.
        wait_until(lambda: _comparable(_everything(own)) == _comparable(expected), 300, "the index of the clean runs",
                   proc, log)
    finally:
        try:
            own_solr.start()  # idempotent
        finally:  # the daemon stops even when Solr does not come back
            code, _ = stop(proc)
            own.close()
    assert code == 0
    print(f"Solr down {OUTAGE_SECONDS:.0f} s under navd run; failed polls from {sorted(failed_polls())}")
    errors = [e for e in log_lines(log) if e.get("level") == "error"]
    assert {e["logger"] for e in errors} <= {f"navd.extractor.{t}" for t in TAILERS} | {"navd.index", "navd.runs"}, \
        errors
