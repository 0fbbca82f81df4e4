"""Run records and `navd status` through the real CLI and Solr: successes with counts, and a
failing source (a ResourceManager on a closed port) recorded FAILED with its error."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from navd.index.client import IndexWriter, SolrIndex
from navd.index.documents import solr_date
from navd.locks import component_lock
from navd.model import ElementType, EntityRef, Relation, RelationType, SourceType
from navd.process import free_port
from navd.status import status
from navd.runner import new_run_id
from navd.runs import INTERRUPTED, recorded_run
from navd.solr.server import EmbeddedSolr
from conftest import write_navd_config


def test_runs_are_recorded_and_shown_by_status(navd, solr_server: EmbeddedSolr, index: SolrIndex,  # type: ignore[no-untyped-def]
                                               tmp_path: Path) -> None:
    dead_rm = f"http://127.0.0.1:{free_port()}"
    config = tmp_path / "navd.toml"
    write_navd_config(config, solr_server, f'[yarn]\nurls = ["{dead_rm}"]\n')
    env = {**os.environ, "NAVD_CONFIG": str(config), "XDG_STATE_HOME": str(tmp_path / "state")}
    assert navd("link", env=env).returncode == 0
    assert navd("purge", "--older-than-days", "3650", env=env).returncode == 0
    failed = navd("extract", "yarn", env=env)
    assert failed.returncode == 1 and "no active ResourceManager" in failed.stderr

    shown = navd("status", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    current = json.loads(shown.stdout)
    linker, purge, yarn = (current["components"][c] for c in ("linker", "purge", "extractor.yarn"))
    assert linker["last_run"]["state"] == "SUCCEEDED" and "count_examined" in linker["last_run"]
    assert linker["last_success"] == linker["last_run"]["ended"]
    assert purge["last_run"]["state"] == "SUCCEEDED" and "count_deleted_entities" in purge["last_run"]
    assert yarn["last_run"]["state"] == "FAILED" and dead_rm in yarn["last_run"]["error"]
    assert set(current["totals"]) == {"elements", "relations", "unlinked_relations", "deleted_elements"}
    text = navd("status", env=env)
    assert text.returncode == 0 and "extractor.yarn: last run FAILED" in text.stdout


def _linker_running(index: SolrIndex, since: str) -> bool:
    query = f"kind:run AND component:linker AND state:RUNNING AND started:[{since} TO *]"
    return index.count("runs", query) > 0


def test_a_killed_link_pass_shows_interrupted(navd, index: SolrIndex, solr_server: EmbeddedSolr,  # type: ignore[no-untyped-def]
                                              tmp_path: Path, unique: str) -> None:
    """`navd link` killed with -9 mid-pass leaves its RUNNING record; `navd status` sees the
    linker's lock free and shows that run FAILED, interrupted, before any next link run."""
    config = tmp_path / "navd.toml"
    write_navd_config(config, solr_server)
    env = {**os.environ, "NAVD_CONFIG": str(config), "XDG_STATE_HOME": str(tmp_path / "state")}
    # Enough unlinked relations that a full pass runs for a moment after its RUNNING record.
    writer = IndexWriter(index)
    for number in range(30_000):
        writer.write(Relation(RelationType.DATA_FLOW, EntityRef(SourceType.HDFS, f"hdfs://{unique}/in/{number}",
                                                                ElementType.DIRECTORY),
                              EntityRef(SourceType.SPARK, f"spark://{unique}/1", ElementType.OPERATION_EXECUTION),
                              linked1=False, extractor_run_id=unique))
    assert writer.close()
    index.commit("relations")
    since = solr_date(datetime.now(UTC))
    executable = str(Path(sys.executable).parent / "navd")
    link = subprocess.Popen([executable, "link", "--full"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        while not _linker_running(index, since) and link.poll() is None:
            time.sleep(0.02)
        os.kill(link.pid, signal.SIGKILL)
        assert link.wait() == -signal.SIGKILL  # killed mid-pass, not finished before

        shown = navd("status", "--json", env=env)
        assert shown.returncode == 0, shown.stderr
        last = json.loads(shown.stdout)["components"]["linker"]["last_run"]
        assert last["started"] >= since
        assert (last["state"], last["error"]) == ("FAILED", INTERRUPTED)
        text = navd("status", env=env)
        assert f"linker: last run FAILED {last['started']}" in text.stdout and INTERRUPTED in text.stdout
        # The record itself stays RUNNING until the daemon's next start or a next link run.
        assert _linker_running(index, since)
    finally:
        if link.poll() is None:
            link.kill()
        index.delete_query("relations", f"extractorRunId:{unique}")
        index.delete_query("runs", f"kind:run AND component:linker AND state:RUNNING AND started:[{since} TO *]")
        index.commit("relations")
        index.commit("runs")


@pytest.mark.parametrize("component", ["extractor.hdfs", "purge"])
def test_a_running_record_is_running_while_its_lock_is_held(index: SolrIndex, tmp_path: Path, unique: str,
                                                            component: str) -> None:
    """Every component's RUNNING record, not only the linker's: running while a process holds the
    component's lock, interrupted once none does; a state directory that never locked it tells
    nothing (still RUNNING)."""
    name = f"{component}.{unique}"
    with recorded_run(index, name, new_run_id(name)):
        with component_lock(tmp_path, name, wait=False):
            assert status(index, tmp_path)["components"][name]["last_run"]["state"] == "RUNNING"
        last = status(index, tmp_path)["components"][name]["last_run"]
        assert (last["state"], last["error"]) == ("FAILED", INTERRUPTED)
        assert status(index, tmp_path / "elsewhere")["components"][name]["last_run"]["state"] == "RUNNING"
        assert status(index)["components"][name]["last_run"]["state"] == "RUNNING"
    assert status(index, tmp_path)["components"][name]["last_run"]["state"] == "SUCCEEDED"


def test_status_with_solr_down_says_so_at_once_in_one_line(tmp_path: Path) -> None:
    """Solr stopped under the daemon: `navd status` names the cause in one line, without the
    writers' backing off (no retry), and exits 1."""
    executable = str(Path(sys.executable).parent / "navd")  # not the `navd` fixture: no session Solr needed
    down = f"http://127.0.0.1:{free_port()}/solr"  # nothing listens: a stopped Solr
    config = tmp_path / "navd.toml"
    config.write_text(f'[solr]\nurl = "{down}"\n[logging]\nformat = "json"\n')
    env = {**os.environ, "NAVD_CONFIG": str(config), "XDG_STATE_HOME": str(tmp_path / "state")}
    for args in (("status",), ("status", "--json")):
        shown = subprocess.run([executable, *args], env=env, capture_output=True, text=True, timeout=120,
                               check=False)
        assert shown.returncode == 1, shown
        assert shown.stdout == ""
        [line] = shown.stderr.splitlines()
        assert line.startswith("navd: error: ") and f"cannot reach Solr at {down}: connection refused" in line, line
