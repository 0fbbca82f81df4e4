"""The one config loader: a TOML file validated into frozen dataclasses.

Its parts: `keys` (how a key is declared and checked), `sections` (the core sections and
`NavdConfig`), `paths` (default places), `validation` (checks across keys) and `loading` (the
file to `NavdConfig`). Import from `navd.config`; the parts are its layout, not its interface.

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

from navd.config.keys import (
    ANY_NUMBER,
    DEFAULT_SOLR_PORT,
    DEFAULT_SOLR_VERSION,
    MAX_INTERVAL_MINUTES,
    MAX_SECONDS,
    OTHERS_BITS,
    Range,
    SectionT,
    check_url,
    field_range,
    number,
    setting,
)
from navd.config.loading import (
    DEFAULT_CONFIG_PATH,
    MOVED_KEYS,
    load_config,
    parse_config,
    read_secret,
    resolve_config_path,
)
from navd.config.paths import (
    default_quickstart_dir,
    default_solr_dist_dir,
    default_solr_home,
    extractor_state_dir,
    openlineage_spool_path,
    server_api_keys_path,
    server_users_path,
    state_dir,
)
from navd.config.sections import (
    DEFAULT_MAX_SHARE_PERCENT,
    DEFAULT_OPENLINEAGE_MAX_BODY_BYTES,
    DEFAULT_SERVER_PORT,
    SPARK_JOB_OWN_PROPERTIES,
    ClusterConfig,
    DaemonConfig,
    DeletionsConfig,
    EmbeddedSolrConfig,
    LineageConfig,
    LinkerConfig,
    LoggingConfig,
    NavdConfig,
    OpenLineageConfig,
    PurgeConfig,
    SecurityConfig,
    ServerConfig,
    SolrConfig,
    SparkJobsConfig,
    parse_fs_aliases,
)
from navd.config.validation import (
    canonical_host,
    check_owner_only,
    check_private_file,
    check_spark_master,
    is_file,
    is_loopback_host,
    shown_name,
    validate_config,
    with_server,
)

__all__ = [
    "ANY_NUMBER",
    "ClusterConfig",
    "DEFAULT_CONFIG_PATH",
    "DEFAULT_MAX_SHARE_PERCENT",
    "DEFAULT_OPENLINEAGE_MAX_BODY_BYTES",
    "DEFAULT_SERVER_PORT",
    "DEFAULT_SOLR_PORT",
    "DEFAULT_SOLR_VERSION",
    "DaemonConfig",
    "DeletionsConfig",
    "EmbeddedSolrConfig",
    "LineageConfig",
    "LinkerConfig",
    "LoggingConfig",
    "MAX_INTERVAL_MINUTES",
    "MAX_SECONDS",
    "MOVED_KEYS",
    "NavdConfig",
    "OTHERS_BITS",
    "OpenLineageConfig",
    "PurgeConfig",
    "Range",
    "SPARK_JOB_OWN_PROPERTIES",
    "SectionT",
    "SecurityConfig",
    "ServerConfig",
    "SolrConfig",
    "SparkJobsConfig",
    "canonical_host",
    "check_owner_only",
    "check_private_file",
    "check_spark_master",
    "check_url",
    "default_quickstart_dir",
    "default_solr_dist_dir",
    "default_solr_home",
    "extractor_state_dir",
    "field_range",
    "is_file",
    "is_loopback_host",
    "load_config",
    "number",
    "openlineage_spool_path",
    "parse_config",
    "parse_fs_aliases",
    "read_secret",
    "resolve_config_path",
    "server_api_keys_path",
    "server_users_path",
    "setting",
    "shown_name",
    "state_dir",
    "validate_config",
    "with_server",
]
