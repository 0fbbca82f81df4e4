"""How navd's own PySpark jobs start: `navd link --spark`, `navd extract hdfs --from-fsimage` and
`navd extract spark --backfill`, on local[*] or on a cluster (YARN), from `[spark_jobs]`.

Each job's driver is the navd process (client mode); its executors write to Solr through navd's
IndexWriter. What a cluster master needs, and where this module takes it from:

- the Hadoop client configuration (`yarn-site.xml` naming the ResourceManager, `core-site.xml`
  the default file system): `[spark_jobs] hadoop_conf_dir`, else HADOOP_CONF_DIR or YARN_CONF_DIR,
  checked before anything starts (a JVM without it would retry 0.0.0.0:8032 for many minutes);
- the executors' Python: `[spark_jobs] python`, else PYSPARK_PYTHON, else this interpreter's path
  (PySpark sends the driver's choice with every task);
- navd's own code: zipped from this installation and added with `SparkContext.addPyFile`, so an
  executor's Python needs navd's dependencies only, never navd itself (`ship_code = false`: navd
  is installed there);
- everything else (executor count and memory, queue, spark.archives with a packed environment,
  Kerberos principal and keytab): Spark properties in `[spark_jobs] conf`.

A local master binds the driver to loopback, like navd's other services. docs/operations/yarn.md
says how to lay this out on a cluster.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from navd.config import SparkJobsConfig, check_spark_master
from navd.errors import ConfigError, NavdError
from navd.logs import get_logger

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = get_logger("navd.spark_jobs")

#: navd's packages that live in a directory of their own in the source tree (pyproject.toml's
#: package-dir): an editable install imports them from there, not from below navd/
CODE_PACKAGES = ("navd", "navd.extractors", "navd.linker", "navd.purge")

#: the environment variables the Spark JVM reads the Hadoop client configuration from
HADOOP_CONF_VARIABLES = ("HADOOP_CONF_DIR", "YARN_CONF_DIR")


class SparkJobError(NavdError):
    """A Spark job of navd's could not start (its master, Hadoop configuration or code)."""


@dataclasses.dataclass(frozen=True, slots=True)
class JobLaunch:
    """Everything one job's SparkSession is built from, decided before a JVM starts (pure)."""

    master: str
    app_name: str
    #: environment variables the Spark JVM and the executors' Python are started with
    environment: tuple[tuple[str, str], ...]
    properties: tuple[tuple[str, str], ...]
    ship_code: bool

    @property
    def local(self) -> bool:
        return self.master.startswith("local")


def job_launch(settings: SparkJobsConfig, master: str | None, app_name: str, *,
               environ: dict[str, str] | None = None) -> JobLaunch:
    """The launch of one job: `master` (the command's --master; None: `[spark_jobs] master`) and
    `[spark_jobs]`, the environment filling what the config leaves unset. Raises ConfigError
    naming the key when YARN's configuration is missing or incomplete."""
    env = dict(os.environ if environ is None else environ)
    chosen = master or settings.master
    check_spark_master("--master" if master else "[spark_jobs] master", chosen)
    python = settings.python or env.get("PYSPARK_PYTHON") or sys.executable
    environment = [("PYSPARK_PYTHON", python)]
    properties = [("spark.ui.enabled", "false"), *sorted(settings.conf.items())]
    if chosen == "yarn":
        conf_dir = hadoop_conf_dir(settings, env)
        environment += [(name, conf_dir) for name in HADOOP_CONF_VARIABLES]
    if chosen.startswith("local"):
        # A local job talks only to itself: loopback, like navd's other dev services.
        properties += [("spark.driver.host", "127.0.0.1"), ("spark.driver.bindAddress", "127.0.0.1")]
    return JobLaunch(master=chosen, app_name=app_name, environment=tuple(environment),
                     properties=tuple(properties), ship_code=settings.ship_code and not chosen.startswith("local"))


def check_job(settings: SparkJobsConfig, master: str | None) -> None:
    """What `job_launch` would refuse, asked before a command locks or records anything."""
    job_launch(settings, master, "check")


def hadoop_conf_dir(settings: SparkJobsConfig, environ: dict[str, str]) -> str:
    """The Hadoop client configuration directory a YARN job uses, checked to name a ResourceManager."""
    if settings.hadoop_conf_dir:
        label, directory = "[spark_jobs] hadoop_conf_dir", os.path.expanduser(settings.hadoop_conf_dir)
    else:
        name = next((n for n in HADOOP_CONF_VARIABLES if environ.get(n)), None)
        if name is None:
            raise ConfigError("[spark_jobs] hadoop_conf_dir: --master yarn needs the cluster's Hadoop client "
                              "configuration (yarn-site.xml, core-site.xml): set it, or HADOOP_CONF_DIR")
        label, directory = name, environ[name]
    site = Path(directory) / "yarn-site.xml"
    if not Path(directory).is_dir():
        raise ConfigError(f"{label}: {directory}: no such directory")
    if not site.is_file():
        raise ConfigError(f"{label}: {directory} has no yarn-site.xml (the client configuration naming "
                          "the ResourceManager)")
    return directory


