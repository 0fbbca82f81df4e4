"""How navd's Spark jobs are launched (navd/spark_jobs.py, `[spark_jobs]`), and the commands'
one-line refusals before anything starts: a YARN master without a Hadoop client configuration,
a --master where no Spark job runs, an option another extractor owns."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import NavdRunner
from navd.config import SparkJobsConfig, parse_config
from navd.errors import ConfigError
from navd.spark_jobs import code_zip, job_launch


def test_a_local_master_binds_the_driver_to_loopback_and_ships_no_code() -> None:
    launch = job_launch(SparkJobsConfig(), None, "navd-link", environ={})
    assert launch.master == "local[*]" and not launch.ship_code
    assert ("spark.driver.host", "127.0.0.1") in launch.properties
    assert dict(launch.environment) == {"PYSPARK_PYTHON": sys.executable}


def test_yarn_takes_the_configured_hadoop_conf_python_and_properties(tmp_path: Path) -> None:
    (tmp_path / "yarn-site.xml").write_text("<configuration/>")
    settings = SparkJobsConfig(hadoop_conf_dir=str(tmp_path), python="./env/bin/python",
                               conf={"spark.archives": "hdfs:///navd/env.tar.gz#env"})
    launch = job_launch(settings, "yarn", "navd-link", environ={"HADOOP_CONF_DIR": "/elsewhere",
                                                                 "PYSPARK_PYTHON": "/usr/bin/python3"})
    assert launch.ship_code and launch.master == "yarn"
    assert dict(launch.environment) == {"PYSPARK_PYTHON": "./env/bin/python", "HADOOP_CONF_DIR": str(tmp_path),
                                        "YARN_CONF_DIR": str(tmp_path)}
    assert ("spark.archives", "hdfs:///navd/env.tar.gz#env") in launch.properties
    assert ("spark.driver.host", "127.0.0.1") not in launch.properties  # the executors call the driver back


@pytest.mark.parametrize(("settings", "environ", "message"), [
    (SparkJobsConfig(), {}, "[spark_jobs] hadoop_conf_dir: --master yarn needs the cluster's Hadoop client "
                            "configuration (yarn-site.xml, core-site.xml): set it, or HADOOP_CONF_DIR"),
    (SparkJobsConfig(), {"HADOOP_CONF_DIR": "/nonexistent/conf"}, "HADOOP_CONF_DIR: /nonexistent/conf: no such directory"),
    (SparkJobsConfig(hadoop_conf_dir="/"), {}, "[spark_jobs] hadoop_conf_dir: / has no yarn-site.xml (the client "
                                               "configuration naming the ResourceManager)"),
])
def test_yarn_without_a_client_configuration_is_refused_naming_the_key(settings: SparkJobsConfig,
                                                                      environ: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        job_launch(settings, "yarn", "navd-link", environ=environ)
    assert str(caught.value) == message


@pytest.mark.parametrize(("body", "message"), [
    ('master = "yarn-client"', "[spark_jobs] master: 'yarn-client' is not a Spark master"),
    ('hadoop_conf_dir = "conf"', "[spark_jobs] hadoop_conf_dir: 'conf' is not an absolute path"),
    ('conf = { "executor.memory" = "2g" }', "[spark_jobs] conf: 'executor.memory' is not a Spark property"),
    ('conf = { "spark.master" = "yarn" }', "[spark_jobs] conf: spark.master is set by navd: use [spark_jobs] "
                                            "master or --master"),
    ('conf = { "spark.executor.memory" = 2 }', "[spark_jobs] conf: expected a table of strings"),
    ("ship_code = 1", "[spark_jobs] ship_code: expected true or false, got 1"),
])
def test_bad_spark_jobs_keys_fail_the_load_naming_the_key(body: str, message: str) -> None:
    import tomllib  # noqa: PLC0415

    with pytest.raises(ConfigError) as caught:
        parse_config(tomllib.loads(f"[spark_jobs]\n{body}\n"), source="navd.toml")
    assert str(caught.value).startswith(f"navd.toml: {message}"), str(caught.value)


def test_the_code_zip_imports_navds_jobs_in_a_python_without_navd(tmp_path: Path, dependencies_python: Path) -> None:
    archive = code_zip(tmp_path)
    names = set(zipfile.ZipFile(archive).namelist())
    assert {"navd/extractors/spark/backfill.py", "navd/linker/spark_link.py", "navd/index/__init__.py"} <= names
    assert not any("__pycache__" in name for name in names)
    probe = f"import sys; sys.path.insert(0, {str(archive)!r}); import navd.extractors.spark.backfill, " \
            "navd.linker.spark_link, navd.extractors.hdfs.bulk; print(navd.__file__)"
    result = subprocess.run([str(dependencies_python), "-c", probe], capture_output=True, text=True, check=False,
                            env={**os.environ, "PYTHONPATH": ""}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == f"{archive}/navd/__init__.py"


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The one stderr line of a refused command, without its `navd: error: ` or `navd: config
    error: ` prefix."""
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.strip()]
    assert line.startswith(("navd: error: ", "navd: config error: ")), line
    return line.split("error: ", 1)[1]


def test_the_commands_refuse_before_starting_anything(navd: NavdRunner, navd_env: dict[str, str],
                                                      tmp_path: Path) -> None:
    config = Path(navd_env["NAVD_CONFIG"])
    config.write_text(config.read_text() + f'[spark]\nevent_log_dirs = ["{tmp_path}"]\n'
                                           f'[cluster]\ndefault_fs = "hdfs://ns1"\n')
    env = {k: v for k, v in navd_env.items() if k not in ("HADOOP_CONF_DIR", "YARN_CONF_DIR")}
    assert one_line_error(navd("extract", "spark", "--backfill", "--master", "yarn", env=env)) == (
        "[spark_jobs] hadoop_conf_dir: --master yarn needs the cluster's Hadoop client configuration "
        "(yarn-site.xml, core-site.xml): set it, or HADOOP_CONF_DIR")
    assert one_line_error(navd("extract", "spark", "--master", "local[2]", env=env)) == (
        "--master: only with --backfill (the Spark job's master)")
    assert one_line_error(navd("extract", "hdfs", "--master", "local[2]", env=env)) == (
        "--master: only with --from-fsimage (the Spark job's master)")
    assert one_line_error(navd("extract", "yarn", "--backfill", env=env)) == (
        "--backfill: not an option of navd extract yarn")
    assert one_line_error(navd("link", "--master", "yarn", env=env)) == (
        "--master: only with --spark (the Spark job's master)")
    assert one_line_error(navd("link", "--spark", "--master", "yarn-cluster", env=env)) == (
        "--master: 'yarn-cluster' is not a Spark master: local[*], local[N], yarn or spark://host:port")


def test_extract_help_tells_the_backfill_and_its_master(navd: NavdRunner) -> None:
    text = " ".join(navd("extract", "spark", "--help").stdout.split())
    assert "--backfill spark: read the finished applications' event logs the tailer has not read with a PySpark " \
           "job" in text
    assert "--master MASTER hdfs --from-fsimage, spark --backfill: the Spark master" in text
    assert text.count("--master MASTER hdfs") == 1  # one option for both extractors
