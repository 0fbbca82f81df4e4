"""Soak: `navd run` for a while with every extractor and the server on, jobs arriving, its memory watched.

Run: python tests/bench/soak.py [--minutes 10] [--spark-master yarn] [--debug]

It starts the dev services through navd's own code (`navd_devstack`, as tests/conftest.py does): an
embedded Solr, HDFS (NameNode + DataNode), YARN (ResourceManager + NodeManager), a standalone Hive
metastore with its warehouse on that HDFS and the Spark Thrift Server (HiveServer2) over it. Then
`navd run` as a user runs it (a navd.toml with `[hdfs]`, `[yarn]`, `[hive]`, `[spark]`,
`[openlineage]` and `[server]` on, pull intervals of one minute, the Spark tailer polling every 5 s)
while work arrives the whole time:

- Spark: PySpark applications submitted one after the other (`--spark-master`, default YARN, client
  mode), each running `--app-statements` CTAS statements `--statement-seconds` apart into the Hive
  metastore (tables and their files in HDFS) and dropping the table three statements back; their
  event logs go to the directory `[spark]` tails.
- HDFS: `--hdfs-files` small files every `--hdfs-seconds` under /soak/incoming/<minute>/, and
  directories older than ten minutes deleted.
- OpenLineage: a RunEvent COMPLETE (bench_openlineage.py's event: 3 inputs, 2 outputs, 20 column
  edges) POSTed to the daemon's server every `--ol-seconds`.

Every `--sample-seconds` (default 60) it records the daemon's RSS, open files and threads (from
/proc) and Solr's heap in use (/admin/info/system), prints one line, and at the end the least-squares
slope per hour of each (over the samples after `--warmup-minutes`) and whether the RSS stayed under
300 MB (the goal: RSS < 300 MB and flat over a one-hour soak, `--minutes 60`). Figures go
to .bench/soak.json.

`--debug` runs the daemon under tracemalloc (10 frames; this costs memory and CPU of its own, so
the RSS is not the plain daemon's) and, at the end, prints the allocation sites that grew most
between the first sample after the warm-up and the last one.

Everything it starts is stopped when it ends, fails or is interrupted (Ctrl-C, SIGTERM): the jobs,
the daemon (SIGTERM, as systemd stops it), running YARN applications, then the services.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import zipfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests

from bench_openlineage import CLUSTER, HIVE, event
from navd.config import DEFAULT_SOLR_VERSION, SolrConfig, default_solr_dist_dir
from navd.extractors.hdfs.settings import HdfsConfig
from navd.index.admin import init_solr
from navd.index.client import SolrIndex
from navd.logs import setup_logging
from navd.solr.server import EmbeddedSolr, SolrDistribution, free_port
from navd.webhdfs import make_client
from navd_devstack.hadoop import DevHdfs, HdfsPorts
from navd_devstack.metastore import HiveMetastore
from navd_devstack.spark_thrift import SparkThriftServer, spark_home
from navd_devstack.yarn import DevYarn, YarnPorts

REPO = Path(__file__).resolve().parents[2]
RESULT_FILE = REPO / ".bench" / "soak.json"
#: --debug figures: a traced daemon's RSS is not the daemon's, so they never stand for the soak
DEBUG_RESULT_FILE = REPO / ".bench" / "soak-debug.json"
NAVD = str(Path(sys.executable).parent / "navd")
SPARK_SUBMIT = str(Path(sys.executable).parent / "spark-submit")
WAREHOUSE = "/user/hive/warehouse"
#: outside the HDFS extractor's roots: the jars are not the soak's data
SPARK_ARCHIVE = "/apps/spark/spark-libs.zip"
RSS_GOAL_MB = 300.0
MB = 1024 * 1024
#: how long `navd run` may take to answer /readyz after it was started
READY_SECONDS = 120.0
#: the OpenLineage events' Hive tables belong to a cluster of their own: in `[cluster] name` they
#: would be tables the metastore does not hold, and the HMS extractor would try to flag them deleted
OL_CLUSTER = "openlineage"

# One Spark application of the soak: CTAS statements into the metastore, a pause after each, and
# the table three statements back dropped, so the metastore and HDFS see creations and deletions.
_SPARK_JOB = """
import sys, time
from pyspark.sql import SparkSession
app, statements, pause = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
spark = SparkSession.builder.appName(app).enableHiveSupport().getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
spark.sql("create database if not exists soak")
spark.sql('''create table if not exists soak.src using parquet as
             select id, id % 13 as bucket, concat('name ', id) as name, cast(id % 1000 as double) / 10 as amount
             from range(2000)''')