def code_zip(directory: Path) -> Path:
    """navd's Python code as one zip in `directory`, importable from a zip on `sys.path`: every
    module of CODE_PACKAGES wherever this installation keeps it, and an empty `__init__.py` for
    each directory without one (zipimport finds no namespace packages)."""
    files: dict[str, Path] = {}
    for package in CODE_PACKAGES:
        spec = find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise SparkJobError(f"cannot ship navd's code to the executors: {package} is not importable here")
        root = Path(next(iter(spec.submodule_search_locations)))
        prefix = Path(*package.split("."))
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" not in path.parts:
                files.setdefault((prefix / path.relative_to(root)).as_posix(), path)
    packages = {str(Path(name).parent.as_posix()) for name in files}
    packages |= {"/".join(p.split("/")[:i]) for p in list(packages) for i in range(1, p.count("/") + 1)}
    target = directory / "navd-code.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, path in sorted(files.items()):
            archive.write(path, name)
        for package in sorted(packages):
            if f"{package}/__init__.py" not in files:
                archive.writestr(f"{package}/__init__.py", "")
    return target


@contextmanager
def spark_session(settings: SparkJobsConfig, master: str | None, app_name: str) -> Iterator[SparkSession]:
    """A SparkSession for one of navd's jobs, stopped at the end. One already active in this
    process (spark-submit, a notebook) is used as it is and left running: its master wins."""
    from pyspark import SparkContext  # noqa: PLC0415 - starting a JVM is for the Spark jobs only
    from pyspark.sql import SparkSession  # noqa: PLC0415

    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    launch = job_launch(settings, master, app_name)
    with tempfile.TemporaryDirectory(prefix="navd-spark-job-") as scratch:
        builder = SparkSession.builder.master(launch.master).appName(launch.app_name)
        for key, value in launch.properties:
            builder = builder.config(key, value)
        with _environment(dict(launch.environment)):
            _check_running_jvm(SparkContext, dict(launch.environment))
            try:
                spark = builder.getOrCreate()
            except Exception as exc:  # noqa: BLE001 - Py4J/PySpark errors: one line naming the master
                raise SparkJobError(f"{launch.app_name}: the Spark job could not start on {launch.master}: "
                                    f"{failure_cause(exc)}") from exc
        try:
            context = spark.sparkContext
            if launch.ship_code:
                context.addPyFile(str(code_zip(Path(scratch))))
            log.info("Spark job started", app=launch.app_name, master=context.master,
                     application_id=context.applicationId)
            yield spark
        finally:
            spark.stop()


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """`values` in os.environ while the JVM and SparkContext start (both read it then), restored
    after: the rest of the navd process keeps its own environment."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _check_running_jvm(context_type: type, environment: dict[str, str]) -> None:
    """PySpark starts one JVM per process and keeps it: one started for an earlier job without
    this job's Hadoop configuration would look for the ResourceManager at 0.0.0.0:8032."""
    gateway = getattr(context_type, "_gateway", None)
    wanted = environment.get("HADOOP_CONF_DIR")
    if gateway is None or wanted is None:
        return
    running = gateway.jvm.java.lang.System.getenv("HADOOP_CONF_DIR")
    if running != wanted:
        raise SparkJobError(f"this process's Spark JVM started with HADOOP_CONF_DIR={running or '(unset)'}, "
                            f"not {wanted}: run the YARN job in a navd process of its own")


_CAUSE = re.compile(r"([\w.$]*(?:Error|Exception)): (\S.*)")
_WRAPPERS = ("Py4JJavaError", "An error occurred while calling")


def failure_cause(exc: BaseException) -> str:
    """The telling line of a Spark failure: Py4J wraps it in a page of Java stack trace whose
    first line ("An error occurred while calling o42.foreachPartition") says nothing."""
    for line in str(exc).splitlines():
        match = _CAUSE.search(line)
        if match and not any(w in line for w in _WRAPPERS):
            return f"{match.group(1).rsplit('.', 1)[-1]}: {match.group(2)}"[:500]
    text = str(exc).strip()
    return text.splitlines()[0][:500] if text else type(exc).__name__
