"""A real HDFS for development and tests: a NameNode and a DataNode from Hadoop's Maven jars.

The jars (Hadoop 3.5.x: the first line that runs on Java 17 without --add-opens flags) come
from Maven Central once into navd's cache. `DevHdfs` keeps everything in its home: generated
configuration (conf/), metadata and blocks (data/), logs and pid files. It formats the NameNode
on the first start, binds every port to 127.0.0.1, turns WebHDFS on, and waits until the
DataNode has registered and the NameNode has left safe mode, so a client can write at once.
The same jars run the `hdfs` command-line tools (`run_tool`): dfsadmin, oiv, FsShell.

With `kerberos` (an `HdfsKerberos`: principals and keytab from a test KDC) the NameNode runs
secure: Kerberos RPC, WebHDFS behind SPNEGO (HTTP/localhost, so clients reach it as
http://localhost:port). With `datanode=False` only the NameNode runs: metadata operations
(MKDIRS, LISTSTATUS, GETFILESTATUS) need nothing else, and a secure DataNode would need
privileged ports or SASL data transfer with TLS.
"""

from __future__ import annotations

import dataclasses
import getpass
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from xml.sax.saxutils import escape

import requests

from navd.config import default_solr_dist_dir
from navd.jvm import fetch_maven_jars, find_tool, run_tool
from navd.logs import get_logger
from navd.process import ManagedProcess, free_port
from navd_devstack.errors import DevServiceError
from navd_devstack.kdc import krb5_tool

log = get_logger("navd_devstack.hadoop")
DEFAULT_HADOOP_VERSION = "3.5.0"
NAMENODE_CLASS = "org.apache.hadoop.hdfs.server.namenode.NameNode"
DATANODE_CLASS = "org.apache.hadoop.hdfs.server.datanode.DataNode"
DFSADMIN_CLASS = "org.apache.hadoop.hdfs.tools.DFSAdmin"
FSSHELL_CLASS = "org.apache.hadoop.fs.FsShell"
OIV_CLASS = "org.apache.hadoop.hdfs.tools.offlineImageViewer.OfflineImageViewerPB"


def jvm_resource(name: str) -> Path:
    return Path(str(resources.files("navd_devstack") / "jvm" / name))


@dataclasses.dataclass(frozen=True)
class HadoopDistribution:
    """The jars of one Hadoop version under `cache_dir` (navd's cache, beside Solr's)."""

    version: str = DEFAULT_HADOOP_VERSION
    cache_dir: Path = dataclasses.field(default_factory=default_solr_dist_dir)

    @property
    def root(self) -> Path:
        # The pom's hash in the name: a changed list of artifacts is fetched anew, not mixed
        # with a cache made from the old one.
        pom = hashlib.sha256(jvm_resource("hadoop-pom.xml").read_bytes()).hexdigest()[:8]
        return self.cache_dir / f"hadoop-{self.version}-{pom}"

    @property
    def lib(self) -> Path:
        return self.root / "lib"

    def ensure(self) -> Path:
        fetch_maven_jars(jvm_resource("hadoop-pom.xml"), self.root, {"hadoop.version": self.version},
                         what=f"Hadoop {self.version}", error=DevServiceError)
        return self.root

    def classpath(self, conf_dir: Path) -> str:
        # The configuration directory first: Hadoop reads core-site.xml, hdfs-site.xml and
        # log4j.properties as class-path resources.
        return f"{conf_dir}{os.pathsep}{self.lib / '*'}"


@dataclasses.dataclass(frozen=True)
class HdfsKerberos:
    """What a secure NameNode needs: the KDC's environment (`DevKdc.env`: KRB5_CONFIG, whose file
    the JVM is handed too, as Java does not read the variable) and one keytab holding its RPC
    principal and its SPNEGO (HTTP/) principal, full names with the realm."""

    krb5_env: Mapping[str, str]
    keytab: Path
    namenode_principal: str
    http_principal: str

    @property
    def krb5_conf(self) -> Path:
        return Path(self.krb5_env["KRB5_CONFIG"])

    @property
    def superuser(self) -> str:
        """The NameNode's superuser: the short name of the principal it logs in as."""
        return self.namenode_principal.split("/", 1)[0].split("@", 1)[0]


@dataclasses.dataclass(frozen=True)
class HdfsPorts:
    rpc: int
    http: int
    datanode: int
    datanode_http: int
    datanode_ipc: int

    @classmethod
    def free(cls) -> HdfsPorts:
        return cls(free_port(), free_port(), free_port(), free_port(), free_port())

    @classmethod
    def dev_defaults(cls) -> HdfsPorts:
        # Hadoop 3's own default ports: what people and their tools expect of a NameNode.
        return cls(rpc=8020, http=9870, datanode=9866, datanode_http=9864, datanode_ipc=9867)


