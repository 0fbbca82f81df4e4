"""navd's PySpark jobs on the session's real YARN: `navd link --spark --master yarn` and `navd
extract hdfs --from-fsimage ... --master yarn` leave the index their local[2] runs leave, document
for document (each run in cores of its own), and really ran on YARN (the ResourceManager reports
the application SUCCEEDED). The executors run a Python without navd: its code comes with the job.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hdfs import Client

from chaos import snapshot
from conftest import NavdRunner, OwnCores
from navd.index.client import IndexWriter
from navd_devstack.hadoop import DevHdfs
from navd_devstack.yarn import DevYarn
from test_hdfs_fsimage import build_tree, delimited_dump
from test_linker import scenario
from test_spark_backfill import environment, ok, rm_application, yarn_env, yarn_jobs_section


def same_documents(left: OwnCores, right: OwnCores) -> int:
    expected, got = snapshot(left.index), snapshot(right.index)
    for core in expected:
        assert sorted(got[core]) == sorted(expected[core]), core
        for identity, doc in expected[core].items():
            assert got[core][identity] == doc, identity
    return sum(map(len, expected.values()))


def test_link_spark_on_yarn_equals_local(navd: NavdRunner, own_cores: Callable[[str], OwnCores], yarn: DevYarn,
                                         hdfs: DevHdfs, dependencies_python: Path, unique: str,
                                         tmp_path: Path) -> None:
    records, _exe, real = scenario(unique)
    section = f'[linker]\nfs_aliases = ["{unique}nn:8020=hdfs://{unique}ns"]\n'
    runs = {}
    for label, master in (("local", "local[2]"), ("yarn", "yarn")):
        cores = own_cores(f"{unique}_{label}")
        writer = IndexWriter(cores.index)
        writer.write_all([*records, *real.values()])
        assert writer.close()
        body = section + (yarn_jobs_section(yarn, dependencies_python) if master == "yarn" else "")
        env = yarn_env(environment(tmp_path, label, cores, body, default_fs=f"hdfs://{unique}ns"), hdfs)
        result = navd("link", "--full", "--spark", "--master", master, env=env, timeout=900)
        assert ok(result).startswith("link: 7 unlinked relations examined, 6 linked, 1 still unlinked"), result.stdout
        runs[label] = (cores, result.stderr)
    assert same_documents(runs["local"][0], runs["yarn"][0]) == len(real) + 1 + 7
    app = rm_application(yarn, runs["yarn"][1])
    assert (app["state"], app["finalStatus"], app["name"]) == ("FINISHED", "SUCCEEDED", "navd-link"), app


def test_fsimage_on_yarn_equals_local(navd: NavdRunner, own_cores: Callable[[str], OwnCores], yarn: DevYarn,
                                      hdfs: DevHdfs, hdfs_client: Client, dependencies_python: Path, unique: str,
                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = f"/{unique}"
    build_tree(hdfs, hdfs_client, root)
    monkeypatch.setenv("TZ", "UTC")  # oiv prints its JVM's local time; navd reads UTC by default
    dump = delimited_dump(hdfs, tmp_path)
    # On a cluster the executors read the dump from HDFS, not from the driver's disk.
    hdfs_client.upload(f"{root}-dump/fsimage.tsv", str(dump))
    section = f'[hdfs]\nroots = ["{root}"]\n'
    runs = {}
    for label, master, path in (("local", "local[2]", str(dump)),
                                ("yarn", "yarn", f"{hdfs.default_fs}{root}-dump/fsimage.tsv")):
        cores = own_cores(f"{unique}_{label}")
        body = section + (yarn_jobs_section(yarn, dependencies_python) if master == "yarn" else "")
        env = yarn_env(environment(tmp_path, label, cores, body, default_fs=hdfs.default_fs), hdfs)
        result = navd("extract", "hdfs", "--from-fsimage", path, "--master", master, env=env, timeout=900)
        assert ok(result).startswith("hdfs fsimage: 17 elements, 17 relations, 0 bad lines skipped"), result.stdout
        runs[label] = (cores, result.stderr)
    assert same_documents(runs["local"][0], runs["yarn"][0]) == 34
    app = rm_application(yarn, runs["yarn"][1])
    assert (app["state"], app["finalStatus"]) == ("FINISHED", "SUCCEEDED"), app
    assert app["name"].startswith("navd-hdfs-fsimage-hdfs##"), app


def test_the_executors_python_has_no_navd_of_its_own(dependencies_python: Path, tmp_path: Path) -> None:
    """What makes the YARN runs above prove the code shipping: their executors' Python has the
    dependencies but cannot import navd without the job's zip."""
    import subprocess  # noqa: PLC0415

    probe = subprocess.run([str(dependencies_python), "-c", "import orjson, requests, structlog, pyspark\n"
                            "import navd"], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""},
                           cwd=tmp_path, check=False)  # not the repository's root, which holds navd/
    assert probe.returncode != 0 and "No module named 'navd'" in probe.stderr, probe.stderr
