"""`navd run` as a subprocess against the real services: scheduling, run records and status,
systemd notifications, SIGHUP, SIGTERM, manual
runs beside the daemon, and kill -9 during Spark tailing and HDFS extraction."""

from __future__ import annotations

import json
import os
import pty
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pyhive import hive
from hdfs import Client

from navd.extractors.spark.logfiles import EventLogCursorStore as CursorStore
from navd.index.client import SolrIndex
from navd.locks import component_lock
from navd.model import path_qualified_name
from navd.solr.server import EmbeddedSolr
from navd_devstack.hadoop import FSSHELL_CLASS, DevHdfs
from navd_devstack.yarn import DevYarn
import test_spark_kill
from test_spark_kill import queries
from conftest import write_navd_config

busy_job = test_spark_kill.busy_job  # the fixture, used by the kill -9 test below

NAVD = str(Path(sys.executable).parent / "navd")
FIXTURES = Path(__file__).parent / "fixtures" / "spark_events"
#: pull intervals in the tests: 0.04 minutes = 2.4 s
INTERVAL_MINUTES = 0.04


class Notifications:
    """A datagram socket standing in for systemd's $NOTIFY_SOCKET, read as systemd reads it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.2)
        self.received: list[str] = []
        self.closing = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while not self.closing.is_set():
            try:
                self.received.append(self.sock.recv(4096).decode())
            except TimeoutError:
                continue
            except OSError:
                return

    def wait_for(self, field: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(field in message.split("\n") for message in list(self.received)):
                return
            time.sleep(0.1)
        raise AssertionError(f"no {field} from navd within {timeout}s; got {self.received[-5:]}")

    def close(self) -> None:
        self.closing.set()
        self.reader.join()
        self.sock.close()


@pytest.fixture
def notifications(tmp_path: Path) -> Iterator[Notifications]:
    # AF_UNIX paths are limited to 108 bytes: pytest's tmp paths can be longer.
    short = Path(f"/tmp/navd-notify-{os.getpid()}-{time.monotonic_ns()}.sock")
    notify = Notifications(short)
    yield notify
    notify.close()
    short.unlink(missing_ok=True)


def write_config(path: Path, solr: EmbeddedSolr, state: Path, body: str) -> Path:
    return write_navd_config(path, solr, body, state=state, solr_settings="retries = 2\nbackoff_seconds = 0.2\n")


def hdfs_section(hdfs: DevHdfs, root: str, *, enabled: bool = True, interval: float = INTERVAL_MINUTES) -> str:
    # The cluster's default file system is a [cluster] key (write_config writes no [cluster]).
    return (f'[cluster]\ndefault_fs = "{hdfs.default_fs}"\n'
            f'[hdfs]\nenabled = {str(enabled).lower()}\nurls = ["{hdfs.webhdfs_url}"]\n'
            f'roots = ["{root}"]\nuser = "{hdfs.superuser}"\n'
            f'interval_minutes = {interval}\n')


def start(config: Path, log: Path, notify: Notifications | None = None,
          extra_env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "NAVD_CONFIG": str(config), **(extra_env or {})}
    env.pop("NOTIFY_SOCKET", None)
    if notify is not None:
        env["NOTIFY_SOCKET"] = str(notify.path)
    return subprocess.Popen([NAVD, "run"], env=env, stdout=subprocess.DEVNULL, stderr=log.open("ab"))


def stop(proc: subprocess.Popen[bytes]) -> tuple[int, float]:
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=60)
    return code, time.monotonic() - began


def log_lines(log: Path) -> list[dict[str, Any]]:
    lines = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            lines.append({"event": line, "level": "raw"})
    return lines


def wait_until(check: Callable[[], Any], timeout: float, what: str, proc: subprocess.Popen[bytes] | None = None,
               log: Path | None = None) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"navd run exited with {proc.returncode} while waiting for {what}: "
                                 + (log.read_text()[-3000:] if log else ""))
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}"
                         + (": " + log.read_text()[-3000:] if log else ""))


def runs(index: SolrIndex, component: str, since: datetime | None = None) -> list[dict[str, Any]]:
    query = f'kind:run AND component:"{component}"'
    docs = [d for d in index.scan("runs", query)
            if since is None or parse(d["started"]) >= since]
    return sorted(docs, key=lambda d: d["started"])


def parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def succeeded(index: SolrIndex, component: str, since: datetime, at_least: int = 1) -> list[dict[str, Any]]:
    done = [r for r in runs(index, component, since) if r["state"] == "SUCCEEDED"]
    return done if len(done) >= at_least else []


def navd_status(config: Path) -> dict[str, Any]:
    out = subprocess.run([NAVD, "status", "--json"], env={**os.environ, "NAVD_CONFIG": str(config)},
                         capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


def now() -> datetime:
    from datetime import UTC
    return datetime.now(UTC)


@pytest.fixture
def small_tree(hdfs_client: Client, unique: str) -> str:
    root = f"/{unique}"
    for number in range(3):
        hdfs_client.write(f"{root}/in/part-{number}.csv", data=b"a,b\n")
    hdfs_client.write(f"{root}/out/ünï cödé.txt", data=b"x")
    return root


def lay_pull_inputs(client: Client, directory: str, thrift_port: int, database: str, table: str) -> None:
    """Something for the pull extractors to read: three CSV files in `directory` (HDFS) and a new
    database holding one Parquet table (HMS, through HiveServer2 on `thrift_port`)."""
    for number in range(3):
        client.write(f"{directory}/part-{number}.csv", data=b"a,b\n")
    with hive.connect("127.0.0.1", thrift_port, username="navd") as connection:
        cursor = connection.cursor()
        cursor.execute(f"CREATE DATABASE {database}")
        cursor.execute(f"CREATE TABLE {database}.{table} (id INT, amount DOUBLE) USING parquet")


def event_log_dir(tmp_path: Path, names: tuple[str, ...] = ("ctas_expression",)) -> Path:
    """Captured real Spark event logs, as a Spark History directory holds them."""
    logs = tmp_path / "spark-events"
    logs.mkdir()
    for name in names:
        (logs / f"local-{name}").write_bytes((FIXTURES / f"{name}.jsonl").read_bytes())
    return logs


# -- scheduling, status, notifications, SIGHUP, SIGTERM -----------------------------------------

def test_daemon_runs_each_component_on_schedule_and_stops_cleanly(
        solr_server: EmbeddedSolr, index: SolrIndex, hdfs: DevHdfs, yarn: DevYarn, small_tree: str,
        tmp_path: Path, notifications: Notifications) -> None:
    logs = event_log_dir(tmp_path)
    body = (hdfs_section(hdfs, small_tree) +
            f'[yarn]\nenabled = true\nurls = ["{yarn.rm_url}"]\ninterval_minutes = {INTERVAL_MINUTES}\n'
            f'[spark]\nenabled = true\nevent_log_dirs = ["{logs}"]\npoll_seconds = 0.5\n'
            f'[purge]\ninterval_days = 0.0001\n')
    config = write_config(tmp_path / "navd.toml", solr_server, tmp_path / "state", body)
    log = tmp_path / "navd.log"
    began = now()
    proc = start(config, log, notifications, {"WATCHDOG_USEC": "1000000"})
    try:
        notifications.wait_for("READY=1", 60)
        wait_until(lambda: succeeded(index, "extractor.hdfs", began, 3), 120, "three HDFS runs", proc, log)
        wait_until(lambda: succeeded(index, "extractor.yarn", began, 2), 60, "two YARN runs", proc, log)
        wait_until(lambda: succeeded(index, "extractor.spark", began), 60, "a Spark pass", proc, log)
        wait_until(lambda: succeeded(index, "linker", began), 60, "a link pass", proc, log)
        wait_until(lambda: succeeded(index, "purge", began), 60, "a purge run", proc, log)
        notifications.wait_for("WATCHDOG=1", 10)

        # Each run starts `interval` after the previous one of its extractor completed: never two at once.
        for component in ("extractor.hdfs", "extractor.yarn"):
            recorded = runs(index, component, began)
            for previous, following in zip(recorded, recorded[1:], strict=False):
                gap = (parse(following["started"]) - parse(previous["ended"])).total_seconds()
                assert gap >= INTERVAL_MINUTES * 60 - 0.05, (component, previous, following)
        # What a run wrote carries its run id.
        hdfs_runs = {r["identity"] for r in runs(index, "extractor.hdfs", began)}
        [tree_doc] = index.get("elements", [_identity(hdfs, small_tree)])
        assert tree_doc["extractorRunId"] in hdfs_runs
        spark_pass = succeeded(index, "extractor.spark", began)[0]
        assert spark_pass["count_records"] > 0 and spark_pass["count_lines"] > 0

        # From a run's start to the end of the link pass after it, the next run is not set yet;
        # otherwise it is a time after the last run ended, never the one that began that run.
        def hdfs_scheduled_after_last_run() -> bool:
            shown = navd_status(config)["components"]["extractor.hdfs"]
            assert shown["last_success"] is not None
            if shown["next_run"] == "AFTER_CURRENT_RUN":
                return False
            assert shown["last_run"]["state"] != "RUNNING", shown
            assert parse(shown["next_run"]) > parse(shown["last_run"]["ended"]), shown
            return True

        wait_until(hdfs_scheduled_after_last_run, 60, "a scheduled next HDFS run", proc, log)
        status = navd_status(config)
        assert status["components"]["extractor.spark"]["next_run"] == "POLLING every 0.5s"
        # Purge runs every 8.6 s here: while one runs its next start is AFTER_CURRENT_RUN.
        purge_next = wait_until(lambda: (lambda n: n if n != "AFTER_CURRENT_RUN" else None)(
            navd_status(config)["components"]["purge"]["next_run"]), 30, "a scheduled next purge", proc, log)
        assert parse(purge_next) > began
        assert status["totals"]["elements"] > 0

        # SIGHUP with a broken file: logged, the running config stays.
        good = config.read_text()
        config.write_text(good + "[yarn.bogus]\n")
        proc.send_signal(signal.SIGHUP)
        wait_until(lambda: [line for line in log_lines(log) if "config reload refused" in line.get("event", "")],
                   20, "the reload error", proc, log)
        assert proc.poll() is None
        # SIGHUP with yarn disabled: yarn is no longer scheduled, the others go on.
        config.write_text(good.replace("[yarn]\nenabled = true", "[yarn]\nenabled = false"))
        proc.send_signal(signal.SIGHUP)
        wait_until(lambda: navd_status(config)["components"]["extractor.yarn"]["next_run"] == "NOT_SCHEDULED",
                   20, "yarn unscheduled", proc, log)
        reloaded = now()
        wait_until(lambda: succeeded(index, "extractor.hdfs", reloaded), 30, "an HDFS run after the reload",
                   proc, log)
        time.sleep(INTERVAL_MINUTES * 60 + 1)
        assert not runs(index, "extractor.yarn", reloaded + timedelta(seconds=1))
    finally:
        code, seconds = stop(proc)
    assert code == 0 and seconds < 30, log.read_text()[-3000:]
    notifications.wait_for("STOPPING=1", 5)
    events = log_lines(log)
    assert any(e.get("event") == "navd stopped" for e in events)
    assert not [e for e in events if e.get("level") in ("error", "critical", "raw")
                and "config reload refused" not in e.get("event", "")], events
    assert navd_status(config)["components"]["extractor.hdfs"]["next_run"] == "NOT_SCHEDULED"


def spark_daemon_config(tmp_path: Path, solr: EmbeddedSolr, logs: Path, extra: str = "") -> Path:
    config = write_config(tmp_path / "navd.toml", solr, tmp_path / "state",
                          f'[spark]\nenabled = true\nevent_log_dirs = ["{logs}"]\npoll_seconds = 0.5\n{extra}')
    config.chmod(0o600)
    return config


def test_sighup_with_a_bad_config_keeps_the_daemon_and_the_running_config(
        solr_server: EmbeddedSolr, index: SolrIndex, tmp_path: Path) -> None:
    """A reload with a non-UTF-8 byte, a port out of range or a nan interval used to
    end `navd run` with a traceback (or kill the Spark poll job); now each is one line naming the
    key and the daemon goes on polling with the config it had."""
    logs = event_log_dir(tmp_path)
    config = spark_daemon_config(tmp_path, solr_server, logs)
    good = config.read_bytes()
    log = tmp_path / "navd.log"
    began = now()
    proc = start(config, log)
    line = good.split(b"\n").index(b"poll_seconds = 0.5") + 1
    bad = [
        (good.replace(b'poll_seconds = 0.5', b'poll_seconds = 0.5 # r\xe9glage'),
         f"{config}: [spark] poll_seconds: not UTF-8 text (byte 0xe9 at line {line}, column 23); "
         "save the file as UTF-8"),
        (good.replace(solr_server.url.encode(), b"http://127.0.0.1:99999/solr"),
         f"{config}: [solr] url: 'http://127.0.0.1:99999/solr': port '99999' is not a number from 1 to 65535"),
        (good.replace(b"poll_seconds = 0.5", b"poll_seconds = nan"),
         f"{config}: [spark] poll_seconds: must be a number > 0 and <= 86400, got nan"),
    ]
    try:
        wait_until(lambda: succeeded(index, "extractor.spark", began), 60, "a Spark pass", proc, log)
        for number, (text, message) in enumerate(bad, start=1):
            config.write_bytes(text)
            proc.send_signal(signal.SIGHUP)
            refused = wait_until(lambda n=number: (lambda r: r if len(r) >= n else [])(  # type: ignore[misc]
                [e for e in log_lines(log) if "config reload refused" in e.get("event", "")]), 30,
                f"reload {number} refused", proc, log)
            assert len(refused) == number
            assert refused[-1]["event"] == f"config reload refused, the running config stays: {message}"
            assert refused[-1]["level"] == "error" and refused[-1]["logger"] == "navd.daemon"
            assert proc.poll() is None
        # The running config stays: Spark is still polled every 0.5 s, against the same Solr.
        polled = now()
        (logs / "local-multi_output").write_bytes((FIXTURES / "multi_output.jsonl").read_bytes())
        wait_until(lambda: succeeded(index, "extractor.spark", polled), 60, "a Spark pass after the reloads",
                   proc, log)
    finally:
        code, _ = stop(proc)
    assert code == 0, log.read_text()[-3000:]
    events = log_lines(log)
    assert not [e for e in events if e.get("level") == "raw" or "Traceback" in json.dumps(e)], events
    assert [e for e in events if e.get("level") == "error"] == [e for e in events if "reload refused" in e["event"]]


def test_a_start_skipped_while_the_previous_run_finishes_is_started_again(tmp_path: Path) -> None:
    """A job schedules its next start, then publishes it to Solr; with Solr slow (cores loading
    after an outage) that outlasted a 2.4 s interval, APScheduler skipped the start and, a
    skipped date job being dropped, the component never ran again (seen in the 5-minute outage).
    The daemon's real scheduler, a job that schedules itself and then stays busy: it runs again."""
    from datetime import UTC

    from navd.config import DaemonConfig, NavdConfig
    from navd.daemon import Daemon

    daemon = Daemon(NavdConfig(daemon=DaemonConfig(state_dir=str(tmp_path / "state"))))
    starts: list[str] = []

    def job(component: str) -> None:  # as Daemon._job: the next start first, then slow work
        starts.append(component)
        if len(starts) == 1:
            daemon.scheduler.add_job(job, "date", run_date=datetime.now(UTC), id=component, args=[component],
                                     replace_existing=True)
            time.sleep(2)  # still running when that start comes: APScheduler skips it

    daemon._job = job  # type: ignore[method-assign]
    daemon.scheduler = daemon._new_scheduler()
    daemon.scheduler.start()
    try:
        daemon.scheduler.add_job(job, "date", run_date=datetime.now(UTC), id="extractor.x", args=["extractor.x"])
        wait_until(lambda: len(starts) >= 2, 30, "the skipped start, started again")
    finally:
        daemon.stop.set()
        daemon.scheduler.shutdown(wait=True)
        daemon.index.close()
    assert starts[:2] == ["extractor.x", "extractor.x"]