class DevHdfs:
    """One NameNode + one DataNode (or the NameNode alone) whose configuration, data, logs and pid
    files live in `home`; secure when `kerberos` is given."""

    def __init__(self, home: Path, ports: HdfsPorts, distribution: HadoopDistribution | None = None,
                 namenode_heap: str = "512m", datanode_heap: str = "256m", *,
                 kerberos: HdfsKerberos | None = None, datanode: bool = True) -> None:
        self.home = home.expanduser().resolve()
        self.ports = ports
        self.distribution = distribution or HadoopDistribution()
        self.namenode_heap = namenode_heap
        self.datanode_heap = datanode_heap
        self.kerberos = kerberos
        self.with_datanode = datanode
        self.namenode = ManagedProcess("hdfs-namenode", self.home, NAMENODE_CLASS, DevServiceError)
        self.datanode = ManagedProcess("hdfs-datanode", self.home, DATANODE_CLASS, DevServiceError)

    @property
    def conf_dir(self) -> Path:
        return self.home / "conf"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def webhdfs_url(self) -> str:
        """The NameNode's HTTP address, as WebHDFS clients (the `hdfs` library) take it. Secure: by
        the name its SPNEGO principal is for (a client asks for HTTP@<host of the URL>)."""
        host = "localhost" if self.kerberos else "127.0.0.1"
        return f"http://{host}:{self.ports.http}"

    @property
    def default_fs(self) -> str:
        return f"hdfs://127.0.0.1:{self.ports.rpc}"

    @property
    def superuser(self) -> str:
        """The NameNode's superuser: whoever runs it (secure: the principal it logs in as)."""
        return self.kerberos.superuser if self.kerberos else getpass.getuser()

    def running(self) -> bool:
        return self.namenode.running_pid() is not None and (
            not self.with_datanode or self.datanode.running_pid() is not None)

    # -- start / stop -----------------------------------------------------------------------

    def start(self, timeout: float = 120.0) -> None:
        """Start both daemons (or the NameNode alone) unless they run from this home already; wait
        until writable (NameNode alone: until it has left safe mode)."""
        self.distribution.ensure()
        self._write_conf()
        if not (self.home / "data" / "name" / "current" / "VERSION").is_file():
            self._format()
        # The NameNode alone: ready once out of safe mode (no DataNode will ever register).
        namenode_ready = self._namenode_ready if self.with_datanode else \
            (lambda: self._namenode_ready() or self._out_of_safe_mode())
        self.namenode.ensure_running(lambda: self._spawn(self.namenode, NAMENODE_CLASS, self.namenode_heap),
                                     namenode_ready, ports=(self.ports.rpc, self.ports.http),
                                     timeout=timeout, log_file=self._log_file(self.namenode))
        if not self.with_datanode:
            log.info("HDFS NameNode is up (no DataNode)", webhdfs=self.webhdfs_url, default_fs=self.default_fs,
                     secure=self.kerberos is not None, home=str(self.home))
            return
        self.datanode.ensure_running(lambda: self._spawn(self.datanode, DATANODE_CLASS, self.datanode_heap),
                                     self._writable, timeout=timeout, log_file=self._log_file(self.datanode),
                                     ports=(self.ports.datanode, self.ports.datanode_http, self.ports.datanode_ipc))
        log.info("HDFS is up", webhdfs=self.webhdfs_url, default_fs=self.default_fs, home=str(self.home))

    def stop(self) -> bool:
        """Stop the DataNode, then the NameNode. False if neither was running."""
        stopped_datanode = self.datanode.stop(timeout=30)
        stopped_namenode = self.namenode.stop(timeout=30)
        return stopped_datanode or stopped_namenode

    def _log_file(self, process: ManagedProcess) -> Path:
        return self.logs_dir / f"{process.name}.log"

    def _java_cmd(self, main_class: str, heap: str, *args: str) -> list[str]:
        options = (f"-Djava.security.krb5.conf={self.kerberos.krb5_conf}",) if self.kerberos else ()
        return hadoop_java_cmd(self.distribution, self.conf_dir, self.logs_dir, self.home, main_class, heap, *args,
                               jvm_options=options)

    def _spawn(self, process: ManagedProcess, main_class: str, heap: str) -> subprocess.Popen[bytes]:
        cmd = self._java_cmd(main_class, heap)
        proc = process.spawn(cmd, log_file=self._log_file(process), record=dataclasses.asdict(self.ports),
                             env=self._env())
        log.info("starting", service=process.name, pid=proc.pid, home=str(self.home))
        return proc

    def _env(self) -> dict[str, str]:
        return hadoop_env()

    def _format(self) -> None:
        log.info("formatting the NameNode", home=str(self.home))
        run_tool(self._java_cmd(NAMENODE_CLASS, "256m", "-format", "-nonInteractive", "-force"),
                 what="formatting the NameNode", error=DevServiceError, env=self._env())

    def run_tool(self, main_class: str, *args: str) -> str:
        """Run one of Hadoop's command-line tools against this HDFS; its stdout."""
        return run_tool(self._java_cmd(main_class, "256m", *args), what=f"{main_class.rsplit('.', 1)[-1]} "
                        f"{' '.join(args)}", error=DevServiceError, env=self._env())

    # -- readiness --------------------------------------------------------------------------

    def _jmx(self, bean: str) -> dict[str, object] | None:
        if self.kerberos:
            return self._jmx_negotiated(bean)
        try:
            resp = requests.get(f"{self.webhdfs_url}/jmx", params={"qry": bean}, timeout=3)
            beans = resp.json().get("beans") or []
        except (requests.RequestException, ValueError, AttributeError):
            return None
        return beans[0] if beans and isinstance(beans[0], dict) else None

    def _jmx_negotiated(self, bean: str) -> dict[str, object] | None:
        """A secure NameNode's JMX is behind SPNEGO too: asked by curl --negotiate as the NameNode's
        own principal, with a ticket from its keytab in a ccache of the home. (This process's
        GSS-API reads krb5.conf from its own environment, which need not name the test KDC.)"""
        assert self.kerberos is not None
        curl = shutil.which("curl")
        if not curl:
            raise DevServiceError("curl not found: a secure NameNode's readiness is asked with curl --negotiate")
        ccache = self.home / "readiness.ccache"
        env = {**hadoop_env(), **self.kerberos.krb5_env, "KRB5CCNAME": f"FILE:{ccache}"}
        try:
            # a fresh ticket each time: the test KDCs' tickets may live seconds
            subprocess.run([krb5_tool("kinit"), "-k", "-t", str(self.kerberos.keytab), self.kerberos.namenode_principal],
                           env=env, check=True, capture_output=True, timeout=30)
            answer = subprocess.run([curl, "--silent", "--fail", "--negotiate", "-u", ":",
                                     "--max-time", "3", f"{self.webhdfs_url}/jmx?qry={bean}"],
                                    env=env, check=True, capture_output=True, timeout=30)
            beans = json.loads(answer.stdout).get("beans") or []
        except (subprocess.SubprocessError, ValueError, AttributeError):
            return None
        return beans[0] if beans and isinstance(beans[0], dict) else None

    def _namenode_ready(self) -> str | None:
        if self.kerberos:  # every servlet is behind SPNEGO: JMX answers once the NameNode is up
            return None if self._jmx("Hadoop:service=NameNode,name=NameNodeInfo") else \
                f"the NameNode did not answer on {self.webhdfs_url}/jmx (SPNEGO as {self.kerberos.namenode_principal})"
        try:
            resp = requests.get(f"{self.webhdfs_url}/webhdfs/v1/", timeout=3,
                                params={"op": "GETFILESTATUS", "user.name": self.superuser})
        except requests.RequestException:
            return f"WebHDFS did not answer on {self.webhdfs_url}"
        return None if resp.status_code == 200 else f"WebHDFS answered HTTP {resp.status_code}"

    def _writable(self) -> str | None:
        state = self._jmx("Hadoop:service=NameNode,name=FSNamesystemState")
        if not state or int(state.get("NumLiveDataNodes", 0) or 0) < 1:  # type: ignore[call-overload]
            return "the DataNode did not register with the NameNode"
        # Registration comes before the DataNode's first heartbeat with its storage report; until
        # then block placement finds no node ("Failed to find datanode") and a write fails.
        if int(state.get("CapacityRemaining", 0) or 0) <= 0:  # type: ignore[call-overload]
            return "the DataNode did not report its storage to the NameNode"
        return self._out_of_safe_mode()

    def _out_of_safe_mode(self) -> str | None:
        info = self._jmx("Hadoop:service=NameNode,name=NameNodeInfo")
        if not info or info.get("Safemode"):
            return "the NameNode did not leave safe mode"
        return None

    # -- configuration ----------------------------------------------------------------------

    def _write_conf(self) -> None:
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        data = self.home / "data"
        core = {
            "fs.defaultFS": self.default_fs,
            "hadoop.tmp.dir": str(data / "tmp"),
            "hadoop.security.authentication": "simple",
        }
        hdfs = {
            "dfs.replication": "1",
            "dfs.namenode.name.dir": str(data / "name"),
            "dfs.datanode.data.dir": str(data / "data"),
            "dfs.namenode.rpc-address": f"127.0.0.1:{self.ports.rpc}",
            "dfs.namenode.http-address": f"127.0.0.1:{self.ports.http}",
            "dfs.namenode.https-address": "127.0.0.1:0",
            "dfs.namenode.secondary.http-address": "127.0.0.1:0",
            "dfs.datanode.address": f"127.0.0.1:{self.ports.datanode}",
            "dfs.datanode.http.address": f"127.0.0.1:{self.ports.datanode_http}",
            "dfs.datanode.ipc.address": f"127.0.0.1:{self.ports.datanode_ipc}",
            "dfs.datanode.hostname": "127.0.0.1",
            "dfs.webhdfs.enabled": "true",
            "dfs.permissions.enabled": "true",
            "dfs.namenode.acls.enabled": "true",
            # One DataNode: leave safe mode at once and never wait for a second replica.
            "dfs.namenode.safemode.extension": "0",
            "dfs.namenode.safemode.min.datanodes": "1" if self.with_datanode else "0",
            "dfs.namenode.replication.min": "1",
            # Small blocks keep test files' block counts realistic without big files.
            "dfs.namenode.fs-limits.min-block-size": "1024",
            # Directory listings come back in pages of this size (LISTSTATUS_BATCH): Hadoop's default.
            "dfs.ls.limit": "1000",
            "dfs.datanode.du.reserved": "0",
            "dfs.namenode.resource.du.reserved": "0",
            "dfs.namenode.resource.checked.volumes.minimum": "0",
        }
        if self.kerberos:
            core |= {
                "hadoop.security.authentication": "kerberos",
                # WebHDFS's AuthFilter reads hadoop.http.authentication.*, whose type defaults to
                # "simple" with anonymous access allowed: without these it lets everyone in and
                # then refuses them all (403 "Security enabled but user not authenticated by filter").
                "hadoop.http.authentication.type": "kerberos",
                "hadoop.http.authentication.simple.anonymous.allowed": "false",
                "hadoop.http.authentication.kerberos.principal": self.kerberos.http_principal,
                "hadoop.http.authentication.kerberos.keytab": str(self.kerberos.keytab),
            }
            hdfs |= {
                "dfs.namenode.kerberos.principal": self.kerberos.namenode_principal,
                "dfs.namenode.keytab.file": str(self.kerberos.keytab),
                "dfs.web.authentication.kerberos.principal": self.kerberos.http_principal,
                "dfs.web.authentication.kerberos.keytab": str(self.kerberos.keytab),
                # A secure NameNode refuses to start without block tokens (BlockManager).
                "dfs.block.access.token.enable": "true",
            }
        write_site(self.conf_dir / "core-site.xml", core)
        write_site(self.conf_dir / "hdfs-site.xml", hdfs)
        (self.conf_dir / "log4j.properties").write_bytes(jvm_resource("log4j.properties").read_bytes())


