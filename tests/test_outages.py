"""Solr down under `navd run` with every extractor active: the three log tailers (Spark event
logs, Impala and Hive lineage logs), the pull extractors (HDFS over the session's HDFS, HMS through
the session's HiveServer2, YARN) on 2.4 s intervals and the OpenLineage intake the daemon serves.
New input arrives during the outage; each component's runs fail without the daemon going down, no
position moves while Solr is away, `navd status` says Solr is unreachable in one line, and once
Solr is back the index is exactly what clean runs of the same input give: nothing lost, nothing
twice.

OUTAGE_SECONDS sets how long Solr stays down (default 20; `make outages`: 300)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import requests
from hdfs import Client
from openlineage.client.event_v2 import RunState
from pyhive import hive

from conftest import serving, wait_healthy
from lineage_logs import HIVE, impala_cases, impala_line
from navd.index.client import SolrIndex
from navd.solr.server import EmbeddedSolr, free_port
from navd_devstack.hadoop import DevHdfs
from navd_devstack.spark_thrift import SparkThriftServer
from navd_devstack.yarn import DevYarn
from openlineage_events import as_json, job_run
import test_daemon
from test_daemon import (INTERVAL_MINUTES, NAVD, _everything, event_log_dir, hdfs_section, lay_pull_inputs, log_lines, now, start, stop,
                         succeeded, wait_until, write_config)

own_solr = test_daemon.own_solr  # the fixture: a Solr of this module's own, to stop and start

OUTAGE_SECONDS = float(os.environ.get("OUTAGE_SECONDS", "20"))
TAILERS = ("spark", "impala", "hive-lineage")
PULLS = ("hdfs", "hms", "yarn")
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




def pulls_body(hdfs: DevHdfs, root: str, thrift: SparkThriftServer, database: str, yarn: DevYarn) -> str:
    return (hdfs_section(hdfs, root) +
            f'[hive]\nenabled = true\nhost = "127.0.0.1"\nport = {thrift.port}\ndatabase_regex = "{database}"\n'
            f'interval_minutes = {INTERVAL_MINUTES}\n'
            f'[yarn]\nenabled = true\nurls = ["{yarn.rm_url}"]\ninterval_minutes = {INTERVAL_MINUTES}\n')


def intake_body(port: int, spool: Path) -> str:
    return f'[server]\nenabled = true\nport = {port}\n[openlineage]\nenabled = true\nspool_dir = "{spool}"\n'


def ol_events(database: str) -> list[dict[str, Any]]:
    """Three task runs of the same job (START, COMPLETE each), fixed run ids: a clean run posts the same.
    Their tables are in a database the HMS extractor does not read (it would flag them deleted,
    when it runs after the events in one order and not in the other)."""
    events = []
    for number in range(3):
        run_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{database}/{number}"))
        for state, offset in ((RunState.START, 0), (RunState.COMPLETE, 60)):
            events.append(as_json(job_run(run_id, f"outage_task_{number}", state, offset=offset + number,
                                          database=database)))
    return events


def post_events(url: str, events: list[dict[str, Any]]) -> set[int]:
    return {requests.post(f"{url}/api/v1/lineage", json=event, timeout=60).status_code for event in events}


def differences(got: tuple[dict[str, Any], dict[str, Any]], expected: tuple[dict[str, Any], dict[str, Any]]) -> str:
    """Per core: documents lost, extra, and changed (the fields that differ), a few of each."""
    lines = []
    for core, mine, theirs in zip(("elements", "relations"), got, expected, strict=True):
        lost = sorted(set(theirs) - set(mine))
        extra = sorted(set(mine) - set(theirs))
        changed = {theirs[k].get("qualifiedName", k): {f: (mine[k].get(f), theirs[k].get(f)) for f in set(mine[k]) | set(theirs[k])
                       if mine[k].get(f) != theirs[k].get(f)} for k in set(mine) & set(theirs) if mine[k] != theirs[k]}
        lines.append(f"{core}: {len(lost)} lost {[theirs[k].get('qualifiedName', k) for k in lost[:3]]}, "
                     f"{len(extra)} extra {[mine[k].get('qualifiedName', k) for k in extra[:3]]}, "
                     f"{len(changed)} changed {list(changed.items())[:3]}")
    return "; ".join(lines)


def state_files(state: Path) -> dict[str, str]:
    """What every extractor has committed (positions, cursors, watermarks): path -> digest;
    lock files (who holds them) left out."""
    return {str(path.relative_to(state)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(state.rglob("*")) if path.is_file() and not path.name.endswith(".lock")}


def test_solr_down_under_the_daemon_with_every_extractor_loses_nothing_and_positions_wait(
        own_solr: EmbeddedSolr, hdfs: DevHdfs, hdfs_client: Client, spark_thrift: SparkThriftServer,
        yarn: DevYarn, unique: str, tmp_path: Path) -> None:
    own = SolrIndex(own_solr.client_config(retries=20, backoff_seconds=0.5, max_backoff_seconds=2))
    for core in ("elements", "relations"):
        own.delete_query(core, "*:*")
        own.commit(core)
    root, database = f"/outage{unique}", f"outage{unique}"
    lay_pull_inputs(hdfs_client, f"{root}/before", spark_thrift.port, database, "before")
    live = directories(tmp_path / "live")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    state = tmp_path / "daemon"
    config = write_config(tmp_path / "daemon.toml", own_solr, state,
                          tailers_body(*live) + pulls_body(hdfs, root, spark_thrift, database, yarn)
                          + intake_body(port, tmp_path / "spool"))
    log = tmp_path / "navd.log"
    everyone = {f"navd.extractor.{c}" for c in (*TAILERS, *PULLS)}
    began = now()
    proc = start(config, log)
    try:
        wait_until(lambda: [e for e in log_lines(log) if e.get("event") == "navd running"], 120, "navd running",
                   proc, log)
        wait_healthy(proc, url, log)  # type: ignore[arg-type]

        def ran(what: str) -> set[str]:
            return {str(e.get("logger")) for e in log_lines(log) if str(e.get("event", "")).startswith(what)}

        # A first run of each pull extractor before the outage: what it wrote stays, what comes after waits.
        wait_until(lambda: all(succeeded(own, f"extractor.{c}", began) for c in PULLS), 180,
                   "a run of every pull extractor", proc, log)
        assert own_solr.stop()
        down_since = time.monotonic()
        lay_inputs(*live)
        for number in range(3):
            hdfs_client.write(f"{root}/during/part-{number}.csv", data=b"c,d\n")
        with hive.connect("127.0.0.1", spark_thrift.port, username="navd") as connection:
            connection.cursor().execute(f"CREATE TABLE {database}.during (id INT, name STRING) USING parquet")
        assert post_events(url, ol_events(f"ol{unique}")) == {202}  # spooled: Solr is away

        def failed() -> set[str]:
            return ran("poll failed") | ran("run failed")

        # Every extractor that has something to write fails its runs; YARN, with no new
        # application, has nothing to write and needs nothing from Solr: its runs go on (their
        # run records not written) and its position stays, as the others' do.
        wait_until(lambda: failed() >= everyone - {"navd.extractor.yarn"}, 180, "a failed run of every extractor",
                   proc, log)
        yarn_runs = len([e for e in log_lines(log) if e.get("logger") == "navd.extractor.yarn"])
        committed = state_files(state)
        status = subprocess.run([NAVD, "status"], env={**os.environ, "NAVD_CONFIG": str(config)},
                                capture_output=True, text=True, timeout=120, check=False)
        assert status.returncode == 1 and status.stdout == "", status
        [line] = status.stderr.splitlines()
        assert f"cannot reach Solr at {own_solr.url}" in line, line
        time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - down_since)))
        assert proc.poll() is None, log.read_text()[-3000:]
        # Positions wait: nothing was committed past what Solr took before it went.
        assert state_files(state) == committed, "an extractor moved its position while Solr was down"
        assert len([e for e in log_lines(log) if e.get("logger") == "navd.extractor.yarn"]) > yarn_runs
        own_solr.start()

        def settled() -> bool:
            # The spool drained, the HMS table made during the outage and the tailers' last lines written.
            got = _everything(own)
            names = {str(d.get("qualifiedName")) for d in got[0].values()}
            return (not list((tmp_path / "spool").glob("*.json")) and
                    any(f"{database}.during" in n for n in names)
                    and any(n.endswith("during/part-2.csv") for n in names)
                    and any("outage_29" in n for n in names))

        wait_until(settled, 300, "what arrived during the outage, written", proc, log)
        time.sleep(3 * INTERVAL_MINUTES * 60)  # a further round of every component: what it has to add
    finally:
        try:
            own_solr.start()  # idempotent
        finally:  # the daemon stops even when Solr does not come back
            code, _ = stop(proc)
    assert code == 0
    got = _everything(own)
    text = log.read_text()
    print(f"Solr down {OUTAGE_SECONDS:.0f} s under navd run; failed runs from {sorted(failed())}")
    assert "Traceback" not in text, text[-3000:]
    errors = [e for e in log_lines(log) if e.get("level") == "error"]
    assert {e["logger"] for e in errors} <= everyone | {"navd.index", "navd.runs", "navd.linker"}, errors

    # Clean runs of the same input, one after the other, into an emptied index: the same documents.
    for core in ("elements", "relations"):
        own.delete_query(core, "*:*")
        own.commit(core)
    clean_port = free_port()
    clean_config = write_config(tmp_path / "clean.toml", own_solr, tmp_path / "clean-state",
                                tailers_body(*live) + pulls_body(hdfs, root, spark_thrift, database, yarn)
                                + intake_body(clean_port, tmp_path / "clean-spool"))
    env = {**os.environ, "NAVD_CONFIG": str(clean_config)}
    for source in (*TAILERS, *PULLS):
        clean = subprocess.run([NAVD, "extract", source, *(["--once"] if source in TAILERS else [])],
                               capture_output=True, text=True, timeout=300, env=env, check=False)
        assert clean.returncode == 0, clean.stderr[-3000:]
    with serving(clean_config, f"http://127.0.0.1:{clean_port}") as served:
        assert post_events(served.url, ol_events(f"ol{unique}")) == {201}
    expected = _everything(own)
    own.close()
    assert expected[0] and expected[1]
    assert _comparable(got) == _comparable(expected), differences(_comparable(got), _comparable(expected))
