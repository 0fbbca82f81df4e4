"""The one config loader: a TOML file validated into frozen dataclasses.

Resolution: `--config FILE`, else env `NAVD_CONFIG`, else `/etc/navd/navd.toml`. A missing
default file means "all defaults" (the embedded Solr); a file that was asked for explicitly
must exist. Env `NAVD_SOLR_URL` overrides `[solr] url`. Unknown keys, wrong types and bad
values fail fast with one line naming `[section] key` and the file, credentials redacted.

Every number is checked here, at load, against its field's `Range` (finite, within bounds) and
every URL by `check_url`; sections' `validate()` use the same two helpers. Secrets: a password
inline in the file or basic auth over plain http:// is warned about (`NavdConfig.warnings`,
logged once logging is set up) or refused by `[security] insecure_credentials`; a file holding
a secret that other users can read is always refused.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import os
import re
import stat
import tomllib
import types
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from navd.errors import ConfigError

DEFAULT_CONFIG_PATH = Path("/etc/navd/navd.toml")
DEFAULT_SOLR_VERSION = "9.10.1"
DEFAULT_SOLR_PORT = 8983
SectionT = TypeVar("SectionT")
#: the longest interval, timeout or cap any key takes: a year (longer is a typo, and past
#: timedelta's and the scheduler's range it would crash them)
MAX_INTERVAL_MINUTES = 366 * 24 * 60
MAX_SECONDS = MAX_INTERVAL_MINUTES * 60
#: file mode bits that let users other than the owner read or write a file
OTHERS_BITS = 0o077


@dataclasses.dataclass(frozen=True)
class Range:
    """The values a config number may take: finite, from `low` (excluded when `low_open`) to
    `high`. Declared on a field with `number(...)`; a number field without one must be finite
    and >= 0."""

    low: float
    high: float
    low_open: bool = False

    def check(self, label: str, value: float) -> None:
        """Raise ConfigError("<label>: must be ...") unless `value` is finite and in range."""
        finite = isinstance(value, int) or math.isfinite(value)
        if finite and (value > self.low if self.low_open else value >= self.low) and value <= self.high:
            return
        kind = "an integer" if isinstance(value, int) else "a number"
        low = f"> {_show(self.low)}" if self.low_open else f">= {_show(self.low)}"
        high = "" if self.high == math.inf else f" and <= {_show(self.high)}"
        raise ConfigError(f"{label}: must be {kind} {low}{high}, got {_show(value)}")


ANY_NUMBER = Range(0, math.inf)


def setting(default: Any = dataclasses.MISSING, *, help: str, default_factory: Any = dataclasses.MISSING,
            secret: bool = False) -> Any:
    """A key of a config section: its default and the help text the configuration reference
    (docs/reference/config.md, written by `navd.docs`) shows for it. `secret`: never shown,
    never echoed in an error (repr=False marks a secret for the loader)."""
    return dataclasses.field(default=default, default_factory=default_factory, repr=not secret,
                             metadata={"help": help})


def number(default: float, low: float, high: float, *, low_open: bool = False, help: str = "") -> Any:
    """A number key of a config section with the range the loader checks it against (and its
    help text, as `setting`)."""
    return dataclasses.field(default=default, metadata={"range": Range(low, high, low_open), "help": help})


def field_range(cls: type, name: str) -> Range:
    """The declared range of a number field (for a command-line flag overriding that key)."""
    field = next(f for f in dataclasses.fields(cls) if f.name == name)
    return field.metadata.get("range", ANY_NUMBER)


def _show(value: float) -> str:
    if isinstance(value, int) or (math.isfinite(value) and value == int(value) and abs(value) < 1e15):
        return str(int(value))
    return f"{value:g}"


def check_url(label: str, url: str, *, schemes: Iterable[str] | None = ("http", "https"),
              example: str = "http://solr1:8983/solr") -> None:
    """Raise ConfigError naming `label` unless `url` has one of `schemes` and a host (schemes
    None: any scheme, host optional), a port (if any) from 1 to 65535 and no credentials (those
    belong in a password file)."""
    allowed = tuple(schemes) if schemes is not None else None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:  # "http://[::1/x": an unclosed IPv6 bracket
        parts, host = None, None
    # hdfs:///path (any scheme allowed) names the default file system: no host needed there
    if parts is None or not parts.scheme or (allowed is not None and (parts.scheme not in allowed or not host)):
        kind = "an http(s)" if allowed == ("http", "https") else f"a {'/'.join(allowed or ('scheme://host',))}"
        raise ConfigError(f"{label}: {url!r} is not {kind} URL such as {example}")
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if at:
        raise ConfigError(f"{label}: {url!r} must not carry credentials; use auth, username and password_file")
    port = hostport.rpartition("]")[2] if hostport.startswith("[") else hostport
    port = port.rpartition(":")[2] if ":" in port else ""
    if port and not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise ConfigError(f"{label}: {url!r}: port {port!r} is not a number from 1 to 65535")


def _xdg_dir(env: str, fallback: str) -> Path:
    base = os.environ.get(env)
    return Path(base) if base else Path.home() / fallback


def default_solr_home() -> Path:
    return _xdg_dir("XDG_DATA_HOME", ".local/share") / "navd" / "solr"


def default_quickstart_dir() -> Path:
    """`navd quickstart`'s pipeline (warehouse, event logs, extractor state), beside the embedded Solr's data."""
    return _xdg_dir("XDG_DATA_HOME", ".local/share") / "navd" / "quickstart"


def default_solr_dist_dir() -> Path:
    return _xdg_dir("XDG_CACHE_HOME", ".cache") / "navd"


def state_dir() -> Path:
    """The invoking user's own state: the state directory when neither `[daemon] state_dir` nor
    systemd's $STATE_DIRECTORY names one (navd.config.extractor_state_dir)."""
    return _xdg_dir("XDG_STATE_HOME", ".local/state") / "navd"


def extractor_state_dir(config: NavdConfig) -> Path:
    """Where the extractors keep positions and the runs their locks: shared by `navd run` and
    `navd extract`, so both must resolve it alike."""
    if config.daemon.state_dir:
        return Path(config.daemon.state_dir).expanduser()
    systemd = os.environ.get("STATE_DIRECTORY", "").split(":")[0]
    return Path(systemd) if systemd else state_dir()


