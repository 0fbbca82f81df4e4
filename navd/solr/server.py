"""Fetch, start, stop and inspect navd's embedded Solr 9 server.

The jars come from Maven Central through Maven (`mvn dependency:copy-dependencies`), once per
Solr version, into a cache directory; a tiny launcher class (jvm/NavdSolr.java, compiled with
javac on fetch) runs a real Solr node with JettySolrRunner, bound to 127.0.0.1, as a separate
process whose pid is kept in the solr home. With `cloud=True` the node runs SolrCloud with the
ZooKeeper Solr itself embeds (-DzkRun, as `bin/solr start -c` does), on 127.0.0.1 too.

A standalone node starts with authentication on: at its first start navd writes the home's
security.json (BasicAuthPlugin, blockUnknown, RuleBasedAuthorizationPlugin) for two users with
random passwords, kept in `<home>/navd-credentials.json` (0600; the home is 0700): `navd-admin`
(everything) and `navd-reader` (queries only). navd's client uses them for the embedded server
unless `[solr] auth` says otherwise.

With a TLS keystore (`[solr.embedded] keystore`, PKCS12) the node serves https only; the
keystore's password reaches the JVM through its environment, never its command line.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import os
import secrets
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

import requests

from navd.config import (DEFAULT_SOLR_PORT, NavdConfig, SolrConfig, check_private_file, default_solr_home,
                         extractor_state_dir, read_secret)
from navd.errors import EmbeddedSolrError, tls_reason
from navd.jvm import fetch_maven_jars, find_tool, run_tool
from navd.logs import get_logger
from navd.process import ManagedProcess, free_port, port_in_use
from navd.state import private_dir, write_atomically

__all__ = ["ADMIN", "READER", "EmbeddedSolr", "ServerStatus", "SolrDistribution", "SolrTls", "embedded_server",
           "effective_solr_config", "free_port", "remember_current", "security_document",
           "solr_password_hash"]

LAUNCHER_CLASS = "NavdSolr"
CURRENT_FILE_NAME = "embedded-solr.json"
# Solr's own convention (bin/solr -c): the embedded ZooKeeper listens on the Solr port + 1000.
ZK_PORT_OFFSET = 1000
# Solr reads the embedded ZooKeeper's config from the solr home; its presence marks a SolrCloud home.
ZOO_CFG = "zoo.cfg"
SECURITY_JSON = "security.json"
CREDENTIALS_FILE_NAME = "navd-credentials.json"
#: The embedded Solr's users: navd's own (writes, core admin, config) and one for queries only.
ADMIN, READER = "navd-admin", "navd-reader"
Credentials = tuple[str, str]
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


def solr_password_hash(password: str, salt: bytes | None = None) -> str:
    """Solr's BasicAuthPlugin credential: base64(sha256(sha256(salt + password))), space, base64(salt)."""
    salt = secrets.token_bytes(32) if salt is None else salt
    digest = hashlib.sha256(hashlib.sha256(salt + password.encode()).digest()).digest()
    return f"{base64.b64encode(digest).decode()} {base64.b64encode(salt).decode()}"


def security_document(admin_password: str, reader_password: str) -> dict[str, object]:
    """The embedded Solr's security.json: every request authenticated; the reader may query,
    everything else (updates, config, schema, core admin, security) is navd-admin's alone.

    Rule-based authorization applies the first permission that matches a request, so the
    specific ones come before `read` and the catch-all `all`."""
    admin_only = ["security-edit", "security-read", "config-edit", "schema-edit", "core-admin-edit",
                  "collection-admin-edit", "update"]
    return {
        "authentication": {"class": "solr.BasicAuthPlugin", "blockUnknown": True,
                           "forwardCredentials": False,
                           "credentials": {ADMIN: solr_password_hash(admin_password),
                                           READER: solr_password_hash(reader_password)}},
        "authorization": {"class": "solr.RuleBasedAuthorizationPlugin",
                          "user-role": {ADMIN: ["admin"], READER: ["reader"]},
                          "permissions": [*({"name": name, "role": "admin"} for name in admin_only),
                                          {"name": "read", "role": ["admin", "reader"]},
                                          {"name": "all", "role": "admin"}]},
    }


