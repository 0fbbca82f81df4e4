"""The `[spark]` config section: the event-log directories the Spark tailer follows."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from navd.config import NavdConfig
from navd.errors import ConfigError

SECTION = "spark"


@dataclasses.dataclass(frozen=True)
class SparkConfig:
    enabled: bool = False
    event_log_dirs: tuple[str, ...] = ()
    poll_seconds: float = 5.0
    state_dir: str = ""

    def validate(self) -> None:
        if self.poll_seconds <= 0:
            raise ConfigError(f"[spark] poll_seconds: must be > 0, got {self.poll_seconds}")
        if self.enabled and not self.event_log_dirs:
            raise ConfigError("[spark] event_log_dirs: [spark] is enabled but has no event_log_dirs")

    @property
    def interval(self) -> timedelta:
        return timedelta(seconds=self.poll_seconds)


def spark_settings(config: NavdConfig) -> SparkConfig:
    return config.section(SECTION, SparkConfig)