@dataclasses.dataclass(frozen=True)
class ClusterConfig:
    """`[cluster]`: the cluster navd describes."""

    name: str = setting("primary", help="the cluster's name in Hive qualified names, `db.table.column@<name>` "
                                        "(Atlas's convention); a name without a cluster (`sales.orders`) is looked "
                                        "up in this cluster first")


@dataclasses.dataclass(frozen=True)
class EmbeddedSolrConfig:
    """`[solr.embedded]`: the Solr 9 server navd runs itself when `[solr] url` is not set (a real
    Solr fetched from Maven Central, bound to 127.0.0.1; needs a JDK 17+ and Maven).

    `home` and `port` left unset mean: the server last started with `navd solr start` with this
    config file and state directory (recorded there, navd.solr.server), else
    ~/.local/share/navd/solr on port 8983. `navd quickstart` skips the record: its own home.
    """

    home: str = setting("", help="the Solr home (data, logs, pid file); unset: the one `navd solr start` last "
                                 "started, else `$XDG_DATA_HOME/navd/solr` (`~/.local/share/navd/solr`)")
    port: int = number(0, 0, 65535, help="the port on 127.0.0.1; 0: the one `navd solr start` last used, else 8983")
    heap: str = setting("512m", help="the JVM heap, a JVM size such as `512m` or `2g`")
    version: str = setting(DEFAULT_SOLR_VERSION, help="the Solr version fetched from Maven Central")
    dist_dir: str = setting("", help="where the Solr jars are cached; unset: `$XDG_CACHE_HOME/navd` "
                                     "(`~/.cache/navd`)")
    keystore: str = setting("", help="TLS: a PKCS12 keystore with the server's key and certificate chain (the "
                                     "certificate must be valid for 127.0.0.1, where the server listens); set, the "
                                     "server speaks https only and navd's clients verify it with `[solr] ca_bundle`")
    keystore_password_file: str = setting("", help="the keystore's password, in a file only navd's user can read "
                                                   "(0600; read when Solr starts, handed to the JVM through its "
                                                   "environment, not its command line)")

    @property
    def scheme(self) -> str:
        return "https" if self.keystore else "http"

    @property
    def home_path(self) -> Path:
        return Path(self.home).expanduser() if self.home else default_solr_home()

    @property
    def dist_path(self) -> Path:
        return Path(self.dist_dir).expanduser() if self.dist_dir else default_solr_dist_dir()


@dataclasses.dataclass(frozen=True)
class SolrConfig:
    """`[solr]`: the Solr (standalone node or SolrCloud) navd keeps its cores in, and how every
    component writes to it (batches, threads, retries)."""

    url: str = setting("", help="the Solr base URL, e.g. `https://solr1.example.com:8985/solr` (any node of a "
                                "SolrCloud); unset: navd's embedded Solr (`[solr.embedded]`). Env `NAVD_SOLR_URL` "
                                "overrides it")
    mode: Literal["auto", "standalone", "cloud"] = setting(
        "auto", help="`auto` detects the mode from `/admin/info/system`; `standalone` or `cloud` fail when the "
                     "server is the other kind")
    elements_core: str = setting("nav_elements", help="the core (or collection) of the elements")
    relations_core: str = setting("nav_relations", help="the core (or collection) of the relations")
    runs_core: str = setting("nav_runs", help="the core (or collection) of run records, taints and watermarks")
    auth: Literal["none", "basic", "kerberos"] = setting(
        "none", help="`basic` (Solr's BasicAuthPlugin: `username`, `password_file`) or `kerberos` (SPNEGO; "
                     "`pip install 'navd[kerberos]'`, and `keytab` or a ticket from kinit)")
    username: str = setting("", help='the user of `auth = "basic"`')
    password: str = setting("", secret=True, help="the password inline (warned about or refused by `[security] "
                                                  "insecure_credentials`): use `password_file`")
    password_file: str = setting("", help="a file holding the password (mode 0600, owned by navd's user: a file "
                                          "others can read is refused)")
    verify_tls: bool = setting(True, help="verify Solr's TLS certificate; never turn it off in production (a "
                                          "private CA goes in `ca_bundle`)")
    ca_bundle: str = setting("", help="a PEM file of the CA that issued Solr's certificate")
    keytab: str = setting("", help='`auth = "kerberos"`: a client keytab (0600) navd gets its tickets from, and new '
                                   "ones when they near their end (no kinit cron job); unset: the ticket cache of "
                                   "navd's user (kinit, `KRB5CCNAME`)")
    principal: str = setting("", help="the keytab's principal to use; unset: its first")
    timeout_seconds: float = number(30.0, 0, 3600, low_open=True, help="the timeout of one request")
    retries: int = number(8, 0, 100, help="pauses between retries of connection errors and 502/503/504, doubling "
                                          "from `backoff_seconds` up to `max_backoff_seconds`; a run gives up once "
                                          "Solr has been unreachable for their sum (91.5 s with the defaults)")
    backoff_seconds: float = number(0.5, 0, 3600, help="the first pause between retries")
    max_backoff_seconds: float = number(30.0, 0, 3600, help="the longest pause between retries")
    batch_size: int = number(1000, 1, 1_000_000, help="documents per update request")
    writer_threads: int = number(2, 1, 64, help="concurrent update requests per core")
    shards: int = number(1, 1, 1024, help="SolrCloud: the shards of each collection `navd solr init` creates")
    replication_factor: int = number(1, 1, 100, help="SolrCloud: the replicas of each shard `navd solr init` "
                                                     "creates")
    embedded: EmbeddedSolrConfig = EmbeddedSolrConfig()

    @property
    def is_embedded(self) -> bool:
        return not self.url

    @property
    def base_url(self) -> str:
        """The Solr base URL, ending in `/solr` and without a trailing slash."""
        if self.url:
            return self.url.rstrip("/")
        return f"{self.embedded.scheme}://127.0.0.1:{self.embedded.port or DEFAULT_SOLR_PORT}/solr"

    def core_name(self, core: str) -> str:
        """Map the logical core names `elements`, `relations`, `runs` to configured names."""
        names = {"elements": self.elements_core, "relations": self.relations_core,
                 "runs": self.runs_core}
        if core in names:
            return names[core]
        if core in names.values():
            return core
        raise ConfigError(f"unknown core {core!r}: expected one of {', '.join(names)}")