def test_a_job_that_raises_is_recorded_failed_and_rescheduled(
        solr_server: EmbeddedSolr, index: SolrIndex, tmp_path: Path) -> None:
    """A Spark poll failing before its run began (its lock file cannot be opened:
    an OSError, not a navd error; then its cursor state cannot be read) is logged, recorded as a
    FAILED run that `navd status` shows, and polled again until it succeeds: never dropped."""
    logs = event_log_dir(tmp_path)
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("the Spark state directory should be here\n")
    config = spark_daemon_config(tmp_path, solr_server, logs, f'state_dir = "{blocker}"\n')
    lock = tmp_path / "state" / "locks" / "extractor.spark.lock"
    lock.mkdir(parents=True)  # a directory where the lock file goes: opening it fails
    # A run a killed navd left RUNNING: at start the daemon checks that lock, and must not die of it.
    from navd.index.client import serialise
    from navd.runs import Run

    left = Run(f"spark##left-{tmp_path.name}", "extractor.spark", now() - timedelta(hours=1))
    index.post_update("runs", serialise([left.document("RUNNING")]))
    index.commit("runs")
    log = tmp_path / "navd.log"
    began = now()
    proc = start(config, log)

    def failed(since: datetime, fragment: str, at_least: int = 2) -> list[dict[str, Any]]:
        found = [r for r in runs(index, "extractor.spark", since) if r["state"] == "FAILED" and fragment in r["error"]]
        return found if len(found) >= at_least else []

    try:
        unexpected = wait_until(lambda: failed(began, "Is a directory"), 60, "two FAILED runs (lock)", proc, log)
        assert unexpected[0]["error"] == f"[Errno 21] Is a directory: '{lock}'"
        shown = navd_status(config)["components"]["extractor.spark"]["last_run"]
        assert shown["state"] == "FAILED" and "Is a directory" in shown["error"]
        lock.rmdir()
        unlocked = now()
        state = wait_until(lambda: failed(unlocked, "cannot read the log cursors"), 60, "two FAILED runs (state)",
                           proc, log)
        assert str(blocker) in state[0]["error"]
        blocker.unlink()
        fixed = now()
        wait_until(lambda: succeeded(index, "extractor.spark", fixed), 90, "a Spark pass once fixed", proc, log)
        assert proc.poll() is None
    finally:
        code, _ = stop(proc)
    assert code == 0
    # The start's check for interrupted runs does not die of that lock either: nobody holds it, so
    # the run a killed navd left RUNNING is marked failed.
    (abandoned,) = [r for r in runs(index, "extractor.spark") if r["identity"] == left.run_id]
    assert abandoned["state"] == "FAILED"
    errors = [e for e in log_lines(log) if e.get("level") == "error"]
    assert {e["logger"] for e in errors} == {"navd.extractor.spark"}, errors
    assert any(e["event"].startswith("run failed with an unexpected error: [Errno 21] Is a directory")
               and "Traceback" in e.get("exception", "") for e in errors), errors
    assert any(e["event"].startswith("poll failed: ") and "cannot read the log cursors" in e["event"]
               for e in errors), errors
    # One record per failure: the poll's own FAILED record is not written twice by the daemon.
    recorded = [r for r in runs(index, "extractor.spark", began) if r["state"] == "FAILED"]
    logged = [e for e in errors if e["event"].startswith(("run failed", "poll failed"))]
    assert len(recorded) == len(logged)


