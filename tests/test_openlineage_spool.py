"""Nothing lost: the OpenLineage intake while its Solr is really down (a Solr of this module's own,
stopped and started again), and across a `kill -9` of the server with events still spooled.
Events come from the real openlineage-python client; counts are read back from Solr."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import RunState
from openlineage.client.transport.http import HttpConfig, HttpTransport

from conftest import start_server
from navd.config import NavdConfig, SolrConfig, parse_config
from navd.errors import SolrError
from navd.index.admin import init_solr
from navd.index.client import SolrIndex
from navd.openlineage import intake as intake_module
from navd.openlineage.intake import LARGE_EVENT_DOCUMENTS, SPOOLED, Intake, IntakeStopping
from navd.openlineage.limits import event_size
from navd.openlineage.schema import validate
from navd.openlineage.spool import Spool
from navd.solr.server import EmbeddedSolr, free_port
from openlineage_events import HIVE, JOB_NAMESPACE, as_json, job_run, wide_job_run
from conftest import NAVD, Served, serve_on_free_port, start_serving, stop_navd, write_server_config

#: how long the spool may take to drain once Solr is back (a bound on waiting, not a measure:
#: the drain retries at most every 30 s)
DRAIN_BOUND_SECONDS = 240
BURST = 1000


@pytest.fixture(scope="module")
def own_solr(tmp_path_factory: pytest.TempPathFactory, own_service: None) -> Iterator[EmbeddedSolr]:
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


# -- one spool per state directory -------------------------------------------------------------

def test_a_second_server_or_navd_run_on_the_same_state_directory_refuses_to_start(
        tmp_path: Path, own_solr: EmbeddedSolr) -> None:
    """Two intakes on one state directory shared its spool: with Solr down, of 4 events answered
    202 one was never written. The second refuses to start, naming the first's pid and the state
    directory, whether `navd serve` or `navd run` with the server; the first goes on taking events."""
    spool = tmp_path / "spool"
    first = start_intake(tmp_path, own_solr, spool)
    url, log = first.url, first.log
    state = tmp_path / "state"
    try:
        for command, server in ((["serve"], f"port = {free_port()}"), (["run"], f"enabled = true\nport = {free_port()}")):
            second = tmp_path / f"second-{command[0]}"
            second.mkdir()
            config = write_server_config(second, own_solr, server, intake_section(spool))
            # the same state directory as the first server's
            config.write_text(config.read_text().replace(f'state_dir = "{second / "state"}"', f'state_dir = "{state}"'))
            refused = subprocess.run([NAVD, *command], env={**os.environ, "NAVD_CONFIG": str(config)},
                                     capture_output=True, text=True, timeout=120, check=False)
            assert refused.returncode != 0, (command, refused.stderr)
            lines = [line for line in refused.stderr.splitlines() if "OpenLineage intake" in line]
            assert len(lines) == 1, (command, refused.stderr)
            assert f"(pid {first.proc.pid})" in lines[0] and str(state) in lines[0], lines[0]
            assert "Traceback" not in refused.stderr
        answer = emitter(url).emit(job_run(str(uuid.uuid4()), "after_refusal", RunState.COMPLETE))
        assert answer.status_code == 201, answer.text
    finally:
        assert stop_navd(first.proc) == 0, log.read_text()[-3000:]
    # stopped, it lets go: the next server on the state directory starts
    with serve_on_free_port(tmp_path, own_solr, extra=intake_section(spool)):
        pass


def test_two_spools_on_one_directory_never_overwrite_each_others_events(tmp_path: Path) -> None:
    """Each process numbers the spool from what it finds: two that found the same files picked the
    same next name, and the later rename replaced the earlier event. A name taken is skipped."""
    one, other = Spool(tmp_path / "spool"), Spool(tmp_path / "spool")
    assert one.pending() == other.pending() == []
    first, second = one.put(b'{"n": 1}'), other.put(b'{"n": 2}')
    assert first != second
    assert sorted(path.read_bytes() for path in one.pending()) == [b'{"n": 1}', b'{"n": 2}']
    # set aside twice under one name (numbers start again once a spool empties): both kept
    kept = [one.reject(first), other.reject(second)]
    third = Spool(tmp_path / "spool").put(b'{"n": 3}')
    assert third.name == first.name
    kept.append(Spool(tmp_path / "spool").reject(third))
    assert len(set(kept)) == 3 and sorted(k.read_bytes() for k in kept) == [b'{"n": 1}', b'{"n": 2}', b'{"n": 3}']


# -- every 2xx durable, whichever path the event took -------------------------------------------

class StopsSolrAfterPosts(SolrIndex):
    """navd's own Solr client that stops the real Solr once `posts` updates were acknowledged:
    the next post of the same event meets a Solr that is really down. Only the moment is chosen
    here (a Solr killed at a random moment would hit a random slice, or none)."""

    def __init__(self, config: SolrConfig, solr: EmbeddedSolr, posts: int) -> None:
        super().__init__(config)
        self.solr, self.left, self.guard = solr, posts, threading.Lock()

    def post_update(self, core: str, body: bytes, *, params: Mapping[str, Any] | None = None) -> None:
        super().post_update(core, body, params=params)
        with self.guard:
            self.left -= 1
            last = self.left == 0
        if last:
            assert self.solr.stop()


class FailsUpdates(SolrIndex):
    """navd's own Solr client whose first `failures` update posts Solr answers with HTTP 500 (a
    real Solr does so under memory pressure or a failing disk, not on demand: the one fault made
    here; everything else goes to the real Solr)."""

    def __init__(self, config: SolrConfig, failures: int) -> None:
        super().__init__(config)
        self.left, self.guard = failures, threading.Lock()

    def post_update(self, core: str, body: bytes, *, params: Mapping[str, Any] | None = None) -> None:
        with self.guard:
            fail, self.left = self.left > 0, self.left - 1
        if fail:
            raise SolrError(f"update of {core}: HTTP 500: java.io.IOException: No space left on device", status=500)
        super().post_update(core, body, params=params)


class LaggingReads(SolrIndex):
    """navd's own Solr client whose real-time gets of elements find nothing: the read-back of
    the run's execution misses what the intake wrote a moment before (once seen in CI: a
    spooled START drained, then its COMPLETE drained in the next batch, wrote the run without its
    start). A real Solr cannot be made to do this on demand: the one fault made here; every
    write goes to the real Solr."""

    def get(self, core: str, ids: Iterable[str]) -> list[dict[str, Any]]:
        return [] if core == "elements" else super().get(core, ids)


def intake_config(tmp: Path) -> NavdConfig:
    return parse_config({"daemon": {"state_dir": str(tmp / "state")},
                         "openlineage": {"enabled": True, "spool_dir": str(tmp / "spool"), "namespaces": {HIVE: "primary"}}})


def test_solr_failing_part_way_through_a_large_event_spools_it_whole(tmp_path: Path, own_solr: EmbeddedSolr) -> None:
    """A large event is written in slices; Solr stops after the first slices were acknowledged.
    The event is answered 202 and spooled whole, and once Solr is back every one of its
    documents is there, once (the slices written before overwritten by the replay)."""
    database = f"mid{uuid.uuid4().hex[:8]}"
    run_id = str(uuid.uuid4())
    event = as_json(wide_job_run(run_id, f"{database}_wide", database, outputs=1500, columns=2))
    size = event_size(event)
    assert size.documents > LARGE_EVENT_DOCUMENTS  # written in slices
    index = StopsSolrAfterPosts(own_solr.client_config(retries=0), own_solr, posts=3)
    intake = Intake(intake_config(tmp_path), index)
    intake.start()
    try:
        assert intake.accept(event, validate(event), orjson.dumps(event), size) == SPOOLED
        assert len(Spool(tmp_path / "spool").pending()) == 1
    finally:
        own_solr.start()
    try:
        wait_drained(tmp_path / "spool", tmp_path / "no-log")
    finally:
        intake.stop()
    with admin_of(own_solr) as admin:
        for core in ("elements", "relations"):
            admin.commit(core)
        assert admin.count("elements", f"qualifiedName:{database}.t*") == 1500 * 3  # tables and their columns
        assert admin.count("elements", f'qualifiedName:"openlineage://{JOB_NAMESPACE}/{database}_wide/{run_id}"') == 1
        assert admin.count("relations", f"endpoint2QualifiedName:{database}.t* AND type:DATA_FLOW") == 1500


def test_an_intake_that_is_stopping_takes_no_event_and_lets_go_of_the_state_directory(
        tmp_path: Path, own_solr: EmbeddedSolr) -> None:
    """Stopped, the intake answers 503-worthy IntakeStopping instead of writing (or spooling)
    behind its lock's back; the next intake on the state directory starts."""
    intake = Intake(intake_config(tmp_path), SolrIndex(own_solr.client_config(retries=0)))
    intake.start()
    intake.stop()
    event = as_json(job_run(str(uuid.uuid4()), "after_stop", RunState.START))
    with pytest.raises(IntakeStopping):
        intake.accept(event, validate(event), orjson.dumps(event))
    assert Spool(tmp_path / "spool").pending() == []
    following = Intake(intake_config(tmp_path), SolrIndex(own_solr.client_config(retries=0)))
    following.start()
    following.stop()


