"""Where navd keeps files when the config does not name them: XDG directories for the invoking
user, systemd's $STATE_DIRECTORY for the service, and the files derived from the state directory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from navd.config.sections import NavdConfig


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
