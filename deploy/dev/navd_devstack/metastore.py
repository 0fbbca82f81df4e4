"""A real standalone Hive Metastore (Thrift, port 9083 style) from the pyspark jars.

Spark ships hive-metastore 2.3.x; its `HiveMetaStore` main class runs the metastore service
over an embedded Derby database kept in the home. Spark sessions and the Thrift Server share
it through `hive.metastore.uris=thrift://127.0.0.1:<port>`, so tables a PySpark job creates
are the tables HiveServer2 (and so navd's HMS extractor) lists. Binds to 127.0.0.1.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from navd.jvm import find_tool
from navd.logs import get_logger
from navd.process import ManagedProcess
from navd_devstack.errors import DevServiceError
from navd_devstack.service import start_listening
from navd_devstack.spark_thrift import spark_home

log = get_logger("navd_devstack.metastore")
METASTORE_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"


class HiveMetastore:
    def __init__(self, home: Path, port: int, *, warehouse: str | None = None, heap: str = "512m") -> None:
        self.home = home.expanduser().resolve()
        self.port = port
        self.warehouse = warehouse or (self.home / "warehouse").as_uri()
        self.heap = heap
        self.process = ManagedProcess("hive-metastore", self.home, METASTORE_CLASS, DevServiceError)

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def log_file(self) -> Path:
        return self.home / "logs" / "metastore.log"

    def start(self, timeout: float = 180.0) -> None:
        """Start unless already running from this home; wait until the metastore port answers."""
        start_listening(self.process, self._spawn, self.port, what="the metastore", timeout=timeout,
                        log_file=self.log_file)

    def _spawn(self) -> subprocess.Popen[bytes]:
        self.home.mkdir(parents=True, exist_ok=True)
        database = self.home / "metastore_db"
        hiveconf = {
            # Without it the metastore fails on a missing LMAX disruptor class (async logging).
            "hive.async.log.enabled": "false",
            "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={database};create=true",
            "datanucleus.schema.autoCreateAll": "true",
            # Hive 2.3 defaults to BoneCP for some operations (DROP DATABASE ... CASCADE), which
            # the pyspark jars lack; they ship HikariCP.
            "datanucleus.connectionPoolingType": "HikariCP",
            "hive.metastore.schema.verification": "false",
            "hive.metastore.warehouse.dir": self.warehouse,
            "hive.metastore.bind.host": "127.0.0.1",
        }
        cmd = [find_tool("java", DevServiceError), f"-Xmx{self.heap}", "-XX:+ExitOnOutOfMemoryError",
               "-Dhive.async.log.enabled=false", f"-Dderby.system.home={self.home}",
               "-Djava.net.preferIPv4Stack=true", "-cp", f"{spark_home() / 'jars' / '*'}",
               METASTORE_CLASS, "-p", str(self.port)]
        for key, value in hiveconf.items():
            cmd += ["--hiveconf", f"{key}={value}"]
        env = {k: v for k, v in os.environ.items() if k not in ("HADOOP_CONF_DIR", "HIVE_CONF_DIR")}
        proc = self.process.spawn(cmd, log_file=self.log_file, record={"port": self.port}, env=env)
        log.info("starting the Hive metastore", pid=proc.pid, port=self.port, home=str(self.home))
        return proc

    def stop(self) -> bool:
        return self.process.stop(timeout=30)
