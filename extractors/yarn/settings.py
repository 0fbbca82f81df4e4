"""The `[yarn]` config section: the ResourceManager(s) the YARN extractor reads."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Literal

from navd.config import MAX_INTERVAL_MINUTES, NavdConfig, number
from navd.errors import ConfigError
from navd.extractors import check_section

SECTION = "yarn"


@dataclasses.dataclass(frozen=True)
class YarnConfig:
    enabled: bool = False
    urls: tuple[str, ...] = ()
    auth: Literal["none", "kerberos"] = "none"
    #: auth = "kerberos": a client keytab (0600) navd gets, and renews, its tickets from (as
    #: `[solr] keytab`); unset: the ticket cache of navd's user (kinit, KRB5CCNAME)
    keytab: str = ""
    #: the keytab's principal to use (unset: its first)
    principal: str = ""
    interval_minutes: float = number(10.0, 0, MAX_INTERVAL_MINUTES, low_open=True)

    def validate(self) -> None:
        """Load-time checks; messages start with the key (the loader adds the file)."""
        check_section(SECTION, self, required_when_enabled=("urls",), urls=("urls",))
        if (self.keytab or self.principal) and self.auth != "kerberos":
            raise ConfigError(f"[yarn] {'keytab' if self.keytab else 'principal'}: set only with auth = \"kerberos\"")

    @property
    def interval(self) -> timedelta:
        return timedelta(minutes=self.interval_minutes)


def yarn_settings(config: NavdConfig) -> YarnConfig:
    return config.section(SECTION, YarnConfig)
