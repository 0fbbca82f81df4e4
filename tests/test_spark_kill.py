"""Killing the real `navd extract spark` process (SIGKILL, at random moments: reading, writing to
Solr, committing positions) and running it again loses nothing and duplicates nothing: the
index ends up exactly as after one clean run."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zstandard

from navd.extractors.spark.logfiles import EventLogCursorStore as CursorStore
from navd.index.client import SolrIndex
from navd.model import SourceType, identity, operation_qualified_name
from navd.names import spark_run_ref
from navd.solr.server import EmbeddedSolr
from test_spark_extractor import captured_log, empty_index, index_snapshot, run_pyspark
from conftest import write_navd_config

STATEMENTS = 12
COPIES = 150


@pytest.fixture(scope="module")
def busy_job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("spark-busy")
    statements = [f'spark.sql("create table kill.t{i} as select upper(c) as u{i}, n * {i} as m from kill.s '
                  f'where n > {i % 3}")' for i in range(STATEMENTS)]
    run_pyspark("\n".join(['spark.sql("create database kill")',
                           'spark.sql("create table kill.s (c string, n int) using parquet")',
                           "spark.sql(\"insert into kill.s values ('a', 1), ('b', 2), ('c', 3)\")",
                           *statements]), root, "kill_job")
    # Enough work for kills to land mid-run: the application's log copied COPIES times, each as
    # another application (its own id, so its executions are its own documents).
    [rolling] = (root / "events").glob("eventlog_v2_*")
    app_id = rolling.name.removeprefix("eventlog_v2_")
    text = b"".join(zstandard.ZstdDecompressor().stream_reader(path.open("rb"), read_across_frames=True).read()
                    for path in sorted(rolling.glob("events_*")))
    copies = root / "copies"
    copies.mkdir()
    for number in range(COPIES):
        copy_id = f"{app_id}{number:03d}"
        (copies / copy_id).write_bytes(text.replace(app_id.encode(), copy_id.encode()))
    return copies, app_id


def queries(app_id: str) -> tuple[str, str]:
    ours = f"*kill* OR *{app_id}*"
    return (f"qualifiedName:({ours}) OR originalName:kill_job",
            f"endpoint1QualifiedName:({ours}) OR endpoint2QualifiedName:({ours})")


def snapshot(index: SolrIndex, app_id: str) -> tuple[dict[str, dict], dict[str, dict]]:
    for core in ("elements", "relations"):
        index.commit(core)
    drop = ("lastIndexed", "_version_", "extractorRunId")
    elements_query, relations_query = queries(app_id)
    elements = {d["identity"]: {k: v for k, v in d.items() if k not in drop}
                for d in index.scan("elements", elements_query)}
    relations = {d["identity"]: {k: v for k, v in d.items() if k not in drop}
                 for d in index.scan("relations", relations_query)}
    return elements, relations


def clear(index: SolrIndex, app_id: str) -> None:
    elements_query, relations_query = queries(app_id)
    index.delete_query("elements", elements_query)
    index.delete_query("relations", relations_query)
    for core in ("elements", "relations"):
        index.commit(core)


def test_sigkill_at_random_moments_then_rerun_gives_the_clean_index(index: SolrIndex, solr_server: EmbeddedSolr,
                                                                    busy_job: tuple[Path, str], tmp_path: Path) -> None:
    logs, app_id = busy_job
    navd = str(Path(sys.executable).parent / "navd")

    def config(name: str) -> dict[str, str]:
        path = tmp_path / f"{name}.toml"
        write_navd_config(path, solr_server, f'[spark]\nevent_log_dirs = ["{logs}"]\npoll_seconds = 0.2\n'
                          f'state_dir = "{tmp_path / name}"\n')
        return {**os.environ, "NAVD_CONFIG": str(path)}

    clear(index, app_id)  # Hive names kill.* are shared with test_daemon's kill test
    started = time.monotonic()
    clean = subprocess.run([navd, "extract", "spark", "--once"], env=config("clean"), capture_output=True,
                           text=True, timeout=300, check=False)
    clean_seconds = time.monotonic() - started
    assert clean.returncode == 0, clean.stderr
    expected = snapshot(index, app_id)
    assert len(expected[0]) > COPIES * STATEMENTS  # tables, columns, applications, executions
    clear(index, app_id)

    env = config("killed")
    # First kill: as soon as the first batch of documents reached Solr (real-time get sees it
    # before any commit), so between writing and committing positions: those are committed
    # only once the pass has written everything.
    proc = subprocess.Popen([navd, "extract", "spark"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    first_app = identity(SourceType.SPARK, operation_qualified_name(SourceType.SPARK, "kill_job"))
    while not index.get("elements", [first_app]) and proc.poll() is None:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert not (tmp_path / "killed" / CursorStore.FILE_NAME).exists(), "killed after positions were committed"
    at_first_kill = len(snapshot(index, app_id)[0])
    assert at_first_kill > 0
    # Then kill points spread over a run's time (start-up included), each run going on from
    # whatever the one before committed.
    rng = random.Random(7)
    for _ in range(4):
        proc = subprocess.Popen([navd, "extract", "spark"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(clean_seconds * rng.uniform(0.3, 0.9))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    partial = snapshot(index, app_id)
    final = subprocess.run([navd, "extract", "spark", "--once"], env=env, capture_output=True, text=True,
                           timeout=300, check=False)
    assert final.returncode == 0, final.stderr
    print(f"clean run {clean_seconds:.1f}s; {at_first_kill} elements at the first kill, "
          f"{len(partial[0])}/{len(expected[0])} after all kills; "
          f"final run: {final.stdout.strip()}")
    assert snapshot(index, app_id) == expected
    clear(index, app_id)


def test_a_first_start_killed_mid_pass_resumes_after_the_committed_applications(
        clean_index: SolrIndex, solr_server: EmbeddedSolr, tmp_path: Path) -> None:
    """A first start over many applications commits positions during its pass (here after every
    application): killed with SIGKILL midway, the next run reads only the applications not
    committed yet, and the index ends up exactly as after one clean run."""
    logs = tmp_path / "events"
    app_id, lines = captured_log("column_shapes", logs)
    (logs / app_id).unlink()
    text = b"".join(lines)
    for number in range(COPIES):
        copy_id = f"{app_id}{number:03d}"
        (logs / copy_id).write_bytes(text.replace(app_id.encode(), copy_id.encode()))
    navd = str(Path(sys.executable).parent / "navd")

    def config(name: str) -> dict[str, str]:
        path = tmp_path / f"{name}.toml"
        write_navd_config(path, solr_server, f'[spark]\nevent_log_dirs = ["{logs}"]\npoll_seconds = 0.2\n'
                          f'checkpoint_seconds = 0\nstate_dir = "{tmp_path / name}"\n')
        return {**os.environ, "NAVD_CONFIG": str(path)}

    def lines_read(run: subprocess.CompletedProcess[str]) -> int:
        assert run.returncode == 0, run.stderr
        return int(run.stdout.split("spark: ", 1)[1].split(" new lines", 1)[0])

    clean = subprocess.run([navd, "extract", "spark", "--once"], env=config("clean"), capture_output=True,
                           text=True, timeout=600, check=False)
    assert lines_read(clean) == len(lines) * COPIES
    expected = index_snapshot(clean_index)
    empty_index(clean_index)

    env = config("killed")
    store = CursorStore(tmp_path / "killed")
    proc = subprocess.Popen([navd, "extract", "spark", "--once"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    # Killed once a few applications are committed, while the pass goes on with the others.
    while proc.poll() is None and len(store.load()) < 5:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    committed = store.load()
    assert 5 <= len(committed) < COPIES, len(committed)
    assert all(cursor.done for cursor in committed.values())  # whole applications only
    # Every committed application is in Solr (real-time get: no commit needed to see it).
    runs = [spark_run_ref(Path(key).name).identity for key in committed]
    assert len(clean_index.get("elements", runs)) == len(runs)

    rerun = subprocess.run([navd, "extract", "spark", "--once"], env=env, capture_output=True, text=True,
                           timeout=600, check=False)
    assert lines_read(rerun) == (COPIES - len(committed)) * len(lines)
    print(f"killed after {len(committed)} of {COPIES} applications were committed; rerun: {rerun.stdout.strip()}")
    after = index_snapshot(clean_index)
    for core in ("elements", "relations"):
        assert sorted(after[core]) == sorted(expected[core]), core  # nothing lost, nothing extra
        for key, doc in expected[core].items():
            drop = ("extractorRunId",)  # each run names itself
            assert {k: v for k, v in after[core][key].items() if k not in drop} == \
                {k: v for k, v in doc.items() if k not in drop}, key