for i in range(statements):
    spark.sql(f'''create table soak.{app}_{i} using parquet as
                  select bucket, upper(name) as name_uc, sum(amount) * {i + 1} as scaled
                  from soak.src where id > {i} group by bucket, upper(name)''')
    if i >= 3:
        spark.sql(f"drop table if exists soak.{app}_{i - 3}")
    print(f"statement {i + 1}/{statements}", flush=True)
    time.sleep(pause)
spark.stop()
"""

# --debug: the daemon under tracemalloc; SIGUSR1 dumps a snapshot into the directory it is given.
_TRACED_DAEMON = """
import signal, sys, tracemalloc
tracemalloc.start(10)
out, taken = sys.argv[1], [0]
def dump(signum, frame):
    taken[0] += 1
    tracemalloc.take_snapshot().dump(f"{out}/snapshot-{taken[0]:04d}.tm")
signal.signal(signal.SIGUSR1, dump)
from navd.cli import main
sys.exit(main(["run"]))
"""


class Interrupted(Exception):
    """SIGTERM to the soak: unwind through every `finally` as Ctrl-C does."""


@dataclasses.dataclass(frozen=True)
class Sample:
    minute: float
    rss_mb: float
    open_files: int
    threads: int
    solr_heap_mb: float | None
    spark_statements: int
    spark_apps: int
    hdfs_files: int
    ol_events: int


@dataclasses.dataclass
class Counters:
    """What the job threads did so far (written by one thread each, read by the sampler)."""
    spark_statements: int = 0
    spark_apps: int = 0
    spark_failures: int = 0
    hdfs_files: int = 0
    hdfs_errors: int = 0
    ol_events: int = 0
    ol_errors: int = 0
    last_error: dict[str, str] = dataclasses.field(default_factory=dict)


# --- the daemon's and Solr's figures --------------------------------------------------------------


def proc_figures(pid: int) -> tuple[float, int, int]:
    """RSS in MB, open file descriptors and threads of `pid`, from /proc."""
    rss_kb, threads = 0, 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss_kb = int(line.split()[1])
        elif line.startswith("Threads:"):
            threads = int(line.split()[1])
    return rss_kb / 1024, len(os.listdir(f"/proc/{pid}/fd")), threads


def solr_heap_mb(index: SolrIndex) -> float | None:
    """Solr's JVM heap in use (after whatever the last GC left), or None when Solr does not answer."""
    try:
        used = index.system_info()["jvm"]["memory"]["raw"]["used"]
    except Exception as exc:  # noqa: BLE001 - a sample is skipped, the soak goes on
        sys.stderr.write(f"  Solr heap not read: {exc}\n")
        return None
    return float(used) / MB


def slope_per_hour(points: Sequence[tuple[float, float]]) -> float | None:
    """Least-squares slope of (minute, value) points, per hour; None with fewer than two minutes."""
    if len(points) < 2:
        return None
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in points)
    return sxy / sxx * 60


# --- the services -----------------------------------------------------------------------------------


@dataclasses.dataclass
class Services:
    root: Path
    solr: EmbeddedSolr
    hdfs: DevHdfs
    yarn: DevYarn | None = None
    metastore: HiveMetastore | None = None
    thrift: SparkThriftServer | None = None

    def stop(self) -> None:
        """Everything started, in reverse; each stop is tried even when another one fails."""
        for name, service in (("Spark Thrift Server", self.thrift), ("metastore", self.metastore),
                              ("YARN", self.yarn), ("HDFS", self.hdfs), ("Solr", self.solr)):
            if service is None:
                continue
            try:
                service.stop()
            except Exception as exc:  # noqa: BLE001 - the others must stop too
                sys.stderr.write(f"stopping {name} failed: {exc}\n")


