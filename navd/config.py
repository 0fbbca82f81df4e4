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


DEFAULT_MAX_SHARE_PERCENT = 75.0


@dataclasses.dataclass(frozen=True)
class DeletionsConfig:
    """`[deletions]`: the share of the entities indexed under one scope (an HDFS root, the selected
    Hive databases) one run may flag deleted; above it the run flags nothing there and says why
    (see navd.extractors.common.deletions). DataHub's stale-entity removal uses 75 too."""

    max_share_percent: float = DEFAULT_MAX_SHARE_PERCENT


@dataclasses.dataclass(frozen=True)
class LinkerConfig:
    #: NameNode addresses that name a default file system, as `AUTHORITY=FS`, e.g.
    #: "nn1.example.com:8020=hdfs://nameservice1": paths written under either link alike. Used by
    #: every link pass (the daemon's and `navd link`'s; `--fs-alias` adds to them).
    fs_aliases: tuple[str, ...] = ()

    @property
    def aliases(self) -> dict[str, str]:
        return parse_fs_aliases(self.fs_aliases, "[linker] fs_aliases")


@dataclasses.dataclass(frozen=True)
class NavdConfig:
    cluster: ClusterConfig = ClusterConfig()
    solr: SolrConfig = SolrConfig()
    logging: LoggingConfig = LoggingConfig()
    linker: LinkerConfig = LinkerConfig()
    deletions: DeletionsConfig = DeletionsConfig()
    purge: PurgeConfig = PurgeConfig()
    daemon: DaemonConfig = DaemonConfig()
    #: The sections of the registered components (`[hdfs]`, `[hive]`, ...), by section name,
    #: each validated into the component's own settings dataclass (see navd.registry).
    sections: Mapping[str, Any] = dataclasses.field(default_factory=lambda: MappingProxyType({}))
    source: str = "<defaults>"

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
        config = dataclasses.replace(
            config, solr=dataclasses.replace(config.solr, url=environ["NAVD_SOLR_URL"]))
    solr = config.solr
    if solr.password_file and not solr.password:
        solr = dataclasses.replace(solr, password=_read_secret(solr.password_file, source))
        config = dataclasses.replace(config, solr=solr)
    _validate(config, source)
    for settings in sections.values():
        try:
            settings.validate()
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None
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
    share = config.deletions.max_share_percent
    if not 0 < share <= 100:
        raise fail("[deletions] max_share_percent", f"must be > 0 and <= 100, got {share:g}")
    try:
        config.linker.aliases
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None


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
