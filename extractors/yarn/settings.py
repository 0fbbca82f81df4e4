"""The `[yarn]` config section: the ResourceManager(s) the YARN extractor reads."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Literal

from navd.config import NavdConfig
from navd.extractors import check_section

SECTION = "yarn"


@dataclasses.dataclass(frozen=True)
class YarnConfig:
    enabled: bool = False
    urls: tuple[str, ...] = ()
    auth: Literal["none", "kerberos"] = "none"
    interval_minutes: float = 10.0

    def validate(self) -> None:
        """Load-time checks; messages start with the key (the loader adds the file)."""
        check_section(SECTION, self, positive=("interval_minutes",), required_when_enabled=("urls",))

    @property
    def interval(self) -> timedelta:
        return timedelta(minutes=self.interval_minutes)


def yarn_settings(config: NavdConfig) -> YarnConfig:
    return config.section(SECTION, YarnConfig)