@dataclasses.dataclass(frozen=True)
class LoggingConfig:
    """`[logging]`: navd's log lines. Each component logs under its own name (`navd.extractor.hdfs`,
    `navd.extractor.hms`, `navd.linker`, `navd.purge`, `navd.index`, `navd.solr`)."""

    format: Literal["auto", "json", "console"] = setting(
        "auto", help="`json` (one JSON object per line, for journald and log shippers), `console`, or `auto` "
                     "(console on a terminal, JSON otherwise); `--log-format` overrides it")
    level: Literal["debug", "info", "warning", "error"] = setting("info", help="the lowest level logged; "
                                                                              "`--log-level` overrides it")
    file: str = setting("", help="`navd run`: log to this file instead of stderr (JSON lines), reopened when "
                                 "logrotate moves it (deploy/navd.logrotate)")


@dataclasses.dataclass(frozen=True)
class PurgeConfig:
    """`[purge]`: Navigator's purge rules (deleted entities, and executions run, more than 60 days
    ago); `navd purge`, and `navd run` every `interval_days`."""

    older_than_days: float = number(60.0, 0, 100 * 365, low_open=True,
                                    help="deleted entities and executions older than this go")
    runtime_cap_minutes: float = number(720.0, 0, MAX_INTERVAL_MINUTES, low_open=True,
                                        help="a run stops after this long; the next one continues where it stopped")
    interval_days: float = number(7.0, 0, 366, low_open=True,
                                  help="how often `navd run` purges (this long after the last purge began, across "
                                       "restarts)")


@dataclasses.dataclass(frozen=True)
class DaemonConfig:
    """`[daemon]`: where navd keeps its state, and how `navd run` stops."""

    state_dir: str = setting("", help="extractor positions, watermarks and run locks; unset: `$STATE_DIRECTORY` "
                                      "(systemd's StateDirectory=, /var/lib/navd in deploy/navd.service), else "
                                      "`~/.local/state/navd`. `navd extract` must use the same directory as `navd "
                                      "run`: run it as the service user with the same config")
    stop_timeout_seconds: float = number(20.0, 0, 3600, low_open=True,
                                         help="on SIGTERM, runs still going after this long are abandoned at their "
                                              "last checkpoint (the next start continues from there); keep it below "
                                              "the unit's TimeoutStopSec (30 s)")


DEFAULT_MAX_SHARE_PERCENT = 75.0


@dataclasses.dataclass(frozen=True)
class DeletionsConfig:
    """`[deletions]`: the deletion fail-safe of the runs that infer deletions from a listing
    (HDFS, Hive Metastore): such a run flags nothing under a root (HDFS) or in the selected
    databases (HMS) when its listing failed, came back empty while entities are indexed there, or
    would flag more than `max_share_percent` of them; it logs a warning naming the key, and the
    run record and `navd status` say what was refused."""

    max_share_percent: float = number(DEFAULT_MAX_SHARE_PERCENT, 0, 100, low_open=True,
                                      help="the largest share of the entities indexed under one scope one run may "
                                           "flag deleted (DataHub's stale-entity removal uses 75 too); after "
                                           "checking the cluster, raise it for one run to apply a real mass deletion")


@dataclasses.dataclass(frozen=True)
class LinkerConfig:
    """`[linker]`: how link passes match the ends of unlinked relations."""

    fs_aliases: tuple[str, ...] = setting(
        (), help="NameNode addresses that name the default file system, as `AUTHORITY=FS`, e.g. "
                 "`nn1.example.com:8020=hdfs://nameservice1`: a job that wrote `hdfs://nn1.example.com:8020/p` links "
                 "to the element `hdfs://nameservice1/p`. Every link pass uses them (the daemon's and `navd link`'s; "
                 "`navd link --fs-alias` adds more for one pass)")

    @property
    def aliases(self) -> dict[str, str]:
        return parse_fs_aliases(self.fs_aliases, "[linker] fs_aliases")


#: Spark properties `[spark_jobs] conf` may not set: navd sets them itself from other keys
#: (`master`, `python`) or per job (the application name)
SPARK_JOB_OWN_PROPERTIES = frozenset({"spark.master", "spark.app.name", "spark.pyspark.python"})


@dataclasses.dataclass(frozen=True)
class SparkJobsConfig:
    """`[spark_jobs]`: how navd's own PySpark jobs start (`navd link --spark`, `navd extract hdfs
    --from-fsimage`, `navd extract spark --backfill`); see docs/operations/yarn.md."""

    master: str = setting("local[*]", help="the Spark master when the command's `--master` is not given: "
                                           "`local[N]`, `local[*]`, `yarn`, `spark://host:port`")
    hadoop_conf_dir: str = setting("", help="the cluster's Hadoop client configuration (`yarn-site.xml`, "
                                            "`core-site.xml`) for `yarn`, an absolute path; unset: HADOOP_CONF_DIR, "
                                            "else YARN_CONF_DIR. Checked when a YARN job starts")
    python: str = setting("", help="the Python the executors run (with navd's dependencies); unset: PYSPARK_PYTHON, "
                                   "else navd's own interpreter path (the same venv at the same path on every node); "
                                   "`./env/bin/python` with a packed environment in `spark.archives`")
    ship_code: bool = setting(True, help="on a cluster master, navd's own code goes to the executors as a zip "
                                         "(`SparkContext.addPyFile`), so their Python needs only the dependencies; "
                                         "`false`: navd is installed there")
    conf: Mapping[str, str] = setting(
        default_factory=lambda: MappingProxyType({}),
        help='Spark properties for every job, e.g. `{ "spark.executor.instances" = "4", "spark.archives" = '
             '"hdfs:///apps/navd/navd-env.tar.gz#env" }`; not `spark.master`, `spark.app.name`, '
             '`spark.pyspark.python`')


@dataclasses.dataclass(frozen=True)
class SecurityConfig:
    """`[security]`: what navd does with credentials it finds stored insecurely. (A config or
    password file holding a secret that other users can read is always refused.)"""

    insecure_credentials: Literal["warn", "refuse"] = setting(
        "warn", help="a password inline in the config file (instead of a `password_file`), or basic auth over plain "
                     "http:// to a host other than this one: `warn` logs a warning at every start and reload, "
                     "`refuse` stops navd with one line")