def start_services(root: Path, heap: str, with_yarn: bool) -> Services:
    distribution = SolrDistribution(DEFAULT_SOLR_VERSION, default_solr_dist_dir())
    distribution.ensure()
    services = Services(root, EmbeddedSolr(root / "solr", free_port(), heap, distribution),
                        DevHdfs(root / "hdfs", HdfsPorts.free()))
    try:
        step("Solr", services.solr.start)
        step("HDFS", services.hdfs.start)
        client = make_client(HdfsConfig(urls=(services.hdfs.webhdfs_url,), user=services.hdfs.superuser))
        for shared in (WAREHOUSE, "/tmp", "/soak/incoming"):
            client.makedirs(shared)
            client.set_permission(shared, "1777")
        if with_yarn:
            services.yarn = DevYarn(root / "yarn", YarnPorts.free(), services.hdfs)
            step("YARN", services.yarn.start)
        services.metastore = HiveMetastore(root / "metastore", free_port(),
                                           warehouse=f"{services.hdfs.default_fs}{WAREHOUSE}")
        step("the Hive metastore", services.metastore.start)
        services.thrift = SparkThriftServer(root / "thrift", free_port(), metastore_uri=services.metastore.uri,
                                            warehouse=services.metastore.warehouse)
        step("the Spark Thrift Server", services.thrift.start)
    except BaseException:
        services.stop()
        raise
    return services


def step(what: str, start: Callable[[], Any]) -> None:
    began = time.monotonic()
    sys.stderr.write(f"starting {what} ...")
    sys.stderr.flush()
    start()
    sys.stderr.write(f" {time.monotonic() - began:.0f} s\n")


def write_config(services: Services, directory: Path, events: Path, port: int) -> Path:
    """navd.toml for `navd run`: every extractor on against the dev services, the server with the
    OpenLineage intake on, writing to Solr as navd's admin user."""
    solr, hdfs = services.solr, services.hdfs
    credentials = solr.credentials()
    if credentials is None:
        raise SystemExit(f"no admin credentials in {solr.home}")
    password_file = directory / "admin-password"
    password_file.write_text(credentials[1])
    password_file.chmod(0o600)
    assert services.thrift is not None
    yarn = (f'[yarn]\nenabled = true\nurls = ["{services.yarn.rm_url}"]\ninterval_minutes = 1\n'
            if services.yarn is not None else "")
    config = directory / "navd.toml"
    config.write_text(
        f'[cluster]\nname = "{CLUSTER}"\ndefault_fs = "{hdfs.default_fs}"\n'
        f'[solr]\nurl = "{solr.url}"\nauth = "basic"\nusername = "{credentials[0]}"\n'
        f'password_file = "{password_file}"\n'
        f'[logging]\nformat = "json"\nlevel = "info"\n'
        f'[daemon]\nstate_dir = "{directory / "state"}"\n'
        f'[hdfs]\nenabled = true\nurls = ["{hdfs.webhdfs_url}"]\n'
        f'roots = ["/soak", "{WAREHOUSE}"]\nuser = "{hdfs.superuser}"\ninterval_minutes = 1\n'
        f'{yarn}'
        f'[hive]\nenabled = true\nhost = "127.0.0.1"\nport = {services.thrift.port}\ninterval_minutes = 1\n'
        f'[spark]\nenabled = true\nevent_log_dirs = ["{events}"]\npoll_seconds = 5\n'
        f'[server]\nenabled = true\nhost = "127.0.0.1"\nport = {port}\nauth = "none"\n'
        f'[openlineage]\nenabled = true\nspool_dir = "{directory / "spool"}"\n'
        f'[openlineage.namespaces]\n"{HIVE}" = "{OL_CLUSTER}"\n')
    config.chmod(0o600)
    return config


# --- the jobs ---------------------------------------------------------------------------------------


