"""The `[hdfs]` config section: which NameNode to read and how, and the cluster's default FS."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Literal

from navd.config import MAX_INTERVAL_MINUTES, NavdConfig, check_url, number
from navd.errors import ConfigError
from navd.extractors import check_section

SECTION = "hdfs"


@dataclasses.dataclass(frozen=True)
class HdfsConfig:
    enabled: bool = False
    urls: tuple[str, ...] = ()
    default_fs: str = ""
    roots: tuple[str, ...] = ("/",)
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ("/tmp/hadoop-yarn/staging",)
    user: str = "hdfs"
    auth: Literal["insecure", "kerberos"] = "insecure"
    #: auth = "kerberos": a client keytab (0600) navd gets, and renews, its tickets from (see
    #: navd.kerberos); unset: the ticket cache of the user running navd (kinit)
    keytab: str = ""
    #: the keytab's principal to use (unset: its first)
    principal: str = ""
    interval_minutes: float = number(10.0, 0, MAX_INTERVAL_MINUTES, low_open=True)
    #: On roots an admin made snapshottable (`hdfs dfsadmin -allowSnapshot`), navd keeps one
    #: snapshot of its own and runs incrementally from snapshot diffs.
    snapshots: bool = True

    def validate(self) -> None:
        """Load-time checks; messages start with the key (the loader adds the file)."""
        check_section(SECTION, self, required_when_enabled=("urls",), urls=("urls",))
        if self.default_fs:
            check_url("[hdfs] default_fs", self.default_fs, schemes=None, example="hdfs://nameservice1")
        if (self.keytab or self.principal) and self.auth != "kerberos":
            raise ConfigError(f"[hdfs] {'keytab' if self.keytab else 'principal'}: set only with auth = \"kerberos\"")

    @property
    def interval(self) -> timedelta:
        return timedelta(minutes=self.interval_minutes)


def hdfs_settings(config: NavdConfig) -> HdfsConfig:
    """`[hdfs]` of a loaded config. Other sources read `default_fs` here: it names every path."""
    return config.section(SECTION, HdfsConfig)