def _identity(hdfs: DevHdfs, path: str) -> str:
    from navd.model import SourceType, identity

    return identity(SourceType.HDFS, path_qualified_name(path, hdfs.default_fs))


# -- failure isolation --------------------------------------------------------------------------

# Each source down in turn (the NameNode, HiveServer2, the ResourceManager): tests/test_source_outages.py.


# -- manual runs beside the daemon; progress on a terminal --------------------------------------

def test_manual_extract_waits_for_a_running_extraction_and_the_daemon_skips_a_held_one(
        solr_server: EmbeddedSolr, index: SolrIndex, hdfs: DevHdfs, small_tree: str, tmp_path: Path) -> None:
    state = tmp_path / "state"
    body = hdfs_section(hdfs, small_tree)
    config = write_config(tmp_path / "navd.toml", solr_server, state, body)
    env = {**os.environ, "NAVD_CONFIG": str(config)}
    log = tmp_path / "navd.log"
    # While the extraction's lock is held (as a run in progress holds it), the daemon's scheduled
    # runs are skipped and a manual run waits; once it is free both go on.
    with component_lock(state, "extractor.hdfs", wait=False):
        began = now()
        proc = start(config, log)
        try:
            wait_until(lambda: [e for e in log_lines(log) if "run skipped" in e.get("event", "")], 30,
                       "a skipped scheduled run", proc, log)
            manual = subprocess.Popen([NAVD, "extract", "hdfs"], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
            time.sleep(3)
            assert manual.poll() is None, manual.communicate()
            assert not runs(index, "extractor.hdfs", began)
        except BaseException:
            stop(proc)
            raise
    try:
        out, err = manual.communicate(timeout=120)
        assert manual.returncode == 0, err
        assert "waiting for the hdfs extraction run in progress" in err
        assert out.startswith("hdfs: ")
        wait_until(lambda: succeeded(index, "extractor.hdfs", began, 2), 60, "daemon runs after the manual one",
                   proc, log)
        recorded = runs(index, "extractor.hdfs", began)
        for previous, following in zip(recorded, recorded[1:], strict=False):
            assert parse(following["started"]) >= parse(previous["ended"]), "two HDFS runs overlapped"
    finally:
        code, _ = stop(proc)
    assert code == 0

    # A terminal gets progress (counts and rate) on stderr; a pipe gets only the summary.
    leader, follower = pty.openpty()
    tty_run = subprocess.run([NAVD, "extract", "hdfs", "--full"], env=env, stdout=subprocess.PIPE,
                             stderr=follower, timeout=120, check=False)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert tty_run.returncode == 0
    assert b"hdfs: " in shown and b" records (" in shown and b"/s, " in shown, shown
    piped = subprocess.run([NAVD, "--log-level", "warning", "extract", "hdfs", "--full"], env=env,
                           capture_output=True, text=True, timeout=120, check=False)
    assert piped.returncode == 0 and "/s, " not in piped.stderr and piped.stdout.startswith("hdfs: ")


def test_extract_all_runs_every_configured_extractor_and_fails_if_one_fails(
        solr_server: EmbeddedSolr, index: SolrIndex, hdfs: DevHdfs, small_tree: str, tmp_path: Path) -> None:
    logs = event_log_dir(tmp_path)
    dead_port = _free_port()
    body = (hdfs_section(hdfs, small_tree, enabled=False) +
            f'[spark]\nevent_log_dirs = ["{logs}"]\n'
            f'[yarn]\nurls = ["http://127.0.0.1:{dead_port}"]\n')
    config = write_config(tmp_path / "navd.toml", solr_server, tmp_path / "state", body)
    done = subprocess.run([NAVD, "extract", "all"], env={**os.environ, "NAVD_CONFIG": str(config)},
                          capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 1
    assert "hdfs: " in done.stdout and "spark: " in done.stdout
    assert "navd: error: yarn: " in done.stderr and f"127.0.0.1:{dead_port}" in done.stderr, done.stderr


def _free_port() -> int:
    from navd.process import free_port

    return free_port()


# -- kill -9 during Spark tailing and HDFS extraction -------------------------------------------

KILL_POINTS = 6
DIRECTORIES, FILES = 80, 50


def _hdfs_tree(hdfs: DevHdfs, root: str) -> None:
    """A tree worth a few seconds of extraction, made with two FsShell calls."""
    directories = [f"{hdfs.default_fs}{root}/d{d:02d}" for d in range(DIRECTORIES)]
    hdfs.run_tool(FSSHELL_CLASS, "-mkdir", "-p", *directories)
    hdfs.run_tool(FSSHELL_CLASS, "-touchz", *(f"{d}/f{f:02d} ü.txt" for d in directories for f in range(FILES)))


def _snapshot(index: SolrIndex, hdfs: DevHdfs, root: str, app_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    for core in ("elements", "relations"):
        index.commit(core)
    drop = ("lastIndexed", "_version_", "extractorRunId")
    prefix = path_qualified_name(root, hdfs.default_fs)
    spark_elements, spark_relations = queries(app_id)
    elements = {d["identity"]: {k: v for k, v in d.items() if k not in drop}
                for query in (f'{{!prefix f=qualifiedName v="{prefix}"}}', spark_elements)
                for d in index.scan("elements", query)}
    relations = {d["identity"]: {k: v for k, v in d.items() if k not in drop}
                 for query in (f'{{!prefix f=endpoint1QualifiedName v="{prefix}"}}', spark_relations)
                 for d in index.scan("relations", query)}
    return elements, relations


def _clear(index: SolrIndex, hdfs: DevHdfs, root: str, app_id: str) -> None:
    prefix = path_qualified_name(root, hdfs.default_fs)
    spark_elements, spark_relations = queries(app_id)
    index.delete_query("elements", f'{{!prefix f=qualifiedName v="{prefix}"}} OR ({spark_elements})')
    index.delete_query("relations", f'{{!prefix f=endpoint1QualifiedName v="{prefix}"}} OR ({spark_relations})')
    for core in ("elements", "relations"):
        index.commit(core)


def _complete(index: SolrIndex, state: Path, since: datetime) -> bool:
    """One full HDFS run and every event log read to its end, then a link pass after both."""
    hdfs_done = succeeded(index, "extractor.hdfs", since)
    cursors = CursorStore(state / "spark").load() if (state / "spark").exists() else {}
    if not hdfs_done or not cursors or not all(c.done for c in cursors.values()):
        return False
    read_at = max(parse(r["ended"]) for r in hdfs_done)
    spark_done = succeeded(index, "extractor.spark", since)
    if spark_done:
        read_at = max(read_at, max(parse(r["ended"]) for r in spark_done))
    return bool([r for r in succeeded(index, "linker", since) if parse(r["started"]) >= read_at])


def test_kill_9_during_spark_tailing_and_hdfs_extraction_then_restart_gives_the_clean_index(
        solr_server: EmbeddedSolr, index: SolrIndex, hdfs: DevHdfs, busy_job: tuple[Path, str],
        unique: str, tmp_path: Path) -> None:
    event_logs, app_id = busy_job
    root = f"/{unique}"
    _hdfs_tree(hdfs, root)

    def config(name: str) -> Path:
        # Pull interval long: one HDFS run per daemon start, as a restart after a crash does.
        body = (hdfs_section(hdfs, root, interval=60) + 'snapshots = false\n'
                f'[spark]\nenabled = true\nevent_log_dirs = ["{event_logs}"]\npoll_seconds = 0.2\n')
        return write_config(tmp_path / f"{name}.toml", solr_server, tmp_path / name, body)

    _clear(index, hdfs, root, app_id)  # Hive names kill.* are shared with test_spark_kill's job
    clean_log = tmp_path / "clean.log"
    began, clock = now(), time.monotonic()
    proc = start(config("clean"), clean_log)
    try:
        wait_until(lambda: _complete(index, tmp_path / "clean", began), 600, "the clean run", proc, clean_log)
        clean_seconds = time.monotonic() - clock
    finally:
        assert stop(proc)[0] == 0
    expected = _snapshot(index, hdfs, root, app_id)
    assert len(expected[0]) > DIRECTORIES * FILES + 150 * 12
    _clear(index, hdfs, root, app_id)

    killed_log = tmp_path / "killed.log"
    rng = random.Random(11)
    during_hdfs = during_spark = 0
    logs = sum(1 for _ in event_logs.iterdir())
    for point in range(KILL_POINTS):
        started_at = now()
        proc = start(config("killed"), killed_log)
        # The first half of the kill points land early in the HDFS run (its RUNNING record is
        # written as it starts; the first at once: a quiet host extracts the tree in about two
        # seconds); the others anywhere in a clean run's time.
        wait_until(lambda: runs(index, "extractor.hdfs", started_at), 60, "the HDFS run to start", proc, killed_log)
        time.sleep(0 if point == 0 else rng.uniform(0.2, 1.5) if point < KILL_POINTS // 2
                   else clean_seconds * rng.uniform(0.15, 0.8))
        cursors = CursorStore(tmp_path / "killed" / "spark").load()
        assert proc.poll() is None, killed_log.read_text()[-3000:]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        # Where the kill left the HDFS run, read once nothing can change it any more (a read
        # before the kill raced with the run's end: CI counted 0 while one run was left RUNNING).
        index.commit("runs")
        latest = runs(index, "extractor.hdfs", started_at)
        during_hdfs += bool(latest) and latest[-1]["state"] == "RUNNING"
        # Mid-tailing: a log without a position yet (the tailer commits a log's position as it
        # finishes it, so committed ones are mostly done), or one not read to its end.
        during_spark += len(cursors) < logs or not all(c.done for c in cursors.values())
    shown = navd_status(config("killed"))["components"]
    assert shown["extractor.hdfs"]["next_run"] == "NOT_SCHEDULED", shown  # not the dead daemon's plan
    assert shown["extractor.spark"]["next_run"] == "NOT_SCHEDULED", shown
    partial = _snapshot(index, hdfs, root, app_id)
    began = now()
    proc = start(config("killed"), killed_log)
    try:
        wait_until(lambda: _complete(index, tmp_path / "killed", began), 600, "the run after the kills",
                   proc, killed_log)
    finally:
        assert stop(proc)[0] == 0
    interrupted = [r for r in runs(index, "extractor.hdfs", began - timedelta(hours=1))
                   if r.get("error", "").startswith("interrupted")]
    print(f"clean run {clean_seconds:.1f}s; {KILL_POINTS} kill -9 points, {during_hdfs} during HDFS "
          f"extraction, {during_spark} during Spark tailing; "
          f"{len(partial[0])}/{len(expected[0])} elements after the kills; "
          f"{len(interrupted)} interrupted HDFS runs marked FAILED at restart")
    assert during_hdfs >= 1 and during_spark >= 1
    assert interrupted, "a killed run left RUNNING was not marked at restart"
    assert _snapshot(index, hdfs, root, app_id) == expected
    _clear(index, hdfs, root, app_id)


# -- Solr down while the daemon tails Spark -------------------------------------------------------

@pytest.fixture(scope="module")
def own_solr(tmp_path_factory: pytest.TempPathFactory, own_service: None) -> Iterator[EmbeddedSolr]:
    """A Solr of this module's own, to stop and start without disturbing the session's."""
    from conftest import start_server
    from navd.index.admin import init_solr

    server = start_server(tmp_path_factory.mktemp("own-solr"))
    with SolrIndex(server.client_config()) as admin:
        init_solr(admin)
    yield server
    server.stop()


def _everything(index: SolrIndex) -> tuple[dict[str, Any], dict[str, Any]]:
    for core in ("elements", "relations"):
        index.commit(core)
    drop = ("lastIndexed", "_version_", "extractorRunId")
    return tuple({d["identity"]: {k: v for k, v in d.items() if k not in drop} for d in index.scan(core)}
                 for core in ("elements", "relations"))  # type: ignore[return-value]


def test_solr_down_while_tailing_loses_nothing_and_positions_wait(own_solr: EmbeddedSolr, tmp_path: Path) -> None:

    names = ("ctas_expression", "multi_output")
    (tmp_path / "source").mkdir()
    source = event_log_dir(tmp_path / "source", names)
    own = SolrIndex(own_solr.client_config(retries=20, backoff_seconds=0.5, max_backoff_seconds=2))

    def config(name: str, logs: Path) -> Path:
        return write_config(tmp_path / f"{name}.toml", own_solr, tmp_path / name,
                            f'[spark]\nenabled = true\nevent_log_dirs = ["{logs}"]\npoll_seconds = 0.3\n')

    clean = subprocess.run([NAVD, "extract", "spark", "--once"], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "NAVD_CONFIG": str(config("clean", source))}, check=False)
    assert clean.returncode == 0, clean.stderr
    expected = _everything(own)
    assert expected[0] and expected[1]
    for core in ("elements", "relations"):
        own.delete_query(core, "*:*")
        own.commit(core)

    logs = tmp_path / "live-events"
    logs.mkdir()
    log = tmp_path / "navd.log"
    proc = start(config("daemon", logs), log)
    try:
        wait_until(lambda: [e for e in log_lines(log) if e.get("event") == "navd running"], 60, "navd running",
                   proc, log)
        assert own_solr.stop()
        for path in source.iterdir():  # new applications' logs arrive while Solr is down
            (logs / path.name).write_bytes(path.read_bytes())
        wait_until(lambda: [e for e in log_lines(log) if e.get("event", "").startswith("poll failed")], 60,
                   "a failed poll", proc, log)
        time.sleep(2)
        cursors = CursorStore(tmp_path / "daemon" / "spark").load()
        assert not any(c.done for c in cursors.values()), "positions advanced while Solr was down"
        assert proc.poll() is None
        own_solr.start()
        wait_until(lambda: (lambda c: len(c) == len(names) and all(x.done for x in c.values()))(
            CursorStore(tmp_path / "daemon" / "spark").load()), 120, "the logs read after Solr returned", proc, log)
    finally:
        own_solr.start()  # idempotent
        code, _ = stop(proc)
    assert code == 0
    assert _everything(own) == expected
    errors = [e for e in log_lines(log) if e.get("level") == "error"]
    assert errors and {e["logger"] for e in errors} <= {"navd.extractor.spark", "navd.index", "navd.runs"}, errors
