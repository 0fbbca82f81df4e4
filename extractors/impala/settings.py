"""The `[impala]` config section: impalad's `--lineage_event_log_dir` directories."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from navd.config import NavdConfig, number, setting
from navd.errors import ConfigError
from navd.extractors import check_section

SECTION = "impala"


@dataclasses.dataclass(frozen=True)
class ImpalaConfig:
    """`[impala]`: the Impala query-lineage extractor (`navd extract impala`): the lineage logs
    impalad writes on this host."""

    enabled: bool = setting(False, help="tail the logs in `navd run`")
    lineage_dirs: tuple[str, ...] = setting((), help="impalad's `--lineage_event_log_dir`, one per impalad on this "
                                                     "host")
    poll_seconds: float = number(5.0, 0, 24 * 3600, low_open=True, help="how often `navd run` reads what is new")
    state_dir: str = setting("", help="where the tail positions are kept; unset: `impala` in the state directory "
                                      "(`[daemon] state_dir`)")

    def validate(self) -> None:
        """Load-time checks; messages start with the key (the loader adds the file)."""
        check_section(SECTION, self, required_when_enabled=("lineage_dirs",))
        for directory in self.lineage_dirs:
            if not isinstance(directory, str) or not directory.strip():
                raise ConfigError(f"[{SECTION}] lineage_dirs: every entry must be a directory")
            if "://" in directory:
                raise ConfigError(f"[{SECTION}] lineage_dirs: {directory} is not local: impalad writes its "
                                  f"lineage log on its own host (run navd there)")

    @property
    def interval(self) -> timedelta:
        return timedelta(seconds=self.poll_seconds)


def impala_settings(config: NavdConfig) -> ImpalaConfig:
    return config.section(SECTION, ImpalaConfig)
