"""The `[yarn]` config section: the ResourceManager(s) the YARN extractor reads."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Literal

from navd.config import MAX_INTERVAL_MINUTES, NavdConfig, number, setting
from navd.errors import ConfigError
from navd.extractors import check_section

SECTION = "yarn"


@dataclasses.dataclass(frozen=True)
class YarnConfig:
    """`[yarn]`: the YARN extractor (`navd extract yarn`): the ResourceManagers it reads."""

    enabled: bool = setting(False, help="run the extractor in `navd run` (and `navd extract all`)")
    urls: tuple[str, ...] = setting((), help="the ResourceManager REST URLs, several for RM HA (the active one is "
                                             "followed), e.g. `http://rm1.example.com:8088`")
    auth: Literal["none", "kerberos"] = setting("none", help="`kerberos`: SPNEGO (`pip install 'navd[kerberos]'`)")
    keytab: str = setting("", help='`auth = "kerberos"`: a client keytab (0600) navd gets its tickets from, and new '
                                   "ones when they end (as `[solr] keytab`); unset: the ticket cache of navd's user "
                                   "(kinit, `KRB5CCNAME`)")
    principal: str = setting("", help="the keytab's principal to use; unset: its first")
    interval_minutes: float = number(10.0, 0, MAX_INTERVAL_MINUTES, low_open=True,
                                     help="`navd run` starts a run this long after the previous one completed")

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
