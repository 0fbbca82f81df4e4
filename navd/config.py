"""The one config loader: a TOML file validated into frozen dataclasses.

Resolution: `--config FILE`, else env `NAVD_CONFIG`, else `/etc/navd/navd.toml`. A missing
default file means "all defaults" (the embedded Solr); a file that was asked for explicitly
must exist. Env `NAVD_SOLR_URL` overrides `[solr] url`. Unknown keys, wrong types and bad
values fail fast with a message naming `[section] key` and the file.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from navd.errors import ConfigError

DEFAULT_CONFIG_PATH = Path("/etc/navd/navd.toml")
DEFAULT_SOLR_VERSION = "9.10.1"
DEFAULT_SOLR_PORT = 8983


def _xdg_dir(env: str, fallback: str) -> Path:
    base = os.environ.get(env)
    return Path(base) if base else Path.home() / fallback


def default_solr_home() -> Path:
    return _xdg_dir("XDG_DATA_HOME", ".local/share") / "navd" / "solr"


def default_solr_dist_dir() -> Path:
    return _xdg_dir("XDG_CACHE_HOME", ".cache") / "navd"


def state_dir() -> Path:
    """The invoking user's own state (which embedded Solr `navd solr start` last started)."""
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
    name: str = "primary"


@dataclasses.dataclass(frozen=True)
class EmbeddedSolrConfig:
    """The Solr 9 server navd runs itself when `[solr] url` is not set.

    `home` and `port` left unset mean: the server last started with `navd solr start`
    (recorded in the state directory), else ~/.local/share/navd/solr on port 8983.
    """

    home: str = ""
    port: int = 0
    heap: str = "512m"
    version: str = DEFAULT_SOLR_VERSION
    dist_dir: str = ""

    @property
    def home_path(self) -> Path:
        return Path(self.home).expanduser() if self.home else default_solr_home()

    @property
    def dist_path(self) -> Path:
        return Path(self.dist_dir).expanduser() if self.dist_dir else default_solr_dist_dir()


@dataclasses.dataclass(frozen=True)
class SolrConfig:
    url: str = ""
    mode: Literal["auto", "standalone", "cloud"] = "auto"
    elements_core: str = "nav_elements"
    relations_core: str = "nav_relations"
    runs_core: str = "nav_runs"
    auth: Literal["none", "basic", "kerberos"] = "none"
    username: str = ""
    password: str = dataclasses.field(default="", repr=False)
    password_file: str = ""
    verify_tls: bool = True
    ca_bundle: str = ""
    timeout_seconds: float = 30.0
    retries: int = 8
    backoff_seconds: float = 0.5
    max_backoff_seconds: float = 30.0
    batch_size: int = 1000
    writer_threads: int = 2
    shards: int = 1
    replication_factor: int = 1
    embedded: EmbeddedSolrConfig = EmbeddedSolrConfig()

    @property
    def is_embedded(self) -> bool:
        return not self.url

    @property
    def base_url(self) -> str:
        """The Solr base URL, ending in `/solr` and without a trailing slash."""
        if self.url:
            return self.url.rstrip("/")
        return f"http://127.0.0.1:{self.embedded.port or DEFAULT_SOLR_PORT}/solr"

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
    format: Literal["auto", "json", "console"] = "auto"
    level: Literal["debug", "info", "warning", "error"] = "info"
    #: log to this file instead of stderr (JSON lines; deploy/navd.logrotate rotates it)
    file: str = ""


@dataclasses.dataclass(frozen=True)
class HdfsConfig:
    enabled: bool = False
    urls: tuple[str, ...] = ()
    default_fs: str = ""
    roots: tuple[str, ...] = ("/",)
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ("/tmp/hadoop-yarn/staging",)
    user: str = "hdfs"
    auth: Literal["insecure", "kerberos"] = "insecure"
    interval_minutes: float = 10.0
    #: On roots an admin made snapshottable (`hdfs dfsadmin -allowSnapshot`), navd keeps one
    #: snapshot of its own and runs incrementally from snapshot diffs.
    snapshots: bool = True


