"""Fetch, start, stop and inspect navd's embedded Solr 9 server.

The jars come from Maven Central through Maven (`mvn dependency:copy-dependencies`), once per
Solr version, into a cache directory; a tiny launcher class (jvm/NavdSolr.java, compiled with
javac on fetch) runs a real Solr node with JettySolrRunner, bound to 127.0.0.1, as a separate
process whose pid is kept in the solr home. With `cloud=True` the node runs SolrCloud with the
ZooKeeper Solr itself embeds (-DzkRun, as `bin/solr start -c` does), on 127.0.0.1 too.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

import requests

from navd.config import DEFAULT_SOLR_PORT, SolrConfig, default_solr_home, state_dir
from navd.errors import EmbeddedSolrError
from navd.jvm import fetch_maven_jars, find_tool, run_tool
from navd.logs import get_logger
from navd.process import ManagedProcess, free_port, port_in_use

__all__ = ["EmbeddedSolr", "ServerStatus", "SolrDistribution", "embedded_server", "effective_solr_config",
           "free_port", "remember_current"]

LAUNCHER_CLASS = "NavdSolr"
CURRENT_FILE_NAME = "embedded-solr.json"
# Solr's own convention (bin/solr -c): the embedded ZooKeeper listens on the Solr port + 1000.
ZK_PORT_OFFSET = 1000
# Solr reads the embedded ZooKeeper's config from the solr home; its presence marks a SolrCloud home.
ZOO_CFG = "zoo.cfg"
log = get_logger("navd.solr")


def _jvm_resource(name: str) -> Path:
    return Path(str(resources.files("navd.solr") / "jvm" / name))


def _find_tool(name: str) -> str:
    return find_tool(name, EmbeddedSolrError)


@dataclasses.dataclass(frozen=True)
class SolrDistribution:
    """The jars of one Solr version plus the compiled launcher, under `cache_dir`."""

    version: str
    cache_dir: Path

    @property
    def root(self) -> Path:
        return self.cache_dir / f"solr-{self.version}"

    @property
    def classes_dir(self) -> Path:
        # Named by the launcher source's hash: a changed NavdSolr.java is compiled anew (by
        # ensure) even into a cache whose jars are complete, and a running server keeps its own.
        return self.root / f"classes-{_launcher_hash()}"

    @property
    def classpath(self) -> str:
        return f"{self.classes_dir}{os.pathsep}{self.root / 'lib' / '*'}"

    def is_complete(self) -> bool:
        return (self.root / ".complete").is_file() and self.classes_dir.is_dir()

    def ensure(self) -> Path:
        """Fetch the jars and compile the launcher unless already done. Idempotent."""
        if not (self.root / ".complete").is_file():
            self._fetch_jars()
        if not self.classes_dir.is_dir():
            self._compile_launcher()
        return self.root

    def _fetch_jars(self) -> None:
        _find_tool("javac")  # fail before the long download, not after it
        fetch_maven_jars(_jvm_resource("pom.xml"), self.root, {"solr.version": self.version},
                         what=f"Solr {self.version}", error=EmbeddedSolrError)

    def _compile_launcher(self) -> None:
        javac = _find_tool("javac")
        target = self.classes_dir
        with tempfile.TemporaryDirectory(dir=self.root, prefix=".javac-") as tmp:
            classes = Path(tmp) / "classes"
            classes.mkdir()
            _run([javac, "-d", str(classes), "-cp", str(self.root / "lib" / "*"),
                  str(_jvm_resource(f"{LAUNCHER_CLASS}.java"))], what="compiling the Solr launcher")
            try:
                classes.rename(target)
            except OSError:
                if not target.is_dir():  # another process may have won the race
                    raise


def _launcher_hash() -> str:
    return hashlib.sha256(_jvm_resource(f"{LAUNCHER_CLASS}.java").read_bytes()).hexdigest()[:12]


def _run(cmd: list[str], *, what: str) -> None:
    run_tool(cmd, what=what, error=EmbeddedSolrError)


@dataclasses.dataclass(frozen=True)
class ServerStatus:
    running: bool
    home: Path
    port: int | None = None
    pid: int | None = None
    solr_version: str | None = None
    detail: str = ""

    @property
    def url(self) -> str | None:
        return f"http://127.0.0.1:{self.port}/solr" if self.port else None

    def as_dict(self) -> dict[str, object]:
        return {"running": self.running, "home": str(self.home), "port": self.port, "pid": self.pid,
                "url": self.url, "solrVersion": self.solr_version, "detail": self.detail}


class EmbeddedSolr:
    """One embedded Solr node whose data and pid file live under `home`.

    `cloud=True` sets a new home up as a single SolrCloud node with an embedded ZooKeeper on
    127.0.0.1:`port + 1000` (its data in the home). A home keeps the mode it was set up with
    (a SolrCloud home holds zoo.cfg), so later starts of a SolrCloud home need not say `cloud`.
    """

    def __init__(self, home: Path, port: int, heap: str, distribution: SolrDistribution,
                 cloud: bool = False) -> None:
        self.home = home.expanduser().resolve()
        self.port = port
        self.heap = heap
        self.distribution = distribution
        self.cloud = cloud
        self.process = ManagedProcess("solr", self.home, LAUNCHER_CLASS, EmbeddedSolrError)

    @property
    def pid_file(self) -> Path:
        return self.process.pid_file

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/solr"

    @property
    def is_cloud(self) -> bool:
        """SolrCloud if asked for, or if the home was set up as SolrCloud before."""
        return self.cloud or (self.home / ZOO_CFG).is_file()

    @property
    def zk_port(self) -> int | None:
        return self.port + ZK_PORT_OFFSET if self.is_cloud else None

    @property
    def zk_host(self) -> str | None:
        """The embedded ZooKeeper's connect string (for `bin/solr zk` and the like), if SolrCloud."""
        return f"127.0.0.1:{self.zk_port}" if self.zk_port else None

    # -- status -----------------------------------------------------------------------------

    def recorded_port(self) -> int | None:
        """The port in the pid file: where this home's server runs (or last ran)."""
        recorded = self.process.recorded()
        try:
            return int(recorded["port"]) if recorded else None
        except (KeyError, TypeError, ValueError):
            return None

    def status(self) -> ServerStatus:
        recorded, port = self.process.recorded(), self.recorded_port()
        if recorded is None or port is None:
            return ServerStatus(False, self.home, detail="not running (no pid file)")
        pid = int(recorded["pid"])
        if not self.process.is_alive(pid):
            return ServerStatus(False, self.home, port=port,
                                detail=f"not running (stale pid file, pid {pid} is gone)")
        version = _solr_version(port)
        if version is None:
            return ServerStatus(True, self.home, port=port, pid=pid,
                                detail="process is up but Solr does not answer yet")
        return ServerStatus(True, self.home, port=port, pid=pid, solr_version=version,
                            detail="running")

    # -- start / stop -----------------------------------------------------------------------

    def start(self, timeout: float = 180.0) -> ServerStatus:
        """Start Solr unless it already runs from this home; wait until it answers."""
        if self.cloud and (self.home / "solr.xml").exists() and not (self.home / ZOO_CFG).exists():
            # Its cores were created without ZooKeeper and would not join a SolrCloud cluster.
            raise EmbeddedSolrError(f"Solr home {self.home} holds a standalone Solr: use another "
                                    f"--home for SolrCloud")
        current = self.status()
        if current.running:
            if current.port != self.port:
                raise EmbeddedSolrError(f"Solr from {self.home} already runs on port {current.port}, "
                                        f"not {self.port}: stop it first")
            return self._wait_until_up(current.pid or 0, timeout)
        if port_in_use(self.port):
            raise EmbeddedSolrError(f"port {self.port} on 127.0.0.1 is in use by another process")
        if self.zk_port is not None:
            zk = f"port {self.zk_port} (for the embedded ZooKeeper: Solr port + {ZK_PORT_OFFSET})"
            if self.zk_port >= 65536:
                raise EmbeddedSolrError(f"{zk} is not a TCP port: choose a lower --port")
            if port_in_use(self.zk_port):
                raise EmbeddedSolrError(f"{zk} on 127.0.0.1 is in use by another process")
        self.distribution.ensure()
        java = _find_tool("java")
        self.home.mkdir(parents=True, exist_ok=True)
        logs = self.home / "logs"
        logs.mkdir(exist_ok=True)
        cloud = self.is_cloud
        if cloud and not (self.home / ZOO_CFG).exists():
            shutil.copy(_jvm_resource(ZOO_CFG), self.home / ZOO_CFG)
        if not (self.home / "solr.xml").exists():
            shutil.copy(_jvm_resource("solr-cloud.xml" if cloud else "solr.xml"), self.home / "solr.xml")
        cmd = [java, f"-Xms{self.heap}", f"-Xmx{self.heap}", "-XX:+UseG1GC",
               "-XX:+ExitOnOutOfMemoryError", "-Dfile.encoding=UTF-8",
               f"-Dsolr.log.dir={logs}", f"-Dlog4j2.configurationFile={_jvm_resource('log4j2.xml')}",
               f"-Dsolr.solr.home={self.home}", "-Dhost=127.0.0.1", "-Djetty.host=127.0.0.1"]
        if cloud:
            # zkRun starts ZooKeeper inside Solr (data in <home>/zoo_data) and puts Solr in cloud
            # mode; the explicit port keeps it in step with zk_port whatever zoo.cfg says.
            cmd += [f"-DzkRun={self.zk_host}", "-Dsolr.zk.embedded.host=127.0.0.1"]
        cmd += ["-cp", self.distribution.classpath, LAUNCHER_CLASS, str(self.home), str(self.port)]
        proc = self.process.spawn(cmd, log_file=logs / "console.log", record={"port": self.port})
        log.info("starting embedded Solr", pid=proc.pid, port=self.port, home=str(self.home),
                 zk_host=self.zk_host)
        return self._wait_until_up(proc.pid, timeout, proc)

    def _wait_until_up(self, pid: int, timeout: float,
                       proc: subprocess.Popen[bytes] | None = None) -> ServerStatus:
        def ready() -> str | None:
            if _solr_version(self.port) is None:
                return f"Solr did not answer on port {self.port}"
            # SolrCloud answers before the cores it hosts have registered in ZooKeeper and
            # elected shard leaders; until then updates to them fail.
            if self.is_cloud and not _replicas_active(self.port):
                return f"not every replica on the SolrCloud node on port {self.port} became active"
            return None

        self.process.wait_ready(pid, ready, timeout=timeout, proc=proc,
                                log_file=self.home / "logs" / "console.log")
        return ServerStatus(True, self.home, port=self.port, pid=pid,
                            solr_version=_solr_version(self.port), detail="running")

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop Solr (SIGTERM, then SIGKILL after `timeout`). False if it was not running."""
        return self.process.stop(timeout)


def _solr_version(port: int) -> str | None:
    """The Solr version answering on the port, or None when nothing (yet) answers as Solr."""
    try:
        resp = requests.get(f"http://127.0.0.1:{port}/solr/admin/info/system",
                            params={"wt": "json"}, timeout=2)
    except requests.RequestException:
        return None
    if resp.status_code == 401:
        return "unknown (authentication required)"
    if resp.status_code != 200:
        return None
    try:
        return str(resp.json()["lucene"]["solr-spec-version"])
    except (ValueError, KeyError):
        return None


def _replicas_active(port: int) -> bool:
    """This SolrCloud node is live and every replica it hosts is active."""
    node = f"127.0.0.1:{port}_solr"
    try:
        resp = requests.get(f"http://127.0.0.1:{port}/solr/admin/collections",
                            params={"action": "CLUSTERSTATUS", "wt": "json"}, timeout=5)
        cluster = resp.json()["cluster"]
    except (requests.RequestException, ValueError, KeyError, TypeError):
        return False
    if node not in cluster.get("live_nodes", []):
        return False
    return all(replica.get("state") == "active"
               for collection in cluster.get("collections", {}).values()
               for shard in collection.get("shards", {}).values()
               for replica in shard.get("replicas", {}).values()
               if replica.get("node_name") == node)


# -- which embedded server: flags, config, the last one started, defaults ---------------------

def _current_record() -> dict[str, object]:
    try:
        data = json.loads((state_dir() / CURRENT_FILE_NAME).read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def remember_current(server: EmbeddedSolr) -> None:
    """Record the server a user started with `navd solr start`, for later commands without flags.

    Only the CLI calls this: tests, benchmarks and the dev stack start servers of their own that
    must not become the user's default."""
    directory = state_dir()
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / (CURRENT_FILE_NAME + ".tmp")
    tmp.write_text(json.dumps({"home": str(server.home), "port": server.port}))
    tmp.replace(directory / CURRENT_FILE_NAME)


