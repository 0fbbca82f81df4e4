"""The `[oozie]` config section: the Oozie server(s) the Oozie extractor reads."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Literal

from navd.config import MAX_INTERVAL_MINUTES, NavdConfig, number, setting
from navd.errors import ConfigError
from navd.extractors import check_section

SECTION = "oozie"


@dataclasses.dataclass(frozen=True)
class OozieConfig:
    """`[oozie]`: the Oozie extractor (`navd extract oozie`): the Oozie server(s) it reads
    workflow and coordinator jobs from."""

    enabled: bool = setting(False, help="run the extractor in `navd run` (and `navd extract all`)")
    urls: tuple[str, ...] = setting((), help="Oozie's URL, `http(s)://host:11000/oozie`; several for Oozie HA behind "
                                             "no balancer (the first that answers is read)")
    auth: Literal["none", "kerberos"] = setting("none", help="`kerberos`: SPNEGO (`pip install 'navd[kerberos]'`)")
    keytab: str = setting("", help='`auth = "kerberos"`: a client keytab (0600) navd gets its tickets from, and new '
                                   "ones when they end (as `[yarn] keytab`); unset: the ticket cache of navd's user "
                                   "(kinit, `KRB5CCNAME`)")
    principal: str = setting("", help="the keytab's principal to use; unset: its first")
    page_size: int = number(100, 1, 1000, help="jobs asked for per page of `GET /v2/jobs`")
    first_run_days: float = number(7.0, 0, 3660, low_open=True,
                                   help="the first run (and `--full`) reads the jobs modified in the last this many "
                                        "days")
    timeout_seconds: float = number(30.0, 0, 3600, low_open=True, help="the timeout of one request")
    interval_minutes: float = number(10.0, 0, MAX_INTERVAL_MINUTES, low_open=True,
                                     help="`navd run` starts a run this long after the previous one completed")

    def validate(self) -> None:
        """Load-time checks; messages start with the key (the loader adds the file)."""
        check_section(SECTION, self, required_when_enabled=("urls",), urls=("urls",))
        if (self.keytab or self.principal) and self.auth != "kerberos":
            raise ConfigError(f"[oozie] {'keytab' if self.keytab else 'principal'}: set only with auth = \"kerberos\"")

    @property
    def interval(self) -> timedelta:
        return timedelta(minutes=self.interval_minutes)


def oozie_settings(config: NavdConfig) -> OozieConfig:
    return config.section(SECTION, OozieConfig)