def read_credentials(home: Path) -> dict[str, Credentials]:
    """The users navd generated for the embedded Solr in `home` ({} when it has none, e.g. a
    home with a security.json of its own). Raises EmbeddedSolrError when the file is unreadable."""
    path = home / CREDENTIALS_FILE_NAME
    try:
        data = json.loads(path.read_text())
        return {role: (str(data[role]["username"]), str(data[role]["password"])) for role in ("admin", "reader")}
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise EmbeddedSolrError(f"embedded Solr credentials {path}: {exc.strerror}") from None
    except (ValueError, KeyError, TypeError):
        raise EmbeddedSolrError(f"embedded Solr credentials {path}: not navd's credentials JSON; "
                                f"to make new ones stop Solr, delete it and {SECURITY_JSON}, start again") from None


def _ensure_security(home: Path) -> None:
    """Write security.json and the credentials file at a home's first start. A home that has a
    security.json keeps it (an admin's own, or navd's from an earlier start)."""
    if (home / SECURITY_JSON).exists():
        return
    admin, reader = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    # Credentials first: a crash in between leaves no security.json, so the next start writes
    # a new matching pair; never a security.json whose passwords nobody knows.
    write_atomically(home / CREDENTIALS_FILE_NAME, json.dumps(
        {"admin": {"username": ADMIN, "password": admin},
         "reader": {"username": READER, "password": reader}}, indent=2).encode())
    write_atomically(home / SECURITY_JSON, json.dumps(security_document(admin, reader), indent=2).encode())
    log.info("embedded Solr secured with generated credentials", home=str(home),
             credentials_file=str(home / CREDENTIALS_FILE_NAME))


@dataclasses.dataclass(frozen=True)
class SolrTls:
    """TLS of an embedded node: a PKCS12 keystore (key and certificate chain, the certificate
    valid for 127.0.0.1) and the file holding its password, read only when the node starts (other
    users' CLIs resolve the same server and cannot read it). navd's own probes of the node verify
    it with `ca_bundle` ("" = the system's CAs), as its clients do."""

    keystore: Path
    password_file: Path | None = None
    ca_bundle: str = ""

    @property
    def verify(self) -> str | bool:
        return self.ca_bundle or True

    def password(self) -> str:
        if self.password_file is None:
            return ""
        return read_secret(str(self.password_file), "keystore_password_file", "[solr.embedded]")