@dataclasses.dataclass(frozen=True)
class HiveConfig:
    enabled: bool = False
    host: str = ""
    port: int = 10000
    username: str = "navd"
    auth: Literal["NONE", "NOSASL", "LDAP", "KERBEROS", "CUSTOM"] = "NONE"
    password: str = dataclasses.field(default="", repr=False)
    kerberos_service_name: str = "hive"
    database_regex: str = ".*"
    table_regex: str = ".*"
    interval_minutes: float = 10.0
    #: A HiveServer2 that accepts connections but stops answering (a long GC, a stuck metastore)
    #: fails the run after this many seconds of silence on the socket instead of hanging it.
    timeout_seconds: float = 600.0


@dataclasses.dataclass(frozen=True)
class YarnConfig:
    enabled: bool = False
    urls: tuple[str, ...] = ()
    auth: Literal["none", "kerberos"] = "none"
    interval_minutes: float = 10.0


@dataclasses.dataclass(frozen=True)
class SparkConfig:
    enabled: bool = False
    event_log_dirs: tuple[str, ...] = ()
    poll_seconds: float = 5.0
    state_dir: str = ""


@dataclasses.dataclass(frozen=True)
class PurgeConfig:
    # Navigator's defaults: entities deleted, and executions run, more than 60 days ago; a run
    # stops after runtime_cap_minutes (rerunning continues where it stopped).
    older_than_days: float = 60.0
    runtime_cap_minutes: float = 720.0
    interval_days: float = 7.0


@dataclasses.dataclass(frozen=True)
class DaemonConfig:
    #: Extractor positions, watermarks and run locks. Unset: $STATE_DIRECTORY (systemd's
    #: StateDirectory=), else ~/.local/state/navd. `navd extract` must see the daemon's, so
    #: admins run it as the service user with the same config.
    state_dir: str = ""
    #: SIGTERM: runs still going after this many seconds are abandoned at their last checkpoint
    #: (systemd's TimeoutStopSec in deploy/navd.service is 30).
    stop_timeout_seconds: float = 20.0


@dataclasses.dataclass(frozen=True)
class NavdConfig:
    cluster: ClusterConfig = ClusterConfig()
    solr: SolrConfig = SolrConfig()
    logging: LoggingConfig = LoggingConfig()
    hdfs: HdfsConfig = HdfsConfig()
    hive: HiveConfig = HiveConfig()
    yarn: YarnConfig = YarnConfig()
    spark: SparkConfig = SparkConfig()
    purge: PurgeConfig = PurgeConfig()
    daemon: DaemonConfig = DaemonConfig()
    source: str = "<defaults>"


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
    if path.exists():
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read config: {exc.strerror}") from None
        source = str(path)
    elif explicit:
        raise ConfigError(f"{path}: config file not found")
    else:
        source = "<defaults>"
    return parse_config(raw, source=source, environ=environ)


def parse_config(raw: Mapping[str, Any], *, source: str = "<inline>",
                 environ: Mapping[str, str] | None = None) -> NavdConfig:
    environ = {} if environ is None else environ
    config = _build(NavdConfig, raw, source, section="", skip={"source"})
    config = dataclasses.replace(config, source=source)
    if environ.get("NAVD_SOLR_URL"):
        config = dataclasses.replace(
            config, solr=dataclasses.replace(config.solr, url=environ["NAVD_SOLR_URL"]))
    solr = config.solr
    if solr.password_file and not solr.password:
        solr = dataclasses.replace(solr, password=_read_secret(solr.password_file, source))
        config = dataclasses.replace(config, solr=solr)
    _validate(config, source)
    return config


def _read_secret(path: str, source: str) -> str:
    try:
        return Path(path).expanduser().read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"{source}: [solr] password_file {path}: {exc.strerror}") from None