#: Navigator's Metadata Server port: clients written for it default to it.
DEFAULT_SERVER_PORT = 7187


@dataclasses.dataclass(frozen=True)
class ServerConfig:
    """`[server]`: navd's HTTP API (`navd serve`, or inside `navd run` with `enabled = true`).

    Off loopback it fails closed: `auth = "none"` is refused, and so is a server without TLS
    (basic auth would send passwords in clear text; with kerberos, SPNEGO protects the
    credentials but the lineage itself would travel in clear text)."""

    enabled: bool = setting(False, help="serve inside `navd run` too (one process under systemd; READY is sent once "
                                        "the server listens); `navd serve` serves whatever this says")
    host: str = setting("127.0.0.1", help="the address to listen on: a loopback address, or e.g. `0.0.0.0` with "
                                          "`auth` and TLS")
    port: int = number(DEFAULT_SERVER_PORT, 1, 65535, help="the port (7187: Navigator's Metadata Server's)")
    allowed_hosts: tuple[str, ...] = setting(
        (), help="more names (or addresses) clients may reach the server by, as the request's Host header says: a "
                 "DNS alias or a load balancer's name. Always served: `localhost`, `host` itself, 127.0.0.1 and ::1 "
                 "on a loopback host, this machine's host name and FQDN off loopback, and the address a connection "
                 "arrives on. Any other Host is refused (400): a web page at a name its owner points at this machine "
                 "(DNS rebinding) gets no answer")
    cert_file: str = setting("", help="TLS: the PEM certificate (chain); with `key_file`, both or neither")
    key_file: str = setting("", help="TLS: the certificate's private key (0600, owned by navd)")
    auth: Literal["none", "basic", "kerberos"] = setting(
        "none", help="`none` (allowed only on a loopback host), `basic` (the users of `users_file`) or `kerberos` "
                     "(SPNEGO: `keytab`, `principal`; `pip install 'navd[kerberos]'`)")
    users_file: str = setting("", help='the users of `auth = "basic"`, one salted scrypt hash each (0600), managed '
                                       "with `navd server add-user NAME`; unset: `server-users` in the state "
                                       "directory")
    api_keys_file: str = setting("", help="the API keys clients send as `Authorization: Bearer KEY` with `auth = "
                                          '"basic"` or `"kerberos"` (SHA-256 digests and roles, 0600), managed with '
                                          "`navd server add-api-key NAME`; unset: `server-api-keys` in the state "
                                          "directory")
    keytab: str = setting("", help='`auth = "kerberos"`: the service keytab, readable by navd\'s user only (0600 or '
                                   "0400, owned by navd; checked at start)")
    principal: str = setting("HTTP/_HOST", help="the service principal to accept for: `_HOST` becomes this host's "
                                                "fully qualified name, lowercase, and no realm means krb5.conf's "
                                                "default one (Hadoop's rule); `*` or empty accepts any `HTTP/` "
                                                "principal of the keytab")
    kerberos_roles: Mapping[str, str] = setting(
        default_factory=lambda: MappingProxyType({}),
        help='`auth = "kerberos"`: principal -> role (viewer, editor or admin), e.g. `{"spark@EXAMPLE.COM" = '
             '"editor"}`; a principal not listed is a viewer')
    max_rows: int = number(1000, 1, 100_000, help="the most rows one request may ask for (`/api/entities`, "
                                                  "`/api/runs`, ...); above it a 400 names the parameter")
    max_depth: int = number(20, 1, 1000, help="the deepest lineage one request may ask for (`/api/lineage` depth)")
    max_nodes: int = number(3000, 1, 1_000_000, help="the most nodes of one lineage graph (`/api/lineage` "
                                                     "max_nodes, and its default)")
    max_login_failures: int = number(10, 1, 1_000_000,
                                     help="failed logins (basic or kerberos) allowed per client address and per "
                                          "user name within `login_window_seconds`; past them 429 with Retry-After, "
                                          "answered before any password is hashed")
    login_window_seconds: float = number(300.0, 0, MAX_SECONDS, low_open=True,
                                         help="the window `max_login_failures` counts in")
    hash_threads: int = number(0, 0, 256, help="threads that hash passwords (scrypt, 32 MiB each) apart from the "
                                               "request threads, so a flood of logins cannot hold up other "
                                               "requests; 0: half the cores, at least 1")
    max_connections: int = number(256, 1, 100_000,
                                  help="connections open at once; more are answered 503 and closed (each holds a "
                                       "file descriptor: deploy/navd.service's LimitNOFILE is sized for them, and a "
                                       "start that could not hold them all fails naming this key)")
    keep_alive_seconds: float = number(5.0, 0, 3600, low_open=True,
                                       help="a connection idle this long after its last response is closed")
    header_timeout_seconds: float = number(10.0, 0, 3600, low_open=True,
                                           help="a request line and headers must arrive within this long (from the "
                                                "connection's opening, or from their first byte on a kept-alive one); "
                                                "else 408 and the connection closed")
    body_timeout_seconds: float = number(60.0, 0, 3600, low_open=True,
                                         help="a request body must arrive within this long of its headers (while "
                                              "the server itself holds the reading back, the clock waits); else 408 "
                                              "and the connection closed")


@dataclasses.dataclass(frozen=True)
class LineageConfig:
    """`[lineage]`: the hub cache of the server's lineage queries (navd/lineage/hub_cache.py): the
    graphs of hubs (roots with at least `hub_min_degree` relations of their own, such as tables
    read by hundreds of jobs) kept between queries, emptied whenever the index changes (document
    count or highest `_version_` of a core)."""

    hub_cache_entries: int = number(64, 0, 1_000_000, help="graphs kept at most (0: no cache)")
    hub_cache_items: int = number(100_000, 0, 100_000_000, help="nodes + edges kept at most over all graphs: bounds "
                                                                "the memory (about 0.5 kB each)")
    hub_min_degree: int = number(100, 1, 1_000_000_000, help="a root with fewer relations of its own than this is "
                                                             "walked every time")
    hub_cache_seconds: float = number(600, 0, MAX_SECONDS, help="a graph is walked again after this long even if the "
                                                                "index looks unchanged (a SolrCloud replica behind "
                                                                "its leader)")