@dataclasses.dataclass(frozen=True)
class ServerStatus:
    running: bool
    home: Path
    port: int | None = None
    pid: int | None = None
    solr_version: str | None = None
    detail: str = ""
    scheme: str = "http"

    @property
    def url(self) -> str | None:
        return f"{self.scheme}://127.0.0.1:{self.port}/solr" if self.port else None

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
                 cloud: bool = False, tls: SolrTls | None = None) -> None:
        self.home = home.expanduser().resolve()
        self.port = port
        self.heap = heap
        self.distribution = distribution
        self.cloud = cloud
        self.tls = tls
        self.process = ManagedProcess("solr", self.home, LAUNCHER_CLASS, EmbeddedSolrError)

    @property
    def pid_file(self) -> Path:
        return self.process.pid_file

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/solr"

    def _probe(self) -> _Probe:
        return _Probe(self.scheme, self.tls.verify if self.tls else True)

    def credentials(self, role: str = "admin") -> Credentials | None:
        """(username, password) of navd's `admin` or `reader` user of this home, if navd made them."""
        return read_credentials(self.home).get(role)

    def client_config(self, *, role: str = "admin", **settings: object) -> SolrConfig:
        """A config that reaches this server by URL as `role` (tests and benchmarks start servers
        of their own and name them by URL)."""
        credentials = self.credentials(role)
        if credentials:
            settings = {"auth": "basic", "username": credentials[0], "password": credentials[1], **settings}
        if self.tls and self.tls.ca_bundle:
            settings = {"ca_bundle": self.tls.ca_bundle, **settings}
        return SolrConfig(url=self.url, **settings)  # type: ignore[arg-type]

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
        try:
            credentials = self.credentials()
        except EmbeddedSolrError:  # another user's home: it answers 401, which still says "up"
            credentials = None
        probe = self._probe()
        version = _solr_version(port, credentials, probe)
        if version is None:
            return ServerStatus(True, self.home, port=port, pid=pid, scheme=self.scheme,
                                detail="process is up but Solr does not answer yet")
        return ServerStatus(True, self.home, port=port, pid=pid, solr_version=version,
                            detail="running", scheme=self.scheme)

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
        private_dir(self.home)
        logs = private_dir(self.home / "logs")
        cloud = self.is_cloud
        if not cloud:
            # SolrCloud reads security.json from ZooKeeper, not the home: a cloud home (tests,
            # `--cloud`) runs without authentication.
            _ensure_security(self.home)
        if cloud and not (self.home / ZOO_CFG).exists():
            write_atomically(self.home / ZOO_CFG, _jvm_resource(ZOO_CFG).read_bytes())
        if not (self.home / "solr.xml").exists():
            write_atomically(self.home / "solr.xml",
                             _jvm_resource("solr-cloud.xml" if cloud else "solr.xml").read_bytes())
        cmd = [java, f"-Xms{self.heap}", f"-Xmx{self.heap}", "-XX:+UseG1GC",
               "-XX:+ExitOnOutOfMemoryError", "-Dfile.encoding=UTF-8",
               f"-Dsolr.log.dir={logs}", f"-Dlog4j2.configurationFile={_jvm_resource('log4j2.xml')}",
               f"-Dsolr.solr.home={self.home}", "-Dhost=127.0.0.1", "-Djetty.host=127.0.0.1"]
        if cloud:
            # zkRun starts ZooKeeper inside Solr (data in <home>/zoo_data) and puts Solr in cloud
            # mode; the explicit port keeps it in step with zk_port whatever zoo.cfg says.
            cmd += [f"-DzkRun={self.zk_host}", "-Dsolr.zk.embedded.host=127.0.0.1"]
        env = None
        if self.tls:
            if not self.tls.keystore.is_file():
                raise EmbeddedSolrError(f"TLS keystore {self.tls.keystore}: no such file")
            check_private_file("[solr.embedded] keystore", self.tls.keystore)  # it holds the node's private key
            cmd.append(f"-Dnavd.solr.keystore={self.tls.keystore}")
            env = {**os.environ, "NAVD_SOLR_KEYSTORE_PASSWORD": self.tls.password()}
        cmd += ["-cp", self.distribution.classpath, LAUNCHER_CLASS, str(self.home), str(self.port)]
        proc = self.process.spawn(cmd, log_file=logs / "console.log", record={"port": self.port},
                                  env=env, umask=0o077)  # the index and Solr's logs are navd's user's alone
        log.info("starting embedded Solr", pid=proc.pid, port=self.port, home=str(self.home),
                 zk_host=self.zk_host)
        return self._wait_until_up(proc.pid, timeout, proc)

    def _wait_until_up(self, pid: int, timeout: float,
                       proc: subprocess.Popen[bytes] | None = None) -> ServerStatus:
        credentials = self.credentials()
        probe = self._probe()

        def ready() -> str | None:
            if _solr_version(self.port, credentials, probe) is None:
                return f"Solr did not answer on port {self.port}" + (f" ({probe.problem})" if probe.problem else "")
            # SolrCloud answers before the cores it hosts have registered in ZooKeeper and
            # elected shard leaders; until then updates to them fail.
            if self.is_cloud and not _replicas_active(self.port, credentials, probe):
                return f"not every replica on the SolrCloud node on port {self.port} became active"
            return None

        self.process.wait_ready(pid, ready, timeout=timeout, proc=proc,
                                log_file=self.home / "logs" / "console.log")
        return ServerStatus(True, self.home, port=self.port, pid=pid, scheme=self.scheme,
                            solr_version=_solr_version(self.port, credentials, probe), detail="running")

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop Solr (SIGTERM, then SIGKILL after `timeout`). False if it was not running."""
        return self.process.stop(timeout)


class _Probe:
    """How navd's own status and readiness requests reach a node (scheme, TLS verification),
    and the last TLS problem they met: a certificate the client does not trust never passes as
    "not up yet" without saying so."""

    def __init__(self, scheme: str = "http", verify: str | bool = True) -> None:
        self.scheme = scheme
        self.verify = verify
        self.problem = ""

    def get(self, port: int, path: str, params: dict[str, str], timeout: float,
            credentials: Credentials | None) -> requests.Response:
        try:
            return requests.get(f"{self.scheme}://127.0.0.1:{port}/solr/{path}", params=params,
                                timeout=timeout, auth=credentials, verify=self.verify)
        except requests.exceptions.SSLError as exc:
            self.problem = f"TLS: {tls_reason(exc)}"
            raise


def _solr_version(port: int, credentials: Credentials | None = None,
                  probe: _Probe | None = None) -> str | None:
    """The Solr version answering on the port, or None when nothing (yet) answers as Solr."""
    probe = probe or _Probe()
    try:
        resp = probe.get(port, "admin/info/system", {"wt": "json"}, 2, credentials)
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


def _replicas_active(port: int, credentials: Credentials | None = None, probe: _Probe | None = None) -> bool:
    """This SolrCloud node is live and every replica it hosts is active."""
    node = f"127.0.0.1:{port}_solr"
    probe = probe or _Probe()
    try:
        resp = probe.get(port, "admin/collections", {"action": "CLUSTERSTATUS", "wt": "json"}, 5, credentials)
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
#
# `navd solr start --home DIR --port N` is remembered so that later commands without flags reach
# that server. The record belongs to one configuration in one state directory: it is kept in the
# configuration's state directory ([daemon] state_dir, else $STATE_DIRECTORY, else the user's
# ~/.local/state/navd), under the configuration's file. A command run with another config file or
# another state directory never sees it, so never starts, uses or stops that server.

def _config_key(config: NavdConfig) -> str:
    """Which configuration a record belongs to: its file, resolved (two spellings of one file are
    one configuration), or `<defaults>` without one."""
    if config.source.startswith("<"):
        return config.source
    return str(Path(config.source).expanduser().resolve())


def _record_path(config: NavdConfig) -> Path:
    return extractor_state_dir(config).expanduser() / CURRENT_FILE_NAME


def _records(config: NavdConfig) -> dict[str, object]:
    """Every configuration's record in the state directory ({} when none can be read; a record
    in the format of navd versions that kept one per user names no configuration and is none)."""
    try:
        data = json.loads(_record_path(config).read_text())
    except (OSError, ValueError):
        return {}
    configs = data.get("configs") if isinstance(data, dict) else None
    return configs if isinstance(configs, dict) else {}


def _current_record(config: NavdConfig) -> dict[str, object]:
    record = _records(config).get(_config_key(config))
    return record if isinstance(record, dict) else {}


def remember_current(config: NavdConfig, server: EmbeddedSolr) -> None:
    """Record the server `config`'s user started with `navd solr start`, for later commands with
    the same configuration and no flags.

    Only the CLI calls this: tests, benchmarks and the dev stack start servers of their own that
    must not become the user's default."""
    path = _record_path(config)
    configs = {**_records(config), _config_key(config): {"home": str(server.home), "port": server.port}}
    try:
        private_dir(path.parent)
        write_atomically(path, json.dumps({"configs": configs}, indent=2).encode())
    except OSError as exc:
        raise EmbeddedSolrError(f"cannot record the started Solr in {path}: {exc.strerror or exc}") from None


