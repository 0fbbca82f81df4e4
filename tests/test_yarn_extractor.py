"""The YARN extractor against a real ResourceManager + NodeManager running real PySpark jobs
(spark-submit --master yarn): one succeeding, one failing on purpose, one killed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from hdfs import Client

from navd.index.client import SolrIndex
from navd.model import identity
from navd.solr.server import EmbeddedSolr
from navd_devstack.hadoop import DevHdfs
from navd_devstack.yarn import DevYarn
from conftest import write_navd_config


def submit(yarn: DevYarn, hdfs: DevHdfs, events: Path, name: str, body: str, *, cluster_mode: bool = False,
           wait: bool = True) -> subprocess.CompletedProcess[str]:
    script = events.parent / f"{name}.py"
    script.write_text("from pyspark.sql import SparkSession\n"
                      "spark = SparkSession.builder.getOrCreate()\n" + textwrap.dedent(body))
    python = sys.executable
    cmd = [str(Path(sys.executable).parent / "spark-submit"), "--master", "yarn",
           "--deploy-mode", "cluster" if cluster_mode else "client", "--name", name,
           "--driver-memory", "512m", "--executor-memory", "512m", "--num-executors", "1", "--executor-cores", "1",
           "--conf", "spark.yarn.am.memory=256m", "--conf", "spark.ui.enabled=false",
           "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.eventLog.enabled=true",
           "--conf", f"spark.eventLog.dir={events.as_uri()}",
           "--conf", f"spark.yarn.appMasterEnv.PYSPARK_PYTHON={python}",
           "--conf", f"spark.executorEnv.PYSPARK_PYTHON={python}",
           "--conf", f"spark.yarn.submit.waitAppCompletion={'true' if wait else 'false'}", str(script)]
    env = {**os.environ, "HADOOP_CONF_DIR": str(yarn.conf_dir), "HADOOP_USER_NAME": hdfs.superuser,
           "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": python}
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)


def rm_apps(yarn: DevYarn) -> dict[str, dict[str, Any]]:
    body = requests.get(f"{yarn.rm_url}/ws/v1/cluster/apps", timeout=10).json()
    return {app["name"]: app for app in ((body.get("apps") or {}).get("app") or [])}


def kill_when_running(yarn: DevYarn, name: str, timeout: float = 300) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        app = rm_apps(yarn).get(name)
        if app and app["state"] == "RUNNING":
            response = requests.put(f"{yarn.rm_url}/ws/v1/cluster/apps/{app['id']}/state",
                                    params={"user.name": "root"}, json={"state": "KILLED"}, timeout=10)
            assert response.status_code in (200, 202), response.text
            return str(app["id"])
        time.sleep(1)
    pytest.fail(f"{name} never reached RUNNING")


def test_yarn_applications_and_their_spark_lineage(navd, yarn: DevYarn, hdfs: DevHdfs,  # type: ignore[no-untyped-def]
                                                   hdfs_client: Client, solr_server: EmbeddedSolr,
                                                   index: SolrIndex, unique: str, tmp_path: Path) -> None:
    events = tmp_path / "events"
    events.mkdir()
    source, output = f"/{unique}/in/clicks.csv", f"/{unique}/out/clicks_by_kind"
    hdfs_client.write(source, data="1,click\n2,view\n3,click\n", overwrite=True)
    ok_name, fail_name, kill_name = f"{unique}_ok", f"{unique}_fail", f"{unique}_kill"
    ok = submit(yarn, hdfs, events, ok_name, f"""
        df = spark.read.csv({hdfs.default_fs + source!r}).toDF("id", "kind")
        df.groupBy("kind").count().write.parquet({hdfs.default_fs + output!r})
        spark.stop()
    """)
    assert ok.returncode == 0, ok.stderr[-3000:]
    failed = submit(yarn, hdfs, events, fail_name, """
        raise RuntimeError("navd test: failing on purpose")
    """, cluster_mode=True)
    assert failed.returncode != 0
    killer = submit(yarn, hdfs, events, kill_name, """
        import time
        time.sleep(600)
    """, cluster_mode=True, wait=False)
    assert killer.returncode == 0, killer.stderr[-3000:]
    killed_id = kill_when_running(yarn, kill_name)

    config = tmp_path / "navd.toml"
    write_navd_config(config, solr_server, f'[yarn]\nurls = ["{yarn.rm_url}"]\n'
                      f'[spark]\nevent_log_dirs = ["{events}"]\nstate_dir = "{tmp_path / "spark-state"}"\n',
                      cluster=unique)
    env = {**os.environ, "NAVD_CONFIG": str(config), "XDG_STATE_HOME": str(tmp_path / "state")}
    result = navd("extract", "yarn", env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert ", 0 skipped" in result.stdout, result.stdout

    apps = rm_apps(yarn)
    def execution(name: str) -> dict[str, Any]:
        docs = index.get("elements", [identity("YARN", f"yarn://{apps[name]['id']}")])
        assert docs, f"{name} not indexed"
        return docs[0]
    deadline = time.monotonic() + 60
    while rm_apps(yarn)[kill_name]["state"] != "KILLED" and time.monotonic() < deadline:
        time.sleep(1)
    again = navd("extract", "yarn", env=env)  # the killed app is final now
    assert again.returncode == 0, again.stderr[-2000:]
    # Nothing happened since: the overlap re-reads the last minutes, but what was written is skipped.
    quiet = navd("extract", "yarn", env=env)
    assert quiet.returncode == 0 and quiet.stdout.startswith("yarn: 0 applications"), quiet.stdout
    # --full: every application the session's RM remembers, other tests' too (tests/test_chaos.py's).
    remembered = requests.get(f"{yarn.rm_url}/ws/v1/cluster/apps", timeout=10).json()["apps"]["app"]
    assert navd("extract", "yarn", "--full", env=env).stdout.startswith(f"yarn: {len(remembered)} applications")

    done = execution(ok_name)
    props = json.loads(done["properties"])
    assert (props["state"], props["finalStatus"], props["applicationType"]) == ("FINISHED", "SUCCEEDED", "SPARK")
    assert done["principal"] == hdfs.superuser and props["queue"] in ("default", "root.default")
    assert "diagnostics" not in props and done.get("ended")
    failure = json.loads(execution(fail_name)["properties"])
    assert failure["finalStatus"] == "FAILED" and failure["diagnostics"]
    killed = json.loads(execution(kill_name)["properties"])
    assert (killed["state"], killed["finalStatus"]) == ("KILLED", "KILLED")
    assert apps[kill_name]["id"] == killed_id

    # The Spark side: the succeeding job's event log; LOGICAL_PHYSICAL links the two runs.
    spark = navd("extract", "spark", "--once", env=env)
    assert spark.returncode == 0, spark.stderr[-2000:]
    assert ", 0 warnings" in spark.stdout, spark.stderr[-3000:]  # every event of a YARN run is understood
    ok_id = apps[ok_name]["id"]
    index.commit("relations")
    [physical] = list(index.scan("relations", "type:LOGICAL_PHYSICAL", fl="identity,unlinked,endpoint1QualifiedName",
                                 filters=[f"endpoint2Id:{identity('YARN', f'yarn://{ok_id}')}"]))
    assert physical["endpoint1QualifiedName"] == f"spark://{ok_id}/1" and physical["unlinked"] is False

    lineage = navd("lineage", f"yarn://{ok_id}", "--operations", "--format", "json", env=env)
    assert lineage.returncode == 0, lineage.stderr
    names = {node["qualifiedName"] for node in json.loads(lineage.stdout)["nodes"]}
    assert f"{hdfs.default_fs}{source}" in names and f"{hdfs.default_fs}{output}" in names, names
    # Seen from the Spark run, the YARN application is not lineage (as in Navigator).
    spark_side = navd("lineage", f"spark://{ok_id}/1", "--operations", "--format", "json", env=env)
    assert f"yarn://{ok_id}" not in {n["qualifiedName"] for n in json.loads(spark_side.stdout)["nodes"]}
