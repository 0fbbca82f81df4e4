"""The core config sections as frozen dataclasses (`[cluster]`, `[solr]`, `[server]`, ...) and
`NavdConfig`, which holds them and the registered components' own sections."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from datetime import timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from navd.config.keys import (
    DEFAULT_SOLR_PORT,
    DEFAULT_SOLR_VERSION,
    MAX_INTERVAL_MINUTES,
    MAX_SECONDS,
    SectionT,
    check_url,
    number,
    setting,
)
from navd.config.paths import default_solr_dist_dir, default_solr_home
from navd.errors import ConfigError


@dataclasses.dataclass(frozen=True)
class ClusterConfig:
    """`[cluster]`: the cluster navd describes."""

    name: str = setting("primary", help="the cluster's name in Hive qualified names, `db.table.column@<name>` "
                                        "(Atlas's convention); a name without a cluster (`sales.orders`) is looked "
                                        "up in this cluster first")
    default_fs: str = setting("", help="the cluster's default file system, e.g. `hdfs://nameservice1`: a bare "
                                       "`/path` and `hdfs:///path` name paths under it, in every source and in "
                                       "what people type (formerly `[hdfs] default_fs`, still read with a "
                                       "warning)")


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
    enabled: bool = setting(True, help="`navd run` purges every `interval_days` (false: only `navd purge` does)")

    @property
    def interval(self) -> timedelta:
        return timedelta(days=self.interval_days)

    def validate(self) -> None:
        """The numbers are checked by the loader against their ranges."""


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

    @property
    def enabled(self) -> bool:
        """Not a key: every run that writes is followed by a link pass."""
        return True

    @property
    def interval(self) -> timedelta:
        """Not a key: link passes follow runs instead of an interval of their own."""
        return timedelta(0)

    def validate(self) -> None:
        parse_fs_aliases(self.fs_aliases, "[linker] fs_aliases")


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
    deletions: DeletionsConfig = DeletionsConfig()
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

    @property
    def linker(self) -> LinkerConfig:
        """`[linker]`, the section of the linker component (registered like the sources)."""
        return self.section("linker", LinkerConfig)

    @property
    def purge(self) -> PurgeConfig:
        """`[purge]`, the section of the purge component (registered like the sources)."""
        return self.section("purge", PurgeConfig)

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
