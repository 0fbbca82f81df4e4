"""`navd extract spark --backfill`: finished event logs read by a PySpark job (one task per log),
on local[2] and on the session's real YARN. The index it leaves equals, document for document,
the tailer's pass over the same logs (each run in cores of its own); the tailer then reads none
of them again, and a log still being written is left to it.

The history: captured logs of real Spark runs, single-file, rolling and zstd-compressed, and a
copy of the views log under an application id read before the original's and owned by another
user, each dropping one of the tables both name. So the stubs' first-naming log (its owner
decides a later DROP's trust) and the DROPs' order (the last deleteTime wins) must both come
out as in the tailer's pass, which the executors' side-by-side writes do not give by themselves.
"""

from __future__ import annotations

import json
import os
import pwd
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests
import zstandard
from hdfs import Client

from chaos import snapshot
from conftest import NavdRunner, OwnCores
from navd_devstack.hadoop import DevHdfs
from navd_devstack.yarn import DevYarn
from spark_fixtures import FIXTURES

OTHER_USER = "nobody"
#: the views log's copy: an application id the tailer reads before the original's
EARLIER_APP = "local-1795416200200"


def app_id(text: bytes) -> str:
    return next(json.loads(line)["App ID"] for line in text.splitlines()
                if b'"SparkListenerApplicationStart"' in line)


def with_drop(text: bytes, database: str, table: str) -> bytes:
    """The log with a DROP TABLE in its last SQL execution (as Spark's catalog posts it while the
    statement runs)."""
    lines = text.splitlines(keepends=True)
    end = max(i for i, line in enumerate(lines) if b'SparkListenerSQLExecutionEnd"' in line)
    drop = [json.dumps({"Event": f"org.apache.spark.sql.catalyst.catalog.{kind}", "database": database,
                        "name": table}).encode() + b"\n" for kind in ("DropTablePreEvent", "DropTableEvent")]
    return b"".join([*lines[:end], *drop, *lines[end:]])


def lay_history(write: Callable[[str, bytes], None], chown: Callable[[str, str], None]) -> int:
    """The finished logs (paths relative to the event-log directory); their line count.

    The views log names vw.src and vw.dim (stubs); its copy, read first and owned by another
    user, names them too and drops vw.dim (its own stub: applied); the original drops vw.src,
    first named by the copy's owner (refused: one warning)."""
    views = (FIXTURES / "create_view.jsonl").read_bytes()
    original = with_drop(views, "vw", "src")
    write(app_id(views), original)
    copy = with_drop(views.replace(app_id(views).encode(), EARLIER_APP.encode()), "vw", "dim")
    write(EARLIER_APP, copy)
    chown(EARLIER_APP, OTHER_USER)
    catalog = (FIXTURES / "catalog_ops.jsonl").read_bytes()
    write(app_id(catalog), catalog)
    ctas = (FIXTURES / "ctas_expression.jsonl").read_bytes()
    ctas_id, ctas_lines = app_id(ctas), ctas.splitlines(keepends=True)
    rolling = f"eventlog_v2_{ctas_id}"
    write(f"{rolling}/events_1_{ctas_id}", b"".join(ctas_lines[:20]))
    write(f"{rolling}/events_2_{ctas_id}", b"".join(ctas_lines[20:]))
    write(f"{rolling}/appstatus_{ctas_id}", b"")
    dotted = (FIXTURES / "dotted_columns.jsonl").read_bytes()
    write(f"{app_id(dotted)}.zstd", zstandard.ZstdCompressor().compress(dotted))
    return sum(len(text.splitlines()) for text in (original, copy, catalog, ctas, dotted))


def local_writer(directory: Path) -> tuple[Callable[[str, bytes], None], Callable[[str, str], None]]:
    def write(name: str, data: bytes) -> None:
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def chown(name: str, user: str) -> None:
        os.chown(directory / name, pwd.getpwnam(user).pw_uid, -1)

    return write, chown