def embedded_server(config: SolrConfig, *, home: str | None = None,
                    port: int | None = None) -> EmbeddedSolr:
    """The embedded server meant by CLI flags, else config, else the last started, else defaults."""
    embedded = config.embedded
    record = _current_record()
    chosen_home = Path(home or embedded.home or str(record.get("home") or "") or default_solr_home())
    chosen_home = chosen_home.expanduser().resolve()
    chosen_port = port or embedded.port
    if not chosen_port:
        server = EmbeddedSolr(chosen_home, DEFAULT_SOLR_PORT, embedded.heap,
                              SolrDistribution(embedded.version, embedded.dist_path))
        recorded = server.recorded_port()
        if recorded is not None:
            chosen_port = recorded
        elif str(record.get("home")) == str(chosen_home) and isinstance(record.get("port"), int):
            chosen_port = int(record["port"])  # type: ignore[call-overload]
        else:
            chosen_port = DEFAULT_SOLR_PORT
    return EmbeddedSolr(chosen_home, chosen_port, embedded.heap,
                        SolrDistribution(embedded.version, embedded.dist_path))


def effective_solr_config(config: SolrConfig, server: EmbeddedSolr | None = None) -> SolrConfig:
    """For the embedded default, point the config at the resolved server's port."""
    if not config.is_embedded:
        return config
    server = server or embedded_server(config)
    embedded = dataclasses.replace(config.embedded, home=str(server.home), port=server.port)
    return dataclasses.replace(config, embedded=embedded)
