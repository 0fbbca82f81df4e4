"""The `[spark]` config section: the event-log directories the Spark tailer follows."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from navd.config import NavdConfig, check_url, number
from navd.errors import ConfigError
from navd.extractors import check_section

SECTION = "spark"


@dataclasses.dataclass(frozen=True)
class SparkConfig:
    enabled: bool = False
    event_log_dirs: tuple[str, ...] = ()
    poll_seconds: float = number(5.0, 0, 24 * 3600, low_open=True)
    #: during a pass, commit positions at the end of an application once this long has passed
    #: since the last commit (0: after every application): a first start over a long history
    #: then resumes after what it committed instead of from the start
    checkpoint_seconds: float = number(30.0, 0, 24 * 3600)
    state_dir: str = ""
    #: users whose event logs are read (the owners of the files); empty: every owner. Anyone who
    #: can write the event-log directory (Spark's docs make it 1777) can put a log there.
    allowed_log_owners: tuple[str, ...] = ()

    def validate(self) -> None:
        """Load-time checks; messages start with the key (the loader adds the file)."""
        check_section(SECTION, self, required_when_enabled=("event_log_dirs",))
        for directory in self.event_log_dirs:
            if "://" in directory:  # hdfs://nameservice1/spark-logs; a local path has no URL parts
                check_url("[spark] event_log_dirs", directory, schemes=None,
                          example="hdfs://nameservice1/user/spark/applicationHistory")
        if any(not isinstance(owner, str) or not owner.strip() for owner in self.allowed_log_owners):
            raise ConfigError("[spark] allowed_log_owners: every entry must be a user name")

    @property
    def interval(self) -> timedelta:
        return timedelta(seconds=self.poll_seconds)


def spark_settings(config: NavdConfig) -> SparkConfig:
    return config.section(SECTION, SparkConfig)