def test_events_posted_while_the_spool_drains_are_each_written_once_and_merged(
        tmp_path: Path, own_solr: EmbeddedSolr) -> None:
    """Runs STARTed while Solr is down (spooled); Solr comes back, and while the spool drains
    their COMPLETEs and new runs arrive from 4 clients. Each is answered 201 or 202, and in the
    end every run is there once, its START and COMPLETE merged."""
    spool = tmp_path / "spool"
    prefix = f"race{uuid.uuid4().hex[:6]}"
    started = [str(uuid.uuid4()) for _ in range(300)]
    fresh = [str(uuid.uuid4()) for _ in range(100)]
    with serve_on_free_port(tmp_path, own_solr, extra=intake_section(spool)) as served:
        url, log = served.url, served.log
        try:
            assert own_solr.stop()
            transport = emitter(url)
            try:
                assert [transport.emit(job_run(run_id, f"{prefix}_{n}", RunState.START)).status_code
                        for n, run_id in enumerate(started)] == [202] * len(started)
            finally:
                own_solr.start()

            def complete(item: tuple[int, str]) -> int:
                n, run_id = item
                return emitter(url).emit(job_run(run_id, f"{prefix}_{n}", RunState.COMPLETE, offset=30)).status_code

            with ThreadPoolExecutor(4) as pool:
                statuses = list(pool.map(complete, [*enumerate(started), *enumerate(fresh, start=len(started))]))
            assert set(statuses) <= {201, 202} and len(statuses) == len(started) + len(fresh)
            wait_drained(spool, log)
            with admin_of(own_solr) as index:
                found = executions(index, prefix)
                docs = {doc["qualifiedName"]: doc for doc in index.scan(
                    "elements", f'qualifiedName:openlineage\\://{_escape(JOB_NAMESPACE)}/{prefix}*',
                    fl="qualifiedName,started,ended,properties")}
            names = {n: f"openlineage://{JOB_NAMESPACE}/{prefix}_{n}/{run_id}"
                     for n, run_id in [*enumerate(started), *enumerate(fresh, start=len(started))]}
            set_aside = sorted(p.name for p in (spool / "rejected").glob("*")) if (spool / "rejected").exists() else []
            assert set_aside == [], f"events set aside: {set_aside}; the server's log: {log.read_text()[-3000:]}"
            assert sorted(found) == sorted(names.values())
            for n, name in names.items():
                doc = docs[name]
                assert json.loads(doc["properties"])["state"] == "COMPLETE" and doc["ended"] == "2026-11-23T06:00:30Z"
                assert doc.get("started") == ("2026-11-23T06:00:00Z" if n < len(started) else None), (
                    f"{name}: {doc}; the server's log: {log.read_text()[-3000:]}")
        finally:
            own_solr.start()