def _validate(config: NavdConfig, source: str) -> None:
    def fail(key: str, message: str) -> ConfigError:
        return ConfigError(f"{source}: {key}: {message}")

    solr = config.solr
    if solr.url:
        parts = urlsplit(solr.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise fail("[solr] url", f"{solr.url!r} is not an http(s) URL such as "
                                     "http://solr1:8983/solr")
    if solr.auth == "basic" and not (solr.username and solr.password):
        raise fail("[solr] auth", "basic auth needs username and password (or password_file)")
    if solr.auth != "basic" and (solr.username or solr.password):
        raise fail("[solr] username", 'set only with auth = "basic"')
    if solr.ca_bundle and not Path(solr.ca_bundle).expanduser().is_file():
        raise fail("[solr] ca_bundle", f"{solr.ca_bundle}: no such file")
    positive = {"[solr] timeout_seconds": solr.timeout_seconds, "[solr] batch_size": solr.batch_size,
                "[solr] writer_threads": solr.writer_threads, "[solr] shards": solr.shards,
                "[solr] replication_factor": solr.replication_factor,
                "[hdfs] interval_minutes": config.hdfs.interval_minutes,
                "[hive] interval_minutes": config.hive.interval_minutes,
                "[hive] timeout_seconds": config.hive.timeout_seconds,
                "[yarn] interval_minutes": config.yarn.interval_minutes,
                "[spark] poll_seconds": config.spark.poll_seconds,
                "[purge] older_than_days": config.purge.older_than_days,
                "[purge] runtime_cap_minutes": config.purge.runtime_cap_minutes,
                "[purge] interval_days": config.purge.interval_days,
                "[daemon] stop_timeout_seconds": config.daemon.stop_timeout_seconds}
    for key, value in positive.items():
        if value <= 0:
            raise fail(key, f"must be > 0, got {value}")
    if solr.retries < 0:
        raise fail("[solr] retries", f"must be >= 0, got {solr.retries}")
    if solr.url and ("@" in urlsplit(solr.url).netloc):
        raise fail("[solr] url", "must not carry credentials; use auth, username and password_file")
    if not 0 <= solr.embedded.port < 65536:
        raise fail("[solr.embedded] port", f"{solr.embedded.port} is not a TCP port")
    if not _is_heap_size(solr.embedded.heap):
        raise fail("[solr.embedded] heap", f"{solr.embedded.heap!r} is not a JVM size such as 512m or 2g")
    if not config.cluster.name or config.cluster.name != config.cluster.name.strip():
        raise fail("[cluster] name", "must be a non-empty name without surrounding spaces")
    for name, section in (("hdfs", config.hdfs), ("yarn", config.yarn)):
        if section.enabled and not section.urls:
            raise fail(f"[{name}] urls", f"[{name}] is enabled but has no urls")
    if config.hive.enabled and not config.hive.host:
        raise fail("[hive] host", "[hive] is enabled but has no host")
    if config.spark.enabled and not config.spark.event_log_dirs:
        raise fail("[spark] event_log_dirs", "[spark] is enabled but has no event_log_dirs")


def _is_heap_size(value: str) -> bool:
    return len(value) >= 2 and value[:-1].isdigit() and value[-1].lower() in "kmg"


def _build(cls: type, raw: Any, source: str, section: str, skip: frozenset[str] | set[str] = frozenset()):
    where = f"[{section}]" if section else "top level"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: {where}: expected a table, got {type(raw).__name__}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in skip}
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise ConfigError(f"{source}: {where}: unknown key {unknown[0]!r} "
                          f"(known: {', '.join(sorted(fields))})")
    values: dict[str, Any] = {}
    for name, value in raw.items():
        hint = hints[name]
        key = f"{section}.{name}" if section else name
        if dataclasses.is_dataclass(hint):
            values[name] = _build(hint, value, source, key)
        else:
            values[name] = _coerce(hint, value, source, key, section)
    return cls(**values)


def _coerce(hint: Any, value: Any, source: str, key: str, section: str) -> Any:
    label = f"[{section}] {key.rsplit('.', 1)[-1]}" if section else key

    def wrong(expected: str) -> ConfigError:
        return ConfigError(f"{source}: {label}: expected {expected}, got {value!r}")

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
    if origin in (typing.Union, types.UnionType):
        raise AssertionError(f"config field {key} uses an unsupported union type")
    if hint is bool:
        if not isinstance(value, bool):
            raise wrong("true or false")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong("an integer")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong("a number")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise wrong("a string")
        return value
    raise AssertionError(f"config field {key} has unsupported type {hint!r}")