#: The largest OpenLineage event body `[openlineage] max_body_bytes` takes by default: the Spark
#: listener's events of wide plans run to a few MB; 16 MiB leaves room and still bounds memory.
#: events kept as posted: at a few kilobytes each, about a gigabyte of the runs core
DEFAULT_OPENLINEAGE_KEEP_EVENTS = 200_000
DEFAULT_OPENLINEAGE_MAX_BODY_BYTES = 16 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class OpenLineageConfig:
    """`[openlineage]`: the OpenLineage intake of the server (`POST /api/v1/lineage`, as Marquez;
    docs/sources/openlineage.md). Enabled, the server writes to Solr as navd's admin user."""

    enabled: bool = setting(False, help="serve the intake (in `navd serve`, and in `navd run` with `[server] "
                                        "enabled`)")
    namespaces: Mapping[str, str] = setting(
        default_factory=lambda: MappingProxyType({}),
        help='OpenLineage namespace -> navd cluster: `"hive://metastore:9083" = "primary"` names that metastore\'s '
             "tables `db.table@primary`. A `hive://` namespace neither listed here nor `hive://<a navd cluster>` is "
             "another metastore's: its datasets keep their own namespace, with a warning")
    spool_dir: str = setting("", help="where events accepted while Solr is down wait (fsync'd) until it is back; "
                                      "unset: `openlineage-spool` in the state directory (`[daemon] state_dir`)")
    max_body_bytes: int = number(DEFAULT_OPENLINEAGE_MAX_BODY_BYTES, 1024, 1024 ** 3,
                                 help="the largest body taken, as sent and once gunzipped (413 above it)")
    # The most an event may make the intake do: emitters send tens of datasets and hundreds of
    # columns an event; the defaults leave room for very wide jobs (ten tables of 10,000 columns).
    max_datasets: int = number(10_000, 1, 1_000_000, help="the most datasets (inputs and outputs) of one event (413 "
                                                          "above it, naming the key)")
    max_fields: int = number(100_000, 1, 10_000_000, help="the most schema-facet fields of one event, summed over "
                                                          "its datasets (413 above it, naming the key)")
    max_column_edges: int = number(100_000, 1, 10_000_000,
                                   help="the most column edges the columnLineage facets of one event expand to (each "
                                        "input of each column; a dataset-wide input once per written column; 413 "
                                        "above it, naming the key)")
    keep_events: int = number(DEFAULT_OPENLINEAGE_KEEP_EVENTS, 0, 100_000_000,
                              help="the most events kept as posted (in the runs core), for Marquez's `GET "
                                   "/api/v1/events/lineage` and `navd openlineage replay`: the oldest kept go first "
                                   "past it; kept events also go with their runs at the purge; 0 keeps none")


@dataclasses.dataclass(frozen=True)
class NavdConfig:
    cluster: ClusterConfig = ClusterConfig()
    solr: SolrConfig = SolrConfig()
    logging: LoggingConfig = LoggingConfig()
    linker: LinkerConfig = LinkerConfig()
    deletions: DeletionsConfig = DeletionsConfig()
    purge: PurgeConfig = PurgeConfig()
    daemon: DaemonConfig = DaemonConfig()
    security: SecurityConfig = SecurityConfig()
    server: ServerConfig = ServerConfig()
    lineage: LineageConfig = LineageConfig()
    openlineage: OpenLineageConfig = OpenLineageConfig()
    spark_jobs: SparkJobsConfig = SparkJobsConfig()
    #: The sections of the registered components (`[hdfs]`, `[hive]`, ...), by section name,
    #: each validated into the component's own settings dataclass (see navd.registry).
    sections: Mapping[str, Any] = dataclasses.field(default_factory=lambda: MappingProxyType({}))
    source: str = "<defaults>"
    #: what `[security] insecure_credentials = "warn"` lets through, one line each: the CLI and
    #: the daemon log them once logging is set up
    warnings: tuple[str, ...] = ()

    def section(self, name: str, settings_type: type[SectionT]) -> SectionT:
        """A component's section; its defaults when this config was built without it."""
        value = self.sections.get(name)
        if value is None:
            return settings_type()
        if not isinstance(value, settings_type):
            raise TypeError(f"[{name}] is a {type(value).__name__}, not a {settings_type.__name__}")
        return value


def parse_fs_aliases(pairs: Iterable[str], key: str) -> dict[str, str]:
    """`AUTHORITY=FS` pairs (config or `--fs-alias`) as {authority: file system}."""
    aliases = {}
    for pair in pairs:
        authority, sep, target = pair.partition("=")
        if not sep or not authority or "://" not in target:
            raise ConfigError(f"{key} {pair!r}: expected AUTHORITY=FS, e.g. nn1:8020=hdfs://nameservice1")
        check_url(f"{key} {pair!r}", target, schemes=None, example="hdfs://nameservice1")
        check_url(f"{key} {pair!r}", f"hdfs://{authority}", schemes=None, example="hdfs://nn1:8020")
        aliases[authority] = target
    return aliases


def resolve_config_path(cli_path: str | None, environ: Mapping[str, str]) -> tuple[Path, bool]:
    """Return the config path and whether it was asked for explicitly (so must exist)."""
    if cli_path:
        return Path(cli_path), True
    if environ.get("NAVD_CONFIG"):
        return Path(environ["NAVD_CONFIG"]), True
    return DEFAULT_CONFIG_PATH, False


def load_config(cli_path: str | None = None,
                environ: Mapping[str, str] | None = None) -> NavdConfig:
    environ = os.environ if environ is None else environ
    path, explicit = resolve_config_path(cli_path, environ)
    raw: dict[str, Any] = {}
    try:
        exists = path.exists()
    except OSError as exc:  # a name the file system refuses (ENAMETOOLONG), not just a missing file
        raise ConfigError(f"{_shown(str(path))}: cannot read config: {exc.strerror}") from None
    if exists:
        try:
            data = path.read_bytes()
            mode = path.stat().st_mode
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read config: {exc.strerror}") from None
        try:
            raw = tomllib.loads(_decode(data, str(path), toml=True))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        source = str(path)
        inline = _inline_secrets(raw)
        if inline and mode & OTHERS_BITS:
            raise ConfigError(f"{path}: holds {inline[0]} but users other than its owner may read it "
                              f"(mode {stat.S_IMODE(mode):04o}): chmod 600 it, or move the password to a "
                              f"password_file only navd can read")
    elif explicit:
        raise ConfigError(f"{path}: config file not found")
    else:
        source = "<defaults>"
    return parse_config(raw, source=source, environ=environ)