class Jobs:
    """The three sources of work, each a thread that stops at `stopping`."""

    def __init__(self, services: Services, root: Path, events: Path, url: str, args: argparse.Namespace) -> None:
        self.services, self.root, self.events, self.url, self.args = services, root, events, url, args
        self.stopping = threading.Event()
        self.counters = Counters()
        self.spark_proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self.threads = [threading.Thread(target=self._guard, args=(name, body), name=f"soak-{name}", daemon=True)
                        for name, body in (("spark", self._spark), ("hdfs", self._hdfs),
                                           ("openlineage", self._openlineage))]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        self.stopping.set()
        with self._lock:
            proc = self.spark_proc
        if proc is not None and proc.poll() is None:
            kill_group(proc)
        for thread in self.threads:
            thread.join(timeout=60)

    def _guard(self, name: str, body: Callable[[], None]) -> None:
        try:
            body()
        except Exception as exc:  # noqa: BLE001 - reported in the samples' counters and at the end
            self.counters.last_error[name] = f"{type(exc).__name__}: {exc}"
            sys.stderr.write(f"  the {name} job thread stopped: {exc}\n")

    def _spark(self) -> None:
        script = self.root / "soak_job.py"
        script.write_text(textwrap.dedent(_SPARK_JOB))
        services, args = self.services, self.args
        assert services.metastore is not None
        conf_dir = services.yarn.conf_dir if services.yarn is not None else services.hdfs.conf_dir
        env = {**os.environ, "HADOOP_CONF_DIR": str(conf_dir), "HADOOP_USER_NAME": services.hdfs.superuser,
               "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
        archive = self._spark_archive() if services.yarn is not None else []
        number = 0
        while not self.stopping.is_set():
            number += 1
            app = f"soak_{os.getpid()}_{number}"
            cmd = [SPARK_SUBMIT, "--master", args.spark_master, "--name", app,
                   "--driver-memory", "512m", "--executor-memory", "512m", "--num-executors", "1",
                   "--executor-cores", "1", "--conf", "spark.yarn.am.memory=256m",
                   "--conf", "spark.ui.enabled=false", "--conf", "spark.driver.host=127.0.0.1",
                   "--conf", "spark.sql.shuffle.partitions=2",
                   "--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir={self.events.as_uri()}",
                   "--conf", "spark.sql.catalogImplementation=hive",
                   "--conf", f"spark.hadoop.hive.metastore.uris={services.metastore.uri}",
                   "--conf", f"spark.sql.warehouse.dir={services.metastore.warehouse}",
                   "--conf", f"spark.yarn.appMasterEnv.PYSPARK_PYTHON={sys.executable}",
                   "--conf", f"spark.executorEnv.PYSPARK_PYTHON={sys.executable}", *archive,
                   str(script), app, str(args.app_statements), str(args.statement_seconds)]
            with (self.root / f"{app}.log").open("w") as err:
                with self._lock:
                    if self.stopping.is_set():
                        return
                    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=err, text=True,
                                            cwd=self.root, start_new_session=True)
                    self.spark_proc = proc
                assert proc.stdout is not None
                for line in proc.stdout:
                    if line.startswith("statement "):
                        self.counters.spark_statements += 1
                code = proc.wait()
            if self.stopping.is_set():
                return
            if code == 0:
                self.counters.spark_apps += 1
            else:
                self.counters.spark_failures += 1
                tail = (self.root / f"{app}.log").read_text(errors="replace")[-600:]
                self.counters.last_error["spark"] = f"{app} exited {code}: {tail}"
                sys.stderr.write(f"  Spark application {app} exited {code} (log {self.root / f'{app}.log'})\n")
                self.stopping.wait(30)  # a broken setup: do not resubmit in a tight loop

    def _spark_archive(self) -> list[str]:
        """Spark's jars zipped and put in HDFS once, as sites set `spark.yarn.archive`: without it
        every submission zips and uploads the whole of SPARK_HOME/jars (a few hundred MB)."""
        hdfs = self.services.hdfs
        local = self.root / "spark-libs.zip"
        with zipfile.ZipFile(local, "w", zipfile.ZIP_STORED) as archive:
            for jar in sorted((spark_home() / "jars").glob("*.jar")):
                archive.write(jar, jar.name)
        client = make_client(HdfsConfig(urls=(hdfs.webhdfs_url,), user=hdfs.superuser))
        client.upload(SPARK_ARCHIVE, str(local), overwrite=True)
        local.unlink()
        return ["--conf", f"spark.yarn.archive={hdfs.default_fs}{SPARK_ARCHIVE}"]

    def _hdfs(self) -> None:
        hdfs = self.services.hdfs
        client = make_client(HdfsConfig(urls=(hdfs.webhdfs_url,), user=hdfs.superuser))
        made: list[tuple[float, str]] = []  # (time, directory), oldest first
        number = 0
        while not self.stopping.wait(self.args.hdfs_seconds):
            directory = f"/soak/incoming/{datetime.now(UTC):%Y%m%d-%H%M}"
            try:
                if not made or made[-1][1] != directory:
                    made.append((time.monotonic(), directory))
                for _ in range(self.args.hdfs_files):
                    number += 1
                    client.write(f"{directory}/part-{number:06d}.csv", data=b"id,name\n1,a\n", overwrite=True)
                    self.counters.hdfs_files += 1
                while made and time.monotonic() - made[0][0] > 600:
                    client.delete(made.pop(0)[1], recursive=True)
            except Exception as exc:  # noqa: BLE001 - a NameNode hiccup: counted, tried again next time
                self.counters.hdfs_errors += 1
                self.counters.last_error["hdfs"] = str(exc)[:300]

    def _openlineage(self) -> None:
        number = 0
        with requests.Session() as session:
            while not self.stopping.wait(self.args.ol_seconds):
                number += 1
                try:
                    try:
                        answer = session.post(f"{self.url}/api/v1/lineage", json=event(number), timeout=60)
                    except requests.ConnectionError:
                        # The server closed the idle keep-alive connection as this post reused it
                        # (uvicorn's keep-alive is 5 s, our pause too): once more on a new one.
                        answer = session.post(f"{self.url}/api/v1/lineage", json=event(number), timeout=60)
                    if answer.status_code in (200, 201, 202):
                        self.counters.ol_events += 1
                    else:
                        self.counters.ol_errors += 1
                        self.counters.last_error["openlineage"] = f"{answer.status_code}: {answer.text[:300]}"
                except requests.RequestException as exc:
                    self.counters.ol_errors += 1
                    self.counters.last_error["openlineage"] = str(exc)[:300]


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """A process started in its own session, with everything it started (spark-submit's JVM)."""
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def kill_yarn_apps(yarn: DevYarn) -> None:
    """Applications still running when the soak stops, killed through the RM before YARN stops."""
    try:
        body = requests.get(f"{yarn.rm_url}/ws/v1/cluster/apps", params={"states": "NEW,ACCEPTED,RUNNING"},
                            timeout=10).json()
        for app in (body.get("apps") or {}).get("app") or []:
            requests.put(f"{yarn.rm_url}/ws/v1/cluster/apps/{app['id']}/state", params={"user.name": "root"},
                         json={"state": "KILLED"}, timeout=10)
    except (requests.RequestException, ValueError) as exc:
        sys.stderr.write(f"YARN applications not killed: {exc}\n")