def drain_spooled_runs(tmp_path: Path, prefix: str, runs: list[str], index: SolrIndex) -> None:
    """Spool a START, then a COMPLETE 30 s later, of each run (as an intake does while Solr is
    down), and let an intake writing through `index` drain them."""
    spool = Spool(tmp_path / "spool")
    for state, offset in ((RunState.START, 0), (RunState.COMPLETE, 30)):
        for n, run_id in enumerate(runs):
            spool.put(orjson.dumps(as_json(job_run(run_id, f"{prefix}_{n}", state, offset=offset))))
    intake = Intake(intake_config(tmp_path), index)
    intake.start()
    try:
        wait_drained(tmp_path / "spool", tmp_path / "no-log")
    finally:
        intake.stop()


def test_spooled_events_solr_fails_to_take_stay_spooled_until_it_takes_them(tmp_path: Path, own_solr: EmbeddedSolr) -> None:
    """Spooled STARTs and COMPLETEs of runs; Solr answers the drain's first updates with HTTP 500
    (not a refusal of the documents). Nothing is set aside: the events wait in the spool, and once
    Solr takes updates every run is there with its START and COMPLETE merged."""
    prefix = f"fail{uuid.uuid4().hex[:6]}"
    runs = [str(uuid.uuid4()) for _ in range(5)]
    drain_spooled_runs(tmp_path, prefix, runs, FailsUpdates(own_solr.client_config(retries=0), failures=8))
    assert not (tmp_path / "spool" / "rejected").exists() or not any((tmp_path / "spool" / "rejected").iterdir())
    with admin_of(own_solr) as index:
        assert len(executions(index, prefix)) == len(runs)
        docs = list(index.scan("elements", f'type:OPERATION_EXECUTION AND '
                                           f'qualifiedName:openlineage\\://{_escape(JOB_NAMESPACE)}/{prefix}*',
                               fl="started,ended"))
    assert [(doc.get("started"), doc.get("ended")) for doc in docs] == [
        ("2026-11-23T06:00:00Z", "2026-11-23T06:00:30Z")] * len(runs)