def _shown(name: str) -> str:
    """A file name for an error line: cut at 200 characters (a name can be any length)."""
    return name if len(name) <= 200 else name[:200] + "..."


def _is_file(name: str) -> bool:
    """Whether `name` (`~` expanded) is a regular file. Path.is_file returns False for a missing
    file but raises for a name the file system refuses (ENAMETOOLONG): no such file either."""
    try:
        return Path(name).expanduser().is_file()
    except (OSError, RuntimeError):  # RuntimeError: `~user` of no such user
        return False


def _decode(data: bytes, where: str, *, toml: bool = False) -> str:
    """`data` as UTF-8, else one line saying where the first bad byte is (in a TOML file: its
    line, and the `[section] key` on it)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not toml:  # a secret's file: where the bad byte sits would tell about the secret
            raise ConfigError(f"{where}: not UTF-8 text") from None
        line_no = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        byte = f"byte 0x{data[exc.start]:02x} at line {line_no}, column {column}"
        key = _key_at_line(data.decode("utf-8", "replace").splitlines(), line_no)
        raise ConfigError(f"{where}: {key + ': ' if key else ''}not UTF-8 text ({byte}); "
                          "save the file as UTF-8") from None


def _key_at_line(lines: list[str], line_no: int) -> str:
    """The `[section] key` that TOML line `line_no` (1-based) sets, "" if it sets none."""
    key = lines[line_no - 1].split("=", 1)[0].strip() if "=" in lines[line_no - 1] else ""
    if not key or not key.replace("_", "").replace("-", "").replace(".", "").isalnum():
        return ""
    for line in reversed(lines[:line_no - 1]):
        header = line.strip()
        if header.startswith("[") and "]" in header:
            return f"[{header.strip('[').split(']')[0].strip()}] {key}"
    return key


def _inline_secrets(raw: Mapping[str, Any]) -> list[str]:
    """The `[section] password` keys set in the file itself, e.g. ["[solr] password"]."""
    return [f"[{name}] password" for name, section in raw.items()
            if isinstance(section, Mapping) and section.get("password")]


def parse_config(raw: Mapping[str, Any], *, source: str = "<inline>",
                 environ: Mapping[str, str] | None = None) -> NavdConfig:
    environ = {} if environ is None else environ
    from navd.registry import section_types  # the registry imports the components, which import this

    types_by_section = section_types()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: top level: expected a table, got {type(raw).__name__}")
    core = {k: v for k, v in raw.items() if k not in types_by_section}
    config = _build(NavdConfig, core, source, section="", skip={"source", "sections"},
                    extra_known=set(types_by_section))
    sections = {name: _build(kind, raw.get(name, {}), source, name) for name, kind in types_by_section.items()}
    config = dataclasses.replace(config, source=source, sections=MappingProxyType(sections))
    if environ.get("NAVD_SOLR_URL"):
        try:
            check_url("NAVD_SOLR_URL", environ["NAVD_SOLR_URL"])
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None
        config = dataclasses.replace(
            config, solr=dataclasses.replace(config.solr, url=environ["NAVD_SOLR_URL"]))
    config = dataclasses.replace(config, solr=_with_password(config.solr, "solr", source))
    sections = {name: _with_password(settings, name, source) for name, settings in sections.items()}
    config = dataclasses.replace(config, sections=MappingProxyType(sections))
    _validate(config, source)
    for settings in sections.values():
        try:
            settings.validate()
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None
    return dataclasses.replace(config, warnings=_insecure_credentials(config, raw, source))


def _with_password(settings: SectionT, section: str, source: str) -> SectionT:
    """A section with a `password_file` and no inline `password` gets the file's password."""
    path = getattr(settings, "password_file", "")
    if not path or getattr(settings, "password", ""):
        return settings
    return dataclasses.replace(settings, password=read_secret(path, f"[{section}] password_file", source))  # type: ignore[type-var]


def read_secret(path: str, label: str, source: str) -> str:
    """A secret from a file only its owner may read (else one line naming the file, never the secret)."""
    file = Path(path).expanduser()
    try:
        mode = file.stat().st_mode
        data = file.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{source}: {label} {path}: {exc.strerror}") from None
    check_owner_only(f"{source}: {label}", path, mode)
    return _decode(data, f"{source}: {label} {path}").strip()


def check_owner_only(label: str, path: str | Path, mode: int) -> None:
    """Refuse a file that holds a secret (a password, a private key, a keystore, a keytab, the
    users' hashes) when users other than its owner may read or write it: one line naming
    `label`, the file and its mode, never what it holds."""
    if mode & OTHERS_BITS:
        raise ConfigError(f"{label} {path}: users other than its owner may read it "
                          f"(mode {stat.S_IMODE(mode):04o}): chmod 600 it")


def check_private_file(label: str, path: str | Path) -> None:
    """`check_owner_only` for a file named in the config, which must exist."""
    try:
        mode = Path(path).expanduser().stat().st_mode
    except OSError as exc:
        raise ConfigError(f"{label} {path}: {exc.strerror}") from None
    check_owner_only(label, path, mode)


def _insecure_credentials(config: NavdConfig, raw: Mapping[str, Any], source: str) -> tuple[str, ...]:
    """What `[security] insecure_credentials` governs, one line each; raises when it refuses."""
    found = [f"{key}: a password inline in the config file; put it in a file only navd can read "
             f"and set {key}_file" for key in _inline_secrets(raw)]
    solr = config.solr
    if solr.auth == "basic" and solr.url and urlsplit(solr.url).scheme == "http" and \
            not is_loopback_host(urlsplit(solr.url).hostname or ""):
        found.append(f"[solr] auth: basic auth over plain http:// sends the password in clear text to "
                     f"{urlsplit(solr.url).hostname}; use an https:// url")
    if found and config.security.insecure_credentials == "refuse":
        raise ConfigError(f"{source}: {found[0]} (refused: [security] insecure_credentials = \"refuse\")")
    return tuple(f"{source}: {line}" for line in found)