# --- the daemon -------------------------------------------------------------------------------------


def start_daemon(config: Path, directory: Path, debug: Path | None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "NAVD_CONFIG": str(config), "XDG_STATE_HOME": str(directory / "xdg-state")}
    env.pop("NOTIFY_SOCKET", None)
    cmd = [sys.executable, "-c", _TRACED_DAEMON, str(debug)] if debug is not None else [NAVD, "run"]
    with (directory / "navd.log").open("ab") as log:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log)


def wait_ready(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"navd run exited {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if requests.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise SystemExit(f"navd run did not answer {url}/readyz within {READY_SECONDS:.0f} s")


def stop_daemon(proc: subprocess.Popen[bytes]) -> int | None:
    if proc.poll() is not None:
        return proc.returncode
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=90)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None


def log_summary(log: Path) -> dict[str, Any]:
    """Levels of the daemon's JSON log lines, and the first few errors."""
    levels: dict[str, int] = {}
    errors: list[str] = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
            level = str(entry.get("level", "?"))
            text = str(entry.get("event", ""))
        except ValueError:
            level, text = "raw", line
        levels[level] = levels.get(level, 0) + 1
        if level in ("error", "critical", "raw") and len(errors) < 8:
            errors.append(text[:300])
    return {"levels": levels, "first_errors": errors}


def run_counts(index: SolrIndex) -> dict[str, dict[str, int]]:
    """Runs the daemon recorded, per component and state."""
    counts: dict[str, dict[str, int]] = {}
    for doc in index.scan("runs", "kind:run", fl="component,state"):
        per = counts.setdefault(str(doc.get("component")), {})
        per[str(doc.get("state"))] = per.get(str(doc.get("state")), 0) + 1
    return counts


