"""The `[hive]` config section: the HiveServer2 the Hive Metastore extractor reads through."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Literal

from navd.config import MAX_INTERVAL_MINUTES, NavdConfig, number, setting
from navd.extractors import check_section

SECTION = "hive"


@dataclasses.dataclass(frozen=True)
class HiveConfig:
    """`[hive]`: the Hive Metastore extractor (`navd extract hms`): the HiveServer2 it asks, and
    which databases and tables."""

    enabled: bool = setting(False, help="run the extractor in `navd run` (and `navd extract all`)")
    host: str = setting("", help="the HiveServer2 host")
    port: int = number(10000, 1, 65535, help="the HiveServer2 port")
    username: str = setting("navd", help="the user navd connects as")
    auth: Literal["NONE", "NOSASL", "LDAP", "KERBEROS", "CUSTOM"] = setting(
        "NONE", help="HiveServer2's authentication (PyHive's `auth`)")
    password: str = setting("", secret=True, help="the LDAP/CUSTOM password inline (warned about or refused by "
                                                  "`[security] insecure_credentials`): use `password_file`")
    password_file: str = setting("", help="a file holding the LDAP/CUSTOM password (mode 0600)")
    kerberos_service_name: str = setting("hive", help='`auth = "KERBEROS"`: the service name of the HiveServer2 '
                                                      "principal")
    database_regex: str = setting(".*", help="the databases read (a regular expression; `navd extract hms "
                                             "--filter-file` takes `db:table` lines instead)")
    table_regex: str = setting(".*", help="the tables read in those databases (a regular expression)")
    interval_minutes: float = number(10.0, 0, MAX_INTERVAL_MINUTES, low_open=True,
                                     help="`navd run` starts a run this long after the previous one completed")
    # A HiveServer2 that accepts connections but stops answering (a long GC, a stuck metastore)
    # would hang the run: silence on the socket fails it instead (retried at the next interval).
    timeout_seconds: float = number(600.0, 0, 24 * 3600, low_open=True,
                                    help="a HiveServer2 silent this long fails the run (retried at the next interval)")

    def validate(self) -> None:
        """Load-time checks; messages start with the key (the loader adds the file)."""
        check_section(SECTION, self, required_when_enabled=("host",))

    @property
    def interval(self) -> timedelta:
        return timedelta(minutes=self.interval_minutes)


def hive_settings(config: NavdConfig) -> HiveConfig:
    return config.section(SECTION, HiveConfig)