def is_loopback_host(host: str) -> bool:
    """Traffic to this host never leaves the machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


#: one label of a DNS name (RFC 1123; `_` as resolvers take it)
_HOST_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")


def canonical_host(value: str) -> str | None:
    """A host name lowercased without a trailing dot, or an IP address as `ipaddress` writes it
    (IPv6 without brackets, an IPv4-mapped IPv6 address as its IPv4 one); None for anything
    else: a port, a scheme, a path, spaces, a wildcard, non-ASCII text."""
    if not value.isascii():
        return None
    bare = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        pass
    else:
        mapped = getattr(address, "ipv4_mapped", None)
        return str(mapped or address)
    name = value.lower().removesuffix(".")
    if not name or len(name) > 253 or not all(_HOST_LABEL.fullmatch(label) for label in name.split(".")):
        return None
    return name


def _validate(config: NavdConfig, source: str) -> None:
    def fail(key: str, message: str) -> ConfigError:
        return ConfigError(f"{source}: {key}: {message}")

    solr = config.solr
    try:
        if solr.url:
            check_url("[solr] url", solr.url)
        config.linker.aliases
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    if solr.auth == "basic" and not (solr.username and solr.password):
        raise fail("[solr] auth", "basic auth needs username and password (or password_file)")
    if solr.auth != "basic" and (solr.username or solr.password):
        raise fail("[solr] username", 'set only with auth = "basic"')
    if (solr.keytab or solr.principal) and solr.auth != "kerberos":
        raise fail("[solr] keytab" if solr.keytab else "[solr] principal", 'set only with auth = "kerberos"')
    if solr.ca_bundle and not _is_file(solr.ca_bundle):
        raise fail("[solr] ca_bundle", f"{_shown(solr.ca_bundle)}: no such file")
    if solr.embedded.keystore and not _is_file(solr.embedded.keystore):
        raise fail("[solr.embedded] keystore", f"{_shown(solr.embedded.keystore)}: no such file")
    if solr.embedded.keystore_password_file and not solr.embedded.keystore:
        raise fail("[solr.embedded] keystore_password_file", "set only with keystore")
    if not _is_heap_size(solr.embedded.heap):
        raise fail("[solr.embedded] heap", f"{solr.embedded.heap!r} is not a JVM size such as 512m or 2g")
    if not config.cluster.name or config.cluster.name != config.cluster.name.strip():
        raise fail("[cluster] name", "must be a non-empty name without surrounding spaces")
    try:
        _validate_server(config.server)
        _validate_openlineage(config.openlineage)
        _validate_spark_jobs(config.spark_jobs)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def _validate_server(server: ServerConfig) -> None:
    """Fail closed: nothing leaves loopback without authentication and TLS."""
    if not server.host or server.host != server.host.strip():
        raise ConfigError("[server] host: must be a host name or address without surrounding spaces")
    if server.auth == "kerberos":
        # The file itself (exists, only navd's user reads it) is checked when the server starts
        # (navd.server.kerberos): other users run the CLI with this config and cannot read it.
        if not server.keytab:
            raise ConfigError('[server] keytab: auth = "kerberos" needs the service keytab (e.g. '
                              '/etc/security/keytabs/navd.service.keytab, HTTP/ principals)')
        principal = server.principal.strip()
        if principal not in ("", "*") and (not principal.startswith("HTTP/") or principal != server.principal):
            raise ConfigError(f"[server] principal: {server.principal!r}: SPNEGO needs an HTTP/ service "
                              'principal (HTTP/_HOST, HTTP/host.example.com@REALM), or "*" for any in the keytab')
    elif server.keytab:
        raise ConfigError('[server] keytab: set only with auth = "kerberos"')
    for name in server.allowed_hosts:
        if canonical_host(name) is None:
            raise ConfigError(f"[server] allowed_hosts: {name!r} is not a host name or IP address (no scheme, "
                              'port or wildcard), e.g. "navd.example.com" or "10.0.0.5"')
    loopback = is_loopback_host(server.host)
    if server.auth == "none" and not loopback:
        raise ConfigError(f'[server] auth: "none" is allowed only on a loopback host, not {server.host!r}: '
                          'set auth = "basic" or "kerberos" (and cert_file/key_file)')
    if bool(server.cert_file) != bool(server.key_file):
        raise ConfigError("[server] cert_file: TLS needs both cert_file and key_file")
    for key, value in (("cert_file", server.cert_file), ("key_file", server.key_file)):
        if value and not _is_file(value):
            raise ConfigError(f"[server] {key}: {_shown(value)}: no such file")
    if not loopback and not server.cert_file:
        raise ConfigError(f"[server] cert_file: a server on {server.host!r} (not loopback) needs TLS: "
                          "set cert_file and key_file, or host = \"127.0.0.1\"")
    _validate_kerberos_roles(server)


def _validate_kerberos_roles(server: ServerConfig) -> None:
    from navd.server.roles import ROLE_NAMES  # pure; the server package imports this module

    if server.kerberos_roles and server.auth != "kerberos":
        raise ConfigError('[server] kerberos_roles: set only with auth = "kerberos" (basic users have their role '
                          "in users_file: navd server set-role NAME ROLE)")
    for principal, role in server.kerberos_roles.items():
        if not principal or principal != principal.strip():
            raise ConfigError(f"[server] kerberos_roles: {principal!r}: a principal must be non-empty, without "
                              "surrounding spaces")
        if role not in ROLE_NAMES:
            raise ConfigError(f"[server] kerberos_roles: {principal!r}: {role!r} is not a role: use "
                              f"{', '.join(ROLE_NAMES)}")


def with_server(config: NavdConfig, **changes: Any) -> NavdConfig:
    """`config` with `[server]` keys replaced (`navd serve --host/--port/--auth`, the quickstart's
    server), checked as the loader checks the file: ranges, then fail closed off loopback."""
    server = dataclasses.replace(config.server, **changes)
    for key in changes:
        if key in ("port", "max_rows", "max_depth", "max_nodes"):
            field_range(ServerConfig, key).check(f"[server] {key}", getattr(server, key))
    _validate_server(server)
    return dataclasses.replace(config, server=server)
def _validate_openlineage(openlineage: OpenLineageConfig) -> None:
    for namespace, cluster in openlineage.namespaces.items():
        if not namespace or namespace != namespace.strip():
            raise ConfigError(f"[openlineage] namespaces: {namespace!r}: a namespace must be non-empty, "
                              "without surrounding spaces")
        if not cluster or cluster != cluster.strip():
            raise ConfigError(f"[openlineage] namespaces: {namespace!r}: the cluster must be a non-empty name "
                              f"without surrounding spaces, got {cluster!r}")


def _validate_spark_jobs(jobs: SparkJobsConfig) -> None:
    """What can be told at load; the Hadoop configuration itself is checked when a job starts on
    YARN (another command may never start one)."""
    check_spark_master("[spark_jobs] master", jobs.master)
    if jobs.hadoop_conf_dir and not os.path.isabs(os.path.expanduser(jobs.hadoop_conf_dir)):
        raise ConfigError(f"[spark_jobs] hadoop_conf_dir: {jobs.hadoop_conf_dir!r} is not an absolute path "
                          "(e.g. /etc/hadoop/conf)")
    if jobs.python != jobs.python.strip():
        raise ConfigError(f"[spark_jobs] python: {jobs.python!r} has surrounding spaces")
    for key, value in jobs.conf.items():
        if not key.startswith("spark.") or key != key.strip():
            raise ConfigError(f"[spark_jobs] conf: {key!r} is not a Spark property (spark.*), e.g. "
                              '"spark.executor.memory" = "2g"')
        if key in SPARK_JOB_OWN_PROPERTIES:
            raise ConfigError(f"[spark_jobs] conf: {key} is set by navd: use "
                              + ("[spark_jobs] master or --master" if key == "spark.master" else
                                 "[spark_jobs] python" if key == "spark.pyspark.python" else
                                 "nothing (each job names itself)"))
        if value != value.strip() or not value:
            raise ConfigError(f"[spark_jobs] conf: {key}: {value!r} is empty or has surrounding spaces")


def check_spark_master(label: str, master: str) -> None:
    """A Spark master URL as Spark takes it: local, local[N], local[*], yarn or scheme://..."""
    if not re.fullmatch(r"local(\[(\*|[1-9][0-9]*)(,[0-9]+)?\])?|yarn|[a-z][a-z0-9+.-]*://\S+", master):
        raise ConfigError(f"{label}: {master!r} is not a Spark master: local[*], local[N], yarn or "
                          "spark://host:port")


