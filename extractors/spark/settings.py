"""The `[spark]` config section: the event-log directories the Spark tailer follows."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from navd.config import NavdConfig, check_url, number, setting
from navd.errors import ConfigError
from navd.extractors import check_section

SECTION = "spark"


@dataclasses.dataclass(frozen=True)
class SparkConfig:
    """`[spark]`: the Spark extractor (`navd extract spark`): the event-log directories it
    follows."""

    enabled: bool = setting(False, help="tail the event logs in `navd run`")
    event_log_dirs: tuple[str, ...] = setting(
        (), help="the directories Spark writes event logs to (`spark.eventLog.dir`): local paths or `hdfs://` URIs")
    poll_seconds: float = number(5.0, 0, 24 * 3600, low_open=True, help="how often `navd run` reads what is new")
    checkpoint_seconds: float = number(30.0, 0, 24 * 3600,
                                       help="during a pass, commit positions at the end of an application once this "
                                            "long has passed since the last commit (0: after every application): a "
                                            "first start over a long history resumes after what it committed")
    state_dir: str = setting("", help="where the tail positions are kept; unset: `spark` in the state directory "
                                      "(`[daemon] state_dir`)")
    # Anyone who can write the event-log directory (Spark's docs make it 1777) can put a log there.
    allowed_log_owners: tuple[str, ...] = setting(
        (), help="users whose event logs are read (the owners of the files); empty: every owner. A log of another "
                 "owner is skipped with one warning (docs/sources/spark.md, \"Trust model of event-log directories\")")

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