def hdfs_writer(client: Client, directory: str) -> tuple[Callable[[str, bytes], None], Callable[[str, str], None]]:
    def write(name: str, data: bytes) -> None:
        client.write(f"{directory}/{name}", data=data, overwrite=True)

    def chown(name: str, user: str) -> None:
        client.set_owner(f"{directory}/{name}", owner=user)

    return write, chown


def environment(tmp: Path, label: str, cores: OwnCores, body: str, default_fs: str = "") -> dict[str, str]:
    """A navd.toml of its own (state directory, cores) for one run family; `[cluster]
    default_fs` when given."""
    config = tmp / f"{label}.toml"
    fs = f'default_fs = "{default_fs}"\n' if default_fs else ""
    config.write_text(f'[cluster]\nname = "primary"\n{fs}{cores.section}[logging]\nformat = "json"\n'
                      f'[daemon]\nstate_dir = "{tmp / label}"\n{body}')
    return {**os.environ, "NAVD_CONFIG": str(config)}


def ok(result: Any) -> str:
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return str(result.stdout)


def tailer_and_backfill_agree(navd: NavdRunner, tailer_env: dict[str, str], backfill_env: dict[str, str],
                              tailed: OwnCores, filled: OwnCores, lines: int, *master: str) -> str:
    """The tailer's pass into one set of cores, the backfill (then a tailer pass) into another:
    the same documents; the backfill's stderr (its logs) returned."""
    tail = ok(navd("extract", "spark", "--once", env=tailer_env, timeout=600))
    assert tail.startswith(f"spark: {lines} new lines"), tail
    records = int(tail.split(" new lines, ")[1].split()[0])
    assert ", 1 warnings" in tail, tail  # the copy's DROP of a table another owner's log named first

    backfill = navd("extract", "spark", "--backfill", *master, env=backfill_env, timeout=900)
    summary = ok(backfill)
    assert summary.startswith(f"spark backfill: 5 finished logs read, {lines} lines, {records} records written, "), \
        summary
    assert "1 warnings; left to the tailer: 0 in progress; 0 read before" in summary, summary
    # The tailer goes on after the backfill's positions: nothing of these logs again.
    after = ok(navd("extract", "spark", "--once", env=backfill_env, timeout=600))
    assert after.startswith("spark: 0 new lines, 0 records written, 0 warnings"), after

    expected, got = snapshot(tailed.index), snapshot(filled.index)
    assert sum(map(len, expected.values())) > 100, expected
    for core in expected:
        assert sorted(got[core]) == sorted(expected[core]), core
        for identity, doc in expected[core].items():
            assert got[core][identity] == doc, identity
    # What the history's order decides: the stubs' first log is the copy (another owner), so its
    # DROP applies and the original's is refused.
    tables = {d["qualifiedName"]: d for d in got["elements"].values() if d["qualifiedName"] in ("vw.src@primary",
                                                                                                 "vw.dim@primary")}
    assert {json.loads(d["properties"])["logOwner"] for d in tables.values()} == {OTHER_USER}
    assert (tables["vw.dim@primary"]["deleted"], tables["vw.src@primary"]["deleted"]) == (True, False)
    return str(backfill.stderr)


def test_backfill_on_local_equals_the_tailers_pass_and_leaves_running_logs(
        navd: NavdRunner, own_cores: Callable[[str], OwnCores], unique: str, tmp_path: Path) -> None:
    logs = tmp_path / "events"
    lines = lay_history(*local_writer(logs))
    section = f'[spark]\nevent_log_dirs = ["{logs}"]\n'
    tailed, filled = own_cores(f"{unique}_tail"), own_cores(f"{unique}_fill")
    backfill_env = environment(tmp_path, "fill", filled, section)
    tailer_and_backfill_agree(navd, environment(tmp_path, "tail", tailed, section), backfill_env,
                              tailed, filled, lines, "--master", "local[2]")

    # A log still being written is the tailer's: the backfill leaves it, the tailer reads it all.
    running = (FIXTURES / "column_usage.jsonl").read_bytes()
    (logs / f"{app_id(running)}.inprogress").write_bytes(running)
    again = ok(navd("extract", "spark", "--backfill", "--master", "local[2]", env=backfill_env, timeout=900))
    assert again.startswith("spark backfill: 0 finished logs read, 0 lines, 0 records written, 0 warnings; "
                            "left to the tailer: 1 in progress; 5 read before"), again
    tail = ok(navd("extract", "spark", "--once", env=backfill_env, timeout=600))
    assert tail.startswith(f"spark: {len(running.splitlines())} new lines"), tail


