"""The `[yarn]` config section: the ResourceManager(s) the YARN extractor reads."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Literal

from navd.config import MAX_INTERVAL_MINUTES, NavdConfig, number
from navd.extractors import check_section

SECTION = "yarn"


@dataclasses.dataclass(frozen=True)
class YarnConfig:
    enabled: bool = False
    urls: tuple[str, ...] = ()
    auth: Literal["none", "kerberos"] = "none"
    interval_minutes: float = number(10.0, 0, MAX_INTERVAL_MINUTES, low_open=True)

    def validate(self) -> None:
        """Load-time checks; messages start with the key (the loader adds the file)."""
        check_section(SECTION, self, required_when_enabled=("urls",), urls=("urls",))

    @property
    def interval(self) -> timedelta:
        return timedelta(minutes=self.interval_minutes)


def yarn_settings(config: NavdConfig) -> YarnConfig:
    return config.section(SECTION, YarnConfig)