def tracemalloc_diff(directory: Path, first: int, top: int) -> list[str]:
    """The `top` allocation sites (innermost frame) that grew most from snapshot `first` to the last."""
    import tracemalloc

    snapshots = sorted(directory.glob("snapshot-*.tm"))
    if len(snapshots) <= first:
        return [f"not enough snapshots in {directory} ({len(snapshots)})"]
    older = tracemalloc.Snapshot.load(str(snapshots[first]))
    newer = tracemalloc.Snapshot.load(str(snapshots[-1]))
    keep = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen importlib._bootstrap>")]
    stats = newer.filter_traces(keep).compare_to(older.filter_traces(keep), "lineno")
    lines = [f"{snapshots[first].name} -> {snapshots[-1].name}: total traced "
             f"{sum(s.size for s in stats) / MB:.1f} MB ({sum(s.size_diff for s in stats) / MB:+.2f} MB)"]
    lines += [f"{s.size_diff / 1024:+10.1f} KiB {s.count_diff:+8d} blocks  {s.traceback}"
              for s in stats[:top]]
    return lines


# --- main --------------------------------------------------------------------------------------------


def print_sample(sample: Sample) -> None:
    heap = f"{sample.solr_heap_mb:7.1f} MB" if sample.solr_heap_mb is not None else "      ?   "
    sys.stdout.write(f"minute {sample.minute:5.1f}  rss {sample.rss_mb:6.1f} MB  open files {sample.open_files:4d}  "
                     f"threads {sample.threads:3d}  solr heap {heap}  | spark apps {sample.spark_apps} "
                     f"statements {sample.spark_statements}  hdfs files {sample.hdfs_files}  "
                     f"openlineage events {sample.ol_events}\n")
    sys.stdout.flush()


