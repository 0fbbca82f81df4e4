"""A real YARN for development and tests: a ResourceManager and a NodeManager beside the dev HDFS.

The same Hadoop jars as `navd_devstack.hadoop` (the pom lists the RM and NM). `DevYarn` keeps its
generated configuration, NodeManager local and log directories, logs and pid files in its home.
Its `conf/` directory is a complete client configuration (core-site.xml naming the dev HDFS,
yarn-site.xml naming the ResourceManager): `HADOOP_CONF_DIR=<home>/conf spark-submit --master
yarn` uses it. Every port binds to 127.0.0.1; the NodeManager offers little memory, and the
capacity scheduler lets an application master take half of it (its default 10% would keep a
Spark driver's AM waiting on a small node). Ready when the RM's REST API says STARTED and one
NodeManager is RUNNING.
"""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import requests

from navd.logs import get_logger
from navd.process import ManagedProcess, free_port
from navd_devstack.errors import DevServiceError
from navd_devstack.hadoop import (DevHdfs, HadoopDistribution, hadoop_env, hadoop_java_cmd, jvm_resource,
                                  write_site)

log = get_logger("navd_devstack.yarn")
RESOURCEMANAGER_CLASS = "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager"
NODEMANAGER_CLASS = "org.apache.hadoop.yarn.server.nodemanager.NodeManager"


@dataclasses.dataclass(frozen=True)
class YarnPorts:
    rm: int
    rm_scheduler: int
    rm_tracker: int
    rm_admin: int
    rm_web: int
    nm: int
    nm_web: int
    nm_localizer: int

    @classmethod
    def free(cls) -> YarnPorts:
        return cls(*(free_port() for _ in range(8)))

    @classmethod
    def dev_defaults(cls) -> YarnPorts:
        # Hadoop 3's own defaults (the NodeManager's RPC port is ephemeral there; fixed here).
        return cls(rm=8032, rm_scheduler=8030, rm_tracker=8031, rm_admin=8033, rm_web=8088,
                   nm=8041, nm_web=8042, nm_localizer=8040)


