"""The `[hive_lineage]` config section: the HiveServer2 log files LineageLogger writes to."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from navd.config import NavdConfig, number, setting
from navd.errors import ConfigError
from navd.extractors import check_section

SECTION = "hive_lineage"


@dataclasses.dataclass(frozen=True)
class HiveLineageConfig:
    """`[hive_lineage]`: the Hive query-lineage extractor (`navd extract hive-lineage`): the log
    files HiveServer2's LineageLogger hook writes on this host."""

    enabled: bool = setting(False, help="tail the logs in `navd run`")
    log_paths: tuple[str, ...] = setting((), help="files or globs (`/var/log/hive/lineage.log*`) of the log the hook "
                                                  "writes to; include the rotated names so what was written just "
                                                  "before a rotation is read under the new name")
    poll_seconds: float = number(5.0, 0, 24 * 3600, low_open=True, help="how often `navd run` reads what is new")
    state_dir: str = setting("", help="where the tail positions are kept; unset: `hive_lineage` in the state directory "
                                      "(`[daemon] state_dir`)")

    def validate(self) -> None:
        """Load-time checks; messages start with the key (the loader adds the file)."""
        check_section(SECTION, self, required_when_enabled=("log_paths",))
        for path in self.log_paths:
            if not isinstance(path, str) or not path.strip():
                raise ConfigError(f"[{SECTION}] log_paths: every entry must be a file or a glob")
            if "://" in path:
                raise ConfigError(f"[{SECTION}] log_paths: {path} is not local: navd reads the log on the "
                                  f"HiveServer2 host (run navd there)")

    @property
    def interval(self) -> timedelta:
        return timedelta(seconds=self.poll_seconds)


def hive_lineage_settings(config: NavdConfig) -> HiveLineageConfig:
    return config.section(SECTION, HiveLineageConfig)
