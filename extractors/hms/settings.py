"""The `[hive]` config section: the HiveServer2 the Hive Metastore extractor reads through."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Literal

from navd.config import MAX_INTERVAL_MINUTES, NavdConfig, number
from navd.extractors import check_section

SECTION = "hive"


@dataclasses.dataclass(frozen=True)
class HiveConfig:
    enabled: bool = False
    host: str = ""
    port: int = number(10000, 1, 65535)
    username: str = "navd"
    auth: Literal["NONE", "NOSASL", "LDAP", "KERBEROS", "CUSTOM"] = "NONE"
    password: str = dataclasses.field(default="", repr=False)
    #: a file holding the LDAP/CUSTOM password (mode 0600), instead of `password` in this file
    password_file: str = ""
    kerberos_service_name: str = "hive"
    database_regex: str = ".*"
    table_regex: str = ".*"
    interval_minutes: float = number(10.0, 0, MAX_INTERVAL_MINUTES, low_open=True)
    #: A HiveServer2 that accepts connections but stops answering (a long GC, a stuck metastore)
    #: fails the run after this many seconds of silence on the socket instead of hanging it.
    timeout_seconds: float = number(600.0, 0, 24 * 3600, low_open=True)

    def validate(self) -> None:
        """Load-time checks; messages start with the key (the loader adds the file)."""
        check_section(SECTION, self, required_when_enabled=("host",))

    @property
    def interval(self) -> timedelta:
        return timedelta(minutes=self.interval_minutes)


def hive_settings(config: NavdConfig) -> HiveConfig:
    return config.section(SECTION, HiveConfig)