class DevYarn:
    """One ResourceManager + one NodeManager whose files live in `home`, using `hdfs`."""

    def __init__(self, home: Path, ports: YarnPorts, hdfs: DevHdfs, distribution: HadoopDistribution | None = None,
                 node_memory_mb: int = 6144, node_vcores: int = 4, heap: str = "384m",
                 conf_dir: Path | None = None) -> None:
        self.home = home.expanduser().resolve()
        self._conf_dir = conf_dir.expanduser().resolve() if conf_dir else self.home / "conf"
        self.ports = ports
        self.hdfs = hdfs
        self.distribution = distribution or hdfs.distribution
        self.node_memory_mb = node_memory_mb
        self.node_vcores = node_vcores
        self.heap = heap
        self.resourcemanager = ManagedProcess("yarn-resourcemanager", self.home, RESOURCEMANAGER_CLASS,
                                              DevServiceError)
        self.nodemanager = ManagedProcess("yarn-nodemanager", self.home, NODEMANAGER_CLASS, DevServiceError)

    @property
    def conf_dir(self) -> Path:
        """A HADOOP_CONF_DIR for clients: spark-submit --master yarn, the hdfs/yarn tools."""
        return self._conf_dir

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def rm_url(self) -> str:
        """The ResourceManager's web address (REST under /ws/v1/cluster)."""
        return f"http://127.0.0.1:{self.ports.rm_web}"

    def running(self) -> bool:
        return self.resourcemanager.running_pid() is not None and self.nodemanager.running_pid() is not None

    def start(self, timeout: float = 180.0) -> None:
        """Start both daemons unless they run from this home already; wait until a node is RUNNING."""
        self.distribution.ensure()
        self._write_conf()
        self.resourcemanager.ensure_running(
            lambda: self._spawn(self.resourcemanager, RESOURCEMANAGER_CLASS), self._rm_ready,
            ports=(self.ports.rm, self.ports.rm_scheduler, self.ports.rm_tracker, self.ports.rm_admin,
                   self.ports.rm_web),
            timeout=timeout, log_file=self._log_file(self.resourcemanager))
        self.nodemanager.ensure_running(
            lambda: self._spawn(self.nodemanager, NODEMANAGER_CLASS), self._node_ready,
            ports=(self.ports.nm, self.ports.nm_web, self.ports.nm_localizer),
            timeout=timeout, log_file=self._log_file(self.nodemanager))
        log.info("YARN is up", resourcemanager=self.rm_url, home=str(self.home))

    def stop(self) -> bool:
        stopped_nm = self.nodemanager.stop(timeout=30)
        stopped_rm = self.resourcemanager.stop(timeout=30)
        return stopped_nm or stopped_rm

    # -- processes --------------------------------------------------------------------------

    def _log_file(self, process: ManagedProcess) -> Path:
        return self.logs_dir / f"{process.name}.log"

    def _spawn(self, process: ManagedProcess, main_class: str) -> subprocess.Popen[bytes]:
        cmd = hadoop_java_cmd(self.distribution, self.conf_dir, self.logs_dir, self.home, main_class, self.heap)
        proc = process.spawn(cmd, log_file=self._log_file(process), record=dataclasses.asdict(self.ports),
                             env=hadoop_env())
        log.info("starting", service=process.name, pid=proc.pid, home=str(self.home))
        return proc

    # -- readiness --------------------------------------------------------------------------

    def _get(self, path: str) -> dict[str, object] | None:
        try:
            resp = requests.get(f"{self.rm_url}/ws/v1/cluster/{path}", timeout=3,
                                headers={"Accept": "application/json"})
            return resp.json() if resp.status_code == 200 else None  # type: ignore[no-any-return]
        except (requests.RequestException, ValueError):
            return None

    def _rm_ready(self) -> str | None:
        info = self._get("info")
        state = (info or {}).get("clusterInfo", {}).get("state")  # type: ignore[union-attr]
        return None if state == "STARTED" else f"the ResourceManager at {self.rm_url} is not STARTED ({state})"

    def _node_ready(self) -> str | None:
        nodes = self._get("nodes")
        listed = ((nodes or {}).get("nodes") or {}).get("node") or []  # type: ignore[union-attr]
        running = [n for n in listed if n.get("state") == "RUNNING"]
        return None if running else "no NodeManager is RUNNING yet"

    # -- configuration ----------------------------------------------------------------------

    def _write_conf(self) -> None:
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        data = self.home / "data"
        p = self.ports
        core = {"fs.defaultFS": self.hdfs.default_fs, "hadoop.tmp.dir": str(data / "tmp"),
                "hadoop.security.authentication": "simple"}
        yarn = {
            "yarn.resourcemanager.hostname": "127.0.0.1",
            "yarn.resourcemanager.bind-host": "127.0.0.1",
            "yarn.resourcemanager.address": f"127.0.0.1:{p.rm}",
            "yarn.resourcemanager.scheduler.address": f"127.0.0.1:{p.rm_scheduler}",
            "yarn.resourcemanager.resource-tracker.address": f"127.0.0.1:{p.rm_tracker}",
            "yarn.resourcemanager.admin.address": f"127.0.0.1:{p.rm_admin}",
            "yarn.resourcemanager.webapp.address": f"127.0.0.1:{p.rm_web}",
            "yarn.resourcemanager.recovery.enabled": "false",
            "yarn.nodemanager.hostname": "127.0.0.1",
            "yarn.nodemanager.bind-host": "127.0.0.1",
            "yarn.nodemanager.address": f"127.0.0.1:{p.nm}",
            "yarn.nodemanager.webapp.address": f"127.0.0.1:{p.nm_web}",
            "yarn.nodemanager.localizer.address": f"127.0.0.1:{p.nm_localizer}",
            "yarn.nodemanager.local-dirs": str(data / "nm-local"),
            "yarn.nodemanager.log-dirs": str(self.logs_dir / "containers"),
            "yarn.nodemanager.resource.memory-mb": str(self.node_memory_mb),
            "yarn.nodemanager.resource.cpu-vcores": str(self.node_vcores),
            "yarn.nodemanager.vmem-check-enabled": "false",
            "yarn.nodemanager.pmem-check-enabled": "false",
            # A nearly full disk must not mark the only node unhealthy.
            "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": "99.9",
            "yarn.scheduler.minimum-allocation-mb": "128",
            "yarn.scheduler.maximum-allocation-mb": str(self.node_memory_mb),
            "yarn.timeline-service.enabled": "false",
            "yarn.log-aggregation-enable": "false",
        }
        capacity = {
            "yarn.scheduler.capacity.root.queues": "default",
            "yarn.scheduler.capacity.root.default.capacity": "100",
            "yarn.scheduler.capacity.root.default.maximum-capacity": "100",
            "yarn.scheduler.capacity.maximum-am-resource-percent": "0.5",
        }
        write_site(self.conf_dir / "core-site.xml", core)
        write_site(self.conf_dir / "hdfs-site.xml", {"dfs.replication": "1"})
        write_site(self.conf_dir / "yarn-site.xml", yarn)
        write_site(self.conf_dir / "capacity-scheduler.xml", capacity)
        (self.conf_dir / "log4j.properties").write_bytes(jvm_resource("log4j.properties").read_bytes())
