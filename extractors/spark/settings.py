"""The `[spark]` config section: the event-log directories the Spark tailer follows."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from navd.config import NavdConfig
from navd.errors import ConfigError
from navd.extractors import check_section

SECTION = "spark"


@dataclasses.dataclass(frozen=True)
class SparkConfig:
    enabled: bool = False
    event_log_dirs: tuple[str, ...] = ()
    poll_seconds: float = 5.0
    state_dir: str = ""
    #: users whose event logs are read (the owners of the files); empty: every owner. Anyone who
    #: can write the event-log directory (Spark's docs make it 1777) can put a log there.
    allowed_log_owners: tuple[str, ...] = ()

    def validate(self) -> None:
        """Load-time checks; messages start with the key (the loader adds the file)."""
        check_section(SECTION, self, positive=("poll_seconds",), required_when_enabled=("event_log_dirs",))
        if any(not isinstance(owner, str) or not owner.strip() for owner in self.allowed_log_owners):
            raise ConfigError("[spark] allowed_log_owners: every entry must be a user name")

    @property
    def interval(self) -> timedelta:
        return timedelta(seconds=self.poll_seconds)


def spark_settings(config: NavdConfig) -> SparkConfig:
    return config.section(SECTION, SparkConfig)
