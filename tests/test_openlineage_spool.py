"""Nothing lost: the OpenLineage intake while its Solr is really down (a Solr of this module's own,
stopped and started again), and across a `kill -9` of the server with events still spooled.
Events come from the real openlineage-python client; counts are read back from Solr."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import RunState
from openlineage.client.transport.http import HttpConfig, HttpTransport

from conftest import start_server
from navd.index.admin import init_solr
from navd.index.client import SolrIndex
from navd.openlineage.spool import Spool
from navd.solr.server import EmbeddedSolr, free_port
from openlineage_events import JOB_NAMESPACE, job_run
from conftest import NAVD, Served, serve_on_free_port, start_serving, write_server_config

#: how long the spool may take to drain once Solr is back (a bound on waiting, not a measure:
#: the drain retries at most every 30 s)
DRAIN_BOUND_SECONDS = 240
BURST = 1000


@pytest.fixture(scope="module")
def own_solr(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedSolr]:
    """A Solr only this module stops and starts (the session's stays up for the others)."""
    server = start_server(tmp_path_factory.mktemp("ol-solr"))
    with SolrIndex(server.client_config(retries=40, backoff_seconds=0.25, max_backoff_seconds=2.0)) as admin:
        init_solr(admin)
    yield server
    server.stop()


def admin_of(server: EmbeddedSolr) -> SolrIndex:
    return SolrIndex(server.client_config(retries=40, backoff_seconds=0.25, max_backoff_seconds=2.0))


def intake_section(spool: Path) -> str:
    return f'[openlineage]\nenabled = true\nspool_dir = "{spool}"\n'


def start_intake(tmp: Path, solr: EmbeddedSolr, spool: Path) -> Served:
    """A server with the intake on, left running for the test to stop or kill."""
    port = free_port()
    return start_serving(write_server_config(tmp, solr, f"port = {port}", intake_section(spool)),
                         f"http://127.0.0.1:{port}")


def emitter(url: str) -> HttpTransport:
    # no client-side retries: each event is answered once, 201 or 202
    client = OpenLineageClient(transport=HttpTransport(HttpConfig(url=url, retry={"total": 0})))
    return client.transport  # type: ignore[return-value]


def wait_drained(spool: Path, log: Path) -> None:
    deadline = time.monotonic() + DRAIN_BOUND_SECONDS
    while Spool(spool).pending():
        if time.monotonic() > deadline:
            pytest.fail(f"{len(Spool(spool).pending())} events still spooled: {log.read_text()[-3000:]}")
        time.sleep(0.5)


def executions(index: SolrIndex, job_prefix: str) -> list[str]:
    for core in ("elements", "relations"):
        index.commit(core)
    return [doc["qualifiedName"] for doc in index.scan(
        "elements", f'sourceType:OPENLINEAGE AND type:OPERATION_EXECUTION AND '
                    f'qualifiedName:openlineage\\://{_escape(JOB_NAMESPACE)}/{job_prefix}*', fl="qualifiedName")]


def _escape(text: str) -> str:
    return "".join("\\" + c if c in ':/\\+-!():^[]"{}~*?|&' else c for c in text)


@pytest.mark.services
def test_a_burst_while_solr_is_down_is_spooled_then_written_exactly_once(
        tmp_path: Path, own_solr: EmbeddedSolr) -> None:
    spool = tmp_path / "spool"
    prefix = f"burst{uuid.uuid4().hex[:6]}"
    with serve_on_free_port(tmp_path, own_solr, extra=intake_section(spool)) as served:
        url, log = served.url, served.log
        transport = emitter(url)
        try:
            first = transport.emit(job_run(str(uuid.uuid4()), f"{prefix}_first", RunState.COMPLETE))
            assert first.status_code == 201, first.text
            assert own_solr.stop()
            run_ids = [str(uuid.uuid4()) for _ in range(BURST)]
            statuses = [transport.emit(job_run(run_id, f"{prefix}_{n}", RunState.COMPLETE)).status_code
                        for n, run_id in enumerate(run_ids)]
            assert statuses == [202] * BURST
            assert len(Spool(spool).pending()) == BURST
            own_solr.start()
            wait_drained(spool, log)
            with admin_of(own_solr) as index:
                found = executions(index, prefix)
            expected = {f"openlineage://{JOB_NAMESPACE}/{prefix}_{n}/{run_id}" for n, run_id in enumerate(run_ids)}
            expected.add(next(name for name in found if f"/{prefix}_first/" in name))
            assert sorted(found) == sorted(expected)  # every one, once
            assert "spooled" in log.read_text() and "OpenLineage spool drained" in log.read_text()
        finally:
            own_solr.start()


@pytest.mark.services
def test_a_kill_9_with_events_spooled_loses_and_duplicates_nothing(tmp_path: Path, own_solr: EmbeddedSolr) -> None:
    spool = tmp_path / "spool"
    prefix = f"kill{uuid.uuid4().hex[:6]}"
    run_ids = [str(uuid.uuid4()) for _ in range(20)]
    assert own_solr.stop()
    try:
        killed = start_intake(tmp_path, own_solr, spool)
        transport = emitter(killed.url)
        # START while Solr is down; COMPLETE of the first half too: both must land merged
        for n, run_id in enumerate(run_ids):
            assert transport.emit(job_run(run_id, f"{prefix}_{n}", RunState.START)).status_code == 202
        for n, run_id in enumerate(run_ids[:10]):
            assert transport.emit(job_run(run_id, f"{prefix}_{n}", RunState.COMPLETE, offset=30)).status_code == 202
        killed.proc.send_signal(signal.SIGKILL)
        killed.proc.wait(timeout=60)
        assert len(Spool(spool).pending()) == 30
    finally:
        own_solr.start()
    # a new server drains what the killed one left
    with serve_on_free_port(tmp_path, own_solr, extra=intake_section(spool)) as served:
        wait_drained(spool, served.log)
        # the same COMPLETE again after the restart: overwrites, adds nothing
        again = job_run(run_ids[0], f"{prefix}_0", RunState.COMPLETE, offset=30)
        assert emitter(served.url).emit(again).status_code == 201
        with admin_of(own_solr) as index:
            found = executions(index, prefix)
            assert sorted(found) == sorted(f"openlineage://{JOB_NAMESPACE}/{prefix}_{n}/{run_id}"
                                           for n, run_id in enumerate(run_ids))
            docs = {doc["qualifiedName"]: doc for doc in index.scan(
                "elements", f'qualifiedName:openlineage\\://{_escape(JOB_NAMESPACE)}/{prefix}*',
                fl="qualifiedName,started,ended,properties")}
        for n, run_id in enumerate(run_ids):
            doc = docs[f"openlineage://{JOB_NAMESPACE}/{prefix}_{n}/{run_id}"]
            assert doc["started"] == "2026-11-23T06:00:00Z"
            assert (json.loads(doc["properties"])["state"], doc.get("ended")) == (
                ("COMPLETE", "2026-11-23T06:00:30Z") if n < 10 else ("START", None))


def test_the_spool_keeps_arrival_order_across_processes_and_sets_unreadable_files_aside(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    first, second = spool.put(b'{"n": 1}'), spool.put(b'{"n": 2}')
    assert spool.pending() == [first, second]
    assert oct((tmp_path / "spool").stat().st_mode & 0o777) == oct(0o700)
    again = Spool(tmp_path / "spool")  # the next process numbers after what it finds
    third = again.put(b'{"n": 3}')
    assert again.pending() == [first, second, third]
    again.remove([first])
    kept = again.reject(second)
    assert again.pending() == [third] and kept.read_bytes() == b'{"n": 2}'


@pytest.mark.services
def test_a_spool_dir_that_cannot_be_made_refuses_to_start(tmp_path: Path, own_solr: EmbeddedSolr) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    config = write_server_config(tmp_path, own_solr, f"port = {free_port()}", intake_section(blocker / "spool"))
    refused = subprocess.run([NAVD, "serve"], env={**os.environ, "NAVD_CONFIG": str(config)}, capture_output=True,
                             text=True, timeout=120, check=False)
    assert refused.returncode != 0
    lines = [line for line in refused.stderr.splitlines() if "spool_dir" in line]
    assert lines and f"[openlineage] spool_dir: {blocker / 'spool'}: Not a directory" in lines[0], refused.stderr
    assert "Traceback" not in refused.stderr
