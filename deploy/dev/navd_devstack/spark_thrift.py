"""A real HiveServer2 for development and tests: Spark's Thrift Server from the pyspark jars.

It speaks the HiveServer2 protocol (PyHive connects to it), keeps its metastore in an embedded
Derby database under its home (or uses a standalone metastore), writes its warehouse where it is
told, and writes a Spark event log in which every statement run through it appears with its SQL
text: navd's Spark extractor reads those for queryText. Everything binds to 127.0.0.1.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pyspark

from navd.logs import get_logger
from navd.process import ManagedProcess
from navd_devstack.errors import DevServiceError
from navd_devstack.service import start_listening

log = get_logger("navd_devstack.spark_thrift")
THRIFT_SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"


def spark_home() -> Path:
    """The installed pyspark package: it is a complete SPARK_HOME (bin/, jars/)."""
    return Path(pyspark.__file__).resolve().parent


class SparkThriftServer:
    def __init__(self, home: Path, port: int, *, warehouse: str | None = None,
                 event_log_dir: Path | None = None, metastore_uri: str | None = None,
                 driver_memory: str = "1g") -> None:
        self.home = home.expanduser().resolve()
        self.port = port
        self.warehouse = warehouse or (self.home / "warehouse").as_uri()
        self.event_log_dir = (event_log_dir or self.home / "spark-events").resolve()
        self.metastore_uri = metastore_uri
        self.driver_memory = driver_memory
        self.process = ManagedProcess("spark-thrift", self.home, THRIFT_SERVER_CLASS, DevServiceError)

    @property
    def log_file(self) -> Path:
        return self.home / "logs" / "thrift-server.log"

    def running(self) -> bool:
        return self.process.running_pid() is not None

    def start(self, timeout: float = 240.0) -> None:
        """Start unless already running from this home; wait until the Thrift port answers."""
        start_listening(self.process, self._spawn, self.port, what="the Thrift Server", timeout=timeout,
                        log_file=self.log_file)

    def _spawn(self) -> subprocess.Popen[bytes]:
        self.home.mkdir(parents=True, exist_ok=True)
        self.event_log_dir.mkdir(parents=True, exist_ok=True)
        conf = {
            "spark.ui.enabled": "false",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.warehouse.dir": self.warehouse,
            "spark.eventLog.enabled": "true",
            "spark.eventLog.dir": self.event_log_dir.as_uri(),
            # Derby writes derby.log into the working directory: keep it in the home.
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={self.home}",
        }
        if self.metastore_uri:
            conf["spark.hadoop.hive.metastore.uris"] = self.metastore_uri
        else:
            database = self.home / "metastore_db"
            conf["spark.hadoop.javax.jdo.option.ConnectionURL"] = f"jdbc:derby:;databaseName={database};create=true"
        cmd = [str(spark_home() / "bin" / "spark-submit"), "--master", "local[2]", "--name", "navd-thrift-server",
               "--driver-memory", self.driver_memory, "--class", THRIFT_SERVER_CLASS]
        for key, value in conf.items():
            cmd += ["--conf", f"{key}={value}"]
        # doAs off, as on clusters with Ranger/Sentry: statements run as the server's user. (With
        # it on, local-mode tasks write as the server's user but commit as the client's user.)
        cmd += ["spark-internal", "--hiveconf", f"hive.server2.thrift.port={self.port}",
                "--hiveconf", "hive.server2.thrift.bind.host=127.0.0.1",
                "--hiveconf", "hive.server2.enable.doAs=false"]
        env = {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1",
               "SPARK_LOG_DIR": str(self.home / "logs")}
        proc = self.process.spawn(cmd, log_file=self.log_file, record={"port": self.port}, env=env)
        log.info("starting the Spark Thrift Server", pid=proc.pid, port=self.port, home=str(self.home))
        return proc

    def stop(self) -> bool:
        return self.process.stop(timeout=60)
