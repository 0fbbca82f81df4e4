"""The `[yarn]` config section: the ResourceManager(s) the YARN extractor reads."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Literal

from navd.config import NavdConfig
from navd.errors import ConfigError

SECTION = "yarn"


@dataclasses.dataclass(frozen=True)
class YarnConfig:
    enabled: bool = False
    urls: tuple[str, ...] = ()
    auth: Literal["none", "kerberos"] = "none"
    interval_minutes: float = 10.0

    def validate(self) -> None:
        if self.interval_minutes <= 0:
            raise ConfigError(f"[yarn] interval_minutes: must be > 0, got {self.interval_minutes}")
        if self.enabled and not self.urls:
            raise ConfigError("[yarn] urls: [yarn] is enabled but has no urls")

    @property
    def interval(self) -> timedelta:
        return timedelta(minutes=self.interval_minutes)


def yarn_settings(config: NavdConfig) -> YarnConfig:
    return config.section(SECTION, YarnConfig)