def openlineage_spool_path(config: NavdConfig) -> Path:
    """Where the OpenLineage intake spools events while Solr is down."""
    if config.openlineage.spool_dir:
        return Path(config.openlineage.spool_dir).expanduser()
    return extractor_state_dir(config) / "openlineage-spool"


def server_users_path(config: NavdConfig) -> Path:
    """The file of `[server] auth = "basic"` users."""
    if config.server.users_file:
        return Path(config.server.users_file).expanduser()
    return extractor_state_dir(config) / "server-users"


def server_api_keys_path(config: NavdConfig) -> Path:
    """The file of the server's API keys (`Authorization: Bearer`)."""
    if config.server.api_keys_file:
        return Path(config.server.api_keys_file).expanduser()
    return extractor_state_dir(config) / "server-api-keys"


def _is_heap_size(value: str) -> bool:
    return len(value) >= 2 and value[:-1].isdigit() and value[-1].lower() in "kmg"


def _build(cls: type, raw: Any, source: str, section: str, skip: frozenset[str] | set[str] = frozenset(),
           extra_known: set[str] | frozenset[str] = frozenset()):
    where = f"[{section}]" if section else "top level"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: {where}: expected a table, got {type(raw).__name__}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in skip}
    unknown = sorted(set(raw) - set(fields) - set(extra_known))
    if unknown:
        raise ConfigError(f"{source}: {where}: unknown key {unknown[0]!r} "
                          f"(known: {', '.join(sorted({*fields, *extra_known}))})")
    values: dict[str, Any] = {}
    for name, value in raw.items():
        hint = hints[name]
        key = f"{section}.{name}" if section else name
        if dataclasses.is_dataclass(hint):
            values[name] = _build(hint, value, source, key)
        else:
            values[name] = _coerce(hint, value, source, key, section, fields[name])
    return cls(**values)


def _coerce(hint: Any, value: Any, source: str, key: str, section: str, field: dataclasses.Field[Any]) -> Any:
    label = f"[{section}] {key.rsplit('.', 1)[-1]}" if section else key

    def wrong(expected: str) -> ConfigError:
        # A secret field (repr=False) never echoes its value, not even a wrong one.
        shown = "a value not shown (a secret)" if not field.repr else repr(value)
        return ConfigError(f"{source}: {label}: expected {expected}, got {shown}")

    def in_range(number: float) -> float:
        try:
            field.metadata.get("range", ANY_NUMBER).check(label, number)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None
        return number

    origin = typing.get_origin(hint)
    if origin is Literal:
        choices = typing.get_args(hint)
        if value not in choices:
            raise wrong("one of " + ", ".join(repr(c) for c in choices))
        return value
    if origin is tuple:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise wrong("a list of strings")
        return tuple(value)
    if origin is Mapping:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                      for k, v in value.items()):
            raise wrong('a table of strings, e.g. { "key" = "value" }')
        return MappingProxyType(dict(value))
    if origin in (typing.Union, types.UnionType):
        raise AssertionError(f"config field {key} uses an unsupported union type")
    if hint is bool:
        if not isinstance(value, bool):
            raise wrong("true or false")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong("an integer")
        return in_range(value)
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong("a number")
        try:
            as_float = float(value)
        except OverflowError:  # TOML integers are unbounded: past float's range is out of any range
            as_float = math.inf
        return in_range(as_float)
    if hint is str:
        if not isinstance(value, str):
            raise wrong("a string")
        return value
    raise AssertionError(f"config field {key} has unsupported type {hint!r}")