def _sigterm(signum: int, frame: Any) -> None:
    raise Interrupted()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0,
                        help="how long to sample after the daemon is ready (default 10; the goal's soak: 60)")
    parser.add_argument("--sample-seconds", type=float, default=60.0, help="between samples (default 60)")
    parser.add_argument("--warmup-minutes", type=float, default=2.0,
                        help="samples before this are printed but left out of the slopes (default 2)")
    parser.add_argument("--spark-master", default="yarn", help="master of the soak's Spark jobs (default yarn; "
                        "local[1] leaves YARN out and saves its containers)")
    parser.add_argument("--app-statements", type=int, default=10, help="CTAS statements per Spark application")
    parser.add_argument("--statement-seconds", type=float, default=20.0, help="pause after each statement")
    parser.add_argument("--hdfs-seconds", type=float, default=10.0, help="between HDFS writes (default 10)")
    parser.add_argument("--hdfs-files", type=int, default=5, help="files per HDFS write (default 5)")
    parser.add_argument("--ol-seconds", type=float, default=5.0, help="between OpenLineage events (default 5)")
    parser.add_argument("--heap", default="1g", help="Solr JVM heap (default 1g)")
    parser.add_argument("--debug", action="store_true", help="run the daemon under tracemalloc and print what grew")
    parser.add_argument("--keep", action="store_true", help="keep the services' and daemon's files (logs, state)")
    args = parser.parse_args(argv)
    if args.minutes <= 0 or args.sample_seconds <= 0 or args.app_statements < 1:
        parser.error("--minutes and --sample-seconds must be > 0, --app-statements >= 1")

    setup_logging("console", "warning")
    signal.signal(signal.SIGTERM, _sigterm)
    root = Path(tempfile.mkdtemp(prefix="navd-soak-"))
    events = root / "spark-events"
    events.mkdir()
    traces = root / "tracemalloc" if args.debug else None
    if traces is not None:
        traces.mkdir()
    with_yarn = args.spark_master == "yarn"
    loadavg_start = _loadavg()
    samples: list[Sample] = []
    services: Services | None = None
    daemon: subprocess.Popen[bytes] | None = None
    jobs: Jobs | None = None
    exit_code: int | None = None
    interrupted = False
    extra: dict[str, Any] = {}
    try:
        services = start_services(root, args.heap, with_yarn)
        solr_config: SolrConfig = services.solr.client_config()
        with SolrIndex(solr_config) as index:
            init_solr(index)
            port = free_port()
            config = write_config(services, root, events, port)
            url = f"http://127.0.0.1:{port}"
            sys.stderr.write(f"starting navd run ({'under tracemalloc, ' if args.debug else ''}log {root / 'navd.log'})"
                             " ...\n")
            daemon = start_daemon(config, root, traces)
            wait_ready(daemon, url, root / "navd.log")
            jobs = Jobs(services, root, events, url, args)
            jobs.start()
            sys.stderr.write(f"soaking for {args.minutes:g} minutes, a sample every {args.sample_seconds:g} s\n")
            began = time.monotonic()
            next_sample = began
            end = began + args.minutes * 60
            while True:
                if daemon.poll() is not None:
                    raise SystemExit(f"navd run exited {daemon.returncode} during the soak:\n"
                                     f"{(root / 'navd.log').read_text()[-3000:]}")
                now = time.monotonic()
                if now >= next_sample:
                    if traces is not None:
                        daemon.send_signal(signal.SIGUSR1)
                    rss, files, threads = proc_figures(daemon.pid)
                    c = jobs.counters
                    sample = Sample(round((now - began) / 60, 2), rss, files, threads, solr_heap_mb(index),
                                    c.spark_statements, c.spark_apps, c.hdfs_files, c.ol_events)
                    samples.append(sample)
                    print_sample(sample)
                    next_sample += args.sample_seconds
                    if next_sample > end + 1:
                        break
                time.sleep(min(1.0, max(0.0, next_sample - time.monotonic())))
            jobs.stop()
            extra["runs"] = run_counts(index)
            extra["elements"] = index.count("elements")
            extra["relations"] = index.count("relations")
    except (KeyboardInterrupt, Interrupted):
        interrupted = True
        sys.stderr.write("\ninterrupted: stopping everything the soak started ...\n")
    finally:
        # A second Ctrl-C or SIGTERM must not cut the cleanup short and leave JVMs behind.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if jobs is not None:
            jobs.stop()
        if daemon is not None:
            exit_code = stop_daemon(daemon)
        if services is not None:
            if services.yarn is not None:
                kill_yarn_apps(services.yarn)
            services.stop()

    if not samples:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        return 130 if interrupted else 1
    report = build_report(args, samples, jobs, exit_code, interrupted, loadavg_start, extra, root)
    if traces is not None:
        first = sum(1 for s in samples if s.minute < args.warmup_minutes)
        report["tracemalloc_top"] = tracemalloc_diff(traces, min(first, len(samples) - 1), 15)
    result = DEBUG_RESULT_FILE if args.debug else RESULT_FILE
    result.parent.mkdir(exist_ok=True)
    result.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print_report(report, result)
    if args.keep:
        sys.stderr.write(f"files kept in {root}\n")
    else:
        shutil.rmtree(root, ignore_errors=True)
    return 130 if interrupted else 0