def embedded_server(config: NavdConfig, *, home: str | None = None, port: int | None = None,
                    remembered: bool = True) -> EmbeddedSolr:
    """The embedded server meant by CLI flags, else `[solr.embedded]`, else (with `remembered`)
    the one last started with this configuration and state directory, else the defaults
    (~/.local/share/navd/solr on 8983). The quickstart passes `remembered=False`: it uses its
    own home unless the config names one."""
    embedded = config.solr.embedded
    record = _current_record(config) if remembered else {}
    chosen_home = Path(home or embedded.home or str(record.get("home") or "") or default_solr_home())
    chosen_home = chosen_home.expanduser().resolve()
    tls = None
    if embedded.keystore:
        tls = SolrTls(Path(embedded.keystore).expanduser(),
                      Path(embedded.keystore_password_file).expanduser() if embedded.keystore_password_file else None,
                      config.solr.ca_bundle)
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
                        SolrDistribution(embedded.version, embedded.dist_path), tls=tls)


def effective_solr_config(config: NavdConfig, server: EmbeddedSolr | None = None, *,
                          read_only: bool = False) -> SolrConfig:
    """`config`'s Solr client settings. For the embedded default, pointed at the resolved server's
    port (`server`, else the one `config` means: embedded_server) and, unless `[solr] auth` is
    set, logged in with the credentials navd generated in its home: navd-admin, or navd-reader
    for `read_only` callers (queries)."""
    solr = config.solr
    if not solr.is_embedded:
        return solr
    server = server or embedded_server(config)
    embedded = dataclasses.replace(solr.embedded, home=str(server.home), port=server.port)
    solr = dataclasses.replace(solr, embedded=embedded)
    credentials = server.credentials("reader" if read_only else "admin") if solr.auth == "none" else None
    if credentials:
        solr = dataclasses.replace(solr, auth="basic", username=credentials[0], password=credentials[1])
    return solr
