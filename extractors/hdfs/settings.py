"""The `[hdfs]` config section: which NameNode to read and how."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Literal

from navd.config import MAX_INTERVAL_MINUTES, NavdConfig, number, setting
from navd.errors import ConfigError
from navd.extractors import check_section

SECTION = "hdfs"


@dataclasses.dataclass(frozen=True)
class HdfsConfig:
    """`[hdfs]`: the HDFS extractor (`navd extract hdfs`): the NameNodes it reads through WebHDFS,
    what it reads. The cluster's default file system is `[cluster] default_fs`."""

    enabled: bool = setting(False, help="run the extractor in `navd run` (and `navd extract all`)")
    urls: tuple[str, ...] = setting((), help="the WebHDFS URLs of the NameNodes, several for HA (the active one is "
                                             "used), e.g. `http://nn1.example.com:9870`")
    roots: tuple[str, ...] = setting(("/",), help="the directories listed, each with everything below it")
    include: tuple[str, ...] = setting((), help="paths (the path and everything below) or globs to read; empty: "
                                                "everything under the roots")
    exclude: tuple[str, ...] = setting(("/tmp/hadoop-yarn/staging",),
                                       help="paths (the path and everything below) or globs left out")
    user: str = setting("hdfs", help='the user of simple auth (`user.name`), with `auth = "insecure"`')
    auth: Literal["insecure", "kerberos"] = setting(
        "insecure", help="`insecure` (simple auth as `user`) or `kerberos` (SPNEGO; `pip install "
                         "'navd[kerberos]'`; the urls must name the host of the NameNode's `HTTP/` principal)")
    keytab: str = setting("", help='`auth = "kerberos"`: a client keytab (0600) navd gets its tickets from, and new '
                                   "ones when they end (as `[solr] keytab`); unset: the ticket cache of navd's user "
                                   "(kinit, `KRB5CCNAME`)")
    principal: str = setting("", help="the keytab's principal to use; unset: its first")
    interval_minutes: float = number(10.0, 0, MAX_INTERVAL_MINUTES, low_open=True,
                                     help="`navd run` starts a run this long after the previous one completed")
    snapshots: bool = setting(True, help="on roots an admin made snapshottable (`hdfs dfsadmin -allowSnapshot "
                                         "ROOT`), keep one snapshot `navd-<time>` of navd's own and read exactly "
                                         "what the snapshot diff names")

    def validate(self) -> None:
        """Load-time checks; messages start with the key (the loader adds the file)."""
        check_section(SECTION, self, required_when_enabled=("urls",), urls=("urls",))
        if (self.keytab or self.principal) and self.auth != "kerberos":
            raise ConfigError(f"[hdfs] {'keytab' if self.keytab else 'principal'}: set only with auth = \"kerberos\"")

    @property
    def interval(self) -> timedelta:
        return timedelta(minutes=self.interval_minutes)


def hdfs_settings(config: NavdConfig) -> HdfsConfig:
    """`[hdfs]` of a loaded config."""
    return config.section(SECTION, HdfsConfig)