def build_report(args: argparse.Namespace, samples: list[Sample], jobs: Jobs | None, exit_code: int | None,
                 interrupted: bool, loadavg_start: str, extra: dict[str, Any], root: Path) -> dict[str, Any]:
    steady = [s for s in samples if s.minute >= args.warmup_minutes] or samples
    slopes = {
        "rss_mb": slope_per_hour([(s.minute, s.rss_mb) for s in steady]),
        "open_files": slope_per_hour([(s.minute, float(s.open_files)) for s in steady]),
        "threads": slope_per_hour([(s.minute, float(s.threads)) for s in steady]),
        "solr_heap_mb": slope_per_hour([(s.minute, s.solr_heap_mb) for s in steady if s.solr_heap_mb is not None]),
    }
    # The second half alone: a ramp while the daemon warms up (modules imported on first use, pools
    # filled, Python's arenas grown) tilts the whole-run slope; a leak shows in both halves.
    late = [s for s in samples if s.minute >= samples[-1].minute / 2]
    slopes_late = {"rss_mb": slope_per_hour([(s.minute, s.rss_mb) for s in late]),
                   "open_files": slope_per_hour([(s.minute, float(s.open_files)) for s in late]),
                   "threads": slope_per_hour([(s.minute, float(s.threads)) for s in late])}
    max_rss = max(s.rss_mb for s in samples)
    counters = dataclasses.asdict(jobs.counters) if jobs is not None else {}
    return {
        "setup": {"minutes": args.minutes, "minutes_sampled": samples[-1].minute, "spark_master": args.spark_master,
                  "debug": args.debug, "sample_seconds": args.sample_seconds, "warmup_minutes": args.warmup_minutes,
                  "app_statements": args.app_statements, "statement_seconds": args.statement_seconds,
                  "hdfs_seconds": args.hdfs_seconds, "hdfs_files": args.hdfs_files, "ol_seconds": args.ol_seconds,
                  "solr_heap": args.heap, "cpus": os.cpu_count() or 1, "python": platform.python_version(),
                  "when": datetime.now(UTC).isoformat(timespec="seconds"),
                  "loadavg_start": loadavg_start, "loadavg_end": _loadavg(), "interrupted": interrupted},
        "samples": [dataclasses.asdict(s) for s in samples],
        "slopes_per_hour": slopes,
        "slopes_per_hour_second_half": slopes_late,
        "rss_max_mb": max_rss,
        "rss_goal_mb": RSS_GOAL_MB,
        "rss_met": max_rss < RSS_GOAL_MB,
        "jobs": counters,
        "daemon_exit_code": exit_code,
        "daemon_log": log_summary(root / "navd.log") if (root / "navd.log").exists() else {},
        **extra,
    }


def print_report(report: dict[str, Any], result: Path) -> None:
    out = sys.stdout
    setup, slopes = report["setup"], report["slopes_per_hour"]

    def fmt(value: float | None, unit: str) -> str:
        return "n/a" if value is None else f"{value:+.2f} {unit}/h"

    out.write(f"\nnavd run soak: {setup['minutes_sampled']:.1f} minutes sampled, Spark jobs on {setup['spark_master']}, "
              f"{setup['cpus']} CPU(s), load average at start {setup['loadavg_start']}, at end "
              f"{setup['loadavg_end']}{', daemon under tracemalloc' if setup['debug'] else ''}"
              f"{', INTERRUPTED' if setup['interrupted'] else ''}\n")
    out.write(f"slopes per hour (least squares, samples from minute {setup['warmup_minutes']:g}): "
              f"rss {fmt(slopes['rss_mb'], 'MB')}, open files {fmt(slopes['open_files'], '')}, "
              f"threads {fmt(slopes['threads'], '')}, solr heap {fmt(slopes['solr_heap_mb'], 'MB')}\n")
    late = report.get("slopes_per_hour_second_half") or {}
    out.write(f"second half only (from minute {setup['minutes_sampled'] / 2:.1f}): rss {fmt(late.get('rss_mb'), 'MB')}, "
              f"open files {fmt(late.get('open_files'), '')}, threads {fmt(late.get('threads'), '')}\n")
    out.write(f"daemon RSS max {report['rss_max_mb']:.1f} MB: < {report['rss_goal_mb']:.0f} MB "
              f"{'met' if report['rss_met'] else 'NOT met'}\n")
    jobs = report["jobs"]
    if jobs:
        out.write(f"work: {jobs['spark_apps']} Spark applications finished ({jobs['spark_failures']} failed), "
                  f"{jobs['spark_statements']} statements; {jobs['hdfs_files']} HDFS files ({jobs['hdfs_errors']} "
                  f"errors); {jobs['ol_events']} OpenLineage events ({jobs['ol_errors']} errors)\n")
        for name, error in jobs["last_error"].items():
            out.write(f"  last {name} error: {error[:300]}\n")
    if "runs" in report:
        runs = ", ".join(f"{component} {states}" for component, states in sorted(report["runs"].items()))
        out.write(f"daemon runs recorded: {runs}\n")
        out.write(f"index: {report['elements']:,} elements, {report['relations']:,} relations\n")
    logged = report.get("daemon_log") or {}
    out.write(f"daemon exit code {report['daemon_exit_code']}; log lines by level {logged.get('levels')}\n")
    for error in logged.get("first_errors", []):
        out.write(f"  {error}\n")
    for line in report.get("tracemalloc_top", []):
        out.write(f"  {line}\n")
    out.write(f"figures written to {result.relative_to(REPO)}\n")


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