def test_a_run_drained_event_by_event_keeps_its_start_when_the_read_back_lags(
        tmp_path: Path, own_solr: EmbeddedSolr, monkeypatch: pytest.MonkeyPatch) -> None:
    """Spooled STARTs, then their COMPLETEs, drained one event a flush, while the stored read of
    each run's execution finds nothing: each run still ends with its START's start and its
    COMPLETE's end (the intake merges with the execution it last wrote, not only with Solr's
    read-back)."""
    monkeypatch.setattr(intake_module, "DRAIN_BATCH", 1)
    prefix = f"lag{uuid.uuid4().hex[:6]}"
    runs = [str(uuid.uuid4()) for _ in range(4)]
    drain_spooled_runs(tmp_path, prefix, runs, LaggingReads(own_solr.client_config(retries=0)))
    with admin_of(own_solr) as index:
        assert len(executions(index, prefix)) == len(runs)
        docs = list(index.scan("elements", f'type:OPERATION_EXECUTION AND '
                                           f'qualifiedName:openlineage\\://{_escape(JOB_NAMESPACE)}/{prefix}*',
                               fl="started,ended,properties"))
    assert [(doc.get("started"), doc.get("ended"), json.loads(doc["properties"])["state"]) for doc in docs] == [
        ("2026-11-23T06:00:00Z", "2026-11-23T06:00:30Z", "COMPLETE")] * len(runs)


class QueuesMoreAtTheFirstRead(LaggingReads):
    """LaggingReads whose first real-time get of elements (the writer thread's read-back of the
    first group) returns only once `then` has queued the next event: so that event is taken
    while the first group's documents are in flight. The moment is chosen here; Solr is real."""

    def __init__(self, config: SolrConfig, then: Callable[[], None]) -> None:
        super().__init__(config)
        self.then, self.first = then, True

    def get(self, core: str, ids: Iterable[str]) -> list[dict[str, Any]]:
        if core == "elements" and self.first:
            self.first = False
            self.then()
        return super().get(core, ids)


def test_a_runs_complete_taken_while_its_start_is_in_flight_waits_for_it(
        tmp_path: Path, own_solr: EmbeddedSolr, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer posts the next group of events while Solr takes the group before. A run's
    COMPLETE taken while its START's group is in flight waits for that group's acknowledgement
    and merges with it (the stored read of the run finds nothing here, so only the START's
    acknowledged write tells it): the run ends with the START's start and the COMPLETE's end."""
    monkeypatch.setattr(intake_module, "WRITE_BATCH", 1)  # one event a group
    prefix = f"flight{uuid.uuid4().hex[:6]}"
    run_id = str(uuid.uuid4())
    start, complete = (as_json(job_run(run_id, f"{prefix}_0", state, offset=offset))
                       for state, offset in ((RunState.START, 0), (RunState.COMPLETE, 30)))
    answers: dict[str, int] = {}
    posting: list[threading.Thread] = []

    def post(name: str, event: dict[str, Any]) -> None:
        answers[name] = intake.accept(event, validate(event), orjson.dumps(event))

    def queue_the_complete() -> None:
        thread = threading.Thread(target=post, args=("complete", complete))
        thread.start()
        posting.append(thread)
        deadline = time.monotonic() + 30
        while intake._queue.qsize() == 0:  # the COMPLETE waits for the writer thread
            assert time.monotonic() < deadline, "the COMPLETE was not handed over"
            time.sleep(0.01)

    intake = Intake(intake_config(tmp_path), QueuesMoreAtTheFirstRead(own_solr.client_config(retries=0),
                                                                      queue_the_complete))
    intake.start()
    try:
        post("start", start)
        for thread in posting:
            thread.join(60)
    finally:
        intake.stop()
    assert answers == {"start": 201, "complete": 201}
    with admin_of(own_solr) as index:
        assert len(executions(index, prefix)) == 1
        docs = list(index.scan("elements", f'type:OPERATION_EXECUTION AND '
                                           f'qualifiedName:openlineage\\://{_escape(JOB_NAMESPACE)}/{prefix}*',
                               fl="started,ended,properties"))
    assert [(doc.get("started"), doc.get("ended"), json.loads(doc["properties"])["state"]) for doc in docs] == [
        ("2026-11-23T06:00:00Z", "2026-11-23T06:00:30Z", "COMPLETE")]