def hadoop_java_cmd(distribution: HadoopDistribution, conf_dir: Path, logs_dir: Path, home: Path, main_class: str,
                    heap: str, *args: str, jvm_options: tuple[str, ...] = ()) -> list[str]:
    """The java command line of one Hadoop daemon or tool run from navd's jars."""
    return [find_tool("java", DevServiceError), f"-Xmx{heap}", "-XX:+ExitOnOutOfMemoryError", *jvm_options,
            "-Dfile.encoding=UTF-8", f"-Dhadoop.log.dir={logs_dir}", f"-Dyarn.log.dir={logs_dir}",
            f"-Dhadoop.home.dir={home}", "-Djava.net.preferIPv4Stack=true", "-cp", distribution.classpath(conf_dir),
            main_class, *args]


def hadoop_env() -> dict[str, str]:
    """This process's environment without the settings of a real Hadoop installation on this
    machine, which must not leak into navd's daemons."""
    env = dict(os.environ)
    for key in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "HADOOP_HOME", "HADOOP_USER_NAME", "HADOOP_OPTS"):
        env.pop(key, None)
    return env


def write_site(path: Path, properties: dict[str, str]) -> None:
    body = "".join(f"  <property><name>{escape(key)}</name><value>{escape(value)}</value></property>\n"
                   for key, value in properties.items())
    tmp = path.with_suffix(".tmp")
    tmp.write_text(f"<?xml version=\"1.0\"?>\n<!-- Written by navd-devstack (navd_devstack/hadoop.py). -->\n"
                   f"<configuration>\n{body}</configuration>\n")
    tmp.replace(path)
