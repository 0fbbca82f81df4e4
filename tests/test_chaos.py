"""kill -9 at random moments of each component that writes, then a restart to completion: the
index ends up document by document as after one clean run (0 lost, 0 duplicated, 0 changed).

CI runs this fixed-seed slice (CHAOS_KILLS=2 kill points per component); `make chaos` the full
campaign (tests/chaos.py says how a round goes)."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests
from hdfs import Client
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import RunEvent, RunState
from openlineage.client.transport.http import HttpConfig, HttpTransport
from pyhive import hive

from chaos import NAVD, Outcome, Scenario, campaign, empty, navd_env, summary
from conftest import solr_section
from lineage_logs import HIVE, impala_cases, impala_line
from navd.index.client import IndexWriter, SolrIndex
from navd.model import Element, ElementType, EntityRef, Relation, RelationType, SourceType
from navd.solr.server import EmbeddedSolr, free_port
from navd_devstack.hadoop import DevHdfs
from navd_devstack.spark_thrift import SparkThriftServer
from navd_devstack.yarn import DevYarn
from openlineage_events import HIVE as OL_HIVE, job_run
from test_spark_extractor import captured_log

KILLS = int(os.environ.get("CHAOS_KILLS", "2"))
SEED = int(os.environ.get("CHAOS_SEED", "24"))
SPARK_COPIES = 40
LINEAGE_QUERIES = 200
PURGED = 1_500
HDFS_DIRECTORIES, HDFS_FILES = 30, 10
YARN_APPLICATIONS = 600  # under the RM's yarn.resourcemanager.max-completed-applications (1000)
HMS_TABLES, HMS_VIEWS = 30, 6
LINKED = 10_000
OL_RUNS = 60  # a START and a COMPLETE each
CTAS = "create table lineage_test_tbl as select int_col, tinyint_col from functional.alltypes"
OUTCOMES: list[Outcome] = []


@pytest.fixture(scope="module", autouse=True)
def campaign_summary() -> Iterator[None]:
    yield
    if OUTCOMES:
        print("\n" + "\n".join(o.line() for o in OUTCOMES) + "\n" + summary(OUTCOMES))


def scenario(index: SolrIndex, tmp: Path, name: str, command: tuple[str, ...], solr: str, body: str,
             lay: Callable[[], None] | None = None, default_fs: str = "") -> Scenario:
    def reset(label: str) -> Mapping[str, str]:
        empty(index)
        if lay is not None:
            lay()
        return navd_env(tmp, label, solr, body, default_fs=default_fs)

    return Scenario(name, command, reset)


def check(index: SolrIndex, chosen: Scenario) -> None:
    outcome = campaign(index, chosen, kills=KILLS, seed=SEED)
    OUTCOMES.append(outcome)
    assert outcome.kill_points >= 1, outcome.line()
    assert (outcome.lost, outcome.duplicated, outcome.changed) == (0, 0, 0), outcome.line()


def test_spark_tail(index: SolrIndex, solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    logs = tmp_path / "events"
    app_id, lines = captured_log("column_shapes", logs)
    (logs / app_id).unlink()
    text = b"".join(lines)
    for number in range(SPARK_COPIES):  # each copy another application: its own documents
        copy_id = f"{app_id}{number:03d}"
        (logs / copy_id).write_bytes(text.replace(app_id.encode(), copy_id.encode()))
    check(index, scenario(index, tmp_path, "spark", ("extract", "spark", "--once"), solr_section(solr_server),
                          f'[spark]\nevent_log_dirs = ["{logs}"]\npoll_seconds = 0.2\n'))


def test_impala_lineage_log(index: SolrIndex, solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    logs = tmp_path / "impala"
    logs.mkdir()
    case = impala_cases()[CTAS]
    with (logs / "impala_lineage_log_1.0-1700000000000").open("w") as fh:
        for i in range(LINEAGE_QUERIES):  # each query its own id and target, one of 20 sources
            line = impala_line(case, query_id=f"{i:016x}:0000000000000000", end_time=case["timestamp"] + 2)
            fh.write(line.replace("lineage_test_tbl", f"out_{i}").replace("functional.alltypes",
                                                                          f"functional.src_{i % 20}") + "\n")
    check(index, scenario(index, tmp_path, "impala", ("extract", "impala", "--once"), solr_section(solr_server),
                          f'[impala]\nlineage_dirs = ["{logs}"]\n'))


def test_hive_lineage_log(index: SolrIndex, solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    logs = tmp_path / "hive"
    logs.mkdir()
    [_, record, *_] = (HIVE / "hiveserver2-lineage.log").read_text().splitlines(keepends=True)
    with (logs / "lineage.log").open("w") as fh:
        for i in range(LINEAGE_QUERIES):  # each query its own hash, job, time and target
            fh.write(record.replace("87921246fb098d44c05e0ccd9ecb0676", f"{i:032x}")
                     .replace("job_1700000000000_0001", f"job_1700000000000_{i:04d}")
                     .replace('"timestamp":1700000000', f'"timestamp":{1700000000 + i}')
                     .replace("src2", f"src2_{i}"))
    check(index, scenario(index, tmp_path, "hive-lineage", ("extract", "hive-lineage", "--once"),
                          solr_section(solr_server), f'[hive_lineage]\nlog_paths = ["{logs}/lineage.log*"]\n'))


def aged_documents(index: SolrIndex, now: datetime) -> None:
    """What purge removes and what it keeps (tests/test_purge.py's rules, many times over): old
    executions of a template with their flows, old deleted files, recent executions."""
    old, recent = now - timedelta(days=100), now - timedelta(days=10)
    source = Element(SourceType.HIVE, ElementType.TABLE, "db.src@chaos", name="src")
    template = Element(SourceType.SPARK, ElementType.OPERATION, "spark://nightly", name="nightly")
    directory = EntityRef(SourceType.HDFS, "hdfs://ns/old", ElementType.DIRECTORY)
    writer = IndexWriter(index)
    writer.write(source)
    writer.write(template)
    for i in range(PURGED):
        ended = old if i % 5 else recent
        run = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION, f"spark://reader{i}/1", name=f"reader{i}",
                      started=ended - timedelta(minutes=5), ended=ended)
        gone = Element(SourceType.HDFS, ElementType.FILE, f"hdfs://ns/old/part-{i}", name=f"part-{i}",
                       deleted=True, delete_time=old if i % 3 else recent)
        for record in (run, gone, Relation(RelationType.INSTANCE_OF, template.ref, run.ref),
                       Relation(RelationType.DATA_FLOW, source.ref, run.ref),
                       Relation(RelationType.PARENT_CHILD, directory, gone.ref)):
            writer.write(record)
    assert writer.close()
    for core in ("elements", "relations"):
        index.commit(core)


def test_purge(index: SolrIndex, solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    now = datetime.now(UTC)  # one time for every round: the clean run's documents and the killed runs' alike
    check(index, scenario(index, tmp_path, "purge", ("purge",), solr_section(solr_server), "",
                          lay=lambda: aged_documents(index, now)))


def test_hdfs(index: SolrIndex, solr_server: EmbeddedSolr, hdfs: DevHdfs, hdfs_client: Client, unique: str,
              tmp_path: Path) -> None:
    root = f"/{unique}"
    for directory in range(HDFS_DIRECTORIES):
        for number in range(HDFS_FILES):
            hdfs_client.write(f"{root}/d{directory}/part-{number}", data=b"x")
    check(index, scenario(index, tmp_path, "hdfs", ("extract", "hdfs"), solr_section(solr_server),
                          f'[hdfs]\nurls = ["{hdfs.webhdfs_url}"]\n'
                          f'roots = ["{root}"]\nuser = "{hdfs.superuser}"\n', default_fs=hdfs.default_fs))


def killed_applications(yarn: DevYarn, prefix: str, count: int) -> None:
    """`count` applications the RM ends at once: submitted through its REST API with an unmanaged
    application master (no container is ever launched, so nothing runs on the NodeManager) and
    killed while ACCEPTED. 20 names, so that executions share templates."""
    apps, params = f"{yarn.rm_url}/ws/v1/cluster/apps", {"user.name": "root"}

    def one(number: int) -> str:
        with requests.Session() as session:
            new = session.post(f"{apps}/new-application", params=params, timeout=60)
            assert new.status_code == 200, new.text
            app_id = str(new.json()["application-id"])
            body = {"application-id": app_id, "application-name": f"{prefix}_{number % 20}",
                    "application-type": "SPARK", "unmanaged-AM": True, "max-app-attempts": 1,
                    "am-container-spec": {"commands": {"command": "true"}},
                    "resource": {"memory": 128, "vCores": 1}}
            submitted = session.post(apps, params=params, json=body, timeout=60)
            assert submitted.status_code == 202, submitted.text
            killed = session.put(f"{apps}/{app_id}/state", params=params, json={"state": "KILLED"}, timeout=60)
            assert killed.status_code in (200, 202), killed.text
            return app_id

    with ThreadPoolExecutor(4) as pool:
        ours = set(pool.map(one, range(count)))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # every round must see the same, final applications
        body = requests.get(apps, params={"states": "NEW,NEW_SAVING,SUBMITTED,ACCEPTED,RUNNING"}, timeout=30).json()
        if not ours & {app["id"] for app in ((body.get("apps") or {}).get("app") or [])}:
            return
        time.sleep(1)
    pytest.fail(f"{prefix}: applications still not KILLED after 120 s")


def test_yarn(index: SolrIndex, solr_server: EmbeddedSolr, yarn: DevYarn, unique: str, tmp_path: Path) -> None:
    """The RM's apps list is read whole by a first run: YARN_APPLICATIONS of them (three documents
    each) make it last seconds."""
    killed_applications(yarn, f"chaos_{unique}", YARN_APPLICATIONS)
    check(index, scenario(index, tmp_path, "yarn", ("extract", "yarn"), solr_section(solr_server),
                          f'[yarn]\nurls = ["{yarn.rm_url}"]\n'))


@pytest.fixture
def hive_database(spark_thrift: SparkThriftServer, unique: str) -> Iterator[str]:
    """A database of HMS_TABLES tables (one in five partitioned) and HMS_VIEWS views over them,
    dropped at the end."""
    database = f"chaos_{unique}"
    connection = hive.connect("127.0.0.1", spark_thrift.port, username="navd")
    cursor = connection.cursor()
    try:
        cursor.execute(f"CREATE DATABASE {database}")
        for number in range(HMS_TABLES):
            partitioned = " PARTITIONED BY (day)" if number % 5 == 0 else ""
            cursor.execute(f"CREATE TABLE {database}.t{number} (id BIGINT, name STRING, amount DECIMAL(10,2), "
                           f"day STRING) USING parquet{partitioned}")
        for number in range(HMS_VIEWS):
            cursor.execute(f"CREATE VIEW {database}.v{number} AS SELECT id, amount * 2 AS doubled "
                           f"FROM {database}.t{number + 1}")
        yield database
    finally:
        cursor.execute(f"DROP DATABASE IF EXISTS {database} CASCADE")
        cursor.close()
        connection.close()


def test_hms(index: SolrIndex, solr_server: EmbeddedSolr, spark_thrift: SparkThriftServer, hive_database: str,
             tmp_path: Path) -> None:
    """A first run describes every table (one DESCRIBE FORMATTED each, through the Thrift Server):
    HMS_TABLES + HMS_VIEWS of them make it last seconds."""
    check(index, scenario(index, tmp_path, "hms", ("extract", "hms"), solr_section(solr_server),
                          f'[hive]\nenabled = true\nhost = "127.0.0.1"\nport = {spark_thrift.port}\n'
                          f'database_regex = "{hive_database}"\n'))


def unlinked_relations(index: SolrIndex) -> None:
    """A Spark execution that read LINKED directories under the NameNode's address while HDFS
    indexed them under the nameservice (the alias the linker resolves); one in 50 never indexed."""
    exe = Element(SourceType.SPARK, ElementType.OPERATION_EXECUTION, "spark://chaoslink/1", name="1")
    writer = IndexWriter(index)
    writer.write(exe)
    for number in range(LINKED):
        if number % 50:
            writer.write(Element(SourceType.HDFS, ElementType.DIRECTORY, f"hdfs://chaosns/wh/d{number}",
                                 name=f"d{number}"))
        seen = EntityRef(SourceType.HDFS, f"hdfs://chaosnn:8020/wh/d{number}", ElementType.DIRECTORY)
        writer.write(Relation(RelationType.DATA_FLOW, seen, exe.ref, linked1=False))
    assert writer.close()
    for core in ("elements", "relations"):
        index.commit(core)


def test_linker(index: SolrIndex, solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    """A full pass over LINKED unlinked relations (about 3,000 a second on this host,
    /work/shared/reference/perf-findings.md) lasts seconds."""
    check(index, scenario(index, tmp_path, "linker", ("link", "--full"), solr_section(solr_server),
                          '[linker]\nfs_aliases = ["chaosnn:8020=hdfs://chaosns"]\n',
                          lay=lambda: unlinked_relations(index)))


@dataclasses.dataclass
class IntakeFeed:
    """`navd serve` with the OpenLineage intake on, fed in order by openlineage-python's own HTTP
    transport (no retries of its own). An event is delivered once the intake answered it (201
    written, 202 spooled); after a kill the client sends again from the first event not answered,
    as an integration that saw its post fail does. The work timed is the feeding, the server's
    start-up aside, so that kills land while events arrive."""

    events: Sequence[RunEvent]
    delivered: dict[str, int] = dataclasses.field(default_factory=dict)  # per round (config file)

    def _serve(self, env: Mapping[str, str]) -> subprocess.Popen[bytes]:
        log = Path(env["NAVD_CONFIG"]).with_suffix(".log")
        with log.open("ab") as out:
            proc = subprocess.Popen([NAVD, "serve"], env=dict(env), stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                if requests.get(f"{env['CHAOS_INTAKE_URL']}/healthz", timeout=2).status_code == 200:
                    return proc
            except requests.ConnectionError:
                pass
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"navd serve did not answer within 60 s: {log.read_text()[-3000:]}")

    def _feed(self, env: Mapping[str, str], failures: list[BaseException]) -> None:
        key = env["NAVD_CONFIG"]
        client = OpenLineageClient(transport=HttpTransport(HttpConfig(url=env["CHAOS_INTAKE_URL"], timeout=60,
                                                                      retry={"total": 0})))
        try:
            while (sent := self.delivered.get(key, 0)) < len(self.events):
                try:
                    answer = client.transport.emit(self.events[sent])
                except requests.ConnectionError:
                    return  # the server is gone before it answered: this event is sent again
                assert answer.status_code in (201, 202), answer.text
                self.delivered[key] = sent + 1
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            failures.append(exc)

    def run_to_end(self, env: Mapping[str, str]) -> float:
        proc = self._serve(env)
        failures: list[BaseException] = []
        started = time.monotonic()
        self._feed(env, failures)
        seconds = time.monotonic() - started
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0 and not failures, failures
        assert self.delivered[env["NAVD_CONFIG"]] == len(self.events)
        return seconds

    def kill_at(self, env: Mapping[str, str], delay: float) -> bool:
        proc = self._serve(env)
        failures: list[BaseException] = []
        feeding = threading.Thread(target=self._feed, args=(env, failures))
        feeding.start()
        feeding.join(timeout=delay)
        running = feeding.is_alive()
        if running:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
        else:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        feeding.join(timeout=120)
        assert not failures, failures
        return running


def intake_events() -> list[RunEvent]:
    """OL_RUNS runs of 10 jobs over 8 databases, START then COMPLETE, with run ids fixed so that
    every round posts the same events."""
    events: list[RunEvent] = []
    for number in range(OL_RUNS):
        run_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"navd-chaos-openlineage-{number}"))
        for state, offset in ((RunState.START, number), (RunState.COMPLETE, number + 30)):
            events.append(job_run(run_id, f"chaos_job_{number % 10}", state, offset=offset,
                                  database=f"chaos_ol{number % 8}"))
    return events


def test_openlineage_intake(index: SolrIndex, solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    """OL_RUNS * 2 events posted one at a time: each answered once its flush is acknowledged
    (tens of events a second, navd/openlineage/intake.py), so the feeding lasts seconds."""
    def reset(label: str) -> Mapping[str, str]:
        empty(index)
        port = free_port()
        body = (f'[server]\nport = {port}\n[openlineage]\nenabled = true\nspool_dir = "{tmp_path / label}-spool"\n'
                f'[openlineage.namespaces]\n"{OL_HIVE}" = "chaos"\n')
        return {**navd_env(tmp_path, label, solr_section(solr_server), body),
                "CHAOS_INTAKE_URL": f"http://127.0.0.1:{port}"}

    check(index, Scenario("openlineage", ("serve",), reset, driver=IntakeFeed(intake_events())))