def rm_application(yarn: DevYarn, stderr: str) -> dict[str, Any]:
    """The YARN application the job's log line names, as the ResourceManager reports it."""
    [started] = [json.loads(line) for line in stderr.splitlines()
                 if line.startswith("{") and '"Spark job started"' in line]
    assert started["master"] == "yarn", started
    deadline = time.monotonic() + 60
    while True:  # the RM records the final status a moment after the driver unregisters
        app = requests.get(f"{yarn.rm_url}/ws/v1/cluster/apps/{started['application_id']}", timeout=10).json()["app"]
        if app["state"] in ("FINISHED", "FAILED", "KILLED") or time.monotonic() > deadline:
            return dict(app)
        time.sleep(1)


def yarn_jobs_section(yarn: DevYarn, python: Path) -> str:
    """`[spark_jobs]` for the session's YARN: its client configuration, executors running a Python
    without navd (its code comes with the job), small containers, and Spark's jars from this
    host's pyspark (`local:`: present on the node, nothing uploaded per application)."""
    import pyspark  # noqa: PLC0415

    jars = Path(pyspark.__file__).parent / "jars"
    conf = {"spark.executor.instances": "1", "spark.executor.cores": "1", "spark.executor.memory": "512m",
            "spark.driver.memory": "512m", "spark.yarn.am.memory": "256m", "spark.yarn.jars": f"local:{jars}/*",
            "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}
    table = ", ".join(f'"{k}" = "{v}"' for k, v in conf.items())
    return (f'[spark_jobs]\nhadoop_conf_dir = "{yarn.conf_dir}"\npython = "{python}"\n'
            f"conf = {{ {table} }}\n")


def yarn_env(env: dict[str, str], hdfs: DevHdfs) -> dict[str, str]:
    return {**env, "HADOOP_USER_NAME": hdfs.superuser, "SPARK_LOCAL_IP": "127.0.0.1"}


def test_backfill_on_yarn_equals_the_tailers_pass(navd: NavdRunner, own_cores: Callable[[str], OwnCores],
                                                  yarn: DevYarn, hdfs: DevHdfs, hdfs_client: Client,
                                                  dependencies_python: Path, unique: str, tmp_path: Path) -> None:
    events = f"/{unique}/spark-events"
    lines = lay_history(*hdfs_writer(hdfs_client, events))
    section = (f'[hdfs]\nurls = ["{hdfs.webhdfs_url}"]\nuser = "{hdfs.superuser}"\n'
               f'[spark]\nevent_log_dirs = ["{hdfs.default_fs}{events}"]\n')
    tailed, filled = own_cores(f"{unique}_tail"), own_cores(f"{unique}_fill")
    backfill_env = yarn_env(environment(tmp_path, "fill", filled, section + yarn_jobs_section(yarn, dependencies_python),
                                        default_fs=hdfs.default_fs), hdfs)
    stderr = tailer_and_backfill_agree(navd, environment(tmp_path, "tail", tailed, section, default_fs=hdfs.default_fs),
                                       backfill_env,
                                       tailed, filled, lines, "--master", "yarn")
    app = rm_application(yarn, stderr)
    assert (app["state"], app["finalStatus"], app["applicationType"]) == ("FINISHED", "SUCCEEDED", "SPARK"), app
